# Sourced by the bench scripts: the bakeoff binary they run, and the lines each run's summary.txt
# opens with, so a figure kept in git says which code and which machine made it.
# bench/results/<bench>-<stamp>/ holds a run; git keeps its summary.txt, and the raw outputs beside
# it (databases, reports, logs, rounds) stay on the machine that made them (.gitignore).

# The header of a summary: the bench, when, the commit (and whether the tree had local changes),
# the machine, and how busy it was before the run.
provenance() {
  local bench=$1 root=$2 commit
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then
    commit="$commit with local changes"
  fi
  echo "# bench/$bench.sh, $(date -u +%FT%TZ), commit $commit"
  echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs," \
    "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r)," \
    "$(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "# load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# Sets BAKEOFF to the binary a bench runs: as given, or this tree's release build, built now.
bench_binary() {
  local root=$1
  if [ -z "${BAKEOFF:-}" ]; then
    cargo build --release --locked -p bakeoff --manifest-path "$root/Cargo.toml" >&2
    BAKEOFF="${CARGO_TARGET_DIR:-$root/target}/release/bakeoff"
  fi
}
