"""bench/coverage-real.sh's arithmetic: one run's paired intervals as CSV rows (its claims and its
A/A twin), and the summary of the rows: per pair, the coverage of the reference ratio and, for a
planted slowdown, how often it is found, each rate with its Clopper-Pearson 95% bounds."""
import csv
import json
import math
import os
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


def pair_minutes(rows_csv, repeat):
    """Minutes two cells of one repeat's design take: its A/A twin's two arms (the planted run)."""
    path = os.path.join(os.path.dirname(rows_csv), f"repeat-planted-{repeat}.json")
    try:
        return json.load(open(path))["noise"]["floor"]["paired"]["minutes"]
    except (OSError, KeyError, TypeError):
        return None


def merit(rows_csv, reps):
    """The median P (95% half-width in % x √ the minutes both cells took) of `reps`."""
    ps = []
    for r in reps:
        minutes = pair_minutes(rows_csv, r["repeat"])
        if minutes:
            ps.append(100 * math.log(float(r["high"]) / float(r["low"])) / 2 * math.sqrt(minutes))
    return sorted(ps)[len(ps) // 2] if ps else None


def slices_of(rows_csv, kind, repeat, pair):
    """Which slices carried `pair`'s ratio in one run (joint or solo), read from its ranking where
    the pair is ranked (a cell against the scenario's best); None where it is not."""
    path = os.path.join(os.path.dirname(rows_csv), f"{kind}-pairs-{repeat}.json")
    try:
        report = json.load(open(path))
    except OSError:
        return None
    first, second = pair.split(" vs ")
    for rows in report["relative"].values():
        best = next((r["stack"] for r in rows if r["fastest"]), None)
        for r in rows:
            if r.get("paired") and {r["stack"], best} == {first, second}:
                return r["paired"]["slices"]
    return None


def by_source(rows_csv, pair, reps, refs):
    """Coverage split by the slices that carried the ratio, each against the references that
    rested on the same slices: whether joint and solo ratios are one quantity."""
    out = []
    for source in ("joint", "solo"):
        same = [r for r in refs if slices_of(rows_csv, "reference", r["repeat"], pair) == source]
        mine = [r for r in reps if slices_of(rows_csv, "repeat", r["repeat"], pair) == source]
        if not mine:
            continue
        if not same:
            out.append(f"{len(mine)} repeats on {source} slices (no reference on them)")
            continue
        truth, _ = pooled(same)
        held = sum(float(r["low"]) <= truth <= float(r["high"]) for r in mine)
        out.append(f"{held} of {len(mine)} repeats on {source} slices hold the {source} reference {truth:.4f}")
    return "; ".join(out)


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
        p = merit(rows_csv, reps)
        if p is not None:
            line += f", median P {p:.1f} (minutes: the A/A arms' of the same repeat, the same design)"
        if ref_half:
            line += f" (reference/repeat width {ref_half / median_half:.2f})"
            split = by_source(rows_csv, pair, reps, refs)
            if split:
                line += f"; by slices: {split}"
        if unmeasured:
            line += f"; {unmeasured} repeats gave no interval"
        print(line)
    print("an honest 95% interval holds the truth in at least 27 of 30 repeats 94% of the time")


if __name__ == "__main__":
    if sys.argv[1] == "rows":
        rows(*sys.argv[2:])
    else:
        summary(sys.argv[2])
