//! What every lab command shares: finding the project folder, opening the results, loading the
//! stack catalogue and Ctrl-C handling.

use crate::args::CommonArgs;
use anyhow::{bail, Result};
use bakeoff_lab::stacks::catalog::{self, Catalog};
use std::path::PathBuf;

/// The project folder: `--root`/`BAKEOFF_ROOT`, else the nearest ancestor of the current folder
/// with a `stacks/` folder, else the folder this binary was built from.
pub fn project_root(common: &CommonArgs) -> Result<PathBuf> {
    if let Some(r) = &common.root {
        if !r.join("stacks").is_dir() {
            bail!("{} has no stacks/ folder\n  hint: point --root at the bakeoff project folder", r.display());
        }
        // Absolute, so a stack's folder means the same after the lab changes directory to start it.
        return Ok(r.canonicalize()?);
    }
    let mut dir = std::env::current_dir()?;
    loop {
        if dir.join("stacks").is_dir() && dir.join("services").is_dir() {
            return Ok(dir);
        }
        if !dir.pop() {
            break;
        }
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    if built.join("stacks").is_dir() {
        return Ok(built.canonicalize()?);
    }
    bail!("cannot find the bakeoff project folder (with stacks/ and services/)\n  hint: run from inside it or pass --root")
}

/// Opens the results database for reading commands: a relative `--db` is inside the project
/// folder (where `bakeoff run` writes it), so `report` and `runs` work from any folder.
pub fn open_results(db: &std::path::Path) -> Result<bakeoff_store::Store> {
    let path = match project_root(&CommonArgs { root: None }) {
        Ok(root) if db.is_relative() => root.join(db),
        _ => db.to_path_buf(),
    };
    if !path.exists() {
        bail!("no results database at {}\n  hint: run `bakeoff run` first, or pass --db", path.display());
    }
    Ok(bakeoff_store::Store::open(&path)?)
}

/// Loads the catalogue; manifest problems are printed (all at once) but do not stop other stacks.
pub fn catalog(root: &std::path::Path) -> Catalog {
    let c = catalog::discover(&root.join("stacks"));
    print_problems(&c.problems);
    c
}

/// Prints the manifests that did not load (all at once); the other stacks still run.
pub fn print_problems(problems: &[bakeoff_lab::error::LabError]) {
    for p in problems {
        eprintln!("warning: {p}");
    }
}

pub use bakeoff_cli::cancel_on_ctrl_c;
