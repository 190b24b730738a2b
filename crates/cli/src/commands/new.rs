//! `bakeoff new LANGUAGE/NAME`: writes a stack folder (from a template, `--like` a stack, or
//! `--from-cmd`), then sets it up and verifies it as `bakeoff verify` does, and says what is next.

use crate::args::{CommonArgs, NewArgs, Selection, VerifyArgs};
use crate::context;
use bakeoff_lab::stacks::scaffold::{scaffold, NewStack, Origin};
use std::process::ExitCode;

pub fn run(args: &NewArgs) -> anyhow::Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let origin = match (&args.like, &args.from_cmd) {
        (Some(_), Some(_)) => anyhow::bail!("--like and --from-cmd both say where the sources come from\n  hint: pass one of them"),
        (Some(like), None) => Origin::Like(like.clone()),
        (None, Some(command)) => Origin::FromCommand { command: command.clone(), setup: args.setup.clone(), dir: std::env::current_dir()? },
        (None, None) => Origin::Template,
    };
    let dir = scaffold(&NewStack { root: root.clone(), name: args.name.clone(), origin, framework: args.framework.clone() })?;
    println!("wrote {}", dir.display());
    // Built now, forced: a stamp left by an earlier folder of the same name (deleted since) must
    // not pass the new one off as built.
    let catalog = context::catalog(&root);
    let stacks = catalog.select(std::slice::from_ref(&args.name))?;
    if crate::commands::setup::setup_stacks(&stacks, &root, true, false) > 0 {
        println!("\nthe folder is kept: fix its setup, then `bakeoff verify {}`", args.name);
        return Ok(ExitCode::from(1));
    }
    let verify = VerifyArgs {
        common: CommonArgs { root: Some(root) },
        names: vec![args.name.clone()],
        selection: Selection { stacks: vec![], scenarios: vec![], scenario: None, variants: vec![], docstore: None },
        db: args.db.clone(),
        json: false,
    };
    let code = crate::commands::verify::run(&verify)?;
    let name = &args.name;
    if code == ExitCode::SUCCESS {
        println!(
            "\nnext:\n  1. fill in the choices in {}/README.md and stack.toml's description\n  \
             2. implement the next scenario of docs/scenarios.md and list it in stack.toml's `scenarios`\n  \
             3. bakeoff verify {name}\n  4. bakeoff run --stacks {name},go/nethttp --scenarios hello",
            dir.display()
        );
    } else {
        println!("\nthe folder is kept: fix what failed above, then `bakeoff verify {name}`");
    }
    Ok(code)
}
