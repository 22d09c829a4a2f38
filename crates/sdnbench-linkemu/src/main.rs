//! Thin entry point: parse flags, hand over to the library, exit with its code.

fn main() {
    let matches = match sdnbench_linkemu::cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match sdnbench_linkemu::cli::options(&matches) {
        Ok(opts) => sdnbench_linkemu::run(&opts),
        Err(message) => {
            sdnbench_jsonl::emit_error(&message);
            eprintln!("sdnbench-linkemu: {message}");
            2
        }
    };
    std::process::exit(code);
}
