#!/usr/bin/env bash
# Clients on hosts of their own, on this machine: the controller's overhead and the veth against
# loopback. Runs the `bench_hosts` test of crates/cli/tests/suite/hosts.rs (release build, as root), which
# builds a namespace topology (two clients, one server) with sshd in one client and prints:
#   - topology set-up: build three namespaces, the bridge and links (5 times; target < 2 s);
#   - session open: start an agent over ssh and over `ip netns exec`, check its build, measure its
#     clock (5 times each; target < 0.5 s);
#   - agent round trip: 100 `clock` calls over one open session (median; target < 1 ms);
#   - the same 2-s closed load (16 connections, one thread) against one nginx worker from `local`
#     (loopback), from `netns:` (veth and bridge) and from the ssh client (the same veth, its agent
#     reached over ssh), alternating, 3 rounds each, and the ratios of the medians (veth over
#     loopback; ssh over netns: what the ssh session costs the load); before each load the path's
#     RTT (median of 20 TCP connects) and link ceiling each way (1 s sent to a sink, as long back),
#     and nginx's CPU per request metered by its host's agent.
# Namespaces share this machine's cores: the ratio is the path's cost here, not another host's.
#
#   bench/hosts.sh
# The summary goes to bench/results/hosts-<stamp>/summary.txt (the one file git keeps).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/provenance.sh
. "$ROOT/bench/provenance.sh"
[ "$(id -u)" = 0 ] || { echo "bench/hosts.sh needs root (network namespaces, sshd)" >&2; exit 1; }
command -v /usr/sbin/sshd >/dev/null || { echo "sshd is missing: run scripts/install-deps.sh" >&2; exit 1; }
command -v /usr/sbin/nginx >/dev/null || { echo "nginx is missing: run scripts/install-deps.sh" >&2; exit 1; }
OUT="$ROOT/bench/results/hosts-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
provenance hosts "$ROOT" > "$OUT/summary.txt"
cargo test --release --locked -p bakeoff --test suite --manifest-path "$ROOT/Cargo.toml" \
  -- --ignored --nocapture --exact hosts::bench_hosts > "$OUT/test.log" 2>&1 || { cat "$OUT/test.log" >&2; exit 1; }
# The harness prints the test's name without a newline before its first line: match anywhere.
grep -o 'BENCH .*' "$OUT/test.log" | sed 's/^BENCH //' > "$OUT/figures.txt"
{
  echo "# load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# figure  median  min  max  (seconds, or µs for round trips; target in brackets)"
  awk '
    /^topology_setup_s/     { printf "topology set-up          %.3f s  (min %.3f, max %.3f)  [< 2 s]\n", $3, $5, $7 }
    /^session_open_s/       { printf "session open, %-6s     %.3f s  (min %.3f, max %.3f)  [< 0.5 s]\n", $2, $4, $6, $8 }
    /^agent_round_trip_us/  { printf "agent round trip, %-6s %.0f µs  (min %.0f, max %.0f, n %d)  [< 1000 µs]\n", $2, $4, $6, $8, $10 }
    /^clock_offset_us/      { printf "clock offset, %-6s     %s µs ± %s µs\n", $2, $3, $5 }
    /^round/                { printf "load round %d %-32s %s req/s  p50 %s µs\n", $2, $3, $4, $7 }
    /^path/                 { printf "path from %-30s RTT %s µs, ceiling %s MB/s there, %s MB/s back, nginx CPU %s µs/request\n", $2, $4, $6, $8, $10 }
    /^load_rps/             { printf "load median: local %s req/s, netns %s req/s; veth/loopback ratio %s\n", $4, $7, $9 }
    /^ssh_rps/              { printf "load median: ssh client %s req/s, netns client %s req/s; ssh/netns ratio %s\n", $4, $7, $9 }
  ' "$OUT/figures.txt"
} >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
