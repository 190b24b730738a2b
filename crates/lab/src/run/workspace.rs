//! A run's scratch directory (fixtures and every server's log) and its provenance record: what
//! every kind of run (a study, a verification, the noise probe) starts from.

use crate::contract::fixtures;
use crate::error::LabError;
use crate::machine::provenance::{git_commit, machine_info};
use crate::run::{Event, Lab, LabDirs};
use bakeoff_model::records::results::{ResultSink, RunInfo};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A new run's provenance: a unique id from the clock and the process, the git commit, the machine.
pub(crate) fn new_run(root: &Path, study: &str, settings: serde_json::Value) -> RunInfo {
    let mut run = RunInfo::starting_now("", study, machine_info(), settings);
    let compact: String = run.started_at.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    run.id = format!("{compact}-{}", std::process::id());
    run.git_commit = git_commit(root);
    run
}

/// A new directory `name` in `parent`, made here and by nobody else: a run and the noise probe it
/// starts within the same second of one process have the same run id, and the probe's finish would
/// remove the run's fixtures with a directory they shared; the second gets `name-2`, and so on.
fn claim_dir(parent: &Path, name: &str) -> Result<PathBuf, LabError> {
    let mut last = None;
    for n in 1..100 {
        let dir = if n == 1 { parent.join(name) } else { parent.join(format!("{name}-{n}")) };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                last = Some(e);
                break;
            }
        }
    }
    Err(LabError::Input {
        what: parent.join(name).display().to_string(),
        problem: format!("cannot make the run's scratch directory: {}", last.map_or_else(String::new, |e| e.to_string())),
        hint: "check free space and permissions in the temporary directory".into(),
    })
}

/// The scratch directory of a run: fixtures and every server's log. Removed afterwards unless
/// something failed or it is to be kept.
pub(crate) struct Workspace {
    pub(crate) dir: PathBuf,
    pub(crate) data: PathBuf,
    keep: bool,
}

impl Workspace {
    pub(crate) fn create(run_id: &str, keep: bool) -> Result<Workspace, LabError> {
        let dir = claim_dir(&std::env::temp_dir(), &format!("bakeoff-{run_id}"))?;
        let data = dir.join("data");
        fixtures::write_all(&data).map_err(|e| LabError::Input {
            what: data.display().to_string(),
            problem: format!("cannot write the fixtures: {e:#}"),
            hint: "check free space and permissions in the temporary directory".into(),
        })?;
        Ok(Workspace { dir, data, keep })
    }

    /// A runner over this workspace.
    pub(crate) fn lab<'a>(
        &self,
        root: &Path,
        docstore: Option<String>,
        settings: crate::run::LoadSettings,
        sink: &'a mut dyn ResultSink,
        events: &'a mut dyn FnMut(Event<'_>),
        cancel: &'a AtomicBool,
    ) -> Lab<'a> {
        let dirs = LabDirs { project_root: root.to_path_buf(), run_dir: self.dir.clone(), data_dir: self.data.clone() };
        Lab::new(dirs, settings, sink, events, cancel).with_docstore(docstore)
    }

    /// Removes the scratch directory unless asked to keep it or something failed.
    pub(crate) fn finish(self, failed: bool, events: &mut dyn FnMut(Event<'_>)) {
        if self.keep || failed {
            (events)(Event::ScratchKept(&self.dir));
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_workspaces_of_one_run_id_have_directories_of_their_own() {
        // An id of this process's own, so another test run on the machine cannot hold it first.
        let id = format!("test-claim-{}", std::process::id());
        let first = Workspace::create(&id, false).unwrap();
        let second = Workspace::create(&id, false).unwrap();
        assert!(first.dir.ends_with(format!("bakeoff-{id}")), "{}", first.dir.display());
        assert!(second.dir.ends_with(format!("bakeoff-{id}-2")), "{}", second.dir.display());
        second.finish(false, &mut |_| {});
        assert!(first.data.join("products.sqlite").is_file(), "the first keeps its fixtures");
        let dir = first.dir.clone();
        first.finish(false, &mut |_| {});
        assert!(!dir.exists());
    }
}
