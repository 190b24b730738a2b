//! Decks with a login against a server that issues a token per login and refuses requests
//! without that connection's token: one login per connection and per reconnect, every request
//! carrying its connection's token, failed logins counted apart and retried.

mod server;

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use bakeoff_load::{run_observed, Capture, Deck, DeckEntry, JsonStep, LoadPlan, Login, LoginCounts, LoginRequest, StepReport};
use server::{LoginServer, Refusal};

/// Two kinds: `item` sends the captured token, `public` sends nothing (the server refuses it
/// too, so it is expected to answer 401: its shared bytes must not carry a token).
fn deck() -> Deck {
    let mut item = DeckEntry::get(0, "/items/1");
    item.headers.push(("Authorization".into(), "Bearer {{token}}".into()));
    item.checks.expect_status = Some(200);
    let mut public = DeckEntry::get(1, "/public");
    public.checks.expect_status = Some(401);
    let login = Login {
        requests: vec![LoginRequest {
            method: "POST".into(),
            path: "/login".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Some(br#"{"user":"ada"}"#.to_vec()),
            expect_status: 200,
        }],
        captures: vec![Capture { name: "token".into(), path: vec![JsonStep::Key("token".into())] }],
    };
    Deck { kinds: vec!["item".into(), "public".into()], entries: vec![item.clone(), item.clone(), item, public], login: Some(login) }
}

/// Runs `plan` within `max`; its one step and its logins.
fn run(plan: &LoadPlan, max: Duration) -> (StepReport, LoginCounts) {
    let t = Instant::now();
    let out = run_observed(plan, &AtomicBool::new(false), None).unwrap();
    assert!(t.elapsed() < max, "took {:?}", t.elapsed());
    let step = out.report.steps[0].clone();
    let logins = step.logins.expect("a deck with a login counts its logins");
    (step, logins)
}

fn quick(url: &str) -> bakeoff_load::LoadPlanBuilder {
    LoadPlan::builder(url).connections(4).threads(2).timeout(Duration::from_secs(2)).deck(deck())
}

#[test]
fn each_connection_logs_in_once_and_sends_its_own_token() {
    let s = LoginServer::start(0, Refusal::Forbidden);
    let (st, logins) = run(&quick(&s.url()).requests(400).build().unwrap(), Duration::from_secs(20));
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!(st.requests, 400, "the logins are not requests of the deck");
    assert_eq!(logins, LoginCounts { sent: 4, failed: 0 });
    assert_eq!((s.accepts(), s.get(|c| &c.logins)), (4, 4));
    assert_eq!((s.get(|c| &c.authorized), s.get(|c| &c.unauthorized)), (300, 100), "every item carried its connection's token");
}

/// The server's accepts once its accept thread has caught up: a connection opened and logged in as
/// the run ended is in the listen backlog until then (the thread polls every millisecond).
fn settled_accepts(s: &LoginServer) -> u64 {
    let mut last = s.accepts();
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(20));
        let now = s.accepts();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

#[test]
fn reconnects_log_in_again() {
    let s = LoginServer::start(0, Refusal::Forbidden);
    let (st, logins) = run(&quick(&s.url()).requests(200).requests_per_conn(10).build().unwrap(), Duration::from_secs(20));
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert!(logins.sent >= 20 && logins.failed == 0, "{logins:?}");
    assert_eq!(s.get(|c| &c.logins), logins.sent);
    // A socket opened as the run ends may be accepted and never log in.
    assert!((logins.sent..=logins.sent + 4).contains(&settled_accepts(&s)), "{} accepts for {logins:?}", s.accepts());
    let s = LoginServer::start(0, Refusal::Forbidden);
    let (st, logins) = run(&quick(&s.url()).requests(60).close(true).build().unwrap(), Duration::from_secs(20));
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert!(logins.sent >= 60, "one login per request with --close: {logins:?}");
    assert!((logins.sent..=logins.sent + 4).contains(&settled_accepts(&s)), "{} accepts for {logins:?}", s.accepts());
    assert_eq!(s.get(|c| &c.unauthorized), 15);
}

#[test]
fn the_open_model_logs_in_once_per_connection() {
    let s = LoginServer::start(0, Refusal::Forbidden);
    let plan = quick(&s.url()).rate(400.0).duration(Duration::from_secs(1)).build().unwrap();
    let (st, logins) = run(&plan, Duration::from_secs(10));
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert!(st.requests >= 200, "{}", st.requests);
    assert_eq!(logins, LoginCounts { sent: 4, failed: 0 });
    assert_eq!(s.get(|c| &c.authorized) + s.get(|c| &c.unauthorized), st.requests + st.errors.total());
}

#[test]
fn a_failed_login_is_a_login_error_and_the_connection_retries() {
    for how in [Refusal::Forbidden, Refusal::NoToken] {
        let s = LoginServer::start(3, how);
        let plan = LoadPlan::builder(&s.url())
            .connections(1)
            .threads(1)
            .timeout(Duration::from_secs(2))
            .deck(deck())
            .requests(40)
            .build()
            .unwrap();
        // Backoffs of 20, 40 and 80 ms: well within a second.
        let (st, logins) = run(&plan, Duration::from_secs(5));
        assert_eq!(logins, LoginCounts { sent: 4, failed: 3 }, "{how:?}");
        assert_eq!(st.errors.login, 3, "{how:?}: {:?}", st.errors);
        assert_eq!(st.errors.total(), 3, "{how:?}: only the logins failed: {:?}", st.errors);
        // Each failed login uses up one request of the budget, as a failed connect does (so a run
        // whose logins always fail ends): 37 requests from the deck's start, 28 of them items.
        assert_eq!((st.requests, s.get(|c| &c.authorized)), (37, 28), "{how:?}");
    }
}

#[test]
fn a_server_that_never_lets_anyone_in_ends_a_request_count_run() {
    let s = LoginServer::start(u64::MAX, Refusal::Forbidden);
    let plan =
        LoadPlan::builder(&s.url()).connections(2).threads(1).timeout(Duration::from_secs(2)).deck(deck()).requests(5).build().unwrap();
    let (st, logins) = run(&plan, Duration::from_secs(10));
    assert_eq!(st.requests, 0);
    // Logins still unanswered when the run ends are neither successes nor failures.
    assert!(logins.failed >= 5 && logins.sent <= logins.failed + 2, "{logins:?}");
    assert_eq!(s.get(|c| &c.authorized) + s.get(|c| &c.unauthorized), 0);
}
