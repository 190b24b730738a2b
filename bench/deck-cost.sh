#!/usr/bin/env bash
# What a request deck costs the load generator: client CPU per request with a 3-request deck
# (--deck-urls, three paths in turn, results per kind) against a plain 1-URL plan, on the same
# nginx worker over loopback.
#
# nginx is pinned to CPU 0, the client (one thread) to CPU 1. For each config, every round runs the
# plain plan and the deck back to back (which goes first alternates), and bench/deck_cost.py prints
# the median of the paired ratios deck/plain of CPU time per request (the worker thread's
# user+system seconds from the JSON report, over its responses) and of requests/s, each with a
# sign-test 95% interval, against the 1.05x target. The load average is noted before and after:
# other work on the machine moves both runs of a round alike, but widens the interval.
# bench/results/deck-cost-<stamp>/: git keeps summary.txt; rounds.txt stays on this machine.
#
#   bench/deck-cost.sh                 # 13 rounds x 2 s per plan and config (~2 min)
#   ROUNDS=21 DUR=3 bench/deck-cost.sh
#   LOAD_BIN=/path/bakeoff-load bench/deck-cost.sh   # skip the cargo build
set -euo pipefail

ROUNDS=${ROUNDS:-13}
DUR=${DUR:-2}

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"

for tool in taskset python3; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$NGINX" ] || { echo "missing: nginx (apt-get install nginx-light)" >&2; exit 1; }

. "$ROOT/bench/load/client.sh"
pick_cpus
load_binary "$ROOT"

. "$ROOT/bench/load/nginx.sh"
start_nginx deck-cost "$SCPU"
BASE="${URL%/}"

# The plain plan sends the deck's first request; the deck adds two of other paths.
PLAIN="$BASE/items/17"
DECK="$BASE/items/17,$BASE/search?q=ab,$BASE/cart/3"

# run PLAN CONNS EXTRA... -> "rps requests cpu_s kinds"
run() {
  local plan=$1 conns=$2; shift 2
  local deck=()
  [ "$plan" = deck ] && deck=(--deck-urls "$DECK")
  taskset -c "$CCPU" "$LOAD" -t1 -c"$conns" -d"${DUR}s" --json "${deck[@]}" "$@" "$PLAIN" >"$TMP/out.json"
  python3 - "$TMP/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s, c = r["steps"][0], r["client"]
assert s["errors"]["connect"] + s["errors"]["read"] + s["errors"]["timeout"] == 0, s["errors"]
print(s["requests_per_sec"], s["requests"], c["cpu_user_s"] + c["cpu_system_s"], len(s.get("kinds", [])))
PY
}

OUT="$ROOT/bench/results/deck-cost-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
RAW="$OUT/rounds.txt"
SUMMARY="$OUT/summary.txt"

{
  provenance deck-cost "$ROOT"
  echo "# rounds=$ROUNDS duration=${DUR}s server_cpu=$SCPU client_cpu=$CCPU, one client thread; $("$NGINX" -v 2>&1)"
  echo "# plain: GET /items/17; deck: GET /items/17, /search?q=ab, /cart/3 in turn"
} >"$SUMMARY"
{
  cat "$SUMMARY"
  echo "# config round plan rps requests cpu_s kinds"
} >"$RAW"

bench_config() {
  local label=$1 conns=$2 extra=$3 r first second plan
  for r in $(seq "$ROUNDS"); do
    if ((r % 2)); then first=plain; second=deck; else first=deck; second=plain; fi
    for plan in $first $second; do
      # shellcheck disable=SC2086
      echo "$label $r $plan $(run "$plan" "$conns" $extra)" >>"$RAW"
    done
  done
}

bench_config "c=64" 64 ""
bench_config "c=64,pipe16" 64 "--pipeline 16"
python3 "$ROOT/bench/deck_cost.py" "$RAW" | tee -a "$SUMMARY"
echo "# load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$SUMMARY"
echo "summary: ${SUMMARY#"$ROOT"/}, raw rounds beside it"
