//! Number helpers shared by tables, labels and JSON: whole numbers print
//! without a fractional part (`60`, not `60.0`), as the paper writes them.

use serde::Serializer;

/// `x` as the paper would write a parameter: `60`, `0.5`, `1.25`.
pub fn short(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.0e15 { format!("{x:.0}") } else { format!("{x}") }
}

/// Serialises a whole `f64` as a JSON integer and anything else as a float.
pub fn whole_as_int<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.fract() == 0.0 && x.abs() < 9.0e15 { s.serialize_i64(*x as i64) } else { s.serialize_f64(*x) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_lose_their_point() {
        assert_eq!(short(60.0), "60");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(-3.0), "-3");
    }
}
