//! The project files a server host runs stacks from: packed here (the tracked files of the folders a
//! stack start needs, as they are in the working tree, in a reproducible tar named by its hash), sent
//! once over the host's session and unpacked there under the agent's cache, where a later run of the
//! same files finds them and sends nothing.

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
/// Where under the agent's home the workspaces are kept, one folder per content hash.
const CACHE: &str = ".cache/bakeoff/workspaces";
/// Marks a workspace unpacked whole; a folder without it is unpacked again.
const COMPLETE: &str = ".complete";
/// How long a host may take to unpack a workspace.
const UNPACK: Duration = Duration::from_secs(120);

/// The packed project files and their name.
pub struct Packed {
    /// The first 16 hex digits of the tar's SHA-256: equal files, equal name.
    pub id: String,
    /// The tar itself.
    pub tar: Vec<u8>,
}

/// Packs the tracked files of [`SHIPPED`] under `root` as the working tree has them, with fixed
/// times and owners so equal files make an equal tar.
pub fn pack(root: &Path) -> Result<Packed, HostError> {
    let failed = |step: &str, cause: String| HostError::Topology {
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
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(root)
        .args(["--null", "-T", "-", "-c", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed("tar", e.to_string()))?;
    let mut stdin = tar.stdin.take().expect("stdin is piped");
    // Written on a thread: a list longer than the pipe would block while tar's output fills.
    let list = listed.stdout;
    let writer = std::thread::spawn(move || stdin.write_all(&list));
    let out = tar.wait_with_output().map_err(|e| failed("tar", e.to_string()))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(failed("tar", String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    let id = Sha256::digest(&out.stdout).iter().take(8).map(|b| format!("{b:02x}")).collect();
    Ok(Packed { id, tar: out.stdout })
}

/// Makes `packed` the workspace of the session's host, sending it only when the host lacks it;
/// the workspace's path there, and whether it was sent.
pub fn ship(session: &mut Session, packed: &Packed) -> Result<(String, bool), HostError> {
    let hint = "the agent's home must be writable and have room for the project's files";
    let (path, ready) = match session.ask(&Request::Workspace { id: packed.id.clone() }, UNPACK, hint)? {
        Reply::Workspace { path, ready } => (path, ready),
        other => return Err(session.unexpected("workspace", &other)),
    };
    if ready {
        return Ok((path, false));
    }
    let tar_b64 = base64::engine::general_purpose::STANDARD.encode(&packed.tar);
    match session.ask(&Request::Unpack { id: packed.id.clone(), tar_b64 }, UNPACK, hint)? {
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

/// The agent's side: the workspace `id`'s folder under `home` and whether it is unpacked whole.
pub(crate) fn find(home: &Path, id: &str) -> Result<(PathBuf, bool), String> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("`{id}` is not a workspace name (hex digits)"));
    }
    let path = home.join(CACHE).join(id);
    let ready = path.join(COMPLETE).is_file();
    Ok((path, ready))
}

/// The agent's side: unpacks `tar_b64` as workspace `id` under `home` (beside it first, then moved
/// in place, so a half-unpacked folder is never taken for a whole one); its path.
pub(crate) fn unpack(home: &Path, id: &str, tar_b64: &str) -> Result<PathBuf, String> {
    let (path, ready) = find(home, id)?;
    if ready {
        return Ok(path);
    }
    let tar = base64::engine::general_purpose::STANDARD.decode(tar_b64).map_err(|e| format!("the workspace is not base64: {e}"))?;
    let part = path.with_extension("part");
    let _ = std::fs::remove_dir_all(&part);
    std::fs::create_dir_all(&part).map_err(|e| format!("cannot make {}: {e}", part.display()))?;
    let mut child = Command::new("tar")
        .arg("-C")
        .arg(&part)
        .args(["-x", "-f", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    let written = child.stdin.take().expect("stdin is piped").write_all(&tar);
    let out = child.wait_with_output().map_err(|e| format!("tar: {e}"))?;
    if written.is_err() || !out.status.success() {
        return Err(format!("tar could not unpack the workspace: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    std::fs::write(part.join(COMPLETE), id).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&path);
    std::fs::rename(&part, &path).map_err(|e| format!("cannot move the workspace in place: {e}"))?;
    Ok(path)
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
        assert_eq!((a.id.len(), &a.id), (16, &b.id), "equal files, equal name");
        assert_eq!(a.tar, b.tar);
        let home = std::env::temp_dir().join(format!("bakeoff-workspace-{}", std::process::id()));
        let encoded = base64::engine::general_purpose::STANDARD.encode(&a.tar);
        assert!(!find(&home, &a.id).unwrap().1, "nothing there yet");
        let path = unpack(&home, &a.id, &encoded).unwrap();
        assert!(find(&home, &a.id).unwrap().1, "whole once unpacked");
        let manifest = std::fs::read_dir(path.join("stacks")).unwrap().count();
        assert!(manifest > 3, "the stacks' folders are there");
        assert!(path.join("stacks/rust/actix/stack.toml").is_file());
        assert!(!path.join("stacks/rust/actix/target").exists(), "build outputs are not tracked, so not shipped");
        assert_eq!(unpack(&home, &a.id, "not base64 at all").unwrap(), path, "a whole workspace is not unpacked again");
        assert!(find(&home, "../etc").unwrap_err().contains("not a workspace name"));
        std::fs::remove_dir_all(&home).unwrap();
    }
}
