//! Snapshot tests of every format on the synthetic run (golden files in tests/snapshots; run with
//! BAKEOFF_UPDATE_SNAPSHOTS=1 to rewrite them after an intended change), and the HTML report checked
//! in headless Chromium (required in CI, skipped with a note elsewhere when it is not installed).

use bakeoff_report::{render, synthetic, Format, ReportView};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn snapshot_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(file)
}

/// Whole-file golden snapshots kept by hand rather than with insta: insta's `.snap` files carry a
/// metadata header, so demo.html would no longer open in a browser nor demo.csv in a spreadsheet,
/// and reviewing a report change means looking at exactly those files. Twenty lines do the job.
fn check_snapshot(f: Format) {
    matches_snapshot(&format!("demo.{}", f.extension()), &render(&synthetic::run_data(), f));
}

/// `got` against the snapshot file `file` (rewritten with BAKEOFF_UPDATE_SNAPSHOTS=1).
pub(crate) fn matches_snapshot(file: &str, got: &str) {
    let path = snapshot_path(file);
    if std::env::var_os("BAKEOFF_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want =
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} is missing; run with BAKEOFF_UPDATE_SNAPSHOTS=1", path.display()));
    if got != want {
        let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "the output differs from {} at line {}:\n got: {}\nwant: {}\n(BAKEOFF_UPDATE_SNAPSHOTS=1 rewrites it)",
            path.display(),
            line + 1,
            got.lines().nth(line).unwrap_or(""),
            want.lines().nth(line).unwrap_or("")
        );
    }
}

/// One snapshot test per format, each named for its format so a failure says which.
macro_rules! snapshot_tests {
    ($($name:ident: $format:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_snapshot(Format::$format);
            }
        )*
    };
}

snapshot_tests!(text_snapshot: Text, markdown_snapshot: Markdown, csv_snapshot: Csv, json_snapshot: Json, html_snapshot: Html);

/// A run read back from the store renders byte for byte as the run the lab handed over, in every
/// format: the reports depend on nothing the store drops or reorders.
#[test]
fn a_stored_run_renders_as_the_run_handed_over() {
    use bakeoff_model::records::results::ResultSink;
    let d = synthetic::run_data();
    let mut store = bakeoff_store::Store::open_in_memory().unwrap();
    store.begin_run(&d.run).unwrap();
    for v in &d.verifications {
        store.record_verification(&d.run.id, v).unwrap();
    }
    for t in &d.trials {
        store.record_trial(t).unwrap();
    }
    for c in &d.ceilings {
        store.record_ceiling(c).unwrap();
    }
    store.record_what_ran(&d.run.id, &d.what_ran).unwrap();
    store.finish_run(&d.run.id, &d.status).unwrap();
    let mut back = store.load_run(&d.run.id).unwrap();
    back.finished_at = d.finished_at.clone();
    for f in Format::ALL {
        assert!(render(&back, f) == render(&d, f), "{f} differs after a round trip through the store");
    }
}

/// One name per metric: every metric column CSV prints and every metric key JSON prints is accepted
/// as a claim's `metric`.
#[test]
fn every_printed_metric_name_is_accepted_by_a_claim() {
    let d = synthetic::run_data();
    let claim = |metric: &str| {
        let toml = format!("statement = \"s\"\ncheck = {{ kind = \"ratio\", a = \"a\", b = \"b\", scenario = \"hello\", metric = \"{metric}\", range = [1.0, 2.0] }}\n");
        toml::from_str::<bakeoff_model::study::Claim>(&toml).map(|c| match c.check {
            bakeoff_model::study::Check::Ratio { metric, .. } => metric,
            _ => None,
        })
    };
    let csv = render(&d, Format::Csv);
    let header = csv.lines().next().unwrap();
    let metrics: Vec<&str> = header.split(',').filter(|c| c.ends_with("_ci_low")).map(|c| c.trim_end_matches("_ci_low")).collect();
    assert_eq!(metrics.len(), bakeoff_model::statistics::summary::Metric::ALL.len());
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let keys: Vec<String> = json["cells"][0]["metrics"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys.len(), metrics.len());
    for name in metrics.iter().copied().chain(keys.iter().map(String::as_str)) {
        assert!(matches!(claim(name), Ok(Some(_))), "`{name}` is printed but a claim refuses it: {:?}", claim(name));
    }
    assert!(claim("p99_9_us").is_err(), "only one name per metric");
}

#[test]
fn reports_say_what_matters() {
    let d = synthetic::run_data();
    let text = render(&d, Format::Text);
    // The failed check, the background-noise warning beside python's row, the leak, the proxy study.
    assert!(text.contains("FAIL") && text.contains("the answer is cached"), "{text}");
    assert!(text.contains("other processes used 14% CPU"), "{text}");
    assert!(text.contains("memory grows"));
    assert!(text.contains("latency overhead over the baseline"));
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    assert_eq!(json["format"], "bakeoff-report");
    assert_eq!(json["version"], 2);
    // The article beside this run: its table, ours in the same layout, both relative to its reference.
    assert!(text.contains("== the article vs this machine: Python vs Rust =="), "{text}");
    assert!(text.contains("differs here: The article had 4 cores; here 2."));
    assert!(text.contains("128,748") && text.contains("normalised to python-flask"), "{text}");
    let article = &json["article"]["tables"][0]["rows"][0]["cells"][0];
    assert!((article["article_normalised"].as_f64().unwrap() - 128747.61 / 21095.92).abs() < 1e-9, "{article}");
    assert!(article["here_normalised"].as_f64().unwrap() > 1.0, "Rust serves hello faster than Python here too: {article}");
    // Every claim has a verdict: the old format still reads, the typed kinds judge, and the untestable one says why.
    let verdicts: Vec<&str> = json["claims"].as_array().unwrap().iter().map(|c| c["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts.len(), 8, "{verdicts:?}");
    assert_eq!(verdicts[7], "not_testable");
    // A cell that hung or used more cores than its workers is shown but never claimed about.
    assert_eq!(verdicts[2], "inconclusive");
    assert!(text.contains("is not ranked (stopped_answering"), "{text}");
    assert!(text.contains("not testable here") && text.contains("one power state here"));
    let growing: Vec<_> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["memory"]["growing"] == true)
        .map(|c| format!("{} {}", c["stack"].as_str().unwrap(), c["scenario"].as_str().unwrap()))
        .collect();
    assert_eq!(growing, ["go-fasthttp json", "go-pocketbase products"]);
    let csv = render(&d, Format::Csv);
    let rows: Vec<&str> = csv.lines().collect();
    let width = rows[0].split(',').count();
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(csv.as_bytes());
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("valid RFC 4180")).collect();
    // One row per cell-step, then one per store ceiling, then one per point of the soak's two
    // series, then one per point of each latency-under-load curve, then one per request kind of
    // each scenario file's cell-step.
    let soak_points = 13 + 60;
    let curve_points: usize = json["under_load"]["cells"].as_array().unwrap().iter().map(|c| c["points"].as_array().unwrap().len()).sum();
    assert_eq!(curve_points, 6 * 5, "three stacks x two scenarios x five fractions");
    let kind_rows: usize = json["cells"].as_array().unwrap().iter().filter_map(|c| c["kinds"].as_array()).map(Vec::len).sum();
    assert_eq!(kind_rows, 2 * 3, "two stacks x the shop's three kinds");
    assert_eq!(rows.len(), 1 + json["cells"].as_array().unwrap().len() + d.ceilings.len() + soak_points + curve_points + kind_rows);
    let knee_rows: Vec<&&str> = rows.iter().filter(|r| r.contains(" (knee),")).collect();
    assert_eq!(knee_rows.len(), 6, "one knee per curve: {knee_rows:?}");
    assert!(rows.iter().any(|r| r.contains(",ceiling:postgres,products,pgbench 15.18,")), "{csv}");
    assert!(rows[0].starts_with("run_id,stack,scenario,variant,workers,aa_twin,step"));
    assert!(records.iter().all(|r| r.len() == width), "every row has the header's {width} fields");
    let warnings = rows[0].split(',').position(|h| h == "warnings").unwrap();
    assert!(records.iter().any(|r| r[warnings].contains("other processes used 14% CPU")), "warnings column: {csv}");
    // HTML: problems and one line per clean stack above the fold, every check (passes too) folded.
    let html = render(&d, Format::Html);
    let (shown, folded) = html.split_once("<details>").expect("the full check list is folded");
    let section = shown.rsplit_once("<section id=\"verification\">").unwrap().1;
    assert!(section.contains("the answer is cached") && section.contains("all "), "{section}");
    let passing_check = "<td class=\"pass\">pass</td><td>body is Hello World!";
    assert!(!section.contains(passing_check), "passing checks are folded: {section}");
    assert!(folded.split_once("</details>").unwrap().0.contains(passing_check));
}

/// The products scenario shows both store ceilings as rows, and says that the Rust stack, at 95% of
/// the PostgreSQL ceiling, is held back by the database; the SQLite stacks are far below theirs.
#[test]
fn store_ceilings_are_shown_beside_the_stacks() {
    let d = synthetic::run_data();
    let limit = "the database, not the language, is the limit here";
    for f in [Format::Text, Format::Markdown, Format::Html] {
        let out = render(&d, f);
        assert!(out.contains("store ceiling (postgres, pgbench 15.18, 64 conns)"), "{f}");
        assert!(out.contains("store ceiling (sqlite, rusqlite (in-process, SQLite 3.45.0), 64 conns)"), "{f}");
        assert!(out.contains("rust-actix[postgres] products w2 reaches 95% of the postgres store ceiling"), "{f}");
        // One limited stack: a table note (and in HTML also a sentence above the charts).
        assert_eq!(out.matches(limit).count(), if f == Format::Html { 2 } else { 1 }, "{f}");
    }
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let ceilings = json["ceilings"].as_array().unwrap();
    assert_eq!((ceilings[0]["store"].as_str(), ceilings[0]["queries_per_sec"].as_f64()), (Some("postgres"), Some(150_000.0)));
    assert_eq!(ceilings[0]["limited_by_store"][0]["stack"], "rust-actix");
    assert_eq!(ceilings[1]["limited_by_store"].as_array().unwrap().len(), 0);
    let html = render(&d, Format::Html);
    assert!(html.contains("store ceiling (postgres, pgbench 15.18, 64 conns): 150k q/s"), "the dashed line is labelled");
}

/// The page loads nothing, and its charts draw this run: each scenario's throughput bars name its
/// headline cells, and its latency chart has a line per headline cell.
#[test]
fn html_is_self_contained_and_charts_the_run() {
    let d = synthetic::run_data();
    let html = render(&d, Format::Html);
    for banned in ["<script", "<link", "@import", "src=\"http", "href=\"http", "url("] {
        assert!(!html.contains(banned), "HTML report must not load anything: found {banned}");
    }
    let charts: Vec<&str> = html.split("<svg").skip(1).map(|s| s.split_once("</svg>").expect("a closed <svg>").0).collect();
    let chart = |title: &str| *charts.iter().find(|c| c.contains(title)).unwrap_or_else(|| panic!("no chart titled {title}"));
    let view = ReportView::new(&d);
    assert!(!view.scenarios.is_empty());
    for sv in &view.scenarios {
        let bars = chart(&format!("{}: requests/s (median, 95% CI)", sv.scenario));
        for c in sv.headline.iter().filter(|c| c.target_rate.is_none()) {
            let bar = c.cell.label().replace(&format!(" {}", sv.scenario), "");
            assert!(bars.contains(&bar), "{}: no bar for {bar}", sv.scenario);
        }
        let latency = chart(&format!("{}: latency percentiles", sv.scenario));
        for c in &sv.headline {
            assert!(latency.contains(&c.cell.label()), "{}: no latency line for {}", sv.scenario, c.cell.label());
        }
    }
}

#[test]
fn unfinished_run_is_flagged() {
    let mut d = synthetic::run_data();
    d.status = bakeoff_model::RunStatus::Running;
    d.finished_at = None;
    for f in [Format::Text, Format::Markdown, Format::Html] {
        assert!(render(&d, f).contains("never finished"), "{f}");
    }
}

/// The browser the HTML check runs: `chromium` on PATH or in /usr/bin. Where there is none the
/// check is skipped, saying why on the terminal, except in CI (`CI` set and not `false`/`0`), where
/// scripts/install-deps.sh installs it and its absence is a failure.
fn chromium() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join("chromium")).find(|c| c.is_file()));
    let found = on_path.or_else(|| Some(PathBuf::from("/usr/bin/chromium")).filter(|c| c.is_file()));
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "false" | "0"));
        assert!(!ci, "CI is set but chromium is missing: run scripts/install-deps.sh");
        // Straight to the terminal: the harness swallows a passing test's eprintln!.
        let _ = writeln!(
            std::io::stderr(),
            "skipped html_renders_in_headless_chromium: chromium is not installed (apt-get install -y chromium)"
        );
    }
    found
}

/// Headless Chromium renders the file: the dumped DOM holds this run's charts and tables (its id,
/// every stack, each scenario's relative speeds, the failed check), and the log shows no console error.
#[test]
fn html_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else { return };
    let d = synthetic::run_data();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    std::fs::write(&file, render(&d, Format::Html)).unwrap();
    let shot = std::env::var("BAKEOFF_SCREENSHOT").ok();
    let mut args = headless_args(&dir.path().join("profile"));
    args.push("--dump-dom".into());
    args.push(format!("file://{}", file.display()));
    let out = Command::new(&chromium).args(&args).output().expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert_rendered(&dom, &d);
    let console_errors: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE") && l.contains("ERROR")).collect();
    assert!(console_errors.is_empty(), "console errors: {console_errors:?}");
    if let Some(png) = shot {
        // For people: BAKEOFF_SCREENSHOT=/tmp/report.png cargo test -p bakeoff-report html_renders
        let mut a = args.clone();
        a.retain(|x| x != "--dump-dom");
        a.insert(a.len() - 1, format!("--screenshot={png}"));
        a.insert(a.len() - 1, "--window-size=1600,4000".into());
        Command::new(&chromium).args(&a).output().unwrap();
    }
}

/// Headless Chromium without network, GPU, sandbox or a profile of its own, logging to stderr.
fn headless_args(profile: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    args
}

/// The first screen a reader sees, in pixels.
const SCREEN: (u32, u32) = (1280, 800);

/// The HTML report opens with its summary: the answer for every scenario, the claims' counts and
/// what to distrust come before every other section; Chromium takes a screenshot of the first
/// screen at the size asked (read from the PNG's header), and in a window of that size the summary
/// ends within it (measured by a script added to a copy for the test: the report itself has none).
#[test]
fn html_summary_is_the_first_screen() {
    let d = synthetic::run_data();
    let html = render(&d, Format::Html);
    let summary = html.find("<section id=\"summary\">").expect("a summary section");
    assert_eq!(html.find("<section"), Some(summary), "the summary comes before every other section");
    let first = &html[summary..summary + html[summary..].find("</section>").unwrap()];
    let view = ReportView::new(&d);
    for sv in &view.scenarios {
        assert!(first.contains(&format!("<li>{}: ", sv.scenario)), "the answer for {}", sv.scenario);
    }
    assert!(first.contains("leads by") && first.contains("paired"), "margins with paired intervals: {first}");
    let held = view.claims.iter().filter(|c| c.verdict == bakeoff_model::study::ClaimVerdict::Held).count();
    assert!(first.contains(&format!("The claims: {held} held")), "{first}");
    let bound = view.scenarios.iter().flat_map(|s| &s.headline).any(|c| c.client_bound && c.target_rate.is_none());
    assert_eq!(first.contains("client-bound"), bound, "client-bound cells are named when there are some: {first}");
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let missed = json["precision"]["missed"].as_array().map_or(0, Vec::len);
    assert!(missed > 0 && first.contains(&format!("<li>{missed} of ")), "missed precision is counted: {first}");
    assert!(first.contains("What to distrust") && first.contains("background noise (3)"), "{first}");
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (file, measured, png) = (dir.path().join("report.html"), dir.path().join("measured.html"), dir.path().join("first.png"));
    std::fs::write(&file, &html).unwrap();
    let window = format!("--window-size={},{}", SCREEN.0, SCREEN.1);
    let mut args = headless_args(&dir.path().join("profile"));
    args.extend([format!("--screenshot={}", png.display()), window.clone(), format!("file://{}", file.display())]);
    let out = Command::new(&chromium).args(&args).output().expect("chromium runs");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR", "a PNG");
    let size = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((size(16), size(20)), SCREEN, "the screenshot has the size asked for");
    let probe = "<script>const r=document.getElementById('summary').getBoundingClientRect();\
                 document.body.dataset.bottom=Math.ceil(r.bottom+window.scrollY);document.body.dataset.width=window.innerWidth;</script>";
    std::fs::write(&measured, html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let mut args = headless_args(&dir.path().join("profile2"));
    args.extend(["--dump-dom".to_string(), window, format!("file://{}", measured.display())]);
    let dom = String::from_utf8_lossy(&Command::new(&chromium).args(&args).output().expect("chromium runs").stdout).to_string();
    let attr = |name: &str| -> u32 {
        let at = dom.find(&format!("data-{name}=\"")).unwrap_or_else(|| panic!("no data-{name} in the DOM: the probe did not run"));
        let rest = &dom[at + name.len() + 7..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };
    // The page is laid out as wide as the screenshot (so it wraps the same); its height is the
    // screenshot's, whatever the window's frame takes in this mode.
    let (bottom, width) = (attr("bottom"), attr("width"));
    assert_eq!(width, SCREEN.0, "the page is laid out as wide as the screen asked for");
    assert!(bottom <= SCREEN.1, "the summary ends at {bottom} px, below the first screen of {} px", SCREEN.1);
    let _ = writeln!(std::io::stderr(), "the summary ends at {bottom} px of a {}x{} screen", SCREEN.0, SCREEN.1);
}

/// Every table fits a 1280 px page (long lists wrap, no table scrolls sideways) and the page never
/// scrolls sideways, at 1280 px nor at a phone's 390 px (a table too wide for a phone scrolls in
/// its own box): Chromium lays out a copy of the report with a probe that measures both.
#[test]
fn html_fits_1280_and_390_pixels_without_scrolling_sideways() {
    let Some(chromium) = chromium() else { return };
    let d = synthetic::run_data();
    let html = render(&d, Format::Html);
    let dir = tempfile::tempdir().unwrap();
    // The report is laid out in a frame of each width (a window cannot be narrower than 500 px),
    // and its probe writes what it measured onto the page that holds the frame.
    let probe = "<script>const t=[...document.querySelectorAll('table')];const b=parent.document.body.dataset;\
                 b.page=document.documentElement.scrollWidth-window.innerWidth;\
                 b.wide=t.filter(x=>x.scrollWidth>x.clientWidth+1).map(x=>(x.closest('section')||{}).id+':'+x.scrollWidth).join(' ')||'none';\
                 b.width=window.innerWidth;</script>";
    std::fs::write(dir.path().join("measured.html"), html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    for (width, tables_fit) in [(1280u32, true), (390, false)] {
        let file = dir.path().join(format!("frame-{width}.html"));
        let frame = format!("<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"measured.html\" width=\"{width}\" height=\"900\" style=\"border:0\"></iframe></body></html>");
        std::fs::write(&file, frame).unwrap();
        let mut args = headless_args(&dir.path().join(format!("profile-{width}")));
        args.extend([
            "--allow-file-access-from-files".to_string(),
            "--dump-dom".to_string(),
            "--virtual-time-budget=5000".to_string(),
            "--window-size=1400,1000".to_string(),
            format!("file://{}", file.display()),
        ]);
        let dom = String::from_utf8_lossy(&Command::new(&chromium).args(&args).output().expect("chromium runs").stdout).to_string();
        let attr = |name: &str| -> String {
            let at = dom.find(&format!("data-{name}=\"")).unwrap_or_else(|| panic!("no data-{name} in the DOM: the probe did not run"));
            let rest = &dom[at + name.len() + 7..];
            rest[..rest.find('"').unwrap()].to_string()
        };
        assert_eq!(attr("width"), width.to_string(), "laid out {width} px wide");
        let overflow: i64 = attr("page").parse().unwrap();
        assert!(overflow <= 0, "at {width} px the page scrolls sideways by {overflow} px (tables wider than their box: {})", attr("wide"));
        if tables_fit {
            assert_eq!(attr("wide"), "none", "at {width} px these tables are wider than the page (section:width)");
        }
    }
}

/// What the browser must have built from `d`: charts with lines, the run's id, every stack, each
/// scenario's relative speeds as the view computed them, the proxy study and the failed check.
fn assert_rendered(dom: &str, d: &bakeoff_model::records::run_data::RunData) {
    assert!(dom.contains("<polyline") || dom.contains("<path"), "no chart lines in the DOM");
    assert!(dom.contains(&format!("bakeoff run <code>{}</code>", synthetic::RUN_ID)), "the run's id");
    for t in &d.trials {
        assert!(dom.contains(&t.cell.stack), "stack {} is missing from the DOM", t.cell.stack);
    }
    let view = ReportView::new(d);
    for r in view.scenarios.iter().flat_map(|s| &s.relative).filter(|r| !r.fastest) {
        let row = format!("<td>{}</td><td class=\"num\">{:.2}</td>", r.cell.label(), r.ratio);
        assert!(dom.contains(&row), "relative speed row {row} is missing");
    }
    assert!(dom.contains("Proxy study") && dom.contains("the answer is cached"), "the proxy study and the failed check");
}

/// Every format says what a request costs: per measured cell, requests per core-second (1e6 over
/// its CPU µs per request, the interval's ends inverted) and, at the study's price of a core-hour,
/// the price of a million requests.
#[test]
fn what_a_request_costs_is_in_every_format() {
    let d = synthetic::run_data();
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    assert_eq!(json["price"], "core-hour=0.04");
    let rows = json["cost"].as_array().expect("cost rows");
    assert!(!rows.is_empty());
    for r in rows {
        let (cpu, per_core, million) = (&r["cpu_us"], &r["per_core_second"], &r["per_million"]);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(per_core["median"].as_f64().unwrap(), 1e6 / cpu["median"].as_f64().unwrap()), "{r}");
        assert!(close(per_core["ci_low"].as_f64().unwrap(), 1e6 / cpu["ci_high"].as_f64().unwrap()), "the ends invert: {r}");
        assert!(close(million["median"].as_f64().unwrap(), cpu["median"].as_f64().unwrap() / 3600.0 * 0.04), "{r}");
    }
    let first = &rows[0];
    // The first row's requests per core-second as the tables print them: thousands grouped.
    let digits = (first["per_core_second"]["median"].as_f64().unwrap().round() as u64).to_string();
    let per_core: String = digits
        .chars()
        .enumerate()
        .flat_map(|(i, c)| ((i > 0 && (digits.len() - i).is_multiple_of(3)).then_some(',')).into_iter().chain([c]))
        .collect();
    for f in [Format::Text, Format::Markdown, Format::Html] {
        let out = render(&d, f);
        assert!(out.to_lowercase().contains("what a request costs"), "{f}: the section");
        assert!(out.contains("per million requests at core-hour=0.04") && out.contains(&per_core), "{f}: {per_core}");
    }
    let csv = render(&d, Format::Csv);
    assert!(csv.lines().next().unwrap().contains("requests_per_core_second,requests_per_core_second_low"), "CSV columns");
}

/// Joules per request where the trials read energy counters: the packages' joules over each trial's
/// requests, in millijoules with their interval (here 2 mJ in every trial), in every format; a run
/// without counters says in every format that they were not measured, and why.
#[test]
fn joules_per_request_where_the_machine_has_energy_counters_and_why_not_elsewhere() {
    let plain = synthetic::run_data();
    for f in [Format::Text, Format::Markdown, Format::Html] {
        assert!(render(&plain, f).contains("joules per request: not measured"), "{f}");
    }
    let mut d = synthetic::run_data();
    for t in &mut d.trials {
        let requests: u64 = t.load.steps.iter().map(|s| s.requests).sum();
        t.noise.get_or_insert_with(Default::default).energy_j = Some(0.002 * requests as f64);
    }
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let rows = json["cost"].as_array().expect("cost rows");
    assert!(rows.iter().all(|r| (r["joules"]["median"].as_f64().unwrap() - 0.002).abs() < 1e-12), "{rows:?}");
    for f in [Format::Text, Format::Markdown, Format::Html] {
        let out = render(&d, f);
        assert!(out.contains("mJ per request") && out.contains("2.00 (2.00–2.00)") && !out.contains("not measured: no trial"), "{f}");
    }
    let csv = render(&d, Format::Csv);
    assert!(csv.lines().next().unwrap().contains("joules_per_request,joules_per_request_low,joules_per_request_high"), "CSV columns");
}

/// Every format says what ran (server model, workers, pool, libraries, versions), and the HTML
/// report shows the run's settings as rows, not as one line of JSON, without repeating the study's
/// article and claims, which have sections of their own.
#[test]
fn what_ran_is_in_every_format() {
    let d = synthetic::run_data();
    let versions = "go 1.26.8, github.com/valyala/fasthttp v1.74.0";
    for f in [Format::Text, Format::Markdown, Format::Html, Format::Csv] {
        let out = render(&d, f);
        assert!(out.contains(versions) && out.contains("goroutines") && out.contains("tinylib/msgp"), "{f}");
    }
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let go = &json["what_ran"][2];
    assert_eq!(
        (go["stack"].as_str(), go["profile"]["server_model"].as_str(), go["pool_size"].as_u64()),
        (Some("go-fasthttp"), Some("goroutines"), Some(8))
    );
    let html = render(&d, Format::Html);
    assert!(html.contains("<section id=\"what-ran\">") && html.contains("<th>load.trials</th>"), "settings as rows");
    assert!(html.contains("<section id=\"claims\">") && !html.contains("<th>study.claims."), "claims once, in their section");
    assert!(html.contains("<section id=\"article\">") && !html.contains("<th>study.article."), "the article once, in its section");
    // Text and Markdown list the settings in words, no line of raw JSON (the JSON report keeps them all).
    for f in [Format::Text, Format::Markdown] {
        let out = render(&d, f);
        assert!(!out.contains("\"connections\"") && !out.contains("settings:") && !out.contains("| settings |"), "{f}");
        for (key, value) in [("load", "closed model, 64 connections"), ("CPUs", "server 0-1, client 2-3"), ("precision", "±5% on capacity")]
        {
            assert!(out.lines().any(|l| l.contains(key) && l.contains(value)), "{f}: {key} {value}");
        }
    }
    assert_eq!(json["run"]["settings"]["load"]["precision"].as_f64(), Some(0.05), "JSON keeps every setting");
    assert!(!html.contains("{&quot;client_cpus&quot;") && !html.contains("{\"client_cpus\""), "no raw settings JSON");
}

/// A variant served over TLS or HTTP/2 shows its protocol and what the lab set for TLS in every
/// format; a run all in cleartext HTTP/1.1 has no protocol column in its what-ran table.
#[test]
fn what_ran_shows_each_variants_protocol_and_tls() {
    let plain = synthetic::run_data();
    assert!(!render(&plain, Format::Text).lines().any(|l| l.starts_with("stack") && l.contains("protocol")));
    let mut d = synthetic::run_data();
    let tls = "TLS 1.3 only, TLS13_AES_128_GCM_SHA256 only, an ECDSA P-256 certificate signed by the run's CA";
    let go = d.what_ran.iter_mut().find(|w| w.stack == "go-fasthttp").expect("the demo's go-fasthttp");
    go.protocol = bakeoff_model::protocol::WireProtocol::H2;
    go.tls = Some(tls.into());
    for f in [Format::Text, Format::Markdown, Format::Html] {
        let out = render(&d, f);
        assert!(out.contains(&format!("h2 ({tls})")), "{f}");
    }
    let csv = render(&d, Format::Csv);
    let header: Vec<&str> = csv.lines().next().unwrap().trim_end().split(',').collect();
    assert!(header.windows(2).any(|w| w == ["protocol", "tls"]), "{header:?}");
    assert!(csv.lines().any(|l| l.contains(",go-fasthttp,") && l.contains(",h2,") && l.contains(tls)), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let row = json["what_ran"].as_array().unwrap().iter().find(|w| w["stack"] == "go-fasthttp").unwrap();
    assert_eq!((row["protocol"].as_str(), row["tls"].as_str()), (Some("h2"), Some(tls)));
}

/// A soak's series are data in JSON and CSV, not only pictures: the same points, trial by trial, in
/// the units the columns name (the demo soak: RSS every 5 s from 40 to 46 MiB, requests/s per second
/// from 1,200 down by 5).
#[test]
fn soak_series_are_in_json_and_csv() {
    let d = synthetic::run_data();
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let soaks = json["soaks"].as_array().unwrap();
    assert_eq!(soaks.len(), 1, "only the one-minute cell is a soak");
    assert_eq!((soaks[0]["stack"].as_str(), soaks[0]["scenario"].as_str()), (Some("go-pocketbase"), Some("products")));
    let trial = &soaks[0]["trials"][0];
    let pairs = |key: &str| -> Vec<(f64, f64)> {
        trial[key].as_array().unwrap().iter().map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap())).collect()
    };
    let (rss, rps) = (pairs("rss_mib"), pairs("requests_per_sec"));
    assert_eq!((rss.len(), rss[0], rss[12]), (13, (0.0, 40.0), (1.0, 46.0)));
    assert_eq!((rps.len(), rps[0].1, rps[59].1), (60, 1200.0, 905.0));

    let csv = render(&d, Format::Csv);
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (series, minute, value, rps_col) = (col("series"), col("series_minute"), col("series_value"), col("requests_per_sec"));
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let points = |name: &str| -> Vec<(f64, f64)> {
        records.iter().filter(|r| &r[series] == name).map(|r| (r[minute].parse().unwrap(), r[value].parse().unwrap())).collect()
    };
    assert_eq!(points("rss_mib"), rss, "CSV and JSON carry the same RSS points");
    assert_eq!(points("requests_per_sec"), rps, "and the same requests/s points");
    assert!(records.iter().filter(|r| !r[series].is_empty()).all(|r| &r[1] == "go-pocketbase" && r[rps_col].is_empty() && &r[7] == "soak"));
    assert!(records.iter().filter(|r| r[series].is_empty()).count() > 10, "cell rows keep the series columns empty");
}

/// The scenario file's cells show each request kind in every format, from the same view: the JSON
/// `kinds` of a cell are the CSV's kind rows and the tables' rows; a run without one shows none.
#[test]
fn request_kinds_are_in_every_format() {
    let d = synthetic::run_data();
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let cells = json["cells"].as_array().unwrap();
    let with_kinds: Vec<&serde_json::Value> = cells.iter().filter(|c| c.get("kinds").is_some()).collect();
    assert_eq!(with_kinds.len(), 2, "Rust's and Go's shop cells");
    assert!(with_kinds.iter().all(|c| c["scenario"] == "file:shop"));
    assert!(cells.iter().filter(|c| c["scenario"] != "file:shop").all(|c| c.get("kinds").is_none()), "built-in cells have no kinds");
    let go = with_kinds.iter().find(|c| c["stack"] == "go-fasthttp").unwrap();
    let kinds = go["kinds"].as_array().unwrap();
    let names: Vec<&str> = kinds.iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["item", "search", "cart"]);
    let asked: Vec<f64> = kinds.iter().map(|k| k["asked_percent"].as_f64().unwrap()).collect();
    assert_eq!(asked, [60.0, 30.0, 10.0]);
    let search = &kinds[1];
    assert_eq!(search["errors"], 24.0, "Go's searches failed 12, 24 and 36 times: the median is 24");
    assert!(search["p99_us"].as_f64().unwrap() > kinds[0]["p99_us"].as_f64().unwrap(), "a search is slower than an item");
    assert_eq!(kinds[2]["mix_drift"], true, "Go drifted on carts in one trial");

    let csv = render(&d, Format::Csv);
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let rows: Vec<&csv::StringRecord> = records.iter().filter(|r| !r[col("kind")].is_empty()).collect();
    assert_eq!(rows.len(), 6, "a row per cell and kind");
    let go_search = rows.iter().find(|r| &r[1] == "go-fasthttp" && &r[col("kind")] == "search").unwrap();
    assert_eq!(go_search[col("kind_errors")].parse::<f64>().unwrap(), 24.0);
    assert_eq!(go_search[col("kind_asked_percent")].parse::<f64>().unwrap(), 30.0);
    assert_eq!(go_search[col("kind_share_percent")].parse::<f64>().unwrap(), search["share_percent"].as_f64().unwrap());
    assert_eq!(go_search[col("p99_us")].parse::<f64>().unwrap(), search["p99_us"].as_f64().unwrap());
    assert!(go_search[col("requests_per_sec")].is_empty(), "the cell's metrics are on its own row");

    let text = render(&d, Format::Text);
    let section = text.split_once("== request kinds ==").expect("a request kinds section").1;
    let row = section.lines().find(|l| l.starts_with("go-fasthttp file:shop w2") && l.contains(" search ")).expect("Go's search row");
    assert!(row.contains("30.0%") && row.trim_end().ends_with("24"), "{row}");
    assert!(text.find("== file:shop ==").unwrap() < text.find("== request kinds ==").unwrap(), "after the scenario tables");
    let md = render(&d, Format::Markdown);
    assert!(md.contains("## Request kinds") && md.contains("| go-fasthttp file:shop w2 | 64 connections | search |"), "{md}");
    let html = render(&d, Format::Html);
    let section = html.split_once("<section id=\"kinds\">").expect("an HTML request kinds section").1;
    assert!(section.contains("<td>search</td>") && section.contains("<td class=\"warn\">10."), "{section}");

    // Without a scenario file, no format says anything of kinds.
    let mut plain = synthetic::run_data();
    plain.trials.retain(|t| t.cell.scenario.id() != "file:shop");
    assert!(!render(&plain, Format::Text).contains("request kinds"));
    assert!(!render(&plain, Format::Markdown).contains("Request kinds"));
    assert!(!render(&plain, Format::Html).contains("id=\"kinds\""));
    assert!(!render(&plain, Format::Json).contains("\"kinds\""));
}
