//! The namespace lab the host tests share: two client namespaces and a server one, python's HTTP
//! server in the server's (started and stopped by its pid), sshd in `client-a`, nginx for the bench,
//! and checks that nothing is left behind.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bakeoff_lab::remote::netns::{can_build, Topology};
use bakeoff_lab::remote::session::SessionOptions;
use bakeoff_lab::remote::sshd::Sshd;
use bakeoff_model::plan::place::Place;

pub const PORT: u16 = 8080;

/// An HTTP/1.1 keep-alive server answering `Hello World!`, small enough to read here.
pub const SERVER: &str = r#"
import sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "12")
        self.end_headers()
        self.wfile.write(b"Hello World!")
    def log_message(self, *args):
        pass
ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), H).serve_forever()
"#;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_bakeoff")
}

pub fn no_root(test: &str) -> bool {
    if can_build() {
        return false;
    }
    println!("SKIPPED {test}: network namespaces and sshd need root (run the tests as root)");
    true
}

/// The test server, inside its namespace, stopped by its pid.
pub struct Server(pub Child);

impl Server {
    pub fn start(ns: &str, addr: Ipv4Addr) -> Server {
        let child = Command::new("ip")
            .args(["netns", "exec", ns, "/usr/bin/python3", "-c", SERVER, &addr.to_string(), &PORT.to_string()])
            .stdin(Stdio::null())
            // Connections the load generator drops at its end are tracebacks there, not failures.
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 starts");
        let s = Server(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&SocketAddr::from((addr, PORT)), Duration::from_millis(100)).is_err() {
            assert!(Instant::now() < deadline, "the test server did not listen on {addr}:{PORT}");
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Two clients and a server; sshd in `client-a`.
pub struct Lab {
    // Fields drop in order: processes first, the namespaces last.
    pub server: Server,
    pub sshd: Sshd,
    pub topo: Topology,
}

impl Lab {
    pub fn new() -> Lab {
        let topo = Topology::build(&["client-a", "client-b", "server"]).expect("the topology builds");
        let server = Server::start(topo.ns("server"), topo.addr("server"));
        let sshd = Sshd::start(topo.ns("client-a"), topo.addr("client-a")).expect("sshd starts");
        Lab { server, sshd, topo }
    }

    pub fn places(&self) -> Vec<Place> {
        let ssh = Place::Ssh { user: "root".into(), host: self.topo.addr("client-a").to_string(), port: 22 };
        vec![ssh, Place::Netns(self.topo.ns("client-b").to_string())]
    }

    pub fn options(&self) -> SessionOptions {
        let mut o = SessionOptions::new(bin());
        o.ssh_identity = Some(self.sshd.identity());
        o.ssh_known_hosts = Some(self.sshd.known_hosts());
        o
    }

    pub fn url(&self) -> String {
        format!("http://{}:{PORT}/", self.topo.addr("server"))
    }

    /// Stops everything and checks no namespace and none of `pids` is left.
    pub fn finish(self, pids: &[u32]) {
        let names = self.topo.namespaces();
        let sshd_pid = self.sshd.pid();
        let server_pid = self.server.0.id();
        drop(self);
        let listed = String::from_utf8(Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).unwrap();
        for n in &names {
            assert!(!listed.lines().any(|l| l.split_whitespace().next() == Some(n)), "namespace {n} is left: {listed}");
        }
        for p in pids.iter().chain([&sshd_pid, &server_pid]) {
            assert!(gone(*p, Duration::from_secs(3)), "process {p} is left");
        }
    }
}

/// True once `pid` no longer exists (or is a zombie nobody will wait for: not ours).
pub fn gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// nginx with one worker answering `Hello World!` on loopback and on the controller's address of
/// the topology, so the same server is loaded over loopback (`local`) and over the veth (`netns:`).
pub struct Nginx(pub Child, std::path::PathBuf);

impl Nginx {
    pub fn start(addrs: &[Ipv4Addr], port: u16) -> Nginx {
        let dir = std::env::temp_dir().join(format!("bakeoff-hosts-nginx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let listen: String = addrs.iter().map(|a| format!("listen {a}:{port}; ")).collect();
        let d = dir.display();
        let conf = format!(
            "worker_processes 1; error_log {d}/error.log warn; pid {d}/nginx.pid; events {{ worker_connections 4096; }}\n\
             http {{ access_log off; keepalive_requests 100000000; client_body_temp_path {d}/b; proxy_temp_path {d}/p;\n\
             fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s; default_type text/plain;\n\
             server {{ {listen} location / {{ return 200 \"Hello World!\"; }} }} }}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = Command::new("/usr/sbin/nginx")
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .args(["-g", "daemon off; master_process off;"])
            .stdin(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let n = Nginx(child, dir);
        for a in addrs {
            let deadline = Instant::now() + Duration::from_secs(5);
            while TcpStream::connect_timeout(&SocketAddr::from((*a, port)), Duration::from_millis(100)).is_err() {
                assert!(Instant::now() < deadline, "nginx did not listen on {a}:{port}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        n
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.1);
    }
}
