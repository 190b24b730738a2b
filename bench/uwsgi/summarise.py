#!/usr/bin/env python3
"""Prints bench/uwsgi-setups.sh's comparison from bakeoff's JSON report: one row per scenario, front
and WORKERS with the median requests/s and server CPU µs per request over the trials and bakeoff's
95% intervals, p99 latency, and the warnings bakeoff raised (e.g. starved connections).

The fair setup is the one that spends the least server CPU per request while serving every
connection (no starved-connections warning): on one server CPU, CPU per request decides req/s."""
import json
import sys

FRONTS = {"front-http11": "--http11-socket", "front-router": "HTTP router", "front-nginx": "nginx + uwsgi"}


def estimate(metrics, name, digits=0):
    e = metrics[name]
    f = "{:,.%df}" % digits
    return "%s (%s–%s)" % (f.format(e["median"]), f.format(e["ci_low"]), f.format(e["ci_high"]))


def rows(doc):
    for cell in doc["cells"]:
        m = cell["metrics"]
        messages = [w["message"] for w in cell["warnings"]]
        starved = [m for m in messages if "got no response" in m]
        noise = [m.split(" used ")[1].split("%")[0] for m in messages if m.startswith("other processes used")]
        yield (
            cell["scenario"],
            FRONTS.get(cell["variant"], cell["variant"]),
            cell["workers"],
            estimate(m, "requests_per_sec"),
            estimate(m, "cpu_us_per_request", 1),
            "%.1f" % (m["p99_us"]["median"] / 1000),
            m["requests_per_sec"]["trials"],
            "; ".join(filter(None, ["starved: " + starved[0].split(":")[0].removeprefix("[main] ") if starved else "",
                                    "background noise up to %s%% CPU" % noise[0] if noise else ""])),
        )


def main():
    doc = json.load(open(sys.argv[1]))
    head = ("scenario", "front", "workers", "req/s median (95% CI)", "server CPU µs/req (95% CI)", "p99 ms", "trials", "note")
    table = [head] + sorted(rows(doc), key=lambda r: (r[0], float(r[4].split()[0].replace(",", ""))))
    widths = [max(len(str(r[i])) for r in table) for i in range(len(head))]
    print("run %s, stack %s" % (doc["run"]["id"], ", ".join(sorted({c["stack"] for c in doc["cells"]}))))
    for r in table:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()
