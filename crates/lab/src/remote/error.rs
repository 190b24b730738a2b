//! What can go wrong with a host, worded for the user: each error names the host and the fix.

/// A host that cannot be used, or stopped being usable, with the host's name and the fix.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No connection: the address does not answer, the namespace does not exist, ssh timed out.
    #[error("host {host} is unreachable: {cause}\n  hint: {hint}")]
    Unreachable {
        /// The host as placed (`root@10.0.0.2:22`, `netns:NAME`).
        host: String,
        /// What ssh or `ip netns` said.
        cause: String,
        /// How to fix it.
        hint: String,
    },
    /// The host refused the key or its host key does not match the known one.
    #[error("host {host} refused the login: {cause}\n  hint: {hint}")]
    Refused {
        /// The host as placed.
        host: String,
        /// What ssh said.
        cause: String,
        /// How to fix it.
        hint: String,
    },
    /// The bakeoff binary is not at the path given for that host.
    #[error("host {host} has no bakeoff binary at {path}: {cause}\n  hint: copy the controller's build there: {fix} (or pass --agent-bin with the path it has)")]
    MissingBinary {
        /// The host as placed.
        host: String,
        /// The path the agent was started from.
        path: String,
        /// What the host said.
        cause: String,
        /// The command that puts the controller's build there.
        fix: String,
    },
    /// The host's bakeoff is another version or commit than the controller's.
    #[error("host {host} runs bakeoff {theirs}, the controller runs {ours}\n  hint: install the controller's build there: {fix}")]
    VersionMismatch {
        /// The host as placed.
        host: String,
        /// The agent's version and commit.
        theirs: String,
        /// The controller's version and commit.
        ours: String,
        /// The command that fixes it.
        fix: String,
    },
    /// The session ended or stopped answering: the agent died, ssh dropped, the host went away.
    #[error("the session to host {host} was lost: {cause}\n  hint: {hint}")]
    SessionLost {
        /// The host as placed.
        host: String,
        /// How it ended (exit status, signal, what ssh said last).
        cause: String,
        /// What to check.
        hint: String,
    },
    /// The agent answered, but refused the request (a plan it cannot run, a start instant passed).
    #[error("host {host} refused the request: {message}\n  hint: {hint}")]
    Agent {
        /// The host as placed.
        host: String,
        /// The agent's reason.
        message: String,
        /// What to change.
        hint: String,
    },
    /// The server's host has no such process to measure (a wrong pid, a server that exited).
    #[error("host {host} has no server process {pid} to measure: {cause}\n  hint: {hint}")]
    NoServerProcess {
        /// The server's host as placed.
        host: String,
        /// The pid given.
        pid: u32,
        /// What the host's agent found.
        cause: String,
        /// How to find the right pid there.
        hint: String,
    },
    /// The load asked for cannot be split across the clients given.
    #[error("the load cannot be split across {clients} clients: {problem}\n  hint: {hint}")]
    Split {
        /// How many clients.
        clients: usize,
        /// What does not fit.
        problem: String,
        /// What to change.
        hint: String,
    },
    /// The test topology (namespaces, links, sshd) could not be built.
    #[error("the namespace topology failed at {step}: {cause}\n  hint: {hint}")]
    Topology {
        /// The step that failed (the command).
        step: String,
        /// Its error output.
        cause: String,
        /// How to fix it.
        hint: String,
    },
    /// The project's files for a server host could not be packed on this machine.
    #[error("the project's files for the server host could not be packed at {step}: {cause}\n  hint: {hint}")]
    Packing {
        /// The step that failed (the command).
        step: String,
        /// Its error output.
        cause: String,
        /// How to fix it.
        hint: String,
    },
}
