"""Summary of bench/open-model-timing.sh: per target rate, medians over rounds of the corrected
latency percentiles, the service time's p50, their difference (the client's own lateness at the
median) and the client's CPU, with the range over rounds of the difference."""
import json
import statistics
import sys
from collections import defaultdict

by_rate = defaultdict(list)
with open(sys.argv[1]) as f:
    for line in f:
        d = json.loads(line)
        s = d["steps"][0]
        by_rate[d["plan"]["rate"]].append({
            "p50": s["latency"]["p50_us"],
            "p90": s["latency"]["p90_us"],
            "p99": s["latency"]["p99_us"],
            "svc50": s["service_time"]["p50_us"],
            "late50": s["latency"]["p50_us"] - s["service_time"]["p50_us"],
            "cpu": d["client"]["cpu_percent"],
        })

med = lambda rows, k: statistics.median(r[k] for r in rows)
print(f"{'req/s':>8}  {'rounds':>6}  {'p50 µs':>7}  {'p90 µs':>7}  {'p99 µs':>7}  {'service p50':>11}  {'p50 - service p50 (range)':>26}  {'client CPU':>10}")
for rate in sorted(by_rate):
    rows = by_rate[rate]
    lo, hi = min(r["late50"] for r in rows), max(r["late50"] for r in rows)
    print(f"{rate:>8,.0f}  {len(rows):>6}  {med(rows, 'p50'):>7.0f}  {med(rows, 'p90'):>7.0f}  {med(rows, 'p99'):>7.0f}  "
          f"{med(rows, 'svc50'):>11.0f}  {med(rows, 'late50'):>9.0f} ({lo:.0f} to {hi:.0f}){'':>5}  {med(rows, 'cpu'):>9.0f}%")
