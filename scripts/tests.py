#!/usr/bin/env python3
"""The test executables of one build, run as scripts/test.sh groups them.

Cargo resolves features per command: a `cargo test -p A -p B` after a `cargo test --workspace
--no-run` builds A and B again with other features. So the suite is built once, and its
executables are run from here, each in its package's folder as `cargo test` would.

  tests.py list < cargo-json > LIST        the executables of `cargo test --no-run
                                           --message-format=json`: package, target, path, folder
  tests.py run LIST PACKAGE TARGET [ARGS]  runs one, ARGS passed to it (libtest's)
  tests.py serial LIST TIMES PACKAGE TARGET [ARGS]
                                           runs one with --test-threads=1 and appends each test's
                                           seconds to TIMES
  tests.py slowest TIMES [N]               the N slowest (default 10), with the total
  tests.py unrun LIST                      fails naming every executable of LIST not run yet

Every run is marked in LIST.ran beside LIST.
"""
import json
import os
import subprocess
import sys
import time


def listing():
    for line in sys.stdin:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
            folder = os.path.dirname(m["manifest_path"])
            print(f"{package_name(m)}\t{m['target']['name']}\t{m['executable']}\t{folder}")


def package_name(m):
    """The package's name: the id's `#name@version` part; cargo writes `#version` alone when the
    name is the manifest folder's, so that folder's name then."""
    pid = m["package_id"]
    if "#" in pid:
        tail = pid.split("#", 1)[1]
        return tail.split("@")[0] if "@" in tail else os.path.basename(os.path.dirname(m["manifest_path"]))
    return pid.split(" ")[0]


def find(list_path, package, target):
    for line in open(list_path):
        p, t, exe, folder = line.rstrip("\n").split("\t")
        if p == package and t == target:
            return exe, folder
    sys.exit(f"tests.py: no test executable {package} {target} in {list_path} (was it built?)")


def mark(list_path, package, target):
    with open(list_path + ".ran", "a") as ran:
        ran.write(f"{package}\t{target}\n")


def unrun(list_path):
    ran = set(open(list_path + ".ran").read().splitlines()) if os.path.exists(list_path + ".ran") else set()
    missing = [line.split("\t")[:2] for line in open(list_path).read().splitlines() if "\t".join(line.split("\t")[:2]) not in ran]
    for package, target in missing:
        print(f"tests.py: the build made a test executable scripts/test.sh does not run: {package} {target}", file=sys.stderr)
    return 1 if missing else 0


def run(list_path, package, target, args):
    exe, folder = find(list_path, package, target)
    mark(list_path, package, target)
    print(f"     Running {package} {target} ({os.path.basename(exe)})", flush=True)
    return subprocess.call([exe, *args], cwd=folder)


def serial(list_path, times, package, target, args):
    """Runs one test at a time; libtest prints "test NAME ... " at a test's start and its result
    at its end, so the time between is the test's."""
    exe, folder = find(list_path, package, target)
    mark(list_path, package, target)
    print(f"     Running {package} {target} ({os.path.basename(exe)}), one test at a time", flush=True)
    proc = subprocess.Popen([exe, *args, "--test-threads=1"], cwd=folder, stdout=subprocess.PIPE)
    out = open(times, "a")
    name, started, buffer = None, 0.0, ""
    while True:
        chunk = proc.stdout.read1(4096)
        if not chunk:
            break
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        buffer += chunk.decode("utf-8", "replace")
        while True:
            first = buffer.split("\n", 1)[0]
            if name is None and first.startswith("test ") and " ... " in first:
                name, started = first[5:].split(" ... ", 1)[0], time.monotonic()
            if "\n" not in buffer:
                break
            line, buffer = buffer.split("\n", 1)
            if name is not None and line.startswith(f"test {name} ... "):
                out.write(f"{time.monotonic() - started:.1f}\t{package} {target}: {name}\n")
                out.flush()
                name = None
    return proc.wait()


def slowest(times, n):
    rows = []
    for line in open(times):
        seconds, name = line.rstrip("\n").split("\t", 1)
        rows.append((float(seconds), name))
    rows.sort(reverse=True)
    total = sum(s for s, _ in rows)
    print(f"the {min(n, len(rows))} slowest of {len(rows)} tests run one at a time ({total / 60:.1f} min in all):")
    for seconds, name in rows[:n]:
        print(f"  {seconds:7.1f} s  {name}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["list"]:
        listing()
    elif a[:1] == ["run"] and len(a) >= 4:
        sys.exit(run(a[1], a[2], a[3], a[4:]))
    elif a[:1] == ["serial"] and len(a) >= 5:
        sys.exit(serial(a[1], a[2], a[3], a[4], a[5:]))
    elif a[:1] == ["unrun"] and len(a) == 2:
        sys.exit(unrun(a[1]))
    elif a[:1] == ["slowest"] and len(a) >= 2:
        slowest(a[1], int(a[2]) if len(a) > 2 else 10)
    else:
        sys.exit(__doc__)
