//! The path between a client host and the server host, measured by their agents before the load:
//! the round trip as the median of TCP connects to the server's own address (the kernel answers a
//! SYN with its SYN-ACK, so no server code is timed), and the link's ceiling each way: the bytes a
//! short, bounded send reaches a sink on the server host with, then the bytes the sink sends back
//! for as long (responses cross the link that way). Both go only to the address the load does.

use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::protocol::PathMeasure;

/// How long a connect may take before it counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long the sender waits for the sink's count after its last byte.
const COUNT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest the sink sends back, whatever the upload took: the probe stays short and bounded.
const BACK_MAX: Duration = Duration::from_secs(2);
/// What the probe's sends are made of: large enough that a write's cost is the link's, not the call's.
const CHUNK: usize = 256 * 1024;

/// Listens on `bind`:0 for `open`, counting what each connection sends and answering the count
/// (8 bytes, big-endian) once the sender shuts its side, then sending zeros back for as long as the
/// upload took (at most [`BACK_MAX`]); returns the port. Connections are served one at a time, so
/// probes from several clients never share the link.
pub(crate) fn open_sink(bind: &str, open: Duration) -> Result<u16, String> {
    let ip: IpAddr = bind.parse().map_err(|_| format!("`{bind}` is not an IP address"))?;
    let listener = TcpListener::bind((ip, 0)).map_err(|e| format!("cannot listen on {ip} there: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + open;
    std::thread::Builder::new()
        .name("bakeoff-sink".into())
        .spawn(move || {
            while Instant::now() < deadline {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let _ = count_into(conn, deadline);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(port)
}

/// As [`open_sink`], the listener made inside network namespace `netns` (this process's own for
/// None): the far end of a probe to a server the lab starts in a namespace of this machine.
pub(crate) fn open_sink_in(netns: Option<&str>, bind: &str, open: Duration) -> Result<u16, String> {
    let bind = bind.to_string();
    in_netns(netns, move || open_sink(&bind, open))?
}

/// As [`probe`], from inside network namespace `netns` (this process's own for None): the path
/// from servers the lab starts in a namespace of this machine.
pub(crate) fn probe_in(
    netns: Option<&str>,
    target: &str,
    connects: u32,
    sink: Option<&str>,
    send: Duration,
) -> Result<PathMeasure, String> {
    let (target, sink) = (target.to_string(), sink.map(str::to_string));
    in_netns(netns, move || probe(&target, connects, sink.as_deref(), send))
}

/// Runs `f` on a thread of its own inside network namespace `netns` (here for None): setns moves
/// only the calling thread, and what `f` opens there (a listener, connections) stays there.
fn in_netns<T: Send + 'static>(netns: Option<&str>, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let Some(name) = netns else { return Ok(f()) };
    let ns =
        std::fs::File::open(std::path::Path::new("/run/netns").join(name)).map_err(|e| format!("cannot enter namespace {name}: {e}"))?;
    std::thread::spawn(move || {
        use std::os::fd::AsRawFd;
        // SAFETY: setns(2) on a descriptor of a namespace file opened just now, for this thread only.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(format!("cannot enter namespace: {}", std::io::Error::last_os_error()));
        }
        Ok(f())
    })
    .join()
    .map_err(|_| "the namespace's thread panicked".to_string())?
}

fn count_into(mut conn: TcpStream, deadline: Instant) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(10))))?;
    let mut buf = vec![0u8; CHUNK];
    let mut total: u64 = 0;
    let mut first: Option<Instant> = None;
    loop {
        match conn.read(&mut buf)? {
            0 => break,
            n => {
                first.get_or_insert_with(Instant::now);
                total += n as u64;
            }
        }
    }
    conn.write_all(&total.to_be_bytes())?;
    let back = first.map_or(Duration::ZERO, |t| t.elapsed()).min(BACK_MAX);
    conn.set_write_timeout(Some(back + COUNT_TIMEOUT))?;
    let t0 = Instant::now();
    while t0.elapsed() < back {
        conn.write_all(&buf)?;
    }
    conn.shutdown(Shutdown::Write)
}

/// Measures the path to `target` (`connects` connects) and, with a sink, the ceiling over `send`.
pub(crate) fn probe(target: &str, connects: u32, sink: Option<&str>, send: Duration) -> PathMeasure {
    let mut m = PathMeasure {
        target: target.to_string(),
        connects: 0,
        rtt_median_us: 0.0,
        rtt_min_us: 0.0,
        rtt_max_us: 0.0,
        sent_bytes: None,
        ceiling_bytes_per_s: None,
        back_bytes: None,
        ceiling_back_bytes_per_s: None,
        problem: None,
    };
    let addr: SocketAddr = match target.parse() {
        Ok(a) => a,
        Err(_) => {
            m.problem = Some(format!("`{target}` is not an ip:port"));
            return m;
        }
    };
    let mut rtts: Vec<f64> = (0..connects)
        .filter_map(|_| {
            let t0 = Instant::now();
            let c = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).ok()?;
            let us = t0.elapsed().as_secs_f64() * 1e6;
            drop(c);
            Some(us)
        })
        .collect();
    rtts.sort_by(f64::total_cmp);
    m.connects = rtts.len() as u32;
    if let (Some(lo), Some(hi)) = (rtts.first(), rtts.last()) {
        (m.rtt_min_us, m.rtt_max_us, m.rtt_median_us) = (*lo, *hi, rtts[rtts.len() / 2]);
    } else {
        m.problem = Some(format!("no TCP connect to {addr} succeeded"));
    }
    if let Some(sink) = sink {
        match send_to(sink, send) {
            Ok(Transfer { there, there_s, back, back_s }) => {
                m.sent_bytes = Some(there);
                m.ceiling_bytes_per_s = Some(there as f64 / there_s.max(1e-9));
                m.back_bytes = Some(back);
                m.ceiling_back_bytes_per_s = Some(back as f64 / back_s.max(1e-9)).filter(|_| back > 0);
            }
            Err(e) => m.problem = Some(format!("the link ceiling to {sink}: {e}")),
        }
    }
    m
}

/// What one probe moved each way, and over how long.
struct Transfer {
    /// Bytes the sink counted.
    there: u64,
    /// Seconds from the first write to the sink's count arriving, so what sat in socket buffers
    /// is not counted as delivered.
    there_s: f64,
    /// Bytes the sink sent back and this end read.
    back: u64,
    /// Seconds from the count's arrival to the sink's end of stream.
    back_s: f64,
}

/// Sends zeros to `sink` for `send`, waits for its count, then reads what it sends back.
fn send_to(sink: &str, send: Duration) -> Result<Transfer, String> {
    let addr: SocketAddr = sink.parse().map_err(|_| format!("`{sink}` is not an ip:port"))?;
    let mut conn = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(|e| format!("cannot connect: {e}"))?;
    conn.set_write_timeout(Some(send + COUNT_TIMEOUT)).map_err(|e| e.to_string())?;
    let mut chunk = vec![0u8; CHUNK];
    let t0 = Instant::now();
    while t0.elapsed() < send {
        conn.write_all(&chunk).map_err(|e| format!("sending: {e}"))?;
    }
    conn.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
    conn.set_read_timeout(Some(COUNT_TIMEOUT)).map_err(|e| e.to_string())?;
    let mut count = [0u8; 8];
    conn.read_exact(&mut count).map_err(|e| format!("no count back: {e}"))?;
    let there_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let mut back: u64 = 0;
    loop {
        match conn.read(&mut chunk).map_err(|e| format!("receiving: {e}"))? {
            0 => break,
            n => back += n as u64,
        }
    }
    Ok(Transfer { there: u64::from_be_bytes(count), there_s, back, back_s: t1.elapsed().as_secs_f64() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_has_a_round_trip_and_a_ceiling() {
        let port = open_sink("127.0.0.1", Duration::from_secs(3)).unwrap();
        let target = TcpListener::bind("127.0.0.1:0").unwrap();
        let m = probe(&target.local_addr().unwrap().to_string(), 5, Some(&format!("127.0.0.1:{port}")), Duration::from_millis(200));
        assert_eq!(m.connects, 5, "{m:?}");
        assert!(m.rtt_median_us > 0.0 && m.rtt_min_us <= m.rtt_median_us && m.rtt_median_us <= m.rtt_max_us, "{m:?}");
        assert!(m.ceiling_bytes_per_s.unwrap() > 1e6 && m.sent_bytes.unwrap() > 0, "{m:?}");
        // Back for about as long as the send took (200 ms, and the count's wait): the same order.
        assert!(m.ceiling_back_bytes_per_s.unwrap() > 1e6 && m.back_bytes.unwrap() > 0, "{m:?}");
        let ratio = m.ceiling_back_bytes_per_s.unwrap() / m.ceiling_bytes_per_s.unwrap();
        assert!((0.1..10.0).contains(&ratio), "loopback is alike both ways: {m:?}");
        assert!(open_sink("not-an-ip", Duration::from_secs(1)).is_err());
    }
}
