//! JSON Schema checks with the `jsonschema` crate: a tool's arguments
//! against its declared input schema (compiled once, when the runtime or
//! server is built), and an answer against the schema its input request
//! asked for.

use std::fmt;

use serde_json::Value;

/// Most violations one error reports (the first ones found).
pub const MAX_REPORTED_VIOLATIONS: usize = 5;

/// One way a value does not match its schema: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer of the offending value inside the checked one (`""` is
    /// the whole value); for a missing required property, where it belongs.
    pub pointer: String,
    /// What was wrong there, in words (e.g. `"abc" is not of type "number"`).
    pub expected: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "(top level): {}", self.expected)
        } else {
            write!(f, "{}: {}", self.pointer, self.expected)
        }
    }
}

/// The violations as one line, `; `-separated.
pub(crate) fn violation_list(violations: &[SchemaViolation]) -> String {
    violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// A compiled JSON Schema. Cheap to share behind an `Arc`; compile once.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
}

impl CompiledSchema {
    /// Compiles `schema`; the error says why it is not a valid JSON Schema.
    /// Remote and file `$ref`s are not fetched: a schema must stand alone.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema).map(|validator| CompiledSchema { validator }).map_err(|e| e.to_string())
    }

    /// What in `value` does not match (empty when it matches), at most
    /// [`MAX_REPORTED_VIOLATIONS`].
    pub fn violations(&self, value: &Value) -> Vec<SchemaViolation> {
        self.validator.iter_errors(value).take(MAX_REPORTED_VIOLATIONS).map(|e| violation(&e)).collect()
    }
}

fn violation(e: &jsonschema::ValidationError<'_>) -> SchemaViolation {
    let at = e.instance_path().as_str().to_owned();
    match e.kind() {
        // Point at the missing property itself, not at its parent object.
        jsonschema::error::ValidationErrorKind::Required { property } => {
            let name = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
            SchemaViolation {
                pointer: format!("{at}/{}", name.replace('~', "~0").replace('/', "~1")),
                expected: "a required property, missing".to_owned(),
            }
        }
        _ => SchemaViolation { pointer: at, expected: e.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_field_and_what_was_expected() {
        let schema = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "a/b": {"type": "string"}},
            "required": ["filename", "a/b"]
        }))
        .unwrap();
        assert!(schema.violations(&json!({"filename": "x", "a/b": "y", "seconds": 2})).is_empty());
        let found = schema.violations(&json!({"seconds": "abc"}));
        let pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert!(
            pointers.contains(&"/seconds") && pointers.contains(&"/filename") && pointers.contains(&"/a~1b"),
            "{found:?}"
        );
        let seconds = found.iter().find(|v| v.pointer == "/seconds").unwrap();
        assert!(seconds.expected.contains("number"), "{seconds}");
        assert_eq!(schema.violations(&json!([])).first().map(|v| v.pointer.as_str()), Some(""));
    }

    #[test]
    fn an_invalid_schema_does_not_compile() {
        let reason = CompiledSchema::compile(&json!({"type": "no-such-type"})).unwrap_err();
        assert!(!reason.is_empty());
    }
}
