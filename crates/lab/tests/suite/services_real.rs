//! Real services started by the lab: PostgreSQL (initdb as the postgres user, seeded with `product`),
//! nginx with generated bodies, and the MongoDB-protocol document store; each stopped afterwards.

use crate::common;

use bakeoff_lab::contract::verify::{Client, LiveData};
use bakeoff_model::scenario::ServiceKind;
use std::time::Duration;

#[test]
fn postgres_is_created_seeded_probed_and_stopped() {
    let scratch = common::Scratch::new("pg");
    let services = common::services(&[ServiceKind::Postgres], &scratch, &[]);
    let pg = services.postgres.as_ref().unwrap();
    assert!(pg.url.starts_with("postgres://postgres@127.0.0.1:"), "{}", pg.url);
    let rows = pg.psql("bakeoff", &["-tAc", "SELECT count(*), max(price) FROM product"]).unwrap();
    assert_eq!(rows.trim(), "20|40.99");
    pg.set_text(4, "name", "changed").unwrap();
    let name = pg.psql("bakeoff", &["-tAc", "SELECT name FROM product WHERE id = 4"]).unwrap();
    assert_eq!(name.trim(), "changed");
    let pid = pg.pid();
    drop(services);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || !bakeoff_lab::machine::process::group_alive(pid as i32),
        "postgres must be stopped"
    );
}

#[test]
fn nginx_serves_generated_bodies_and_is_stopped() {
    let scratch = common::Scratch::new("nginx");
    let services = common::services(&[ServiceKind::Nginx], &scratch, &[]);
    let nginx = services.nginx.as_ref().unwrap();
    let mut c = Client::new(nginx.addr, Duration::from_secs(5));
    for size in [1usize, 10_240, 1_048_576] {
        let r = c.get(&format!("/bytes/{size}")).unwrap();
        assert_eq!((r.status, r.body.len()), (200, size));
    }
    assert_eq!(c.get("/other").unwrap().status, 404);
    let pid = nginx.pid();
    drop(services);
    assert!(!bakeoff_lab::machine::process::group_alive(pid as i32), "nginx must be stopped");
}
