"""Summarises bench/calibration.sh: per pair of runs (copy A: x is ref; copy B: x burns more), the
A/A intervals, the claim's verdicts and compare's verdicts, as rates with exact binomial intervals."""
import json
import math
import sys


def binomial_interval(k, n, confidence=0.95):
    """Clopper-Pearson interval of a rate k/n, by bisection on the binomial tails."""
    def cdf(x, p):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(x + 1))

    def solve(f):
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return (lo + hi) / 2

    a = (1 - confidence) / 2
    low = 0.0 if k == 0 else solve(lambda p: cdf(k - 1, p) > 1 - a)
    high = 1.0 if k == n else solve(lambda p: cdf(k, p) > a)
    return low, high


def rate(label, k, n):
    lo, hi = binomial_interval(k, n)
    return f"{label}: {k} of {n} ({100 * k / n:.0f}%, 95% interval {100 * lo:.0f}-{100 * hi:.0f}%)"


def twin_excludes_one(report):
    p = report["noise"]["floor"]["paired"]
    return not (p["low"] <= 1.0 <= p["high"]), p


def claim(report):
    return report["claims"][0]


def x_and_ref(comparison):
    cells = {c["cell"]["variant"]: c for c in comparison["cells"] if not c["cell"].get("twin")}
    return cells["x"], cells["ref"]


def main(pairs_tsv, slowdown):
    rows = [line.rstrip("\n").split("\t") for line in open(pairs_tsv) if line.strip()]
    aa, aa_half, false_claims, held, b_ratios = 0, [], 0, 0, []
    slower_abs, slower_rel, with_rel, ref_changed, slower_cpu, unranked = 0, 0, 0, 0, 0, 0
    slower_verdict, ref_changed_abs = 0, 0
    for a_path, b_path, c_path in rows:
        a, b, c = json.load(open(a_path)), json.load(open(b_path)), json.load(open(c_path))
        for r in (a, b):
            excl, p = twin_excludes_one(r)
            aa += excl
            aa_half.append(100 * (p["high"] - p["low"]) / 2 / p["ratio"])
        false_claims += claim(a)["verdict"] == "held"
        held += claim(b)["verdict"] == "held"
        unranked += claim(b).get("measured") is None
        if claim(b).get("measured"):
            b_ratios.append(claim(b)["measured"]["value"])
        x, ref = x_and_ref(c)
        primary = {"capacity": "requests_per_sec", "efficiency": "cpu_us_per_request"}[c["primary"]]
        own = lambda cell: next((m["verdict"] for m in cell["changes"] if m["metric"] == primary), None)
        slower_verdict += x["verdict"] == "slower"
        slower_abs += own(x) == "slower"
        cpu = [m for m in x["changes"] if m["metric"] == "cpu_us_per_request"]
        slower_cpu += bool(cpu) and cpu[0]["verdict"] == "slower"
        if x.get("relative"):
            with_rel += 1
            slower_rel += x["relative"]["verdict"] == "slower"
        ref_changed += ref["verdict"] != "no_detectable_change"
        ref_changed_abs += own(ref) not in (None, "no_detectable_change")
    n = len(rows)
    aa_half.sort()
    print(rate("A/A twin intervals (95%) that exclude 1.0", aa, 2 * n) + f"; median half-width ±{aa_half[len(aa_half) // 2]:.1f}%")
    print(rate("copy A (x is ref): claim 'ref faster than x' held (a false finding)", false_claims, n))
    print(rate(f"copy B (x +{slowdown}% CPU): claim 'ref faster than x' held", held, n)
          + (f"; measured advantage median {sorted(b_ratios)[len(b_ratios) // 2]:.3f}" if b_ratios else "")
          + (f"; {unranked} of {n} not judged (a cell not ranked, e.g. client-bound)" if unranked else ""))
    print(rate("compare A -> B: x slower (its verdict: own medians held by its paired peer; for two at-once runs, its ratios to most peers)", slower_verdict, n))
    print(rate("compare A -> B: x slower (absolute, the run's ranking metric)", slower_abs, n))
    print(rate("compare A -> B: x slower on CPU µs/request (absolute)", slower_cpu, n))
    print(rate("compare A -> B: x slower against its peer, paired", slower_rel, with_rel)
          if with_rel else "compare A -> B: no paired peer in any pair")
    print(rate("compare A -> B: ref changed (its verdict; a false finding)", ref_changed, n))
    print(rate("compare A -> B: ref changed, absolute (a false finding)", ref_changed_abs, n))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
