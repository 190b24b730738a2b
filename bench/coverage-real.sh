#!/usr/bin/env bash
# Do the printed paired intervals hold on this machine, for a server against its twin, for pairs of
# *different* servers, and do they find a planted slowdown? Every repeat is two runs at the default
# study's design (6 blocks of 1 s slices, 1 s warm-up, 64 connections, one worker, launches as the
# allocation chooses, no precision goal), alternating:
#   - "planted", on hello: rust/burn, a copy of rust/actix whose hello spins BURN_NS first (BASE_NS
#     in every variant, so the server and not the client is the bottleneck); variant `sqlite` spins
#     only that, `x3` and `x5` 3% and 5% of its measured CPU per request more; and an A/A twin of
#     `sqlite` (the study's `aa`). Its claims carry the planted pairs' intervals;
#   - "pairs", on json, in this tree: rust/actix, go/fasthttp, go/nethttp, python/werkzeug-uwsgi, with
#     claims carrying the intervals of actix vs fasthttp and nethttp vs Python.
# The truth of a heterogeneous pair is the pooled ratio of REF_RUNS long runs of "pairs" (REF_TRIALS
# blocks each, about 20 minutes in all), spread evenly among the repeats; of the A/A twin, 1. Rows
# go to rows.csv (kept in git); the summary prints, per pair, how many repeat intervals hold the
# truth and how often a planted slowdown is found, each with its Clopper-Pearson 95% bounds.
#
#   bench/coverage-real.sh                       # 30 repeats and 2 references, about 2 hours
#   REPEATS=2 REF_RUNS=1 REF_TRIALS=6 bench/coverage-real.sh   # a smoke run
#   BAKEOFF=/path/bakeoff bench/coverage-real.sh # skip the cargo build
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
REPEATS=${REPEATS:-30}
REF_RUNS=${REF_RUNS:-2}
REF_TRIALS=${REF_TRIALS:-40}
TRIALS=${TRIALS:-6}
OUT="$ROOT/bench/results/coverage-real-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PROJECT="$WORK/project"
PAIRS_STACKS="rust/actix go/fasthttp go/nethttp python/werkzeug-uwsgi"
# Every hello spins this much first, so the server, not the load generator, is the bottleneck.
BASE_NS=${BASE_NS:-6000}

# A project folder holding only rust/actix as rust/burn, its hello spinning BURN_NS first: BASE_NS
# in every variant, $1 and $2 ns more in x3 and x5.
make_project() {
  local x3=$1 x5=$2 stack="$PROJECT/stacks/rust/burn"
  mkdir -p "$PROJECT/stacks/rust" "$PROJECT/services"
  rm -rf "$stack"
  cp -r "$ROOT/stacks/rust/actix" "$stack"
  rm -rf "$stack/target"
  python3 - "$stack" "$BASE_NS" "$x3" "$x5" <<'PY'
import pathlib, re, sys
stack, base, x3, x5 = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
main = stack / "src/main.rs"
src = main.read_text()
head = "async fn hello() -> HttpResponse {\n"
assert head in src, "rust/actix's hello handler moved: update bench/coverage-real.sh"
src = src.replace(head, head + "    burn();\n")
src += """
/// Spins BURN_NS nanoseconds of CPU per hello request: bench/coverage-real.sh's planted slowdown.
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
for name, ns in (("sqlite", base), ("x3", base + x3), ("x5", base + x5)):
    text += f'[[variants]]\nname     = "{name}"\ndatabase = "sqlite"\nenv      = {{ BURN_NS = "{ns}" }}\n\n'
manifest.write_text(text)
PY
}

# The study `$1` (planted or pairs) of `$2` blocks: the repeats' design, or a reference's.
study() {
  local file="$WORK/$1-$2.toml"
  cat > "$file" <<EOF
name = "coverage-real-$1"
description = "bench/coverage-real.sh's $1 pairs"
workers = [1]
trials = $2
duration = "1s"
warmup = "1s"
connections = 64
rank_by = "capacity"
EOF
  if [ "$1" = planted ]; then
    cat >> "$file" <<EOF
stacks = ["rust/burn"]
scenarios = ["hello"]
variants = ["sqlite", "x3", "x5"]
aa = "rust/burn[sqlite] hello"

[[claims]]
statement = "planted 3%"
check = { kind = "faster", faster = { stack = "rust/burn", variant = "sqlite" }, slower = { stack = "rust/burn", variant = "x3" }, scenario = "hello" }

[[claims]]
statement = "planted 5%"
check = { kind = "faster", faster = { stack = "rust/burn", variant = "sqlite" }, slower = { stack = "rust/burn", variant = "x5" }, scenario = "hello" }
EOF
  else
    cat >> "$file" <<EOF
stacks = [$(printf '"%s", ' $PAIRS_STACKS | sed 's/, $//')]
scenarios = ["json"]
variants = ["sqlite"]

[[claims]]
statement = "rust/actix vs go/fasthttp"
check = { kind = "faster", faster = "rust/actix", slower = "go/fasthttp", scenario = "json" }

[[claims]]
statement = "go/nethttp vs python/werkzeug-uwsgi"
check = { kind = "faster", faster = "go/nethttp", slower = "python/werkzeug-uwsgi", scenario = "json" }
EOF
  fi
  echo "$file"
}

# One run of study `$1` (planted: in the copy; pairs: in this tree): its rows appended to rows.csv.
one() {
  local which=$1 kind=$2 repeat=$3 trials=$4 root name started
  root=$ROOT
  [ "$which" = planted ] && root=$PROJECT
  name="$kind-$which-$repeat"
  started=$(date +%s)
  "$BAKEOFF" run --root "$root" --study "$(study "$which" "$trials")" --db "$OUT/$name.db" > "$OUT/$name.txt" 2> "$OUT/$name.log" || true
  "$BAKEOFF" report --db "$OUT/$name.db" --format json > "$OUT/$name.json"
  python3 "$ROOT/bench/coverage_real.py" rows "$OUT/$name.json" "$kind" "$repeat" $(( $(date +%s) - started )) >> "$OUT/rows.csv"
}

# rust/burn's build starts from rust/actix's compiled dependencies (the lab's machine-wide cache).
TARGETS="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}/cargo-target"
[ -d "$TARGETS/rust-burn" ] || [ ! -d "$TARGETS/rust-actix" ] || cp -r "$TARGETS/rust-actix" "$TARGETS/rust-burn"
# ref's own CPU per hello request (its BASE_NS spin included) sets the plants: 3% and 5% of it.
make_project 0 0
"$BAKEOFF" setup $PAIRS_STACKS > "$OUT/setup.log" 2>&1
"$BAKEOFF" setup --root "$PROJECT" rust/burn >> "$OUT/setup.log" 2>&1
"$BAKEOFF" run --root "$PROJECT" --stacks rust/burn --variants sqlite --scenarios hello --workers 1 --trials 2 \
  --duration 3s --warmup 1s -c 64 --no-ceiling --db "$OUT/probe.db" > "$OUT/probe.txt" 2> "$OUT/probe.log"
"$BAKEOFF" report --db "$OUT/probe.db" --format json > "$OUT/probe.json"
read -r X3 X5 BASE_US <<< "$(python3 -c '
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
cost = sorted(c["metrics"]["cpu_us_per_request"]["median"] for c in cells)[0]
print(round(cost * 30), round(cost * 50), f"{cost:.2f}")' "$OUT/probe.json")"
make_project "$X3" "$X5"
"$BAKEOFF" setup --root "$PROJECT" rust/burn >> "$OUT/setup.log" 2>&1

{
  provenance coverage-real "$ROOT"
  echo "# rust/burn (rust/actix) hello: $BASE_US µs of server CPU per request (a spin of $BASE_NS ns included); x3 spins $X3 ns, x5 $X5 ns more"
  echo "# $REPEATS repeats of $TRIALS blocks of 1 s per study; $REF_RUNS reference runs of the pairs, $REF_TRIALS blocks each, among them"
} > "$OUT/summary.txt"
echo "kind,repeat,pair,ratio,low,high,verdict,blocks,launches,slices,wall_s" > "$OUT/rows.csv"
ref_done=0
for repeat in $(seq 1 "$REPEATS"); do
  one planted repeat "$repeat" "$TRIALS"
  one pairs repeat "$repeat" "$TRIALS"
  tail -n 5 "$OUT/rows.csv"
  # References at evenly spaced points among the repeats, so slow drifts of the machine meet both.
  while [ "$ref_done" -lt "$REF_RUNS" ] && [ $(( repeat * (REF_RUNS + 1) )) -ge $(( (ref_done + 1) * REPEATS )) ]; do
    ref_done=$(( ref_done + 1 ))
    one pairs reference "$ref_done" "$REF_TRIALS"
  done
done
python3 "$ROOT/bench/coverage_real.py" summary "$OUT/rows.csv" | tee -a "$OUT/summary.txt"
