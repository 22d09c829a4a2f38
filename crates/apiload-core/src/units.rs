//! Parsing of values with explicit units (`500rps`, `1.5krps`, `500ms`, `5m`, `1%`).
//!
//! Units are mandatory: a bare `1000` is refused, because "1000" could be a
//! rate, a count or milliseconds and a silent guess corrupts a whole campaign.

/// Splits `s` into its numeric prefix and unit suffix.
fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{s}': expected a number followed by a unit"))?;
    if !value.is_finite() {
        return Err(format!("'{s}': not a finite number"));
    }
    Ok((value, unit.trim()))
}

/// A request rate in requests per second: `250rps`, `1krps`, `1.5krps`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "rps" => 1.0,
        "krps" => 1e3,
        "Mrps" => 1e6,
        "" => return Err(format!("'{s}': rate needs a unit, e.g. {s}rps")),
        other => {
            return Err(format!(
                "'{s}': unknown rate unit '{other}' (use rps or krps)"
            ))
        }
    };
    let r = v * mult;
    if r < 0.0 {
        return Err(format!("'{s}': rate must not be negative"));
    }
    Ok(r)
}

/// A duration in seconds: `250us`, `500ms`, `30s`, `5m`, `1h`.
pub fn parse_duration_s(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "" => return Err(format!("'{s}': duration needs a unit, e.g. {s}s or {s}ms")),
        other => {
            return Err(format!(
                "'{s}': unknown duration unit '{other}' (use us, ms, s, m or h)"
            ))
        }
    };
    let d = v * mult;
    if d < 0.0 {
        return Err(format!("'{s}': duration must not be negative"));
    }
    Ok(d)
}

/// A fraction given as a percentage (`1%`) or a plain ratio (`0.99`).
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s)?;
    let f =
        match unit {
            "%" => v / 100.0,
            "" => v,
            other => return Err(format!(
                "'{s}': unknown unit '{other}' (use a ratio like 0.99 or a percentage like 99%)"
            )),
        };
    if !(0.0..=1.0).contains(&f) {
        return Err(format!("'{s}': must lie between 0 and 1 (0% and 100%)"));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_need_units() {
        assert_eq!(parse_rate("250rps").unwrap(), 250.0);
        assert_eq!(parse_rate("1.5krps").unwrap(), 1500.0);
        assert!(parse_rate("1000").is_err());
        assert!(parse_rate("10pps").is_err());
        assert!(parse_rate("-1rps").is_err());
    }

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration_s("500ms").unwrap(), 0.5);
        assert_eq!(parse_duration_s("5m").unwrap(), 300.0);
        assert!((parse_duration_s("250us").unwrap() - 0.00025).abs() < 1e-12);
        assert!(parse_duration_s("30").is_err());
    }

    #[test]
    fn fractions_accept_percent_and_ratio() {
        assert_eq!(parse_fraction("99%").unwrap(), 0.99);
        assert_eq!(parse_fraction("0.5").unwrap(), 0.5);
        assert!(parse_fraction("150%").is_err());
    }
}
