//! `bakeoff new`: one stack per template language, written into a scratch project folder and
//! verified at once, so "a new stack passes `bakeoff verify`" cannot rot; and the refusals. Needs
//! the toolchains of every template: go, cargo (rustc), python3, node, java and javac.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A project folder of its own: the real templates/ and services/, an empty stacks/.
fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("stacks")).unwrap();
    for shared in ["templates", "services"] {
        std::os::unix::fs::symlink(root().join(shared), dir.path().join(shared)).unwrap();
    }
    dir
}

fn new(project: &Path, args: &[&str]) -> Output {
    let project = project.display().to_string();
    let mut all = vec!["new", "--root", &project, "--db", "verify.db"];
    all.extend_from_slice(args);
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(&all).current_dir(&project).output().expect("the bakeoff binary runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn every_template_makes_a_stack_that_verifies_at_once() {
    let project = scratch_root();
    for language in ["go", "rust", "python", "node", "java"] {
        let name = format!("{language}/first-api");
        let out = new(project.path(), &[&name]);
        assert!(out.status.success(), "{name}:\n{}", text(&out));
        assert!(text(&out).contains(&format!("PASS {name} [default]")) && text(&out).contains("next:"), "{}", text(&out));
        let manifest = std::fs::read_to_string(project.path().join("stacks").join(&name).join("stack.toml")).unwrap();
        assert!(!manifest.contains("{{"), "every placeholder is filled:\n{manifest}");
    }
}

#[test]
fn a_taken_name_an_unknown_language_and_a_bad_name_are_refused() {
    let project = scratch_root();
    std::fs::create_dir_all(project.path().join("stacks/go/taken")).unwrap();
    for (args, says) in [
        (&["go/taken"][..], "already exists"),
        (&["cobol/api"][..], "no template for this language"),
        (&["Go/API"][..], "not a usable folder name"),
        (&["go/x", "--like", "go/nosuch"][..], "no stack named `go/nosuch`"),
    ] {
        let out = new(project.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out).contains(says) && text(&out).contains("hint:"), "{args:?}: {}", text(&out));
    }
    assert!(std::fs::read_dir(project.path().join("stacks/go/taken")).unwrap().next().is_none(), "nothing written into it");
}

#[test]
fn a_bench_command_becomes_a_folder_that_verifies() {
    let project = scratch_root();
    let server = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hello_server.py");
    std::fs::copy(fixture, server.path().join("hello_server.py")).unwrap();
    let root = project.path().display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(["new", "--root", &root, "--db", "verify.db", "python/mine", "--from-cmd", "exec python3 hello_server.py"])
        .current_dir(server.path())
        .output()
        .unwrap();
    assert!(out.status.success() && text(&out).contains("PASS python/mine [default]"), "{}", text(&out));
    let folder = project.path().join("stacks/python/mine");
    assert!(folder.join("hello_server.py").is_file(), "the command's folder is copied");
    let manifest = std::fs::read_to_string(folder.join("stack.toml")).unwrap();
    assert!(manifest.contains("command = \"exec python3 hello_server.py\""), "{manifest}");
}
