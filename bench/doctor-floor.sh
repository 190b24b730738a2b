#!/usr/bin/env bash
# Does `bakeoff doctor` foretell what a run will resolve? Times `bakeoff doctor` (the promise:
# under 45 s), then runs the default study's A/A cell as the study measures it (rust/actix hello
# and its twin, 6 blocks of 2 s in 3 launches, the study's CPUs) and compares what the doctor
# said the default study would reach (its line "expect(ed) ... about ±X% with N trials") with the
# A/A half-width the run measured (the promise: within a factor of 2), and the two figures of
# merit P = half-width × √minutes. ROUNDS pairs (default 3) alternate the two, each doctor fresh.
#
#   bench/doctor-floor.sh              # needs rust/actix set up (bakeoff setup rust/actix)
#   ROUNDS=5 bench/doctor-floor.sh
#
# bench/results/doctor-floor-<stamp>/summary.txt (kept in git) and each round's outputs.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"
ROUNDS=${ROUNDS:-3}
OUT="$ROOT/bench/results/doctor-floor-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
BAKEOFF="${BAKEOFF:-$ROOT/target/release/bakeoff}"
[ -x "$BAKEOFF" ] || (cd "$ROOT" && cargo build --release --locked -p bakeoff -q)
cd "$ROOT"
provenance doctor-floor "$ROOT" | tee "$OUT/summary.txt"
echo "# $ROUNDS rounds: bakeoff doctor, then rust/actix hello with its A/A twin (6 blocks of 2 s)" | tee -a "$OUT/summary.txt"
for r in $(seq "$ROUNDS"); do
  # A fresh doctor each round: a run reuses a floor measured within six hours.
  rm -f .bakeoff-cache/noise-floor.json
  start=$(date +%s.%N)
  "$BAKEOFF" doctor > "$OUT/doctor-$r.txt" 2>&1
  doctor_s=$(python3 -c "print($(date +%s.%N) - $start)")
  db="$OUT/run-$r.db"
  "$BAKEOFF" run --db "$db" --stacks rust/actix --scenarios hello --variants sqlite --workers 1 \
    --trials 6 -d 2s --warmup 1s -c 64 --aa "rust/actix hello" --quiet > "$OUT/run-$r.txt" 2>&1
  "$BAKEOFF" report --db "$db" -f json > "$OUT/run-$r.json"
  python3 - "$OUT/doctor-$r.txt" "$OUT/run-$r.json" "$doctor_s" "$r" <<'PY' | tee -a "$OUT/summary.txt"
import json, re, sys
doctor, report, seconds, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4]
m = re.search(r"resolves about ±([0-9.]+)% per minute", doctor)
p_doctor = float(m.group(1)) if m else float("nan")
m = re.search(r"about ±([0-9.]+)% with ([0-9]+) trials", doctor)
said, said_trials = (float(m.group(1)), int(m.group(2))) if m else (float("nan"), 0)
paired = ((report.get("noise") or {}).get("floor") or {}).get("paired") or {}
nan = float("nan")
got = 100 * (paired.get("high", nan) - paired.get("low", nan)) / 2 / paired.get("ratio", nan)
ratio = max(said, got) / min(said, got) if said > 0 and got > 0 else nan
print(f"round {r}: doctor took {seconds:.0f} s and said ±{said:.1f}% with {said_trials} trials; the run's A/A "
      f"{paired.get('ratio', nan):.3f} ({paired.get('low', nan):.3f}-{paired.get('high', nan):.3f}) is ±{got:.1f}% over "
      f"{paired.get('blocks', 0)} blocks in {paired.get('launches', 0)} launches; larger/smaller {ratio:.2f} (promise: <= 2); "
      f"P doctor {p_doctor:.2f}, P run {paired.get('merit', nan):.2f}")
PY
done
