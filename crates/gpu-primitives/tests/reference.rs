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
