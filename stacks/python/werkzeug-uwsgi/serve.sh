#!/bin/bash
# serve.sh: runs a Werkzeug WSGI app (python/ and pypy/werkzeug-uwsgi) under uWSGI behind the front UWSGI_FRONT names.
# Arguments: uWSGI's options that load the app (interpreter-specific); run from the stack's folder.
# Fronts, each with WORKERS uWSGI processes running the app:
#   nginx   nginx with one worker process speaking the uwsgi protocol to uWSGI over a unix socket
#           (default: the cheapest per request that serves every connection, bench/uwsgi-setups.sh)
#   router  uWSGI's HTTP router (--http, --http-keepalive): one router process owns the connections
#           and hands each request to a free worker over a socket
#   http11  --http11-socket: every worker parses HTTP itself and keeps one connection at a time
set -euo pipefail
: "${PORT:?PORT must be set}" "${WORKERS:?WORKERS must be set}"
dir=${RUN_DIR:-$(pwd)/run}
mkdir -p "$dir"
here=$(dirname "$0")
# HOST: the address to listen on (127.0.0.1 unless the lab places the server on a host of its own);
# an IPv6 address is written in brackets.
host=${HOST:-127.0.0.1}
case "$host" in *:*) host="[$host]" ;; esac
# --die-on-term: SIGTERM stops uWSGI 2.0 (by default it reloads). --listen 1024: the default backlog
# is 100. --disable-logging: no line per request.
common=(--master --processes "$WORKERS" --die-on-term --disable-logging --listen 1024)
case "${UWSGI_FRONT:-nginx}" in
router)
    # --http-keepalive: without it the router closes every connection after one response.
    # The router talks to the workers over a unix socket uWSGI creates on its own.
    exec .venv/bin/uwsgi --http "$host:$PORT" --http-keepalive "${common[@]}" "$@" ;;
http11)
    exec .venv/bin/uwsgi --http11-socket "$host:$PORT" "${common[@]}" "$@" ;;
nginx)
    sock="$dir/uwsgi.sock"
    mkdir -p "$dir/nginx/tmp"
    sed -e "s#{{HOST}}#$host#g" -e "s#{{PORT}}#$PORT#g" -e "s#{{PREFIX}}#$dir/nginx#g" -e "s#{{SOCKET}}#$sock#g" \
        "$here/nginx-uwsgi.conf.template" > "$dir/nginx/nginx.conf"
    # Both servers are children of this shell, in the stack's process group: their CPU is the
    # server's, and the lab's SIGTERM to the group stops both. When one exits, so does the other.
    .venv/bin/uwsgi --socket "$sock" --chmod-socket=600 "${common[@]}" "$@" &
    uwsgi=$!
    nginx -e "$dir/nginx/error.log" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" &
    nginx=$!
    status=0
    wait -n "$uwsgi" "$nginx" || status=$?
    kill "$uwsgi" "$nginx" 2>/dev/null || true
    wait || true
    exit "$status" ;;
*)
    echo "UWSGI_FRONT must be router, nginx or http11, not '$UWSGI_FRONT'" >&2
    exit 2 ;;
esac
