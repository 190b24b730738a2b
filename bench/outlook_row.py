#!/usr/bin/env python3
"""One row of bench/outlook.sh's rows.csv from a run's output and its JSON report: the outlook's
half-width (the outlook line's, what the budget's trials are expected to reach), what it projected
from, the widest paired half-width the run reached over its ranked ratios, and their ratio.

    outlook_row.py RUN.txt RUN.err RUN.json ROUND WALL_SECONDS
"""
import json
import re
import sys

text = open(sys.argv[1]).read() + open(sys.argv[2]).read()
report = json.load(open(sys.argv[3]))
r, wall = sys.argv[4], sys.argv[5]
# The outlook line (what the budget's trials reach, "projected from ..."); else the widest
# "expect ... about ±X%" the run printed.
projected = re.findall(r"about ±([0-9.]+)%[^\n]*?projected\s+from", text)
outlook = [float(x) for x in projected] or [float(x) for x in re.findall(r"expect(?:ed)?[^\n]*?about ±([0-9.]+)%", text)]
source = re.search(r"projected from ([^(\n]+)", text)
widest, reached = "", 0.0
for scenario, rows in report["relative"].items():
    for row in rows:
        if row.get("paired") and row["ratio"] > 0:
            half = (row["high"] - row["low"]) / 2 / row["ratio"] * 100
            if half > reached:
                reached, widest = half, f"{row['stack']} {scenario}"
o = max(outlook) if outlook else float("nan")
frm = source.group(1).strip().replace(",", ";") if source else "n/a"
print(f"{r},{report['run']['id']},{frm},{o:.2f},{reached:.2f},{reached / o:.3f},{widest},{wall}")
