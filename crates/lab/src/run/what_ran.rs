//! What ran, per stack variant of a run: the manifest's profile, the WORKERS values and POOL_SIZE
//! the cells used, the versions the stack's last setup recorded (on the server host, when the
//! servers ran there), and the protocol with, over TLS, what the lab set.

use crate::run::planning::cells::Cell;
use crate::stacks::versions;
use bakeoff_model::records::profile::Component;
use bakeoff_model::records::profile::WhatRan;
use std::collections::BTreeMap;
use std::path::Path;

/// One record per stack variant, in the cells' order.
pub(crate) fn what_ran(
    project_root: &Path,
    cells: &[Cell<'_>],
    pool_size: u32,
    on_host: Option<&BTreeMap<String, String>>,
) -> Vec<WhatRan> {
    let mut out: Vec<WhatRan> = Vec::new();
    for cell in cells {
        let (stack, variant) = (cell.stack, cell.variant);
        match out.iter_mut().find(|w| w.stack == stack.name && w.variant == variant.name) {
            Some(w) if !w.workers.contains(&cell.workers) => w.workers.push(cell.workers),
            Some(_) => {}
            None => out.push(WhatRan {
                stack: stack.name.clone(),
                variant: variant.name.clone(),
                runtime: stack.runtime.clone(),
                framework: stack.framework.clone(),
                server: stack.server.clone(),
                profile: stack.profile.clone(),
                workers: vec![cell.workers],
                pool_size,
                components: match on_host {
                    Some(recorded) => recorded.get(&stack.name).map(|t| Component::parse_lines(t)).unwrap_or_default(),
                    None => versions::read(project_root, &stack.name),
                },
                protocol: variant.protocol,
                tls: variant.protocol.tls().then(|| tls_settings(stack.unmanaged.is_none())),
            }),
        }
    }
    out
}

/// Over TLS, what the lab holds every server and client to: the version and cipher suite the
/// verifier and the load generator accept, and the certificate (the run's own for a server the
/// lab starts; a server already running keeps its own).
fn tls_settings(lab_certificate: bool) -> String {
    let certificate = if lab_certificate {
        "an ECDSA P-256 certificate signed by the run's CA"
    } else {
        "the server's own certificate (accepted unverified, as wrk and h2load do)"
    };
    format!("TLS 1.3 only, {} only, {certificate}", crate::contract::verify::LAB_CIPHER)
}
