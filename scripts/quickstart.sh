#!/usr/bin/env bash
# The main job: builds bakeoff, sets up the default study's stacks and runs the default study
# (studies/quick.toml: hello, json and products for Rust, Go and Python; a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release --locked -p bakeoff -j 2
exec ./target/release/bakeoff run "$@"
