//! The base URL and the rule about where load may be sent.
//!
//! A load generator is a denial-of-service tool with a nicer name. sdnbench
//! only measures controllers it runs itself, on this machine (loopback) or
//! inside the emulated network it built; so any other address is refused
//! unless `--allow-target CIDR` names that network, and even then only
//! private ranges (RFC 1918, RFC 4193, loopback) can be named. Host names
//! other than `localhost` are refused too: a DNS answer could point anywhere.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// An address range such as 10.0.0.0/8.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cidr {
    pub net: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    /// Parses `ADDR/PREFIX`; refuses public ranges.
    pub fn parse(s: &str) -> Result<Cidr, String> {
        let (a, p) = s.split_once('/').ok_or_else(|| {
            format!("--allow-target '{s}': expected ADDR/PREFIX, e.g. 10.0.0.0/8")
        })?;
        let net: IpAddr = a
            .parse()
            .map_err(|_| format!("--allow-target '{s}': '{a}' is not an IP address"))?;
        let prefix: u8 = p
            .parse()
            .map_err(|_| format!("--allow-target '{s}': '{p}' is not a prefix length"))?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(format!("--allow-target '{s}': prefix longer than {max}"));
        }
        let cidr = Cidr { net, prefix };
        if !cidr.is_private() {
            return Err(format!(
                "--allow-target '{s}': only loopback or private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) can be allowed"
            ));
        }
        Ok(cidr)
    }

    /// True when `ip` lies inside this range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(n), IpAddr::V4(i)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u32::MAX << (32 - self.prefix)
                };
                u32::from(n) & mask == u32::from(i) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(i)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u128::MAX << (128 - self.prefix)
                };
                u128::from(n) & mask == u128::from(i) & mask
            }
            _ => false,
        }
    }

    /// The whole range lies inside loopback or a private block.
    fn is_private(&self) -> bool {
        let blocks: &[(IpAddr, u8)] = &[
            (IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)), 8),
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 0)), 8),
            (IpAddr::V4(Ipv4Addr::new(172, 16, 0, 0)), 12),
            (IpAddr::V4(Ipv4Addr::new(192, 168, 0, 0)), 16),
            (IpAddr::V6(Ipv6Addr::LOCALHOST), 128),
            (IpAddr::V6(Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0)), 7),
        ];
        blocks
            .iter()
            .any(|&(net, prefix)| prefix <= self.prefix && Cidr { net, prefix }.contains(self.net))
    }
}

/// Where requests go: the resolved socket address and the Host header.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub addr: SocketAddr,
    pub host_header: String,
    /// Path prefix of the base URL (without trailing slash), prepended to each request path.
    pub base_path: String,
}

/// Parses `http://HOST[:PORT][/PREFIX]`; HOST is an IP literal or `localhost`.
pub fn parse_url(url: &str) -> Result<Target, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--url '{url}': only http:// URLs are supported (controllers' REST APIs are plain HTTP here)"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("--url '{url}': unclosed '['"))?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port: u16 = match port {
        Some(p) => p
            .parse()
            .map_err(|_| format!("--url '{url}': bad port '{p}'"))?,
        None => 80,
    };
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse().map_err(|_| {
            format!(
                "--url '{url}': host must be an IP address or localhost (names are not resolved)"
            )
        })?
    };
    Ok(Target {
        addr: SocketAddr::new(ip, port),
        host_header: authority.to_string(),
        base_path: path.to_string(),
    })
}

/// Refuses any address that is neither loopback nor inside an allowed range.
pub fn check_allowed(ip: IpAddr, allowed: &[Cidr]) -> Result<(), String> {
    if ip.is_loopback() || allowed.iter().any(|c| c.contains(ip)) {
        return Ok(());
    }
    Err(format!(
        "refusing to send load to {ip}: only loopback (127.0.0.0/8, ::1) is allowed unless --allow-target names \
         the emulated network's range (e.g. --allow-target 10.0.0.0/8)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_into_address_host_and_prefix() {
        let t = parse_url("http://127.0.0.1:8080/api/").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(t.host_header, "127.0.0.1:8080");
        assert_eq!(t.base_path, "/api");
        assert_eq!(
            parse_url("http://localhost").unwrap().addr,
            "127.0.0.1:80".parse().unwrap()
        );
        assert_eq!(
            parse_url("http://[::1]:81").unwrap().addr,
            "[::1]:81".parse().unwrap()
        );
        assert!(parse_url("https://127.0.0.1").is_err());
        assert!(parse_url("http://example.org/").is_err());
    }

    #[test]
    fn only_loopback_unless_allowed() {
        let ten = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(check_allowed("127.0.0.1".parse().unwrap(), &[]).is_ok());
        assert!(check_allowed("127.9.9.9".parse().unwrap(), &[]).is_ok());
        assert!(check_allowed("::1".parse().unwrap(), &[]).is_ok());
        assert!(check_allowed("10.0.0.1".parse().unwrap(), &[]).is_err());
        assert!(check_allowed("10.0.0.1".parse().unwrap(), &[ten]).is_ok());
        assert!(check_allowed("192.168.1.1".parse().unwrap(), &[ten]).is_err());
        assert!(check_allowed("8.8.8.8".parse().unwrap(), &[ten]).is_err());
    }

    #[test]
    fn public_ranges_cannot_be_allowed() {
        assert!(Cidr::parse("0.0.0.0/0").is_err());
        assert!(Cidr::parse("8.8.0.0/16").is_err());
        assert!(Cidr::parse("10.0.0.0/7").is_err()); // wider than 10/8
        assert!(Cidr::parse("192.168.7.0/24").is_ok());
        assert!(Cidr::parse("10.0.0.0").is_err());
        assert!(Cidr::parse("fd00::/8").is_ok());
    }
}
