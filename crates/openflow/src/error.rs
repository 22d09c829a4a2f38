//! The one error type of the decoder: what was being read and why it failed.

use std::fmt;

/// Why a message could not be decoded. Every variant names the structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end before the structure does.
    Truncated { what: &'static str, need: usize, have: usize },
    /// A header length field below 8: the stream cannot be re-framed after it.
    BadLength { length: usize },
    /// A version this library does not speak.
    UnsupportedVersion(u8),
    /// A length or count inside the message disagrees with the message.
    Malformed { what: &'static str, detail: String },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { what, need, have } => {
                write!(f, "truncated {what}: needs {need} bytes, has {have}")
            }
            DecodeError::BadLength { length } => write!(f, "header length {length} is below the 8-byte minimum"),
            DecodeError::UnsupportedVersion(v) => write!(f, "unsupported OpenFlow version 0x{v:02x}"),
            DecodeError::Malformed { what, detail } => write!(f, "malformed {what}: {detail}"),
        }
    }
}

impl std::error::Error for DecodeError {}
