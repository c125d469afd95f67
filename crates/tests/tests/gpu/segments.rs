//! Segmented reduce and scans by CSR offsets, and the scans by key, against the CPU references:
//! property tests over every element type and operator (random lengths around tile edges,
//! segment layouts from all-empty through one item each to one segment holding nearly
//! everything, items outside every segment, misaligned views), very uneven segments, bad input,
//! and a length past 2^31.

use crate::compaction::{bits, raw_bits, with_runs};
use crate::device::TestElement;
use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::device::{
    self, Accumulator, DeviceVec, DeviceView, DeviceWorkspace, Element, Max, Min, Operator, ScanKind,
    SegmentArgElement, SegmentOffsets, Sum,
};
use gpu_primitives::{Error, Gpu, OffsetRule, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "segments::by_offsets_every_type_and_operator",
        by_offsets_every_type,
    ),
    ("segments::by_key_every_type_and_operator", by_key_every_type),
    ("segments::argmin_argmax_by_offsets_every_type", arg_every_type),
    ("segments::one_huge_segment_beside_a_million_tiny", uneven),
    ("segments::every_layout_past_1024_tiles", large_grids),
    ("segments::bad_input_and_empty", bad_input),
    ("segments::past_2_pow_31_elements", past_2_pow_31),
];

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// CSR offsets over `n` items in one of five layouts: 0 short segments with many empty ones,
/// 1 up to 100 items, 2 up to 10,000, 3 one segment of nearly everything between a few tiny
/// ones, 4 long stretches of empty segments. Some layouts leave items before the first offset
/// and after the last.
pub fn offsets_for(n: usize, layout: usize, seed: u64) -> Vec<u64> {
    let mut r = rng(seed);
    let first = if r.random_bool(0.3) {
        r.random_range(0..=n.min(50))
    } else {
        0
    };
    let last = if r.random_bool(0.3) {
        n - r.random_range(0..=(n - first).min(50))
    } else {
        n
    };
    let mut offsets = vec![first as u64];
    let mut at = first;
    while at < last {
        let len = match layout {
            0 => r.random_range(0..=3),
            1 => r.random_range(0..=100),
            2 => r.random_range(0..=10_000),
            3 => {
                if offsets.len() == 3 {
                    last - at
                } else {
                    r.random_range(0..=2)
                }
            }
            _ => {
                if r.random_bool(0.9) {
                    0
                } else {
                    r.random_range(1..=5000)
                }
            }
        };
        at = (at + len).min(last);
        offsets.push(at as u64);
    }
    if r.random_bool(0.2) {
        // Empty segments at the end.
        offsets.extend(std::iter::repeat_n(last as u64, 3));
    }
    offsets
}

/// Lengths around tile edges (a tile is 256 x 8 or 16 items: 2048 or 4096), small and large.
fn length() -> impl Strategy<Value = usize> {
    let edges: Vec<usize> = vec![0, 1, 2, 31, 33, 2047, 2048, 2049, 4095, 4096, 4097, 8193, 65_537];
    prop_oneof![
        5 => prop::sample::select(edges),
        4 => 0usize..200_000,
        1 => 200_000usize..2_000_000,
    ]
}

/// Compare a float or integer result by bits, any NaN equal to any NaN (a sum's NaN bits depend
/// on which NaN it met first).
fn same<A: Element + Accumulator + std::fmt::Debug>(
    what: &str,
    found: &[A],
    expected: &[A],
) -> Result<(), TestCaseError> {
    let (f, e) = (bits(found), bits(expected));
    let differ = |i: usize| f[i] != e[i] && !(found[i].is_nan() && expected[i].is_nan());
    if let Some(i) = (0..e.len()).find(|&i| differ(i)) {
        return Err(TestCaseError::fail(format!(
            "{what}: index {i} of {}: found {:?}, expected {:?}",
            e.len(),
            found[i],
            expected[i]
        )));
    }
    prop_assert!(f.len() == e.len(), "{what}: lengths");
    Ok(())
}

/// The segmented reduce and both segmented scans of `x[skip..]` by `offsets` against the
/// references: scan outputs outside every segment untouched, the input unchanged.
fn check_by_offsets<T: TestElement, Op: Operator>(
    gpu: &Gpu,
    x: &[T],
    skip: usize,
    offsets: &[u64],
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError>
where
    T::Acc: TestElement,
{
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let view: DeviceView<'_, T> = d_x.view().slice(skip..x.len());
    let input = &x[skip..];
    let n = input.len();
    let what = |name: &str| {
        format!(
            "{name} {} {} n={n} skip={skip} segments={}",
            T::NAME,
            Op::NAME,
            offsets.len() - 1
        )
    };
    let d_offsets = DeviceVec::from_slice(gpu, offsets).map_err(fail)?;
    let segments = SegmentOffsets::new(gpu, &d_offsets).map_err(fail)?;

    // What the outputs hold before: kept where nothing may be written.
    let sentinel = T::Acc::make(n.max(offsets.len()) + 3, 0x5e9);
    let mut d_out = DeviceVec::from_slice(gpu, &sentinel[..offsets.len() - 1 + 3]).map_err(fail)?;
    device::segmented_reduce::<T, Op>(gpu, view, &segments, &mut d_out, ws).map_err(fail)?;
    let mut expected = reference::segmented_reduce_by_offsets::<T, Op>(input, offsets);
    expected.extend_from_slice(&sentinel[offsets.len() - 1..offsets.len() + 2]);
    same(
        &what("segmented_reduce"),
        &d_out.to_vec(gpu).map_err(fail)?,
        &expected,
    )?;

    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let mut d_out = DeviceVec::from_slice(gpu, &sentinel[..n]).map_err(fail)?;
        let mut expected = sentinel[..n].to_vec();
        reference::segmented_scan_into::<T, Op>(input, offsets, kind, &mut expected);
        if kind == ScanKind::Inclusive {
            device::segmented_inclusive_scan::<T, Op>(gpu, view, &segments, &mut d_out, ws).map_err(fail)?;
        } else {
            device::segmented_exclusive_scan::<T, Op>(gpu, view, &segments, &mut d_out, ws).map_err(fail)?;
        }
        same(
            &what(&format!("segmented scan {kind:?}")),
            &d_out.to_vec(gpu).map_err(fail)?,
            &expected,
        )?;
    }
    prop_assert!(
        raw_bits::<T>(&d_x.to_vec(gpu).map_err(fail)?) == bits(x),
        "the input changed"
    );
    Ok(())
}

fn by_offsets_random<T: TestElement>(gpu: &Gpu) -> Result<(), Failed>
where
    T::Acc: TestElement,
{
    let workspace = RefCell::new(DeviceWorkspace::new());
    crate::properties::runner()
        .run(
            &(length(), 0usize..4, 0usize..5, 0usize..3, any::<u64>()),
            |(n, skip, layout, op, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let x = T::make(n + skip, seed);
                let offsets = offsets_for(n, layout, seed ^ 5);
                match op {
                    0 => check_by_offsets::<T, Sum>(gpu, &x, skip, &offsets, ws),
                    1 => check_by_offsets::<T, Min>(gpu, &x, skip, &offsets, ws),
                    _ => check_by_offsets::<T, Max>(gpu, &x, skip, &offsets, ws),
                }
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn by_offsets_every_type(gpu: &Gpu) -> Result<(), Failed> {
    by_offsets_random::<f32>(gpu)?;
    by_offsets_random::<f64>(gpu)?;
    by_offsets_random::<i32>(gpu)?;
    by_offsets_random::<u32>(gpu)?;
    by_offsets_random::<i64>(gpu)?;
    by_offsets_random::<u64>(gpu)?;
    by_offsets_random::<f16>(gpu)?;
    by_offsets_random::<bf16>(gpu)
}

/// Segmented argmin and argmax of `x[skip..]` by `offsets` against the references (value and
/// index within the segment; the identity and `u32::MAX` for an empty segment).
fn check_arg<T: TestElement + SegmentArgElement>(
    gpu: &Gpu,
    x: &[T],
    skip: usize,
    offsets: &[u64],
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError> {
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let view: DeviceView<'_, T> = d_x.view().slice(skip..x.len());
    let input = &x[skip..];
    let d_offsets = DeviceVec::from_slice(gpu, offsets).map_err(fail)?;
    let segments = SegmentOffsets::new(gpu, &d_offsets).map_err(fail)?;
    let count = offsets.len() - 1;
    for max in [false, true] {
        let mut values = DeviceVec::<T::Acc>::zeroed(gpu, count).map_err(fail)?;
        let mut indices = gpu.upload(&vec![7u32; count]).map_err(fail)?;
        let (what, empty) = if max {
            device::segmented_argmax(gpu, view, &segments, &mut values, &mut indices, ws).map_err(fail)?;
            ("segmented_argmax", <T::Acc as Accumulator>::LOWEST)
        } else {
            device::segmented_argmin(gpu, view, &segments, &mut values, &mut indices, ws).map_err(fail)?;
            ("segmented_argmin", <T::Acc as Accumulator>::HIGHEST)
        };
        let (expected_values, expected_indices): (Vec<T::Acc>, Vec<u32>) = offsets
            .windows(2)
            .map(|w| {
                let segment = &input[w[0] as usize..w[1] as usize];
                let found = if max {
                    reference::argmax(segment)
                } else {
                    reference::argmin(segment)
                };
                found.map_or((empty, u32::MAX), |(v, i)| (v, i as u32))
            })
            .unzip();
        let what = format!(
            "{what} {} n={} skip={skip} segments={count}",
            T::NAME,
            input.len()
        );
        same(
            &format!("{what}: values"),
            &values.to_vec(gpu).map_err(fail)?,
            &expected_values,
        )?;
        prop_assert_eq!(
            gpu.download(&indices).map_err(fail)?,
            expected_indices,
            "{}: indices",
            what
        );
    }
    prop_assert!(
        raw_bits::<T>(&d_x.to_vec(gpu).map_err(fail)?) == bits(x),
        "segmented argmin / argmax: the input changed"
    );
    Ok(())
}

fn arg_random<T: TestElement + SegmentArgElement>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    crate::properties::runner()
        .run(
            &(length(), 0usize..4, 0usize..5, any::<u64>()),
            |(n, skip, layout, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let x = T::make(n + skip, seed);
                check_arg(gpu, &x, skip, &offsets_for(n, layout, seed ^ 9), ws)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

/// Every type of `segment_arg_table!`, NaN winning in f32, and the special values in the float types.
fn arg_every_type(gpu: &Gpu) -> Result<(), Failed> {
    arg_random::<f32>(gpu)?;
    arg_random::<i32>(gpu)?;
    arg_random::<u32>(gpu)?;
    arg_random::<f16>(gpu)?;
    arg_random::<bf16>(gpu)?;
    let ws = &mut DeviceWorkspace::new();
    let mut x = f32::make(100_000, 3);
    for i in [5, 6, 40_000, 99_999] {
        x[i] = f32::NAN;
    }
    check_arg(gpu, &x, 0, &offsets_for(100_000, 2, 4), ws).map_err(|e| Failed::from(e.to_string()))?;
    arg_special_values::<f32>(gpu, |v| v)?;
    arg_special_values::<f16>(gpu, f16::from_f32)?;
    arg_special_values::<bf16>(gpu, bf16::from_f32)
}

/// Values that tie under `<` but not bit for bit (-0.0 and +0.0), the infinities, NaNs of
/// either sign, the extremes and the smallest subnormals, drawn at random into short segments
/// (layouts 0 and 1): the first smallest / largest must win, the first NaN before any number.
fn arg_special_values<T: TestElement + SegmentArgElement>(
    gpu: &Gpu,
    from: fn(f32) -> T,
) -> Result<(), Failed> {
    let pool = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0xffc0_0000),
        1.0,
        -1.0,
        f32::MAX,
        f32::MIN,
        f32::from_bits(1),
        -f32::from_bits(1),
    ];
    let ws = &mut DeviceWorkspace::new();
    for (layout, seed) in [(0, 11), (1, 12), (0, 13)] {
        let mut r = rng(seed);
        // Mostly the zeros and the infinities, so that many segments tie on them alone.
        let x: Vec<T> = (0..100_000)
            .map(|_| {
                from(
                    pool[if r.random_bool(0.7) {
                        r.random_range(0..4)
                    } else {
                        r.random_range(0..pool.len())
                    }],
                )
            })
            .collect();
        check_arg(gpu, &x, 0, &offsets_for(x.len(), layout, seed), ws)
            .map_err(|e| Failed::from(e.to_string()))?;
    }
    Ok(())
}

/// Both scans by key of `x[skip..]` with `keys[skip..]` against the reference.
fn check_by_key<K, T: TestElement, Op: Operator>(
    gpu: &Gpu,
    keys: &[K],
    x: &[T],
    skip: usize,
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError>
where
    K: device::ScanKey + PartialEq + Default + std::fmt::Debug,
{
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let d_keys = gpu.upload(keys).map_err(fail)?;
    let view: DeviceView<'_, T> = d_x.view().slice(skip..x.len());
    let key_view: DeviceView<'_, K> = DeviceView::from(&d_keys).slice(skip..keys.len());
    let n = x.len() - skip;
    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let expected = reference::scan_by_key::<K, T, Op>(&keys[skip..], &x[skip..], kind);
        let mut d_out = DeviceVec::<T::Acc>::zeroed(gpu, n).map_err(fail)?;
        if kind == ScanKind::Inclusive {
            device::inclusive_scan_by_key::<K, T, Op>(gpu, key_view, view, &mut d_out, ws).map_err(fail)?;
        } else {
            device::exclusive_scan_by_key::<K, T, Op>(gpu, key_view, view, &mut d_out, ws).map_err(fail)?;
        }
        same(
            &format!(
                "scan by {} key {kind:?} {} {} n={n} skip={skip}",
                std::any::type_name::<K>(),
                T::NAME,
                Op::NAME
            ),
            &d_out.to_vec(gpu).map_err(fail)?,
            &expected,
        )?;
    }
    prop_assert!(
        raw_bits::<T>(&d_x.to_vec(gpu).map_err(fail)?) == bits(x),
        "scan by key: the values changed"
    );
    prop_assert_eq!(
        gpu.download(&d_keys).map_err(fail)?,
        keys,
        "scan by key: the keys changed"
    );
    Ok(())
}

fn by_key_random<T: TestElement>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    // Longest runs of equal keys: all different, short, a warp's worth, past a tile, past many.
    let longest = [1usize, 3, 40, 5000, 100_000];
    crate::properties::runner()
        .run(
            &(
                length(),
                0usize..4,
                0usize..longest.len(),
                0usize..6,
                any::<u64>(),
            ),
            |(n, skip, longest_run, case, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let x = T::make(n + skip, seed);
                let keys: Vec<u32> =
                    with_runs(&u32::make(n + skip, seed ^ 3), longest[longest_run], seed ^ 1);
                let wide: Vec<i64> = keys.iter().map(|&k| (k as i64) << 20 | 7).collect();
                match case {
                    0 => check_by_key::<u32, T, Sum>(gpu, &keys, &x, skip, ws),
                    1 => check_by_key::<u32, T, Min>(gpu, &keys, &x, skip, ws),
                    2 => check_by_key::<u32, T, Max>(gpu, &keys, &x, skip, ws),
                    3 => check_by_key::<i64, T, Sum>(gpu, &wide, &x, skip, ws),
                    4 => check_by_key::<i64, T, Min>(gpu, &wide, &x, skip, ws),
                    _ => check_by_key::<i64, T, Max>(gpu, &wide, &x, skip, ws),
                }
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn by_key_every_type(gpu: &Gpu) -> Result<(), Failed> {
    by_key_random::<f32>(gpu)?;
    by_key_random::<f64>(gpu)?;
    by_key_random::<i32>(gpu)?;
    by_key_random::<u32>(gpu)?;
    by_key_random::<i64>(gpu)?;
    by_key_random::<u64>(gpu)?;
    by_key_random::<f16>(gpu)?;
    by_key_random::<bf16>(gpu)
}

/// A segment of 2^23 items after a million segments of one item and before a thousand empty
/// ones: every segment's sum, minimum and scan, and NaN / infinities propagating in f32.
fn uneven(gpu: &Gpu) -> Result<(), Failed> {
    let tiny = 1usize << 20;
    let n = tiny + (1 << 23);
    let mut offsets: Vec<u64> = (0..=tiny as u64).collect();
    offsets.push(n as u64);
    offsets.extend(std::iter::repeat_n(n as u64, 1000));
    let mut x = f32::make(n, 99);
    x[17] = f32::NAN;
    x[tiny + 5000] = f32::INFINITY;
    let ws = &mut DeviceWorkspace::new();
    for nan in [false, true] {
        if nan {
            x[n - 3] = f32::NAN;
        }
        check_by_offsets::<f32, Sum>(gpu, &x, 0, &offsets, ws).map_err(|e| Failed::from(e.to_string()))?;
        check_by_offsets::<f32, Min>(gpu, &x, 0, &offsets, ws).map_err(|e| Failed::from(e.to_string()))?;
    }
    Ok(())
}

/// Every segment layout over 5 million items (f32, u32): grids of more than
/// `SegmentedPolicy::tile_starts_min_tiles` tiles, whose tiles read their first segment from the small
/// kernel before instead of searching (the property tests' grids are smaller).
fn large_grids(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let n = 5_000_003;
    let policy = gpu_primitives_abi::tuning::SegmentedPolicy::for_arch(gpu.info().arch);
    let tile = 256 * policy.reduce_items(4);
    check_eq(
        "the grid is past the threshold",
        n / tile >= policy.tile_starts_min_tiles,
        true,
    )?;
    let to_failed = |e: TestCaseError| Failed::from(e.to_string());
    for layout in 0..5 {
        let offsets = offsets_for(n, layout, 77 + layout as u64);
        let x = f32::make(n + 1, layout as u64);
        check_by_offsets::<f32, Sum>(gpu, &x, 1, &offsets, ws).map_err(to_failed)?;
        check_arg(gpu, &x, 1, &offsets, ws).map_err(to_failed)?;
        let u = u32::make(n, layout as u64);
        check_by_offsets::<u32, Max>(gpu, &u, 0, &offsets, ws).map_err(to_failed)?;
    }
    Ok(())
}

/// Offsets that decrease, a last offset past the input, short outputs, keys of another length:
/// errors before any launch, outputs untouched. n = 0: the reduce gives every segment the
/// identity; no segments at all is fine.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let x = ok(DeviceVec::from_slice(gpu, &[1u32, 2, 3, 4]))?;
    let decreasing = ok(DeviceVec::from_slice(gpu, &[0u64, 3, 2, 4]))?;
    match SegmentOffsets::new(gpu, &decreasing) {
        Err(Error::InvalidOffsets {
            at: 2,
            offset: 2,
            rule: OffsetRule::Decreasing { before: 3 },
            ..
        }) => {}
        Err(e) => return Err(format!("decreasing offsets: {e}").into()),
        Ok(_) => return Err("decreasing offsets accepted".into()),
    }
    let none = ok(DeviceVec::<u64>::from_slice(gpu, &[]))?;
    if SegmentOffsets::new(gpu, &none).is_ok() {
        return Err("no offsets accepted".into());
    }
    let long = ok(DeviceVec::from_slice(gpu, &[0u64, 2, 5]))?;
    let long = ok(SegmentOffsets::new(gpu, &long))?;
    let mut out = ok(DeviceVec::from_slice(gpu, &[9u32; 4]))?;
    let mut short = ok(DeviceVec::from_slice(gpu, &[9u32; 1]))?;
    let is_error = |r: gpu_primitives::Result<()>| {
        matches!(
            r,
            Err(Error::InvalidOffsets {
                rule: OffsetRule::PastInput { .. },
                ..
            }) | Err(Error::LengthMismatch { .. })
        )
    };
    let fits = ok(DeviceVec::from_slice(gpu, &[0u64, 2, 4]))?;
    let fits = ok(SegmentOffsets::new(gpu, &fits))?;
    let keys = ok(DeviceVec::from_slice(gpu, &[1u32, 1, 2]))?;
    let cases = [
        (
            "reduce: last offset past the input",
            is_error(device::segmented_reduce::<u32, Sum>(gpu, &x, &long, &mut out, ws)),
        ),
        (
            "scan: last offset past the input",
            is_error(device::segmented_inclusive_scan::<u32, Sum>(
                gpu, &x, &long, &mut out, ws,
            )),
        ),
        (
            "reduce: short output",
            is_error(device::segmented_reduce::<u32, Sum>(
                gpu, &x, &fits, &mut short, ws,
            )),
        ),
        (
            "scan: short output",
            is_error(device::segmented_exclusive_scan::<u32, Sum>(
                gpu, &x, &fits, &mut short, ws,
            )),
        ),
        (
            "argmin: short indices",
            is_error(device::segmented_argmin(gpu, &x, &fits, &mut out, &mut short, ws)),
        ),
        (
            "argmax: last offset past the input",
            is_error(device::segmented_argmax(gpu, &x, &long, &mut out, &mut short, ws)),
        ),
        (
            "by key: keys shorter than values",
            is_error(device::inclusive_scan_by_key::<u32, u32, Sum>(
                gpu, &keys, &x, &mut out, ws,
            )),
        ),
    ];
    for (what, rejected) in cases {
        if !rejected {
            return Err(format!("{what}: no error").into());
        }
    }
    check_eq("outputs untouched", ok(out.to_vec(gpu))?, vec![9u32; 4])?;
    check_eq("short output untouched", ok(short.to_vec(gpu))?, vec![9u32])?;

    let empty = ok(DeviceVec::<f32>::from_slice(gpu, &[]))?;
    let at_zero = ok(DeviceVec::from_slice(gpu, &[0u64, 0, 0]))?;
    let at_zero = ok(SegmentOffsets::new(gpu, &at_zero))?;
    let mut minima = ok(DeviceVec::from_slice(gpu, &[5.0f32; 3]))?;
    ok(device::segmented_reduce::<f32, Min>(
        gpu,
        &empty,
        &at_zero,
        &mut minima,
        ws,
    ))?;
    check_eq(
        "n = 0: empty segments' minimum",
        ok(minima.to_vec(gpu))?,
        vec![f32::INFINITY, f32::INFINITY, 5.0],
    )?;
    let mut nothing = ok(DeviceVec::<f32>::from_slice(gpu, &[]))?;
    ok(device::segmented_inclusive_scan::<f32, Sum>(
        gpu,
        &empty,
        &at_zero,
        &mut nothing,
        ws,
    ))?;
    ok(device::exclusive_scan_by_key::<u32, f32, Sum>(
        gpu,
        &ok(DeviceVec::<u32>::from_slice(gpu, &[]))?,
        &empty,
        &mut nothing,
        ws,
    ))?;
    let single = ok(DeviceVec::from_slice(gpu, &[3u64]))?;
    let no_segments = ok(SegmentOffsets::new(gpu, &single))?;
    ok(device::segmented_reduce::<u32, Sum>(
        gpu,
        &x,
        &no_segments,
        &mut out,
        ws,
    ))?;
    check_eq(
        "no segments: output untouched",
        ok(out.to_vec(gpu))?,
        vec![9u32; 4],
    )
}

/// 2^31 + 5 ones in segments of 1000 (keys i / 1000): the inclusive and exclusive scans by key
/// and by offsets and the totals past 31 bits of index; then the segmented argmin and argmax of
/// 2^31 + 5 items.
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 31) + 5;
    let segment = 1000usize;
    let d_x = ok(DeviceVec::from_slice(gpu, &vec![1u32; n]))?;
    let ws = &mut DeviceWorkspace::new();
    // Inclusive: i % segment + 1; exclusive: one less.
    let check_scan = |what: &str, found: &[u32], exclusive: bool| -> Result<(), Failed> {
        let expected = |i: usize| (i % segment) as u32 + 1 - exclusive as u32;
        match (0..n).find(|&i| found[i] != expected(i)) {
            Some(i) => Err(format!("{what}: index {i}: found {}, expected {}", found[i], expected(i)).into()),
            None => Ok(()),
        }
    };
    let mut out = ok(DeviceVec::<u32>::zeroed(gpu, n))?;
    {
        let keys: Vec<u32> = (0..n).map(|i| (i / segment) as u32).collect();
        let d_keys = ok(gpu.upload(&keys))?;
        drop(keys);
        ok(device::inclusive_scan_by_key::<u32, u32, Sum>(
            gpu, &d_keys, &d_x, &mut out, ws,
        ))?;
        check_scan("inclusive scan by key past 2^31", &ok(out.to_vec(gpu))?, false)?;
        ok(device::exclusive_scan_by_key::<u32, u32, Sum>(
            gpu, &d_keys, &d_x, &mut out, ws,
        ))?;
        check_scan("exclusive scan by key past 2^31", &ok(out.to_vec(gpu))?, true)?;
    }
    let offsets: Vec<u64> = (0..n.div_ceil(segment) as u64)
        .map(|s| s * segment as u64)
        .chain([n as u64])
        .collect();
    let d_offsets = ok(DeviceVec::from_slice(gpu, &offsets))?;
    let segments = ok(SegmentOffsets::new(gpu, &d_offsets))?;
    ok(device::segmented_inclusive_scan::<u32, Sum>(
        gpu, &d_x, &segments, &mut out, ws,
    ))?;
    check_scan("segmented inclusive scan past 2^31", &ok(out.to_vec(gpu))?, false)?;
    ok(device::segmented_exclusive_scan::<u32, Sum>(
        gpu, &d_x, &segments, &mut out, ws,
    ))?;
    check_scan("segmented exclusive scan past 2^31", &ok(out.to_vec(gpu))?, true)?;
    drop(out);
    let mut totals = ok(DeviceVec::<u32>::zeroed(gpu, segments.segments()))?;
    ok(device::segmented_reduce::<u32, Sum>(
        gpu,
        &d_x,
        &segments,
        &mut totals,
        ws,
    ))?;
    let totals = ok(totals.to_vec(gpu))?;
    let expected: Vec<u32> = offsets.windows(2).map(|w| (w[1] - w[0]) as u32).collect();
    check_eq("segmented reduce past 2^31", totals == expected, true)?;
    drop(d_x);

    // Each segment a rotation of 0 .. 1000 (the last one cut short): its minimum and maximum
    // one item each, at a place that moves from segment to segment.
    let y: Vec<u32> = (0..n)
        .map(|i| ((i % segment + 37 * (i / segment)) % segment) as u32)
        .collect();
    let d_y = ok(gpu.upload(&y))?;
    let mut values = ok(DeviceVec::<u32>::zeroed(gpu, segments.segments()))?;
    let mut indices = ok(DeviceVec::<u32>::zeroed(gpu, segments.segments()))?;
    for largest in [false, true] {
        let what = if largest {
            "segmented argmax past 2^31"
        } else {
            "segmented argmin past 2^31"
        };
        if largest {
            ok(device::segmented_argmax(
                gpu,
                &d_y,
                &segments,
                &mut values,
                &mut indices,
                ws,
            ))?;
        } else {
            ok(device::segmented_argmin(
                gpu,
                &d_y,
                &segments,
                &mut values,
                &mut indices,
                ws,
            ))?;
        }
        let (found_values, found_indices) = (ok(values.to_vec(gpu))?, ok(indices.to_vec(gpu))?);
        for (s, w) in offsets.windows(2).enumerate() {
            let row = &y[w[0] as usize..w[1] as usize];
            let best = if largest {
                *row.iter().max().unwrap()
            } else {
                *row.iter().min().unwrap()
            };
            let at = row.iter().position(|&v| v == best).unwrap() as u32;
            if (found_values[s], found_indices[s]) != (best, at) {
                return Err(format!(
                    "{what}: segment {s}: found ({}, {}), expected ({best}, {at})",
                    found_values[s], found_indices[s]
                )
                .into());
            }
        }
    }
    Ok(())
}
