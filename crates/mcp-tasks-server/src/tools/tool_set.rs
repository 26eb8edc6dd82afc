//! [`ToolSet`]: the names `mcp-tasks serve --tools` takes.

use std::str::FromStr;

use crate::builder::TaskServerBuilder;
use crate::tools::{conformance, demo, fleet};

/// A named group of tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolSet {
    /// A long report with status messages, a flaky upstream call, a question for the user.
    Demo,
    /// The fixtures of the official MCP conformance suite.
    Conformance,
    /// Journalled fixtures for multi-instance tests (see [`fleet`]).
    Fleet,
}

impl ToolSet {
    /// Registers this set's tools.
    pub fn register(self, builder: TaskServerBuilder) -> TaskServerBuilder {
        match self {
            ToolSet::Demo => demo::register(builder),
            ToolSet::Conformance => conformance::register(builder),
            ToolSet::Fleet => fleet::register(builder),
        }
    }
}

impl std::fmt::Display for ToolSet {
    /// The name `--tools` takes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolSet::Demo => "demo",
            ToolSet::Conformance => "conformance",
            ToolSet::Fleet => "fleet",
        })
    }
}

impl FromStr for ToolSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "demo" => Ok(ToolSet::Demo),
            "conformance" => Ok(ToolSet::Conformance),
            "fleet" => Ok(ToolSet::Fleet),
            other => Err(format!("unknown tool set {other:?} (known: demo, conformance, fleet)")),
        }
    }
}

/// Parses a comma-separated list of tool sets (`demo,conformance`), without duplicates.
pub fn parse_tool_sets(list: &str) -> Result<Vec<ToolSet>, String> {
    let mut sets = Vec::new();
    for part in list.split(',').filter(|p| !p.trim().is_empty()) {
        let set: ToolSet = part.parse()?;
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    if sets.is_empty() {
        return Err("no tool set given (known: demo, conformance, fleet)".to_owned());
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_set_lists_parse() {
        assert_eq!(parse_tool_sets("demo,conformance").unwrap(), vec![ToolSet::Demo, ToolSet::Conformance]);
        assert_eq!(parse_tool_sets("conformance, conformance").unwrap(), vec![ToolSet::Conformance]);
        assert!(parse_tool_sets("demo,nope").unwrap_err().contains("nope"));
        assert!(parse_tool_sets("").is_err());
    }

    #[test]
    fn a_tool_set_prints_as_the_name_it_is_given_by() {
        for set in [ToolSet::Demo, ToolSet::Conformance, ToolSet::Fleet] {
            assert_eq!(set.to_string().parse::<ToolSet>(), Ok(set));
        }
    }
}
