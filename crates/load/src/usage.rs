//! The client watching itself: thread and process CPU time, peak RSS, CPU pinning.

use crate::LoadError;

fn tv(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    // SAFETY: rusage is plain C data (integers and timevals): all zeroes is a valid value of it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a live, writable rusage for the whole call, and getrusage writes only into it.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    (rc == 0).then_some(ru)
}

/// (user, system) CPU seconds of the calling thread. Per-thread, so an
/// in-process test server or the CLI's own work is not billed to the client.
pub fn thread_cpu() -> (f64, f64) {
    #[cfg(target_os = "linux")]
    let who = libc::RUSAGE_THREAD;
    #[cfg(not(target_os = "linux"))]
    let who = libc::RUSAGE_SELF;
    rusage(who).map(|r| (tv(r.ru_utime), tv(r.ru_stime))).unwrap_or((0.0, 0.0))
}

/// User + system CPU seconds of the whole calling process, every thread included.
pub fn process_cpu() -> f64 {
    rusage(libc::RUSAGE_SELF).map(|r| tv(r.ru_utime) + tv(r.ru_stime)).unwrap_or(0.0)
}

/// Peak resident set size of the process in bytes.
pub fn max_rss_bytes() -> u64 {
    // ru_maxrss is in kilobytes on Linux.
    rusage(libc::RUSAGE_SELF).map(|r| r.ru_maxrss.max(0) as u64 * 1024).unwrap_or(0)
}

/// A set of CPUs to pin to, checked when it is made, so that applying it does one system call and
/// nothing else: no allocation, no panic. That makes `apply_to_current` safe between fork and exec
/// (`pre_exec`), where only async-signal-safe work may run. The one CPU-pinning code of the project.
#[derive(Clone, Copy)]
pub struct CpuSet {
    set: libc::cpu_set_t,
    /// No CPU given: applying leaves the affinity alone.
    empty: bool,
}

impl CpuSet {
    /// The set of `cpus` (empty: leave the affinity alone); an index past `CPU_SETSIZE` is an error.
    pub fn new(cpus: &[usize]) -> Result<CpuSet, LoadError> {
        // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus {
            if cpu >= libc::CPU_SETSIZE as usize {
                return Err(LoadError::Pin { cpu, reason: "CPU index out of range".into() });
            }
            // SAFETY: cpu < CPU_SETSIZE (checked), so CPU_SET stays inside the set.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        Ok(CpuSet { set, empty: cpus.is_empty() })
    }

    /// Pins the calling thread (or, in `pre_exec`, the child process) to the set. Async-signal-safe.
    pub fn apply_to_current(&self) -> std::io::Result<()> {
        if self.empty {
            return Ok(());
        }
        // SAFETY: the set is initialised and sized as sched_setaffinity expects.
        let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.set) };
        // last_os_error reads errno into a value: no allocation.
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

/// Pins the calling worker thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<(), LoadError> {
    CpuSet::new(&[cpu])?.apply_to_current().map_err(|e| LoadError::Pin { cpu, reason: e.to_string() })
}
