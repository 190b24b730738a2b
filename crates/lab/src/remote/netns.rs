//! A test topology on this one machine: network namespaces joined by a bridge in a hub namespace of
//! their own, addresses in a private /24 picked here, and a link from the controller's namespace so
//! it can reach them (ssh). Names are unique to the process; the guard deletes everything it made,
//! also on panic. Namespaces share the machine's cores: they test topology and protocol, not capacity.

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::error::HostError;

/// Topologies made by this process so far: part of every name, so tests in parallel never collide.
static MADE: AtomicU32 = AtomicU32::new(0);

/// Namespaces and links this process made. Dropping it kills what still runs inside them (by pid)
/// and deletes every namespace and link.
#[derive(Debug)]
pub struct Topology {
    prefix: String,
    subnet: [u8; 3],
    hub: String,
    controller_link: String,
    roles: Vec<(String, String, Ipv4Addr)>,
}

impl Topology {
    /// One namespace per role (`client-a`, `server`...), each with `eth0` on the shared /24, its
    /// loopback up; the controller gets `.1`, the roles `.10` on.
    pub fn build(roles: &[&str]) -> Result<Topology, HostError> {
        let n = MADE.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let prefix = format!("bo-{pid}-{n}");
        let subnet = pick_subnet(pid, n)?;
        let mut t = Topology {
            hub: format!("{prefix}-hub"),
            controller_link: format!("bo{}c{n}", pid % 1_000_000),
            prefix,
            subnet,
            roles: Vec::new(),
        };
        t.build_hub()?;
        for (i, role) in roles.iter().enumerate() {
            t.add_role(role, i)?;
        }
        Ok(t)
    }

    fn build_hub(&mut self) -> Result<(), HostError> {
        let hub = self.hub.clone();
        ip(&["netns", "add", &hub])?;
        ip(&["-n", &hub, "link", "set", "lo", "up"])?;
        ip(&["-n", &hub, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &hub, "link", "set", "br0", "up"])?;
        // The controller's end stays in its own namespace, so ssh reaches the roles over the bridge.
        let link = self.controller_link.clone();
        ip(&["link", "add", &link, "type", "veth", "peer", "name", "vc", "netns", &hub])?;
        ip(&["-n", &hub, "link", "set", "vc", "master", "br0", "up"])?;
        ip(&["addr", "add", &format!("{}/24", self.addr_at(1)), "dev", &link])?;
        ip(&["link", "set", &link, "up"])
    }

    fn add_role(&mut self, role: &str, i: usize) -> Result<(), HostError> {
        let ns = format!("{}-{role}", self.prefix);
        let addr = self.addr_at(10 + i as u8);
        ip(&["netns", "add", &ns])?;
        self.roles.push((role.to_string(), ns.clone(), addr));
        let port = format!("v{i}");
        ip(&["-n", &self.hub, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", &ns])?;
        ip(&["-n", &self.hub, "link", "set", &port, "master", "br0", "up"])?;
        ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        ip(&["-n", &ns, "addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
        ip(&["-n", &ns, "link", "set", "eth0", "up"])
    }

    fn addr_at(&self, host: u8) -> Ipv4Addr {
        Ipv4Addr::new(self.subnet[0], self.subnet[1], self.subnet[2], host)
    }

    /// The namespace of `role`.
    pub fn ns(&self, role: &str) -> &str {
        &self.role(role).1
    }

    /// The address of `role` on the topology's /24.
    pub fn addr(&self, role: &str) -> Ipv4Addr {
        self.role(role).2
    }

    /// The controller's own address on the /24.
    pub fn controller_addr(&self) -> Ipv4Addr {
        self.addr_at(1)
    }

    /// Every namespace this topology made, the hub included.
    pub fn namespaces(&self) -> Vec<String> {
        std::iter::once(self.hub.clone()).chain(self.roles.iter().map(|r| r.1.clone())).collect()
    }

    fn role(&self, role: &str) -> &(String, String, Ipv4Addr) {
        self.roles.iter().find(|r| r.0 == role).unwrap_or_else(|| panic!("the topology has no role `{role}`"))
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for ns in self.namespaces() {
            kill_inside(&ns);
            let _ = ip(&["netns", "del", &ns]);
        }
        // Deleting the hub took the controller link's peer, and with it the link; this is in case.
        let _ = Command::new("ip").args(["link", "del", &self.controller_link]).output();
    }
}

/// Ends whatever still runs in a namespace this process made (pids from `ip netns pids`) and waits
/// for it, so the namespace really goes when it is deleted.
fn kill_inside(ns: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() else { return };
    let pids: Vec<i32> = String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse().ok()).collect();
    for &pid in &pids {
        // SAFETY: kill(2) with a pid read just now from the namespace this process made.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    for _ in 0..100 {
        if pids.iter().all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A 10.x.y.0/24 that no address of the controller's namespace is on, derived from the process so
/// that two processes building topologies at once pick different ones.
fn pick_subnet(pid: u32, n: u32) -> Result<[u8; 3], HostError> {
    let used = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for k in 0..64u32 {
        let x = 200 + ((pid / 251 + k) % 50) as u8;
        let y = ((pid + n * 17 + k * 31) % 251) as u8;
        if !used.contains(&format!(" 10.{x}.{y}.")) {
            return Ok([10, x, y]);
        }
    }
    Err(HostError::Topology {
        step: "picking a /24".into(),
        cause: "every candidate 10.x.y.0/24 is in use".into(),
        hint: "remove stale test links (`ip -o -4 addr`)".into(),
    })
}

fn ip(args: &[&str]) -> Result<(), HostError> {
    let out = Command::new("ip").args(args).output().map_err(|e| HostError::Topology {
        step: format!("ip {}", args.join(" ")),
        cause: e.to_string(),
        hint: "install iproute2".into(),
    })?;
    if out.status.success() {
        return Ok(());
    }
    Err(HostError::Topology {
        step: format!("ip {}", args.join(" ")),
        cause: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        hint: "namespaces need root (CAP_NET_ADMIN); run as root".into(),
    })
}

/// True when this process may create network namespaces (it runs as root).
pub fn can_build() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Deletes namespaces `bo-PID-*` whose process no longer exists (a run killed before its guard
/// could clean up), so they do not pile up; returns the names deleted.
pub fn sweep_stale() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else { return Vec::new() };
    let mut gone = Vec::new();
    for name in String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split_whitespace().next()) {
        let Some(pid) = name.strip_prefix("bo-").and_then(|r| r.split('-').next()).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() && ip(&["netns", "del", name]).is_ok() {
            gone.push(name.to_string());
        }
    }
    gone
}
