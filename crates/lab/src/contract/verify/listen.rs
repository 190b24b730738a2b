//! Which addresses listen on a port, read from /proc/net/tcp and tcp6: a stack must listen on
//! loopback only, so a benchmark never opens a port to the network.

use super::{fail, Checks};
use bakeoff_model::results::CheckScope;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Addresses in LISTEN state on `port`, from /proc/net/tcp and /proc/net/tcp6.
pub fn listening_addresses(port: u16) -> Vec<IpAddr> {
    let mut out = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // f[1] = local "ADDR:PORT" in hex, f[3] = state (0A = LISTEN)
            if f.len() < 4 || f[3] != "0A" {
                continue;
            }
            let Some((addr_hex, port_hex)) = f[1].split_once(':') else { continue };
            if u16::from_str_radix(port_hex, 16).ok() != Some(port) {
                continue;
            }
            if let Some(ip) = parse_addr(addr_hex, v6) {
                out.push(ip);
            }
        }
    }
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

pub(super) fn check_loopback_only(checks: &mut Checks, port: u16) {
    let addrs = listening_addresses(port);
    let outcome = if addrs.is_empty() {
        fail(format!("no listening socket on port {port} found in /proc/net/tcp*"))
    } else if let Some(bad) = addrs.iter().find(|a| !is_loopback(a)) {
        fail(format!("listens on {bad}:{port}; bind 127.0.0.1 only so the benchmark is not open to the network"))
    } else {
        Ok(())
    };
    checks.add(CheckScope::Stack, "listens on loopback only", "/", outcome);
}

fn is_loopback(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().map(|v4| v4.is_loopback()).unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_loopback_listener_and_a_wildcard_one() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(listening_addresses(port), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        let w = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let wport = w.local_addr().unwrap().port();
        assert_eq!(listening_addresses(wport), vec![IpAddr::V4(Ipv4Addr::UNSPECIFIED)]);
        assert!(!is_loopback(&IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
    }
}
