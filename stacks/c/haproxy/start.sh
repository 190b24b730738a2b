#!/bin/sh
# start.sh: renders haproxy.cfg.template from PORT/UPSTREAM/WORKERS into RUN_DIR and execs HAProxy in the foreground.
# Extra arguments go to haproxy (setup passes -c to check the rendered config).
set -eu
: "${PORT:?PORT must be set}" "${UPSTREAM:?UPSTREAM must be set}"
WORKERS=${WORKERS:-$(nproc)}
dir=${RUN_DIR:-$(pwd)/run}
mkdir -p "$dir"
sed -e "s#{{PORT}}#$PORT#g" -e "s#{{UPSTREAM}}#$UPSTREAM#g" -e "s#{{WORKERS}}#$WORKERS#g" \
    haproxy.cfg.template > "$dir/haproxy.cfg"
exec haproxy -db -f "$dir/haproxy.cfg" "$@"
