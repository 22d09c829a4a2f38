//! Request templates and the exact bytes sent for each.
//!
//! Each template is rendered once into a complete HTTP/1.1 request, so the
//! send path only writes a prepared buffer in a single `write` (one segment
//! for small requests: no Nagle interaction on the client side).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::target::Target;

/// One kind of request, as written in a `--requests` file or a preset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    /// Label in the summary; defaults to "METHOD path".
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// JSON body; sent with `Content-Type: application/json`.
    #[serde(default)]
    pub body: Option<serde_json::Value>,
    /// Relative share of this template among all requests.
    #[serde(default = "default_weight")]
    pub weight: u32,
}

fn default_method() -> String {
    "GET".into()
}

fn default_weight() -> u32 {
    1
}

impl Template {
    /// Parses the `--request 'METHOD PATH'` shorthand.
    pub fn from_shorthand(s: &str) -> Result<Template, String> {
        let mut it = s.split_whitespace();
        let (m, p) = match (it.next(), it.next(), it.next()) {
            (Some(m), Some(p), None) => (m, p),
            (Some(p), None, None) if p.starts_with('/') => ("GET", p),
            _ => {
                return Err(format!(
                    "--request '{s}': expected 'METHOD /path' or '/path'"
                ))
            }
        };
        Ok(Template {
            name: None,
            method: m.to_uppercase(),
            path: p.into(),
            headers: BTreeMap::new(),
            body: None,
            weight: 1,
        })
    }

    /// Reads a JSON list of templates.
    pub fn from_json(text: &str) -> Result<Vec<Template>, String> {
        serde_json::from_str(text).map_err(|e| format!("requests file: {e}"))
    }
}

/// A rendered request.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub name: String,
    pub bytes: Arc<[u8]>,
    /// HEAD responses carry no body whatever their headers say.
    pub head: bool,
}

/// Options that apply to every request.
#[derive(Debug, Clone, Default)]
pub struct Common {
    pub headers: Vec<(String, String)>,
    pub basic_auth: Option<String>,
    pub keep_alive: bool,
}

/// Renders a template into request bytes.
pub fn render(t: &Template, target: &Target, common: &Common) -> Result<Prepared, String> {
    let method = t.method.to_uppercase();
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("request '{}': bad method '{}'", t.path, t.method));
    }
    if !t.path.starts_with('/')
        || t.path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(format!(
            "request path '{}' must start with '/' and contain no spaces",
            t.path
        ));
    }
    let body = match &t.body {
        None => None,
        Some(v) => Some(serde_json::to_vec(v).map_err(|e| e.to_string())?),
    };
    let mut head = format!(
        "{method} {}{} HTTP/1.1\r\nHost: {}\r\n",
        target.base_path, t.path, target.host_header
    );
    let has = |name: &str| {
        t.headers
            .keys()
            .chain(common.headers.iter().map(|(k, _)| k))
            .any(|k| k.eq_ignore_ascii_case(name))
    };
    let defaults = [("User-Agent", "sdnbench-apiload"), ("Accept", "*/*")];
    let mut lines: Vec<(String, String)> = Vec::new();
    for (k, v) in defaults {
        if !has(k) {
            lines.push((k.into(), v.into()));
        }
    }
    if let Some(cred) = &common.basic_auth {
        if !has("Authorization") {
            lines.push((
                "Authorization".into(),
                format!("Basic {}", base64(cred.as_bytes())),
            ));
        }
    }
    if body.is_some() && !has("Content-Type") {
        lines.push(("Content-Type".into(), "application/json".into()));
    }
    lines.extend(common.headers.iter().cloned());
    lines.extend(t.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    lines.push((
        "Connection".into(),
        if common.keep_alive {
            "keep-alive"
        } else {
            "close"
        }
        .into(),
    ));
    let body_len = body.as_ref().map(|b| b.len()).unwrap_or(0);
    if body.is_some() || matches!(method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
        lines.push(("Content-Length".into(), body_len.to_string()));
    }
    for (k, v) in &lines {
        if k.contains([':', '\r', '\n']) || v.contains(['\r', '\n']) {
            return Err(format!("header '{k}' contains a forbidden character"));
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    if let Some(b) = body {
        bytes.extend_from_slice(&b);
    }
    let name = t
        .name
        .clone()
        .unwrap_or_else(|| format!("{method} {}", t.path));
    Ok(Prepared {
        name,
        bytes: bytes.into(),
        head: method == "HEAD",
    })
}

/// Standard base64 (RFC 4648) for the Basic authorization header.
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Deterministic weighted choice (smooth weighted round-robin, as in nginx).
///
/// Deterministic so that two runs of one experiment send the same request
/// sequence; smooth so that weights 3:1 give A A B A … rather than A A A B.
#[derive(Debug, Clone)]
pub struct WeightedPicker {
    weights: Vec<i64>,
    current: Vec<i64>,
    total: i64,
}

impl WeightedPicker {
    /// A picker over `weights`; at least one must be positive.
    pub fn new(weights: &[u32]) -> Result<Self, String> {
        let weights: Vec<i64> = weights.iter().map(|&w| i64::from(w)).collect();
        let total = weights.iter().sum();
        if total <= 0 {
            return Err("request weights add up to zero".into());
        }
        Ok(WeightedPicker {
            current: vec![0; weights.len()],
            weights,
            total,
        })
    }

    /// Index of the next template.
    pub fn next_index(&mut self) -> usize {
        let mut best = 0;
        for i in 0..self.weights.len() {
            self.current[i] += self.weights[i];
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= self.total;
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::parse_url;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
        assert_eq!(base64(b"onos:rocks"), "b25vczpyb2Nrcw==");
    }

    #[test]
    fn renders_a_json_post_with_auth() {
        let t: Vec<Template> = Template::from_json(
            r#"[{"method": "post", "path": "/stats/flowentry/add", "body": {"dpid": 1}}]"#,
        )
        .unwrap();
        let target = parse_url("http://127.0.0.1:8080").unwrap();
        let common = Common {
            basic_auth: Some("onos:rocks".into()),
            keep_alive: false,
            ..Default::default()
        };
        let p = render(&t[0], &target, &common).unwrap();
        let text = String::from_utf8(p.bytes.to_vec()).unwrap();
        assert!(
            text.starts_with("POST /stats/flowentry/add HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
            "{text}"
        );
        assert!(text.contains("Authorization: Basic b25vczpyb2Nrcw==\r\n"));
        assert!(text.contains("Content-Type: application/json\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(
            text.ends_with("Content-Length: 10\r\n\r\n{\"dpid\":1}"),
            "{text}"
        );
        assert_eq!(p.name, "POST /stats/flowentry/add");
    }

    #[test]
    fn unknown_template_keys_are_refused() {
        let e = Template::from_json(r#"[{"path": "/", "wieght": 2}]"#).unwrap_err();
        assert!(e.contains("wieght"), "{e}");
        assert!(Template::from_shorthand("GET").is_err());
        assert_eq!(Template::from_shorthand("/metrics").unwrap().method, "GET");
    }

    #[test]
    fn weighted_picker_is_smooth_and_exact() {
        let mut p = WeightedPicker::new(&[3, 1]).unwrap();
        let seq: Vec<usize> = (0..8).map(|_| p.next_index()).collect();
        assert_eq!(seq, vec![0, 0, 1, 0, 0, 0, 1, 0]);
        assert!(WeightedPicker::new(&[0, 0]).is_err());
    }
}
