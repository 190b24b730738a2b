//! What more than one binary of this crate uses: the load command, shared by `bakeoff load` and the
//! lean standalone `bakeoff-load` (which links only the load generator, so the bench against wrk
//! measures the client and not the lab), and the Ctrl-C (and SIGTERM) handling every command shares.

#![warn(missing_docs)]

pub mod load;

use bakeoff_lab::remote::protocol::Identity;

use std::sync::atomic::{AtomicBool, Ordering};

static CANCEL: AtomicBool = AtomicBool::new(false);

/// Makes Ctrl-C, SIGTERM and SIGHUP stop the work gracefully (servers and services stopped, their
/// cgroups removed, what was measured kept and printed) and returns the flag it sets; a second
/// signal ends the process at once. SIGTERM is how CI timeouts, `timeout` and service managers stop
/// a process, and unlike Ctrl-C in a terminal it reaches bakeoff alone, not the servers' groups.
/// Installed at most once.
pub fn cancel_on_ctrl_c() -> &'static AtomicBool {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // The handler runs on ctrlc's own thread, not in signal context, so exiting is safe there.
        let installed = ctrlc::set_handler(|| {
            if CANCEL.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
        if let Err(e) = installed {
            eprintln!("warning: Ctrl-C will end the process at once: {e}");
        }
    });
    &CANCEL
}

/// This build: the crate version and the git commit it was built from, which a controller and its
/// agents must share.
pub fn identity() -> Identity {
    Identity { version: env!("CARGO_PKG_VERSION").to_string(), commit: env!("BAKEOFF_GIT_COMMIT").to_string() }
}
