"""bench/coverage-real.sh's arithmetic: one run's paired intervals as CSV rows (its claims and its
A/A twin), and the summary of the rows: per pair, the coverage of the reference ratio and, for a
planted slowdown, how often it is found, each rate with its Clopper-Pearson 95% bounds."""
import csv
import json
import math
import sys

from calibration_summary import binomial_interval

AA = "A/A twin"


def rows(report, kind, repeat, wall_s):
    """One row per claim (its paired interval and own verdict) and one for the A/A twin."""
    r = json.load(open(report))
    for c in r.get("claims", []):
        m = c.get("measured")
        if m is None:
            print(f"{kind},{repeat},{c['claim']['statement']},,,,{c['verdict']},,,,{wall_s}")
            continue
        print(f"{kind},{repeat},{c['claim']['statement']},{m['value']:.6f},{m['low']:.6f},{m['high']:.6f},{c['verdict']},,,,{wall_s}")
    floor = (r.get("noise") or {}).get("floor") or {}
    p = floor.get("paired")
    if p:
        print(f"{kind},{repeat},{AA},{p['ratio']:.6f},{p['low']:.6f},{p['high']:.6f},,{p.get('blocks', '')},{p.get('launches', '')},,{wall_s}")


def pooled(refs):
    """The references pooled: the mean of their log ratios, and its 95% half-width from theirs."""
    logs = [math.log(float(r["ratio"])) for r in refs]
    ses = [(math.log(float(r["high"])) - math.log(float(r["low"]))) / 2 / 1.96 for r in refs]
    mean = sum(logs) / len(logs)
    se = math.sqrt(sum(s * s for s in ses)) / len(ses)
    return math.exp(mean), 1.96 * se


def rate(label, k, n):
    lo, hi = binomial_interval(k, n)
    return f"{label} {k} of {n} ({100 * k / n:.0f}%, Clopper-Pearson 95% {100 * lo:.0f}-{100 * hi:.0f}%)"


def summary(rows_csv):
    all_rows = list(csv.DictReader(open(rows_csv)))
    walls = sorted({(r["repeat"], int(r["wall_s"])) for r in all_rows if r["kind"] == "repeat"})
    if walls:
        print(f"repeats' median run {sorted(w for _, w in walls)[len(walls) // 2]} s")
    for pair in dict.fromkeys(r["pair"] for r in all_rows):
        of = [r for r in all_rows if r["pair"] == pair and r["ratio"]]
        reps = [r for r in of if r["kind"] == "repeat"]
        refs = [r for r in of if r["kind"] == "reference"]
        unmeasured = sum(1 for r in all_rows if r["pair"] == pair and r["kind"] == "repeat" and not r["ratio"])
        if not reps:
            print(f"{pair}: no repeat measured it")
            continue
        if pair.startswith("planted"):
            found = sum(r["verdict"] == "held" for r in reps)
            ratios = sorted(float(r["ratio"]) for r in reps)
            halves = sorted(math.log(float(r["high"]) / float(r["low"])) / 2 for r in reps)
            print(f"{pair}: " + rate("found (the claim held)", found, len(reps) + unmeasured)
                  + f"; median measured advantage {ratios[len(ratios) // 2]:.4f}, median half-width ±{100 * halves[len(halves) // 2]:.1f}%")
            continue
        if pair == AA:
            truth, ref_half, source = 1.0, 0.0, "truth 1 (the same server)"
        elif refs:
            truth, ref_half = pooled(refs)
            source = (f"truth {truth:.4f} ±{100 * ref_half:.2f}% from {len(refs)} reference runs "
                      f"({', '.join(r['ratio'][:6] for r in refs)})")
        else:
            print(f"{pair}: no reference run")
            continue
        covered = sum(float(r["low"]) <= truth <= float(r["high"]) for r in reps)
        halves = sorted(math.log(float(r["high"]) / float(r["low"])) / 2 for r in reps)
        median_half = halves[len(halves) // 2]
        line = f"{pair}: {source}; " + rate("intervals holding it", covered, len(reps))
        line += f"; median repeat ±{100 * median_half:.1f}%"
        if ref_half:
            line += f" (reference/repeat width {ref_half / median_half:.2f})"
        if unmeasured:
            line += f"; {unmeasured} repeats gave no interval"
        print(line)
    print("an honest 95% interval holds the truth in at least 27 of 30 repeats 94% of the time")


if __name__ == "__main__":
    if sys.argv[1] == "rows":
        rows(*sys.argv[2:])
    else:
        summary(sys.argv[2])
