#!/usr/bin/env bash
# Where this machine's noise comes from, for one small server: (1) consecutive windows of one
# launch, (2) one window from each of many launches, (3) the Allan deviation of one long per-second
# series, and (4) two co-resident copies of the server measured in random-order slices (paired).
# Prints each component as a coefficient of variation and what it implies for the block schedule's
# slice length and launch count. Every figure comes from real runs of `bakeoff run` stored in one
# results file in bench/results/noise-components-<stamp>/; git keeps its summary.txt only.
#
#   bench/noise-components.sh                       # rust/actix hello, 2 s windows
#   STACK=go/nethttp WINDOW=3s bench/noise-components.sh
#   BAKEOFF=/path/bakeoff bench/noise-components.sh  # skip the cargo build
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
STACK=${STACK:-rust/actix}
SCENARIO=${SCENARIO:-hello}
WINDOW=${WINDOW:-2s}
N=${N:-15}
OUT="$ROOT/bench/results/noise-components-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
DB="$OUT/runs.db"
common=(--root "$ROOT" --stacks "$STACK" --scenarios "$SCENARIO" --workers 1 --db "$DB" --no-ceiling --warmup 1s)

run() { # name, flags...
  local name=$1; shift
  local start; start=$(date +%s)
  "$BAKEOFF" run "${common[@]}" "$@" > "$OUT/$name.txt" 2> "$OUT/$name.log" || true
  local id; id=$(sed -n 's/^results: .* (run \(.*\))$/\1/p' "$OUT/$name.txt")
  [ -n "$id" ] || { echo "$name stored no run; see $OUT/$name.log" >&2; exit 1; }
  echo "$name $id $(( $(date +%s) - start ))" >> "$OUT/runs.txt"
}

: > "$OUT/runs.txt"
provenance noise-components "$ROOT" > "$OUT/summary.txt"
echo "# $STACK $SCENARIO, $N windows of $WINDOW per component" >> "$OUT/summary.txt"
run windows --schedule blocks --trials "$N" --launches 1 --duration "$WINDOW"
run launches --schedule trials --trials "$N" --duration "$WINDOW"
run series --schedule trials --trials 1 --duration 32s
run paired --schedule blocks --trials "$N" --launches 1 --duration "$WINDOW" --aa "$STACK $SCENARIO"

python3 "$ROOT/bench/noise_components.py" "$DB" "$OUT/runs.txt" "$WINDOW" | tee -a "$OUT/summary.txt"
echo "results in $OUT"
