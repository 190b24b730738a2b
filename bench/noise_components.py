"""Summarises bench/noise-components.sh: reads the four runs from the results file and prints each
noise component (coefficient of variation of requests/s) and what it implies for the schedule."""

import json
import math
import sqlite3
import statistics
import sys


def rps(load_json):
    steps = json.loads(load_json)["steps"]
    return steps[-1]["requests_per_sec"]


def cv(values):
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else float("nan")


def allan(series, tau):
    """Allan deviation of a per-second series at averaging time tau seconds, relative to its mean."""
    means = [statistics.mean(series[i:i + tau]) for i in range(0, len(series) - tau + 1, tau)]
    if len(means) < 2:
        return float("nan")
    diffs = [(b - a) ** 2 for a, b in zip(means, means[1:])]
    return math.sqrt(statistics.mean(diffs) / 2) / statistics.mean(series)


def main(db_path, runs_path, window):
    db = sqlite3.connect(db_path)
    runs = {}
    for line in open(runs_path):
        name, run_id, seconds = line.split()
        runs[name] = (run_id, int(seconds))

    def trials(name):
        rows = db.execute("SELECT trial, twin, launch, load_json FROM trials WHERE run_id = ? ORDER BY id", (runs[name][0],))
        return [(t, twin, launch, lj) for t, twin, launch, lj in rows]

    windows = [rps(lj) for _, _, _, lj in trials("windows")]
    launches = [rps(lj) for _, _, _, lj in trials("launches")]
    series_load = json.loads(trials("series")[0][3])["steps"][-1]["timeline"]
    series = [p["requests"] for p in series_load][1:-1]  # whole seconds only
    paired = {}
    for t, twin, _, lj in trials("paired"):
        paired.setdefault(t, {})[twin] = rps(lj)
    logs = [math.log(v[1] / v[0]) for v in paired.values() if 0 in v and 1 in v and v[0] > 0 and v[1] > 0]

    w, l = cv(windows), cv(launches)
    launch_only = math.sqrt(max(0.0, l * l - w * w))
    print(f"windows of one launch ({len(windows)} x {window}): cv {100 * w:.1f}% (mean {statistics.mean(windows):,.0f} req/s)")
    print(f"one window per launch ({len(launches)} launches): cv {100 * l:.1f}%; the launch part alone {100 * launch_only:.1f}%")
    taus = [1, 2, 4, 8]
    print("Allan deviation of the per-second series: " + ", ".join(f"{t} s {100 * allan(series, t):.1f}%" for t in taus))
    sd = statistics.stdev(logs) if len(logs) > 1 else float("nan")
    print(f"two co-resident servers in random-order slices ({len(logs)} blocks): sd of the paired log ratio {100 * sd:.1f}%")
    # Implications: a slice should be at least as long as the averaging time past which the Allan
    # deviation stops falling; launches are worth their cost when their own part is not small.
    devs = {t: allan(series, t) for t in taus}
    floor = min(v for v in devs.values() if not math.isnan(v))
    slice_s = next(t for t in taus if devs[t] <= 1.25 * floor)
    launches_needed = 3 if launch_only > w else 2
    print(f"implies: slices of at least {slice_s} s; {launches_needed} or more launches per run "
          f"(launch part {'above' if launch_only > w else 'within'} the window-to-window part)")
    # The least P = half-width x sqrt(minutes) a schedule of adjacent slices of tau s can reach on
    # this machine: the Allan deviation is, by its definition, the spread of adjacent tau-averages
    # over sqrt(2), so a pair of slices differs by sqrt(2) sigma_A(tau); n pairs take 2 n tau s.
    # Hence P >= 1.96 * 2 * sigma_A(tau) * sqrt(tau / 60), whatever the order or the statistics.
    bounds = {t: 196 * 2 * v * math.sqrt(t / 60) for t, v in devs.items() if not math.isnan(v)}
    best = min(bounds, key=bounds.get)
    print("least P of adjacent slices (1.96 x 2 x Allan x sqrt(slice/60 s)): "
          + ", ".join(f"{t} s {p:.1f}" for t, p in bounds.items()) + f"; best {bounds[best]:.1f} at {best} s slices")
    minutes = runs["paired"][1] / 60
    print(f"paired A/A: +-{100 * 1.96 * sd / math.sqrt(max(1, len(logs))):.1f}% (normal approximation) from {minutes:.1f} min of run time")


if __name__ == "__main__":
    main(*sys.argv[1:4])
