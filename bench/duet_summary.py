"""bench/duet.sh's figures: per arm (loaded at once, loaded one after the other) the spread of the
log ratio a/b over rounds, the ratio (geometric mean) with its 95% t interval, the half-width's
P = half-width (%) x sqrt(minutes measured); for the duet arm also the spread of its per-second log ratios; and the
quotient of the two arms' P."""
import json
import math
import statistics
import sys

# Student's t at 97.5% for 1..30 degrees of freedom (two-sided 95%).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def step(path):
    with open(path) as f:
        return json.load(f)["steps"][0]


def arm(out, name, rounds):
    """The log ratios a/b of an arm's rounds, and (a, b) per-second request counts."""
    logs, seconds = [], []
    for r in range(1, rounds + 1):
        a, b = step(f"{out}/{name}-a-{r}.json"), step(f"{out}/{name}-b-{r}.json")
        if a["requests_per_sec"] > 0 and b["requests_per_sec"] > 0:
            logs.append(math.log(a["requests_per_sec"] / b["requests_per_sec"]))
        seconds += [(x["requests"], y["requests"]) for x, y in zip(a["timeline"], b["timeline"])]
    return logs, seconds


def main():
    out, rounds, per_round = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    minutes = rounds * per_round / 60
    p = {}
    for name, label in (("duet", "loaded at once"), ("adjacent", "one after the other")):
        logs, seconds = arm(out, name, rounds)
        if len(logs) < 2:
            print(f"{label}: fewer than two rounds measured")
            continue
        sd = statistics.stdev(logs)
        half = T975[min(len(logs) - 1, 30) - 1] * sd / math.sqrt(len(logs))
        p[name] = 100 * half * math.sqrt(minutes)
        mean = statistics.mean(logs)
        ratio = f"a/b {math.exp(mean):.4f} ({math.exp(mean - half):.4f}-{math.exp(mean + half):.4f})"
        line = f"{label}: {ratio}, log ratio sd {100 * sd:.2f}% over {len(logs)} rounds, +-{100 * half:.2f}% from {minutes:.1f} min, P {p[name]:.2f}"
        per_second = [math.log(x / y) for x, y in seconds if x > 0 and y > 0]
        if name == "duet" and len(per_second) > 1:
            line += f"; per second sd {100 * statistics.stdev(per_second):.2f}%"
        print(line)
    if len(p) == 2 and p["duet"] > 0:
        print(f"P one after the other / P at once: {p['adjacent'] / p['duet']:.1f}x")


if __name__ == "__main__":
    main()
