#!/usr/bin/env bash
# Does the open model stay exact over HTTP/2? One nginx worker serves HTTP/1.1 and h2c; each
# round runs bakeoff-load at a fixed rate over HTTP/1.1 and over h2c (order alternating), and 2 s
# into each run stops the nginx worker (SIGSTOP) for 300 ms. Requests due during the stall wait
# for its end, so with coordinated omission corrected the share of requests slower than x is
# (0.3 s - x) / 5 s whatever the protocol: p95 near 50 ms, p99 near 250 ms. The summary gives each
# protocol's p95 and p99 per round, their medians, and h2/h1 per round (the goal: within 10%).
#
#   bench/h2-stall.sh                 # 7 rounds, 4000 requests/s, 5 s a run (~1.5 min)
#   ROUNDS=3 RATE=2000 bench/h2-stall.sh
#   LOAD_BIN=/path/bakeoff-load bench/h2-stall.sh
set -euo pipefail

ROUNDS=${ROUNDS:-7}
RATE=${RATE:-4000}
DUR=5
AT=2
STALL=0.3
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/bench/load"
. "$ROOT/bench/provenance.sh"

. "$HERE/client.sh"
load_binary "$ROOT"
pick_cpus
. "$HERE/nginx.sh"
start_nginx h2-stall "$SCPU" h1+h2c
WORKER=$(pgrep -P "$NGINX_PID" | head -n1)

OUT="$ROOT/bench/results/h2-stall-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
ROWS="$OUT/rows.csv"
echo "round,protocol,requests,errors,p50_us,p95_us,p99_us,max_us" >"$ROWS"

# measure PROTOCOL ROUND: one run with a stall planted AT seconds in; a row of rows.csv.
measure() {
  local proto=$1 r=$2 json="$TMP/run.json" flags=(-c 32 -t 1 --rate "$RATE" -d "${DUR}s" --json)
  if [ "$proto" = h2 ]; then flags+=(--h2 --streams 8 "$URL2"); else flags+=("$URL"); fi
  taskset -c "$CCPU" "$LOAD" "${flags[@]}" >"$json" &
  local client=$!
  sleep "$AT"
  kill -STOP "$WORKER"
  sleep "$STALL"
  kill -CONT "$WORKER"
  wait "$client" || true
  python3 - "$json" "$proto" "$r" >>"$ROWS" <<'PY'
import json, sys
step = json.load(open(sys.argv[1]))["steps"][0]
l, e = step["latency"], step["errors"]
errors = sum(v for k, v in e.items() if isinstance(v, int)) + sum(e["status"].values())
print(f"{sys.argv[3]},{sys.argv[2]},{step['requests']},{errors},{l['p50_us']:.0f},{l['p95_us']:.0f},{l['p99_us']:.0f},{l['max_us']:.0f}")
PY
}

for r in $(seq "$ROUNDS"); do
  if ((r % 2)); then order="h1 h2"; else order="h2 h1"; fi
  for proto in $order; do
    measure "$proto" "$r"
  done
done

python3 - "$ROWS" <<'PY' | tee "$OUT/summary.txt"
import csv, math, statistics, sys

def clopper_pearson(k, n, a=0.05):
    """Exact binomial 95% bounds of k successes in n, by bisection on the binomial tail."""
    cdf = lambda k, p: sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
    def solve(f):
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return lo
    low = 0.0 if k == 0 else solve(lambda p: 1 - cdf(k - 1, p) < a / 2)
    high = 1.0 if k == n else solve(lambda p: cdf(k, p) > a / 2)
    return low, high

rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for row in rows:
    by.setdefault(row["round"], {})[row["protocol"]] = row
print("round  h1 p95    h2 p95   h2/h1    h1 p99    h2 p99   h2/h1   errors h1/h2")
ratios = {"p95_us": [], "p99_us": []}
for r, p in sorted(by.items(), key=lambda kv: int(kv[0])):
    if "h1" not in p or "h2" not in p:
        continue
    for q in ratios:
        ratios[q].append(float(p["h2"][q]) / float(p["h1"][q]))
    print(f"{r:>5} {float(p['h1']['p95_us'])/1000:>7.1f}ms {float(p['h2']['p95_us'])/1000:>7.1f}ms {ratios['p95_us'][-1]:>6.2f}x "
          f"{float(p['h1']['p99_us'])/1000:>7.1f}ms {float(p['h2']['p99_us'])/1000:>7.1f}ms {ratios['p99_us'][-1]:>6.2f}x   {p['h1']['errors']}/{p['h2']['errors']}")
for q, name, expect in (("p95_us", "p95", 50), ("p99_us", "p99", 250)):
    for proto in ("h1", "h2"):
        vals = [float(p[proto][q]) / 1000 for p in by.values() if proto in p]
        print(f"{name} {proto}: median {statistics.median(vals):.1f} ms (expected about {expect} ms from a 300 ms stall in 5 s)")
    rs = ratios[q]
    within = sum(1 for x in rs if abs(x - 1) <= 0.10)
    lo, hi = clopper_pearson(within, len(rs))
    print(f"{name} h2/h1: median {statistics.median(rs):.3f}x, range {min(rs):.3f}-{max(rs):.3f}x, within 10% in {within} of {len(rs)} rounds"
          f" (Clopper-Pearson 95%: {100 * lo:.0f}-{100 * hi:.0f}%)")
PY
{ provenance h2-stall "$ROOT"; echo "# rounds=$ROUNDS rate=$RATE duration=${DUR}s stall=${STALL}s at ${AT}s"; cat "$OUT/summary.txt"; } >"$OUT/summary.tmp" && mv "$OUT/summary.tmp" "$OUT/summary.txt"
echo "summary: ${OUT#"$ROOT"/}/summary.txt"
