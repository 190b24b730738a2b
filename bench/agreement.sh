#!/usr/bin/env bash
# Does the default study agree with itself? Runs a study twice back to back into a fresh results
# file, then `bakeoff compare` of the two runs: per cell, whether the two medians of the primary
# metric lie within the precision each run states for the cell, and whether any change is
# detectable at all. Then every claim of the study in both runs, from each run's JSON report: its
# verdict, the measured value with its interval and coverage, and a flag on any claim whose verdict flips between
# held and failed (inconclusive on one side is listed, but is no flip). Prints the comparison, the
# share of agreeing cells, the claims and each run's wall time. All of it goes to
# bench/results/agreement-<stamp>/: summary.txt (what it prints, under the commit and machine) is
# kept in git; the results file, each run's reports (text, JSON, HTML) and logs, the comparison and
# claims.json stay on this machine (bench/provenance.sh).
#
#   bench/agreement.sh                          # studies/quick.toml, twice (~2 x its budget)
#   STUDY=studies/proxies.toml bench/agreement.sh
#   BAKEOFF=/path/bakeoff bench/agreement.sh    # skip the cargo build
#   EXTRA="--budget 6m" bench/agreement.sh      # flags added to both runs
#   FIRST=bench/results/<dir> bench/agreement.sh  # an earlier single run of the same study (its
#                                               # runs.db, run1.txt, run1.seconds) is run 1; runs once
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"
STUDY=${STUDY:-studies/quick.toml}
OUT="$ROOT/bench/results/agreement-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
DB="$OUT/runs.db"

provenance agreement "$ROOT" | tee "$OUT/summary.txt"
echo "study $STUDY${EXTRA:+ with $EXTRA}" | tee -a "$OUT/summary.txt"
ids=()
runs=(1 2)
if [ -n "${FIRST:-}" ]; then
  # Reuse a run made earlier on the same machine and code: copy its store and output as run 1.
  FIRST="$(cd "$FIRST" && pwd)"
  cp "$FIRST/runs.db" "$DB"
  cp "$FIRST/run1.txt" "$FIRST/run1.seconds" "$OUT/"
  cp "$FIRST/run1.log" "$OUT/" 2>/dev/null || true
  id=$(sed -n 's/^results: .* (run \(.*\))$/\1/p' "$OUT/run1.txt")
  [ -n "$id" ] || { echo "$FIRST/run1.txt names no stored run" >&2; exit 1; }
  echo "run 1: $id in $(cat "$OUT/run1.seconds") s (from $FIRST)" | tee -a "$OUT/summary.txt"
  "$BAKEOFF" report "$id" --db "$DB" --format json > "$OUT/run1.json"
  ids+=("$id")
  runs=(2)
fi
for n in "${runs[@]}"; do
  start=$(date +%s)
  # shellcheck disable=SC2086
  "$BAKEOFF" run --root "$ROOT" --study "$ROOT/$STUDY" --db "$DB" ${EXTRA:-} > "$OUT/run$n.txt" 2> "$OUT/run$n.log" || true
  id=$(sed -n 's/^results: .* (run \(.*\))$/\1/p' "$OUT/run$n.txt")
  [ -n "$id" ] || { echo "run $n stored no run; see $OUT/run$n.log" >&2; exit 1; }
  echo "run $n: $id in $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
  echo "$(( $(date +%s) - start ))" > "$OUT/run$n.seconds"
  "$BAKEOFF" report "$id" --db "$DB" --format json > "$OUT/run$n.json"
  ids+=("$id")
done
"$BAKEOFF" compare "${ids[0]}" "${ids[1]}" --db "$DB" | tee "$OUT/compare.txt"
"$BAKEOFF" compare "${ids[0]}" "${ids[1]}" --db "$DB" --format json > "$OUT/compare.json"
python3 - "$OUT/compare.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
c = json.load(open(sys.argv[1]))
cells = c["cells"]
agree = [x for x in cells if x["precision"]["agrees"]]
changed = [x for x in cells if x["verdict"] != "no_detectable_change"]
print(f"{len(agree)} of {len(cells)} cells ({100 * len(agree) / len(cells):.0f}%) agree within their stated precision on {c['primary']}")
for x in cells:
    if not x["precision"]["agrees"]:
        p = x["precision"]
        name = f"{x['cell']['stack']} {x['cell']['scenario']} [{x['cell']['variant']}] w{x['cell']['workers']}"
        if p.get("difference") is None or p.get("stated") is None:
            print(f"  flagged: {name}: no median to compare in one run or both (the cell was not measured)")
        else:
            print(f"  flagged: {name}: medians {100 * p['difference']:.1f}% apart, stated ±{100 * p['stated']:.1f}%")
print(f"{len(changed)} of {len(cells)} cells show a detectable change between the two runs")
PY
python3 "$ROOT/bench/claims_agreement.py" "$OUT" | tee -a "$OUT/summary.txt"
echo "results in $OUT"
