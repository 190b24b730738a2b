//! The client watching itself: thread and process CPU time, peak RSS, CPU pinning.

use crate::LoadError;

fn tv(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
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

#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) -> Result<(), LoadError> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(LoadError::Pin { cpu, reason: "CPU index out of range".into() });
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET stays within CPU_SETSIZE (checked).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(LoadError::Pin { cpu, reason: std::io::Error::last_os_error().to_string() })
    }
}

#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(cpu: usize) -> Result<(), LoadError> {
    Err(LoadError::Pin { cpu, reason: "pinning is only supported on Linux".into() })
}
