//! Run-length encoding (run_length_encode, non_trivial_runs) against the CPU references:
//! property tests over every element type (random lengths around tile edges, runs from one
//! item to past a tile, misaligned views), special float values, bad input, and a length past
//! 2^31.

use crate::compaction::{bits, raw_bits, with_runs};
use crate::device::TestElement;
use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::device::{self, DeviceVec, DeviceView, DeviceWorkspace, Element};
use gpu_primitives::{Error, Gpu, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("run_length::every_type_random_runs", every_type),
    ("run_length::special_float_values", special_floats),
    ("run_length::bad_input_and_empty", bad_input),
    ("run_length::past_2_pow_31_elements", past_2_pow_31),
];

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Both encodings of `x` (viewed from `skip` on) against the references: the runs, their
/// count, the outputs past the runs untouched, the input unchanged.
fn check_runs<T: Element>(
    gpu: &Gpu,
    x: &[T],
    skip: usize,
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError> {
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let view: DeviceView<'_, T> = d_x.view().slice(skip..x.len());
    let input = &x[skip..];
    let n = input.len();
    let what = |name: &str| format!("{name} {} n={n} skip={skip}", T::NAME);
    let sentinel_items: Vec<T> = x.iter().rev().copied().collect();
    let sentinel: Vec<u32> = (0..n as u32).map(|i| 0xdead_0000 ^ i).collect();
    let mut count = gpu.upload(&[u64::MAX]).map_err(fail)?;
    let found_count = |count: &gpu_primitives::DeviceBuffer<u64>| -> Result<usize, TestCaseError> {
        Ok(gpu.download(count).map_err(fail)?[0] as usize)
    };
    let check_u32 = |name: &str, found: &[u32], expected: &[u32]| -> Result<(), TestCaseError> {
        let runs = expected.len();
        if let Some(i) = (0..runs).find(|&i| found[i] != expected[i]) {
            return Err(TestCaseError::fail(format!(
                "{}: index {i}: found {}, expected {}",
                what(name),
                found[i],
                expected[i]
            )));
        }
        prop_assert!(
            found[runs..] == sentinel[runs..found.len()],
            "{}: wrote past the runs",
            what(name)
        );
        Ok(())
    };

    // Encode.
    let (items, lengths) = reference::run_length_encode(input);
    let mut d_items = DeviceVec::from_slice(gpu, &sentinel_items[..n]).map_err(fail)?;
    let mut d_lengths = gpu.upload(&sentinel).map_err(fail)?;
    device::run_length_encode(gpu, view, &mut d_items, &mut d_lengths, &mut count, ws).map_err(fail)?;
    prop_assert_eq!(
        found_count(&count)?,
        items.len(),
        "{}: runs",
        what("run_length_encode")
    );
    let found = raw_bits::<T>(&d_items.to_vec(gpu).map_err(fail)?);
    let expected = bits(&items);
    if let Some(i) = (0..items.len()).find(|&i| found[i] != expected[i]) {
        return Err(TestCaseError::fail(format!(
            "{}: item {i}: found bits {:#x}, expected {:#x}",
            what("run_length_encode"),
            found[i],
            expected[i]
        )));
    }
    prop_assert!(
        found[items.len()..] == bits(&sentinel_items[items.len()..n]),
        "{}: wrote past the runs' items",
        what("run_length_encode")
    );
    check_u32(
        "run_length_encode lengths",
        &gpu.download(&d_lengths).map_err(fail)?,
        &lengths,
    )?;

    // Non-trivial runs.
    let (offsets, lengths) = reference::non_trivial_runs(input);
    let room = n / 2;
    let mut d_offsets = gpu.upload(&sentinel[..room]).map_err(fail)?;
    let mut d_lengths = gpu.upload(&sentinel[..room]).map_err(fail)?;
    device::non_trivial_runs(gpu, view, &mut d_offsets, &mut d_lengths, &mut count, ws).map_err(fail)?;
    prop_assert_eq!(
        found_count(&count)?,
        offsets.len(),
        "{}: runs",
        what("non_trivial_runs")
    );
    check_u32(
        "non_trivial_runs offsets",
        &gpu.download(&d_offsets).map_err(fail)?,
        &offsets,
    )?;
    check_u32(
        "non_trivial_runs lengths",
        &gpu.download(&d_lengths).map_err(fail)?,
        &lengths,
    )?;

    prop_assert!(
        raw_bits::<T>(&d_x.to_vec(gpu).map_err(fail)?) == bits(x),
        "the input changed"
    );
    Ok(())
}

/// Lengths around tile edges (a tile is 256 x 8 or 16 items: 2048 or 4096), small and large.
fn length() -> impl Strategy<Value = usize> {
    let edges: Vec<usize> = vec![
        0, 1, 2, 31, 33, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193, 65_537, 1_048_573,
    ];
    prop_oneof![
        5 => prop::sample::select(edges),
        4 => 0usize..200_000,
        1 => 200_000usize..3_000_000,
    ]
}

fn random_runs<T: TestElement>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    // Longest runs: all trivial, short, a warp's worth, past a tile, past many tiles.
    let longest = [1usize, 3, 40, 5000, 100_000];
    crate::properties::runner()
        .run(
            &(length(), 0usize..4, 0usize..longest.len(), any::<u64>()),
            |(n, skip, longest_run, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let n = n + skip;
                let x = with_runs(&T::make(n, seed), longest[longest_run], seed ^ 1);
                check_runs(gpu, &x, skip.min(n), ws)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_type(gpu: &Gpu) -> Result<(), Failed> {
    random_runs::<f32>(gpu)?;
    random_runs::<f64>(gpu)?;
    random_runs::<i32>(gpu)?;
    random_runs::<u32>(gpu)?;
    random_runs::<i64>(gpu)?;
    random_runs::<u64>(gpu)?;
    random_runs::<f16>(gpu)?;
    random_runs::<bf16>(gpu)
}

/// NaN, infinities and both zeros in runs: -0.0 and +0.0 make one run, every NaN its own.
fn special_floats(gpu: &Gpu) -> Result<(), Failed> {
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1.5];
    let mut r = rng(11);
    let ws = &mut DeviceWorkspace::new();
    for n in [1usize, 100, 4097, 300_001] {
        let x: Vec<f32> = (0..n)
            .map(|_| specials[r.random_range(0..specials.len())])
            .collect();
        let x = with_runs(&x, 6, n as u64);
        check_runs(gpu, &x, 0, ws).map_err(|e| Failed::from(e.to_string()))?;
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        check_runs(gpu, &x64, 0, ws).map_err(|e| Failed::from(e.to_string()))?;
    }
    let zeros_and_nans = [0.0f32, -0.0, 0.0, f32::NAN, f32::NAN, 1.0, 1.0];
    let (items, lengths) = ok(device::run_length_encode_slice(gpu, &zeros_and_nans))?;
    check_eq("runs of zeros and NaNs: lengths", lengths, vec![3, 1, 1, 2])?;
    check_eq("runs of zeros and NaNs: items", items.len(), 4)?;
    check_eq(
        "non-trivial runs of zeros and NaNs",
        ok(device::non_trivial_runs_slice(gpu, &zeros_and_nans))?,
        (vec![0, 5], vec![3, 2]),
    )
}

/// Too short an output or count: an error before any launch, the outputs untouched; n = 0
/// writes a count of 0.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let x = ok(DeviceVec::from_slice(gpu, &[1u32, 1, 2, 3]))?;
    let mut items = ok(DeviceVec::from_slice(gpu, &[9u32; 4]))?;
    let mut short_items = ok(DeviceVec::from_slice(gpu, &[9u32; 3]))?;
    let mut lengths = ok(gpu.upload(&[9u32; 4]))?;
    let mut short = ok(gpu.upload(&[9u32; 1]))?;
    let mut count = ok(gpu.upload(&[77u64]))?;
    let mut no_count = ok(gpu.alloc_zeroed::<u64>(0))?;
    let is_length_error = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    let cases = [
        (
            "encode: short items",
            is_length_error(device::run_length_encode(
                gpu,
                &x,
                &mut short_items,
                &mut lengths,
                &mut count,
                ws,
            )),
        ),
        (
            "encode: short lengths",
            is_length_error(device::run_length_encode(
                gpu, &x, &mut items, &mut short, &mut count, ws,
            )),
        ),
        (
            "encode: no count",
            is_length_error(device::run_length_encode(
                gpu,
                &x,
                &mut items,
                &mut lengths,
                &mut no_count,
                ws,
            )),
        ),
        (
            "non-trivial: offsets shorter than n / 2",
            is_length_error(device::non_trivial_runs(
                gpu,
                &x,
                &mut short,
                &mut lengths,
                &mut count,
                ws,
            )),
        ),
    ];
    for (what, rejected) in cases {
        if !rejected {
            return Err(format!("{what}: no length error").into());
        }
    }
    check_eq("items untouched", ok(items.to_vec(gpu))?, vec![9u32; 4])?;
    check_eq("lengths untouched", ok(gpu.download(&lengths))?, vec![9u32; 4])?;
    check_eq("count untouched", ok(gpu.download(&count))?, vec![77])?;
    let empty = ok(DeviceVec::<u32>::from_slice(gpu, &[]))?;
    ok(device::run_length_encode(
        gpu,
        &empty,
        &mut items,
        &mut lengths,
        &mut count,
        ws,
    ))?;
    check_eq("n = 0: count", ok(gpu.download(&count))?, vec![0])?;
    check_eq(
        "n = 0: slices",
        ok(device::non_trivial_runs_slice::<f32>(gpu, &[]))?,
        (vec![], vec![]),
    )
}

/// 2^31 + 5 u32 items in runs of 1000: offsets and lengths past 31 bits of index.
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 31) + 5;
    let x: Vec<u32> = (0..n).map(|i| (i / 1000) as u32).collect();
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    drop(x);
    let runs = n.div_ceil(1000);
    let ws = &mut DeviceWorkspace::new();
    let mut items = ok(DeviceVec::<u32>::zeroed(gpu, n))?;
    let mut lengths = ok(gpu.alloc_zeroed::<u32>(n))?;
    let mut count = ok(gpu.alloc_zeroed::<u64>(1))?;
    ok(device::run_length_encode(
        gpu,
        &d_x,
        &mut items,
        &mut lengths,
        &mut count,
        ws,
    ))?;
    check_eq(
        "encode past 2^31: runs",
        ok(gpu.download(&count))?[0] as usize,
        runs,
    )?;
    let found_items = ok(items.to_vec(gpu))?;
    if let Some(r) = (0..runs).find(|&r| found_items[r] != r as u32) {
        return Err(format!("encode past 2^31: item {r}: found {}", found_items[r]).into());
    }
    drop(found_items);
    let expected_length = |r: usize| if r + 1 < runs { 1000 } else { (n - 1000 * r) as u32 };
    let found_lengths = ok(gpu.download(&lengths))?;
    if let Some(r) = (0..runs).find(|&r| found_lengths[r] != expected_length(r)) {
        return Err(format!("encode past 2^31: length {r}: found {}", found_lengths[r]).into());
    }
    drop((found_lengths, items));
    let mut offsets = ok(gpu.alloc_zeroed::<u32>(n / 2))?;
    let mut lengths = ok(gpu.alloc_zeroed::<u32>(n / 2))?;
    ok(device::non_trivial_runs(
        gpu,
        &d_x,
        &mut offsets,
        &mut lengths,
        &mut count,
        ws,
    ))?;
    check_eq(
        "non-trivial past 2^31: runs",
        ok(gpu.download(&count))?[0] as usize,
        runs,
    )?;
    let found_offsets = ok(gpu.download(&offsets))?;
    if let Some(r) = (0..runs).find(|&r| found_offsets[r] as usize != 1000 * r) {
        return Err(format!("non-trivial past 2^31: offset {r}: found {}", found_offsets[r]).into());
    }
    let found_lengths = ok(gpu.download(&lengths))?;
    if let Some(r) = (0..runs).find(|&r| found_lengths[r] != expected_length(r)) {
        return Err(format!("non-trivial past 2^31: length {r}: found {}", found_lengths[r]).into());
    }
    Ok(())
}
