//! Thin binary: parse flags, run, exit with the run's code.

use clap::Parser;

fn main() {
    std::process::exit(ofload_responder::run(ofload_responder::Config::parse()));
}
