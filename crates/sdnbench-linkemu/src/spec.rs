//! The emulator's configuration file: every link of a network, each between two
//! interfaces, with one impairment per direction.
//!
//! ```json
//! {"links": [{"name": "s1-s2", "a": "lk1a", "b": "lk1b",
//!             "a_to_b": {"delay_ns": 5000000}, "b_to_a": {"delay_ns": 5000000}}]}
//! ```

use std::collections::HashSet;
use std::path::Path;

use linkemu_core::Impairment;
use serde::Deserialize;

/// One link: frames arriving on `a` leave on `b` after `a_to_b`, and back.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub a_to_b: Impairment,
    #[serde(default)]
    pub b_to_a: Impairment,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub links: Vec<LinkSpec>,
}

impl Spec {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Spec, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Spec::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks configuration text.
    pub fn parse(text: &str) -> Result<Spec, String> {
        let spec: Spec = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if spec.links.is_empty() {
            return Err("no links".into());
        }
        let mut names = HashSet::new();
        let mut ifaces = HashSet::new();
        for l in &spec.links {
            if !names.insert(&l.name) {
                return Err(format!("link {} given twice", l.name));
            }
            for i in [&l.a, &l.b] {
                if i.is_empty() || i.len() >= libc::IFNAMSIZ {
                    return Err(format!("link {}: interface name {i:?} is not a valid name", l.name));
                }
                if !ifaces.insert(i) {
                    return Err(format!("link {}: interface {i} is used twice", l.name));
                }
            }
            l.a_to_b.validate().map_err(|e| format!("link {} a_to_b: {e}", l.name))?;
            l.b_to_a.validate().map_err(|e| format!("link {} b_to_a: {e}", l.name))?;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let s = Spec::parse(r#"{"links": [{"name": "l", "a": "x0", "b": "x1", "a_to_b": {"delay_ns": 5}}]}"#).unwrap();
        assert_eq!(s.links[0].a_to_b.delay_ns, 5);
        assert!(s.links[0].b_to_a.is_transparent());
        let twice = r#"{"links": [{"name": "l", "a": "x0", "b": "x0"}]}"#;
        assert!(Spec::parse(twice).unwrap_err().contains("used twice"));
        let bad = r#"{"links": [{"name": "l", "a": "x0", "b": "x1", "b_to_a": {"loss": {"model": "bernoulli", "loss_pct": 150}}}]}"#;
        assert!(Spec::parse(bad).unwrap_err().contains("b_to_a"));
        assert!(Spec::parse(r#"{"links": []}"#).is_err());
    }
}
