#!/usr/bin/env bash
# Do bakeoff's intervals mean what they say? Runs the same small study PAIRS times in two copies of
# one stack that differ in one thing: rust/actix copied as rust/burn, whose hello handler spins
# BURN_NS nanoseconds of CPU first. Its variant `ref` burns nothing; its variant `x` burns nothing in
# copy A and SLOWDOWN% of ref's measured CPU per request in copy B. Each run has ref, x and an A/A
# twin of ref, on the block schedule (SCHEDULE) at the default study's settings (TRIALS blocks of DURATION
# slices, default 10 of 1 s as studies/quick.toml, 1 s warm-up, 64 connections, one worker), no
# precision target. Runs alternate A, B, A, B; it then prints:
#   - A/A: of every run's paired twin interval (ref against its twin), how many exclude 1.0
#     (95% intervals: at most 5% should), and of copy A's claim "ref is faster than x", how many
#     hold (a false finding: x is ref there);
#   - the planted slowdown: in copy B, how often the claim "ref is faster than x" holds, and how
#     often `bakeoff compare` of each A run with the next B run calls x slower (absolute, and
#     against its peer measured in the same blocks), and ref changed (a false finding).
# The copy builds in a build cache of its own (BAKEOFF_CACHE), removed at the end.
#
#   bench/calibration.sh                 # 10 pairs of runs (20 A/A intervals), about 35 min
#   PAIRS=20 SLOWDOWN=5 bench/calibration.sh
#   SCHEDULE=at-once bench/calibration.sh   # the cells loaded together in each block
#   BAKEOFF=/path/bakeoff bench/calibration.sh   # skip the cargo build
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
PAIRS=${PAIRS:-10}
SLOWDOWN=${SLOWDOWN:-5}
TRIALS=${TRIALS:-8}
DURATION=${DURATION:-1s}
SCHEDULE=${SCHEDULE:-blocks}
# Every hello spins this much first, so the server, not the load generator, is the bottleneck (on a
# fast machine rust/actix's bare hello runs at the client's ceiling, whose cells are not ranked on
# requests/s and whose claims are not judged).
BASE_NS=${BASE_NS:-6000}
OUT="$ROOT/bench/results/calibration-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
DB="$OUT/runs.db"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export BAKEOFF_CACHE="$WORK/cache"

# A project folder holding only rust/actix as rust/burn, its hello spinning BURN_NS first: ref
# burns BASE_NS, x $2 ns more.
make_root() {
  local dir=$1 burn=$(( BASE_NS + $2 )) stack
  stack="$dir/stacks/rust/burn"
  mkdir -p "$dir/stacks/rust" "$dir/services"
  cp -r "$ROOT/stacks/rust/actix" "$stack"
  rm -rf "$stack/target"
  python3 - "$stack" "$burn" "$BASE_NS" <<'PY'
import pathlib, re, sys
stack, burn, base = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
main = stack / "src/main.rs"
src = main.read_text()
hello = 'async fn hello() -> HttpResponse {\n    text("Hello World!")'
assert hello in src, "rust/actix's hello handler moved: update bench/calibration.sh"
src = src.replace(hello, 'async fn hello() -> HttpResponse {\n    burn();\n    text("Hello World!")')
src += """
/// Spins BURN_NS nanoseconds of CPU per hello request: bench/calibration.sh's planted slowdown.
fn burn() {
    static NS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let ns = *NS.get_or_init(|| std::env::var("BURN_NS").ok().and_then(|v| v.parse().ok()).unwrap_or(0));
    if ns > 0 {
        let end = std::time::Instant::now() + std::time::Duration::from_nanos(ns);
        while std::time::Instant::now() < end {
            std::hint::spin_loop();
        }
    }
}
"""
main.write_text(src)
manifest = stack / "stack.toml"
text = manifest.read_text().split("[[variants]]")[0]
text = re.sub(r'(?m)^seed\s*=.*\n', '', text)
text += f"""[[variants]]
name     = "ref"
database = "sqlite"
env      = {{ BURN_NS = "{base}" }}

[[variants]]
name     = "x"
database = "sqlite"
env      = {{ BURN_NS = "{burn}" }}
"""
manifest.write_text(text)
PY
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

cat > "$WORK/calibration.toml" <<EOF
name = "calibration"
description = "rust/burn (rust/actix with a planted burn) ref and x on hello, with an A/A twin of ref"
stacks = ["rust/burn"]
scenarios = ["hello"]
variants = ["ref", "x"]
workers = [1]
trials = $TRIALS
duration = "$DURATION"
warmup = "1s"
connections = 64
schedule = "$SCHEDULE"
aa = "rust/burn[ref] hello"

[[claims]]
statement = "ref serves hello faster than x"
check = { kind = "faster", faster = { stack = "rust/burn", variant = "ref" }, slower = { stack = "rust/burn", variant = "x" }, scenario = "hello" }
EOF

# ref's own cost per request sets the burn: SLOWDOWN% of it.
make_root "$WORK/probe" 0
"$BAKEOFF" setup --root "$WORK/probe" rust/burn > "$OUT/setup.log" 2>&1
"$BAKEOFF" run --root "$WORK/probe" --stacks rust/burn --variants ref --scenarios hello --workers 1 --trials 2 \
  --duration 3s --warmup 1s -c 64 --no-ceiling --db "$DB" > "$OUT/probe.txt" 2> "$OUT/probe.log"
"$BAKEOFF" report "$(run_id "$OUT/probe.txt")" --db "$DB" --format json > "$OUT/probe.json"
BURN=$(python3 -c '
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
cost = sorted(c["metrics"]["cpu_us_per_request"]["median"] for c in cells)[0]
print(max(1, round(cost * 1000 * float(sys.argv[2]) / 100)), f"{cost:.2f}")' "$OUT/probe.json" "$SLOWDOWN")
read -r BURN_NS BASE_US <<< "$BURN"
make_root "$WORK/a" 0
make_root "$WORK/b" "$BURN_NS"
# The copies' sources are the probe's, so its setup (stamp and binary) serves them.
cp -r "$WORK/probe/.bakeoff-cache" "$WORK/a/"
cp -r "$WORK/probe/.bakeoff-cache" "$WORK/b/"

provenance calibration "$ROOT" > "$OUT/summary.txt"
echo "# rust/burn (rust/actix) hello: ref costs $BASE_US µs of server CPU per request (a spin of $BASE_NS ns in every hello included); x spins $BURN_NS ns more in copy B ($SLOWDOWN%)" >> "$OUT/summary.txt"
echo "# $PAIRS pairs of runs (A then B), $TRIALS blocks of $DURATION per run, 64 connections, schedule $SCHEDULE" >> "$OUT/summary.txt"

: > "$OUT/pairs.tsv"
for i in $(seq 1 "$PAIRS"); do
  a=$(measure "$WORK/a" "a-$i")
  b=$(measure "$WORK/b" "b-$i")
  "$BAKEOFF" compare "$a" "$b" --db "$DB" --format json > "$OUT/compare-$i.json"
  printf '%s\t%s\t%s\n' "$OUT/a-$i.json" "$OUT/b-$i.json" "$OUT/compare-$i.json" >> "$OUT/pairs.tsv"
done

python3 "$ROOT/bench/calibration_summary.py" "$OUT/pairs.tsv" "$SLOWDOWN" | tee -a "$OUT/summary.txt"
