//! Thin binary: parse flags, run, exit with the run's code.

use clap::Parser;

fn main() {
    let args = sdnbench_apiload::Args::parse();
    std::process::exit(sdnbench_apiload::run(args));
}
