//! Where a role (the load clients, the server, its services) runs: this machine, a real host over
//! OpenSSH, or a network namespace on this machine. Parsed from `local`, `ssh://user@host[:port]`
//! and `netns:NAME`, and printed back the same way; a study's `[hosts]` table places a run's roles.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// One placement of a role.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Place {
    /// This machine, in the controller's own network namespace (today's behaviour).
    #[default]
    Local,
    /// A host reached by OpenSSH with the user's own keys and config.
    Ssh {
        /// The login name (`root` in `ssh://root@10.0.0.2`).
        user: String,
        /// A host name or IP address as ssh takes it.
        host: String,
        /// The ssh port (22 unless given).
        port: u16,
    },
    /// A network namespace on this machine, entered with `ip netns exec NAME`.
    Netns(String),
}

/// A placement that does not parse, with the forms that do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("placement `{text}`: {problem}\n  hint: write `local`, `ssh://user@host[:port]` or `netns:NAME`")]
pub struct PlaceParseError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub problem: String,
}

impl Place {
    /// The name messages use for this placement's host: `local`, `user@host:port` or `netns:NAME`.
    pub fn host_name(&self) -> String {
        match self {
            Place::Local => "local".into(),
            Place::Ssh { user, host, port } => format!("{user}@{host}:{port}"),
            Place::Netns(name) => format!("netns:{name}"),
        }
    }
}

impl FromStr for Place {
    type Err = PlaceParseError;

    fn from_str(text: &str) -> Result<Place, PlaceParseError> {
        let bad = |problem: &str| PlaceParseError { text: text.to_string(), problem: problem.to_string() };
        let t = text.trim();
        if t == "local" {
            return Ok(Place::Local);
        }
        if let Some(name) = t.strip_prefix("netns:") {
            // `ip netns` names are file names under /run/netns.
            if name.is_empty() || name.len() > 200 || name.starts_with('.') {
                return Err(bad("the namespace name is empty or not a file name"));
            }
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
                return Err(bad("a namespace name has only letters, digits, `-`, `_` and `.`"));
            }
            return Ok(Place::Netns(name.to_string()));
        }
        let Some(rest) = t.strip_prefix("ssh://") else {
            return Err(bad("unknown kind of placement"));
        };
        let (user, hostport) = rest.split_once('@').ok_or_else(|| bad("missing the user: ssh://USER@host"))?;
        if user.is_empty() || !user.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(bad("the user name is empty or has characters a login name cannot have"));
        }
        let (host, port) = split_port(hostport).map_err(|p| bad(&p))?;
        if host.is_empty() || host.starts_with('-') || host.contains(['/', '@', ' ']) {
            return Err(bad("missing or malformed host"));
        }
        Ok(Place::Ssh { user: user.to_string(), host: host.to_string(), port })
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; the port defaults to 22.
fn split_port(hostport: &str) -> Result<(&str, u16), String> {
    let parse = |p: &str| match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(format!("invalid port `{p}`")),
        Ok(n) => Ok(n),
    };
    if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or("unclosed `[` in an IPv6 address")?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((h, parse(p)?)),
            None if after.is_empty() => Ok((h, 22)),
            None => Err("junk after the IPv6 address".into()),
        };
    }
    match hostport.split_once(':') {
        Some((h, p)) => Ok((h, parse(p)?)),
        None => Ok((hostport, 22)),
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Local => f.write_str("local"),
            Place::Ssh { user, host, port } if host.contains(':') => write!(f, "ssh://{user}@[{host}]:{port}"),
            Place::Ssh { user, host, port } => write!(f, "ssh://{user}@{host}:{port}"),
            Place::Netns(name) => write!(f, "netns:{name}"),
        }
    }
}

impl Serialize for Place {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Place {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Place, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The `from` of a measured path that starts at the controller itself (the load from this machine
/// to a server host of its own).
pub const PATH_FROM_THIS_MACHINE: &str = "this machine";
/// The `from` of the measured path from the servers to a services host of its own.
pub const PATH_FROM_THE_SERVERS: &str = "the servers";

/// Where a run's roles run (a study's `[hosts]`, or `--client` and `--server-host`): everything on
/// this machine unless placed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// The load clients; none is the lab's own load generator in this process. Several split the
    /// load and their histograms are added. A study writes one place or a list.
    #[serde(default, deserialize_with = "one_or_many", skip_serializing_if = "Vec::is_empty")]
    pub client: Vec<Place>,
    /// Where the stacks' servers start.
    #[serde(default)]
    pub server: Place,
    /// Where the services the servers use (PostgreSQL, nginx, the document store) start.
    #[serde(default)]
    pub services: Place,
}

impl Roles {
    /// Nothing placed: today's single-machine run.
    pub fn is_local(&self) -> bool {
        self.client.is_empty() && self.server == Place::Local && self.services == Place::Local
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Place>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    let texts = match OneOrMany::deserialize(d)? {
        OneOrMany::One(t) => vec![t],
        OneOrMany::Many(v) => v,
    };
    texts.iter().map(|t| t.parse().map_err(serde::de::Error::custom)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_parse_and_print_back() {
        assert_eq!("local".parse::<Place>().unwrap(), Place::Local);
        assert_eq!("netns:bo-1-a".parse::<Place>().unwrap(), Place::Netns("bo-1-a".into()));
        let ssh: Place = "ssh://root@10.0.0.2".parse().unwrap();
        assert_eq!(ssh, Place::Ssh { user: "root".into(), host: "10.0.0.2".into(), port: 22 });
        assert_eq!(ssh.to_string(), "ssh://root@10.0.0.2:22");
        let v6: Place = "ssh://me@[fd00::2]:2222".parse().unwrap();
        assert_eq!(v6.to_string().parse::<Place>().unwrap(), v6);
        assert_eq!(v6.host_name(), "me@fd00::2:2222");
    }

    #[test]
    fn malformed_placements_say_what_is_wrong() {
        for (text, problem) in [
            ("ssh://10.0.0.2", "missing the user"),
            ("ssh://root@10.0.0.2:0", "invalid port"),
            ("ssh://root@10.0.0.2:ssh", "invalid port"),
            ("ssh://root@", "malformed host"),
            ("netns:", "empty"),
            ("netns:a/b", "letters"),
            ("host1", "unknown kind"),
        ] {
            let e = text.parse::<Place>().unwrap_err();
            assert!(e.problem.contains(problem), "{text}: {e}");
            assert!(e.to_string().contains("ssh://user@host[:port]"), "{e}");
        }
    }

    #[test]
    fn a_hosts_table_places_one_client_or_several() {
        let roles: Roles = toml::from_str("client = \"netns:a\"\nserver = \"netns:srv\"").unwrap();
        assert_eq!(roles.client, vec![Place::Netns("a".into())]);
        assert_eq!(roles.server, Place::Netns("srv".into()));
        assert_eq!(roles.services, Place::Local);
        let two: Roles = toml::from_str("client = [\"ssh://me@h1\", \"ssh://me@h2:2222\"]").unwrap();
        assert_eq!(two.client.len(), 2);
        assert!(!two.is_local() && Roles::default().is_local());
        let bad = toml::from_str::<Roles>("server = \"host1\"").unwrap_err().to_string();
        assert!(bad.contains("ssh://user@host[:port]"), "{bad}");
        assert!(toml::from_str::<Roles>("clients = \"local\"").is_err(), "a misspelt role is refused");
    }
}
