#!/usr/bin/env bash
# Does `bakeoff doctor` foretell what a run will resolve? Times `bakeoff doctor` (the promise:
# under 45 s), then runs the default study's A/A cell as the study measures it (rust/actix hello
# and its twin, 6 blocks of 2 s, the study's CPUs) and compares the two figures of merit,
# P = the paired A/A half-width × √minutes: the doctor's projection and the run's own (the
# promise: within a factor of 2). ROUNDS pairs (default 2) alternate the two, each doctor fresh.
#
#   bench/doctor-floor.sh              # needs rust/actix set up (bakeoff setup rust/actix)
#   ROUNDS=3 bench/doctor-floor.sh
#
# bench/results/doctor-floor-<stamp>/summary.txt (kept in git) and each round's outputs.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/provenance.sh"
ROUNDS=${ROUNDS:-2}
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
paired = ((report.get("noise") or {}).get("floor") or {}).get("paired") or {}
p_run = paired.get("merit", float("nan"))
ratio = max(p_doctor, p_run) / min(p_doctor, p_run) if p_doctor > 0 and p_run > 0 else float("nan")
print(f"round {r}: doctor took {seconds:.0f} s; P doctor {p_doctor:.2f}, P run {p_run:.2f} "
      f"(A/A {paired.get('ratio', float('nan')):.3f}, {paired.get('low', float('nan')):.3f}-{paired.get('high', float('nan')):.3f}, "
      f"{paired.get('minutes', float('nan')):.2f} min); larger/smaller {ratio:.2f} (promise: <= 2)")
PY
done
