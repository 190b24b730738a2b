#!/usr/bin/env bash
# The whole test suite: installs what the tests need, checks formatting, lints and docs, builds
# bakeoff and its tests, verifies every stack, then runs the tests: those that need only the code
# in parallel, those that start real servers on loopback (and stop them) one at a time, and lists
# the slowest ten.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's start, with the minutes so far, so a slow CI run says where its time went.
phase() { printf '== %s (at %dm%02ds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }
phase "installing what the tests need"
bash scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/bakeoff/workspace-target}"  # shared by clones (CI)
phase "formatting and lints"
# Style first: one formatting (rustfmt.toml) and no lint warnings, in every crate and test.
cargo fmt --all --check
cargo clippy --release --locked --workspace --all-targets -j 2 -- -D warnings
# Every public item of every library crate says what it is.
phase "docs"
RUSTDOCFLAGS="-D missing_docs -D rustdoc::broken_intra_doc_links" cargo doc --no-deps --workspace --lib --locked -j 2 -q
# One build for bakeoff and every test, on the `ci` profile (Cargo.toml: the release's
# optimisation without its link-time optimisation).
phase "building bakeoff and the tests"
cargo test --profile ci --locked --workspace --no-run -j 2
BAKEOFF="$CARGO_TARGET_DIR/ci/bakeoff"
# Every stack is built (cached) and must pass its contracts; BAKEOFF_VERIFY_STACKS=0 skips this.
if [[ "${BAKEOFF_VERIFY_STACKS:-1}" == 1 ]]; then
  phase "setting up every stack"
  "$BAKEOFF" setup --all
  phase "verifying every stack"
  "$BAKEOFF" verify all --db "$(mktemp -d)/verify.db"
  # The shop on its own database, on every stack that declares it (SQLite and PostgreSQL).
  "$BAKEOFF" verify --scenario scenarios/shop.toml --db "$(mktemp -d)/verify.db"
fi
test_ci() { cargo test --profile ci --locked -j 2 "$@"; }
# Tests that need nothing but the code run in parallel: the model's (statistics, the intervals'
# simulator, the workload language), the store's, and the report's formats and arithmetic (its
# modules named *_real start servers: they wait below).
phase "running the tests that start nothing (in parallel)"
test_ci -p bakeoff-model -p bakeoff-store -p bakeoff-report --lib --examples
test_ci -p bakeoff-store --test store
test_ci -p bakeoff-report --test suite -- --skip _real::
# Tests that start servers, namespaces or services, one at a time (they time what they start),
# each test's seconds kept for the list of the slowest below.
phase "running the tests that start servers (one at a time)"
times="$(mktemp)"
serial() { test_ci "$@" --test-threads=1 | python3 scripts/test_times.py record "$times"; }
# Unit tests of the load generator, the lab and the CLI sample CPU, start processes and listen.
serial -p bakeoff-load -p bakeoff-lab -p bakeoff --lib --bins --
serial -p bakeoff-report --test suite -- _real::
serial -p bakeoff-load --test suite --
serial -p bakeoff-lab --test suite --
serial -p bakeoff --test suite --
python3 scripts/test_times.py slowest "$times" 10
phase "done"
