//! CPU references: what each GPU kernel must compute, in the plainest form, and the tolerance a
//! float result is checked with.

/// `sum_i a[i] * b[i]`, accumulated in `f64`. Panics if the lengths differ.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::dot_product(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
/// ```
pub fn dot_product(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "dot_product: lengths differ");
    a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum()
}

/// `sum_i x[i]`, accumulated in `f64`.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::sum(&[0.5, 0.25]), 0.75);
/// ```
pub fn sum(x: &[f32]) -> f64 {
    x.iter().map(|&v| v as f64).sum()
}

/// `sum_i |x[i]|`, accumulated in `f64`: the scale of a sum's rounding error.
pub fn sum_abs(x: &[f32]) -> f64 {
    x.iter().map(|&v| (v as f64).abs()).sum()
}

/// Bound on the error of an `f32` sum of `n` terms whose absolute values add up to `abs_sum`,
/// in any order of summation: `gamma_(n-1) * abs_sum` with `gamma_k = k u / (1 - k u)` and
/// `u = 2^-24` (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., eq. 4.4),
/// plus one unit of the smallest normal for sums near zero. Infinite once `n u >= 1`.
///
/// # Example
/// ```
/// use gpu_primitives::reference::f32_sum_error_bound;
/// assert!(f32_sum_error_bound(1000, 1.0) < 1e-4);
/// assert!(f32_sum_error_bound(1 << 25, 1.0).is_infinite());
/// ```
pub fn f32_sum_error_bound(n: usize, abs_sum: f64) -> f64 {
    let u = f32::EPSILON as f64 / 2.0;
    let k = n.saturating_sub(1) as f64 * u;
    if k >= 1.0 {
        return f64::INFINITY;
    }
    k / (1.0 - k) * abs_sum + f32::MIN_POSITIVE as f64
}

/// Whether a GPU `f32` sum of `n` terms is within [`f32_sum_error_bound`] of the exact `expected`.
pub fn f32_sum_matches(found: f32, expected: f64, n: usize, abs_sum: f64) -> bool {
    (found as f64 - expected).abs() <= f32_sum_error_bound(n, abs_sum)
}

/// Inclusive scan (`y[i] = x[0] + ... + x[i]`), accumulated in `f64`.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::inclusive_scan(&[1.0, 2.0, 3.0]), [1.0, 3.0, 6.0]);
/// ```
pub fn inclusive_scan(x: &[f32]) -> Vec<f64> {
    x.iter()
        .scan(0.0f64, |acc, &v| {
            *acc += v as f64;
            Some(*acc)
        })
        .collect()
}

/// Exclusive scan (`y[0] = 0`, `y[i] = x[0] + ... + x[i-1]`), accumulated in `f64`.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::exclusive_scan(&[1.0, 2.0, 3.0]), [0.0, 1.0, 3.0]);
/// ```
pub fn exclusive_scan(x: &[f32]) -> Vec<f64> {
    let mut inclusive = inclusive_scan(x);
    inclusive.rotate_right(1);
    if let Some(first) = inclusive.first_mut() {
        *first = 0.0;
    }
    inclusive
}
