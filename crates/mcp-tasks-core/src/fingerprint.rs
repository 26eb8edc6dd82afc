//! The fingerprint that binds an idempotency key to one tool call.
//!
//! Stores keep it beside the key, so its bytes must never change: a task
//! created before an upgrade is matched by the fingerprint computed after.
//! `tests::matches_the_first_formulation` holds the bytes to the original
//! definition (one `String` per JSON node), which cost ≈ 27 000
//! instructions a creation, most of them formatting the hex digits.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// A stable fingerprint of a tool call, bound to an idempotency key so the same
/// key with other arguments is caught: the lowercase hex SHA-256 of the tool's
/// name, a zero byte, and the arguments as compact JSON with every object's
/// keys in sorted order, so `{"a":1,"b":2}` and `{"b":2,"a":1}` match.
pub fn call_fingerprint(tool: &str, arguments: &Value) -> String {
    let mut canonical = Vec::with_capacity(128);
    write_canonical(&mut canonical, arguments);
    let digest = Sha256::new().chain_update(tool.as_bytes()).chain_update([0u8]).chain_update(&canonical).finalize();
    lower_hex(&digest)
}

/// Compact JSON with sorted object keys, written into `out`.
fn write_canonical(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0)); // keys are unique
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(out, key);
                out.push(b':');
                write_canonical(out, item);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(out, item);
            }
            out.push(b']');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// serde_json's compact spelling of a string, number, boolean or null.
fn write_scalar<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, scalar: &T) {
    // Writing a string, number, boolean or null into a Vec cannot fail.
    serde_json::to_writer(out, scalar).expect("a JSON scalar serialises into memory");
}

fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        hex.push(DIGITS[usize::from(b >> 4)] as char);
        hex.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The first definition, kept as the oracle the stored bytes follow.
    fn first_formulation(tool: &str, arguments: &Value) -> String {
        fn canonical(v: &Value) -> String {
            match v {
                Value::Object(map) => {
                    let mut keys: Vec<_> = map.keys().collect();
                    keys.sort();
                    let parts: Vec<String> =
                        keys.into_iter().map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k]))).collect();
                    format!("{{{}}}", parts.join(","))
                }
                Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
                other => other.to_string(),
            }
        }
        let mut h = Sha256::new();
        h.update(tool.as_bytes());
        h.update([0u8]);
        h.update(canonical(arguments).as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter("JSON has no NaN or infinity", |f| f.is_finite()).prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(".{0,8}", inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn matches_the_first_formulation(tool in ".{0,10}", arguments in json_value()) {
            prop_assert_eq!(call_fingerprint(&tool, &arguments), first_formulation(&tool, &arguments));
        }
    }

    #[test]
    fn known_bytes_stay_the_same() {
        // SHA-256 of `report\0{"a":1,"b":[1,{"x":1,"y":2}],"s":"q\"\\n"}`, computed outside Rust.
        let arguments = json!({"s": "q\"\\n", "b": [1, {"y": 2, "x": 1}], "a": 1});
        assert_eq!(
            call_fingerprint("report", &arguments),
            "080b0dfd9a8f67ae6808a7799fc9407b1e0a04685364743238585137b9226f82"
        );
    }

    #[test]
    fn fingerprint_ignores_key_order_but_not_values() {
        let a = call_fingerprint("t", &json!({"a": 1, "b": [1, {"y": 2, "x": 1}]}));
        let b = call_fingerprint("t", &json!({"b": [1, {"x": 1, "y": 2}], "a": 1}));
        assert_eq!(a, b);
        assert_ne!(a, call_fingerprint("t", &json!({"a": 2, "b": [1, {"x": 1, "y": 2}]})));
        assert_ne!(a, call_fingerprint("u", &json!({"a": 1, "b": [1, {"x": 1, "y": 2}]})));
    }
}
