#!/usr/bin/env bash
# bakeoff-load vs wrk against one nginx worker on loopback, in plain HTTP/1.1 or over TLS 1.3.
#
# nginx is pinned to CPU 0, the client to CPU 1, one client thread. For
# connections 16, 64, 256 (and a 16-deep pipeline at 64) each round runs wrk and
# bakeoff-load back to back (which goes first alternates), and
# bench/load/compare.py prints, per config, the median of the paired ratios
# load/wrk of requests/s and of client CPU time per request (utime+stime from
# /usr/bin/time) with a sign-test 95% interval and a verdict against 1.0x; then
# the client's peak RSS at 1000 connections. All of it goes to
# bench/results/load-vs-wrk-<stamp>/: git keeps summary.txt (what it prints, under
# the commit, machine and versions); the raw rounds (rounds.txt, the same header)
# stay on this machine for anyone who wants to recompute or pool them.
#
#   bench/load-vs-wrk.sh           # 9 rounds x 4 s per client and config (~6 min)
#   bench/load-vs-wrk.sh --quick   # 1 round x 2 s (no intervals)
#   bench/load-vs-wrk.sh --tls     # https: nginx with a P-256 certificate, TLS 1.3, both clients
#                                  # unverifying; connections 16, 64, 256 and a new connection
#                                  # per request at 16 (wrk: Connection: close; bakeoff: --close,
#                                  # both resuming sessions as they do by default)
#   ROUNDS=15 DUR=5 bench/load-vs-wrk.sh
#   LOAD_BIN=/path/bakeoff-load bench/load-vs-wrk.sh   # skip the cargo build
set -euo pipefail

# Many short rounds beat few long ones here: a run's speed is set early (the
# machine's noise comes in modes that last a whole run), so more runs, not
# longer ones, narrow the interval.
ROUNDS=${ROUNDS:-9}
DUR=${DUR:-4}
TLS=0
for arg in "$@"; do
  case "$arg" in
    --quick) ROUNDS=1; DUR=2 ;;
    --tls) TLS=1 ;;
    *) echo "usage: $0 [--quick] [--tls]" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/bench/load"
. "$ROOT/bench/provenance.sh"

. "$HERE/client.sh"
bench_needs wrk:wrk nginx:nginx-light taskset:util-linux /usr/bin/time:time python3:python3
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
pick_cpus
load_binary "$ROOT"

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

. "$ROOT/bench/load/nginx.sh"
if ((TLS)); then
  start_nginx load-vs-wrk "$SCPU" tls
else
  start_nginx load-vs-wrk "$SCPU"
fi

# run NAME CONNS EXTRA... -> prints "rps requests cpu_s rss_kb"
run() {
  local name=$1 conns=$2 dur=$3; shift 3
  local out="$TMP/out" tf="$TMP/time"
  if [ "$name" = wrk ]; then
    taskset -c "$CCPU" /usr/bin/time -f '%U %S %M' -o "$tf" wrk -t1 -c"$conns" -d"${dur}s" "$@" "$URL" >"$out" 2>&1
  else
    taskset -c "$CCPU" /usr/bin/time -f '%U %S %M' -o "$tf" "$LOAD" -t1 -c"$conns" -d"${dur}s" "$@" "$URL" >"$out" 2>&1
  fi
  local rps reqs
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
  reqs=$(awk '/requests in/ {print $1; exit}' "$out")
  read -r u s m < <(tail -n1 "$tf")
  echo "$rps $reqs $(python3 -c "print($u+$s)") $m"
}

suffix=""; ((TLS)) && suffix=-tls
OUT="$ROOT/bench/results/load-vs-wrk$suffix-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
RAW="$OUT/rounds.txt"
SUMMARY="$OUT/summary.txt"

bench_config() {
  local label=$1 conns=$2 wrkx=$3 loadx=$4 r first second client
  for r in $(seq "$ROUNDS"); do
    # Alternate who goes first, so neither client always runs on a warmer nginx.
    if ((r % 2)); then first=wrk; second=load; else first=load; second=wrk; fi
    for client in $first $second; do
      local extra=$loadx
      [ "$client" = wrk ] && extra=$wrkx
      # shellcheck disable=SC2086
      read -r rps reqs cpu rss < <(run "$client" "$conns" "$DUR" $extra)
      echo "$label $r $client $rps $reqs $cpu $rss" >>"$RAW"
    done
  done
}

{
  provenance load-vs-wrk "$ROOT"
  echo "# rounds=$ROUNDS duration=${DUR}s server_cpu=$SCPU client_cpu=$CCPU url=$URL"
  echo "# $("$NGINX" -v 2>&1), $(wrk -v 2>&1 | head -n1 | cut -d' ' -f1-2)$( ((TLS)) && echo ", $(openssl version)" || true)"
} >"$SUMMARY"
{
  cat "$SUMMARY"
  echo "# config round client rps requests cpu_s max_rss_kb"
} >"$RAW"
for c in 16 64 256; do
  bench_config "c=$c" "$c" "" ""
done
if ((TLS)); then
  bench_config "c=16,close" 16 "-s $HERE/close.lua" "--close"
else
  bench_config "c=64,pipe16" 64 "-s $HERE/pipeline.lua" "--pipeline 16"
fi
python3 "$HERE/compare.py" "$RAW" | tee -a "$SUMMARY"

read -r _ _ _ wrss < <(run wrk 1000 2)
read -r _ _ _ lrss < <(run load 1000 2)
python3 -c "print(f'RSS at c=1000: wrk {$wrss/1024:.1f} MiB, bakeoff-load {$lrss/1024:.1f} MiB, ratio {$lrss/$wrss:.2f}x')" | tee -a "$SUMMARY"
echo "summary: ${SUMMARY#"$ROOT"/}, raw rounds beside it"
