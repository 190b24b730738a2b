//! `bakeoff stacks`: every stack with its seed, scenarios, variants and toolchain status.

use crate::args::StacksArgs;
use crate::context;
use bakeoff_lab::stacks::manifest::Stack;
use std::process::ExitCode;

pub fn run(args: &StacksArgs) -> anyhow::Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let catalog = context::catalog(&root);
    if args.markdown {
        println!("| stack | seed | runtime | framework | server | scenarios | variants |\n|---|---|---|---|---|---|---|");
        for s in &catalog.stacks {
            let (scenarios, variants) = scenarios_and_variants(s);
            println!(
                "| `{}` | {} | {} | {} | {} | {} | {} |",
                s.name,
                s.seed.as_deref().unwrap_or("-"),
                s.runtime,
                s.framework,
                s.server,
                scenarios.join(", "),
                variants.join(", ")
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<34} {:<5} {:<10} {:<52} variants", "stack", "seed", "toolchain", "scenarios");
    for s in &catalog.stacks {
        let tools = bakeoff_lab::stacks::catalog::toolchain_present(s);
        let missing: Vec<&str> = tools.iter().filter(|(_, ok)| !ok).map(|(t, _)| t.as_str()).collect();
        let toolchain = if missing.is_empty() { "ok".to_string() } else { format!("missing {}", missing.join(",")) };
        let (scenarios, variants) = scenarios_and_variants(s);
        println!(
            "{:<34} {:<5} {:<10} {:<52} {}",
            s.name,
            s.seed.as_deref().unwrap_or("-"),
            toolchain,
            scenarios.join(","),
            variants.join(",")
        );
    }
    Ok(if catalog.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A stack's scenario ids and variant names, in its manifest's order.
fn scenarios_and_variants(s: &Stack) -> (Vec<&str>, Vec<&str>) {
    (s.scenarios.iter().map(|x| x.id()).collect(), s.variants.iter().map(|v| v.name.as_str()).collect())
}
