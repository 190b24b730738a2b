//! CPU placement of a server through a cgroup where the machine allows it (v1 cpuset, or v2 with
//! the cpuset controller): the group's CPUs bind the server and every process it forks, even one
//! that resets its own affinity. Where no cgroup can be made, sched_setaffinity (already applied
//! at spawn) is the placement, and `Placement::describe` says so.

use std::path::{Path, PathBuf};

/// A cgroup made for one server; removed on drop once its processes are gone.
pub(crate) struct CpuGroup {
    dir: PathBuf,
}

/// How a run's servers are placed on CPUs, for the run's provenance.
pub(crate) fn describe_placement() -> &'static str {
    if root_dir().is_some() {
        "cgroup cpuset (+ sched_setaffinity)"
    } else {
        "sched_setaffinity"
    }
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
        let group = CpuGroup { dir };
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        let mems = std::fs::read_to_string(root.join("cpuset.mems"))
            .or_else(|_| std::fs::read_to_string(root.join("cpuset.mems.effective")))
            .unwrap_or_else(|_| "0".into());
        let ok = std::fs::write(group.dir.join("cpuset.cpus"), list.join(",")).is_ok()
            && std::fs::write(group.dir.join("cpuset.mems"), mems.trim()).is_ok()
            && std::fs::write(group.dir.join("cgroup.procs"), pid.to_string()).is_ok();
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
}

impl Drop for CpuGroup {
    fn drop(&mut self) {
        // rmdir succeeds only once the group is empty; the server was stopped before this.
        for _ in 0..20 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
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
            }
            None => assert_eq!(describe_placement(), "sched_setaffinity", "a cgroup root exists but placement failed"),
        }
        child.kill().unwrap();
        child.wait().unwrap();
        drop(group);
    }
}
