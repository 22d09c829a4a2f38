//! Parsing of quantities with explicit units: rates, sizes and durations.
//!
//! Every rate names its unit and layer (`pps` packets/s, `bps` L2 frame bit/s);
//! sizes are decimal (`1GB` = 10^9 bytes) unless binary (`1GiB`); durations
//! need a unit (`500ms`, `10s`) so that `10` never silently means something.

/// A requested send rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Packets per second.
    Pps(f64),
    /// Bits per second counted on the L2 frame (Ethernet header + IP + UDP + payload).
    Bps(f64),
}

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().map_err(|_| format!("'{s}': expected a number followed by a unit"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}': must be a non-negative number"));
    }
    Ok((v, unit.trim()))
}

fn si_prefix(unit: &str) -> (f64, &str) {
    let mut chars = unit.chars();
    match chars.next() {
        Some('k') | Some('K') => (1e3, chars.as_str()),
        Some('M') => (1e6, chars.as_str()),
        Some('G') => (1e9, chars.as_str()),
        _ => (1.0, unit),
    }
}

/// Parses `50kpps`, `1000pps`, `100Mbps`, `1.5Gbps`, `64kbit/s`.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (v, unit) = split_number(s)?;
    let (mult, base) = si_prefix(unit);
    match base {
        "pps" => Ok(Rate::Pps(v * mult)),
        "bps" | "bit/s" => Ok(Rate::Bps(v * mult)),
        _ => Err(format!("'{s}': rate needs a unit: pps, kpps, Mpps, bps, kbps, Mbps, Gbps")),
    }
}

/// Parses `64B`, `1500`, `10kB`, `1GB` (decimal), `1KiB`, `1MiB`, `1GiB` (binary).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("'{s}': size unit must be B, kB, MB, GB, KiB, MiB or GiB")),
    };
    Ok((v * mult).round() as u64)
}

/// Parses `100ns`, `20us`, `500ms`, `10s`, `2m` into nanoseconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "" => return Err(format!("'{s}': duration needs a unit: ns, us, ms, s or m")),
        _ => return Err(format!("'{s}': duration unit must be ns, us, ms, s or m")),
    };
    Ok((v * mult).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("50kpps"), Ok(Rate::Pps(50_000.0)));
        assert_eq!(parse_rate("1.5Mpps"), Ok(Rate::Pps(1_500_000.0)));
        assert_eq!(parse_rate("100Mbps"), Ok(Rate::Bps(100e6)));
        assert!(parse_rate("100").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_bytes("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_bytes("64B"), Ok(64));
        assert_eq!(parse_bytes("1KiB"), Ok(1024));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("2.5s"), Ok(2_500_000_000));
        assert!(parse_duration_ns("10").is_err());
    }
}
