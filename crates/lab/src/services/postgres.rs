//! A PostgreSQL cluster made for the run: initdb as the `postgres` user (initdb refuses root) into a
//! throwaway directory, the server in the foreground on a free loopback port, seeded with `product`;
//! and the databases of scenario files made in it, one per server start.

use super::{launch, service_dir, service_error, ServiceContext, ServiceProcess, StartedService};
use crate::contract::verify::{FileDatabase, LiveData};
use crate::error::LabError;
use crate::install::{apt_install, run_bounded};
use crate::machine::process::free_port;
use bakeoff_model::scenario::ServiceKind;
use bakeoff_model::workload::database::{Database, Engine};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A PostgreSQL cluster the lab started on loopback, with the products fixture in database `bakeoff`.
pub struct Postgres {
    pub(crate) port: u16,
    /// `postgres://postgres@127.0.0.1:PORT/bakeoff` (the services' address in place of 127.0.0.1)
    pub url: String,
    /// The address it listens on.
    pub host: std::net::IpAddr,
    pub(crate) version: String,
    process: ServiceProcess,
}

/// The newest installed PostgreSQL's `program` (`postgres`, `initdb`, `pgbench`...): Debian keeps
/// them in /usr/lib/postgresql/<major>/bin, off the PATH; the PATH is the fallback. The one search
/// for PostgreSQL programs (the server here, pgbench for the store ceiling).
pub(crate) fn program(name: &str) -> Option<PathBuf> {
    let major = |p: &PathBuf| p.ancestors().nth(2).and_then(|v| v.file_name()).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok());
    let pattern = format!("/usr/lib/postgresql/*/bin/{name}");
    let mut found: Vec<PathBuf> = glob::glob(&pattern).map(|g| g.filter_map(Result::ok).collect()).unwrap_or_default();
    found.sort_by_key(|p| major(p).unwrap_or(0));
    found.pop().or_else(|| crate::stacks::catalog::on_path(name).then(|| PathBuf::from(name)))
}

/// The folder of the newest server's programs.
fn bin_dir() -> Option<PathBuf> {
    program("postgres").filter(|p| p.is_absolute()).and_then(|p| p.parent().map(PathBuf::from))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `cmd args...` as the postgres user when we are root (setpriv execs in place, so the process we
/// start is the server itself, in our process group).
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

impl Postgres {
    pub(crate) fn start(ctx: &ServiceContext<'_>) -> Result<Postgres, LabError> {
        if bin_dir().is_none() {
            apt_install(&["postgresql".into()])
                .map_err(|e| service_error("postgres", e, "install PostgreSQL: apt-get install postgresql"))?;
        }
        let bin =
            bin_dir().ok_or_else(|| service_error("postgres", "no /usr/lib/postgresql/*/bin/postgres", "apt-get install postgresql"))?;
        let dir = service_dir(ctx, "postgres")?;
        let data = dir.join("data");
        if is_root() {
            let _ = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status();
            // The run directory may sit under a path postgres cannot traverse (e.g. /root).
            let _ = Command::new("chmod").args(["o+x"]).arg(ctx.run_dir).status();
        }
        let mut initdb = as_postgres(&bin.join("initdb"));
        initdb.args(["-D"]).arg(&data).args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
        run_bounded(&mut initdb, Duration::from_secs(120)).map_err(|e| {
            service_error("postgres", format!("initdb failed: {e}"), "the `postgres` user must be able to write the run directory")
        })?;

        // initdb trusts loopback only; in a namespace of their own the servers and the lab connect
        // over its link, from the subnets the server is on (nothing else reaches that address).
        // On a host of their own, the controller and the servers' host are trusted by address too.
        if !ctx.ip.is_loopback() {
            use std::io::Write;
            let hba = data.join("pg_hba.conf");
            std::fs::OpenOptions::new()
                .append(true)
                .open(&hba)
                .and_then(|mut f| f.write_all(trusted(ctx.trust).as_bytes()))
                .map_err(|e| service_error("postgres", format!("{}: {e}", hba.display()), "check the run directory"))?;
        }
        let port = free_port();
        let command = format!(
            // pg_stat_statements counts the statements a stack runs, to prove it reads per request.
            "exec {} -D '{}' -p {port} -k '{}' -c listen_addresses={ip} -c max_connections=300 -c shared_buffers=128MB \
             -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all",
            shell_prefix(&bin.join("postgres")),
            data.display(),
            dir.display(),
            ip = ctx.ip,
        );
        let process = launch(ctx, "postgres", &dir, &command, port)?;
        let host = ctx.ip;
        let url = format!("postgres://postgres@{}/bakeoff", std::net::SocketAddr::new(host, port));
        let pg = Postgres { port, url, host, version: version(&bin), process: ServiceProcess::Here(process) };
        pg.psql("postgres", &["-c", "CREATE DATABASE bakeoff"])?;
        let sql = ctx.data_dir.join("products.sql");
        pg.psql("bakeoff", &["-v", "ON_ERROR_STOP=1", "-q", "-f", &sql.to_string_lossy()])?;
        pg.psql("bakeoff", &["-c", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"])?;
        Ok(pg)
    }

    /// Runs psql against the cluster (retrying while the server finishes starting).
    pub fn psql(&self, db: &str, args: &[&str]) -> Result<String, LabError> {
        let mut last = String::new();
        for _ in 0..50 {
            let mut c = Command::new("psql");
            c.args(["-X", "-h", &self.host.to_string(), "-p", &self.port.to_string(), "-U", "postgres", "-d", db]).args(args);
            match run_bounded(&mut c, Duration::from_secs(30)) {
                Ok(out) => return Ok(out),
                Err(e) if e.contains("starting up") || e.contains("Connection refused") => {
                    last = e;
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(service_error("postgres", e, "see the postgres log in the run directory")),
            }
        }
        Err(service_error("postgres", last, "the server did not accept connections"))
    }

    /// The server's process id, as its host numbers it (its tree's CPU is part of a cell's work).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The cluster the services host's agent started, reached at its address from here.
    pub(crate) fn on_host(s: &StartedService) -> Postgres {
        let (host, port) = (s.address.ip(), s.address.port());
        Postgres { port, url: s.url.clone(), host, version: s.version.clone(), process: ServiceProcess::OnHost(s.pid) }
    }

    /// Its process and what the controller needs of it.
    pub(crate) fn into_started(self) -> (Option<ServiceProcess>, StartedService) {
        let address = std::net::SocketAddr::new(self.host, self.port);
        let started = StartedService { kind: ServiceKind::Postgres, pid: self.pid(), address, url: self.url, version: self.version };
        (Some(self.process), started)
    }
}

/// A database of the cluster made for one server start of a scenario file (`[database]`).
pub struct PostgresDatabase<'a> {
    pg: &'a Postgres,
    /// Its name.
    pub name: String,
}

impl Postgres {
    /// Makes database `name` afresh from `database`'s PostgreSQL script (written to `script` for
    /// psql, and kept beside the start's log), in one transaction; its URL.
    pub fn create_database(&self, name: &str, database: &Database, script: &Path) -> Result<String, LabError> {
        std::fs::write(script, database.script(Engine::Postgres))
            .map_err(|e| service_error("postgres", format!("{}: {e}", script.display()), "check free space"))?;
        self.drop_database(name)?;
        self.psql("postgres", &["-q", "-c", &format!("CREATE DATABASE {name}")])?;
        self.psql(name, &["-v", "ON_ERROR_STOP=1", "-q", "-1", "-f", &script.to_string_lossy()]).map_err(|e| LabError::Input {
            what: format!("[database] of a scenario file, in PostgreSQL ({})", script.display()),
            problem: e.to_string(),
            hint: "the schema and seed must be valid PostgreSQL too: give `schema_postgres = \"schema.postgres.sql\"` where they differ"
                .into(),
        })?;
        Ok(format!("postgres://postgres@{}/{name}", std::net::SocketAddr::new(self.host, self.port)))
    }

    /// Drops database `name`, its connections closed first.
    pub fn drop_database(&self, name: &str) -> Result<(), LabError> {
        self.psql("postgres", &["-q", "-c", &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")]).map(|_| ())
    }

    /// The database `name`, for verification to query and change.
    pub fn database(&self, name: &str) -> PostgresDatabase<'_> {
        PostgresDatabase { pg: self, name: name.to_string() }
    }
}

impl FileDatabase for PostgresDatabase<'_> {
    /// The rows as PostgreSQL's `json_agg` writes them (a number column's values numbers).
    fn rows(&self, sql: &str) -> Result<Vec<serde_json::Value>, String> {
        let query = format!("SELECT coalesce(json_agg(q), '[]'::json) FROM ({}) q", sql.trim().trim_end_matches(';'));
        let out = self.pg.psql(&self.name, &["-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", &query]).map_err(|e| e.to_string())?;
        serde_json::from_str(out.trim()).map_err(|e| format!("psql answered `{}`: {e}", out.trim()))
    }

    fn execute(&self, sql: &str) -> Result<(), String> {
        self.pg.psql(&self.name, &["-v", "ON_ERROR_STOP=1", "-q", "-c", sql]).map(|_| ()).map_err(|e| e.to_string())
    }

    /// Counted from the lab's own database, where the extension is, for this database only;
    /// `table` as a whole word of the statement's text (checked to be an identifier).
    fn statements(&self, table: &str) -> Option<Result<u64, String>> {
        let sql = format!(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{}') AND query ~* '\\m{table}\\M'",
            self.name
        );
        let out = self.pg.psql("bakeoff", &["-X", "-At", "-c", &sql]).map_err(|e| e.to_string());
        Some(out.and_then(|o| o.trim().parse().map_err(|e| format!("pg_stat_statements answered `{}`: {e}", o.trim()))))
    }
}

/// pg_hba.conf lines that let the services' own subnet and each of `trust` (one address each)
/// connect without a password: the cluster is the run's, thrown away with it.
fn trusted(trust: &[std::net::IpAddr]) -> String {
    let mut lines = String::from("host all all samenet trust\n");
    for ip in trust {
        let bits = if ip.is_ipv4() { 32 } else { 128 };
        lines.push_str(&format!("host all all {ip}/{bits} trust\n"));
    }
    lines
}

fn shell_prefix(program: &Path) -> String {
    if is_root() {
        format!("setpriv --reuid=postgres --regid=postgres --init-groups -- '{}'", program.display())
    } else {
        format!("'{}'", program.display())
    }
}

fn version(bin: &Path) -> String {
    Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().replace("postgres (PostgreSQL) ", "PostgreSQL "))
        .unwrap_or_else(|| "PostgreSQL".into())
}

impl LiveData for Postgres {
    fn set_text(&self, id: i64, field: &str, value: &str) -> Result<(), String> {
        let sql = format!("UPDATE product SET {field} = '{}' WHERE id = {id}", value.replace('\'', "''"));
        self.psql("bakeoff", &["-c", &sql]).map(|_| ()).map_err(|e| e.to_string())
    }

    /// Statements that read table `product` so far (the probe's own UPDATEs excluded), as
    /// pg_stat_statements counts them when each ends.
    fn reads(&self) -> Option<Result<u64, String>> {
        let sql = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query ILIKE '%product%' AND query NOT ILIKE 'update%'";
        let out = self.psql("bakeoff", &["-At", "-c", sql]).map_err(|e| e.to_string());
        Some(out.and_then(|o| o.trim().parse().map_err(|e| format!("pg_stat_statements answered `{}`: {e}", o.trim()))))
    }
}

/// A SQLite `product` table changed in place by the live-data probe; `key` is the id column.
pub(crate) struct SqliteFile {
    pub(crate) path: PathBuf,
    pub(crate) key: String,
}

impl LiveData for SqliteFile {
    fn set_text(&self, id: i64, field: &str, value: &str) -> Result<(), String> {
        set_product_text(&self.path, &self.key, (id, field, value))
    }
}

/// Sets text column `field` of the `product` row whose `key` is `id` in the SQLite file at `path`
/// (the live-data probe's change; a server host's agent makes it in a cell's file there). The
/// names are checked to be identifiers: they are spliced into the statement.
pub(crate) fn set_product_text(path: &Path, key: &str, (id, field, value): (i64, &str, &str)) -> Result<(), String> {
    let identifier = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier(key) || !identifier(field) {
        return Err(format!("`{key}` and `{field}` must be column names"));
    }
    let db = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
    db.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    db.execute(&format!("UPDATE product SET {field} = ?1 WHERE {key} = ?2"), rusqlite::params![value, id])
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subnet_and_each_trusted_address_alone_may_connect() {
        let trust = ["10.0.0.2".parse().unwrap(), "fd00::5".parse().unwrap()];
        assert_eq!(trusted(&trust), "host all all samenet trust\nhost all all 10.0.0.2/32 trust\nhost all all fd00::5/128 trust\n");
        assert_eq!(trusted(&[]), "host all all samenet trust\n");
    }
}
