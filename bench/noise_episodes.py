#!/usr/bin/env python3
"""Runs a command on an emulated noisy machine: slow episodes that hit every process at once.

The noisy machines bakeoff meets (a cloud VM whose neighbours come and go) show neither steal nor
other processes: their CPUs just get slower for seconds at a time, for the client and the servers
alike. This puts the command (and every process it starts) in a cgroup v1 `cpu` group of its own
and, at random moments, caps the group's CPU time for a random while (CFS bandwidth:
cpu.cfs_quota_us), then lifts the cap. Calm and slow stretches are exponentially distributed;
their means, the depth of a slow stretch and the seed are flags, so a run can be told again.

    bench/noise_episodes.py [--seed N] [--calm 6] [--slow 4] [--depth 0.45-0.85] -- COMMAND...

Prints a line on stderr at the end: the share of the time slowed and the mean depth. Needs root
and the cgroup v1 `cpu` hierarchy at /sys/fs/cgroup/cpu; the group is removed afterwards.
"""
import argparse
import os
import random
import subprocess
import sys
import threading
import time

ROOT = "/sys/fs/cgroup/cpu"
PERIOD_US = 100_000


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def episodes(group, args, child, stats):
    """Alternates calm and slow stretches until the child exits."""
    rng = random.Random(args.seed)
    low, high = (float(x) for x in args.depth.split("-"))
    cpus = os.cpu_count() or 1
    started = time.monotonic()
    while child.poll() is None:
        if wait(child, rng.expovariate(1 / args.calm)):
            break
        share = rng.uniform(low, high)
        write(f"{group}/cpu.cfs_quota_us", int(share * cpus * PERIOD_US))
        slow_from = time.monotonic()
        wait(child, rng.expovariate(1 / args.slow))
        write(f"{group}/cpu.cfs_quota_us", -1)
        stats["slow_s"] += time.monotonic() - slow_from
        stats["depths"].append(share)
    stats["wall_s"] = time.monotonic() - started


def wait(child, seconds):
    """Sleeps `seconds` or until the child exits; true when it exited."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if child.poll() is not None:
            return True
        time.sleep(min(0.05, max(0.0, end - time.monotonic())))
    return False


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--calm", type=float, default=6.0, help="mean seconds between slow stretches")
    p.add_argument("--slow", type=float, default=4.0, help="mean seconds a slow stretch lasts")
    p.add_argument("--depth", default="0.45-0.85", help="the CPU share left in a slow stretch, a range")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("give the command after --")
    if not os.path.isdir(ROOT):
        sys.exit(f"noise_episodes: no cgroup v1 cpu hierarchy at {ROOT}; this emulation needs one (and root)")
    group = f"{ROOT}/bakeoff-noise-{os.getpid()}"
    os.mkdir(group)
    stats = {"slow_s": 0.0, "depths": [], "wall_s": 0.0}
    try:
        # The child joins the group before it runs anything: every process it starts inherits it.
        child = subprocess.Popen(command, preexec_fn=lambda: write(f"{group}/cgroup.procs", os.getpid()))
        noise = threading.Thread(target=episodes, args=(group, args, child, stats))
        noise.start()
        code = child.wait()
        noise.join()
    finally:
        write(f"{group}/cpu.cfs_quota_us", -1)
        remove(group)
    depths = stats["depths"]
    mean = sum(depths) / len(depths) if depths else 1.0
    print(
        f"noise episodes (seed {args.seed}): slowed {100 * stats['slow_s'] / max(stats['wall_s'], 1e-9):.0f}% "
        f"of {stats['wall_s']:.0f} s in {len(depths)} stretches, to {100 * mean:.0f}% of the CPUs on average",
        file=sys.stderr,
    )
    sys.exit(code)


def remove(group):
    """Moves any process left in the group back to the root group, then removes it."""
    for _ in range(50):
        try:
            os.rmdir(group)
            return
        except OSError:
            with open(f"{group}/cgroup.procs") as f:
                for pid in f.read().split():
                    try:
                        write(f"{ROOT}/cgroup.procs", pid)
                    except OSError:
                        pass
            time.sleep(0.1)


if __name__ == "__main__":
    main()
