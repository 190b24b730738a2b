//! Where a run's servers and services run (this machine, a namespace, a host of their own) and
//! the meters the schedules read a cell's measured tree with (its server's, or a baseline's
//! upstream nginx), wherever it runs: its CPU so far, its samples over a measurement, its quiet; on
//! this machine from /proc, on a server or services host through its agent. A host lost on the way
//! stops the run after the step at hand. The one place a schedule asks "where is it?".

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bakeoff_model::records::noise::HostNoise;

use crate::machine::sampler::{self, Sampler, SAMPLE_INTERVAL};
use crate::remote::protocol::wall_ns;
use crate::remote::servers::RemoteServers;
use crate::remote::HostError;
use crate::run::cell::served::{Meter, ServerHost, Tree};
use crate::run::roles::RunHosts;
use crate::services::Services;

/// The run's hosts and the flag a lost host sets: what every meter reads a tree through.
pub(crate) struct Placement<'a> {
    /// The client hosts, the server host and the services host, when the run places any.
    pub(crate) hosts: RunHosts,
    cancel: &'a AtomicBool,
}

impl<'a> Placement<'a> {
    /// Everything on this machine; a host lost later sets `cancel`.
    pub(crate) fn local(cancel: &'a AtomicBool) -> Placement<'a> {
        Placement { hosts: RunHosts::local(), cancel }
    }

    /// The run's server host, when the servers have one.
    pub(crate) fn server_host(&self) -> Option<Rc<ServerHost>> {
        self.hosts.server_host.clone()
    }

    /// The host of a tree on a host of its own, with its pid there; None for a tree here (or when
    /// its host is not part of the run).
    fn host_of(&self, tree: Tree) -> Option<(Rc<ServerHost>, u32)> {
        match tree {
            Tree::Here(_) => None,
            Tree::OnHost(pid) => self.hosts.server_host.clone().map(|h| (h, pid)),
            Tree::OnServices(pid) => self.hosts.services_host.clone().map(|h| (h, pid)),
        }
    }

    /// The tree of a service's server (`pid` as its host numbers it), wherever the services run.
    pub(crate) fn service_tree(&self, pid: u32) -> Tree {
        if self.hosts.services_host.is_some() {
            Tree::OnServices(pid)
        } else {
            Tree::Here(pid)
        }
    }

    /// The upstream nginx's tree, when it runs.
    pub(crate) fn upstream_tree(&self, services: &Services) -> Option<Tree> {
        services.nginx.as_ref().map(|n| self.service_tree(n.pid()))
    }

    /// The services' pids on this machine's kernel (on a services host of another machine, none).
    pub(crate) fn services_here(&self, services: &Services) -> Vec<u32> {
        services.pids().into_iter().filter_map(|pid| self.pid_here(self.service_tree(pid))).collect()
    }

    /// CPU seconds the tree has used so far; 0 once its host is lost (the run then stops).
    pub(crate) fn tree_cpu(&self, tree: Tree) -> f64 {
        match (tree, self.host_of(tree)) {
            (Tree::Here(pid), _) => sampler::tree_cpu_seconds(pid),
            (_, Some((host, pid))) => self.on_host(&host, |s| s.tree(pid)).map_or(0.0, |t| t.cpu_s),
            (_, None) => 0.0,
        }
    }

    /// Starts sampling the tree from `zero` (times are relative to it) until the meter finishes;
    /// here, the load generator's `client_cpus` are watched for other processes too.
    pub(crate) fn meter(&self, tree: Tree, zero: Instant, client_cpus: &[usize]) -> Meter {
        match (tree, self.host_of(tree)) {
            (Tree::Here(pid), _) => Meter::Here(Sampler::start(pid, zero, SAMPLE_INTERVAL, client_cpus)),
            (_, Some((host, pid))) => {
                let zero_ns = wall_ns_at(zero);
                match self.on_host(&host, |s| s.watch(pid, zero_ns)) {
                    Some(()) => Meter::OnHost(host),
                    None => Meter::Nothing,
                }
            }
            (_, None) => Meter::Nothing,
        }
    }

    /// A watch of the services host's noise over a measurement from `zero`, when the services run
    /// on a host of their own on another machine than this one and the servers' (else their noise
    /// is this machine's probe's or the server host's); None when there is none to watch, or when
    /// the measured `tree` is there already (a baseline's nginx: its meter is that host's one
    /// watch).
    pub(crate) fn watch_services_host(&self, tree: Tree, zero: Instant, services: &Services) -> Option<Rc<ServerHost>> {
        let host = self.hosts.services_host.clone()?;
        if matches!(tree, Tree::OnServices(_)) || host.this_machine || self.hosts.server_host.as_ref().is_some_and(|s| Rc::ptr_eq(s, &host))
        {
            return None;
        }
        let pid = services.pids().into_iter().next()?;
        let zero_ns = wall_ns_at(zero);
        self.on_host(&host, |s| s.watch(pid, zero_ns)).map(|()| host)
    }

    /// What the services host's watch measured: its steal and other processes' CPU, as that host's
    /// row of the trial's noise.
    pub(crate) fn services_host_noise(&self, watch: Option<Rc<ServerHost>>) -> Option<HostNoise> {
        let host = watch?;
        let measured = self.on_host(&host, |s| s.finish())?;
        Some(HostNoise { host: host.host(), noise: measured.noise.server })
    }

    /// Waits at most `limit` for the tree to go quiet over `window`; None when it did (or exited),
    /// else the cores it used over the last window.
    pub(crate) fn wait_tree_quiet(&self, tree: Tree, window: Duration, limit: Duration) -> Option<f64> {
        match (tree, self.host_of(tree)) {
            (Tree::Here(pid), _) => sampler::wait_tree_quiet(pid, window, limit, || false),
            (_, Some((host, pid))) => self.on_host(&host, |s| s.quiet(pid, window, limit)).flatten(),
            (_, None) => None,
        }
    }

    /// The tree's leader as this machine numbers it, when this machine runs it (a host in a
    /// namespace of this machine does): its CPU is then the lab's own, not noise.
    pub(crate) fn pid_here(&self, tree: Tree) -> Option<u32> {
        match (tree, self.host_of(tree)) {
            (Tree::Here(pid), _) => Some(pid),
            (_, Some((host, pid))) => host.this_machine.then_some(pid),
            (_, None) => None,
        }
    }

    /// Calls `f` on a host's session; a lost session stops the run after the step at
    /// hand (what was measured is kept) and answers None.
    fn on_host<T>(&self, host: &ServerHost, f: impl FnOnce(&mut RemoteServers) -> Result<T, HostError>) -> Option<T> {
        match host.call(f) {
            Ok(v) => Some(v),
            Err(_) => {
                if host.lost().is_some() {
                    self.cancel.store(true, Ordering::Relaxed);
                }
                None
            }
        }
    }
}

/// `zero` on this machine's wall clock, ns since the epoch: the instant a host's watch starts at.
fn wall_ns_at(zero: Instant) -> u64 {
    let now = Instant::now();
    if zero >= now {
        wall_ns() + (zero - now).as_nanos() as u64
    } else {
        wall_ns().saturating_sub((now - zero).as_nanos() as u64)
    }
}
