//! What several test binaries of the CLI share: a Python fixture server started on a free
//! loopback port and stopped by its PID when dropped.

// Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `python3 SCRIPT` with `PORT` and `env`, answering connections once `start` returns.
pub struct Fixture {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Fixture {
    /// Starts `script` (a path under the repository's root) and waits up to 10 s for it to listen.
    pub fn start(script: &str, env: &[(&str, &str)]) -> Fixture {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("python3")
            .arg(root().join(script))
            .env("PORT", port.to_string())
            .envs(env.iter().copied())
            // A timed load ends with answers in flight: the stdlib server prints each broken pipe.
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "{script} did not listen within 10 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        Fixture { child, port }
    }

    /// The shop of tests/fixtures/shop with `SHOP_CHEAT=cheat` ("" for the honest one).
    pub fn shop(cheat: &str) -> Fixture {
        Fixture::start("tests/fixtures/shop/server.py", &[("SHOP_CHEAT", cheat)])
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
