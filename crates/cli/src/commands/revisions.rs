//! `bench --rev A --rev B`: two revisions of the current folder's git repository, each checked out
//! in a worktree of its own under the system's temporary folder, where the one `--cmd` is built
//! (by `--setup`) and started. The worktrees are removed when the run ends, whatever ended it.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The checked-out revisions: each one's name and the folder its server runs in. Dropping it
/// removes the worktrees.
pub struct Revisions {
    repo: PathBuf,
    trees: Vec<PathBuf>,
    /// (name, the folder the command runs in: the current folder's place in that worktree).
    pub servers: Vec<(String, PathBuf)>,
}

impl Drop for Revisions {
    fn drop(&mut self) {
        for tree in &self.trees {
            let _ = git(&self.repo, &["worktree", "remove", "--force", &tree.display().to_string()]);
            let _ = std::fs::remove_dir_all(tree);
        }
        let _ = git(&self.repo, &["worktree", "prune"]);
    }
}

/// `git -C repo ARGS`: its standard output, or its error with what git said.
fn git(repo: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `base=main` → (base, main); a bare revision is named after itself, lowercased, every character
/// but letters, digits, `-` and `_` made `-` (`HEAD` → head, `v1.2` → v1-2).
fn named(arg: &str) -> (String, String) {
    if let Some((name, rev)) = arg.split_once('=').filter(|(n, r)| !n.is_empty() && !r.is_empty()) {
        return (name.to_string(), rev.to_string());
    }
    let name: String = arg.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    (name.trim_matches('-').to_lowercase(), arg.to_string())
}

/// Checks out `revs` (two, `[NAME=]REVISION`) of the repository holding `cwd`.
pub fn check_out(revs: &[String], cwd: &Path) -> Result<Revisions> {
    if revs.len() != 2 {
        bail!("--rev given {} time(s): an A/B needs two revisions\n  hint: e.g. --rev base=main --rev head=HEAD", revs.len());
    }
    let top = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|e| {
        anyhow::anyhow!("--rev needs a git checkout: {} is not in one ({e})\n  hint: run bakeoff bench from your repository", cwd.display())
    })?;
    let repo = PathBuf::from(top);
    let inside = cwd.canonicalize()?.strip_prefix(repo.canonicalize()?).map(Path::to_path_buf).unwrap_or_default();
    let named: Vec<(String, String)> = revs.iter().map(|r| named(r)).collect();
    for (name, rev) in &named {
        if name.is_empty() || !name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) {
            bail!("--rev {rev}: it gives no usable name\n  hint: name it, e.g. --rev base={rev}");
        }
    }
    if named[0].0 == named[1].0 {
        bail!(
            "both revisions would be reported as adhoc/{}\n  hint: name them, e.g. --rev base={} --rev head={}",
            named[0].0,
            named[0].1,
            named[1].1
        );
    }
    let mut out = Revisions { repo: repo.clone(), trees: Vec::new(), servers: Vec::new() };
    for (name, rev) in named {
        let tree = std::env::temp_dir().join(format!("bakeoff-rev-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tree);
        git(&repo, &["worktree", "add", "--detach", &tree.display().to_string(), &rev]).map_err(|e| {
            anyhow::anyhow!(
                "--rev {rev}: git cannot check it out: {e}\n  hint: give a branch, tag or commit of this repository (`git rev-parse {rev}` names one)"
            )
        })?;
        out.trees.push(tree.clone());
        out.servers.push((name, tree.join(&inside)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::named;

    #[test]
    fn a_revision_is_named_as_given_or_after_itself() {
        assert_eq!(named("base=main"), ("base".into(), "main".into()));
        assert_eq!(named("HEAD"), ("head".into(), "HEAD".into()));
        assert_eq!(named("v1.2"), ("v1-2".into(), "v1.2".into()));
        assert_eq!(named("origin/main~3"), ("origin-main-3".into(), "origin/main~3".into()));
    }
}
