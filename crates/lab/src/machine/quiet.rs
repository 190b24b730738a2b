//! A quiet machine before each trial: waits, bounded, until processes other than the lab use
//! little CPU on the trial's CPUs (a previous server's stragglers, a package manager, another
//! benchmark), and reports the noise it could not wait out.

use crate::machine::noise::busy_seconds;
use std::time::{Duration, Instant};

/// Other processes may use this share of one core on the trial's CPUs and still count as quiet.
pub(crate) const QUIET_CORES: f64 = 0.10;
/// The longest the lab waits for quiet before a trial.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(5);
const WINDOW: Duration = Duration::from_millis(250);

/// Waits up to `max` for a window in which other processes use under [`QUIET_CORES`] of `cpus`
/// (all CPUs when empty). None when it got quiet; else the CPU (in cores) others used in the
/// last window.
pub(crate) fn wait(cpus: &[usize], max: Duration) -> Option<f64> {
    let start = Instant::now();
    loop {
        let (busy0, own0) = (busy_seconds(cpus), bakeoff_load::process_cpu());
        std::thread::sleep(WINDOW);
        let others = (busy_seconds(cpus) - busy0) - (bakeoff_load::process_cpu() - own0);
        let cores = others.max(0.0) / WINDOW.as_secs_f64();
        if cores < QUIET_CORES {
            return None;
        }
        if start.elapsed() + WINDOW > max {
            return Some(cores);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_cpu_is_waited_for_within_the_bound_and_reported() {
        let cpu = 0;
        let mut burner = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        // SAFETY: pins the child we just started.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(burner.id() as i32, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        // The lab's own CPU is subtracted, and in this test that is every test of the binary
        // running beside it: one busy neighbour can hide the burner from one wait, not from three.
        let mut waits = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let noise = wait(&[cpu], Duration::from_secs(1));
            assert!(t.elapsed() < Duration::from_millis(1500), "bounded: {:?}", t.elapsed());
            waits.push(noise);
            if noise.is_some_and(|cores| cores > 0.5) {
                break;
            }
        }
        burner.kill().unwrap();
        burner.wait().unwrap();
        assert!(waits.iter().any(|n| n.is_some_and(|cores| cores > 0.5)), "a spinning shell on the CPU is noise: {waits:?}");
    }
}
