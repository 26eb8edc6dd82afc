//! The tools one runtime runs: each one's declaration, handler and compiled
//! input schema, registered once at build.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use crate::error::RuntimeError;
use crate::schema::CompiledSchema;
use crate::tool::{TaskTool, ToolSpec};

/// A registered tool and its declaration.
pub(crate) struct RegisteredTool {
    pub(crate) tool: Arc<dyn TaskTool>,
    pub(crate) spec: ToolSpec,
    /// `spec.input_schema`, compiled once at build.
    pub(crate) arguments: CompiledSchema,
}

/// The registered tools, by name.
#[derive(Default)]
pub(crate) struct Tools {
    by_name: BTreeMap<String, RegisteredTool>,
}

impl Tools {
    /// Registers `tools`: each name once, each input schema compiled (an
    /// invalid one is an error naming the tool).
    pub(crate) fn register(tools: Vec<Arc<dyn TaskTool>>) -> Result<Tools, RuntimeError> {
        let mut by_name = BTreeMap::new();
        for tool in tools {
            let spec = tool.spec();
            if spec.name.is_empty() {
                return Err(RuntimeError::InvalidPolicy("a tool has an empty name".into()));
            }
            let name = spec.name.clone();
            let arguments = CompiledSchema::compile(&spec.input_schema)
                .map_err(|reason| RuntimeError::InvalidToolSchema { tool: name.clone(), reason })?;
            if by_name.insert(name.clone(), RegisteredTool { tool, spec, arguments }).is_some() {
                return Err(RuntimeError::DuplicateTool(name));
            }
        }
        Ok(Tools { by_name })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.by_name.get(name)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The names, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }

    /// Every declaration, by name.
    pub(crate) fn specs(&self) -> Vec<ToolSpec> {
        self.by_name.values().map(|t| t.spec.clone()).collect()
    }

    /// The tools safe to run again from the start (what triage asks).
    pub(crate) fn rerunnable(&self) -> BTreeSet<String> {
        self.by_name.values().filter(|t| t.spec.rerunnable).map(|t| t.spec.name.clone()).collect()
    }

    /// The durations tools declare (the poll hint's first source).
    pub(crate) fn declared_durations(&self) -> HashMap<String, Duration> {
        self.by_name.values().filter_map(|t| Some((t.spec.name.clone(), t.spec.expected_duration?))).collect()
    }
}
