//! Property tests of the CPU references and of the error bound the GPU tests rely on.

use gpu_primitives::reference;
use proptest::prelude::*;

/// Values on the grid {k/4 : |k| <= 8}: every partial sum of up to 2^20 of them is exact in f32.
fn grid_value() -> impl Strategy<Value = f32> {
    (-8i32..=8).prop_map(|k| k as f32 * 0.25)
}

fn f32_sum_sequential(x: &[f32]) -> f32 {
    x.iter().sum()
}

fn f32_sum_pairwise(x: &[f32]) -> f32 {
    match x.len() {
        0 => 0.0,
        1 => x[0],
        n => f32_sum_pairwise(&x[..n / 2]) + f32_sum_pairwise(&x[n / 2..]),
    }
}

proptest! {
    #[test]
    fn dot_product_is_symmetric_and_matches_sum(a in prop::collection::vec(-1e3f32..1e3, 0..2000)) {
        let b: Vec<f32> = a.iter().rev().copied().collect();
        prop_assert_eq!(reference::dot_product(&a, &b), reference::dot_product(&b, &a));
        let ones = vec![1.0f32; a.len()];
        prop_assert_eq!(reference::dot_product(&a, &ones), reference::sum(&a));
    }

    #[test]
    fn grid_sums_are_exact_in_any_order(x in prop::collection::vec(grid_value(), 0..5000), split in 0usize..5000) {
        let split = split.min(x.len());
        let expected = reference::sum(&x);
        prop_assert_eq!(f32_sum_sequential(&x) as f64, expected);
        prop_assert_eq!(f32_sum_pairwise(&x) as f64, expected);
        prop_assert_eq!(reference::sum(&x[..split]) + reference::sum(&x[split..]), expected);
    }

    #[test]
    fn error_bound_covers_f32_sums_in_two_orders(x in prop::collection::vec(-1e6f32..1e6, 1..20_000)) {
        let expected = reference::sum(&x);
        let abs = reference::sum_abs(&x);
        for found in [f32_sum_sequential(&x), f32_sum_pairwise(&x)] {
            prop_assert!(reference::f32_sum_matches(found, expected, x.len(), abs),
                "found {found}, expected {expected}, bound {}", reference::f32_sum_error_bound(x.len(), abs));
        }
    }
}

#[test]
fn error_bound_is_tight_enough_to_catch_a_lost_element() {
    // The bound is a worst case (gamma_n grows with n): at n = 1000 values of 1..3 it is ~0.1, so
    // a sum that lost one element must fail the check.
    let x: Vec<f32> = (0..1000).map(|i| 1.0 + (i % 3) as f32).collect();
    let expected = reference::sum(&x);
    let wrong = f32_sum_sequential(&x[1..]) as f64;
    assert!(!reference::f32_sum_matches(
        wrong as f32,
        expected,
        x.len(),
        reference::sum_abs(&x)
    ));
}

#[test]
fn bound_is_infinite_past_one_over_u() {
    assert!(reference::f32_sum_error_bound(1 << 25, 1.0).is_infinite());
    assert!(reference::f32_sum_error_bound(1 << 20, 1.0).is_finite());
}

#[test]
#[should_panic(expected = "lengths differ")]
fn dot_product_rejects_mismatched_lengths() {
    reference::dot_product(&[1.0], &[]);
}

proptest! {
    /// The generic references agree with each other: the last inclusive element is the reduce,
    /// the exclusive scan is the inclusive one shifted, argmin / argmax give the min / max reduce
    /// at their first index, the rows of a segmented reduce are reduces, and a dot product of
    /// ones is the sum.
    #[test]
    fn generic_references_agree(x in proptest::collection::vec(any::<i64>(), 0..300), row in 1usize..20) {
        use gpu_primitives::device::{Max, Min, ScanKind, Sum};
        let inclusive = reference::scan::<i64, Sum>(&x, ScanKind::Inclusive);
        let exclusive = reference::scan::<i64, Sum>(&x, ScanKind::Exclusive);
        let total = reference::reduce::<i64, Sum>(&x);
        prop_assert_eq!(inclusive.last().copied().unwrap_or(0), total);
        for i in 0..x.len() {
            prop_assert_eq!(exclusive[i], if i == 0 { 0 } else { inclusive[i - 1] });
            prop_assert_eq!(inclusive[i], x[..=i].iter().fold(0i64, |a, &v| a.wrapping_add(v)));
        }
        match reference::argmin(&x) {
            Some((v, at)) => {
                prop_assert_eq!(v, reference::reduce::<i64, Min>(&x));
                prop_assert_eq!(x.iter().position(|&e| e == v), Some(at));
            }
            None => prop_assert!(x.is_empty()),
        }
        if let Some((v, at)) = reference::argmax(&x) {
            prop_assert_eq!(v, reference::reduce::<i64, Max>(&x));
            prop_assert_eq!(x.iter().position(|&e| e == v), Some(at));
        }
        let rows = reference::segmented_reduce::<i64, Max>(&x, row);
        prop_assert_eq!(rows.len(), x.len() / row);
        for (r, &m) in rows.iter().enumerate() {
            prop_assert_eq!(m, *x[r * row..(r + 1) * row].iter().max().unwrap());
        }
        let f: Vec<f64> = x.iter().map(|&v| (v % 1000) as f64).collect();
        prop_assert_eq!(reference::dot(&f, &vec![1.0; f.len()]), reference::reduce::<f64, Sum>(&f));
    }

    /// Float min / max propagate NaN as the kernels do; f16 widens exactly.
    #[test]
    fn float_references_propagate_nan(x in proptest::collection::vec(-1e3f32..1e3, 1..50), at in 0usize..50) {
        use gpu_primitives::device::{Max, Min, Sum};
        let mut y = x.clone();
        y[at % x.len()] = f32::NAN;
        prop_assert!(reference::reduce::<f32, Min>(&y).is_nan());
        prop_assert!(reference::reduce::<f32, Max>(&y).is_nan());
        prop_assert_eq!(reference::argmin(&y).map(|p| p.1), Some(at % x.len()));
        let halves: Vec<half::f16> = x.iter().map(|&v| half::f16::from_f32(v)).collect();
        let widened: f32 = halves.iter().map(|h| h.to_f32()).sum();
        prop_assert_eq!(reference::reduce::<half::f16, Sum>(&halves), widened);
    }
}
