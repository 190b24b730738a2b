//! A precise CPU meter for a process tree: nanosecond CPU clocks of its processes, checked against
//! the clock-tick counters so that no work that left the tree during a measurement is lost.
//!
//! /proc's utime and stime count CPU in clock ticks (10 ms), so a measurement built on them alone
//! needs bursts of 100 ms of CPU to be read to 10%. Each process's CPU clock (`clock_gettime` on
//! the clock of its pid) is the scheduler's runtime in nanoseconds summed over all its threads,
//! those that already exited included, which a sum of live threads' schedstat would lose. What a
//! live sum cannot see is a process that left the tree: a child reaped during the measurement
//! takes its clock with it. Its parent's cutime + cstime then holds the child's whole life, so a
//! reading adds every member's reaped-children ticks to the clocks: the child's time before the
//! first reading cancels (it was in the first reading's clocks, it is in the second's cutime), its
//! time during the measurement is counted, at tick resolution only for what was reaped.
//!
//! A safety net catches whatever else leaves unseen (a process whose clock could not be read): the
//! tick counters of the same processes, utime + stime + cutime + cstime, are read too. For a
//! process that stays, its ticks lag its clock by less than two ticks (utime and stime are each
//! truncated to a tick; cutime + cstime are the same number on both sides), so a tick delta above
//! the precise delta by more than two ticks per process means work dropped out of the precise
//! sum, and the tick delta, coarse but complete, is the answer.

use super::sampler::{clock_ticks, group_members, process_ticks};

/// The tree's CPU, read at one moment (by a server host's agent too, and sent over its session).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuReading {
    /// Σ (process CPU clock + reaped children's ticks), in seconds.
    precise_s: f64,
    /// Σ (utime + stime + cutime + cstime) of the same processes, in seconds.
    ticks_s: f64,
    pids: Vec<u32>,
}

impl CpuReading {
    /// Reads the tree rooted at `leader` (its process group and every descendant).
    pub(crate) fn of_tree(leader: u32) -> CpuReading {
        let tick = 1.0 / clock_ticks();
        let mut r = CpuReading { precise_s: 0.0, ticks_s: 0.0, pids: Vec::new() };
        for pid in group_members(leader) {
            // Ticks first, then the clock: the clock is read later, so it is never behind them.
            let (Some((own, children)), Some(clock_s)) = (process_ticks(pid), process_clock_seconds(pid)) else { continue };
            r.precise_s += clock_s + children as f64 * tick;
            r.ticks_s += (own + children) as f64 * tick;
            r.pids.push(pid);
        }
        r
    }

    /// CPU seconds the tree used from `before` to this reading: the precise delta, or the tick
    /// delta when the ticks saw more than their resolution allows (see the module's header).
    pub(crate) fn since(&self, before: &CpuReading) -> f64 {
        let precise = self.precise_s - before.precise_s;
        let ticks = self.ticks_s - before.ticks_s;
        if ticks - precise > self.resolution_since(before) {
            ticks
        } else {
            precise
        }
    }

    /// Two ticks for every process in either reading.
    fn resolution_since(&self, before: &CpuReading) -> f64 {
        let gone = before.pids.iter().filter(|p| !self.pids.contains(p)).count();
        2.0 * (self.pids.len() + gone) as f64 / clock_ticks()
    }

    /// Processes of the tree at this reading; only the tests ask (which processes a reading saw).
    #[cfg(test)]
    fn processes(&self) -> usize {
        self.pids.len()
    }
}

/// The CPU clock of process `pid` (all its threads, live and exited), in seconds. Linux lets any
/// process read another's CPU clock (`clock_getcpuclockid`); None once the process is gone.
fn process_clock_seconds(pid: u32) -> Option<f64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid out-pointer; the call only computes the clock id of `pid`.
    if unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::process::CommandExt;
    use std::process::{Child, ChildStdout, Command, Stdio};

    /// Burns CPU until the calling thread (or process) used `s` seconds of its own.
    const BURN: &str = "def burn(clock, s):\n    end = clock() + s\n    while clock() < end: pass\n";

    /// A Python process in a process group of its own, driven line by line over its pipes.
    fn spawn(script: &str) -> (Child, BufReader<ChildStdout>) {
        let mut child = Command::new("python3")
            .args(["-c", &format!("{BURN}{script}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("python3 runs");
        let out = BufReader::new(child.stdout.take().unwrap());
        (child, out)
    }

    fn line(out: &mut BufReader<ChildStdout>) -> f64 {
        let mut l = String::new();
        out.read_line(&mut l).unwrap();
        l.trim().parse().unwrap_or_else(|_| panic!("a number, got {l:?}"))
    }

    fn go(child: &mut Child) {
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    }

    fn stop(mut child: Child) {
        // SAFETY: kills the process group this test started.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        child.wait().unwrap();
    }

    #[test]
    fn counts_the_work_of_a_thread_that_exited() {
        let script = "import sys, threading, time\nprint(0, flush=True); sys.stdin.readline()\nt = []\n\
            th = threading.Thread(target=lambda: (burn(time.thread_time, 0.06), t.append(time.thread_time())))\n\
            th.start(); th.join(); print(t[0], flush=True); sys.stdin.readline()\n";
        let (mut child, mut out) = spawn(script);
        line(&mut out);
        let before = CpuReading::of_tree(child.id());
        go(&mut child);
        let burned = line(&mut out);
        let used = CpuReading::of_tree(child.id()).since(&before);
        stop(child);
        assert!(burned >= 0.06, "{burned}");
        // The thread is gone, its CPU is not; beside it the interpreter only printed and joined.
        assert!(used >= burned && used < burned + 0.015, "metered {used:.4} s, the thread burned {burned:.4} s");
    }

    #[test]
    fn counts_the_work_of_a_child_reaped_during_the_measurement() {
        let child_script = format!(
            "{BURN}import sys, time\nburn(time.process_time, 0.05); print(time.process_time(), flush=True)\n\
            sys.stdin.readline(); burn(time.process_time, 0.15); print(time.process_time(), flush=True)\n"
        );
        let script = format!(
            "import subprocess, sys\nc = subprocess.Popen([sys.executable, '-c', {child_script:?}], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n\
            print(c.stdout.readline().strip(), flush=True); sys.stdin.readline(); c.stdin.write('go\\n'); c.stdin.flush()\n\
            total = c.stdout.readline().strip(); c.wait(); print(total, flush=True); sys.stdin.readline()\n"
        );
        let (mut child, mut out) = spawn(&script);
        let first = line(&mut out);
        let before = CpuReading::of_tree(child.id());
        assert_eq!(before.processes(), 2, "the leader and its child");
        go(&mut child);
        let total = line(&mut out);
        let after = CpuReading::of_tree(child.id());
        stop(child);
        assert_eq!(after.processes(), 1, "the child was reaped");
        let (used, burned) = (after.since(&before), total - first);
        // The child's exit (interpreter teardown) is billed too; the leader only relayed lines. The
        // reaped child is counted at tick resolution (its parent's cutime + cstime, each truncated),
        // so the meter may read up to two ticks under the child's own clock (3.5 ms under was seen).
        let two_ticks = 2.0 / clock_ticks();
        assert!(used > burned - two_ticks && used < burned + 0.03, "metered {used:.4} s, the child burned {burned:.4} s in the burst");
        assert!(after.precise_s - before.precise_s > used - 0.02, "the precise sum itself kept the reaped child's work");
    }

    #[test]
    fn reads_finer_than_a_clock_tick() {
        let (mut child, mut out) = spawn("import sys, time\nprint(0, flush=True); sys.stdin.readline()\nburn(time.process_time, 0.003); print(0, flush=True); sys.stdin.readline()\n");
        line(&mut out);
        let before = CpuReading::of_tree(child.id());
        go(&mut child);
        line(&mut out);
        let used = CpuReading::of_tree(child.id()).since(&before);
        stop(child);
        assert!((0.003..0.008).contains(&used), "3 ms of CPU metered as {used:.4} s");
    }
}
