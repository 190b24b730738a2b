#!/bin/sh
# start.sh: renders haproxy.cfg.template from HOST/PORT/UPSTREAM/WORKERS into RUN_DIR and execs HAProxy in the foreground.
# Extra arguments go to haproxy (setup passes -c to check the rendered config).
set -eu
: "${PORT:?PORT must be set}" "${UPSTREAM:?UPSTREAM must be set}"
WORKERS=${WORKERS:-$(nproc)}
# The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own
# (HAProxy splits an address from its port at the last ':', so an IPv6 one needs no brackets).
HOST=${HOST:-127.0.0.1}
dir=${RUN_DIR:-$(pwd)/run}
mkdir -p "$dir"
sed -e "s#{{HOST}}#$HOST#g" -e "s#{{PORT}}#$PORT#g" -e "s#{{UPSTREAM}}#$UPSTREAM#g" -e "s#{{WORKERS}}#$WORKERS#g" \
    haproxy.cfg.template > "$dir/haproxy.cfg"
exec haproxy -db -f "$dir/haproxy.cfg" "$@"
