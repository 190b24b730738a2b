#!/usr/bin/env bash
# Do the printed paired intervals hold for pairs of *different* servers on this machine? Repeats
# short runs of two pairs of unlike servers, each at the default study's design (6 blocks of 1 s
# slices, 1 s warm-up, 64 connections, one worker, launches as the allocation chooses), and one
# long reference run per pair (REF_TRIALS blocks) in the middle of the repeats, whose ratio is taken
# as the truth. Runs alternate pair by pair. Per-repeat rows go to rows.csv (kept in git); the
# summary prints, per pair, how many repeat intervals hold the reference ratio, with the
# Clopper-Pearson 95% bounds of that rate, and how wide the reference's own interval is beside
# theirs.
#
#   bench/coverage-real.sh                       # 10 repeats a pair, about 35 min
#   REPEATS=30 bench/coverage-real.sh            # the full bench
#   BAKEOFF=/path/bakeoff bench/coverage-real.sh # skip the cargo build
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
REPEATS=${REPEATS:-10}
REF_TRIALS=${REF_TRIALS:-48}
SCENARIO=${SCENARIO:-json}
VARIANT=${VARIANT:-sqlite}
PAIRS=${PAIRS:-"rust/actix,go/fasthttp go/nethttp,python/werkzeug-uwsgi"}
OUT="$ROOT/bench/results/coverage-real-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
"$BAKEOFF" setup $(echo "$PAIRS" | tr ' ,' '\n\n' | sort -u | tr '\n' ' ') >&2

# One run of a pair: its ratio second/first, as a row of rows.csv.
one() {
  local kind=$1 repeat=$2 pair=$3 trials=$4 db started
  db="$OUT/$kind-$repeat-${pair//[\/,]/_}.db"
  started=$(date +%s)
  "$BAKEOFF" run --stacks "$pair" --scenarios "$SCENARIO" --variants "$VARIANT" --trials "$trials" --duration 1s --warmup 1s \
    --db "$db" --quiet > "$OUT/$kind-$repeat-${pair//[\/,]/_}.log" 2>&1 || true
  "$BAKEOFF" report --db "$db" --format json > "$db.json"
  python3 "$ROOT/bench/coverage_real.py" row "$db.json" "$kind" "$repeat" "$pair" "$SCENARIO" $(( $(date +%s) - started )) >> "$OUT/rows.csv"
}

echo "kind,repeat,pair,ratio,low,high,blocks,launches,slices,wall_s" > "$OUT/rows.csv"
for repeat in $(seq 1 "$REPEATS"); do
  for pair in $PAIRS; do
    one repeat "$repeat" "$pair" 6
  done
  if [ "$repeat" -eq $(( (REPEATS + 1) / 2 )) ]; then
    for pair in $PAIRS; do
      one reference 0 "$pair" "$REF_TRIALS"
    done
  fi
done
{
  provenance coverage-real "$ROOT"
  python3 "$ROOT/bench/coverage_real.py" summary "$OUT/rows.csv"
} | tee "$OUT/summary.txt"
