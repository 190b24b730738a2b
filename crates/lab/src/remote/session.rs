//! The controller's session to one host's agent: one persistent process per host (`ssh -T ... bakeoff
//! agent`, `ip netns exec NAME bakeoff agent`, or the agent itself for `local`), never one ssh per
//! command. Opening it checks the agent's build and measures the host's clock offset; a host that
//! cannot be reached, refuses the key or lacks the binary is an error naming it and the fix.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bakeoff_model::plan::place::Place;

use super::error::HostError;
use super::protocol::{wall_ns, Hello, Identity, Reply, Request};

/// How the controller reaches the agents of a run's hosts: the agent binary and ssh options, and
/// the build the agents must be.
#[derive(Debug, Clone)]
pub struct HostAccess {
    /// Agent binary and ssh options.
    pub options: SessionOptions,
    /// The controller's build; an agent of another is refused.
    pub identity: Identity,
}

/// How the controller reaches its agents.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The bakeoff binary on the hosts (an absolute path: a login shell's PATH is not relied on).
    pub agent_bin: PathBuf,
    /// The ssh key to log in with (default: the user's own ssh config).
    pub ssh_identity: Option<PathBuf>,
    /// A known-hosts file that must hold the host's key (default: the user's own, new hosts accepted).
    pub ssh_known_hosts: Option<PathBuf>,
    /// How long opening may take, hello included.
    pub open_timeout: Duration,
}

impl SessionOptions {
    /// Agents started from `agent_bin`, ssh as the user has it configured, 10 s to open.
    pub fn new(agent_bin: impl Into<PathBuf>) -> SessionOptions {
        SessionOptions { agent_bin: agent_bin.into(), ssh_identity: None, ssh_known_hosts: None, open_timeout: Duration::from_secs(10) }
    }
}

/// A host's clock against the controller's: `offset_ns` is added to a controller instant to get
/// the host's, give or take `bound_ns` (half the round trip it was measured over).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ClockOffset {
    /// Host clock minus controller clock, ns.
    pub offset_ns: i64,
    /// The most the true offset can differ from `offset_ns`, ns.
    pub bound_ns: u64,
}

/// Clock exchanges per offset measurement; the one with the shortest round trip is kept.
const CLOCK_ROUNDS: usize = 9;

/// An open session to one agent. Dropping it ends the agent (its stdin closes) and reaps the process.
pub struct Session {
    place: Place,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Closed when the process's error output ends: its last words are all in `stderr`.
    stderr_done: Receiver<()>,
    hello: Hello,
    clock: ClockOffset,
}

impl Session {
    /// Starts the agent on `place`, checks it is the `expect` build and measures its clock.
    pub fn open(place: &Place, opts: &SessionOptions, expect: &Identity) -> Result<Session, HostError> {
        let host = place.host_name();
        let mut child = agent_command(place, opts).spawn().map_err(|e| match (place, e.kind()) {
            (Place::Local, std::io::ErrorKind::NotFound) => HostError::MissingBinary {
                host: host.clone(),
                path: opts.agent_bin.display().to_string(),
                cause: e.to_string(),
                fix: fix_command(place, opts),
            },
            _ => HostError::Unreachable {
                host: host.clone(),
                cause: format!("cannot start the session: {e}"),
                hint: "check that `ssh` and `ip` (iproute2) are installed on the controller".into(),
            },
        })?;
        let stdin = child.stdin.take();
        let lines = pipe_lines(child.stdout.take().expect("stdout is piped"));
        let (stderr, stderr_done) = pipe_tail(child.stderr.take().expect("stderr is piped"));
        let blank = Hello { identity: expect.clone(), pid: 0, hostname: String::new(), facts: None, boot_id: None, reaped: Vec::new() };
        let mut s = Session {
            place: place.clone(),
            child,
            stdin,
            lines,
            stderr,
            stderr_done,
            hello: blank,
            clock: ClockOffset { offset_ns: 0, bound_ns: 0 },
        };
        s.hello = s.greet(opts)?;
        if &s.hello.identity != expect {
            return Err(s.mismatch(opts, expect));
        }
        s.clock = s.measure_clock()?;
        Ok(s)
    }

    /// The host as messages name it.
    pub fn host(&self) -> String {
        self.place.host_name()
    }

    /// Where the agent runs.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// The agent's answer to hello (its build, process id and host name).
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// True when the agent runs on this machine's kernel (same boot id): its processes are this
    /// machine's, its CPUs the lab's.
    pub fn on_this_machine(&self) -> bool {
        self.hello.boot_id.is_some() && self.hello.boot_id == super::protocol::boot_id()
    }

    /// The clock offset measured when the session opened.
    pub fn clock(&self) -> ClockOffset {
        self.clock
    }

    /// Sends hello and waits for the answer, skipping lines that are not the protocol's (a login
    /// script's chatter); no answer means the session failed, and why is read from ssh's words.
    fn greet(&mut self, opts: &SessionOptions) -> Result<Hello, HostError> {
        // A send that fails means the process already ended: say why it did.
        if self.send(&Request::Hello).is_err() {
            return Err(self.failed_open(opts));
        }
        let deadline = Instant::now() + opts.open_timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => match serde_json::from_str::<Reply>(&line) {
                    Ok(Reply::Hello(h)) => return Ok(h),
                    Ok(other) => return Err(self.protocol(format!("answered hello with {other:?}"))),
                    Err(_) => continue,
                },
                Err(RecvTimeoutError::Timeout) => {
                    return Err(HostError::Unreachable {
                        host: self.host(),
                        cause: format!("no answer within {:?}", opts.open_timeout),
                        hint: "check that the host is up and that `ssh` to it works without a password prompt".into(),
                    })
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.failed_open(opts)),
            }
        }
    }

    /// The session ended before hello: why, from the exit status and what ssh or the shell said.
    fn failed_open(&mut self, opts: &SessionOptions) -> HostError {
        let status = wait_bounded(&mut self.child, Duration::from_secs(2));
        let said = self.stderr_tail();
        let host = self.host();
        let cause = if said.is_empty() { status.clone() } else { format!("{status}: {said}") };
        let has = |s: &str| said.contains(s);
        if has("Permission denied") {
            let hint = "add the controller's public key to the host's ~/.ssh/authorized_keys (`ssh-copy-id`), or pass --ssh-identity";
            return HostError::Refused { host, cause, hint: hint.into() };
        }
        if has("Host key verification failed") || has("IDENTIFICATION HAS CHANGED") {
            let hint = "the host's key is not the known one: check the host, then fix its line in known_hosts (`ssh-keygen -R HOST`)";
            return HostError::Refused { host, cause, hint: hint.into() };
        }
        if has("Cannot open network namespace") {
            let hint = "create the namespace first (`ip netns add NAME`); `ip netns list` shows those that exist";
            return HostError::Unreachable { host, cause, hint: hint.into() };
        }
        let no_file = (has("No such file or directory") || has("not found")) && !has("Identity file");
        if status.ends_with("status 127") || no_file {
            let path = opts.agent_bin.display().to_string();
            return HostError::MissingBinary { host, path, cause, fix: fix_command(&self.place, opts) };
        }
        if has("unrecognized subcommand") {
            let (theirs, ours) = ("a build without the agent".to_string(), self.hello.identity.to_string());
            return HostError::VersionMismatch { host: host.clone(), theirs, ours, fix: fix_command(&self.place, opts) };
        }
        let unreachable = ["Connection refused", "No route to host", "timed out", "Could not resolve", "Network is unreachable"];
        if unreachable.iter().any(|s| has(s)) || status.contains("255") {
            let hint = "check the address and port, that sshd runs there, and that `ssh -p PORT USER@HOST true` works";
            return HostError::Unreachable { host, cause, hint: hint.into() };
        }
        let hint = "run the agent there by hand (`bakeoff agent`, then type {\"op\":\"hello\"}) to see what it says";
        HostError::SessionLost { host, cause, hint: hint.into() }
    }

    fn mismatch(&self, opts: &SessionOptions, expect: &Identity) -> HostError {
        HostError::VersionMismatch {
            host: self.host(),
            theirs: self.hello.identity.to_string(),
            ours: expect.to_string(),
            fix: fix_command(&self.place, opts),
        }
    }

    fn protocol(&self, problem: String) -> HostError {
        HostError::SessionLost {
            host: self.host(),
            cause: problem,
            hint: "the agent speaks another protocol: install the controller's build there".into(),
        }
    }

    /// Measures the clock offset: t0 (sent), t1 (the agent's clock), t2 (answer back); the offset is
    /// t1 - (t0 + t2) / 2 within ±(t2 - t0) / 2, taken from the fastest of several exchanges.
    pub fn measure_clock(&mut self) -> Result<ClockOffset, HostError> {
        let mut best: Option<ClockOffset> = None;
        for _ in 0..CLOCK_ROUNDS {
            let t0 = wall_ns();
            let t1 = self.clock_call()?;
            let t2 = wall_ns();
            let bound = t2.saturating_sub(t0) / 2;
            let offset = t1 as i64 - ((t0 as i128 + t2 as i128) / 2) as i64;
            if best.is_none_or(|b| bound < b.bound_ns) {
                best = Some(ClockOffset { offset_ns: offset, bound_ns: bound });
            }
        }
        Ok(best.expect("at least one round"))
    }

    /// One `clock` exchange: the agent's wall clock, ns.
    pub fn clock_call(&mut self) -> Result<u64, HostError> {
        self.send(&Request::Clock)?;
        match self.recv(Duration::from_secs(5))? {
            Reply::Clock { wall_ns } => Ok(wall_ns),
            other => Err(self.protocol(format!("answered clock with {other:?}"))),
        }
    }

    /// Sends one request line.
    pub fn send(&mut self, request: &Request) -> Result<(), HostError> {
        let mut line = serde_json::to_string(request).expect("requests serialize");
        line.push('\n');
        let written = match self.stdin.as_mut() {
            Some(w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()),
            None => Err(std::io::Error::other("the session is closed")),
        };
        written.map_err(|e| self.lost(&format!("cannot send: {e}")))
    }

    /// Sends `request` and waits up to `timeout` for its reply; the agent's refusal is an error
    /// naming the host, with `hint`.
    pub fn ask(&mut self, request: &Request, timeout: Duration, hint: &str) -> Result<Reply, HostError> {
        self.send(request)?;
        match self.recv(timeout)? {
            Reply::Error { message } => Err(HostError::Agent { host: self.host(), message, hint: hint.into() }),
            reply => Ok(reply),
        }
    }

    /// An answer that is not the one `request` expects: the agent speaks another protocol.
    pub fn unexpected(&self, request: &str, reply: &Reply) -> HostError {
        self.protocol(format!("answered {request} with {reply:?}"))
    }

    /// Waits up to `timeout` for the next reply.
    pub fn recv(&mut self, timeout: Duration) -> Result<Reply, HostError> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => self.parse(&line),
            Err(RecvTimeoutError::Timeout) => Err(self.lost(&format!("no answer within {timeout:?}"))),
            Err(RecvTimeoutError::Disconnected) => Err(self.lost("the agent's output ended")),
        }
    }

    /// The next reply if one has arrived: `Ok(None)` while none has.
    pub fn try_recv(&mut self) -> Result<Option<Reply>, HostError> {
        match self.lines.try_recv() {
            Ok(line) => self.parse(&line).map(Some),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(self.lost("the agent's output ended")),
        }
    }

    fn parse(&self, line: &str) -> Result<Reply, HostError> {
        serde_json::from_str(line).map_err(|e| self.protocol(format!("unreadable reply ({e}): {}", truncate(line, 200))))
    }

    /// The session is gone: how the process ended and what it said last.
    pub(crate) fn lost(&mut self, what: &str) -> HostError {
        let status = match self.child.try_wait() {
            Ok(Some(st)) => describe(st),
            _ => wait_bounded(&mut self.child, Duration::from_millis(300)),
        };
        let said = self.stderr_tail();
        let cause = if said.is_empty() { format!("{what}; {status}") } else { format!("{what}; {status}: {said}") };
        let hint = match self.place {
            Place::Ssh { .. } => "check the host is up and the agent was not killed (its memory, the OOM killer, dmesg there)",
            _ => "check the agent was not killed (its memory, the OOM killer, dmesg)",
        };
        HostError::SessionLost { host: self.host(), cause, hint: hint.into() }
    }

    /// The last lines of the process's error output; once it has exited, they are waited for (a
    /// moment at most), or a message would be read before the reader thread got its words.
    fn stderr_tail(&self) -> String {
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        let s = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        s.trim().lines().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" | ")
    }

    /// Says bye, then ends the process (see `Drop`).
    pub fn close(mut self) {
        let _ = self.send(&Request::Bye);
    }
}

impl Drop for Session {
    /// Closing stdin ends the agent (and over ssh, the remote one); a process still there after a
    /// moment is killed by its pid and reaped.
    fn drop(&mut self) {
        self.stdin.take();
        if let Ok(None) = self.child.try_wait() {
            let _ = wait_bounded(&mut self.child, Duration::from_secs(3));
        }
    }
}

/// The process that runs the agent for `place`; its stdin, stdout and stderr are piped, and it has
/// a process group of its own so a Ctrl-C reaches the controller, which stops every host in turn.
fn agent_command(place: &Place, opts: &SessionOptions) -> Command {
    let bin = opts.agent_bin.display().to_string();
    let mut cmd = match place {
        Place::Local => Command::new(&opts.agent_bin),
        Place::Netns(name) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", name.as_str(), bin.as_str()]);
            c
        }
        Place::Ssh { user, host, port } => ssh_command(user, host, *port, opts),
    };
    cmd.arg("agent").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    cmd
}

fn ssh_command(user: &str, host: &str, port: u16, opts: &SessionOptions) -> Command {
    let mut c = Command::new("ssh");
    let checking = if opts.ssh_known_hosts.is_some() { "yes" } else { "accept-new" };
    c.args(["-T", "-o", "BatchMode=yes", "-o"]).arg(format!("StrictHostKeyChecking={checking}"));
    // A dead host is noticed within seconds, not at the TCP timeout.
    c.args(["-o", "ConnectTimeout=5", "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3"]);
    if let Some(key) = &opts.ssh_identity {
        c.arg("-i").arg(key).args(["-o", "IdentitiesOnly=yes"]);
    }
    if let Some(known) = &opts.ssh_known_hosts {
        c.arg("-o").arg(format!("UserKnownHostsFile={}", known.display()));
    }
    c.arg("-p").arg(port.to_string()).arg(format!("{user}@{host}")).arg("--");
    // The remote shell splits the command: the path is quoted for it.
    c.arg(format!("'{}'", opts.agent_bin.display().to_string().replace('\'', r"'\''")));
    c
}

fn pipe_lines(out: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Keeps the last few kB of the process's error output, for messages; the receiver is closed when
/// the output ends.
fn pipe_tail(err: impl Read + Send + 'static) -> (Arc<Mutex<String>>, Receiver<()>) {
    let tail = Arc::new(Mutex::new(String::new()));
    let t = tail.clone();
    let (done, ended) = channel::<()>();
    std::thread::spawn(move || {
        let _done = done;
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if let Ok(mut s) = t.lock() {
                s.push_str(&line);
                s.push('\n');
                if s.len() > 8192 {
                    let cut = s.len() - 4096;
                    let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(0);
                    s.drain(..cut);
                }
            }
        }
    });
    (tail, ended)
}

/// Waits up to `limit` for the process, then kills it by its pid and reaps it; says how it ended.
fn wait_bounded(child: &mut Child, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return describe(st),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                return child.wait().map(|st| format!("{} (killed after {limit:?})", describe(st))).unwrap_or_else(|e| e.to_string());
            }
        }
    }
}

fn describe(st: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => st.to_string(),
    }
}

/// The command that puts the controller's build where the agent is started from.
fn fix_command(place: &Place, opts: &SessionOptions) -> String {
    let path = opts.agent_bin.display();
    match place {
        Place::Ssh { user, host, port } => format!("`scp -P {port} {} {user}@{host}:{path}`", current_exe()),
        Place::Local | Place::Netns(_) => format!("`cp {} {path}` (or rebuild: `cargo build --release -p bakeoff`)", current_exe()),
    }
}

fn current_exe() -> String {
    std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "bakeoff".into())
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
