#!/usr/bin/env bash
# `bakeoff run` with its roles placed against the same run on one loopback, alternating: the same
# cells (go/fasthttp and rust/actix on hello and json, 6 blocks of 1 s) measured `local` (the load
# generator in bakeoff, the servers on 127.0.0.1) and placed (the servers in a network namespace of
# this machine reached over a veth pair, the load from a `local` agent), 3 + 3 runs. Prints per
# cell the median req/s of each placement and their ratio (placed over local), the path the placed
# runs measured (RTT, link ceiling) and each run's wall time, so the controller's cost (sessions,
# the path probe) shows beside the veth's. Namespaces share this machine's cores: the ratio is the
# path's and the agent's cost here, not another host's.
#
#   BAKEOFF=target/release/bakeoff bench/run-hosts.sh
# The summary goes to bench/results/run-hosts-<stamp>/summary.txt (the one file git keeps).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
[ "$(id -u)" = 0 ] || { echo "bench/run-hosts.sh needs root (network namespaces)" >&2; exit 1; }
BAKEOFF="${BAKEOFF:-$ROOT/target/release/bakeoff}"
OUT="$ROOT/bench/results/run-hosts-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
provenance run-hosts "$ROOT" > "$OUT/summary.txt"

# One server namespace on a veth pair from this one, on a /24 no address here is on.
NS="bo-bench-$$"
LINK="bob$$"
NET=""
for y in $(seq 200 250); do
  ip -o -4 addr show | grep -q " 10.251.$y\." || { NET="10.251.$y"; break; }
done
[ -n "$NET" ] || { echo "no free 10.251.x.0/24 here" >&2; exit 1; }
cleanup() {
  for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  ip link del "$LINK" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$NS"
ip link add "$LINK" type veth peer name eth0 netns "$NS"
ip addr add "$NET.1/24" dev "$LINK"
ip link set "$LINK" up
ip -n "$NS" addr add "$NET.2/24" dev eth0
ip -n "$NS" link set eth0 up
ip -n "$NS" link set lo up

CELLS=(--stacks go/fasthttp,rust/actix --scenarios hello,json --trials 6 --duration 1s --warmup 500ms --no-ceiling --quiet)
"$BAKEOFF" setup go/fasthttp rust/actix --quiet > "$OUT/setup.log" 2>&1
for round in 1 2 3; do
  for placement in local placed; do
    extra=()
    [ "$placement" = placed ] && extra=(--server-host "netns:$NS" --client local)
    db="$OUT/$placement-$round.db"
    start=$(date +%s.%N)
    (cd "$ROOT" && "$BAKEOFF" run "${CELLS[@]}" "${extra[@]}" --db "$db") > "$OUT/$placement-$round.log" 2>&1
    end=$(date +%s.%N)
    "$BAKEOFF" report --db "$db" --format json > "$OUT/$placement-$round.json"
    echo "$placement $round $(echo "$end - $start" | bc)" >> "$OUT/walls.txt"
  done
done
python3 - "$OUT" >> "$OUT/summary.txt" <<'EOF'
import json, statistics, sys, pathlib
out = pathlib.Path(sys.argv[1])
rps, walls, paths = {}, {}, []
for line in (out / "walls.txt").read_text().split("\n"):
    if line.strip():
        placement, _, wall = line.split()
        walls.setdefault(placement, []).append(float(wall))
for f in sorted(out.glob("*-[0-9].json")):
    placement = f.name.split("-")[0]
    report = json.loads(f.read_text())
    for c in report["cells"]:
        key = f'{c["stack"]} {c["scenario"]}'
        rps.setdefault(key, {}).setdefault(placement, []).append(c["metrics"]["requests_per_sec"]["median"])
    paths += report["run"]["settings"].get("paths", [])
print(f"# load average after the runs: {open('/proc/loadavg').read().split()[:3]}")
print("# cell  local req/s (median of 3 runs)  placed req/s  placed/local")
for key, by in sorted(rps.items()):
    loc, pla = statistics.median(by.get("local", [0])), statistics.median(by.get("placed", [0]))
    print(f"{key:<22} {loc:>10.0f} {pla:>10.0f}   {pla / loc if loc else float('nan'):.3f}")
for p in paths:
    m = p["measure"]
    print(f'path from {p["from"]}: RTT {m["rtt_median_us"]:.0f} µs, ceiling {(m.get("ceiling_bytes_per_s") or 0) / 1e6:.0f} MB/s')
for placement, w in sorted(walls.items()):
    print(f"run wall time, {placement}: median {statistics.median(w):.1f} s (each run: {', '.join(f'{x:.1f}' for x in w)})")
EOF
rm -f "$OUT"/*.db "$OUT"/*.json "$OUT"/*.log "$OUT/walls.txt"
cat "$OUT/summary.txt"
