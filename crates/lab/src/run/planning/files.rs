//! A run's scenario files: the front end's (`--scenario FILE`) and the study's `scenario_files`,
//! each loaded, checked and its deck drawn before anything runs, one per name; and the checks that
//! every `file:NAME` the run names was given, and every file given is declared by a selected stack.

use crate::error::LabError;
use crate::run::planning::settings::ScenarioFile;
use crate::stacks::manifest::Stack;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::Study;
use std::path::Path;

/// The run's files: `given` by the front end, then the study's (paths relative to `root`);
/// `study_file` names the study in errors. A file given twice (same name, same text) counts once.
pub(crate) fn gather(root: &Path, study: &Study, study_file: &str, given: Vec<ScenarioFile>) -> Result<Vec<ScenarioFile>, LabError> {
    let mut files = given;
    let what = format!("{study_file}: `scenario_files`");
    for path in &study.scenario_files {
        let file = ScenarioFile::load(&root.join(path), &what)?;
        match files.iter().find(|f| f.name == file.name) {
            Some(f) if f.text_hash == file.text_hash => {}
            Some(_) => {
                return Err(LabError::Input {
                    what,
                    problem: format!("two different scenario files are named `{}` ({} is one)", file.name, path.display()),
                    hint: "give each file its own `name` (the scenario is file:NAME)".into(),
                })
            }
            None => files.push(file),
        }
    }
    Ok(files)
}

/// Every `file:NAME` among the chosen `scenarios` must be a file the run was given: without its
/// file there is nothing to send (`what` says where the scenarios were chosen).
pub(crate) fn check_chosen(scenarios: &[Scenario], files: &[ScenarioFile], what: &str) -> Result<(), LabError> {
    let given: Vec<Scenario> = files.iter().map(ScenarioFile::scenario).collect();
    match scenarios.iter().find(|s| matches!(s, Scenario::File(_)) && !given.contains(s)) {
        Some(Scenario::File(f)) => Err(LabError::Input {
            what: what.into(),
            problem: format!("`{}` is chosen, but the run is given no scenario file named `{}`", f.id(), f.name()),
            hint: "add the file's path to the study's `scenario_files` (e.g. \"scenarios/shop.toml\"), or pass --scenario FILE".into(),
        }),
        _ => Ok(()),
    }
}

/// Every file the run is given must be declared (`"file:NAME"` in a stack.toml's `scenarios`) by
/// a selected stack: a file no stack serves would be read, checked and then silently measured on
/// nothing.
pub(crate) fn check_declared(stacks: &[Stack], files: &[ScenarioFile], what: &str) -> Result<(), LabError> {
    for file in files {
        let scenario = file.scenario();
        if !stacks.iter().any(|s| s.scenarios.contains(&scenario)) {
            let names: Vec<&str> = stacks.iter().map(|s| s.name.as_str()).collect();
            return Err(LabError::Input {
                what: what.into(),
                problem: format!("scenario file `{}`: no selected stack declares `{scenario}` (selected: {})", file.name, names.join(", ")),
                hint: format!(
                    "select a stack whose stack.toml lists \"{scenario}\" in `scenarios`, or add it there to a stack that serves the file's routes"
                ),
            });
        }
    }
    Ok(())
}

/// The `file:NAME` scenarios of `files`, the planner's filter.
pub(crate) fn scenarios(files: &[ScenarioFile]) -> Vec<Scenario> {
    files.iter().map(ScenarioFile::scenario).collect()
}

#[cfg(test)]
mod tests {
    use crate::run::planning::plan::{plan_run, RunRequest};
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// A scratch path of this test process for `name`.
    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("bakeoff-files-test-{}-{name}", std::process::id()))
    }

    /// Plans the study `text` (written to a file of its own) from the project root.
    fn plan(name: &str, text: &str) -> Result<Vec<(String, String)>, String> {
        let study = scratch(&format!("{name}.toml"));
        std::fs::write(&study, text).unwrap();
        let plan = plan_run(RunRequest { root: root(), study: Some(study.clone()), ..RunRequest::default() });
        std::fs::remove_file(&study).ok();
        let plan = plan.map_err(|e| e.to_string())?;
        let cells = plan.cells().map_err(|e| e.to_string())?;
        Ok(cells.iter().map(|c| (c.stack.name.clone(), c.scenario.id().to_string())).collect())
    }

    fn file_cells(cells: &[(String, String)]) -> Vec<&str> {
        cells.iter().filter(|(_, s)| s.starts_with("file:")).map(|(stack, _)| stack.as_str()).collect()
    }

    #[test]
    fn the_shop_study_plans_the_shop_on_its_four_stacks_with_the_file_kept_in_the_settings() {
        let study = root().join("studies/shop.toml");
        let plan = plan_run(RunRequest { root: root(), study: Some(study), ..RunRequest::default() }).unwrap();
        let cells: Vec<(String, &str)> =
            plan.cells().unwrap().iter().map(|c| (format!("{} [{}]", c.stack.name, c.variant.name), c.scenario.id())).collect();
        let stacks: Vec<&str> = cells.iter().map(|(s, _)| s.as_str()).collect();
        let each = ["go/nethttp", "rust/actix", "node/cluster-http", "python/wsgi-gunicorn-sync"];
        let want: Vec<String> = each.iter().flat_map(|s| ["sqlite", "postgres"].map(|v| format!("{s} [{v}]"))).collect();
        assert_eq!(stacks, want, "every stack on SQLite and on PostgreSQL");
        assert!(cells.iter().all(|(_, s)| *s == "file:shop"), "{cells:?}");
        let stored = &plan.settings_json()["load"]["scenario_files"];
        assert_eq!(stored[0]["name"], "shop");
        assert_eq!(stored[0]["text"].as_str(), Some(std::fs::read_to_string(root().join("scenarios/shop.toml")).unwrap().as_str()));
        assert_eq!(plan.settings().scenario_files[0].deck.entries.len(), 1000, "the deck is drawn once, at plan time");
    }

    #[test]
    fn a_given_file_makes_cells_for_the_stacks_that_declare_it_only() {
        let head = "name = \"t\"\nstacks = [\"go/nethttp\", \"go/fasthttp\"]\nvariants = [\"sqlite\"]\n";
        let cells = plan("given", &format!("{head}scenario_files = [\"scenarios/shop.toml\"]\n")).unwrap();
        assert_eq!(file_cells(&cells), ["go/nethttp"], "go/fasthttp does not declare file:shop: {cells:?}");
        assert!(cells.iter().any(|(s, sc)| s == "go/fasthttp" && sc == "hello"), "the built-ins are still planned: {cells:?}");
    }

    #[test]
    fn a_declared_file_the_run_is_not_given_has_no_cell_and_no_error() {
        let cells = plan("not-given", "name = \"t\"\nstacks = [\"go/nethttp\"]\nvariants = [\"sqlite\"]\n").unwrap();
        assert!(file_cells(&cells).is_empty(), "{cells:?}");
        assert!(cells.iter().any(|(_, s)| s == "hello"), "{cells:?}");
    }

    #[test]
    fn a_missing_file_names_the_study_and_the_path_with_the_fix() {
        let err = plan("missing", "name = \"t\"\nstacks = [\"go/nethttp\"]\nscenario_files = [\"scenarios/nosuch.toml\"]\n").unwrap_err();
        assert!(err.contains("missing.toml: `scenario_files`") && err.contains("scenarios/nosuch.toml"), "{err}");
        assert!(err.contains("hint: give the path of a scenario file, e.g. scenarios/shop.toml"), "{err}");
    }

    #[test]
    fn a_broken_file_is_refused_with_its_line() {
        let broken = scratch("broken-shop.toml");
        let text = std::fs::read_to_string(root().join("scenarios/shop.toml")).unwrap().replace("{{id}}\"\n", "{{idd}}\"\n");
        std::fs::write(&broken, text).unwrap();
        let study = format!("name = \"t\"\nstacks = [\"go/nethttp\"]\nscenario_files = [{:?}]\n", broken.display().to_string());
        let err = plan("broken", &study).unwrap_err();
        std::fs::remove_file(&broken).ok();
        assert!(err.contains("broken.toml: `scenario_files`: scenario file") && err.contains("names no variable"), "{err}");
        assert!(err.contains("hint: declare it under [vars]"), "{err}");
    }

    #[test]
    fn a_file_no_selected_stack_declares_is_refused() {
        let err = plan("undeclared", "name = \"t\"\nstacks = [\"go/fasthttp\"]\nscenario_files = [\"scenarios/shop.toml\"]\n").unwrap_err();
        assert!(err.contains("no selected stack declares `file:shop` (selected: go/fasthttp)"), "{err}");
        assert!(err.contains("hint: select a stack whose stack.toml lists \"file:shop\""), "{err}");
    }

    #[test]
    fn a_chosen_file_scenario_needs_its_file() {
        let err = plan("unchosen", "name = \"t\"\nstacks = [\"go/nethttp\"]\nscenarios = [\"file:shop\"]\n").unwrap_err();
        assert!(err.contains("`file:shop` is chosen, but the run is given no scenario file named `shop`"), "{err}");
        assert!(err.contains("hint: add the file's path to the study's `scenario_files`"), "{err}");
    }
}
