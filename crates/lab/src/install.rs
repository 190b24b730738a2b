//! Installing what the lab needs from the machine's package manager (Debian's apt-get, as root),
//! and running such a command to completion within a bound. Setup and services both call it; it
//! depends on neither.

/// Runs a command to completion with a timeout, returning stdout or a message with stderr.
pub(crate) fn run_bounded(cmd: &mut std::process::Command, timeout: std::time::Duration) -> Result<String, String> {
    use std::io::Read;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let mut out_pipe = child.stdout.take().ok_or("stdout was not piped")?;
    let mut err_pipe = child.stderr.take().ok_or("stderr was not piped")?;
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{:?} did not finish within {timeout:?}", cmd.get_program()));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (out, err) = (out_t.join().unwrap_or_default(), err_t.join().unwrap_or_default());
    if status.success() {
        Ok(out)
    } else {
        Err(format!("{:?} exited with {status}: {}", cmd.get_program(), err.trim()))
    }
}

/// Installs Debian packages with apt-get when a binary is missing (we run as root on the lab machine).
pub(crate) fn apt_install(packages: &[String]) -> Result<(), String> {
    if packages.is_empty() {
        return Ok(());
    }
    let missing: Vec<&String> = packages
        .iter()
        .filter(|p| {
            !std::process::Command::new("dpkg")
                .args(["-s", p])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let long = std::time::Duration::from_secs(900);
    let mut update = std::process::Command::new("apt-get");
    update.arg("update").env("DEBIAN_FRONTEND", "noninteractive");
    run_bounded(&mut update, long)?;
    let mut install = std::process::Command::new("apt-get");
    install.args(["install", "-y", "--no-install-recommends"]).args(&missing).env("DEBIAN_FRONTEND", "noninteractive");
    run_bounded(&mut install, long).map(|_| ())
}
