#!/usr/bin/env python3
"""Passes cargo test's output through and keeps how long each test took.

Run one test at a time (`--test-threads=1`): libtest then prints "test NAME ... " when a test
starts and its result when it ends, so the time between the line's start and its end is the test's.
`record FILE` appends "seconds<TAB>name" rows to FILE; `slowest FILE [N]` prints the N slowest
(default 10) with the total.
"""
import sys
import time


def record(path):
    out = open(path, "a")
    started, name = None, None
    buffer = ""
    while True:
        chunk = sys.stdin.buffer.read1(4096) if hasattr(sys.stdin.buffer, "read1") else sys.stdin.buffer.read(1)
        if not chunk:
            break
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        buffer += chunk.decode("utf-8", "replace")
        # A test's start shows as soon as "test NAME ... " is printed; its end with the newline.
        while True:
            if name is None and buffer.startswith("test ") and " ... " in buffer.split("\n", 1)[0]:
                name, started = buffer[5:].split(" ... ", 1)[0], time.monotonic()
            if "\n" not in buffer:
                break
            line, buffer = buffer.split("\n", 1)
            if name is not None and line.startswith(f"test {name} ... "):
                out.write(f"{time.monotonic() - started:.1f}\t{name}\n")
                out.flush()
                name = None


def slowest(path, n):
    rows = []
    for line in open(path):
        seconds, name = line.rstrip("\n").split("\t", 1)
        rows.append((float(seconds), name))
    rows.sort(reverse=True)
    total = sum(s for s, _ in rows)
    print(f"the {min(n, len(rows))} slowest of {len(rows)} tests run one at a time ({total / 60:.1f} min in all):")
    for seconds, name in rows[:n]:
        print(f"  {seconds:7.1f} s  {name}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "record":
        record(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "slowest":
        slowest(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10)
    else:
        sys.exit("usage: test_times.py record FILE | slowest FILE [N]")
