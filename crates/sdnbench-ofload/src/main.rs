//! Thin binary: parse flags, run, exit with the run's code.

use clap::Parser;

fn main() {
    let cfg = sdnbench_ofload::Config::parse();
    std::process::exit(sdnbench_ofload::run(cfg));
}
