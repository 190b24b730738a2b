//! The agent (`bakeoff agent`): answers the controller's JSON-line requests on stdin with one line
//! each on stdout. It lives exactly as long as its session: at stdin's end (the controller or ssh
//! went away) a running load is cancelled, the servers it started are stopped and the agent exits,
//! so nothing is left behind.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::Duration;

use bakeoff_load::{encode_histogram, run_observed};

use super::path::{open_sink, probe};
use super::protocol::{wall_ns, ClientResult, Hello, Identity, MachineFacts, Reply, Request, RunSpec, StepHistograms};
use super::started::{self, Started};
use super::watch::{check, Watch};
use crate::machine::noise::{Measured, NoiseProbe};
use crate::machine::provenance::allowed_cpus;

/// How far past its start instant a load may arrive and still run: more means the clock offset or
/// the session is off, and the clients would not start together.
const LATE_LIMIT: Duration = Duration::from_millis(100);

/// Serves requests from `input` until `bye` or its end; replies go to `output`.
pub fn serve<R, W>(identity: Identity, input: R, mut output: W) -> std::io::Result<()>
where
    R: BufRead + Send + 'static,
    W: Write,
{
    let cancel = Arc::new(AtomicBool::new(false));
    let ended = Arc::new(AtomicBool::new(false));
    let requests = read_requests(input, cancel.clone(), ended.clone());
    let hello = Hello {
        identity,
        pid: std::process::id(),
        hostname: hostname(),
        facts: Some(facts()),
        boot_id: super::protocol::boot_id(),
        reaped: started::reap_orphans(),
    };
    // A watch of the server's tree; dropped (stopped) with the session at the latest.
    let mut watch: Option<Watch> = None;
    // The servers started for the controller; stopped with the session at the latest.
    let mut started = Started::default();
    for request in requests {
        let reply = match request {
            // A cancel is handled by the reader as it arrives; it has no reply.
            Ok(Request::Cancel) => continue,
            Ok(Request::Bye) => {
                send(&mut output, &Reply::Bye)?;
                return Ok(());
            }
            Ok(request) => match for_servers(&mut started, request, &cancel, &ended) {
                Ok(reply) => reply,
                Err(request) => for_load(request, &hello, &mut watch, &cancel, &ended),
            },
            Err(message) => Reply::Error { message },
        };
        // After the input ended the reply may find no reader: the write fails and the agent exits.
        send(&mut output, &reply)?;
    }
    Ok(())
}

/// A server or services host's requests: the workspace, setups, run folders, the servers and
/// services it starts. Any
/// other request comes back as `Err`.
fn for_servers(started: &mut Started, request: Request, cancel: &AtomicBool, ended: &AtomicBool) -> Result<Reply, Request> {
    Ok(match request {
        Request::Workspace { project, id } => workspace(&project, &id, None),
        Request::Unpack { project, id, tar_b64 } => workspace(&project, &id, Some(&tar_b64)),
        Request::Setup { root, stacks } => {
            // A setup asked for just before the session ended starts cancelled.
            cancel.store(ended.load(Ordering::SeqCst), Ordering::SeqCst);
            answer(started::setup(std::path::Path::new(&root), &stacks, cancel), |(failed, versions)| Reply::SetUp { failed, versions })
        }
        Request::Start { launch } => answer(started.start(&launch), |(pid, port)| Reply::Started { pid, port }),
        Request::Cpu { pid } => answer(started.cpu(pid), Reply::Cpu),
        Request::Listening { pid, port } => answer(started.listening(pid, port), |addrs| Reply::Listening { addrs }),
        Request::RunFolder { run, data_tar_b64 } => answer(started.run_folder(&run, &data_tar_b64), |path| Reply::RunFolder { path }),
        Request::Discard { path } => answer(started.discard(&path), |()| Reply::Discarded),
        Request::Tree { pid } => answer(started.tree(pid), Reply::Tree),
        Request::Quiet { pid, window_ms, limit_ms } => {
            let (window, limit) = (Duration::from_millis(window_ms), Duration::from_millis(limit_ms));
            answer(started.quiet(pid, window, limit), |busy_cores| Reply::Quiet { busy_cores })
        }
        Request::Stop { pid } => answer(started.stop(pid), |leftovers| Reply::Stopped { leftovers }),
        Request::StartService { service } => answer(started.start_service(&service), Reply::ServiceStarted),
        Request::SetProductText { path, key, id, field, value } => {
            answer(started.set_product_text(&path, &key, (id, &field, &value)), |()| Reply::ProductTextSet)
        }
        other => return Err(other),
    })
}

/// The requests of every host: who it is, its clock, a load, a watch of a server's tree, the path
/// probes.
fn for_load(request: Request, hello: &Hello, watch: &mut Option<Watch>, cancel: &AtomicBool, ended: &AtomicBool) -> Reply {
    match request {
        Request::Hello => Reply::Hello(hello.clone()),
        Request::Clock => Reply::Clock { wall_ns: wall_ns() },
        Request::Run { spec } => {
            cancel.store(false, Ordering::SeqCst);
            run(&spec, cancel, ended)
        }
        Request::Check { pid } => answer(check(pid), Reply::Process),
        Request::Watch { pid, zero_at_ns } => match check(pid) {
            Ok(found) => {
                *watch = Some(Watch::start(found, zero_at_ns));
                Reply::Watching
            }
            Err(message) => Reply::Error { message },
        },
        Request::Unwatch => match watch.take().and_then(Watch::finish) {
            Some(server) => Reply::Watched { server: Box::new(server) },
            None => Reply::Error { message: "nothing was being watched".into() },
        },
        Request::Sink { bind, open_ms } => {
            open_sink(&bind, Duration::from_millis(open_ms)).map_or_else(|message| Reply::Error { message }, |port| Reply::Sink { port })
        }
        Request::Probe { target, connects, sink, send_ms } => {
            Reply::Probed { path: probe(&target, connects, sink.as_deref(), Duration::from_millis(send_ms)) }
        }
        other => Reply::Error { message: format!("not a request this agent answers here: {other:?}") },
    }
}

/// The reply for `result`: `ok`'s, or the agent's refusal with its reason.
fn answer<T>(result: Result<T, String>, ok: impl FnOnce(T) -> Reply) -> Reply {
    result.map_or_else(|message| Reply::Error { message }, ok)
}

/// `project`'s workspace under the agent's home: whether it holds the files `id`, or those files
/// unpacked there from `tar_b64` when given.
fn workspace(project: &str, id: &str, tar_b64: Option<&str>) -> Reply {
    let found = super::workspace::agent_home().and_then(|home| match tar_b64 {
        Some(tar) => super::workspace::unpack(&home, project, id, tar).map(|path| (path, true)),
        None => super::workspace::find(&home, project, id),
    });
    answer(found, |(path, ready)| Reply::Workspace { path: path.display().to_string(), ready })
}

fn send<W: Write>(output: &mut W, reply: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_string(reply).map_err(std::io::Error::other)?;
    line.push('\n');
    output.write_all(line.as_bytes())?;
    output.flush()
}

/// Reads requests on a thread of their own, so a cancel, or the end of the input, reaches a load
/// that is running; both set `cancel`, the end also sets `ended` and closes the channel.
fn read_requests<R: BufRead + Send + 'static>(
    input: R,
    cancel: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
) -> Receiver<Result<Request, String>> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let request = serde_json::from_str::<Request>(&line).map_err(|e| format!("not a request: {e}: {line}"));
            if request == Ok(Request::Cancel) {
                cancel.store(true, Ordering::SeqCst);
            }
            if tx.send(request).is_err() {
                break;
            }
        }
        ended.store(true, Ordering::SeqCst);
        cancel.store(true, Ordering::SeqCst);
    });
    rx
}

/// Waits for the agreed instant, runs the load and packs its report with every histogram.
fn run(spec: &RunSpec, cancel: &AtomicBool, ended: &AtomicBool) -> Reply {
    let plan = match spec.to_plan() {
        Ok(p) => p,
        Err(e) => return Reply::Error { message: format!("the load plan is invalid: {e}") },
    };
    let now = wall_ns();
    if now > spec.start_at_ns + LATE_LIMIT.as_nanos() as u64 {
        let late_ms = (now - spec.start_at_ns) as f64 / 1e6;
        return Reply::Error { message: format!("the start instant had passed {late_ms:.1} ms before the request arrived") };
    }
    while wall_ns() < spec.start_at_ns {
        if ended.load(Ordering::SeqCst) {
            return Reply::Error { message: "the session ended before the start".into() };
        }
        let left = spec.start_at_ns.saturating_sub(wall_ns());
        std::thread::sleep(Duration::from_nanos(left.min(5_000_000)));
    }
    let started_late_ns = wall_ns().saturating_sub(spec.start_at_ns);
    let probe = NoiseProbe::start();
    let out = match run_observed(&plan, cancel, None) {
        Ok(o) => o,
        Err(e) => return Reply::Error { message: format!("the load failed: {e}") },
    };
    // Every CPU of the host is one set; the agent is the load generator, so its CPU is not noise.
    let cpus: Vec<usize> = (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect();
    let none = Default::default();
    let noise = probe.finish(&Measured { server_cpus: &[], client_cpus: &cpus, server_cpu_s: 0.0, client_cpu_s: 0.0, server_pids: &none });
    let steps = out
        .details
        .iter()
        .map(|d| StepHistograms {
            service: d.service.as_ref().map(encode_histogram),
            seconds: d.seconds.iter().map(encode_histogram).collect(),
        })
        .collect();
    Reply::Ran { result: Box::new(ClientResult { report: out.report, steps, started_late_ns, noise: Some(noise) }) }
}

/// This host as the lab describes its own machine, with the governor and the agent's CPUs.
fn facts() -> MachineFacts {
    MachineFacts {
        machine: crate::machine::provenance::machine_info(),
        governor: crate::machine::doctor::governor(std::path::Path::new("/sys/devices/system/cpu")),
        cpuset: allowed_cpus(std::process::id()),
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity { version: "0.1.0".into(), commit: "abc".into() }
    }

    #[test]
    fn answers_hello_clock_and_bye_then_stops() {
        let input = "{\"op\":\"hello\"}\n{\"op\":\"clock\"}\nnonsense\n{\"op\":\"bye\"}\n{\"op\":\"clock\"}\n";
        let mut out = Vec::new();
        serve(identity(), std::io::Cursor::new(input.as_bytes().to_vec()), &mut out).unwrap();
        let replies: Vec<Reply> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(replies.len(), 4, "{replies:?}");
        assert!(matches!(&replies[0], Reply::Hello(h) if h.identity == identity() && h.pid == std::process::id()));
        assert!(matches!(replies[1], Reply::Clock { wall_ns } if wall_ns > 0));
        assert!(matches!(&replies[2], Reply::Error { message } if message.contains("not a request")));
        assert_eq!(replies[3], Reply::Bye);
    }

    #[test]
    fn checks_watches_and_unwatches_a_process_and_refuses_a_missing_one() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let pid = child.id();
        let input = format!(
            "{{\"op\":\"check\",\"pid\":{pid}}}\n{{\"op\":\"check\",\"pid\":4294967294}}\n\
             {{\"op\":\"watch\",\"pid\":{pid},\"zero_at_ns\":0}}\n{{\"op\":\"unwatch\"}}\n{{\"op\":\"unwatch\"}}\n{{\"op\":\"bye\"}}\n"
        );
        let mut out = Vec::new();
        serve(identity(), std::io::Cursor::new(input.into_bytes()), &mut out).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let replies: Vec<Reply> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(matches!(&replies[0], Reply::Process(p) if p.pid == pid && p.name == "sleep" && !p.cpus.is_empty()), "{replies:?}");
        assert!(matches!(&replies[1], Reply::Error { message } if message.contains("no process 4294967294")), "{replies:?}");
        assert_eq!(replies[2], Reply::Watching);
        assert!(matches!(&replies[3], Reply::Watched { server } if server.process.pid == pid && server.peak_rss_bytes > 0), "{replies:?}");
        assert!(matches!(&replies[4], Reply::Error { message } if message.contains("nothing was being watched")), "{replies:?}");
        assert_eq!(replies[5], Reply::Bye);
    }

    #[test]
    fn hello_says_what_the_host_is() {
        let mut out = Vec::new();
        serve(identity(), std::io::Cursor::new(b"{\"op\":\"hello\"}\n".to_vec()), &mut out).unwrap();
        let Reply::Hello(h) = serde_json::from_str(String::from_utf8(out).unwrap().trim()).unwrap() else { panic!("no hello") };
        let f = h.facts.expect("facts");
        assert!(f.machine.cores >= 1 && !f.machine.kernel.is_empty() && !f.cpuset.is_empty(), "{f:?}");
    }

    #[test]
    fn a_start_instant_long_past_is_refused() {
        let plan = bakeoff_load::LoadPlan::builder("http://127.0.0.1:9/").build().unwrap();
        let mut spec = RunSpec::from_plan(&plan);
        spec.start_at_ns = wall_ns() - 1_000_000_000;
        let reply = run(&spec, &AtomicBool::new(false), &AtomicBool::new(false));
        assert!(matches!(reply, Reply::Error { message } if message.contains("start instant had passed")));
    }
}
