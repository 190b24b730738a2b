//! Readiness against real processes: a server that listens at once but answers HTTP only later (as a
//! prefork master does while its workers import the application) is not ready until it answers; one
//! that never answers, or exits, gets a clear error within the bounded wait.

use crate::common;

use bakeoff_lab::machine::process::{free_port, Launch, ServerProcess};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Binds and listens at once, sleeps `delay` seconds, then answers every request with a 404.
const LATE_SERVER: &str = r#"
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
time.sleep(float(sys.argv[2]))
while True:
    c, _ = s.accept()
    c.recv(4096)
    c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.close()
"#;

fn start(dir: &Path, name: &str, command: &str) -> ServerProcess {
    ServerProcess::start(Launch { name, command, dir, env: &BTreeMap::new(), cpus: &[], log: dir.join(format!("{name}.log")), netns: None })
        .expect("sh starts")
}

/// A free port on loopback, and its address.
fn free_addr() -> (u16, SocketAddr) {
    let port = free_port();
    (port, ([127, 0, 0, 1], port).into())
}

fn late_server(dir: &Path, port: u16, delay_s: f64) -> ServerProcess {
    std::fs::write(dir.join("late.py"), LATE_SERVER).unwrap();
    start(dir, "late", &format!("exec python3 late.py {port} {delay_s}"))
}

#[test]
fn listening_is_not_ready_until_the_server_answers() {
    let dir = common::Scratch::new("readiness-late-answer");
    let (port, addr) = free_addr();
    let mut server = late_server(&dir.dir, port, 2.0);
    // Listening comes first (well before the answer)...
    let listening = server.wait_ready(addr, Duration::from_secs(10)).unwrap();
    assert!(listening < Duration::from_millis(1500), "listening took {listening:?}");
    // ...and the HTTP wait lasts until the answer, 404 included.
    let answering = server.wait_answering(addr, "/", Duration::from_secs(10)).unwrap();
    assert!(answering >= Duration::from_millis(1500), "answered after {answering:?}, before the server could");
    assert!(answering < Duration::from_secs(6), "answered after {answering:?}");
    server.stop(Duration::from_secs(2));
}

#[test]
fn a_server_that_never_answers_fails_within_the_timeout_with_a_hint() {
    let dir = common::Scratch::new("readiness-never-answers");
    let (port, addr) = free_addr();
    let mut server = late_server(&dir.dir, port, 3600.0);
    let started = std::time::Instant::now();
    let err = server.wait_answering(addr, "/", Duration::from_secs(2)).unwrap_err().to_string();
    assert!(started.elapsed() < Duration::from_secs(4), "the wait is bounded: {:?}", started.elapsed());
    assert!(err.contains("accepted connections but sent no HTTP answer to GET /"), "{err}");
    assert!(err.contains("start.ready_timeout"), "{err}");
    server.stop(Duration::from_secs(2));
}

#[test]
fn an_exit_while_waiting_for_the_answer_is_noticed_at_once() {
    let dir = common::Scratch::new("readiness-exits");
    let (port, addr) = free_addr();
    // Listens, then dies before answering (a worker that fails to import the application).
    std::fs::write(
        dir.dir.join("dies.py"),
        "import socket, sys, time\ns = socket.socket()\ns.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(8)\ntime.sleep(1)\nsys.exit(3)\n",
    )
    .unwrap();
    let mut server = start(&dir.dir, "dies", &format!("exec python3 dies.py {port}"));
    let started = std::time::Instant::now();
    let err = server.wait_answering(addr, "/", Duration::from_secs(30)).unwrap_err().to_string();
    assert!(started.elapsed() < Duration::from_secs(5), "noticed after {:?}", started.elapsed());
    assert!(err.contains("before answering HTTP") || err.contains("before listening"), "{err}");
    server.stop(Duration::from_secs(2));
}
