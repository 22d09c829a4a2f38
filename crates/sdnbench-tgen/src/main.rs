//! Thin entry point: parse flags, hand over to the library, exit with its code.

fn main() {
    let matches = match sdnbench_tgen::cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match sdnbench_tgen::cli::action(&matches) {
        Ok(action) => sdnbench_tgen::run(action),
        Err(message) => {
            sdnbench_tgen::out::error(&message);
            eprintln!("sdnbench-tgen: {message}");
            2
        }
    };
    std::process::exit(code);
}
