#!/usr/bin/env bash
# Two ways to pair an A/A comparison, side by side on this machine: two co-resident copies of one
# server loaded one after the other (the block schedule's pairing: adjacent slices, random order)
# and the same two loaded at once, each by its own load generator (duet benchmarking, Bulej et al.
# ICPE 2020: whatever the machine does in a second, it does to both). Alternating, ROUNDS times.
# Prints each arm's spread of the log ratio, its 95% half-width and P = half-width (%) x
# sqrt(minutes of wall time measured), and the ratio of the two P. Loaded at once, the servers
# share the server CPUs: the ratio is what each does with an equal share of them, which is the
# solo ratio only for servers that are bound by those CPUs and run as many threads as each other.
#
#   bench/duet.sh                      # rust/actix against its own copy, 1 worker each, 8 rounds of 10 s
#   STACKS="rust/actix go/nethttp" bench/duet.sh   # two stacks: does at once give the same ratio?
#   ROUNDS=12 SECONDS_PER_ROUND=6 bench/duet.sh
#   BAKEOFF=/path/bakeoff bench/duet.sh    # skip the cargo build
# STACKS may name stacks whose start command needs only PORT, WORKERS and DATA_DIR. As root on
# cgroup v1, each server runs in a `cpu` cgroup of its own with equal shares, so a server of more
# threads (a Go runtime's) does not take a larger share of the CPU they share.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
read -r -a STACK_PAIR <<< "${STACKS:-rust/actix rust/actix}"
[ "${#STACK_PAIR[@]}" = 2 ] || { echo "STACKS names two stacks, e.g. \"rust/actix go/nethttp\"" >&2; exit 1; }
ROUNDS=${ROUNDS:-8}
SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-10}
CONNECTIONS=${CONNECTIONS:-32}
OUT="$ROOT/bench/results/duet-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
"$BAKEOFF" setup --root "$ROOT" --quiet "${STACK_PAIR[@]}" >&2
"$BAKEOFF" fixtures "$OUT/data" >/dev/null
# One CPU for the servers, the last one for the load generators.
SERVER_CPU=0
CLIENT_CPU=$(( $(nproc) - 1 ))

PIDS=()
GROUPS_MADE=()
# Each server leads a process group of its own: stopping it stops whatever its start command forked.
stop() {
  for pid in "${PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for group in "${GROUPS_MADE[@]}"; do rmdir "$group" 2>/dev/null || true; done
}
trap stop EXIT
PORTS=(18481 18482)
for i in 0 1; do
  stack=${STACK_PAIR[$i]} port=${PORTS[$i]}
  # The lab's own environment for a stack: Cargo's target folder in the machine cache, per stack.
  target="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}/cargo-target/${stack//\//-}"
  start=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["start"]["command"])' "$ROOT/stacks/$stack/stack.toml")
  (cd "$ROOT/stacks/$stack" && PORT=$port WORKERS=1 DATA_DIR="$OUT/data" CARGO_TARGET_DIR="$target" \
    exec setsid taskset -c "$SERVER_CPU" bash -c "$start") > "$OUT/server-$port.log" 2>&1 &
  PIDS+=($!)
done
SHARES="per thread (no cgroup v1 cpu controller writable here)"
if [ -w /sys/fs/cgroup/cpu ]; then
  for i in 0 1; do
    group="/sys/fs/cgroup/cpu/bakeoff-duet-$$-$i"
    mkdir "$group" && GROUPS_MADE+=("$group")
    for pid in $(pgrep -g "${PIDS[$i]}"); do echo "$pid" > "$group/cgroup.procs"; done
  done
  SHARES="equal, one cpu cgroup per server"
fi
for port in "${PORTS[@]}"; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/" >/dev/null || { echo "the server on $port never answered; see $OUT/server-$port.log" >&2; exit 1; }
done

load() { # port, seconds, output
  "$BAKEOFF" load -c "$CONNECTIONS" -d "${2}s" --warmup 1s --pin-cpus "$CLIENT_CPU" --json "http://127.0.0.1:$1/" > "$3"
}
duet() { # round
  load ${PORTS[0]} "$SECONDS_PER_ROUND" "$OUT/duet-a-$1.json" & local a=$!
  load ${PORTS[1]} "$SECONDS_PER_ROUND" "$OUT/duet-b-$1.json"
  wait "$a"
}
adjacent() { # round: each server half the round, in a random order
  local half=$(( SECONDS_PER_ROUND / 2 ))
  if (( RANDOM % 2 )); then
    load ${PORTS[0]} "$half" "$OUT/adjacent-a-$1.json"; load ${PORTS[1]} "$half" "$OUT/adjacent-b-$1.json"
  else
    load ${PORTS[1]} "$half" "$OUT/adjacent-b-$1.json"; load ${PORTS[0]} "$half" "$OUT/adjacent-a-$1.json"
  fi
}

provenance duet "$ROOT" > "$OUT/summary.txt"
echo "# a = ${STACK_PAIR[0]}, b = ${STACK_PAIR[1]}, hello, 1 worker each on CPU $SERVER_CPU (CPU shares $SHARES)," \
  "load on CPU $CLIENT_CPU, c$CONNECTIONS each, $ROUNDS rounds of ${SECONDS_PER_ROUND} s per arm" >> "$OUT/summary.txt"
for round in $(seq "$ROUNDS"); do
  if (( round % 2 )); then duet "$round"; adjacent "$round"; else adjacent "$round"; duet "$round"; fi
  echo "round $round of $ROUNDS" >&2
done
python3 "$ROOT/bench/duet_summary.py" "$OUT" "$ROUNDS" "$SECONDS_PER_ROUND" | tee -a "$OUT/summary.txt"
echo "results in $OUT"
