//! Which addresses listen on a port, read from /proc/net/tcp and tcp6 (of the server's own network
//! namespace): a stack must listen on `HOST` only (loopback unless the run places the server on a
//! host of its own), so a benchmark never opens a port to every network.

use super::{fail, Checks};
use crate::machine::sockets::{is_loopback, listeners_seen_by};
use bakeoff_model::records::results::CheckScope;
use std::net::{IpAddr, SocketAddr};

/// Addresses in LISTEN state on `port`, in the network namespace of `pid` (this process's for None).
pub fn listening_addresses(port: u16, pid: Option<u32>) -> Vec<IpAddr> {
    listeners_seen_by(pid).into_iter().filter(|l| l.addr.port() == port).map(|l| l.addr.ip()).collect()
}

/// The server at `addr` listens there, and on no address but loopback besides.
/// Without a server tree (a baseline), this process's namespace is read.
pub(super) fn check_own_address_only(checks: &mut Checks, addr: SocketAddr, server: Option<&dyn super::ServerTree>) {
    let port = addr.port();
    let addrs = match server {
        Some(tree) => tree.listening_on(port),
        None => listening_addresses(port, None),
    };
    let outcome = if addrs.is_empty() {
        fail(format!("no listening socket on port {port} found in /proc/net/tcp*"))
    } else if let Some(bad) = addrs.iter().find(|a| !is_loopback(a) && **a != addr.ip()) {
        fail(format!("listens on {bad}:{port}; bind {} only ($HOST) so the benchmark is not open to every network", addr.ip()))
    } else {
        Ok(())
    };
    checks.add(CheckScope::Stack, "listens on its address only", "/", outcome);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn finds_a_loopback_listener_and_a_wildcard_one() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(listening_addresses(port, None), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        assert_eq!(listening_addresses(port, Some(std::process::id())), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)], "as this process sees it");
        let w = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let wport = w.local_addr().unwrap().port();
        assert_eq!(listening_addresses(wport, None), vec![IpAddr::V4(Ipv4Addr::UNSPECIFIED)]);
        assert!(!is_loopback(&IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
    }
}
