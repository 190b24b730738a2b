//! A setup's outputs kept for every checkout on this machine: a fresh clone (as CI makes one) whose
//! stack has the same inputs hash copies the build output folders back instead of building again
//! (better-sqlite3's native build alone takes over two minutes per Node stack here). Only setups
//! whose every change to the stack folder is inside its output folders are kept, and never a
//! Python virtual environment, whose scripts name the absolute path they were made at.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Folders a setup builds into: not inputs of its hash, and what is kept here.
pub(crate) const OUTPUT_FOLDERS: [&str; 6] = ["target", "node_modules", ".venv", "__pycache__", "bin", "build"];

/// Output folders that name their own absolute path, so a copy elsewhere would not run.
const NOT_RELOCATABLE: [&str; 1] = [".venv"];

/// Every file of a stack folder outside its output folders, with a hash of its content (a tool
/// that rewrites a file unchanged, as npm its lock file, changes nothing): what a setup must leave
/// as it found it for its outputs to be all it made.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Sources(BTreeMap<PathBuf, [u8; 32]>);

impl Sources {
    /// The folder's files now.
    pub(crate) fn of(dir: &Path) -> Sources {
        let mut files = BTreeMap::new();
        list(dir, dir, &mut files);
        Sources(files)
    }
}

fn list(root: &Path, path: &Path, out: &mut BTreeMap<PathBuf, [u8; 32]>) {
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(meta) = e.metadata() else { continue };
        if meta.is_dir() {
            if !e.file_name().to_str().is_some_and(|n| OUTPUT_FOLDERS.contains(&n)) {
                list(root, &p, out);
            }
        } else {
            let content = std::fs::read(&p).unwrap_or_default();
            out.insert(p.strip_prefix(root).unwrap_or(&p).to_path_buf(), Sha256::digest(&content).into());
        }
    }
}

/// Where the outputs of `stack`'s setup with inputs `hash` are kept in the machine cache `cache`.
fn kept_at(cache: &Path, stack: &str, hash: &str) -> PathBuf {
    cache.join("setup-outputs").join(format!("{}-{hash}", stack.replace('/', "-")))
}

/// The output folders a setup left in `dir`.
fn outputs(dir: &Path) -> Vec<String> {
    OUTPUT_FOLDERS.iter().filter(|n| dir.join(n).is_dir()).map(|n| n.to_string()).collect()
}

/// Keeps in the machine cache `cache` what the setup of `stack` in `dir` made, if all of it is in
/// relocatable output folders: `before` is the folder's sources as the setup found them. Best
/// effort: a setup is never failed for a copy it could not keep.
pub(crate) fn keep(cache: &Path, stack: &str, dir: &Path, hash: &str, before: &Sources) {
    let made = outputs(dir);
    if made.is_empty() || made.iter().any(|o| NOT_RELOCATABLE.contains(&o.as_str())) || Sources::of(dir) != *before {
        return;
    }
    let at = kept_at(cache, stack, hash);
    let partial = at.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    if std::fs::create_dir_all(&partial).is_err() {
        return;
    }
    if made.iter().all(|o| copy(&dir.join(o), &partial)) {
        let _ = std::fs::remove_dir_all(&at);
        if std::fs::rename(&partial, &at).is_ok() {
            return;
        }
    }
    let _ = std::fs::remove_dir_all(&partial);
}

/// Copies the kept outputs of `stack` with inputs `hash` into `dir`, replacing what is there; false
/// when none are kept (or the copy failed, leaving no output folder half made).
pub(crate) fn restore(cache: &Path, stack: &str, dir: &Path, hash: &str) -> bool {
    let at = kept_at(cache, stack, hash);
    let kept = outputs(&at);
    if kept.is_empty() {
        return false;
    }
    for o in &kept {
        let _ = std::fs::remove_dir_all(dir.join(o));
        if !copy(&at.join(o), dir) {
            for o in &kept {
                let _ = std::fs::remove_dir_all(dir.join(o));
            }
            return false;
        }
    }
    true
}

/// `cp -a` of `from` into the folder `into` (reflinks where the file system has them).
fn copy(from: &Path, into: &Path) -> bool {
    std::process::Command::new("cp")
        .args(["-a", "--reflink=auto"])
        .arg(from)
        .arg(into)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_alone_are_kept_and_come_back_in_a_fresh_folder() {
        let root = std::env::temp_dir().join(format!("bakeoff-outputs-{}", std::process::id()));
        let cache = root.join("cache");
        let (a, b) = (root.join("a"), root.join("b"));
        for d in [&a, &b] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("package.json"), "{}").unwrap();
        }
        let before = Sources::of(&a);
        std::fs::create_dir_all(a.join("node_modules/x")).unwrap();
        std::fs::write(a.join("node_modules/x/index.js"), "built").unwrap();
        keep(&cache, "t/node", &a, "h1", &before);
        assert!(restore(&cache, "t/node", &b, "h1"), "kept and copied back");
        assert_eq!(std::fs::read_to_string(b.join("node_modules/x/index.js")).unwrap(), "built");
        assert!(!restore(&cache, "t/node", &b, "h2"), "another inputs hash has nothing kept");

        // A file rewritten as it was (npm's lock file) is no change; one written beside the
        // outputs, or a virtual environment, keeps nothing.
        let before = Sources::of(&a);
        std::fs::write(a.join("package.json"), "{}").unwrap();
        keep(&cache, "t/node", &a, "h5", &before);
        assert!(restore(&cache, "t/node", &b, "h5"));
        let before = Sources::of(&a);
        std::fs::write(a.join("generated.h"), "x").unwrap();
        keep(&cache, "t/node", &a, "h3", &before);
        assert!(!restore(&cache, "t/node", &b, "h3"));
        let before = Sources::of(&a);
        std::fs::create_dir_all(a.join(".venv/bin")).unwrap();
        keep(&cache, "t/node", &a, "h4", &before);
        assert!(!restore(&cache, "t/node", &b, "h4"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
