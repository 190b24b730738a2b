//! Test helper: a certificate authority and a server certificate for 127.0.0.1 made by openssl in a
//! throwaway folder, and nginx on loopback serving hello (and 100 KB at /big) in every protocol the
//! load generator speaks: HTTP/1.1 plain, over TLS (1.2 and 1.3, or 1.2 only), HTTP/2 over TLS and
//! in cleartext, and HTTP/2 with few streams and few requests per connection. nginx is stopped (by
//! its PID) and the folder removed on drop.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The body every server answers.
pub const HELLO: &str = "Hello World!";

/// The size of the body at `/big`.
pub const BIG: usize = 100_000;

pub struct Nginx {
    dir: PathBuf,
    child: Child,
    /// HTTP/1.1 over TLS 1.2 and 1.3 (the server's default set).
    pub tls: u16,
    /// HTTP/1.1 over TLS 1.2 only.
    pub tls12_only: u16,
    /// HTTP/1.1, no TLS.
    pub plain: u16,
    /// HTTP/2 over TLS (ALPN h2).
    pub h2: u16,
    /// HTTP/2 in cleartext (prior knowledge).
    pub h2c: u16,
    /// HTTP/2 in cleartext allowing 4 streams per connection and 50 requests (then GOAWAY).
    pub h2c_limited: u16,
}

impl Nginx {
    pub fn start() -> Nginx {
        let dir = std::env::temp_dir().join(format!("bakeoff-load-tls-{}-{:?}", std::process::id(), std::thread::current().id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        make_certificates(&dir, "ca", "server");
        make_certificates(&dir, "other-ca", "other-server");
        let [tls, tls12_only, plain, h2, h2c, h2c_limited] = [(); 6].map(|_| free_port());
        std::fs::create_dir_all(dir.join("html")).unwrap();
        std::fs::write(dir.join("html/big"), vec![b'x'; BIG]).unwrap();
        let d = dir.display();
        let locations = format!("location = /big {{ root {d}/html; }} location / {{ return 200 \"{HELLO}\"; }}");
        let server = |listen: String, extra: &str| format!("server {{ listen 127.0.0.1:{listen}; {extra} {locations} }}\n");
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/logs/error.log;\nevents {{ worker_connections 1024; }}\n\
             http {{\n  access_log off;\n  keepalive_requests 1000000;\n  ssl_certificate {d}/server.pem;\n  ssl_certificate_key {d}/server-key.pem;\n\
             ssl_session_cache shared:SSL:1m;\n  ssl_protocols TLSv1.2 TLSv1.3;\n{}{}{}{}{}{}}}\n",
            server(format!("{tls} ssl"), ""),
            server(format!("{tls12_only} ssl"), "ssl_protocols TLSv1.2;"),
            server(plain.to_string(), ""),
            server(format!("{h2} ssl http2"), ""),
            server(format!("{h2c} http2"), ""),
            server(format!("{h2c_limited} http2"), "http2_max_concurrent_streams 4; keepalive_requests 50;"),
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("nginx is installed (scripts/install-deps.sh)");
        let child = Command::new(nginx)
            .args([
                "-p",
                &dir.to_string_lossy(),
                "-c",
                &dir.join("nginx.conf").to_string_lossy(),
                "-e",
                &dir.join("logs/error.log").to_string_lossy(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let nginx = Nginx { dir, child, tls, tls12_only, plain, h2, h2c, h2c_limited };
        for port in [tls, tls12_only, plain, h2, h2c, h2c_limited] {
            wait_listening(port);
        }
        nginx
    }

    /// The PEM file of the authority that signed the server's certificate.
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// The PEM file of an authority that signed nothing this server uses.
    pub fn other_ca(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }

    pub fn url(&self, port: u16, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{port}/")
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // nginx in the foreground stops its workers on SIGTERM ("fast shutdown").
        // SAFETY: kill(2) on the PID of the child this value started and has not reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `NAME.pem` (a P-256 authority) and `LEAF.pem`/`LEAF-key.pem` (a P-256 certificate for IP
/// 127.0.0.1 that it signed).
fn make_certificates(dir: &Path, name: &str, leaf: &str) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl is installed");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let (ca, ca_key, key, csr, cert) =
        (format!("{name}.pem"), format!("{name}-key.pem"), format!("{leaf}-key.pem"), format!("{leaf}.csr"), format!("{leaf}.pem"));
    run(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        &ca_key,
        "-out",
        &ca,
        "-days",
        "2",
        "-subj",
        &format!("/CN={name}"),
    ]);
    run(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        &key,
        "-out",
        &csr,
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(dir.join(format!("{leaf}.ext")), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-out",
        &cert,
        "-days",
        "2",
        "-extfile",
        &format!("{leaf}.ext"),
    ]);
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nginx did not listen on {port} within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}
