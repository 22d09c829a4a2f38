//! The JSON Lines envelope of sdnbench's native tools:
//! `{"type": "interval" | "summary" | "error", "schema": 1, "data": {...}}`,
//! one event per line, flushed at once so a supervisor can follow a live run.
//! Each tool documents its `data` in `schemas/<tool>.schema.json`, with any
//! event type of its own (sdnbench-ofload's `connected` and `flow_mod`).

use std::io::Write;

use serde_json::{json, Value};

/// Version of the envelope; a reader refuses any other.
pub const SCHEMA: u32 = 1;

/// The envelope of one event.
pub fn envelope(kind: &str, data: Value) -> Value {
    json!({"type": kind, "schema": SCHEMA, "data": data})
}

/// Writes one event as a line and flushes it. Write errors are ignored on purpose:
/// a reader that went away (closed pipe) must not crash a run half way.
pub fn emit_to(out: &mut impl Write, kind: &str, data: Value) {
    let _ = writeln!(out, "{}", envelope(kind, data));
    let _ = out.flush();
}

/// Writes one event to stdout.
pub fn emit(kind: &str, data: Value) {
    emit_to(&mut std::io::stdout().lock(), kind, data);
}

/// Writes an error event (`data.message`).
pub fn emit_error(message: &str) {
    emit("error", json!({"message": message}));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_event_in_the_envelope() {
        let mut buf = Vec::new();
        emit_to(&mut buf, "summary", json!({"x": 1}));
        emit_to(&mut buf, "error", json!({"message": "m"}));
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0], json!({"type": "summary", "schema": 1, "data": {"x": 1}}));
        assert_eq!(lines[1]["data"]["message"], "m");
        assert_eq!(lines.len(), 2);
    }
}
