//! A run's folders (LabDirs) as its cells use them: one directory per server start, labelled alike for
//! verification and measurement, and the index that says afterwards what each start was for.

use crate::error::LabError;
use crate::run::cell::certificate::RunCertificate;
use crate::stacks::manifest::{Stack, Variant};
use std::net::IpAddr;
use std::path::PathBuf;

/// Where a lab keeps its files: the project (stacks, fixtures' sources), the run's scratch
/// directory (cell directories, server logs) and the fixtures written for the run.
#[derive(Debug, Clone)]
pub struct LabDirs {
    /// The project's root, where `stacks/` and `services/` are.
    pub project_root: PathBuf,
    /// The run's scratch directory.
    pub run_dir: PathBuf,
    /// The fixtures every stack reads (`DATA_DIR`).
    pub data_dir: PathBuf,
}

impl LabDirs {
    /// The directory of the start `label`.
    pub(crate) fn cell_dir(&self, label: &str) -> PathBuf {
        self.run_dir.join("cells").join(label)
    }

    /// A new directory for one start of `stack` [`variant`], and its label: `<n>-<stack>-<variant>`,
    /// n counting the run's starts. Verification and every trial get labels of this one form, so
    /// nothing a stack sees (RUN_DIR, the SQLite path in DATABASE_URL) says whether it is being
    /// verified or measured, nor which scenario the load will request; [`LabDirs::note`] records
    /// what each start was for.
    pub(crate) fn new_cell(&self, stack: &Stack, variant: &Variant) -> String {
        let cells = self.run_dir.join("cells");
        let started = std::fs::read_dir(&cells).map(|d| d.filter_map(Result::ok).filter(|e| e.path().is_dir()).count()).unwrap_or(0);
        let label = format!("{:03}-{}-{}", started + 1, stack.name.replace('/', "-"), variant.name);
        std::fs::create_dir_all(self.cell_dir(&label)).ok();
        label
    }

    /// The run's TLS certificate, made on first use for localhost and `server_ip`: every TLS
    /// stack of the run serves it.
    pub(crate) fn certificate(&self, server_ip: IpAddr) -> Result<RunCertificate, LabError> {
        RunCertificate::in_run(&self.run_dir, server_ip)
    }

    /// Where the run's certificate files are (made by [`LabDirs::certificate`]).
    pub(crate) fn certificate_paths(&self) -> RunCertificate {
        RunCertificate::at(&self.run_dir)
    }

    /// Appends what the start `label` was for to the run's index of cell directories
    /// (`cells/index.txt`, beside their server logs), once its server has stopped, so a running
    /// stack never finds what its own start is for.
    pub(crate) fn note(&self, label: &str, what: &str) {
        use std::io::Write;
        let index = self.run_dir.join("cells").join("index.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(index) {
            let _ = writeln!(f, "{label}\t{what}");
        }
    }
}
