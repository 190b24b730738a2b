#!/usr/bin/env bash
# Which proxy placement is fairer on this machine? On two CPUs one of proxy, nginx and the load
# generator must share: `shared` puts nginx beside the proxy, `own-cpu` beside the load generator.
# Runs nginx served directly and a few proxies at one open-model rate all of them hold, then their
# closed-model maximum, in both placements, alternating placements run by run (each run interleaves
# its cells trial by trial), and prints per placement each proxy's overhead over the baseline paired
# by round (median and 95% interval), the baseline's own figures, and which placement separates the
# proxies better and which disturbs the baseline less (bench/placement_summary.py). All of it goes to
# bench/results/proxy-placement-<stamp>/: git keeps summary.txt, the results file and each run's
# output stay on this machine (bench/provenance.sh).
#
#   bench/proxy-placement.sh                       # ~9 min: 2 runs x 2 placements x 3 trials
#   PROXIES=c/haproxy,go/iocopy RATE=8000 bench/proxy-placement.sh
#   BAKEOFF=/path/bakeoff ROUNDS=1 TRIALS=3 bench/proxy-placement.sh
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"
PROXIES=${PROXIES:-c/haproxy,rust/tokio,python/asyncio}
# The article's Python proxy is plain asyncio; the other stacks have one variant, `default`.
VARIANTS=${VARIANTS:-default,asyncio}
RATE=${RATE:-5000}
ROUNDS=${ROUNDS:-2}
TRIALS=${TRIALS:-3}
DURATION=${DURATION:-3s}
WARMUP=${WARMUP:-1s}
OUT="$ROOT/bench/results/proxy-placement-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
DB="$OUT/runs.db"

{
  provenance proxy-placement "$ROOT"
  echo "stacks c/baseline,$PROXIES [$VARIANTS] at $RATE req/s then closed-model maximum; $DURATION each after $WARMUP; $TRIALS trials per run; $ROUNDS run(s) per placement"
} | tee "$OUT/summary.txt"
n=0
for round in $(seq 1 "$ROUNDS"); do
  # Alternate which placement goes first, so neither always runs on the warmer machine.
  if [ $((round % 2)) -eq 1 ]; then order="shared own-cpu"; else order="own-cpu shared"; fi
  for placement in $order; do
    n=$((n + 1))
    start=$(date +%s)
    "$BAKEOFF" run --root "$ROOT" --db "$DB" --stacks "c/baseline,$PROXIES" --variants "$VARIANTS" --scenarios proxy \
      --rate "$RATE" --max-throughput --trials "$TRIALS" -d "$DURATION" --warmup "$WARMUP" -c 64 --requests-per-conn 50 \
      --proxy-placement "$placement" > "$OUT/run$n-$placement.txt" 2> "$OUT/run$n-$placement.log" || true
    id=$(sed -n 's/^results: .* (run \(.*\))$/\1/p' "$OUT/run$n-$placement.txt")
    [ -n "$id" ] || { echo "run $n ($placement) stored no run; see $OUT/run$n-$placement.log" >&2; exit 1; }
    echo "run $n: $placement, $id in $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
  done
done
python3 "$ROOT/bench/placement_summary.py" "$DB" --json "$OUT/placement.json" --markdown | tee -a "$OUT/summary.txt"
echo "results in $OUT"
