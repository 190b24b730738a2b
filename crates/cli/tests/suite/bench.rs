//! `bakeoff bench --cmd` as a user runs it: a small Python server of the test's own (its command,
//! not a stack folder) measured beside go/nethttp and ranked with it, with CPU and memory for both;
//! two builds of it side by side (A/B), a planted slowdown failing the gate with exit 3; and each
//! bad command told what to fix, with nothing left running. Needs python3 and the go
//! toolchain (go/nethttp is set up by the run itself, cached).

use crate::common;

use common::{root, Fixture};
use std::path::Path;
use std::process::{Command, Output};

/// `bakeoff ARGS` run from the fixtures folder (the ad-hoc command's working folder) with `env`.
fn bench(args: &[&str], env: &[(&str, &str)], db: &Path) -> Output {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let db = db.display().to_string();
    let mut all = vec!["bench", "--db", &db, "--no-ceiling", "--workers", "1"];
    all.extend_from_slice(args);
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(&all)
        .current_dir(fixtures)
        .env("BAKEOFF_ROOT", root())
        .envs(env.iter().copied())
        .output()
        .expect("the bakeoff binary runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Every process still running the fixture server (its command line names the file).
fn fixture_servers() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // The ad-hoc commands run it by its relative name; the --url test's own server, which
        // that test stops, runs by its absolute path.
        if cmdline.trim_end() == "python3 hello_server.py" {
            found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[test]
fn a_command_is_ranked_beside_a_stack_with_cpu_and_memory_for_both() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let args =
        ["--cmd", "exec python3 hello_server.py", "--stacks", "go/nethttp", "--trials", "2", "-d", "1s", "--warmup", "300ms", "-c", "4"];
    let out = bench(&args, &[], &db);
    assert!(out.status.success(), "{}", text(&out));
    let db_arg = db.display().to_string();
    let report = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["report", "--db", &db_arg, "-f", "json"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).expect("the JSON report parses");
    let adhoc = &json["run"]["settings"]["adhoc"][0];
    assert_eq!((adhoc["stack"].as_str(), adhoc["command"].as_str()), (Some("adhoc/hello_server"), Some(args[1])), "{adhoc}");
    assert!(adhoc["cwd"].as_str().unwrap().ends_with("tests/fixtures") && adhoc["git_commit"].is_string(), "{adhoc}");
    let ranked: Vec<&str> = json["relative"]["hello"].as_array().unwrap().iter().filter_map(|r| r["stack"].as_str()).collect();
    let cells = json["cells"].as_array().unwrap();
    for stack in ["adhoc/hello_server", "go/nethttp"] {
        assert!(ranked.contains(&stack), "{stack} is ranked: {ranked:?}\n{}", text(&out));
        let cell = cells.iter().find(|c| c["stack"] == stack).unwrap_or_else(|| panic!("{stack} has a cell"));
        let metric = |name: &str| cell["metrics"][name]["median"].as_f64().unwrap_or(0.0);
        assert!(metric("requests_per_sec") > 0.0 && metric("cpu_us_per_request") > 0.0, "{stack}: {cell}");
        assert!(metric("peak_rss_mib") > 1.0, "{stack}'s process tree memory: {cell}");
    }
    assert!(fixture_servers().is_empty(), "left running: {:?}", fixture_servers());
}

/// An environment variable the fixture server reads.
type Env = (&'static str, &'static str);

#[test]
fn bad_commands_are_told_what_to_fix_and_nothing_is_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let quick = ["--scenarios", "hello", "--trials", "1", "-d", "1s", "--warmup", "0s", "--ready-timeout", "3s"];
    let cases: [(&str, &[Env], &str); 4] = [
        ("exit 3", &[], "it exited with exit status: 3 before listening"),
        ("exec sleep 30", &[], "it listens on no port at all"),
        ("exec python3 hello_server.py", &[("MODE", "fixed-port")], "instead: it ignores $PORT"),
        ("exec python3 hello_server.py", &[("MODE", "wildcard")], "bind 127.0.0.1 only"),
    ];
    for (command, env, says) in cases {
        let mut args = vec!["--cmd", command];
        args.extend_from_slice(&quick);
        let out = bench(&args, env, &db);
        assert_eq!(out.status.code(), Some(1), "{command} {env:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{command} {env:?} should say `{says}`:\n{}", text(&out));
        assert!(fixture_servers().is_empty(), "left running: {:?}", fixture_servers());
    }
    let out = bench(&["--cmd", "exec ./x $PORT", "--name", "a b"], &[], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--name") && text(&out).contains("hint:"), "{}", text(&out));
    let out = bench(&[], &[], &db);
    assert!(text(&out).contains("--cmd") && text(&out).contains("hint:"), "{}", text(&out));
}

/// The JSON report of the newest run in `db`.
fn report(db: &Path) -> serde_json::Value {
    let db = db.display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["report", "--db", &db, "-f", "json"]).output().unwrap();
    serde_json::from_slice(&out.stdout).expect("the JSON report parses")
}

#[test]
fn a_running_server_is_measured_by_url_and_its_efficiency_ranked_only_with_its_pid() {
    let server = Fixture::start("crates/cli/tests/fixtures/hello_server.py", &[]);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/", server.url());
    let pid = server.pid().to_string();
    let quick = ["--trials", "1", "-d", "1s", "--warmup", "0s", "-c", "4", "--rank-by", "efficiency"];
    let mut results = Vec::new();
    for with_pid in [false, true] {
        let db = dir.path().join(format!("pid-{with_pid}.db"));
        let mut args = vec!["--url", &url];
        if with_pid {
            args.extend(["--pid", &pid]);
        }
        args.extend_from_slice(&quick);
        let out = bench(&args, &[], &db);
        results.push((with_pid, out.status.success(), text(&out), report(&db)));
    }
    drop(server);
    for (with_pid, ok, text, json) in results {
        assert!(ok, "--pid {with_pid}: {text}");
        let cell = &json["cells"][0];
        let warning = cell["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "unmanaged").expect("the unmanaged warning");
        let cpu = cell["metrics"]["cpu_us_per_request"]["median"].as_f64().unwrap();
        let ranked = json["relative"]["hello"].as_array().map_or(0, Vec::len);
        if with_pid {
            assert!(cpu > 0.0 && ranked == 1, "its tree's CPU measured and ranked: {cpu} {ranked}");
        } else {
            assert!(warning["message"].as_str().unwrap().contains("capacity and latency only"), "{warning}");
            assert!(cpu == 0.0 && ranked == 0, "no CPU, so no efficiency rank: {cpu} {ranked}");
        }
        assert_eq!(json["run"]["settings"]["adhoc"][0]["url"].as_str(), Some(url.as_str()));
    }
    let out = bench(&["--url", "http://192.0.2.1:80"], &[], &dir.path().join("x.db"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("not a loopback address") && text(&out).contains("hint:"), "{}", text(&out));
}

#[test]
fn get_flags_are_verified_measured_and_saved_as_a_scenario_file_that_reruns() {
    let server = Fixture::shop("");
    let dir = tempfile::tempdir().unwrap();
    let (url, pid) = (server.url(), server.pid().to_string());
    let saved = dir.path().join("items.toml");
    let saved_arg = saved.display().to_string();
    let quick = ["--trials", "1", "-d", "1s", "--warmup", "0s", "-c", "4", "--url", &url, "--pid", &pid];
    let get = ["--get", "/items/3", "--get", "/search?q=oak", "--expect-status", "200", "--save-scenario", &saved_arg];
    let first = bench(&[&quick[..], &get[..]].concat(), &[], &dir.path().join("get.db"));
    let first_json = report(&dir.path().join("get.db"));
    let rerun = bench(&[&quick[..], &["--scenario", &saved_arg][..]].concat(), &[], &dir.path().join("rerun.db"));
    let rerun_json = report(&dir.path().join("rerun.db"));
    // An expectation the server does not meet: verification fails and nothing is measured.
    let wrong = bench(&[&quick[..], &["--get", "/items/3", "--expect-body", "{}"][..]].concat(), &[], &dir.path().join("wrong.db"));
    drop(server);

    assert!(first.status.success(), "{}", text(&first));
    let file = std::fs::read_to_string(&saved).expect("--save-scenario wrote the file");
    assert!(file.contains("path = \"/items/3\"") && file.contains("path = \"/search?q=oak\"") && file.contains("status = 200"), "{file}");
    assert!(rerun.status.success(), "{}", text(&rerun));
    for json in [&first_json, &rerun_json] {
        let cell = &json["cells"][0];
        assert_eq!(cell["scenario"].as_str(), Some("file:items"), "{cell}");
        assert!(cell["metrics"]["requests_per_sec"]["median"].as_f64().unwrap() > 0.0, "{cell}");
        let unmanaged = cell["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "unmanaged").expect("the unmanaged warning");
        // python3 keeps the affinity it started with (every CPU), so it may run on the client's.
        assert!(unmanaged["message"].as_str().unwrap().contains(&format!("taskset -apc 0 {pid}")), "{unmanaged}");
    }
    assert!(!wrong.status.success(), "a wrong body must not pass: {}", text(&wrong));
    let why = text(&wrong);
    assert!(why.contains("body") && why.contains("/items/3"), "{why}");
}

/// A/B: the fixture server against itself with 300 µs of CPU spun in every request, in one run:
/// verified both, paired block by block, B slower on CPU per request beyond 10% (exit 3, the
/// gate's line says by how much), the Markdown report written with the verdict first, and the
/// JUnit XML with that metric's case failed.
#[test]
fn a_planted_slowdown_fails_the_gate_with_exit_three_and_the_markdown_opens_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, md, junit) = (dir.path().join("r.db"), dir.path().join("ab.md"), dir.path().join("ab.xml"));
    let (md_arg, junit_arg) = (md.display().to_string(), junit.display().to_string());
    let mut args = vec!["--cmd", "base=exec python3 hello_server.py", "--cmd", "head=SPIN_US=300 exec python3 hello_server.py"];
    args.extend("--trials 4 -d 1s --warmup 300ms -c 4 --fail-if-slower cpu=10% --markdown".split_whitespace());
    args.extend([md_arg.as_str(), "--junit", junit_arg.as_str()]);
    let out = bench(&args, &[], &db);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("gate: hello adhoc/head worse than adhoc/base beyond 10.0% on cpu_us_per_request"), "{}", text(&out));
    let markdown = std::fs::read_to_string(&md).expect("the Markdown report is written");
    let first = markdown.lines().filter(|l| !l.is_empty()).nth(1).unwrap_or_default();
    assert_eq!(first, "## A/B: adhoc/head (B) against adhoc/base (A)", "{markdown}");
    assert!(markdown.contains("hello: adhoc/head is slower than adhoc/base"), "{markdown}");
    let xml = std::fs::read_to_string(&junit).expect("the JUnit XML is written");
    assert!(xml.contains("failures=\"1\"") && xml.contains("beyond 10.0% on CPU per request"), "{xml}");
    assert!(fixture_servers().is_empty(), "left running: {:?}", fixture_servers());
}

/// Side-by-side flags that cannot work are refused before anything starts, each with its fix.
#[test]
fn an_ab_that_cannot_be_judged_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let cmd = "exec python3 hello_server.py";
    let cases: [(&[&str], &str); 5] = [
        (&["--cmd", cmd, "--fail-if-slower", "5%"], "give two servers"),
        (&["--cmd", cmd, "--junit", "ab.xml"], "--junit writes the A/B of two servers"),
        (&["--cmd", cmd, "--cmd", cmd], "name them, e.g. --cmd base="),
        (&["--cmd", "a=x", "--cmd", "b=y", "--cmd", "c=z"], "--cmd given 3 times"),
        (&["--cmd", "a=x", "--cmd", "b=y", "--fail-if-slower", "mem=5%"], "use rps, cpu, p99 or rss"),
    ];
    for (args, says) in cases {
        let out = bench(args, &[], &db);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?} should say `{says}`: {}", text(&out));
    }
    assert!(fixture_servers().is_empty(), "left running: {:?}", fixture_servers());
}

/// A repository of two commits of the fixture server, the second spinning 300 µs in every request.
fn two_commit_repo(dir: &Path) {
    let server = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hello_server.py")).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(["-c", "user.name=t", "-c", "user.email=t@t"]).args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    std::fs::write(dir.join("hello_server.py"), &server).unwrap();
    git(&["add", "hello_server.py"]);
    git(&["commit", "-q", "-m", "base"]);
    let slower = server.replace(r#"os.environ.get("SPIN_US", "0")"#, r#"os.environ.get("SPIN_US", "300")"#);
    assert_ne!(slower, server, "the fixture reads SPIN_US as this test expects");
    std::fs::write(dir.join("hello_server.py"), slower).unwrap();
    git(&["commit", "-q", "-am", "head"]);
}

/// `--rev base=HEAD~1 --rev head=HEAD`: the one command started in a worktree of each commit, the
/// second's planted slowdown failing the gate (exit 3), both recorded with their commits, and
/// every worktree removed afterwards; a revision git cannot find is refused with its fix, and no
/// worktree is left either.
#[test]
fn two_revisions_of_a_repository_are_an_ab_and_leave_no_worktree() {
    let repo = tempfile::tempdir().unwrap();
    two_commit_repo(repo.path());
    let db = repo.path().join("r.db").display().to_string();
    let bench_here = |args: &[&str]| {
        let mut all = vec!["bench", "--db", &db, "--no-ceiling", "--workers", "1", "--cmd", "exec python3 hello_server.py"];
        all.extend_from_slice(args);
        Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(&all).current_dir(repo.path()).env("BAKEOFF_ROOT", root()).output().unwrap()
    };
    let worktrees = || {
        let out = Command::new("git").args(["worktree", "list"]).current_dir(repo.path()).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    let out = bench_here(&[
        "--rev",
        "base=HEAD~1",
        "--rev",
        "head=HEAD",
        "--trials",
        "4",
        "-d",
        "1s",
        "--warmup",
        "300ms",
        "-c",
        "4",
        "--fail-if-slower",
        "cpu=10%",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("gate: hello adhoc/head worse than adhoc/base"), "{}", text(&out));
    assert_eq!(worktrees(), 1, "only the repository's own worktree is left");
    let json = report(Path::new(&db));
    let adhoc = json["run"]["settings"]["adhoc"].as_array().expect("the ad-hoc records").clone();
    assert_eq!(adhoc.len(), 2);
    assert!(adhoc.iter().all(|a| a["git_commit"].as_str().is_some_and(|c| c.len() >= 12)), "{adhoc:?}");
    assert_ne!(adhoc[0]["git_commit"], adhoc[1]["git_commit"], "each side ran its own commit");
    let bad = bench_here(&["--rev", "base=no-such-branch", "--rev", "head=HEAD"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("--rev no-such-branch: git cannot check it out"), "{}", text(&bad));
    assert_eq!(worktrees(), 1, "a refused revision leaves no worktree either");
    assert!(fixture_servers().is_empty(), "left running: {:?}", fixture_servers());
}
