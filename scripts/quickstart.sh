#!/usr/bin/env bash
# The main job: builds bakeoff, sets up the default study's stacks and runs the default study
# (studies/quick.toml: hello, json and products for Rust, Go and Python; a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Cargo is silent while it compiles one large crate (a minute or more on 2 cores), so a line
# every 10 s says the build still runs (on a terminal it first clears cargo's progress bar).
cargo build --release --locked -p bakeoff -j 2 &
build=$! started=$SECONDS clear=""
[ -t 2 ] && clear=$'\r\033[K'
while kill -0 "$build" 2>/dev/null; do
  for _ in $(seq 20); do
    sleep 0.5
    kill -0 "$build" 2>/dev/null || break 2
  done
  printf '%sbuilding bakeoff: %d s\n' "$clear" $((SECONDS - started)) >&2
done
wait "$build"
exec ./target/release/bakeoff run "$@"
