//! `bakeoff doctor`: what this machine is and whether it can answer the question asked (cores and
//! their split, governor, boost, steal, other processes, cgroups, namespaces, io_uring), its noise
//! floor from a short A/A measurement, the precision the default study can expect here and the
//! time it takes, and what to change. The facts come from the lab; this file only writes them.

use crate::args::DoctorArgs;
use crate::context;
use anyhow::Result;
use bakeoff_lab::machine::doctor::{Advice, CgroupSupport, Governor, HostFacts, IoUring};
use bakeoff_lab::run::noise_probe;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The doctor watches the CPUs this long for steal and other processes.
const WINDOW: Duration = Duration::from_secs(3);

pub fn run(args: &DoctorArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let root = context::project_root(&args.common)?;
    let facts = HostFacts::gather(WINDOW);
    print_facts(&facts);
    if args.quick {
        println!("noise     skipped (--quick)");
    } else {
        let cancel = context::cancel_on_ctrl_c();
        let plan = bakeoff_lab::run::plan_run(bakeoff_lab::run::RunRequest { root: root.clone(), ..Default::default() })?;
        println!("noise     measuring an A/A pair for about 25 s ...");
        match noise_probe::probe(&root, plan.settings(), cancel) {
            Ok(floor) => {
                noise_probe::remember(&root, &bakeoff_model::plan::place::Roles::default(), plan.settings().schedule, &floor);
                print_floor(&floor);
                if let Some(o) = noise_probe::outlook(&plan, &floor)? {
                    println!("study     {} (the default): {}", plan.study_name(), crate::progress::outlook_line(&o));
                }
            }
            Err(e) => println!("noise     not measured: {e}"),
        }
    }
    print_advice(&facts.advice());
    println!("(took {:.0} s)", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

/// Every fact, one per line.
fn print_facts(f: &HostFacts) {
    let m = bakeoff_lab::machine::provenance::machine_info();
    println!("machine   {} cores, {} ({}, kernel {})", f.cores, m.cpu_model, m.os, m.kernel);
    println!("split     {}", split(f));
    println!("governor  {}", governor(f));
    println!("boost     {}", f.boost.map_or("not readable", |b| if b { "on" } else { "off" }));
    println!("steal     {:.1}% of a core over {} s", f.steal_percent, f.window.as_secs());
    println!("others    {}", others(f));
    println!("cgroups   {}", cgroup(f.cgroup));
    println!(
        "netns     {}",
        if f.netns { "available (unshare --net works)" } else { "not available here (not root, or a container without it)" }
    );
    println!("io_uring  {}", io_uring(f.io_uring));
}

/// The facts a run starts with, in two lines, then any advice.
pub fn print_short(f: &HostFacts) {
    eprintln!(
        "machine: {} cores; {}; governor {}; boost {}",
        f.cores,
        split(f),
        governor(f),
        f.boost.map_or("n/a", |b| if b { "on" } else { "off" })
    );
    eprintln!(
        "machine: steal {:.1}%, {} over {} s; {}; io_uring {}",
        f.steal_percent,
        others(f),
        f.window.as_secs(),
        cgroup(f.cgroup),
        io_uring(f.io_uring)
    );
    for a in f.advice() {
        eprintln!("warning: {}", a.message());
    }
}

fn split(f: &HostFacts) -> String {
    let list = |c: &[usize]| c.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    if f.server_cpus.is_empty() {
        "server and load generator share the one CPU".into()
    } else {
        format!("server on CPU {}, load generator on CPU {}", list(&f.server_cpus), list(&f.client_cpus))
    }
}

fn governor(f: &HostFacts) -> String {
    match &f.governor {
        None => "not exposed (no cpufreq: usually a VM, where the host sets it)".into(),
        Some(Governor::Performance) => "performance".into(),
        Some(Governor::Other(g)) | Some(Governor::Mixed(g)) => g.clone(),
    }
}

fn others(f: &HostFacts) -> String {
    let busiest = f.busiest.as_ref().map(|p| format!(" (busiest: {} pid {}, {:.0}%)", p.name, p.pid, p.cpu_percent)).unwrap_or_default();
    format!("other processes {:.0}% of a core{busiest}", f.other_percent)
}

fn cgroup(c: CgroupSupport) -> &'static str {
    match c {
        CgroupSupport::V2Cpuset => "cgroup v2 with cpuset: each server gets a cpuset",
        CgroupSupport::V1Cpuset => "cgroup v1 cpuset: each server gets a cpuset",
        CgroupSupport::V2WithoutCpuset => "cgroup v2 without the cpuset controller: placement by CPU affinity",
        CgroupSupport::Unavailable => "no usable cgroup file system: placement by CPU affinity",
    }
}

fn io_uring(u: IoUring) -> &'static str {
    match u {
        IoUring::Available => "available",
        IoUring::Restricted => "restricted to kernel.io_uring_group",
        IoUring::Disabled => "disabled (kernel.io_uring_disabled, or a seccomp filter)",
        IoUring::Missing => "not in this kernel",
    }
}

fn print_floor(f: &noise_probe::NoiseFloor) {
    println!("noise     {}", f.summary());
    println!("          resolves about ±{:.1}% per minute of a paired comparison (P = half-width × √minutes)", f.percent_per_minute());
    println!(
        "          one slice's requests/s vary by ±{:.1}%: a cell reaches ±5% in ~{} trials, ±10% in ~{}",
        100.0 * f.slice_spread,
        f.trials_for(0.05),
        f.trials_for(0.10)
    );
}

fn print_advice(advice: &[Advice]) {
    if advice.is_empty() {
        println!("advice    nothing to change");
    }
    for (i, a) in advice.iter().enumerate() {
        println!("{}{}", if i == 0 { "advice    - " } else { "          - " }, a.message());
    }
}
