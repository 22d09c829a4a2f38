//! JSON Lines on stdout: `{"type": ..., "schema": 1, "data": {...}}`.

use std::io::Write;

use serde_json::{json, Value};

/// Schema version of every line (schemas/apiload.schema.json).
pub const SCHEMA: u32 = 1;

/// Writes one line and flushes, so a reader sees each second as it ends.
pub fn emit(kind: &str, data: Value) {
    let line = json!({"type": kind, "schema": SCHEMA, "data": data});
    let mut out = std::io::stdout().lock();
    // A closed stdout (reader gone) must not crash the run mid-way.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Reports an error as a JSON line and on stderr.
pub fn emit_error(message: &str) {
    emit("error", json!({"message": message}));
    eprintln!("sdnbench-apiload: {message}");
}
