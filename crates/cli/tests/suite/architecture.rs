//! docs/architecture.md against the tree: every `crates/<crate>/src/...` path the document names
//! exists, so its map cannot go on naming a file or folder that moved.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The words of `text` that name a path under a crate's sources, without the quoting and
/// punctuation around them; a pattern written with `...`, `*` or `<...>` names no one path.
fn source_paths(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || "`()[],;:\"'".contains(c))
        .map(|word| word.trim_end_matches('.'))
        .filter(|word| word.starts_with("crates/") && word.contains("/src"))
        .filter(|word| !word.contains("...") && !word.contains(['*', '<']))
        .collect()
}

#[test]
fn every_source_path_the_architecture_names_exists() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("docs/architecture.md is readable");
    let named = source_paths(&doc);
    assert!(named.len() >= 40, "the map names a path per line; found only {}: {named:?}", named.len());
    let missing: Vec<&str> = named.iter().copied().filter(|p| !root().join(p).exists()).collect();
    assert!(missing.is_empty(), "docs/architecture.md names paths that do not exist (update its map):\n{}", missing.join("\n"));
}

#[test]
fn paths_are_read_out_of_prose_code_and_quotes() {
    let text = "see `crates/load/src/plan.rs`, (crates/model/src/slo/) and crates/lab/src/run/plan.rs. \
                crates/.../src/... crates/*/src crates/cli/tests/suite/cli.rs";
    assert_eq!(source_paths(text), ["crates/load/src/plan.rs", "crates/model/src/slo/", "crates/lab/src/run/plan.rs"]);
}
