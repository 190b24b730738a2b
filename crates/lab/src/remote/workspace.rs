//! The project files a server host runs stacks from: packed here (the tracked files of the folders a
//! stack start needs, as they are in the working tree, in a reproducible tar named by its hash), sent
//! over the host's session only when the host's workspace of this project holds other files, and
//! unpacked there in place, so what setup built stays and a later run of the same files sends
//! nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;
use sha2::{Digest, Sha256};

use super::error::HostError;
use super::protocol::{Reply, Request};
use super::session::Session;

/// The project's folders a host needs to set up and start stacks and services.
pub const SHIPPED: &[&str] = &["stacks", "services", "scenarios"];
/// Where under the agent's home the workspaces are kept, one folder per controller's project.
const CACHE: &str = ".cache/bakeoff/workspaces";
/// Marks a workspace unpacked whole: the tar's name, then its files, a line each.
const COMPLETE: &str = ".complete";
/// How long a host may take to unpack a workspace.
const UNPACK: Duration = Duration::from_secs(120);

/// The packed project files and their names.
pub struct Packed {
    /// The project's: the first 16 hex digits of the SHA-256 of this machine's name and the
    /// project's folder, so each checkout that sends files has one workspace on a host.
    pub project: String,
    /// The tar's: the first 16 hex digits of its SHA-256, equal files, equal name.
    pub id: String,
    /// The tar itself.
    pub tar: Vec<u8>,
}

/// Packs the tracked files of [`SHIPPED`] under `root` as the working tree has them, with fixed
/// times and owners so equal files make an equal tar.
pub fn pack(root: &Path) -> Result<Packed, HostError> {
    let failed = |step: &str, cause: String| HostError::Packing {
        step: step.into(),
        cause,
        hint: "run from a git checkout of bakeoff with `git` and GNU `tar` installed".into(),
    };
    let listed = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z", "--"])
        .args(SHIPPED)
        .output()
        .map_err(|e| failed("git ls-files", e.to_string()))?;
    if !listed.status.success() || listed.stdout.is_empty() {
        return Err(failed("git ls-files", String::from_utf8_lossy(&listed.stderr).trim().to_string()));
    }
    // The list goes to tar's stdin (`-T -`); the tar comes out on its stdout (`-f -`).
    let create = ["--null", "-T", "-", "-c", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner"];
    let tar = tar_of(root, &create, &listed.stdout).map_err(|e| failed("tar", e))?;
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let project = short_hash(format!("{}:{}", here.trim(), root.display()).as_bytes());
    Ok(Packed { project, id: short_hash(&tar), tar })
}

/// The first 16 hex digits of the SHA-256 of `bytes`.
fn short_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Makes `packed` the workspace of the session's host, sending it only when the host lacks it;
/// the workspace's path there, and whether it was sent.
pub fn ship(session: &mut Session, packed: &Packed) -> Result<(String, bool), HostError> {
    let hint = "the agent's home must be writable and have room for the project's files";
    let request = Request::Workspace { project: packed.project.clone(), id: packed.id.clone() };
    let (path, ready) = match session.ask(&request, UNPACK, hint)? {
        Reply::Workspace { path, ready } => (path, ready),
        other => return Err(session.unexpected("workspace", &other)),
    };
    if ready {
        return Ok((path, false));
    }
    let tar_b64 = base64::engine::general_purpose::STANDARD.encode(&packed.tar);
    let request = Request::Unpack { project: packed.project.clone(), id: packed.id.clone(), tar_b64 };
    match session.ask(&request, UNPACK, hint)? {
        Reply::Workspace { path, ready: true } => Ok((path, true)),
        other => Err(session.unexpected("unpack", &other)),
    }
}

/// The agent's home, under which it keeps the workspaces.
pub(crate) fn agent_home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "the agent has no HOME to keep workspaces in".into())
}

/// The agent's side: project `project`'s workspace under `home`, and whether it holds the files of
/// the tar named `id`, whole.
pub(crate) fn find(home: &Path, project: &str, id: &str) -> Result<(PathBuf, bool), String> {
    for name in [project, id] {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("`{name}` is not a workspace name (hex digits)"));
        }
    }
    let path = home.join(CACHE).join(project);
    let ready = shipped(&path).is_some_and(|(had, _)| had == id);
    Ok((path, ready))
}

/// The name of the tar a workspace last took whole, and its files.
fn shipped(path: &Path) -> Option<(String, Vec<String>)> {
    let text = std::fs::read_to_string(path.join(COMPLETE)).ok()?;
    let mut lines = text.lines();
    let id = lines.next()?.to_string();
    Some((id, lines.map(String::from).collect()))
}

/// The agent's side: unpacks `tar_b64` (named `id`) over project `project`'s workspace under
/// `home`, in place, so what setup built there stays and is rebuilt only where its inputs changed;
/// files the last tar had and this one has not are removed. The mark of a whole workspace is taken
/// away first and written last, so a half-unpacked one is never taken for whole. Its path.
pub(crate) fn unpack(home: &Path, project: &str, id: &str, tar_b64: &str) -> Result<PathBuf, String> {
    let (path, ready) = find(home, project, id)?;
    if ready {
        return Ok(path);
    }
    let tar = base64::engine::general_purpose::STANDARD.decode(tar_b64).map_err(|e| format!("the workspace is not base64: {e}"))?;
    std::fs::create_dir_all(&path).map_err(|e| format!("cannot make {}: {e}", path.display()))?;
    let before = shipped(&path).map(|(_, files)| files).unwrap_or_default();
    let _ = std::fs::remove_file(path.join(COMPLETE));
    let listed = tar_of(&path, &["-t"], &tar)?;
    let files: Vec<String> = String::from_utf8_lossy(&listed).lines().filter(|f| !f.ends_with('/')).map(String::from).collect();
    tar_of(&path, &["-x"], &tar)?;
    for gone in before.iter().filter(|f| !files.contains(f) && !f.contains("..")) {
        let _ = std::fs::remove_file(path.join(gone));
    }
    let mark = std::iter::once(id.to_string()).chain(files).collect::<Vec<_>>().join("\n");
    std::fs::write(path.join(COMPLETE), mark).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The agent's side: unpacks `tar_b64` into the folder `dir` (a run's fixtures).
pub(crate) fn unpack_into(dir: &Path, tar_b64: &str) -> Result<(), String> {
    let tar = base64::engine::general_purpose::STANDARD.decode(tar_b64).map_err(|e| format!("the files are not base64: {e}"))?;
    tar_of(dir, &["-x"], &tar).map(|_| ())
}

/// Packs every file of the folder `dir` (a run's fixtures) into a tar.
pub(crate) fn pack_folder(dir: &Path) -> Result<Vec<u8>, String> {
    let out = Command::new("tar").arg("-C").arg(dir).args(["-c", "-f", "-", "."]).output().map_err(|e| format!("cannot run tar: {e}"))?;
    if !out.status.success() {
        return Err(format!("tar could not pack {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

/// Runs `tar -C dir ARGS -f -` on `tar`; what it printed.
fn tar_of(dir: &Path, args: &[&str], tar: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = Command::new("tar")
        .arg("-C")
        .arg(dir)
        .args(args)
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let bytes = tar.to_vec();
    // Written on a thread: tar's listing would fill its pipe while the tar is still being written.
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().map_err(|e| format!("tar: {e}"))?;
    let written = writer.join().map_err(|_| "the tar writer panicked".to_string())?;
    if written.is_err() || !out.status.success() {
        return Err(format!("tar could not read the workspace: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
    }

    #[test]
    fn the_same_files_pack_to_the_same_name_and_unpack_whole_once() {
        let a = pack(&root()).unwrap();
        let b = pack(&root()).unwrap();
        assert_eq!((a.id.len(), &a.id, &a.project), (16, &b.id, &b.project), "equal files, equal names");
        assert_eq!(a.tar, b.tar);
        let home = std::env::temp_dir().join(format!("bakeoff-workspace-{}", std::process::id()));
        let encoded = base64::engine::general_purpose::STANDARD.encode(&a.tar);
        assert!(!find(&home, &a.project, &a.id).unwrap().1, "nothing there yet");
        let path = unpack(&home, &a.project, &a.id, &encoded).unwrap();
        assert!(find(&home, &a.project, &a.id).unwrap().1, "whole once unpacked");
        let manifest = std::fs::read_dir(path.join("stacks")).unwrap().count();
        assert!(manifest > 3, "the stacks' folders are there");
        assert!(path.join("stacks/rust/actix/stack.toml").is_file());
        assert!(!path.join("stacks/rust/actix/target").exists(), "build outputs are not tracked, so not shipped");
        let again = unpack(&home, &a.project, &a.id, "not base64 at all").unwrap();
        assert_eq!(again, path, "a whole workspace is not unpacked again");
        assert!(find(&home, "../etc", &a.id).unwrap_err().contains("not a workspace name"));
        std::fs::remove_dir_all(&home).unwrap();
    }

    /// A tar of `files` (name, text) made in a folder of its own.
    fn tar_with(dir: &Path, files: &[(&str, &str)]) -> String {
        let _ = std::fs::remove_dir_all(dir);
        for (name, text) in files {
            std::fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
            std::fs::write(dir.join(name), text).unwrap();
        }
        let names: Vec<&str> = files.iter().map(|f| f.0).collect();
        let out = Command::new("tar").arg("-C").arg(dir).arg("-cf").arg("-").args(&names).output().unwrap();
        assert!(out.status.success());
        base64::engine::general_purpose::STANDARD.encode(out.stdout)
    }

    #[test]
    fn new_files_unpack_in_place_keeping_what_was_built_and_dropping_what_they_no_longer_have() {
        let scratch = std::env::temp_dir().join(format!("bakeoff-workspace-update-{}", std::process::id()));
        let home = scratch.join("home");
        let first = tar_with(&scratch.join("v1"), &[("stacks/a/stack.toml", "one"), ("stacks/b/stack.toml", "b")]);
        let path = unpack(&home, "abc1", "0001", &first).unwrap();
        std::fs::write(path.join("stacks/a/built.bin"), "built by setup").unwrap();
        let second = tar_with(&scratch.join("v2"), &[("stacks/a/stack.toml", "two"), ("stacks/c/stack.toml", "c")]);
        assert!(!find(&home, "abc1", "0002").unwrap().1, "other files: not ready");
        assert_eq!(unpack(&home, "abc1", "0002", &second).unwrap(), path, "one workspace per project");
        let read = |f: &str| std::fs::read_to_string(path.join(f)).ok();
        assert_eq!(read("stacks/a/stack.toml").as_deref(), Some("two"), "a changed file is replaced");
        assert_eq!(read("stacks/c/stack.toml").as_deref(), Some("c"), "a new file arrives");
        assert_eq!(read("stacks/b/stack.toml"), None, "a file the new tar lacks is removed");
        assert_eq!(read("stacks/a/built.bin").as_deref(), Some("built by setup"), "what setup built stays");
        assert!(find(&home, "abc1", "0002").unwrap().1 && !find(&home, "abc1", "0001").unwrap().1);
        assert!(unpack(&home, "abc2", "0003", "%%%").unwrap_err().contains("not base64"));
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}
