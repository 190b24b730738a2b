#!/usr/bin/env bash
# Does `bakeoff bench --cmd base=… --cmd head=…` tell a small slowdown from noise in one run? Two
# copies of one server side by side (the CLI tests' Python hello server, each request spinning
# BASE_US microseconds of CPU first, so the server and not the load generator sets the pace):
#   - A/A: both spin BASE_US: any "slower" or "faster" on CPU per request or requests/s is a false
#     call (95% intervals: at most 5% of runs should make one per metric);
#   - A/B: head spins PLANT_US more, a planted slowdown whose size the A/A runs' CPU per request
#     states: how often the run calls head slower on CPU per request, and how often the gate
#     `--fail-if-slower cpu=1%` exits 3.
# Runs alternate A/A, A/B, RUNS times each; prints the rates with their Clopper-Pearson 95% bounds
# and the median seconds a run took. Per-run rows in rows.csv beside summary.txt.
#
#   bench/ab-detect.sh                    # 10 of each, about 20 min
#   RUNS=30 PLANT_US=20 bench/ab-detect.sh
#   BAKEOFF=/path/bakeoff bench/ab-detect.sh   # skip the cargo build
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
RUNS=${RUNS:-10}
BASE_US=${BASE_US:-1000}
PLANT_US=${PLANT_US:-25}
TRIALS=${TRIALS:-6}
DURATION=${DURATION:-2s}
OUT="$ROOT/bench/results/ab-detect-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
bench_binary "$ROOT"
FIXTURES="$ROOT/crates/cli/tests/fixtures"
ROWS="$OUT/rows.csv"
echo "kind,run,seconds,exit,cpu_ratio,cpu_low,cpu_high,cpu_verdict,rps_ratio,rps_low,rps_high,rps_verdict,base_cpu_us" > "$ROWS"

one() {
  local kind=$1 head_us=$2 start code
  start=$(date +%s.%N)
  set +e
  (cd "$FIXTURES" && BAKEOFF_ROOT="$ROOT" "$BAKEOFF" bench --db "$OUT/runs.db" --no-ceiling --workers 1 --quiet \
    --cmd "base=SPIN_US=$BASE_US exec python3 hello_server.py" --cmd "head=SPIN_US=$head_us exec python3 hello_server.py" \
    --trials "$TRIALS" -d "$DURATION" --warmup 1s -c 4 --fail-if-slower cpu=1%) > "$OUT/$kind-last.log" 2>&1
  code=$?
  set -e
  local seconds
  seconds=$(python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.0f}')" "$start")
  "$BAKEOFF" report --db "$OUT/runs.db" -f json | python3 -c '
import json, sys
kind, seconds, code = sys.argv[1:4]
r = json.load(sys.stdin)
ab = (r.get("side_by_side") or [None])[0]
def metric(name):
    c = next((c for c in (ab or {}).get("changes", []) if c["metric"] == name), None)
    if c is None:
        return ["", "", "", "none"]
    f = lambda v: "" if v is None else f"{v:.4f}"
    return [f(c["ratio"]), f(c["low"]), f(c["high"]), c["verdict"]]
base = next((c for c in r["cells"] if c["stack"] == "adhoc/base"), None)
base_cpu = "%.1f" % base["metrics"]["cpu_us_per_request"]["median"] if base else ""
print(",".join([kind, r["run"]["id"], seconds, code] + metric("cpu_us_per_request") + metric("requests_per_sec") + [base_cpu]))
' "$kind" "$seconds" "$code" >> "$ROWS"
  tail -n 1 "$ROWS" >&2
}

for i in $(seq 1 "$RUNS"); do
  one aa "$BASE_US"
  one ab "$((BASE_US + PLANT_US))"
done

{
  provenance ab-detect "$ROOT"
  echo "# $RUNS A/A and $RUNS A/B runs alternating; base spins $BASE_US µs a request, head $PLANT_US µs more in A/B;" \
    "$TRIALS blocks of $DURATION, 1 s warm-up, 4 connections, one worker"
  python3 - "$ROWS" "$ROOT/bench" <<'EOF'
import csv, statistics, sys
sys.path.insert(0, sys.argv[2])
from calibration_summary import rate
rows = list(csv.DictReader(open(sys.argv[1])))
aa = [r for r in rows if r["kind"] == "aa"]
ab = [r for r in rows if r["kind"] == "ab"]
base = [float(r["base_cpu_us"]) for r in aa if r["base_cpu_us"]]
print(f"base CPU per request over the A/A runs: median {statistics.median(base):.0f} µs" if base else "no base CPU measured")
moved = lambda r, m: r[f"{m}_verdict"] in ("slower", "faster")
print(rate("A/A called slower or faster on CPU per request", sum(moved(r, "cpu") for r in aa), len(aa)))
print(rate("A/A called slower or faster on requests/s", sum(moved(r, "rps") for r in aa), len(aa)))
print(rate("A/A failing the 1% CPU gate (exit 3)", sum(r["exit"] == "3" for r in aa), len(aa)))
ratios = [float(r["cpu_ratio"]) for r in ab if r["cpu_ratio"]]
if ratios:
    print(f"A/B CPU per request, head / base: median {statistics.median(ratios):.4f} (the planted slowdown as measured)")
print(rate("A/B called slower on CPU per request", sum(r["cpu_verdict"] == "slower" for r in ab), len(ab)))
print(rate("A/B called slower on requests/s", sum(r["rps_verdict"] == "slower" for r in ab), len(ab)))
print(rate("A/B failing the 1% CPU gate (exit 3)", sum(r["exit"] == "3" for r in ab), len(ab)))
secs = [float(r["seconds"]) for r in rows]
print(f"seconds a run took (setup, verification, measuring, report): median {statistics.median(secs):.0f}, max {max(secs):.0f}")
EOF
} | tee "$OUT/summary.txt"
