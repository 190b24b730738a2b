#!/usr/bin/env bash
# bakeoff-load vs h2load (nghttp2) over HTTP/2 against one nginx worker on loopback: cleartext
# (h2c, prior knowledge) by default, over TLS 1.3 with ALPN h2 with --tls.
#
# nginx is pinned to CPU 0, the client to CPU 1, one client thread. For each configuration
# (connections x streams per connection) each round runs h2load and bakeoff-load back to back
# (which goes first alternates); bench/load/compare.py prints, per configuration, the median of
# the paired ratios load/h2load of requests/s and of client CPU time per request (utime+stime
# from /usr/bin/time) with a sign-test 95% interval and a verdict against 1.0x. Results go to
# bench/results/load-vs-h2load[-tls]-<stamp>/ (summary.txt, rounds.txt), as load-vs-wrk.sh's.
#
#   bench/load-vs-h2load.sh            # h2c, 9 rounds x 4 s per client and configuration (~5 min)
#   bench/load-vs-h2load.sh --tls      # h2 over TLS
#   bench/load-vs-h2load.sh --quick    # 1 round x 2 s (no intervals)
#   LOAD_BIN=/path/bakeoff-load bench/load-vs-h2load.sh   # skip the cargo build
set -euo pipefail

ROUNDS=${ROUNDS:-9}
DUR=${DUR:-4}
MODE=h2c
for arg in "$@"; do
  case "$arg" in
    --quick) ROUNDS=1; DUR=2 ;;
    --tls) MODE=h2 ;;
    *) echo "usage: $0 [--quick] [--tls]" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/bench/load"
. "$ROOT/bench/provenance.sh"

. "$HERE/client.sh"
bench_needs h2load:nghttp2-client nginx:nginx /usr/bin/time:time
pick_cpus
load_binary "$ROOT"

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
. "$HERE/nginx.sh"
start_nginx load-vs-h2load "$SCPU" "$MODE"

# run CLIENT CONNS STREAMS DUR -> prints "rps requests cpu_s rss_kb"
run() {
  local client=$1 conns=$2 streams=$3 dur=$4 out="$TMP/out" tf="$TMP/time" rps reqs
  if [ "$client" = h2load ]; then
    taskset -c "$CCPU" /usr/bin/time -f '%U %S %M' -o "$tf" h2load -t1 -c"$conns" -m"$streams" -D"$dur" "$URL" >"$out" 2>&1
    rps=$(awk '/^finished in/ {print $4}' "$out")
    reqs=$(awk '/^requests:/ {print $8}' "$out")
  else
    taskset -c "$CCPU" /usr/bin/time -f '%U %S %M' -o "$tf" "$LOAD" --h2 -t1 -c"$conns" --streams "$streams" -d"${dur}s" "$URL" >"$out" 2>&1
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
    reqs=$(awk '/requests in/ {print $1; exit}' "$out")
  fi
  read -r u s m < <(tail -n1 "$tf")
  echo "$rps $reqs $(python3 -c "print($u+$s)") $m"
}

OUT="$ROOT/bench/results/load-vs-h2load$([ "$MODE" = h2 ] && echo -tls || true)-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
RAW="$OUT/rounds.txt"
SUMMARY="$OUT/summary.txt"
{
  provenance load-vs-h2load "$ROOT"
  echo "# rounds=$ROUNDS duration=${DUR}s server_cpu=$SCPU client_cpu=$CCPU url=$URL mode=$MODE"
  echo "# $("$NGINX" -v 2>&1), $(h2load --version 2>&1 | head -n1)"
} >"$SUMMARY"
{
  cat "$SUMMARY"
  echo "# config round client rps requests cpu_s max_rss_kb"
} >"$RAW"

for config in 16x1 16x10 64x10 16x100; do
  conns=${config%x*} streams=${config#*x}
  for r in $(seq "$ROUNDS"); do
    if ((r % 2)); then order="h2load load"; else order="load h2load"; fi
    for client in $order; do
      read -r rps reqs cpu rss < <(run "$client" "$conns" "$streams" "$DUR")
      echo "c=$conns,m=$streams $r $client $rps $reqs $cpu $rss" >>"$RAW"
    done
  done
done
python3 "$HERE/compare.py" "$RAW" | tee -a "$SUMMARY"
echo "summary: ${SUMMARY#"$ROOT"/}, raw rounds beside it"
