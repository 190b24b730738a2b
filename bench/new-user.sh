#!/usr/bin/env bash
# The first fifteen minutes as a new user lives them: clones this repository into a temporary
# folder and runs ./scripts/quickstart.sh there, once on a pseudo-terminal (`script`) and once
# through a pipe, each in a clone of its own. Every line of output is timestamped
# (bench/new_user_lines.py); per mode it prints the total time, when the run printed its first line
# and its first progress line, and the longest gap between two lines (the promise: under 15 s on a
# terminal, under 60 s off one). A pseudo-terminal's redrawn status line counts as a line.
#
# Machine-wide caches are not cleared (Debian packages, ~/.cache/bakeoff's build caches, Cargo's
# and Go's downloads): a first run on a truly fresh machine also downloads those. FRESH=1 points
# every build and download cache at empty folders of its own (bakeoff's, Cargo's registry, Go's
# modules and builds, pip's, npm's, ccache's, Nuitka's), so only Debian packages and the Rust
# toolchain stay installed: what a fresh machine adds beyond that is `apt-get install` (printed
# from /var/log/apt/history.log when it ran).
#
#   bench/new-user.sh                        # both modes, the default study (~2 x 12 min)
#   MODES=pipe bench/new-user.sh             # one mode: pty or pipe
#   ARGS="--budget 2m" bench/new-user.sh     # flags handed to quickstart (so to `bakeoff run`)
#   FRESH=1 MODES=pty bench/new-user.sh      # every build and download cache empty
#
# bench/results/new-user-<stamp>/: summary.txt (kept in git) and each mode's timestamped log.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"
MODES=${MODES:-pty pipe}
ARGS=${ARGS:-}
OUT="$ROOT/bench/results/new-user-$(date -u +%Y%m%dT%H%M%SZ)"
WORK=$(mktemp -d /tmp/bakeoff-new-user.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
command -v script >/dev/null || { echo "error: script (util-linux) is not installed: apt-get install bsdutils" >&2; exit 1; }
# The clone builds into its own ./target, as a new user's does; a CARGO_TARGET_DIR of the caller
# would put the binary where quickstart does not look.
unset CARGO_TARGET_DIR
FRESH=${FRESH:-0}
if [ "$FRESH" = 1 ]; then
  # Empty caches of its own; the toolchains stay (rustup's proxies find them in RUSTUP_HOME).
  export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" PATH="$HOME/.cargo/bin:$PATH"
  export BAKEOFF_CACHE="$WORK/cache/bakeoff" CARGO_HOME="$WORK/cache/cargo" GOMODCACHE="$WORK/cache/gomod" \
    GOCACHE="$WORK/cache/go-build" PIP_CACHE_DIR="$WORK/cache/pip" npm_config_cache="$WORK/cache/npm" \
    CCACHE_DIR="$WORK/cache/ccache" XDG_CACHE_HOME="$WORK/cache/xdg" NUITKA_CACHE_DIR="$WORK/cache/nuitka"
fi

provenance new-user "$ROOT" | tee "$OUT/summary.txt"
echo "modes: $MODES; quickstart flags: ${ARGS:-none}; fresh caches: $([ "$FRESH" = 1 ] && echo yes || echo no)" | tee -a "$OUT/summary.txt"
branch=$(git -C "$ROOT" rev-parse --abbrev-ref HEAD)
for mode in $MODES; do
  clone="$WORK/$mode/bakeoff"
  git clone -q --no-local --branch "$branch" "$ROOT" "$clone"
  cmd="cd '$clone' && ./scripts/quickstart.sh $ARGS"
  set +e
  case $mode in
    # -e: script's exit status is the command's; -f: its output is flushed as it comes.
    pty) script -qfec "$cmd" /dev/null < /dev/null | python3 -u "$ROOT/bench/new_user_lines.py" "$OUT/$mode.log" > "$OUT/$mode.txt" ;;
    pipe) bash -c "$cmd" < /dev/null 2>&1 | python3 -u "$ROOT/bench/new_user_lines.py" "$OUT/$mode.log" > "$OUT/$mode.txt" ;;
    *) echo "error: unknown mode $mode (pty or pipe)" >&2; exit 2 ;;
  esac
  status=${PIPESTATUS[0]}
  set -e
  { echo; echo "== $mode (exit status $status)"; cat "$OUT/$mode.txt"; } | tee -a "$OUT/summary.txt"
done
