//! Listening TCP sockets, read from /proc/net/tcp and tcp6: which addresses listen on a port, and
//! which ports a process tree listens on (matched by socket inode through /proc/PID/fd), so a server
//! that ignores $PORT or binds every interface is told so by name.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// One socket in LISTEN state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    /// The address and port it is bound to.
    pub addr: SocketAddr,
    /// Its socket inode (what /proc/PID/fd links name).
    inode: u64,
}

/// Every listening TCP socket of this process's network namespace.
pub fn listeners() -> Vec<Listener> {
    listeners_seen_by(None)
}

/// Every listening TCP socket of the network namespace `pid` is in (this process's for None): a
/// server started in a namespace of its own listens there, not here.
pub fn listeners_seen_by(pid: Option<u32>) -> Vec<Listener> {
    let dir = pid.map_or("/proc/net".to_string(), |p| format!("/proc/{p}/net"));
    let mut out = Vec::new();
    for (file, v6) in [("tcp", false), ("tcp6", true)] {
        let Ok(text) = std::fs::read_to_string(format!("{dir}/{file}")) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // f[1] = local "ADDR:PORT" in hex, f[3] = state (0A = LISTEN), f[9] = inode
            if f.len() < 10 || f[3] != "0A" {
                continue;
            }
            let Some((addr_hex, port_hex)) = f[1].split_once(':') else { continue };
            let (Some(ip), Ok(port), Ok(inode)) = (parse_addr(addr_hex, v6), u16::from_str_radix(port_hex, 16), f[9].parse()) else {
                continue;
            };
            out.push(Listener { addr: SocketAddr::new(ip, port), inode });
        }
    }
    out
}

/// The listening sockets the processes `pids` hold open.
pub fn listeners_of(pids: &[u32]) -> Vec<SocketAddr> {
    let mut inodes = BTreeSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        for fd in fds.flatten() {
            let Ok(link) = std::fs::read_link(fd.path()) else { continue };
            let link = link.to_string_lossy();
            if let Some(inode) = link.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')).and_then(|n| n.parse::<u64>().ok()) {
                inodes.insert(inode);
            }
        }
    }
    let seen = listeners_seen_by(pids.first().copied().filter(|p| std::path::Path::new(&format!("/proc/{p}/net")).exists()));
    let mut out: Vec<SocketAddr> = seen.into_iter().filter(|l| inodes.contains(&l.inode)).map(|l| l.addr).collect();
    out.sort();
    out.dedup();
    out
}

fn parse_addr(hex: &str, v6: bool) -> Option<IpAddr> {
    if !v6 {
        let n = u32::from_str_radix(hex, 16).ok()?;
        return Some(IpAddr::V4(Ipv4Addr::from(n.to_le_bytes())));
    }
    // Four 32-bit words, each in host (little-endian) order.
    let mut bytes = [0u8; 16];
    for w in 0..4 {
        let word = u32::from_str_radix(hex.get(w * 8..w * 8 + 8)?, 16).ok()?;
        bytes[w * 4..w * 4 + 4].copy_from_slice(&word.to_le_bytes());
    }
    Some(IpAddr::V6(Ipv6Addr::from(bytes)))
}

/// Loopback, including IPv4 loopback mapped into IPv6.
pub fn is_loopback(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().map(|v4| v4.is_loopback()).unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_this_process_listeners_by_inode() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        assert!(listeners_of(&[std::process::id()]).contains(&addr));
        assert!(!listeners_of(&[u32::MAX]).contains(&addr), "another pid holds nothing");
        assert!(!is_loopback(&IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
        assert!(is_loopback(&"::ffff:127.0.0.1".parse().unwrap()));
    }
}
