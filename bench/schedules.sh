#!/usr/bin/env bash
# The schedules side by side: the same A/A comparison (one stack's hello against its own twin)
# measured with `--schedule blocks`, `at-once` and `trials`, alternating, ROUNDS times each. From
# each run's JSON report it takes the paired A/A interval, the minutes the two arms took and the
# figure of merit P = 95% half-width (%) x sqrt(minutes); prints each schedule's median P with its
# range, the ratio of the medians, and how many A/A intervals exclude 1.0 (a calibration check: at
# 95% coverage about one in twenty may).
#
#   bench/schedules.sh                            # rust/actix hello, 3 rounds, 10 blocks/trials of 1 s
#   ROUNDS=6 TRIALS=6 DURATION=2s bench/schedules.sh   # the default study's earlier design
#   STACK=go/nethttp ROUNDS=5 bench/schedules.sh
#   SCHEDULES="blocks trials" bench/schedules.sh  # only those arms
#   BAKEOFF=/path/bakeoff bench/schedules.sh      # skip the cargo build
#   NOISE=episodes bench/schedules.sh             # on an emulated noisy machine: slow stretches that
#                                                 # hit every process at once (bench/noise_episodes.py,
#                                                 # root and cgroup v1 `cpu`); NOISE_FLAGS="--depth 0.3-0.7"
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
STACK=${STACK:-rust/actix}
ROUNDS=${ROUNDS:-3}
TRIALS=${TRIALS:-10}
DURATION=${DURATION:-1s}
NOISE=${NOISE:-}
read -r -a SCHEDULE_ARMS <<< "${SCHEDULES:-blocks at-once trials}"
OUT="$ROOT/bench/results/schedules-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
DB="$OUT/runs.db"
provenance schedules "$ROOT" > "$OUT/summary.txt"
echo "# $STACK hello against its A/A twin, $TRIALS trials or blocks of $DURATION, $ROUNDS rounds per schedule (${SCHEDULE_ARMS[*]}), alternating" >> "$OUT/summary.txt"
wrap=()
if [ "$NOISE" = episodes ]; then
  echo "# emulated noisy machine: bench/noise_episodes.py ${NOISE_FLAGS:-(its defaults)}, a seed per run" >> "$OUT/summary.txt"
elif [ -n "$NOISE" ]; then
  echo "NOISE=$NOISE: the one emulation is NOISE=episodes" >&2
  exit 2
fi

: > "$OUT/runs.tsv"
for round in $(seq 1 "$ROUNDS"); do
  for schedule in "${SCHEDULE_ARMS[@]}"; do
    name="$schedule-$round"
    start=$(date +%s)
    if [ "$NOISE" = episodes ]; then
      # shellcheck disable=SC2086
      wrap=(python3 "$ROOT/bench/noise_episodes.py" --seed "$round" ${NOISE_FLAGS:-} --)
    fi
    "${wrap[@]}" "$BAKEOFF" run --root "$ROOT" --stacks "$STACK" --scenarios hello --workers 1 --aa "$STACK hello" \
      --trials "$TRIALS" --duration "$DURATION" --warmup 1s --no-ceiling --schedule "$schedule" --db "$DB" \
      > "$OUT/$name.txt" 2> "$OUT/$name.log" || true
    if [ "$NOISE" = episodes ]; then
      echo "$name: $(tail -1 "$OUT/$name.log")" >> "$OUT/summary.txt"
    fi
    id=$(sed -n 's/^results: .* (run \(.*\))$/\1/p' "$OUT/$name.txt")
    [ -n "$id" ] || { echo "$name stored no run; see $OUT/$name.log" >&2; exit 1; }
    "$BAKEOFF" report "$id" --db "$DB" --format json > "$OUT/$name.json"
    printf '%s\t%s\t%s\n' "$schedule" "$OUT/$name.json" "$(( $(date +%s) - start ))" >> "$OUT/runs.tsv"
  done
done

python3 - "$OUT/runs.tsv" <<'PY' | tee -a "$OUT/summary.txt"
import json, statistics, sys
rows, comps = {}, {}
for line in open(sys.argv[1]):
    schedule, path, seconds = line.rstrip("\n").split("\t")
    noise = json.load(open(path))["noise"]
    floor, c = noise["floor"], noise.get("components") or {}
    comps.setdefault(schedule, []).append((c.get("within_launch"), c.get("between_launches")))
    p = floor["paired"]
    half = 100 * (p["high"] - p["low"]) / 2 / p["ratio"]
    rows.setdefault(schedule, []).append((p["merit"], half, p["minutes"], p["low"] <= 1.0 <= p["high"], int(seconds), p["ratio"]))
for schedule, rs in rows.items():
    merits = sorted(r[0] for r in rs)
    print(f"{schedule:>7}: P median {statistics.median(merits):.2f} (range {merits[0]:.2f}-{merits[-1]:.2f}); "
          f"A/A +-{statistics.median(r[1] for r in rs):.1f}% from {statistics.median(r[2] for r in rs):.1f} min of the two arms; "
          f"ratios {', '.join(f'{r[5]:.3f}' for r in rs)}; {sum(not r[3] for r in rs)} of {len(rs)} intervals exclude 1.0; "
          f"run wall time median {statistics.median(r[4] for r in rs)} s")
def pct(xs):
    xs = [x for x in xs if x is not None]
    return f"{100 * statistics.median(xs):.1f}%" if xs else "n/a"
for schedule, cs in comps.items():
    if all(c[0] is None for c in cs):
        continue  # only the block schedule measures them
    print(f"{schedule:>7}: machine's components (median over runs): slice to slice {pct(c[0] for c in cs)}, "
          f"launch to launch {pct(c[1] for c in cs)}")
for base, new in (("trials", "blocks"), ("trials", "at-once"), ("blocks", "at-once")):
    if {base, new} <= rows.keys():
        b = statistics.median(r[0] for r in rows[base])
        n = statistics.median(r[0] for r in rows[new])
        print(f"P {base} / P {new}: {b / n:.2f}x (same interval in {(b / n) ** 2:.1f}x less time with {new})")
PY
echo "results in $OUT"
