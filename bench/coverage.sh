#!/usr/bin/env bash
# The simulated coverage of the paired intervals the report prints, over the simulator's grid
# (designs, launch and block parts, joint slices, slow episodes, a server that cannot use its
# share), with Clopper-Pearson bounds; written to bench/results/coverage-<date>/coverage.txt.
# Usage: bench/coverage.sh [repeats per setting, default 2000] [seed, default 1]
set -euo pipefail
cd "$(dirname "$0")/.."
out="bench/results/coverage-$(date -u +%Y%m%d)"
mkdir -p "$out"
cargo run --release --locked -q -p bakeoff-model --example coverage -- "${1:-2000}" "${2:-1}" | tee "$out/coverage.txt"
