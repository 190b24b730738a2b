//! `bakeoff agent` (hidden): what a controller runs on a client or server host over its session. It
//! answers JSON lines on stdin with JSON lines on stdout and exits when its input ends.

use std::path::PathBuf;
use std::process::ExitCode;

/// Where the toolchains a server host builds stacks with install by default (rustup's, the Go
/// tarball's, `go install`'s), which a non-login ssh session's PATH lacks.
const TOOLCHAIN_DIRS: &[&str] = &["~/.cargo/bin", "/usr/local/go/bin", "~/go/bin"];

pub fn run() -> anyhow::Result<ExitCode> {
    with_toolchains_on_path();
    let input = std::io::BufReader::new(std::io::stdin());
    // A closed output means the controller went away: exiting then is the intended end.
    let _ = bakeoff_lab::remote::agent::serve(bakeoff_cli::identity(), input, std::io::stdout().lock());
    Ok(ExitCode::SUCCESS)
}

/// Appends each toolchain folder that exists and is not on PATH yet, as a login shell's profile
/// would, so a stack set up over ssh finds `cargo` and `go` where a user's shell finds them.
fn with_toolchains_on_path() {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for d in TOOLCHAIN_DIRS {
        let dir = match d.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(d),
        };
        if dir.is_dir() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    if let Ok(path) = std::env::join_paths(dirs) {
        // Before any thread starts: nothing else reads the environment yet.
        std::env::set_var("PATH", path);
    }
}
