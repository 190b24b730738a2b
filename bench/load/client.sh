# Sourced by the load generator's benches: what every one of them sets up before it measures.
#
#   bench_needs CMD:PACKAGE...   # installs the Debian packages of the commands that are missing
#   pick_cpus                    # SCPU (the server's) and CCPU (the client's): 0 and 1, or both 0
#   load_binary ROOT             # LOAD: $LOAD_BIN if given, else bakeoff-load built (release)

bench_needs() {
  local need=() pair cmd pkg
  for pair in "$@"; do
    cmd=${pair%%:*} pkg=${pair#*:}
    command -v "$cmd" >/dev/null || [ -x "/usr/sbin/$cmd" ] || [ -x "$cmd" ] || need+=("$pkg")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
}

pick_cpus() {
  if [ "$(nproc)" -lt 2 ]; then
    echo "warning: one CPU; server and client will share it" >&2
    SCPU=0; CCPU=0
  else
    SCPU=0; CCPU=1
  fi
}

load_binary() {
  local root=$1
  if [ -n "${LOAD_BIN:-}" ]; then
    LOAD="$LOAD_BIN"
  else
    echo "building bakeoff-load (release)..." >&2
    (cd "$root" && cargo build --release -q -j 2 -p bakeoff --bin bakeoff-load)
    LOAD="${CARGO_TARGET_DIR:-$root/target}/release/bakeoff-load"
  fi
}
