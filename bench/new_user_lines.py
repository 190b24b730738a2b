#!/usr/bin/env python3
"""Timestamps every line a command prints, as bench/new-user.sh pipes it in, and summarises what a
new user waits through: the total time, the time to the run's first line and to its first progress
line, and the longest gap between two lines. A terminal's redrawn status line (ended by a carriage
return rather than a newline) counts as a line: on a terminal that is what the user sees move.

    python3 bench/new_user_lines.py LOG < output     # writes LOG (seconds, then the line), prints a summary
"""
import os
import re
import sys
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
# The first line `bakeoff run` prints (the machine's facts) and its first progress line: a
# status line (verifying..., trial k/n...) or, off a terminal, a trial starting.
RUN_FIRST = re.compile(r"^machine: ")
RUN_PROGRESS = re.compile(r"(^|\s)(verifying, |trial \d+/\d+ of |measuring .* \(trial \d+/\d+\))")


def main() -> None:
    log = open(sys.argv[1], "w", encoding="utf-8")
    start = time.monotonic()
    lines = []  # (seconds since start, text)
    pending = b""
    fd = sys.stdin.fileno()
    while True:
        chunk = os.read(fd, 65536)
        now = time.monotonic() - start
        if not chunk:
            break
        pending += chunk
        parts = re.split(rb"[\r\n]", pending)
        pending = parts.pop()
        for raw in parts:
            text = ANSI.sub(b"", raw).decode("utf-8", "replace").strip()
            if text:
                lines.append((now, text))
                log.write(f"{now:9.3f} {text}\n")
        log.flush()
    total = time.monotonic() - start
    if pending.strip():
        lines.append((total, ANSI.sub(b"", pending).decode("utf-8", "replace").strip()))
    summarise(lines, total)


def summarise(lines, total) -> None:
    def first(pattern):
        return next((t for t, text in lines if pattern.search(text)), None)

    gap, before = 0.0, ""
    for (t0, text0), (t1, _) in zip(lines, lines[1:]):
        if t1 - t0 > gap:
            gap, before = t1 - t0, text0
    fmt = lambda t: "never" if t is None else f"{t:.0f} s"
    print(f"total {total:.0f} s, {len(lines)} lines")
    print(f"the run's first line at {fmt(first(RUN_FIRST))}, its first progress line at {fmt(first(RUN_PROGRESS))}")
    print(f"longest gap between two lines: {gap:.1f} s, after: {before[:120]}")


if __name__ == "__main__":
    main()
