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
# optimisation without its link-time optimisation); the executables are listed once and run below
# (scripts/tests.py: another cargo command would resolve features anew and build again).
phase "building bakeoff and the tests"
tests="$(mktemp)"
cargo test --profile ci --locked --workspace --no-run -j 2 --message-format=json-render-diagnostics |
  python3 scripts/tests.py list > "$tests"
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
run() { python3 scripts/tests.py run "$tests" "$@"; }
times="$(mktemp)"
serial() { python3 scripts/tests.py serial "$tests" "$times" "$@"; }
# Tests that need nothing but the code run in parallel: the model's (statistics, the intervals'
# simulator, the workload language), the store's, and the report's formats and arithmetic (its
# modules named *_real start servers: they wait below).
phase "running the tests that start nothing (in parallel)"
run bakeoff-model bakeoff_model
run bakeoff-store bakeoff_store
run bakeoff-store store
run bakeoff-report bakeoff_report
run bakeoff-report suite --skip _real::
# Tests that start servers, namespaces or services, one at a time (they time what they start),
# each test's seconds kept for the list of the slowest below. Unit tests of the load generator,
# the lab and the CLI sample CPU, start processes and listen.
phase "running the tests that start servers (one at a time)"
serial bakeoff-load bakeoff_load
serial bakeoff-lab bakeoff_lab
serial bakeoff bakeoff_cli
serial bakeoff bakeoff
serial bakeoff bakeoff-load
serial bakeoff-report suite _real::
serial bakeoff-load suite
serial bakeoff-lab suite
serial bakeoff suite
# Every test executable the build made ran above: a new one must be added here.
python3 scripts/tests.py unrun "$tests"
python3 scripts/tests.py slowest "$times" 10
phase "done"
