//! JSON Lines on stdout in sdnbench's envelope (crate sdnbench-jsonl);
//! `data` is documented in schemas/apiload.schema.json.

pub use sdnbench_jsonl::{emit, SCHEMA};

/// Reports an error as a JSON line and on stderr.
pub fn emit_error(message: &str) {
    sdnbench_jsonl::emit_error(message);
    eprintln!("sdnbench-apiload: {message}");
}
