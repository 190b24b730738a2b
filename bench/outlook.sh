#!/usr/bin/env bash
# Does the run's precision outlook foretell what the run then reaches? Runs the default study
# ROUNDS times on one results file, as a user who reruns it would: the first run forecasts from
# the noise probe (two unlike small stacks), every later one from the study's earlier runs (each
# ranked pair's parts pooled over up to five). Each row of rows.csv holds the outlook's half-width
# (its "expect ... about ±X%" line), the widest paired half-width the run then reached over its
# ranked ratios, their ratio, and the run's wall time.
# The promise (the intervals issue): the outlook within a factor of 1.5 of what is reached in at
# least 8 of 10 runs; the summary prints the count with its Clopper-Pearson 95% bounds.
#
#   bench/outlook.sh                  # 10 runs, about 55 min
#   ROUNDS=4 bench/outlook.sh
#   DB=/path/bakeoff.db bench/outlook.sh   # go on from an earlier results file
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
ROUNDS=${ROUNDS:-10}
OUT="$ROOT/bench/results/outlook-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
DB=${DB:-$OUT/bakeoff.db}
bench_binary "$ROOT"
cd "$ROOT"
provenance outlook "$ROOT" | tee "$OUT/summary.txt"
echo "round,run,outlook_from,outlook_pct,reached_pct,reached_over_outlook,widest,wall_s" > "$OUT/rows.csv"
for r in $(seq "$ROUNDS"); do
  start=$(date +%s.%N)
  "$BAKEOFF" run --db "$DB" > "$OUT/run-$r.txt" 2> "$OUT/run-$r.err" || true
  wall=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
  "$BAKEOFF" report --db "$DB" -f json > "$OUT/run-$r.json"
  python3 bench/outlook_row.py "$OUT/run-$r.txt" "$OUT/run-$r.err" "$OUT/run-$r.json" "$r" "$wall" >> "$OUT/rows.csv"
  tail -1 "$OUT/rows.csv"
done
python3 - "$OUT/rows.csv" <<'PY' | tee -a "$OUT/summary.txt"
import csv, sys
sys.path.insert(0, "bench")
from calibration_summary import binomial_interval
rows = list(csv.DictReader(open(sys.argv[1])))
within = [r for r in rows if 1 / 1.5 <= float(r["reached_over_outlook"]) <= 1.5]
low, high = binomial_interval(len(within), len(rows))
print(f"outlook within a factor of 1.5 of the reached half-width: {len(within)} of {len(rows)} runs"
      f" (Clopper-Pearson 95%: {100 * low:.0f}-{100 * high:.0f}%)")
for r in rows:
    print(f"  run {r['round']}: outlook ±{r['outlook_pct']}%, reached ±{r['reached_pct']}%"
          f" ({r['widest']}), x{r['reached_over_outlook']}, {r['wall_s']} s")
PY
