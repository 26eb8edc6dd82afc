//! The two summaries the paper reports: the mean, and the median as Python's
//! `statistics.median` computes it (mean of the two middle values for even n).

/// Arithmetic mean, summed left to right (so the float result is the model's);
/// `NaN` for no values.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Median: the middle value, or the mean of the two middle values for an
/// even count; `NaN` for no values.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_count_is_mean_of_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn mean_sums_in_order() {
        assert_eq!(mean(&[1.0, 2.0, 4.0]), 7.0 / 3.0);
    }
}
