//! Which addresses listen on a port, read from /proc/net/tcp and tcp6: a stack must listen on
//! loopback only, so a benchmark never opens a port to the network.

use super::{fail, Checks};
use crate::host::sockets::{is_loopback, listeners};
use bakeoff_model::results::CheckScope;
use std::net::IpAddr;

/// Addresses in LISTEN state on `port`, from /proc/net/tcp and /proc/net/tcp6.
pub fn listening_addresses(port: u16) -> Vec<IpAddr> {
    listeners().into_iter().filter(|l| l.addr.port() == port).map(|l| l.addr.ip()).collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

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
