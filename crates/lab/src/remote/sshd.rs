//! An OpenSSH server inside a test namespace (Debian's openssh-server): a throwaway host key, client
//! key, authorized_keys, known_hosts and config in a temporary folder, started in the foreground as
//! this process's child and stopped by its pid. It is how the tests use `ssh://` placements for real.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::error::HostError;

/// Where Debian installs the server.
pub const SSHD: &str = "/usr/sbin/sshd";

/// A running sshd the test owns; dropping it stops the server by its pid and removes its folder.
pub struct Sshd {
    child: Child,
    dir: PathBuf,
    addr: Ipv4Addr,
}

impl Sshd {
    /// Starts sshd in namespace `ns`, listening on `addr:22`, accepting the key it makes for root.
    pub fn start(ns: &str, addr: Ipv4Addr) -> Result<Sshd, HostError> {
        Sshd::start_with(ns, addr, None)
    }

    /// Starts another sshd, in namespace `ns` on `addr:22`, that accepts `first`'s key for root and
    /// whose host key joins `first`'s known_hosts: one identity and one known_hosts reach both.
    pub fn start_beside(first: &Sshd, ns: &str, addr: Ipv4Addr) -> Result<Sshd, HostError> {
        Sshd::start_with(ns, addr, Some(first))
    }

    fn start_with(ns: &str, addr: Ipv4Addr, first: Option<&Sshd>) -> Result<Sshd, HostError> {
        if !Path::new(SSHD).exists() {
            return Err(topology(
                "finding sshd",
                format!("{SSHD} is missing"),
                "install Debian's openssh-server (scripts/install-deps.sh does)",
            ));
        }
        let dir = std::env::temp_dir().join(format!("bakeoff-sshd-{ns}"));
        std::fs::create_dir_all(&dir).map_err(|e| topology("creating the sshd folder", e.to_string(), "check /tmp is writable"))?;
        keygen(&dir.join("host_key"))?;
        keygen(&dir.join("id"))?;
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let known = format!("{addr} {}", read("host_key.pub"));
        write(&dir.join("known_hosts"), &known)?;
        match first {
            Some(f) => {
                write(&dir.join("authorized_keys"), &std::fs::read_to_string(f.dir.join("id.pub")).unwrap_or_default())?;
                let theirs = std::fs::read_to_string(f.known_hosts()).unwrap_or_default();
                write(&f.known_hosts(), &format!("{}\n{known}", theirs.trim_end()))?;
            }
            None => write(&dir.join("authorized_keys"), &read("id.pub"))?,
        }
        write(&dir.join("sshd_config"), &config(&dir, addr))?;
        // sshd refuses to start without its privilege-separation folder.
        std::fs::create_dir_all("/run/sshd").map_err(|e| topology("creating /run/sshd", e.to_string(), "run as root"))?;
        let log =
            std::fs::File::create(dir.join("sshd.log")).map_err(|e| topology("creating the sshd log", e.to_string(), "check /tmp"))?;
        let child = Command::new("ip")
            .args(["netns", "exec", ns, SSHD, "-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| topology("starting sshd", e.to_string(), "install iproute2 and openssh-server"))?;
        let mut s = Sshd { child, dir, addr };
        s.wait_listening()?;
        Ok(s)
    }

    fn wait_listening(&mut self) -> Result<(), HostError> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let to = SocketAddr::from((self.addr, 22));
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                let log = std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default();
                return Err(topology("starting sshd", format!("it exited ({st}): {}", log.trim()), "see the sshd log above"));
            }
            if TcpStream::connect_timeout(&to, Duration::from_millis(100)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(topology("starting sshd", format!("{to} did not accept a connection within 5 s"), "see the sshd log in the temporary folder"))
    }

    /// The sshd process's pid (the test checks it is gone afterwards).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The private key that logs in as root.
    pub fn identity(&self) -> PathBuf {
        self.dir.join("id")
    }

    /// A known_hosts file holding this server's key.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid, which is not reaped yet, so not reused.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                let _ = std::fs::remove_dir_all(&self.dir);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(dir: &Path, addr: Ipv4Addr) -> String {
    format!(
        "Port 22\nListenAddress {addr}\nHostKey {hk}\nAuthorizedKeysFile {ak}\nUsePAM no\nStrictModes no\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
         PidFile none\nLogLevel ERROR\n",
        hk = dir.join("host_key").display(),
        ak = dir.join("authorized_keys").display()
    )
}

fn keygen(path: &Path) -> Result<(), HostError> {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(path.with_extension("pub"));
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "bakeoff-test", "-f"])
        .arg(path)
        .output()
        .map_err(|e| topology("running ssh-keygen", e.to_string(), "install openssh-client"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(topology("running ssh-keygen", String::from_utf8_lossy(&out.stderr).trim().to_string(), "install openssh-client"))
}

fn write(path: &Path, text: &str) -> Result<(), HostError> {
    std::fs::write(path, text).map_err(|e| topology("writing the sshd files", format!("{}: {e}", path.display()), "check /tmp is writable"))
}

fn topology(step: &str, cause: String, hint: &str) -> HostError {
    HostError::Topology { step: step.into(), cause, hint: hint.into() }
}
