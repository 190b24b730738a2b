#!/usr/bin/env bash
# bench/uwsgi-setups.sh: the uWSGI fronts of a Werkzeug stack side by side, measured by bakeoff itself.
#
# One `bakeoff run` measures python/werkzeug-uwsgi's variants front-http11 (uWSGI's HTTP/1.1 socket:
# each process keeps one connection), front-router (uWSGI's HTTP router) and front-nginx (nginx
# speaking the uwsgi protocol) at WORKERS 1 and 64, on hello and json, 64 connections, the server
# on CPU 0 and the client on CPU 1 (the same server CPU for every setup), trials interleaved
# across setups. bench/uwsgi/summarise.py then prints, per setup, the median requests/s and server
# CPU µs per request with sign-test 95% intervals over the trials, plus the worst trial's starved
# connections. All of it goes to bench/results/uwsgi-setups-<stack>-<stamp>/: git keeps summary.txt,
# bakeoff's report (report.txt, report.json) stays on this machine (bench/provenance.sh).
#
#   bench/uwsgi-setups.sh                 # 6 trials x 5 s per cell (~15 min)
#   TRIALS=8 DUR=5s bench/uwsgi-setups.sh
#   STACK=pypy/werkzeug-uwsgi bench/uwsgi-setups.sh
#   BAKEOFF=/path/to/bakeoff bench/uwsgi-setups.sh   # skip the cargo build
set -euo pipefail

TRIALS=${TRIALS:-6}
DUR=${DUR:-5s}
WARMUP=${WARMUP:-2s}
STACK=${STACK:-python/werkzeug-uwsgi}
WORKERS=${WORKERS:-1,64}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"

if [ -n "${BAKEOFF:-}" ]; then
  BIN="$BAKEOFF"
else
  echo "building bakeoff (release)..." >&2
  (cd "$ROOT" && cargo build --release -q -j 2 -p bakeoff)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/bakeoff"
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "warning: one CPU: server and client share it, so the CPU figures include the client" >&2
  CPUS=(--server-cpus 0 --client-cpus 0)
else
  CPUS=(--server-cpus 0 --client-cpus 1)
fi

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="$ROOT/bench/results/uwsgi-setups-$(echo "$STACK" | tr / -)-$stamp"
mkdir -p "$out"
{
  provenance uwsgi-setups "$ROOT"
  echo "# $STACK fronts at WORKERS $WORKERS, hello and json, $TRIALS trials x $DUR after $WARMUP, ${CPUS[*]}"
} > "$out/summary.txt"
db="$(mktemp -d /tmp/uwsgi-setups.XXXXXX)/results.db"
trap 'rm -rf "$(dirname "$db")"' EXIT

"$BIN" setup --root "$ROOT" "$STACK"
"$BIN" run --root "$ROOT" --stacks "$STACK" --variants front-http11,front-router,front-nginx \
  --workers "$WORKERS" --scenarios hello,json --trials "$TRIALS" --duration "$DUR" --warmup "$WARMUP" \
  --connections 64 "${CPUS[@]}" --no-ceiling --db "$db" > "$out/report.txt"
"$BIN" report --db "$db" --format json --out "$out/report.json"
python3 "$ROOT/bench/uwsgi/summarise.py" "$out/report.json" | tee -a "$out/summary.txt"
echo "summary: ${out#"$ROOT"/}/summary.txt, bakeoff's report beside it (report.txt, report.json)" >&2
