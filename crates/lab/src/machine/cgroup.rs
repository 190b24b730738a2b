//! CPU placement of a server through a cgroup where the machine allows it (v1 cpuset, or v2 with
//! the cpuset controller): the group's CPUs bind the server and every process it forks, even one
//! that resets its own affinity. Where no cgroup can be made, sched_setaffinity (already applied
//! at spawn) is the placement, and `Placement::describe` says so. Every server's group also has the
//! same CPU share (cgroup v1's `cpu.shares`, v2's `cpu.weight`, both at their default), so servers
//! loaded at once split the server CPUs evenly, whatever their count of processes or threads.

use std::path::{Path, PathBuf};

/// A cgroup made for one server; removed on drop once its processes are gone.
pub(crate) struct CpuGroup {
    dir: PathBuf,
    /// Its group under cgroup v1's `cpu` controller, a hierarchy apart from the cpuset's; under v2
    /// the cpuset group itself holds the share.
    share_dir: Option<PathBuf>,
}

/// A group's `cgroup.procs` files, open for the child about to be spawned.
pub(crate) struct Joining {
    files: Vec<std::fs::File>,
}

impl Joining {
    /// Moves the calling process into every group: writing 0 to `cgroup.procs` means "the writer"
    /// in cgroup v1 and v2. One write(2) per file, async-signal-safe: made for `pre_exec`. A refused
    /// write is not an error here: the parent checks membership after the spawn ([`CpuGroup::holds`]).
    pub(crate) fn join_current(&self) {
        use std::os::fd::AsRawFd;
        for file in &self.files {
            // SAFETY: a valid open descriptor and a one-byte static buffer.
            unsafe {
                libc::write(file.as_raw_fd(), b"0".as_ptr().cast(), 1);
            }
        }
    }
}

/// How a run's servers are placed on CPUs, for the run's provenance.
pub(crate) fn describe_placement() -> &'static str {
    if root_dir().is_some() {
        "cgroup cpuset (+ sched_setaffinity)"
    } else {
        "sched_setaffinity"
    }
}

/// Whether servers placed here get equal CPU shares: cgroup v1 with a writable `cpu` controller,
/// or v2 with the cpu controller enabled beside the cpuset.
pub(crate) fn equal_shares() -> bool {
    if share_root().is_some() {
        return true;
    }
    let controllers = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control").unwrap_or_default();
    let enabled = |name: &str| controllers.split_whitespace().any(|c| c == name);
    enabled("cpu") && enabled("cpuset")
}

/// cgroup v1's `cpu` controller hierarchy, where this process may make groups.
fn share_root() -> Option<PathBuf> {
    let v1 = Path::new("/sys/fs/cgroup/cpu");
    // The cgroup file system's modes read-only even where root may make groups: root is the test.
    (v1.join("cpu.shares").exists() && unsafe { libc::geteuid() } == 0).then(|| v1.to_path_buf())
}

fn root_dir() -> Option<PathBuf> {
    let v1 = Path::new("/sys/fs/cgroup/cpuset");
    if v1.join("cpuset.cpus").exists() {
        return Some(v1.to_path_buf());
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let controllers = std::fs::read_to_string(v2.join("cgroup.subtree_control")).unwrap_or_default();
    controllers.split_whitespace().any(|c| c == "cpuset").then(|| v2.to_path_buf())
}

impl CpuGroup {
    /// Creates `bakeoff-<name>` with `cpus` (and its share group), before the server is spawned;
    /// None where the machine does not allow it (no cpuset controller, not root, a read-only cgroup
    /// file system). The server joins it from inside the child ([`Joining::join_current`]), so no
    /// process it forks at start-up is left outside.
    pub(crate) fn prepare(name: &str, cpus: &[usize]) -> Option<CpuGroup> {
        if cpus.is_empty() {
            return None;
        }
        let root = root_dir()?;
        let dir = root.join(format!("bakeoff-{name}"));
        std::fs::create_dir_all(&dir).ok()?;
        let share_dir = share_root().map(|r| r.join(format!("bakeoff-{name}")));
        // Dropped (removed) on any failure below.
        let mut group = CpuGroup { dir, share_dir: None };
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        let mems = std::fs::read_to_string(root.join("cpuset.mems"))
            .or_else(|_| std::fs::read_to_string(root.join("cpuset.mems.effective")))
            .unwrap_or_else(|_| "0".into());
        let ok = std::fs::write(group.dir.join("cpuset.cpus"), list.join(",")).is_ok()
            && std::fs::write(group.dir.join("cpuset.mems"), mems.trim()).is_ok();
        // A share group that cannot be made leaves the placement as it is; the cpuset binds.
        group.share_dir = share_dir.filter(|s| std::fs::create_dir_all(s).is_ok());
        ok.then_some(group)
    }

    /// The group's `cgroup.procs` files, opened now for the child to write its own pid to between
    /// fork and exec (where nothing may allocate).
    pub(crate) fn joining(&self) -> Joining {
        let open = |dir: &Path| std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs")).ok();
        Joining { files: self.share_dir.iter().chain([&self.dir]).filter_map(|d| open(d)).collect() }
    }

    /// Moves `pid` into the group and its share group (a process started before the group was);
    /// false where the kernel refused the cpuset.
    pub(crate) fn admit(&self, pid: u32) -> bool {
        if let Some(share) = &self.share_dir {
            let _ = std::fs::write(share.join("cgroup.procs"), pid.to_string());
        }
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).is_ok()
    }

    /// The CPUs the group allows, as the kernel reports them.
    #[cfg(test)]
    pub(crate) fn cpus(&self) -> String {
        std::fs::read_to_string(self.dir.join("cpuset.cpus")).unwrap_or_default().trim().to_string()
    }

    /// The processes in the group now.
    pub(crate) fn members(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Whether `pid` is in the group's cpuset, as the kernel reports it.
    pub(crate) fn holds(&self, pid: u32) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.procs")).map(|s| s.lines().any(|l| l.trim() == pid.to_string())).unwrap_or(false)
    }

    /// Whether the group has a CPU share group of its own (cgroup v1, as root).
    #[cfg(test)]
    pub(crate) fn has_share_group(&self) -> bool {
        self.share_dir.is_some()
    }

    /// Whether `pid` is in the group's CPU share group (v1), as the kernel reports it.
    #[cfg(test)]
    pub(crate) fn shares_with(&self, pid: u32) -> bool {
        let Some(share) = &self.share_dir else { return false };
        std::fs::read_to_string(share.join("cgroup.procs")).is_ok_and(|s| s.lines().any(|l| l.trim() == pid.to_string()))
    }
}

impl Drop for CpuGroup {
    fn drop(&mut self) {
        // rmdir succeeds only once the group is empty; the server was stopped before this.
        for dir in self.share_dir.iter().chain([&self.dir]) {
            for _ in 0..20 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_joins_its_own_cpuset_before_exec_where_the_machine_allows() {
        use std::os::unix::process::CommandExt;
        let group = CpuGroup::prepare(&format!("test-{}", std::process::id()), &[0]);
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("5");
        if let Some(g) = &group {
            let joining = g.joining();
            // SAFETY: join_current makes write(2) calls only.
            unsafe {
                cmd.pre_exec(move || {
                    joining.join_current();
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn().unwrap();
        match &group {
            Some(g) => {
                assert!(g.holds(child.id()));
                assert_eq!(g.cpus(), "0");
                // Where shares can be set, the child has one of its own, at the default.
                assert_eq!(g.shares_with(child.id()), share_root().is_some());
            }
            None => assert_eq!(describe_placement(), "sched_setaffinity", "a cgroup root exists but placement failed"),
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let dirs: Vec<PathBuf> = group.iter().flat_map(|g| g.share_dir.iter().chain([&g.dir]).cloned()).collect();
        drop(group);
        assert!(dirs.iter().all(|d| !d.exists()), "a group outlived its server: {dirs:?}");
    }
}
