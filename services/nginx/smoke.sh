#!/usr/bin/env bash
# smoke.sh: checks one proxy stack against a throwaway nginx (bodies, disconnects, fd leaks, concurrency, wrk).
#
# Usage: services/nginx/smoke.sh STACK_DIR [VARIANT]
#   STACK_DIR  a proxy stack folder (its setup must already have been run), e.g. stacks/go/iocopy
#   VARIANT    optional [[variants]] name whose env is added (e.g. uvloop)
# Environment: WORKERS (default 2), WRK_SECONDS (default 3; 0 skips wrk).
# Exit status 0 when every check passes. Both servers are stopped by PID on exit.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 STACK_DIR [VARIANT]" >&2; exit 2; }
STACK=$(cd "$1" && pwd)
VARIANT=${2:-}
WORKERS=${WORKERS:-2}
WRK_SECONDS=${WRK_SECONDS:-3}
SIZES="1 10240 1048576"

PREFIX=$(mktemp -d /tmp/nginx-smoke.XXXXXX)
NGINX_PID=""
PROXY_PID=""
FAILED=0

stop_pid() {  # stop_pid PID [group]: TERM, wait up to 5 s, then KILL
    local pid=$1 target=$1
    [ -n "$pid" ] || return 0
    [ "${2:-}" = group ] && target="-$pid"
    kill -TERM -- "$target" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "$target" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    stop_pid "$PROXY_PID" group
    stop_pid "$NGINX_PID"
    rm -rf "$PREFIX"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*"; FAILED=1; }
ok()   { echo "ok:   $*"; }

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_port() {  # wait_port PORT PID SECONDS
    local deadline=$((SECONDS + $3))
    while [ $SECONDS -lt $deadline ]; do
        kill -0 "$2" 2>/dev/null || return 1
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
# Sockets only (runtimes keep other descriptors in caches: Go pools splice pipes until a GC),
# over every process of the proxy's process group (multi-process proxies).
fd_count() {
    local pid n=0
    for pid in $(pgrep -g "$PROXY_PID"); do
        n=$((n + $(find "/proc/$pid/fd" -lname 'socket:*' 2>/dev/null | wc -l)))
    done
    echo "$n"
}

# --- nginx -----------------------------------------------------------------------------------
mkdir -p "$PREFIX/html/bytes" "$PREFIX/logs" "$PREFIX/tmp" "$PREFIX/run" "$PREFIX/out"
for size in $SIZES; do head -c "$size" /dev/urandom > "$PREFIX/html/bytes/$size"; done
NPORT=$(free_port)
sed -e "s#{{PORT}}#$NPORT#g" -e "s#{{PREFIX}}#$PREFIX#g" -e "s#{{WORKERS}}#1#g" \
    "$HERE/nginx.conf.template" > "$PREFIX/nginx.conf"
nginx -p "$PREFIX/" -c "$PREFIX/nginx.conf" -e "$PREFIX/logs/error.log" &
NGINX_PID=$!
wait_port "$NPORT" "$NGINX_PID" 10 || { cat "$PREFIX/logs/error.log" >&2; echo "nginx did not start" >&2; exit 1; }
echo "nginx pid $NGINX_PID on 127.0.0.1:$NPORT, prefix $PREFIX"

# --- proxy -----------------------------------------------------------------------------------
# The start command and the variant's env come from stack.toml (tomllib: Python >= 3.11).
mapfile -t START < <(python3 - "$STACK/stack.toml" "$VARIANT" <<'PY'
import sys, tomllib
m = tomllib.load(open(sys.argv[1], "rb"))
print(m["start"]["command"])
ready = m["start"].get("ready_timeout", "30s")
print(int(ready[:-1]) * (60 if ready.endswith("m") else 1) if not ready.endswith("ms") else 1)
for v in m.get("variants", []):
    if v["name"] == sys.argv[2]:
        for k, val in v.get("env", {}).items():
            print(f"{k}={val}")
        break
else:
    if sys.argv[2]:
        sys.exit(f"no variant {sys.argv[2]!r}")
PY
)
CMD=${START[0]}
READY=${START[1]}
PPORT=$(free_port)
(
    cd "$STACK"
    exec env PORT="$PPORT" UPSTREAM="127.0.0.1:$NPORT" WORKERS="$WORKERS" RUN_DIR="$PREFIX/run" \
        "${START[@]:2}" setsid sh -c "$CMD"
) > "$PREFIX/proxy.log" 2>&1 &
PROXY_PID=$!
if ! wait_port "$PPORT" "$PROXY_PID" "$READY"; then
    cat "$PREFIX/proxy.log" >&2
    echo "proxy did not open 127.0.0.1:$PPORT within ${READY}s" >&2
    exit 1
fi
echo "proxy $(basename "$(dirname "$STACK")")/$(basename "$STACK")${VARIANT:+ ($VARIANT)} pid $PROXY_PID on 127.0.0.1:$PPORT, WORKERS=$WORKERS"

# --- 1. bodies through the proxy equal the direct ones ---------------------------------------
check_bodies() {
    local size
    for size in $SIZES; do
        curl -sS --max-time 10 -o "$PREFIX/out/direct" "http://127.0.0.1:$NPORT/bytes/$size"
        if curl -sS --max-time 10 -o "$PREFIX/out/proxied" "http://127.0.0.1:$PPORT/bytes/$size" \
            && cmp -s "$PREFIX/out/direct" "$PREFIX/out/proxied" \
            && cmp -s "$PREFIX/out/direct" "$PREFIX/html/bytes/$size"; then
            ok "$1 body $size bytes identical to direct nginx"
        else
            fail "$1 body $size bytes differs from direct nginx"
        fi
    done
    # keep-alive: curl reuses one connection for several URLs
    if curl -sS -v --max-time 10 -o /dev/null -o /dev/null -o /dev/null \
        "http://127.0.0.1:$PPORT/bytes/1" "http://127.0.0.1:$PPORT/bytes/10240" \
        "http://127.0.0.1:$PPORT/bytes/1048576" 2>&1 | grep -q 'Re-using existing connection'; then
        ok "$1 keep-alive: three requests on one connection"
    else
        fail "$1 keep-alive through the proxy"
    fi
}
check_bodies "before:"
sleep 0.5
FD_BASE=$(fd_count)

# --- 2. clients that misbehave, then many concurrent clients ---------------------------------
python3 - "$PPORT" "$PREFIX/html/bytes" <<'PY' || FAILED=1
import os, socket, struct, sys, time
port, files = int(sys.argv[1]), sys.argv[2]
body = {s: open(os.path.join(files, str(s)), "rb").read() for s in (10240, 1048576)}
def req(size, close=False):
    extra = b"Connection: close\r\n" if close else b""
    return b"GET /bytes/%d HTTP/1.1\r\nHost: x\r\n%s\r\n" % (size, extra)
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
def read_response(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("EOF in headers")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:"))
    while len(rest) < length:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise EOFError("EOF in body")
        rest += chunk
    return head, rest[:length]
failed = False
def report(ok, what):
    global failed
    print(("ok:   " if ok else "FAIL: ") + what, flush=True)
    failed |= not ok

# a) read a little of the 1 MiB body, then close (half of them with RST via SO_LINGER 0)
socks = []
for i in range(100):
    s = conn(); s.sendall(req(1048576)); socks.append(s)
for i, s in enumerate(socks):
    s.recv(1000 + 37 * i)
    if i % 2:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
# b) request sent, nothing read, closed at once (RST while the upstream is still sending)
for i in range(50):
    s = conn(); s.sendall(req(1048576)); time.sleep(0.002)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); s.close()
# c) half a request, then close; d) connect and close at once
for i in range(30):
    s = conn(); s.sendall(b"GET /bytes/10240 HTT"); s.close()
for i in range(30):
    conn().close()
report(True, "mid-response and early disconnects: 210 clients sent")

# e) half-close: request, then shutdown(SHUT_WR); the whole response must still arrive
try:
    s = conn(); s.sendall(req(1048576, close=True)); s.shutdown(socket.SHUT_WR)
    _, got = read_response(s); s.close()
    report(got == body[1048576], "half-closed client still gets the whole 1 MiB body")
except Exception as e:
    report(False, f"half-closed client: {e!r}")

# f) many concurrent connections, each with 3 keep-alive requests
try:
    t = time.time()
    socks = [conn() for _ in range(1000)]
    good = 0
    for round_ in range(3):
        for s in socks:
            s.sendall(req(10240))
        for s in socks:
            _, got = read_response(s)
            good += got == body[10240]
    for s in socks:
        s.close()
    report(good == 3000, f"1000 concurrent connections x 3 requests: {good}/3000 bodies right ({time.time()-t:.1f}s)")
except Exception as e:
    report(False, f"1000 concurrent connections: {e!r}")
sys.exit(1 if failed else 0)
PY

if kill -0 "$PROXY_PID" 2>/dev/null; then ok "proxy still running"; else fail "proxy died"; cat "$PREFIX/proxy.log"; exit 1; fi
check_bodies "after:"

# --- 3. no descriptor leak: back to the baseline once the clients are gone -------------------
FD_NOW=$(fd_count)
for _ in $(seq 100); do [ "$FD_NOW" -le $((FD_BASE + 4)) ] && break; sleep 0.1; FD_NOW=$(fd_count); done
if [ "$FD_NOW" -le $((FD_BASE + 4)) ]; then ok "open sockets: $FD_BASE before, $FD_NOW after"
else fail "socket leak: $FD_BASE open before, $FD_NOW after 10 s"; fi

# --- 4. a short wrk run shows no errors ------------------------------------------------------
if [ "$WRK_SECONDS" != 0 ] && command -v wrk >/dev/null; then
    WRK_OUT=$(wrk -t2 -c64 -d"${WRK_SECONDS}s" "http://127.0.0.1:$PPORT/bytes/10240" 2>&1) || true
    echo "$WRK_OUT" | sed 's/^/      /'
    if echo "$WRK_OUT" | grep -qE 'Socket errors|Non-2xx'; then fail "wrk reported errors"
    elif echo "$WRK_OUT" | grep -q 'Requests/sec'; then ok "wrk -c 64 -d ${WRK_SECONDS}s: no errors"
    else fail "wrk did not run"; fi
    kill -0 "$PROXY_PID" 2>/dev/null || fail "proxy died under wrk"
fi

if grep -qiE 'panic|exception|segfault|traceback|leak' "$PREFIX/proxy.log"; then
    echo "proxy log:"; sed 's/^/      /' "$PREFIX/proxy.log" | tail -20
fi
[ "$FAILED" = 0 ] && echo "PASS" || echo "FAILED"
exit "$FAILED"
