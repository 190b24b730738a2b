# Sourced by the load generator's benches: nginx from bench/load/nginx.conf.in on a free loopback
# port, pinned to one CPU, in a throwaway folder; stopped by its PID, and the folder removed, when
# the script exits.
#
#   start_nginx NAME CPU   # sets TMP (the folder), NGINX_PID, PORT and URL (http://127.0.0.1:PORT/)

start_nginx() {
  local name=$1 cpu=$2 here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
  TMP="$(mktemp -d "/tmp/$name.XXXXXX")"
  mkdir -p "$TMP"/{body,proxy,fastcgi,uwsgi,scgi}
  NGINX_PID=""
  trap stop_nginx EXIT INT TERM
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  sed -e "s#@DIR@#$TMP#g" -e "s#@PORT@#$PORT#g" "$here/nginx.conf.in" >"$TMP/nginx.conf"
  taskset -c "$cpu" "$NGINX" -p "$TMP" -c "$TMP/nginx.conf" -g 'daemon off;' &
  NGINX_PID=$!
  URL="http://127.0.0.1:$PORT/"
  local hello="import sys, urllib.request; sys.exit(b'Hello World!' not in urllib.request.urlopen('$URL').read())"
  for _ in $(seq 50); do
    python3 -c "$hello" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nginx did not come up" >&2
  cat "$TMP/error.log" >&2
  exit 1
}

stop_nginx() {
  if [ -n "${NGINX_PID:-}" ]; then
    kill "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
  fi
  rm -rf "${TMP:-/nonexistent-bench-tmp}"
}
