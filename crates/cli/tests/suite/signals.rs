//! SIGTERM (what CI timeouts, `timeout` and service managers send) stops `bakeoff run` as Ctrl-C
//! does: the server and its services (here PostgreSQL) stopped, their cgroups removed, and the
//! trials measured before the signal kept in the store. Runs go/fasthttp's postgres variant, set up
//! by `bakeoff setup`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Pids whose environment carries a marker the lab process `lab` set (`BAKEOFF_CELL=<name>-<lab>-<n>`).
fn marked_by(lab: u32) -> Vec<(u32, String)> {
    let tag = format!("-{lab}-");
    let pids = std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok());
    pids.filter_map(|pid| {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let marked = env.split(|&b| b == 0).any(|e| e.starts_with(b"BAKEOFF_CELL=") && String::from_utf8_lossy(e).contains(&tag));
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        marked.then(|| (pid, String::from_utf8_lossy(&cmd).replace('\0', " ")))
    })
    .collect()
}

/// The lab's cgroups (`bakeoff-*` under the cpuset hierarchy) holding any of `pids`.
fn groups_of(pids: &[u32]) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/sys/fs/cgroup/cpuset") else { return Vec::new() };
    dir.filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("bakeoff-")))
        .filter(|p| {
            let procs = std::fs::read_to_string(p.join("cgroup.procs")).unwrap_or_default();
            procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()).any(|pid| pids.contains(&pid))
        })
        .collect()
}

#[test]
fn sigterm_mid_run_stops_servers_and_services_and_keeps_the_measured_trials() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db_arg = db.display().to_string();
    let args = ["run", "--db", &db_arg, "--no-ceiling", "--stacks", "go/fasthttp", "--scenarios", "products", "--variants", "postgres"];
    let mut child = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .args(["--trials", "30", "--duration", "1s", "--warmup", "0s"])
        .env("BAKEOFF_ROOT", root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lab = child.id();
    // Progress goes to stderr; a trial's figures are its indented line with req/s.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(180);
    while Instant::now() < deadline {
        let Some(Ok(line)) = lines.next() else { break };
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("  ") && line.contains("req/s") {
            break;
        }
    }
    assert!(seen.contains("req/s"), "no trial was measured:\n{seen}");
    let running = marked_by(lab);
    assert!(running.iter().any(|(_, c)| c.contains("postgres")), "PostgreSQL runs with the run's marker: {running:?}");
    let groups = groups_of(&running.iter().map(|(p, _)| *p).collect::<Vec<_>>());
    let status = Command::new("kill").args(["-TERM", &lab.to_string()]).status().unwrap();
    assert!(status.success());
    // Drain stderr meanwhile so the lab never blocks on a full pipe.
    let drain = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("bakeoff still runs 30 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let rest = drain.join().unwrap();
    assert!(marked_by(lab).is_empty(), "left running after SIGTERM: {:?}\n{rest}", marked_by(lab));
    assert!(groups.iter().all(|g| !g.exists()), "cgroups left: {groups:?}");
    assert!(exit.code().is_some(), "bakeoff ended by its own exit, not killed by the signal: {exit:?}\n{rest}");
    let report = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["report", "--db", &db_arg, "--format", "json"]).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let trials = json["cells"][0]["metrics"].as_object().and_then(|m| m.values().map(|e| e["trials"].as_u64().unwrap_or(0)).max());
    assert!(trials.unwrap_or(0) >= 1, "the trial measured before the signal is stored: {}", json["cells"]);
    assert!(json["status"].to_string().contains("interrupted"), "{}", json["status"]);
}

/// SIGTERM during `bakeoff verify` stops the variant being checked at its next check (a JIT's
/// 30 s warm-up of the cost pairs included), stores no incomplete report (contracts left
/// unchecked must not read as passed), marks the run interrupted and leaves nothing running.
#[test]
fn sigterm_mid_verify_stops_within_seconds_and_stores_no_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let db_arg = db.display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(["verify", "pypy/werkzeug-uwsgi", "--variants", "sqlite", "--db", &db_arg])
        .env("BAKEOFF_ROOT", root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lab = child.id();
    // Setup is cached (or runs first); the server's processes carry the lab's marker once started.
    let deadline = Instant::now() + Duration::from_secs(600);
    while marked_by(lab).is_empty() {
        assert!(Instant::now() < deadline && child.try_wait().unwrap().is_none(), "the server never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    assert!(Command::new("kill").args(["-TERM", &lab.to_string()]).status().unwrap().success());
    let signalled = Instant::now();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let drain = std::thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        std::io::Read::read_to_string(&mut out, &mut o).ok();
        std::io::Read::read_to_string(&mut err, &mut e).ok();
        (o, e)
    });
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        if signalled.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("bakeoff verify still runs 20 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (stdout, stderr) = drain.join().unwrap();
    assert!(marked_by(lab).is_empty(), "left running after SIGTERM: {:?}", marked_by(lab));
    assert_eq!(exit.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("0 of 0 stack variants pass") && !stdout.contains("PASS"), "no incomplete report printed:\n{stdout}");
    assert!(stderr.contains("interrupted"), "{stderr}");
}
