//! The two `bakeoff new` origins that start from something that exists: a copy of a stack
//! (`--like`), renamed, its deliberate-bug variants and seed reference dropped; and an ad-hoc
//! command's folder (`--from-cmd`) with a manifest that runs the command as `bench --cmd` did.

use crate::error::LabError;
use crate::stacks::adhoc::name_from_command;
use crate::stacks::catalog;
use crate::stacks::stack_folder::{copy_tree, split_name, write};
use std::path::Path;

/// Copies the stack `like` to `dest` as `name`: its own name is replaced in every text file, and
/// its manifest loses `seed` and each `[[variants]]` table with `reproduces`.
pub(crate) fn copy_like(root: &Path, like: &str, name: &str, dest: &Path, framework: Option<&str>) -> Result<(), LabError> {
    let found = catalog::discover(&root.join("stacks"));
    let source = found.select(&[like.to_string()])?;
    let [source] = source.as_slice() else {
        return Err(LabError::Input {
            what: format!("--like {like}"),
            problem: "it names more than one stack".into(),
            hint: "name one stack, e.g. --like go/nethttp".into(),
        });
    };
    let (language, _) = split_name(name)?;
    if source.name.split('/').next() != Some(language) {
        return Err(LabError::Input {
            what: format!("--like {like}"),
            problem: format!("it is a stack of another language than {language}"),
            hint: format!("name the new stack {}/NAME, or copy a {language} stack", source.name.split('/').next().unwrap_or_default()),
        });
    }
    copy_tree(&source.dir, dest, &|text| text.replace(&source.name, name))?;
    let manifest = dest.join("stack.toml");
    let text = std::fs::read_to_string(&manifest).unwrap_or_default();
    write(&manifest, &without_bug_variants(&text, framework))
}

/// The manifest without `seed` and without the variant tables that reproduce a bug; `framework`
/// replaces the framework line when given.
fn without_bug_variants(text: &str, framework: Option<&str>) -> String {
    let mut tables: Vec<Vec<&str>> = vec![Vec::new()];
    for line in text.lines() {
        if line.trim_start().starts_with('[') {
            tables.push(Vec::new());
        }
        tables.last_mut().expect("one table at least").push(line);
    }
    let mut out = String::new();
    for table in tables {
        let is_variant = table.first().is_some_and(|l| l.trim() == "[[variants]]");
        if is_variant && table.iter().any(|l| l.trim_start().starts_with("reproduces")) {
            continue;
        }
        for line in table {
            let key = line.split('=').next().unwrap_or_default().trim();
            match (key, framework) {
                ("seed", _) => {}
                ("framework", Some(f)) => out.push_str(&format!("framework   = \"{f}\"\n")),
                _ => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Copies `dir` (the folder an ad-hoc command ran in) to `dest` with a manifest that sets it up
/// and starts it as `bench --cmd` did; only the hello scenario, which `bench` verified.
pub(crate) fn from_command(
    dest: &Path,
    name: &str,
    command: &str,
    setup: Option<&str>,
    dir: &Path,
    framework: &str,
) -> Result<(), LabError> {
    let (language, _) = split_name(name)?;
    if dest.starts_with(dir) {
        return Err(LabError::Input {
            what: "--from-cmd".into(),
            problem: format!("the new folder {} is inside the folder to copy, {}", dest.display(), dir.display()),
            hint: "run `bakeoff new --from-cmd` from your server's own folder".into(),
        });
    }
    copy_tree(dir, dest, &|text| text.to_string())?;
    let setup_table = match setup {
        Some(s) => format!("\n[setup]\ncommands = [{}]\ninputs   = [\".\"]\ntimeout  = \"20m\"\n", toml_string(s)),
        None => String::new(),
    };
    let manifest = format!(
        "language    = \"{language}\"\nruntime     = \"unknown (say which)\"\nframework   = {}\nserver      = \"unknown (say which)\"\n\
         description = {}\nkind        = \"http\"\nscenarios   = [\"hello\"]\nservices    = []\ntoolchain   = []\napt         = []\n\n\
         [profile]\n# Pick the model that runs the request handlers (docs/stacks.md).\nserver_model = \"threads\"\njson         = \"\"\n\
         msgpack      = \"\"\ndatabase     = \"\"\npool         = \"\"\n{setup_table}\n[start]\ncommand = {}\n",
        toml_string(framework),
        toml_string(&format!("{name}: made from `bakeoff bench --cmd` ({})", name_from_command(command))),
        toml_string(command),
    );
    write(&dest.join("stack.toml"), &manifest)
}

/// A TOML basic string of `s` (quotes and backslashes escaped).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bug_variants_and_the_seed_are_dropped_and_the_rest_kept() {
        let text = "language = \"rust\"\nseed = \"001\"\nframework = \"hyper\"\n\n[start]\ncommand = \"x\"\n\n\
                    [[variants]]\nname = \"default\"\n\n[[variants]]\nname = \"bug\"\nreproduces = \"a bug\"\n\n[[variants]]\nname = \"fast\"\n";
        let out = without_bug_variants(text, Some("axum"));
        assert!(!out.contains("seed") && !out.contains("bug") && out.contains("name = \"fast\"") && out.contains("[start]"), "{out}");
        assert!(out.contains("framework   = \"axum\"") && !out.contains("hyper"), "{out}");
        assert!(toml::from_str::<toml::Value>(&out).is_ok(), "{out}");
    }
}
