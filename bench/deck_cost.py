#!/usr/bin/env python3
"""Summarises bench/deck-cost.sh's rounds: per config, the median of the paired ratios deck/plain
of client CPU per request and of requests/s, with sign-test intervals (bench/load/compare.py's),
judged against the 1.05x target for CPU per request.

Input: files (or stdin) of lines `config round plan rps requests cpu_s kinds`, plan `plain` or
`deck`; lines starting with # are notes.
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "load"))
from compare import median, median_interval, verdict  # noqa: E402

TARGET = 1.05


def main():
    runs = defaultdict(dict)  # (config, round) -> plan -> (rps, requests, cpu_s)
    order = []
    for path in sys.argv[1:] or ["-"]:
        for line in sys.stdin if path == "-" else open(path):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            config, rnd, plan = parts[0], int(parts[1]), parts[2]
            if config not in order:
                order.append(config)
            runs[(config, rnd)][plan] = tuple(map(float, parts[3:6]))
    print(f"{'config':<13} {'plain req/s':>11} {'deck req/s':>10} {'CPU/req deck/plain (95% CI)':>30} "
          f"{'vs 1.05x':>12}   {'req/s deck/plain (95% CI)':>28}")
    n = 0
    for config in order:
        pairs = [v for (c, _), v in sorted(runs.items()) if c == config and len(v) == 2]
        n = max(n, len(pairs))
        per_req = lambda r: r[2] / max(r[1], 1.0)
        cpu = [per_req(p["deck"]) / per_req(p["plain"]) for p in pairs]
        rps = [p["deck"][0] / p["plain"][0] for p in pairs]
        cl, ch, _ = median_interval(cpu)
        rl, rh, _ = median_interval(rps)
        us = median([per_req(p["plain"]) for p in pairs]) * 1e6
        print(f"{config:<13} {median([p['plain'][0] for p in pairs]):>11.0f} {median([p['deck'][0] for p in pairs]):>10.0f} "
              f"{median(cpu):>13.3f}x ({cl:.3f}-{ch:.3f}) {verdict(cl, ch, False, TARGET):>12}   "
              f"{median(rps):>11.3f}x ({rl:.3f}-{rh:.3f})   plain {us:.2f} us CPU/req")
    _, _, cov = median_interval(list(range(n)))
    print(f"ratios: median of {n} paired rounds (deck/plain); interval: sign test on the rounds, "
          f"{cov * 100:.1f}% coverage; 'met' when the CPU/req interval lies at or below {TARGET}x")


if __name__ == "__main__":
    main()
