//! Finds stacks: every `stacks/<language>/<stack>/stack.toml` under the project root, loaded and
//! validated; all manifest problems are returned together so one pass fixes them all.

use crate::error::LabError;
use crate::stacks::manifest::{self, Stack, MANIFEST_FILE};
use std::path::{Path, PathBuf};

/// The stacks found under stacks/ and the manifests that did not load.
pub struct Catalog {
    /// Every stack whose manifest loaded, sorted by name.
    pub stacks: Vec<Stack>,
    /// One error per manifest that did not load.
    pub problems: Vec<LabError>,
}

/// Loads every stack under `stacks_dir` (sorted by name).
pub fn discover(stacks_dir: &Path) -> Catalog {
    let pattern = stacks_dir.join("*").join("*").join(MANIFEST_FILE);
    let mut paths: Vec<PathBuf> = glob::glob(&pattern.to_string_lossy()).map(|g| g.filter_map(Result::ok).collect()).unwrap_or_default();
    paths.sort();
    let mut catalog = Catalog { stacks: Vec::new(), problems: Vec::new() };
    for path in paths {
        let dir = path.parent().expect("manifest has a folder");
        let name = stack_name(stacks_dir, dir);
        match manifest::load(dir, &name) {
            Ok(stack) => catalog.stacks.push(stack),
            Err(e) => catalog.problems.push(e),
        }
    }
    catalog
}

/// Loads one stack folder anywhere (e.g. a test fixture outside stacks/), named `language/folder`.
pub fn load_dir(dir: &Path) -> Result<Stack, LabError> {
    let folder = dir.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    let text = std::fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap_or_default();
    let language = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("language").map(|r| r.trim_start_matches([' ', '=']).trim().trim_matches('"').to_string()))
        .unwrap_or_default();
    manifest::load(dir, &format!("{language}/{folder}"))
}

fn stack_name(stacks_dir: &Path, dir: &Path) -> String {
    dir.strip_prefix(stacks_dir).unwrap_or(dir).to_string_lossy().replace('\\', "/")
}

impl Catalog {
    /// Resolves names to stacks: exact names, a language (`go` = every go stack), or `all`.
    pub fn select(&self, names: &[String]) -> Result<Vec<&Stack>, LabError> {
        let mut out: Vec<&Stack> = Vec::new();
        for name in names {
            let matched: Vec<&Stack> = self.stacks.iter().filter(|s| name == "all" || s.name == *name || s.language == *name).collect();
            if matched.is_empty() {
                let known: Vec<&str> = self.stacks.iter().map(|s| s.name.as_str()).collect();
                return Err(LabError::UnknownStack { name: name.clone(), known: known.join(", ") });
            }
            for s in matched {
                if !out.iter().any(|o| o.name == s.name) {
                    out.push(s);
                }
            }
        }
        Ok(out)
    }
}

/// Whether each toolchain command of a stack is on PATH.
pub fn toolchain_present(stack: &Stack) -> Vec<(String, bool)> {
    stack.toolchain.iter().map(|t| (t.clone(), on_path(t))).collect()
}

pub(crate) fn on_path(command: &str) -> bool {
    std::env::var_os("PATH").map(|p| std::env::split_paths(&p).any(|d| d.join(command).is_file())).unwrap_or(false)
}
