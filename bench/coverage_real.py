"""bench/coverage-real.sh's arithmetic: one run's paired ratio as a CSV row, and the summary of the
rows (coverage of the reference ratio per pair, with Clopper-Pearson 95% bounds)."""
import csv
import json
import sys

from calibration_summary import binomial_interval


def row(report, kind, repeat, pair, scenario, wall_s):
    """The ratio second / first of `pair` in the report's ranking of `scenario`."""
    first, second = pair.split(",")
    rel = {r["stack"]: r for r in json.load(open(report))["relative"].get(scenario, [])}
    a, b = rel.get(first), rel.get(second)
    if a is None or b is None:
        print(f"{kind},{repeat},{pair.replace(',', ' vs ')},,,,,,unranked,{wall_s}")
        return
    # Each row is a speed against the scenario's best: the other is the best (ratio 1).
    if a["fastest"]:
        ratio, low, high, p = b["ratio"], b["low"], b["high"], b["paired"]
    else:
        ratio, low, high, p = 1 / a["ratio"], 1 / a["high"], 1 / a["low"], a["paired"]
    p = p or {"blocks": "", "launches": "", "slices": "unpaired"}
    print(f"{kind},{repeat},{pair.replace(',', ' vs ')},{ratio:.6f},{low:.6f},{high:.6f},{p['blocks']},{p['launches']},{p['slices']},{wall_s}")


def summary(rows_csv):
    rows = list(csv.DictReader(open(rows_csv)))
    for pair in dict.fromkeys(r["pair"] for r in rows):
        ref = [r for r in rows if r["pair"] == pair and r["kind"] == "reference" and r["ratio"]]
        reps = [r for r in rows if r["pair"] == pair and r["kind"] == "repeat" and r["ratio"]]
        if not ref or not reps:
            print(f"{pair}: no reference or no ranked repeat")
            continue
        truth = float(ref[0]["ratio"])
        covered = sum(float(r["low"]) <= truth <= float(r["high"]) for r in reps)
        lo, hi = binomial_interval(covered, len(reps))
        widths = sorted((float(r["high"]) - float(r["low"])) / 2 / float(r["ratio"]) for r in reps)
        ref_width = (float(ref[0]["high"]) - float(ref[0]["low"])) / 2 / truth
        walls = sorted(int(r["wall_s"]) for r in reps)
        print(
            f"{pair}: reference {truth:.4f} ({float(ref[0]['low']):.4f}-{float(ref[0]['high']):.4f}, ±{100 * ref_width:.1f}%, "
            f"{ref[0]['blocks']} blocks in {ref[0]['launches']} launches, {ref[0]['slices']}); "
            f"{covered} of {len(reps)} repeat intervals hold it ({100 * covered / len(reps):.0f}%, Clopper-Pearson 95% "
            f"{100 * lo:.0f}%-{100 * hi:.0f}%); median repeat ±{100 * widths[len(widths) // 2]:.1f}% "
            f"(reference/repeat width {ref_width / widths[len(widths) // 2]:.2f}); median run {walls[len(walls) // 2]} s; "
            f"slices: {', '.join(sorted(set(r['slices'] for r in reps)))}"
        )
    print("an honest 95% interval holds the truth in at least 27 of 30 repeats 94% of the time")


if __name__ == "__main__":
    if sys.argv[1] == "row":
        row(*sys.argv[2:])
    else:
        summary(sys.argv[2])
