//! Property tests on the GPU: random lengths (weighted towards the hard ones), every element
//! type and operator, a non-commutative operator for the scans, random block sizes and items per
//! thread for the warp and block collectives, and values that include NaN, infinities, -0.0,
//! subnormals and extremes, against CPU oracles.
//!
//! - Cases per property: `$PROPTEST_CASES` (default 24 per type); seed: `$PROPTEST_RNG_SEED`;
//!   failures are persisted to `crates/tests/tests/gpu/proptest-regressions.txt` (committed) and replayed, or
//!   to `$GPU_PRIMITIVES_PROPTEST_REGRESSIONS` when set (`scripts/gpu-check` points it at the
//!   logs that come back from the GPU machine).
//! - Proptest draws (length, operator, value flavour, seed); the arrays are generated from the
//!   seed, so a failing case shrinks towards short arrays quickly.
//! - Oracles: exact equality for integers (wrapping sums) and for floats drawn on a grid where
//!   every summation order is exact; for special values, NaN / infinity propagation and exact
//!   min / max; for random normal floats, the gamma_n bound of
//!   [`reference::f32_sum_error_bound`](gpu_primitives::reference::f32_sum_error_bound).
//!   Also: inputs unchanged, two reduces bitwise equal, the last inclusive-scan element equals
//!   the reduce (exact cases).

use crate::collectives::{BlockCase, WarpCase, block_case, warp_case};
use crate::device::TestElement;
use crate::support::{GpuTest, check_slices};
use gpu_primitives::device::{
    self, Affine, DeviceVec, DeviceWorkspace, Max, Min, Operator, ScanKind, ScanOperator, Sum,
};
use gpu_primitives::{Gpu, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("properties::reduce_scan_arg_every_type", every_type),
    ("properties::special_float_values", special_values),
    ("properties::random_normal_floats_within_bounds", normal_floats),
    ("properties::non_commutative_scan_keeps_order", affine_scans),
    ("properties::warp_collectives_random_shapes", warp_collectives),
    ("properties::block_collectives_random_shapes", block_collectives),
    ("properties::lesson_kernels_random_lengths", lesson_kernels),
];

/// Lengths: boundaries of warps, blocks, tiles and the single-launch limits (+-1), primes,
/// powers of two, and uniform ones; up to 2^24 but rarely.
fn length() -> impl Strategy<Value = usize> {
    let edges: Vec<usize> = [
        0usize, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097,
    ]
    .into_iter()
    .chain([
        8191,
        8192,
        8193,
        65_535,
        65_536,
        65_537,
        (1 << 22) - 1,
        1 << 22,
        (1 << 22) + 1,
    ])
    .chain([7, 13, 4093, 65_521, 1_048_573])
    .collect();
    prop_oneof![
        6 => prop::sample::select(edges),
        3 => 0usize..100_000,
        1 => (10u32..=24).prop_flat_map(|k| (Just(1usize << k), -1isize..=1)).prop_map(|(p, d)| (p as isize + d) as usize),
    ]
}

/// The regressions file: `$GPU_PRIMITIVES_PROPTEST_REGRESSIONS` when set (the GPU runs point it
/// into the folder that comes back from the GPU machine), else the committed one.
fn regressions_file() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var("GPU_PRIMITIVES_PROPTEST_REGRESSIONS").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gpu/proptest-regressions.txt").into()
        })
    })
}

pub(crate) fn runner() -> TestRunner {
    let mut config = Config {
        cases: 24,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions_file()))),
        ..Config::default()
    };
    if let Some(cases) = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()) {
        config.cases = cases;
    }
    TestRunner::new(config)
}

fn to_failed(e: impl std::fmt::Display) -> Failed {
    Failed::from(e.to_string())
}

fn op_check<T: TestElement, Op: Operator>(
    gpu: &Gpu,
    x: &[T],
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError>
where
    T::Acc: PartialEq + std::fmt::Debug,
{
    let fail = |e: gpu_primitives::Error| TestCaseError::fail(e.to_string());
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let first = device::reduce::<T, Op>(gpu, &d_x, ws).map_err(fail)?;
    let again = device::reduce::<T, Op>(gpu, &d_x, ws).map_err(fail)?;
    let bits = |v: T::Acc| bytemuck::bytes_of(&v).to_vec();
    prop_assert_eq!(bits(first), bits(again), "two reduces differ");
    prop_assert_eq!(
        first,
        reference::reduce::<T, Op>(x),
        "reduce {} {} n={}",
        T::NAME,
        Op::NAME,
        x.len()
    );
    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let mut d_out = gpu.alloc_zeroed::<T::Acc>(x.len()).map_err(fail)?;
        match kind {
            ScanKind::Inclusive => device::inclusive_scan::<T, Op>(gpu, &d_x, &mut d_out, ws),
            ScanKind::Exclusive => device::exclusive_scan::<T, Op>(gpu, &d_x, &mut d_out, ws),
        }
        .map_err(fail)?;
        let found = gpu.download(&d_out).map_err(fail)?;
        let expected = reference::scan::<T, Op>(x, kind);
        if let Some(i) = found.iter().zip(&expected).position(|(f, e)| f != e) {
            return Err(TestCaseError::fail(format!(
                "scan {} {} {kind:?} n={}: index {i}: found {:?}, expected {:?}",
                T::NAME,
                Op::NAME,
                x.len(),
                found[i],
                expected[i]
            )));
        }
        if kind == ScanKind::Inclusive && !x.is_empty() {
            prop_assert_eq!(*found.last().unwrap(), first, "last inclusive element != reduce");
        }
        // The scan of the last two thirds from the first third's reduce (a device value): the
        // whole scan's last two thirds.
        let k = x.len() / 3;
        let initial = gpu.upload(&[reference::reduce::<T, Op>(&x[..k])]).map_err(fail)?;
        let d_rest = DeviceVec::from_slice(gpu, &x[k..]).map_err(fail)?;
        let mut d_out = gpu.alloc_zeroed::<T::Acc>(x.len() - k).map_err(fail)?;
        match kind {
            ScanKind::Inclusive => {
                device::inclusive_scan_init::<T, Op>(gpu, &d_rest, &mut d_out, &initial, ws)
            }
            ScanKind::Exclusive => {
                device::exclusive_scan_init::<T, Op>(gpu, &d_rest, &mut d_out, &initial, ws)
            }
        }
        .map_err(fail)?;
        let found = gpu.download(&d_out).map_err(fail)?;
        if let Some(i) = found.iter().zip(&expected[k..]).position(|(f, e)| f != e) {
            return Err(TestCaseError::fail(format!(
                "scan from an initial value {} {} {kind:?} n={} k={k}: index {i}: found {:?}, expected {:?}",
                T::NAME,
                Op::NAME,
                x.len(),
                found[i],
                expected[k + i]
            )));
        }
    }
    let unchanged = d_x.to_vec(gpu).map_err(fail)?;
    prop_assert!(unchanged.as_slice() == T::as_raw(x), "the input changed");
    Ok(())
}

fn exact_type<T: TestElement>(gpu: &Gpu) -> Result<(), Failed>
where
    T::Acc: PartialEq + std::fmt::Debug + PartialOrd,
{
    // TestRunner::run takes an Fn closure: the workspace is borrowed per case.
    let workspace = RefCell::new(DeviceWorkspace::new());
    runner()
        .run(&(length(), 0u8..3, any::<u64>()), |(n, op, seed)| {
            // TestElement::make: full-range integers (sums wrap) or floats on the exact grid.
            let ws = &mut *workspace.borrow_mut();
            let x = T::make(n, seed);
            match op {
                0 => op_check::<T, Sum>(gpu, &x, ws),
                1 => op_check::<T, Min>(gpu, &x, ws),
                _ => op_check::<T, Max>(gpu, &x, ws),
            }?;
            let fail = |e: gpu_primitives::Error| TestCaseError::fail(e.to_string());
            let d_x = DeviceVec::from_slice(gpu, &x).map_err(fail)?;
            let found = device::argmin::<T>(gpu, &d_x, ws).map_err(fail)?;
            let expected = reference::argmin(&x);
            prop_assert_eq!(found, expected, "argmin {} n={}", T::NAME, n);
            Ok(())
        })
        .map_err(to_failed)
}

fn every_type(gpu: &Gpu) -> Result<(), Failed> {
    exact_type::<f32>(gpu)?;
    exact_type::<f64>(gpu)?;
    exact_type::<i32>(gpu)?;
    exact_type::<u32>(gpu)?;
    exact_type::<i64>(gpu)?;
    exact_type::<u64>(gpu)?;
    exact_type::<f16>(gpu)?;
    exact_type::<bf16>(gpu)
}

/// Grid values with NaN, +-inf, -0.0, subnormals, f32::MAX and f32::MIN sprinkled in.
fn special_f32(n: usize, seed: u64, density: f64) -> Vec<f32> {
    let mut r = StdRng::seed_from_u64(seed);
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        1e-40,
        -3e-39,
        f32::MAX,
        f32::MIN,
    ];
    (0..n)
        .map(|_| {
            if r.random_bool(density) {
                specials[r.random_range(0..specials.len())]
            } else {
                r.random_range(-8i32..=8) as f32 * 0.25
            }
        })
        .collect()
}

/// Special values: NaN in the input (or both infinities) gives a NaN sum; finite values large
/// enough to overflow an f32 partial sum may give +-inf or NaN in any grouping, so then only a
/// finite result is checked (against the bound); otherwise an infinity in the input is the sum,
/// and a finite sum lies within the bound. Min and max match exactly (NaN if any NaN).
fn check_special(
    gpu: &Gpu,
    ws: &mut DeviceWorkspace,
    n: usize,
    seed: u64,
    density: f64,
) -> Result<(), TestCaseError> {
    let x = special_f32(n, seed, density);
    let fail = |e: gpu_primitives::Error| TestCaseError::fail(e.to_string());
    let d_x = DeviceVec::from_slice(gpu, &x).map_err(fail)?;
    let sum = device::reduce::<f32, Sum>(gpu, &d_x, ws).map_err(fail)?;
    let any_nan = x.iter().any(|v| v.is_nan());
    let (pos_inf, neg_inf) = (x.contains(&f32::INFINITY), x.contains(&f32::NEG_INFINITY));
    let finite_abs: f64 = x
        .iter()
        .filter(|v| v.is_finite())
        .map(|&v| (v as f64).abs())
        .sum();
    let may_overflow = finite_abs >= f32::MAX as f64;
    let within_bound = |s: f32| reference::f32_sum_matches(s, reference::sum(&x), n, reference::sum_abs(&x));
    if any_nan || (pos_inf && neg_inf) {
        prop_assert!(sum.is_nan(), "sum {sum}: expected NaN (n={n})");
    } else if may_overflow {
        prop_assert!(
            !sum.is_finite() || within_bound(sum),
            "sum {sum} (n={n}, overflow possible)"
        );
    } else if pos_inf || neg_inf {
        prop_assert_eq!(sum, if pos_inf { f32::INFINITY } else { f32::NEG_INFINITY });
    } else {
        prop_assert!(within_bound(sum), "sum {sum} vs {} (n={n})", reference::sum(&x));
    }
    for (min, op_sum) in [
        (true, device::reduce::<f32, Min>(gpu, &d_x, ws)),
        (false, device::reduce::<f32, Max>(gpu, &d_x, ws)),
    ] {
        let found = op_sum.map_err(fail)?;
        let expected = if any_nan {
            f32::NAN
        } else if min {
            x.iter().copied().fold(f32::INFINITY, f32::min)
        } else {
            x.iter().copied().fold(f32::NEG_INFINITY, f32::max)
        };
        prop_assert!(
            found == expected || (found.is_nan() && expected.is_nan()),
            "min={min}: found {found}, expected {expected}"
        );
    }
    Ok(())
}

/// Cases proptest found, replayed on every run (n, seed, density).
const SPECIAL_REGRESSIONS: &[(usize, u64, f64)] = &[
    // f32::MAX + f32::MAX overflowed a partial to +inf, which met the input's -inf: NaN is right;
    // the oracle used to expect -inf.
    (85_354, 16_615_293_961_728_385_033, 0.0001),
];

fn special_values(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    for &(n, seed, density) in SPECIAL_REGRESSIONS {
        check_special(gpu, &mut workspace.borrow_mut(), n, seed, density).map_err(to_failed)?;
    }
    runner()
        .run(
            &(
                length(),
                any::<u64>(),
                prop::sample::select(vec![0.0001, 0.01, 0.3]),
            ),
            |(n, seed, density)| check_special(gpu, &mut workspace.borrow_mut(), n, seed, density),
        )
        .map_err(to_failed)
}

/// Random normal f32 (not exact in any order): reduce and every scan prefix within the bound.
fn normal_floats(gpu: &Gpu) -> Result<(), Failed> {
    // TestRunner::run takes an Fn closure: the workspace is borrowed per case.
    let workspace = RefCell::new(DeviceWorkspace::new());
    runner()
        .run(&(length(), any::<u64>()), |(n, seed)| {
            let ws = &mut *workspace.borrow_mut();
            let mut r = StdRng::seed_from_u64(seed);
            let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0) * 100.0).collect();
            let fail = |e: gpu_primitives::Error| TestCaseError::fail(e.to_string());
            let d_x = DeviceVec::from_slice(gpu, &x).map_err(fail)?;
            let sum = device::reduce::<f32, Sum>(gpu, &d_x, ws).map_err(fail)?;
            let (exact, abs) = (reference::sum(&x), reference::sum_abs(&x));
            prop_assert!(
                reference::f32_sum_matches(sum, exact, n, abs),
                "sum {sum} vs {exact} (n={n})"
            );
            let mut d_out = gpu.alloc_zeroed::<f32>(n).map_err(fail)?;
            device::inclusive_scan::<f32, Sum>(gpu, &d_x, &mut d_out, ws).map_err(fail)?;
            let found = gpu.download(&d_out).map_err(fail)?;
            let (mut prefix, mut prefix_abs) = (0.0f64, 0.0f64);
            for (i, (&v, &f)) in x.iter().zip(&found).enumerate() {
                prefix += v as f64;
                prefix_abs += (v as f64).abs();
                prop_assert!(
                    reference::f32_sum_matches(f, prefix, i + 1, prefix_abs),
                    "scan index {i}: {f} vs {prefix}"
                );
            }
            Ok(())
        })
        .map_err(to_failed)
}

/// Scans with [`Affine`] (composition of affine maps: associative, not commutative, exact) over
/// u32 and u64 words, against a sequential CPU fold: inclusive, exclusive and in place. The u32
/// scan carries its status packed beside the flag, the u64 scan split from it, so both look-back
/// layouts are checked for order.
fn affine_scans(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    runner()
        .run(&(length(), any::<u64>()), |(n, seed)| {
            let ws = &mut *workspace.borrow_mut();
            let mut rng = StdRng::seed_from_u64(seed);
            // Odd multipliers keep the products from collapsing to 0 along long arrays.
            let words64: Vec<u64> = (0..n).map(|_| rng.random::<u64>() | 1 << 32).collect();
            let words32: Vec<u32> = words64.iter().map(|&w| (w >> 16) as u32 | 1 << 16).collect();
            affine_check(gpu, &words32, Affine::combine_u32, 1 << 16, ws)?;
            affine_check(gpu, &words64, Affine::combine_u64, 1 << 32, ws)
        })
        .map_err(to_failed)
}

fn affine_check<T>(
    gpu: &Gpu,
    x: &[T],
    combine: fn(T, T) -> T,
    identity: T,
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError>
where
    T: TestElement<Acc = T, Raw = T>
        + gpu_primitives_runtime::DeviceCopy
        + bytemuck::Pod
        + Default
        + PartialEq
        + std::fmt::Debug,
    Affine: ScanOperator<T>,
{
    // The data must make order matter, or the test could not fail on a reordering.
    if let Some(w) = x.windows(2).next() {
        prop_assume!(combine(w[0], w[1]) != combine(w[1], w[0]));
    }
    let fail = |e: gpu_primitives::Error| TestCaseError::fail(e.to_string());
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let mut inclusive = Vec::with_capacity(x.len());
    let mut exclusive = Vec::with_capacity(x.len());
    let mut running = identity;
    for &v in x {
        exclusive.push(running);
        running = combine(running, v);
        inclusive.push(running);
    }
    for (kind, expected) in [
        (ScanKind::Inclusive, &inclusive),
        (ScanKind::Exclusive, &exclusive),
    ] {
        let mut d_out = gpu.alloc_zeroed::<T::Acc>(x.len()).map_err(fail)?;
        match kind {
            ScanKind::Inclusive => device::inclusive_scan::<T, Affine>(gpu, &d_x, &mut d_out, ws),
            ScanKind::Exclusive => device::exclusive_scan::<T, Affine>(gpu, &d_x, &mut d_out, ws),
        }
        .map_err(fail)?;
        let found = gpu.download(&d_out).map_err(fail)?;
        let what = format!("affine {} {kind:?} n={}", T::NAME, x.len());
        check_slices(&what, &found, expected, |_| false).map_err(case_failure)?;
    }
    let unchanged = d_x.to_vec(gpu).map_err(fail)?;
    prop_assert!(unchanged.as_slice() == T::as_raw(x), "the input changed");
    let mut d_in_place = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    device::scan_in_place::<T, Affine>(gpu, &mut d_in_place, ScanKind::Inclusive, ws).map_err(fail)?;
    let found = d_in_place.to_vec(gpu).map_err(fail)?;
    let what = format!("affine {} in place n={}", T::NAME, x.len());
    check_slices(&what, &found, &inclusive, |_| false).map_err(case_failure)
}

/// A harness failure (from the shared checks of `support` and `collectives`) as a proptest
/// failure, keeping its message.
fn case_failure(e: Failed) -> TestCaseError {
    TestCaseError::fail(e.message().unwrap_or("failed").to_owned())
}

/// Warp collectives (reduce, reduce-all, inclusive / exclusive scan, broadcast; sum, max, min,
/// and affine for u32; i32, f32 and u32) at random block sizes 1..=1024 and grids, against the CPU
/// ([`collectives::warp_case`]).
fn warp_collectives(gpu: &Gpu) -> Result<(), Failed> {
    let shapes = (
        0u8..3,
        1u32..=1024,
        1u32..=4,
        0u32..4,
        0u32..5,
        0u32..32,
        any::<u64>(),
    );
    runner()
        .run(&shapes, |(ty, block, grid, op, mode, src_lane, seed)| {
            // The butterfly reduce-all needs whole warps (round the block up) and a commutative
            // operator (no affine).
            let block = if mode == 1 { block.div_ceil(32) * 32 } else { block };
            let op = if mode == 1 { op % 3 } else { op };
            let case = WarpCase {
                block,
                grid,
                op: op % 3,
                mode,
                src_lane,
                seed,
            };
            match ty {
                0 => warp_case::<i32>(gpu, case),
                1 => warp_case::<f32>(gpu, case),
                _ => warp_case::<u32>(gpu, WarpCase { op, ..case }),
            }
            .map_err(case_failure)
        })
        .map_err(to_failed)
}

/// Block collectives at random block sizes 1..=1024, items per thread 1..=4 and lengths
/// (weighted to the tile's edges), against the CPU ([`collectives::block_case`]).
fn block_collectives(gpu: &Gpu) -> Result<(), Failed> {
    let shapes = (0u8..3, 1u32..=1024, 1u32..=4).prop_flat_map(|(ty, block, items)| {
        let tile = (block * items) as usize;
        let n = prop_oneof![
            2 => prop::sample::select(vec![0, 1, tile - 1, tile, tile + 1, 2 * tile + 1]),
            1 => 0..=4 * tile,
        ];
        (
            Just(ty),
            Just(block),
            Just(items),
            n,
            0u32..4,
            0u32..5,
            0u32..1024,
            any::<u64>(),
        )
    });
    runner()
        .run(&shapes, |(ty, block, items, n, op, mode, src, seed)| {
            // Operator 3 (affine, non-commutative) exists for u32 only.
            let case = BlockCase {
                items,
                block,
                n,
                op: op % 3,
                mode,
                src,
                seed,
            };
            match ty {
                0 => block_case::<i32>(gpu, case),
                1 => block_case::<f32>(gpu, case),
                _ => block_case::<u32>(gpu, BlockCase { op, ..case }),
            }
            .map_err(case_failure)
        })
        .map_err(to_failed)
}

/// The lesson and puzzle kernels that take any length: the three section scans of the lecture
/// (hierarchical, every block size a power of two 2..=1024, inclusive and exclusive), the
/// hierarchical block sum (lesson 4) and the dot product (puzzle 12, many blocks), over random
/// lengths of grid values (every partial sum exact), against f64 CPU results, exactly.
fn lesson_kernels(gpu: &Gpu) -> Result<(), Failed> {
    use gpu_primitives::device::ScanKind as LectureKind;
    use gpu_primitives_lessons::lecture_scan::{self as lecture, SectionScan};
    let shapes = (
        length().prop_map(|n| n.min(1 << 20)),
        0usize..3,
        any::<bool>(),
        1u32..=10,
        any::<u64>(),
    );
    runner()
        .run(&shapes, |(n, algorithm, exclusive, log2_block, seed)| {
            let fail = |e: gpu_primitives::Error| TestCaseError::fail(e.to_string());
            let x = crate::support::grid_values(n, seed);
            let (algorithm, block) = (SectionScan::ALL[algorithm], 1u32 << log2_block);
            let kind = if exclusive {
                LectureKind::Exclusive
            } else {
                LectureKind::Inclusive
            };
            let found = lecture::hierarchical_scan(gpu, &x, algorithm, kind, block).map_err(fail)?;
            let mut running = 0.0f64;
            let expected: Vec<f32> = x
                .iter()
                .map(|&v| {
                    let before = running;
                    running += v as f64;
                    (if exclusive { before } else { running }) as f32
                })
                .collect();
            let what = format!("{algorithm:?} {kind:?} block={block} n={n}");
            check_slices(&what, &found, &expected, |_| false).map_err(case_failure)?;
            let sum = gpu_primitives_lessons::reduction::block_sum(gpu, &x).map_err(fail)?;
            prop_assert_eq!(sum, running as f32, "block_sum n={}", n);
            // Products of grid values are multiples of 1/16 up to 4: exact sums up to 2^16 terms.
            let m = n.min(1 << 16);
            let y = crate::support::grid_values(m, seed ^ 1);
            let dot = gpu_primitives_lessons::dot_product::dot_product(gpu, &x[..m], &y).map_err(fail)?;
            let expected_dot: f64 = x[..m].iter().zip(&y).map(|(&a, &b)| a as f64 * b as f64).sum();
            prop_assert_eq!(dot, expected_dot as f32, "dot_product n={}", m);
            Ok(())
        })
        .map_err(to_failed)
}
