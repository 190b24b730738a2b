#!/usr/bin/env python3
"""Summarises bench/proxy-placement.sh's runs from the results store: per placement (`shared`,
`own-cpu`) and proxy, the overhead over nginx served directly, paired by round (the baseline and
each proxy are measured in the same round, so drift cancels), as a median with its distribution-free
95% interval; the baseline itself per placement; and which placement separates the proxies better
and disturbs the baseline less.

    bench/placement_summary.py RESULTS.db [--json OUT.json] [--markdown]
"""
import json
import math
import sqlite3
import sys
from collections import defaultdict

BASELINE = "c/baseline"
RATE_HELD = 0.95  # as bakeoff_model::summary::RATE_HELD: an open step below this share fell short


def median_ci(xs):
    """Median and the order-statistic 95% interval of the median (distribution-free), with its
    coverage; with fewer than six values the range, whose coverage is lower (as bakeoff's reports)."""
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    med = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    cdf = lambda k: sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    k = 0
    while k + 1 <= n // 2 and cdf(k) <= 0.025:
        k += 1
    # Interval [x_(k), x_(n-k+1)] (1-based) has coverage 1 - 2 P(X <= k-1).
    lo, hi = (xs[k - 1], xs[n - k]) if k >= 1 else (xs[0], xs[-1])
    coverage = 1 - 2 * cdf(k - 1) if k >= 1 else 1 - 2 / 2 ** n
    return {"median": med, "low": lo, "high": hi, "n": n, "coverage": round(coverage, 3)}


def load(db_path):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    runs = {}
    for rid, settings, started, finished in db.execute("select id, settings_json, started_at, finished_at from runs"):
        load_settings = json.loads(settings).get("load", {})
        runs[rid] = {"placement": load_settings.get("proxy_placement", "shared"), "started": started, "finished": finished}
    trials = []
    for rid, stack, variant, trial, load_json in db.execute(
        "select run_id, stack, variant, trial, load_json from trials where scenario = 'proxy' order by id"
    ):
        steps = json.loads(load_json)["steps"]
        open_steps = [s for s in steps if s.get("target_rate")]
        closed = [s for s in steps if not s.get("target_rate")]
        if not open_steps:
            continue
        s = open_steps[0]
        trials.append({
            "run": rid, "placement": runs[rid]["placement"], "stack": stack, "variant": variant, "trial": trial,
            "rate": s["target_rate"], "achieved": s["requests_per_sec"],
            "held": s["requests_per_sec"] >= RATE_HELD * s["target_rate"],
            "p50": s["latency"]["p50_us"], "p99": s["latency"]["p99_us"],
            "max": closed[-1]["requests_per_sec"] if closed else None,
        })
    return runs, trials


def summarise(trials):
    """Per placement: the baseline's own figures and each proxy's overheads, paired by (run, trial)."""
    out = {}
    for placement in sorted({t["placement"] for t in trials}):
        ts = [t for t in trials if t["placement"] == placement]
        base = {(t["run"], t["trial"]): t for t in ts if t["stack"] == BASELINE}
        short = [f'{t["stack"]} [{t["variant"]}] run {t["run"]} trial {t["trial"]}: {t["achieved"]:.0f} of {t["rate"]:.0f} req/s'
                 for t in ts if not t["held"]]
        proxies = defaultdict(lambda: defaultdict(list))
        for t in ts:
            b = base.get((t["run"], t["trial"]))
            if t["stack"] == BASELINE or b is None or not (t["held"] and b["held"]):
                continue
            p = proxies[f'{t["stack"]} [{t["variant"]}]']
            p["p50_overhead_us"].append(t["p50"] - b["p50"])
            p["p99_overhead_us"].append(t["p99"] - b["p99"])
            if t["max"] and b["max"]:
                p["max_percent_of_baseline"].append(100 * t["max"] / b["max"])
        bl = [t for t in ts if t["stack"] == BASELINE]
        out[placement] = {
            "baseline": {
                "p50_us": median_ci([t["p50"] for t in bl if t["held"]]),
                "p99_us": median_ci([t["p99"] for t in bl if t["held"]]),
                "max_rps": median_ci([t["max"] for t in bl if t["max"]]),
            },
            "proxies": {name: {k: median_ci(v) for k, v in m.items()} for name, m in sorted(proxies.items())},
            "fell_short": short,
        }
    return out


def separated_pairs(proxies, metric):
    """Pairs of proxies whose 95% intervals on `metric` do not overlap: the placement ranks them."""
    rows = [(n, m[metric]) for n, m in proxies.items() if m.get(metric)]
    pairs = 0
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            a, b = rows[i][1], rows[j][1]
            pairs += a["high"] < b["low"] or b["high"] < a["low"]
    return pairs, len(rows) * (len(rows) - 1) // 2


def relative_width(e):
    return (e["high"] - e["low"]) / abs(e["median"]) if e and e["median"] else float("nan")


def fmt(e, unit=""):
    if not e:
        return "–"
    return f'{e["median"]:,.0f}{unit} [{e["low"]:,.0f}, {e["high"]:,.0f}] (n={e["n"]}, {100 * e["coverage"]:.0f}%)'


def report(summary, runs):
    lines = []
    for placement, s in summary.items():
        lines.append(f"== placement {placement} ==")
        b = s["baseline"]
        lines.append(f'  baseline (nginx direct): p50 {fmt(b["p50_us"], " µs")}, p99 {fmt(b["p99_us"], " µs")}, max {fmt(b["max_rps"], " req/s")}')
        for name, m in s["proxies"].items():
            lines.append(f"  {name}:")
            lines.append(f'    p50 overhead {fmt(m.get("p50_overhead_us"), " µs")}')
            lines.append(f'    p99 overhead {fmt(m.get("p99_overhead_us"), " µs")}')
            lines.append(f'    max throughput {fmt(m.get("max_percent_of_baseline"), "%")} of the baseline')
        for f in s["fell_short"]:
            lines.append(f"  fell short (left out): {f}")
    lines.append("== which placement ==")
    verdict = {}
    for placement, s in summary.items():
        sep = {m: separated_pairs(s["proxies"], m) for m in ("p50_overhead_us", "p99_overhead_us", "max_percent_of_baseline")}
        widths = [relative_width(m.get("p50_overhead_us")) for m in s["proxies"].values()]
        widths = [w for w in widths if not math.isnan(w)]
        b = s["baseline"]
        verdict[placement] = {
            "separated": sum(p for p, _ in sep.values()),
            "pairs": sum(n for _, n in sep.values()),
            "mean_relative_width_p50_overhead": sum(widths) / len(widths) if widths else float("nan"),
            "baseline_max_rps": b["max_rps"]["median"] if b["max_rps"] else float("nan"),
            "baseline_p50_us": b["p50_us"]["median"] if b["p50_us"] else float("nan"),
        }
        v = verdict[placement]
        detail = ", ".join(f"{m}: {p} of {n}" for m, (p, n) in sep.items())
        lines.append(f'  {placement}: proxy pairs with disjoint 95% intervals {v["separated"]} of {v["pairs"]} ({detail}); '
                     f'p50-overhead intervals {100 * v["mean_relative_width_p50_overhead"]:.0f}% of their medians on average; '
                     f'baseline max {v["baseline_max_rps"]:,.0f} req/s, p50 {v["baseline_p50_us"]:,.0f} µs')
    if len(verdict) == 2:
        (a, va), (b, vb) = verdict.items()
        better = a if (va["separated"], -va["mean_relative_width_p50_overhead"]) > (vb["separated"], -vb["mean_relative_width_p50_overhead"]) else b
        calmer = a if va["baseline_max_rps"] > vb["baseline_max_rps"] else b
        lines.append(f"  separates the proxies better: {better} (more disjoint pairs; ties broken by narrower intervals)")
        lines.append(f"  disturbs the baseline less: {calmer} (higher baseline maximum: nginx served directly loses less to the placement)")
    for rid, r in sorted(runs.items(), key=lambda x: x[1]["started"]):
        lines.append(f'  run {rid} ({r["placement"]}): {r["started"]} to {r["finished"]}')
    return "\n".join(lines), verdict


def markdown(summary):
    """The figures as one Markdown table, for docs/methodology.md."""
    lines = ["| placement | cell | p50 overhead µs | p99 overhead µs | max, % of baseline |", "|---|---|---|---|---|"]
    for placement, s in summary.items():
        b = s["baseline"]
        lines.append(f'| {placement} | baseline (nginx direct) | p50 {fmt(b["p50_us"])} µs | p99 {fmt(b["p99_us"])} µs | {fmt(b["max_rps"])} req/s |')
        for name, m in s["proxies"].items():
            lines.append(f'| {placement} | {name} | {fmt(m.get("p50_overhead_us"))} | {fmt(m.get("p99_overhead_us"))} | {fmt(m.get("max_percent_of_baseline"))} |')
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: bench/placement_summary.py RESULTS.db [--json OUT.json] [--markdown]")
    runs, trials = load(sys.argv[1])
    if not trials:
        sys.exit(f"{sys.argv[1]} has no proxy trials with an open-model step: run bench/proxy-placement.sh")
    summary = summarise(trials)
    text, verdict = report(summary, runs)
    print(text)
    if "--markdown" in sys.argv:
        print(markdown(summary))
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"summary": summary, "verdict": verdict, "runs": runs}, f, indent=2)


if __name__ == "__main__":
    main()
