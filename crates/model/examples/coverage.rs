//! Prints the simulated coverage of every printed paired interval over the simulator's grid of
//! designs and noise (`bakeoff_model::statistics::coverage`): `cargo run --release -p bakeoff-model --example
//! coverage -- [repeats] [seed]`, as bench/coverage.sh runs it.

fn main() {
    let mut args = std::env::args().skip(1);
    let repeats = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let seed = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    print!("{}", bakeoff_model::statistics::coverage::table(&bakeoff_model::statistics::coverage::grid(), repeats, seed));
}
