#!/usr/bin/env bash
# Does the open model send on time? Against one nginx worker on loopback (nginx pinned to CPU 0, the
# client to CPU 1, one client thread, 64 connections), bakeoff-load runs a constant rate at each of
# RATES, ROUNDS times (rates interleaved within a round), and bench/load/timing.py prints per rate the
# medians of the corrected p50/p90/p99 (from the intended send time), the service time's p50 (from
# the actual send), their difference (what the client's own lateness adds to a latency), and the
# client's CPU. An on-time client keeps the difference at the loop's wake-up cost (tens of µs); a
# client that sleeps in whole milliseconds showed ~500 µs at 1k and 10k req/s (docs/load-generator.md).
# All of it goes to bench/results/open-model-timing-<stamp>/: git keeps summary.txt (the table, under
# the commit and machine), the raw load reports (reports.jsonl) stay on this machine.
#
#   bench/open-model-timing.sh                       # 5 rounds x 3 s at 1k, 10k, 30k, 60k req/s (~1 min)
#   ROUNDS=9 RATES="1000 20000" bench/open-model-timing.sh
#   LOAD_BIN=/path/bakeoff-load bench/open-model-timing.sh   # skip the cargo build
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RATES=${RATES:-1000 10000 30000 60000}
DUR=${DUR:-3}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$NGINX" ] || { echo "nginx is needed (apt-get install nginx-light)" >&2; exit 1; }
if [ -n "${LOAD_BIN:-}" ]; then
  LOAD="$LOAD_BIN"
else
  (cd "$ROOT" && cargo build --release -q --locked -p bakeoff --bin bakeoff-load)
  LOAD="${CARGO_TARGET_DIR:-$ROOT/target}/release/bakeoff-load"
fi

. "$ROOT/bench/load/nginx.sh"
start_nginx open-model-timing 0

OUT="$ROOT/bench/results/open-model-timing-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
RAW="$OUT/reports.jsonl"
{
  provenance open-model-timing "$ROOT"
  echo "# $("$NGINX" -v 2>&1), $ROUNDS rounds x ${DUR} s at $RATES req/s, one client thread, 64 connections"
} > "$OUT/summary.txt"
for r in $(seq "$ROUNDS"); do
  for rate in $RATES; do
    taskset -c 1 "$LOAD" -t1 -c64 -d"${DUR}s" --rate "$rate" --json "$URL" 2>/dev/null \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); d["round"]=int(sys.argv[1]); print(json.dumps(d))' "$r" >> "$RAW"
  done
done
python3 "$ROOT/bench/load/timing.py" "$RAW" | tee -a "$OUT/summary.txt"
echo "summary: ${OUT#"$ROOT"/}/summary.txt, raw reports beside it"
