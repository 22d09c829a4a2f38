//! sdnbench-tgen: open-loop UDP probe flows (constant, Poisson, on/off, VoIP presets),
//! round-trip echo, TCP bulk transfers, and a receiver that measures one-way delay,
//! RFC 3550 jitter, loss, reordering and duplicates exactly. `main.rs` only parses
//! flags; everything runs from [`run`].

pub mod cli;
pub mod out;
pub mod recv;
pub mod send;
pub mod sys;
pub mod tcp;

use cli::Action;

/// Runs one action and returns the process exit code (0 ok, 1 threshold not met, 2 error).
pub fn run(action: Action) -> i32 {
    let result = match action {
        Action::SendUdp(c) => send::run_udp(&c),
        Action::RecvUdp(c) => recv::run_udp(&c),
        Action::SendTcp(c) => tcp::run_send(&c),
        Action::RecvTcp(c) => tcp::run_recv(&c),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            out::error(&message);
            2
        }
    }
}
