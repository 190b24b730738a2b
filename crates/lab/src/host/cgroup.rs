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
    /// Creates `bakeoff-<name>` with `cpus` and moves `pid` into it; None where the machine does
    /// not allow it (no cpuset controller, not root, a read-only cgroup file system).
    pub(crate) fn place(name: &str, pid: u32, cpus: &[usize]) -> Option<CpuGroup> {
        if cpus.is_empty() {
            return None;
        }
        let root = root_dir()?;
        let dir = root.join(format!("bakeoff-{name}"));
        std::fs::create_dir_all(&dir).ok()?;
        let share_dir = share_root().map(|r| r.join(format!("bakeoff-{name}")));
        let group = CpuGroup { dir, share_dir };
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        let mems = std::fs::read_to_string(root.join("cpuset.mems"))
            .or_else(|_| std::fs::read_to_string(root.join("cpuset.mems.effective")))
            .unwrap_or_else(|_| "0".into());
        let ok = std::fs::write(group.dir.join("cpuset.cpus"), list.join(",")).is_ok()
            && std::fs::write(group.dir.join("cpuset.mems"), mems.trim()).is_ok()
            && std::fs::write(group.dir.join("cgroup.procs"), pid.to_string()).is_ok();
        // A share group that cannot be made leaves the placement as it is; the cpuset binds.
        let mut group = group;
        if let Some(share) = group.share_dir.take() {
            let placed = std::fs::create_dir_all(&share).is_ok() && std::fs::write(share.join("cgroup.procs"), pid.to_string()).is_ok();
            group.share_dir = Some(share).filter(|s| placed || s.exists());
        }
        ok.then_some(group)
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

    #[cfg(test)]
    pub(crate) fn holds(&self, pid: u32) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.procs")).map(|s| s.lines().any(|l| l.trim() == pid.to_string())).unwrap_or(false)
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
    fn a_child_is_placed_in_its_own_cpuset_where_the_machine_allows() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let group = CpuGroup::place(&format!("test-{}", std::process::id()), child.id(), &[0]);
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
