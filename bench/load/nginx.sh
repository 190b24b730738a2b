# Sourced by the load generator's benches: nginx from bench/load/nginx.conf.in on a free loopback
# port, pinned to one CPU, in a throwaway folder; stopped by its PID, and the folder removed, when
# the script exits.
#
#   start_nginx NAME CPU         # sets TMP (the folder), NGINX_PID, PORT and URL (http://127.0.0.1:PORT/)
#   start_nginx NAME CPU tls     # the same over TLS (nginx-tls.conf.in): URL is https://…, and
#                                # TMP/ca.pem the authority that signed its P-256 certificate
#   start_nginx NAME CPU h2      # HTTP/2 over TLS (nginx-h2.conf.in), URL https://…
#   start_nginx NAME CPU h2c     # HTTP/2 in cleartext (nginx-h2c.conf.in), URL http://…
#   start_nginx NAME CPU h1+h2c  # both in one server (nginx-h1+h2c.conf.in): URL HTTP/1.1, URL2 h2c

start_nginx() {
  local name=$1 cpu=$2 mode=${3:-plain} here scheme=http conf=nginx.conf.in
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
  TMP="$(mktemp -d "/tmp/$name.XXXXXX")"
  mkdir -p "$TMP"/{body,proxy,fastcgi,uwsgi,scgi}
  NGINX_PID=""
  trap stop_nginx EXIT INT TERM
  case "$mode" in
    plain) ;;
    tls | h2) scheme=https conf=nginx-$mode.conf.in; make_certificate "$TMP" ;;
    h2c | h1+h2c) conf=nginx-$mode.conf.in ;;
    *) echo "start_nginx: unknown mode $mode" >&2; exit 2 ;;
  esac
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  PORT2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  URL2="http://127.0.0.1:$PORT2/"
  sed -e "s#@DIR@#$TMP#g" -e "s#@PORT@#$PORT#g" -e "s#@PORT2@#$PORT2#g" "$here/$conf" >"$TMP/nginx.conf"
  taskset -c "$cpu" "$NGINX" -p "$TMP" -c "$TMP/nginx.conf" -g 'daemon off;' &
  NGINX_PID=$!
  URL="$scheme://127.0.0.1:$PORT/"
  local hello="import ssl, sys, urllib.request; sys.exit(b'Hello World!' not in urllib.request.urlopen('$URL', context=ssl._create_unverified_context()).read())"
  # An h2c port answers no HTTP/1.1: it is up once it accepts a connection.
  [ "$mode" = h2c ] && hello="import socket; socket.create_connection(('127.0.0.1', $PORT), 1)"
  for _ in $(seq 50); do
    python3 -c "$hello" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nginx did not come up" >&2
  cat "$TMP/error.log" >&2
  exit 1
}

# DIR/ca.pem: a P-256 authority; DIR/server.pem and server-key.pem: its certificate for 127.0.0.1.
make_certificate() {
  local dir=$1
  (
    cd "$dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=bench-ca
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server-key.pem -out server.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server.pem -days 2 -extfile server.ext
  ) >/dev/null 2>&1
}

stop_nginx() {
  if [ -n "${NGINX_PID:-}" ]; then
    kill "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
  fi
  rm -rf "${TMP:-/nonexistent-bench-tmp}"
}
