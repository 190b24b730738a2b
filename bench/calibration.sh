#!/usr/bin/env bash
# Do bakeoff's intervals mean what they say? Runs the same small study PAIRS times in two copies of
# a stack that differ in one thing: in copy A its variant `x` is the same server as `ref`, in copy B
# `x` spins 5% more CPU per request (the burn fixture, BURN_US set from a first measurement of its
# cost). Each run has `ref`, `x` and an A/A twin of `ref`, on the block schedule at the default
# study's settings (6 blocks of 3 s, 1 s warm-up, 64 connections, one worker), no precision target.
# Runs alternate A, B, A, B; it then prints:
#   - A/A: of every run's paired twin interval (ref against its twin), how many exclude 1.0
#     (95% intervals: at most 5% should), and of copy A's claim "ref is faster than x", how many
#     hold (a false finding: x is ref there);
#   - the planted slowdown: in copy B, how often the claim "ref is faster than x" holds, and how
#     often `bakeoff compare` of each A run with the next B run calls x slower (absolute, and
#     against its peer measured in the same blocks), and ref changed (a false finding).
#
#   bench/calibration.sh                 # 10 pairs of runs (20 A/A intervals), about 30 min
#   PAIRS=20 SLOWDOWN=5 bench/calibration.sh
#   BAKEOFF=/path/bakeoff bench/calibration.sh   # skip the cargo build
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
PAIRS=${PAIRS:-10}
SLOWDOWN=${SLOWDOWN:-5}
OUT="$ROOT/bench/results/calibration-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
if [ -z "${BAKEOFF:-}" ]; then
  cargo build --release --locked -p bakeoff --manifest-path "$ROOT/Cargo.toml" >&2
  BAKEOFF="${CARGO_TARGET_DIR:-$ROOT/target}/release/bakeoff"
fi
DB="$OUT/runs.db"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# A project folder holding only the burn fixture as stack fixture/burn, x burning $1 µs a request.
make_root() {
  local dir=$1 burn=$2
  mkdir -p "$dir/stacks/fixture" "$dir/services"
  cp -r "$ROOT/tests/fixtures/burn-stack" "$dir/stacks/fixture/burn"
  sed -i '/^\[\[variants\]\]/,$d' "$dir/stacks/fixture/burn/stack.toml"
  printf '[[variants]]\nname = "ref"\nenv  = { BURN_US = "0" }\n\n[[variants]]\nname = "x"\nenv  = { BURN_US = "%s" }\n' \
    "$burn" >> "$dir/stacks/fixture/burn/stack.toml"
}

# The run id a `bakeoff run` printed.
run_id() { sed -n 's/^results: .* (run \(.*\))$/\1/p' "$1"; }

measure() {
  local root=$1 name=$2 id
  "$BAKEOFF" run --root "$root" --study "$WORK/calibration.toml" --db "$DB" > "$OUT/$name.txt" 2> "$OUT/$name.log" || true
  id=$(run_id "$OUT/$name.txt")
  [ -n "$id" ] || { echo "$name stored no run; see $OUT/$name.log" >&2; exit 1; }
  "$BAKEOFF" report "$id" --db "$DB" --format json > "$OUT/$name.json"
  echo "$id"
}

cat > "$WORK/calibration.toml" <<'EOF'
name = "calibration"
description = "the burn fixture's ref and x on hello, with an A/A twin of ref"
stacks = ["fixture/burn"]
scenarios = ["hello"]
variants = ["ref", "x"]
workers = [1]
trials = 6
duration = "3s"
warmup = "1s"
connections = 64
schedule = "blocks"
aa = "fixture/burn[ref] hello"

[[claims]]
statement = "ref serves hello faster than x"
check = { kind = "faster", faster = { stack = "fixture/burn", variant = "ref" }, slower = { stack = "fixture/burn", variant = "x" }, scenario = "hello" }
EOF

# The fixture's own cost per request sets the burn: SLOWDOWN% of it, at least 1 µs.
make_root "$WORK/probe" 0
"$BAKEOFF" run --root "$WORK/probe" --stacks fixture/burn --variants ref --scenarios hello --workers 1 --trials 2 \
  --duration 3s --warmup 1s -c 64 --no-ceiling --db "$DB" > "$OUT/probe.txt" 2> "$OUT/probe.log"
"$BAKEOFF" report "$(run_id "$OUT/probe.txt")" --db "$DB" --format json > "$OUT/probe.json"
BURN=$(python3 -c '
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
cost = sorted(c["metrics"]["cpu_us_per_request"]["median"] for c in cells)[0]
print(max(1, round(cost * float(sys.argv[2]) / 100)), f"{cost:.1f}")' "$OUT/probe.json" "$SLOWDOWN")
read -r BURN_US BASE_US <<< "$BURN"
make_root "$WORK/a" 0
make_root "$WORK/b" "$BURN_US"

provenance calibration "$ROOT" > "$OUT/summary.txt"
echo "# fixture/burn hello: ref costs $BASE_US µs of server CPU per request; x burns $BURN_US µs more in copy B ($SLOWDOWN%)" >> "$OUT/summary.txt"
echo "# $PAIRS pairs of runs (A then B), 6 blocks of 3 s per run, 64 connections, block schedule" >> "$OUT/summary.txt"

: > "$OUT/pairs.tsv"
for i in $(seq 1 "$PAIRS"); do
  a=$(measure "$WORK/a" "a-$i")
  b=$(measure "$WORK/b" "b-$i")
  "$BAKEOFF" compare "$a" "$b" --db "$DB" --format json > "$OUT/compare-$i.json"
  printf '%s\t%s\t%s\n' "$OUT/a-$i.json" "$OUT/b-$i.json" "$OUT/compare-$i.json" >> "$OUT/pairs.tsv"
done

python3 "$ROOT/bench/calibration_summary.py" "$OUT/pairs.tsv" "$SLOWDOWN" | tee -a "$OUT/summary.txt"
