#!/usr/bin/env bash
# The whole test suite: installs what the tests need, checks formatting and lints, then runs every
# crate's unit and integration tests (which start real servers on loopback and stop them), then verifies every stack.
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
phase "building bakeoff"
cargo build --release --locked -p bakeoff -j 2
# Every stack is built (cached) and must pass its contracts; BAKEOFF_VERIFY_STACKS=0 skips this.
if [[ "${BAKEOFF_VERIFY_STACKS:-1}" == 1 ]]; then
  phase "setting up every stack"
  "$CARGO_TARGET_DIR/release/bakeoff" setup --all
  phase "verifying every stack"
  "$CARGO_TARGET_DIR/release/bakeoff" verify all --db "$(mktemp -d)/verify.db"
  # The shop on its own database, on every stack that declares it (SQLite and PostgreSQL).
  "$CARGO_TARGET_DIR/release/bakeoff" verify --scenario scenarios/shop.toml --db "$(mktemp -d)/verify.db"
fi
phase "building the tests"
cargo test --release --locked --workspace --no-run -j 2
phase "running the tests"
cargo test --release --locked --workspace -j 2 -- --test-threads=1
phase "done"
