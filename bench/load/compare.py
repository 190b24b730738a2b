#!/usr/bin/env python3
"""Summarises bench/load-vs-wrk.sh's (and load-vs-h2load.sh's) raw rounds: paired ratios with
distribution-free intervals.

Input (stdin, or files whose rounds are pooled): one line per run, whitespace-separated (lines starting with # are notes):
    config round client rps requests cpu_seconds max_rss_kb
where client is `load` or the peer (`wrk`, `h2load`), and config may contain no spaces.

Why paired ratios: on a small virtual machine nginx's cost per packet swings by 20-30% from one
run to the next (both clients see the same swing), so a ratio of two medians can land anywhere in
that range. A round runs both clients back to back; the ratio within a round cancels slow drift,
and the median of those ratios with a sign-test interval says whether a difference is larger
than the noise.
"""
import math
import sys
from collections import defaultdict


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def median_interval(xs, level=0.95):
    """Sign-test (order statistics) interval for the median: no assumption about the shape.

    Returns (low, high, coverage); (nan, nan, 0) when there are too few rounds for any
    interval at that level (fewer than 6)."""
    s = sorted(xs)
    n = len(s)
    best = None
    for k in range(0, n // 2):
        # P(Binomial(n, 1/2) <= k): the chance the k+1-th smallest lies above the median.
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
        coverage = 1 - 2 * tail
        if coverage >= level:
            best = (s[k], s[n - 1 - k], coverage)
    return best or (math.nan, math.nan, 0.0)


def verdict(low, high, target_high_is_good, target):
    """met / not met / within noise for a ratio target."""
    if math.isnan(low):
        return "too few rounds"
    if target_high_is_good:
        if low >= target:
            return "met"
        if high < target:
            return "not met"
    else:
        if high <= target:
            return "met"
        if low > target:
            return "not met"
    return "within noise"


def load_rows(lines):
    runs = defaultdict(dict)  # (config, round) -> client -> (rps, reqs, cpu, rss)
    order = []
    for line in lines:
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        config, rnd, client = parts[0], int(parts[1]), parts[2]
        rps, reqs, cpu, rss = map(float, parts[3:7])
        if config not in order:
            order.append(config)
        runs[(config, rnd)][client] = (rps, reqs, cpu, rss)
    return order, runs


def summarise(order, runs):
    peer = next((c for v in runs.values() for c in v if c != "load"), "wrk")
    print(f"{'config':<13} {peer + ' req/s':>10} {'load req/s':>10} {'req/s ratio (95% CI)':>24} "
          f"{'verdict':>12}   {'CPU/req ratio (95% CI)':>24} {'verdict':>12}")
    for config in order:
        pairs = [v for (c, _), v in sorted(runs.items()) if c == config and peer in v and "load" in v]
        if not pairs:
            continue
        rps_ratio = [p["load"][0] / p[peer][0] for p in pairs]
        cpu_per_req = lambda r: r[2] / max(r[1], 1.0)
        cpu_ratio = [cpu_per_req(p["load"]) / cpu_per_req(p[peer]) for p in pairs]
        wrk_rps = median([p[peer][0] for p in pairs])
        load_rps = median([p["load"][0] for p in pairs])
        rl, rh, _ = median_interval(rps_ratio)
        cl, ch, _ = median_interval(cpu_ratio)
        print(f"{config:<13} {wrk_rps:>10.0f} {load_rps:>10.0f} "
              f"{median(rps_ratio):>7.2f}x ({rl:.2f}-{rh:.2f}){'':>5} {verdict(rl, rh, True, 1.0):>12}   "
              f"{median(cpu_ratio):>7.2f}x ({cl:.2f}-{ch:.2f}){'':>5} {verdict(cl, ch, False, 1.0):>12}")
    n = max((sum(1 for (c, _), v in runs.items() if c == config and len(v) == 2) for config in order), default=0)
    _, _, cov = median_interval(list(range(n)))
    print(f"ratios: median of {n} paired rounds (load/{peer}); interval: sign test on the rounds, "
          f"{cov * 100:.1f}% coverage; verdict against 1.0x (req/s >= 1.0x, CPU/req <= 1.0x): "
          "'within noise' means the interval contains 1.0")


def main():
    # Several files pool their rounds (renumbered per file), e.g. two runs of the same commit.
    lines = []
    for k, path in enumerate(sys.argv[1:] or ["-"]):
        src = sys.stdin if path == "-" else open(path)
        for line in src:
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                parts[1] = str(k * 100_000 + int(parts[1]))
            lines.append(" ".join(parts))
    order, runs = load_rows(lines)
    summarise(order, runs)


if __name__ == "__main__":
    main()
