//! Reading `stack.toml` into a validated [`Stack`]: the raw TOML shapes, then every field checked,
//! each failure a message naming the file, the field and the fix.

use super::{Database, ProductsProbe, Setup, Stack, StackKind, Variant, MANIFEST_FILE};
use crate::error::LabError;
use bakeoff_model::duration::parse_duration;
use bakeoff_model::protocol::WireProtocol;
use bakeoff_model::records::profile::{ServerModel, StackProfile};
use bakeoff_model::scenario::{Scenario, ServiceKind};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    language: String,
    runtime: String,
    framework: String,
    server: String,
    description: String,
    seed: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    scenarios: Vec<String>,
    #[serde(default)]
    services: Vec<String>,
    #[serde(default)]
    toolchain: Vec<String>,
    #[serde(default)]
    apt: Vec<String>,
    setup: Option<RawSetup>,
    start: Option<RawStart>,
    #[serde(default)]
    variants: Vec<RawVariant>,
    products_probe: Option<ProductsProbe>,
    profile: Option<RawProfile>,
}

/// `[profile]`: what the stack is made of, for the reports' "what ran" (docs/stacks.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    server_model: String,
    json: String,
    msgpack: String,
    database: String,
    pool: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetup {
    commands: Vec<String>,
    #[serde(default)]
    inputs: Vec<String>,
    timeout: Option<String>,
    versions: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStart {
    command: String,
    ready_timeout: Option<String>,
    warmup: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    name: String,
    database: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    scenarios: Option<Vec<String>>,
    #[serde(default)]
    services: Vec<String>,
    reproduces: Option<String>,
    #[serde(default)]
    protocol: Option<String>,
}

/// Parses and validates manifest text; `dir` is the stack folder (for `setup.inputs` and messages).
pub(crate) fn parse(text: &str, dir: &Path, name: &str) -> Result<Stack, LabError> {
    let file = dir.join(MANIFEST_FILE);
    let err = |problem: String, hint: &str| LabError::manifest(&file, problem, hint);
    let raw: RawManifest = toml::from_str(text)
        .map_err(|e| err(e.to_string().trim().to_string(), "compare with the format in docs/stacks.md (fields, types, spelling)"))?;

    check_identity(&raw, name, &file)?;
    let kind = match raw.kind.as_deref() {
        None | Some("http") => StackKind::Http,
        Some("proxy") => StackKind::Proxy,
        Some("baseline") => StackKind::Baseline,
        Some(other) => return Err(err(format!("`kind = \"{other}\"` is unknown"), "use \"http\", \"proxy\" or \"baseline\"")),
    };
    let start = match (raw.start, kind) {
        (Some(s), _) if !s.command.trim().is_empty() => s,
        (None, StackKind::Baseline) => RawStart { command: String::new(), ready_timeout: None, warmup: None },
        _ => {
            return Err(err("`start.command` is missing or empty".into(), "add [start] with command = \"exec ...\" that starts the server"))
        }
    };
    let scenarios = parse_scenarios(&raw.scenarios, "scenarios", &file)?;
    if scenarios.is_empty() {
        return Err(err("`scenarios` is empty".into(), "list the scenarios the stack implements"));
    }
    if (kind != StackKind::Http) != (scenarios == [Scenario::Proxy]) {
        return Err(err(
            "a proxy or baseline stack implements exactly `scenarios = [\"proxy\"]`, and only those do".into(),
            "set `kind = \"proxy\"` with scenarios [\"proxy\"], or remove \"proxy\" from scenarios",
        ));
    }
    let services = parse_services(&raw.services, "services", &file)?;
    let setup = raw.setup.map(|s| parse_setup(s, dir, &file)).transpose()?;
    let ready_timeout = duration(start.ready_timeout.as_deref(), "start.ready_timeout", Duration::from_secs(30), &file)?;
    let warmup = start.warmup.as_deref().map(|w| duration(Some(w), "start.warmup", Duration::ZERO, &file)).transpose()?;
    let variants = parse_variants(raw.variants, &scenarios, &file)?;
    let profile = parse_profile(raw.profile, kind, &file)?;

    Ok(Stack {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        language: raw.language,
        runtime: raw.runtime,
        framework: raw.framework,
        server: raw.server,
        description: raw.description,
        seed: raw.seed,
        kind,
        scenarios,
        services,
        toolchain: raw.toolchain,
        apt: raw.apt,
        setup,
        start_command: start.command,
        ready_timeout,
        warmup,
        variants,
        products_probe: raw.products_probe,
        profile,
        unmanaged: None,
    })
}

/// The stack's identity: its language matches its folder, and its descriptive fields say something.
fn check_identity(raw: &RawManifest, name: &str, file: &Path) -> Result<(), LabError> {
    let err = |problem: String, hint: &str| LabError::manifest(file, problem, hint);
    let language_dir = name.split('/').next().unwrap_or_default();
    if raw.language != language_dir {
        return Err(err(
            format!("`language = \"{}\"` but the stack is in stacks/{language_dir}/", raw.language),
            "make `language` match the folder, or move the folder",
        ));
    }
    for (field, value) in
        [("runtime", &raw.runtime), ("framework", &raw.framework), ("server", &raw.server), ("description", &raw.description)]
    {
        if value.trim().is_empty() {
            return Err(err(format!("`{field}` is empty"), "say what it is in a few words"));
        }
    }
    Ok(())
}

/// `[setup]`: its inputs must exist in the stack folder (their change redoes the setup).
fn parse_setup(s: RawSetup, dir: &Path, file: &Path) -> Result<Setup, LabError> {
    for input in &s.inputs {
        if !dir.join(input).exists() {
            return Err(LabError::manifest(
                file,
                format!("`setup.inputs` names `{input}`, which does not exist in the stack folder"),
                "list files or folders of the stack whose change must redo the setup",
            ));
        }
    }
    let timeout = duration(s.timeout.as_deref(), "setup.timeout", Duration::from_secs(1200), file)?;
    Ok(Setup { commands: s.commands, inputs: s.inputs, timeout, versions: s.versions.filter(|v| !v.trim().is_empty()) })
}

fn parse_profile(raw: Option<RawProfile>, kind: StackKind, file: &Path) -> Result<Option<StackProfile>, LabError> {
    let Some(p) = raw else {
        if kind == StackKind::Baseline {
            return Ok(None);
        }
        return Err(LabError::manifest(
            file,
            "`[profile]` is missing".to_string(),
            "add [profile] with server_model, json, msgpack, database and pool (docs/stacks.md)",
        ));
    };
    let server_model = ServerModel::parse(&p.server_model).map_err(|e| {
        LabError::manifest(file, format!("`profile.server_model`: {e}"), "pick the model that runs the request handlers (docs/stacks.md)")
    })?;
    Ok(Some(StackProfile { server_model, json: p.json, msgpack: p.msgpack, database: p.database, pool: p.pool }))
}

fn duration(value: Option<&str>, field: &str, default: Duration, file: &Path) -> Result<Duration, LabError> {
    match value {
        None => Ok(default),
        Some(v) => parse_duration(v).map_err(|e| LabError::manifest(file, format!("`{field}`: {e}"), "write e.g. \"30s\" or \"5m\"")),
    }
}

fn parse_scenarios(ids: &[String], field: &str, file: &Path) -> Result<Vec<Scenario>, LabError> {
    let mut out = Vec::new();
    for id in ids {
        let s: Scenario = id.parse().map_err(|e: String| LabError::manifest(file, format!("`{field}`: {e}"), "see docs/scenarios.md"))?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

fn parse_services(ids: &[String], field: &str, file: &Path) -> Result<Vec<ServiceKind>, LabError> {
    ids.iter()
        .map(|id| id.parse().map_err(|e: String| LabError::manifest(file, format!("`{field}`: {e}"), "remove it or fix the spelling")))
        .collect()
}

/// What the lab sets in every server's environment for the protocol, which a variant may not.
const LAB_ENV: [&str; 3] = ["PROTOCOL", "TLS_CERT", "TLS_KEY"];

fn parse_variants(raw: Vec<RawVariant>, stack_scenarios: &[Scenario], file: &Path) -> Result<Vec<Variant>, LabError> {
    let err = |problem: String, hint: &str| LabError::manifest(file, problem, hint);
    if raw.is_empty() {
        return Ok(vec![Variant {
            name: "default".into(),
            database: stack_scenarios.contains(&Scenario::Products).then_some(Database::Sqlite),
            env: BTreeMap::new(),
            scenarios: stack_scenarios.to_vec(),
            services: vec![],
            reproduces: None,
            protocol: WireProtocol::H1,
        }]);
    }
    let mut out: Vec<Variant> = Vec::new();
    for (i, v) in raw.into_iter().enumerate() {
        let field = format!("variants[{i}]");
        if v.name.is_empty() || !v.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            return Err(err(format!("`{field}.name = \"{}\"` is not [a-z0-9-]+", v.name), "use a short kebab-case name"));
        }
        if out.iter().any(|o| o.name == v.name) {
            return Err(err(format!("variant `{}` is defined twice", v.name), "give each variant its own name"));
        }
        let database = match v.database.as_deref() {
            None => None,
            Some("sqlite") => Some(Database::Sqlite),
            Some("postgres") => Some(Database::Postgres),
            Some(other) => return Err(err(format!("`{field}.database = \"{other}\"` is unknown"), "use \"sqlite\" or \"postgres\"")),
        };
        let scenarios = match v.scenarios {
            None => stack_scenarios.to_vec(),
            Some(ids) => parse_scenarios(&ids, &format!("{field}.scenarios"), file)?,
        };
        if let Some(s) = scenarios.iter().find(|s| !stack_scenarios.contains(s)) {
            return Err(err(
                format!("variant `{}` lists scenario `{s}`, which the stack's `scenarios` does not", v.name),
                "add it to the stack's scenarios or remove it from the variant",
            ));
        }
        let services = parse_services(&v.services, &format!("{field}.services"), file)?;
        let reproduces = match v.reproduces {
            Some(r) if r.trim().is_empty() || r.contains('\n') => {
                return Err(err(
                    format!("`{field}.reproduces` is empty or spans lines"),
                    "say in one line which bug the variant reproduces",
                ))
            }
            Some(_) if i == 0 => {
                return Err(err(
                    format!("the first variant `{}` reproduces a bug, so it would be the stack's default", v.name),
                    "put the fixed variant first and the reproduction after it",
                ))
            }
            r => r.map(|r| r.trim().to_string()),
        };
        let protocol = match v.protocol.as_deref() {
            None => WireProtocol::H1,
            Some(p) => p.parse().map_err(|e: String| err(format!("`{field}.protocol`: {e}"), "use h1, h1-tls, h2 or h2c"))?,
        };
        if let Some(name) = v.env.keys().find(|k| LAB_ENV.contains(&k.as_str())) {
            return Err(err(
                format!("`{field}.env` sets {name}, which the lab sets for every start"),
                "remove it; a variant's `protocol` sets PROTOCOL, and the lab makes the certificate",
            ));
        }
        out.push(Variant { name: v.name, database, env: v.env, scenarios, services, reproduces, protocol });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
language = "rust"
runtime = "rustc 1.95"
framework = "actix-web 4"
server = "actix-web"
description = "test stack"
scenarios = ["hello", "products"]
[profile]
server_model = "async-runtime"
json = "serde_json"
msgpack = ""
database = "rusqlite"
pool = "POOL_SIZE per process"
[start]
command = "exec ./server"
[[variants]]
name = "sqlite"
database = "sqlite"
[[variants]]
name = "postgres"
database = "postgres"
scenarios = ["products"]
"#;

    fn parse_err(text: &str) -> String {
        parse(text, Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap_err().to_string()
    }

    #[test]
    fn a_scenario_file_is_declared_by_name_in_scenarios_and_measured_on_the_default_variant() {
        let text = GOOD.replace("scenarios = [\"hello\", \"products\"]", "scenarios = [\"hello\", \"products\", \"file:shop\"]");
        let s = parse(&text, Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap();
        let shop = Scenario::File(bakeoff_model::scenario::FileScenario::named("shop"));
        assert_eq!(s.scenarios, vec![Scenario::Hello, Scenario::Products, shop]);
        assert_eq!(s.variants_for(shop).iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["sqlite"]);
        let empty = parse_err(&GOOD.replace("\"hello\", \"products\"", "\"hello\", \"file:\""));
        assert!(empty.contains("unknown scenario `file:`") && empty.contains("file:NAME"), "{empty}");
    }

    #[test]
    fn a_variant_names_its_protocol_and_leaves_the_protocol_environment_to_the_lab() {
        let text = GOOD.replace("name = \"postgres\"\n", "name = \"h2\"\nprotocol = \"h2\"\n");
        let s = parse(&text, Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap();
        assert_eq!(s.variants.iter().map(|v| v.protocol).collect::<Vec<_>>(), [WireProtocol::H1, WireProtocol::H2]);
        let unknown = parse_err(&GOOD.replace("name = \"postgres\"\n", "name = \"h3\"\nprotocol = \"h3\"\n"));
        assert!(unknown.contains("variants[1].protocol") && unknown.contains("h1, h1-tls, h2, h2c"), "{unknown}");
        let env = parse_err(&GOOD.replace("name = \"postgres\"\n", "name = \"tls\"\nenv = { TLS_KEY = \"k.pem\" }\n"));
        assert!(env.contains("sets TLS_KEY, which the lab sets") && env.contains("`protocol`"), "{env}");
    }

    #[test]
    fn a_good_manifest_loads_with_variants_per_scenario() {
        let s = parse(GOOD, Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap();
        assert_eq!(s.scenarios, vec![Scenario::Hello, Scenario::Products]);
        let names = |sc| s.variants_for(sc).iter().map(|v| v.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(Scenario::Hello), ["sqlite"]);
        assert_eq!(names(Scenario::Products), ["sqlite", "postgres"]);
        let pg = s.variant("postgres").unwrap();
        assert_eq!(s.services_for(Scenario::Products, pg), vec![ServiceKind::Postgres]);
        assert_eq!(s.ready_timeout, Duration::from_secs(30));
        let profile = s.profile.unwrap();
        assert_eq!((profile.server_model, profile.json.as_str()), (ServerModel::AsyncRuntime, "serde_json"));
    }

    #[test]
    fn the_profile_is_required_and_its_server_model_is_one_of_the_known() {
        let e = parse_err(&GOOD.replace("server_model = \"async-runtime\"", "server_model = \"fibers\""));
        assert!(e.contains("profile.server_model") && e.contains("fibers") && e.contains("goroutines") && e.contains("hint:"), "{e}");
        let start = GOOD.find("[profile]").unwrap();
        let end = GOOD.find("[start]").unwrap();
        let e = parse_err(&format!("{}{}", &GOOD[..start], &GOOD[end..]));
        assert!(e.contains("`[profile]` is missing") && e.contains("server_model"), "{e}");
    }

    #[test]
    fn setup_versions_is_kept_and_blank_means_none() {
        let with = |v: &str| GOOD.replace("[start]", &format!("[setup]\ncommands = [\"true\"]\nversions = \"{v}\"\n[start]"));
        let s = parse(&with("go version"), Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap();
        assert_eq!(s.setup.unwrap().versions.as_deref(), Some("go version"));
        let s = parse(&with(" "), Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap();
        assert_eq!(s.setup.unwrap().versions, None);
    }

    #[test]
    fn missing_field_names_the_file_and_field() {
        let e = parse_err(&GOOD.replace("runtime = \"rustc 1.95\"\n", ""));
        assert!(e.contains("/tmp/stacks/rust/x/stack.toml") && e.contains("runtime"), "{e}");
        assert!(e.contains("hint:"), "{e}");
    }

    #[test]
    fn unknown_field_is_an_error_not_ignored() {
        let e = parse_err(&GOOD.replace("server =", "sever = \"x\"\nserver ="));
        assert!(e.contains("sever"), "{e}");
    }

    #[test]
    fn unknown_scenario_lists_the_known_ones() {
        let e = parse_err(&GOOD.replace("\"hello\",", "\"helo\","));
        assert!(e.contains("unknown scenario `helo`") && e.contains("greeting"), "{e}");
    }

    #[test]
    fn language_must_match_the_folder() {
        let e = parse(GOOD, Path::new("/tmp/stacks/go/x"), "go/x").unwrap_err().to_string();
        assert!(e.contains("stacks/go/"), "{e}");
    }

    #[test]
    fn bad_variant_database_and_duplicate_names_and_foreign_scenarios() {
        assert!(parse_err(&GOOD.replace("database = \"postgres\"", "database = \"mysql\"")).contains("mysql"));
        assert!(parse_err(&GOOD.replace("name = \"postgres\"", "name = \"sqlite\"")).contains("defined twice"));
        assert!(parse_err(&GOOD.replace("scenarios = [\"products\"]", "scenarios = [\"loop\"]")).contains("does not"));
        assert!(parse_err(&GOOD.replace("name = \"postgres\"", "name = \"Post Gres\"")).contains("[a-z0-9-]+"));
    }

    #[test]
    fn bad_durations_and_kinds_and_services() {
        let e = parse_err(&GOOD.replace("command = \"exec ./server\"", "command = \"x\"\nready_timeout = \"soon\""));
        assert!(e.contains("start.ready_timeout"), "{e}");
        assert!(parse_err(&GOOD.replace("description", "kind = \"grpc\"\ndescription")).contains("grpc"));
        assert!(parse_err(&GOOD.replace("description", "services = [\"redis\"]\ndescription")).contains("redis"));
        assert!(
            parse_err(&GOOD.replace("\"hello\", \"products\"", "\"proxy\"").replace("scenarios = [\"products\"]", "")).contains("proxy")
        );
    }

    #[test]
    fn a_variant_may_reproduce_a_bug_in_one_line_but_never_be_the_default() {
        let with = |key: &str| GOOD.replace("name = \"postgres\"", &format!("name = \"postgres\"\n{key}"));
        let s = parse(&with("reproduces = \"compiles its regex per request\""), Path::new("/tmp/stacks/rust/x"), "rust/x").unwrap();
        assert_eq!(s.variant("postgres").unwrap().reproduces.as_deref(), Some("compiles its regex per request"));
        assert_eq!(s.variant("sqlite").unwrap().reproduces, None);
        assert!(parse_err(&with("reproduces = \" \"")).contains("reproduces"));
        let first = GOOD.replace("name = \"sqlite\"", "name = \"sqlite\"\nreproduces = \"a bug\"");
        let e = parse_err(&first);
        assert!(e.contains("first variant") && e.contains("hint:"), "{e}");
    }

    #[test]
    fn setup_inputs_must_exist() {
        let text = GOOD.replace("[start]", "[setup]\ncommands = [\"true\"]\ninputs = [\"nope.txt\"]\n[start]");
        assert!(parse_err(&text).contains("nope.txt"));
    }
}
