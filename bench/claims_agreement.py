#!/usr/bin/env python3
"""Do two runs of a study agree on its claims? Reads the two JSON reports bench/agreement.sh kept
(run1.json, run2.json: `bakeoff report --format json`, whose `claims` carry each verdict with the
measured value, its interval and the interval's coverage) and the runs' wall times (run1.seconds, run2.seconds); prints
every claim in both runs and flags a verdict that flips between held and failed (inconclusive on
one side is listed but is no flip); writes the same as claims.json, and as a Markdown table
(claims.md).

    bench/claims_agreement.py RESULTS_DIR
"""
import json
import os
import sys

DECIDED = {"held", "failed"}


def measured(c):
    m = c.get("measured")
    if not m:
        return "no value"
    g = lambda v: "–" if v is None else f"{v:.3g}"  # NaN is written as null
    # Reports from before claims stated their interval's coverage have no "confidence".
    cover = f', {100 * m["confidence"]:.3g}%' if m.get("confidence") is not None else ""
    return f'{g(m["value"])} [{g(m["low"])}, {g(m["high"])}{cover}] {m["quantity"]} (expected {m["expected"]})'


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/claims_agreement.py RESULTS_DIR (holding run1.json and run2.json)")
    out = sys.argv[1]
    runs = []
    for n in (1, 2):
        path = os.path.join(out, f"run{n}.json")
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            sys.exit(f"{path}: {e}; bench/agreement.sh writes it with `bakeoff report RUN --format json`")
        secs = os.path.join(out, f"run{n}.seconds")
        seconds = int(open(secs).read()) if os.path.exists(secs) else None
        runs.append({"id": doc["run"]["id"], "study": doc["run"]["study"], "seconds": seconds, "claims": doc["claims"]})
    a, b = runs[0]["claims"], runs[1]["claims"]
    if [c["claim"]["statement"] for c in a] != [c["claim"]["statement"] for c in b]:
        sys.exit("the two runs judged different claims: were they runs of the same study file?")
    rows, flips = [], 0
    for ca, cb in zip(a, b):
        flip = {ca["verdict"], cb["verdict"]} == DECIDED
        flips += flip
        rows.append({
            "statement": ca["claim"]["statement"],
            "kind": ca["claim"]["check"].get("kind"),
            "run1": {"verdict": ca["verdict"], "measured": ca.get("measured")},
            "run2": {"verdict": cb["verdict"], "measured": cb.get("measured")},
            "flip": flip,
            "same_verdict": ca["verdict"] == cb["verdict"],
        })
        mark = "FLIP " if flip else ("same " if ca["verdict"] == cb["verdict"] else "diff ")
        print(f'{mark}{ca["claim"]["statement"]}')
        print(f'       run 1: {ca["verdict"]}: {measured(ca)}')
        print(f'       run 2: {cb["verdict"]}: {measured(cb)}')
    same = sum(r["same_verdict"] for r in rows)
    print(f"{same} of {len(rows)} claims got the same verdict in both runs; {flips} flipped between held and failed")
    for r in runs:
        print(f'run {r["id"]} of {r["study"]}: {r["seconds"]} s wall time')
    with open(os.path.join(out, "claims.md"), "w") as f:
        f.write("| claim | run 1 | run 2 | |\n|---|---|---|---|\n")
        for r, ca, cb in zip(rows, a, b):
            cell = lambda c: f'{c["verdict"]}: {measured(c)}'.replace("|", "/")
            f.write(f'| {r["statement"]} | {cell(ca)} | {cell(cb)} | {"**flip**" if r["flip"] else ""} |\n')
    with open(os.path.join(out, "claims.json"), "w") as f:
        json.dump({"runs": [{k: r[k] for k in ("id", "study", "seconds")} for r in runs], "claims": rows, "flips": flips}, f, indent=2)
    sys.exit(0)


if __name__ == "__main__":
    main()
