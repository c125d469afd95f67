//! reduce_by_key and unique_by_key against the CPU references: property tests over every key
//! width and element type with each operator (random lengths around tile edges, runs from one
//! item to past many tiles, misaligned views), and bad input.

use crate::compaction::with_runs;
use crate::device::TestElement;
use crate::support::{GpuTest, check_eq, ok};
use bytemuck::Pod;
use gpu_primitives::device::{
    self, DeviceVec, DeviceView, DeviceWorkspace, Max, Min, Operator, ScanKey, Sum,
};
use gpu_primitives::{DeviceBuffer, Error, Gpu, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::cell::RefCell;
use std::fmt::Debug;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("reduce_by_key::every_key_and_value_type_random", every_type),
    ("reduce_by_key::bad_input_and_empty", bad_input),
];

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// A key type of the tests.
trait TestKey: ScanKey + TestElement + PartialEq + Debug + Default {}
impl<K: ScanKey + TestElement + PartialEq + Debug + Default> TestKey for K {}

/// The first `runs` of `found` equal `expected` by bits, and the rest still `sentinel`.
fn check_outputs<R: Pod + Debug>(
    what: &str,
    found: &[R],
    expected: &[R],
    sentinel: &[R],
) -> Result<(), TestCaseError> {
    let runs = expected.len();
    let bytes = |r: &[R]| bytemuck::cast_slice::<R, u8>(r).to_vec();
    if bytes(&found[..runs]) != bytes(expected) {
        let i = (0..runs)
            .find(|&i| bytemuck::bytes_of(&found[i]) != bytemuck::bytes_of(&expected[i]))
            .unwrap_or(0);
        return Err(TestCaseError::fail(format!(
            "{what}: index {i}: found {:?}, expected {:?}",
            found[i], expected[i]
        )));
    }
    prop_assert!(
        bytes(&found[runs..]) == bytes(&sentinel[runs..]),
        "{}: wrote past the runs",
        what
    );
    Ok(())
}

/// Reduce by key with `Op` and unique by key of `keys` and `x` (viewed from `skip` on) against
/// the references: the runs, their count, the outputs past the runs untouched, the inputs
/// unchanged.
fn check<K: TestKey, T: TestElement, Op: Operator>(
    gpu: &Gpu,
    keys: &[K],
    x: &[T],
    skip: usize,
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError>
where
    T::Acc: Pod + Debug,
    T::Raw: Pod + Debug,
{
    let (d_keys, d_x) = (
        gpu.upload(keys).map_err(fail)?,
        DeviceVec::from_slice(gpu, x).map_err(fail)?,
    );
    let keys_view: DeviceView<'_, K> = DeviceView::from(&d_keys).slice(skip..keys.len());
    let x_view: DeviceView<'_, T> = d_x.view().slice(skip..x.len());
    let (keys_in, x_in) = (&keys[skip..], &x[skip..]);
    let n = x_in.len();
    let what = |name: &str| {
        format!(
            "{name} {} {} {} n={n} skip={skip}",
            std::any::type_name::<K>(),
            T::NAME,
            Op::NAME
        )
    };
    let key_sentinel: Vec<K> = keys_in.iter().rev().copied().collect();
    let mut count = gpu.upload(&[u64::MAX]).map_err(fail)?;
    // The count and the runs' keys of the call `name` against the reference's `unique`.
    let check_keys = |name: &str,
                      count: &DeviceBuffer<u64>,
                      d_unique: &DeviceBuffer<K>,
                      unique: &[K]|
     -> Result<(), TestCaseError> {
        prop_assert_eq!(
            gpu.download(count).map_err(fail)?[0],
            unique.len() as u64,
            "{}: runs",
            what(name)
        );
        check_outputs(
            &what(&format!("{name} keys")),
            &gpu.download(d_unique).map_err(fail)?,
            unique,
            &key_sentinel,
        )
    };

    let (unique, sums) = reference::reduce_by_key::<K, T, Op>(keys_in, x_in);
    let sum_sentinel: Vec<T::Acc> = x_in.iter().rev().map(|v| v.to_acc()).collect();
    let mut d_unique = gpu.upload(&key_sentinel).map_err(fail)?;
    let mut d_sums = gpu.upload(&sum_sentinel).map_err(fail)?;
    device::reduce_by_key::<K, T, Op>(gpu, keys_view, x_view, &mut d_unique, &mut d_sums, &mut count, ws)
        .map_err(fail)?;
    check_keys("reduce_by_key", &count, &d_unique, &unique)?;
    check_outputs(
        &what("reduce_by_key reductions"),
        &gpu.download(&d_sums).map_err(fail)?,
        &sums,
        &sum_sentinel,
    )?;

    let (unique, firsts) = reference::unique_by_key(keys_in, T::as_raw(x_in));
    let first_sentinel: Vec<T> = x_in.iter().rev().copied().collect();
    let mut d_unique = gpu.upload(&key_sentinel).map_err(fail)?;
    let mut d_firsts = DeviceVec::from_slice(gpu, &first_sentinel).map_err(fail)?;
    device::unique_by_key::<K, T>(
        gpu,
        keys_view,
        x_view,
        &mut d_unique,
        &mut d_firsts,
        &mut count,
        ws,
    )
    .map_err(fail)?;
    check_keys("unique_by_key", &count, &d_unique, &unique)?;
    check_outputs(
        &what("unique_by_key values"),
        &d_firsts.to_vec(gpu).map_err(fail)?,
        &firsts,
        T::as_raw(&first_sentinel),
    )?;

    prop_assert!(
        gpu.download(&d_keys).map_err(fail)? == keys,
        "{}: the keys changed",
        what("")
    );
    prop_assert!(
        d_x.to_vec(gpu).map_err(fail)? == T::as_raw(x),
        "{}: the values changed",
        what("")
    );
    Ok(())
}

/// Lengths around tile edges (a tile is 2048 or 4096 items), small and large.
fn length() -> impl Strategy<Value = usize> {
    let edges: Vec<usize> = vec![
        1, 2, 31, 33, 2047, 2048, 2049, 4095, 4096, 4097, 8193, 65_537, 1_048_573,
    ];
    prop_oneof![
        5 => prop::sample::select(edges),
        4 => 1usize..200_000,
        1 => 200_000usize..3_000_000,
    ]
}

fn random<K: TestKey, T: TestElement>(gpu: &Gpu) -> Result<(), Failed>
where
    T::Acc: Pod + Debug,
    T::Raw: Pod + Debug,
{
    let workspace = RefCell::new(DeviceWorkspace::new());
    // Longest runs: all of one item, short (8 on average), a warp's worth, past a tile, past
    // many tiles.
    let longest = [1usize, 15, 40, 5000, 100_000];
    crate::properties::runner()
        .run(
            &(
                length(),
                0usize..4,
                0usize..longest.len(),
                0usize..3,
                any::<u64>(),
            ),
            |(n, skip, longest_run, op, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let n = n + skip;
                let keys = with_runs(&K::make(n, seed), longest[longest_run], seed ^ 1);
                let x = T::make(n, seed ^ 2);
                match op {
                    0 => check::<K, T, Sum>(gpu, &keys, &x, skip, ws),
                    1 => check::<K, T, Min>(gpu, &keys, &x, skip, ws),
                    _ => check::<K, T, Max>(gpu, &keys, &x, skip, ws),
                }
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_type(gpu: &Gpu) -> Result<(), Failed> {
    random::<u32, f32>(gpu)?;
    random::<u32, i32>(gpu)?;
    random::<u32, f16>(gpu)?;
    random::<u32, bf16>(gpu)?;
    random::<u32, f64>(gpu)?;
    random::<i32, u64>(gpu)?;
    random::<u64, f32>(gpu)?;
    random::<u64, u32>(gpu)?;
    random::<i64, i64>(gpu)?;
    random::<u64, f64>(gpu)?;
    random::<i64, f16>(gpu)
}

/// Mismatched lengths or too short an output: an error before any launch, the outputs
/// untouched; n = 0 writes a count of 0.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let keys = ok(gpu.upload(&[1u32, 1, 2, 3]))?;
    let x = ok(DeviceVec::from_slice(gpu, &[1.0f32, 2.0, 3.0, 4.0]))?;
    let short_x = ok(DeviceVec::from_slice(gpu, &[1.0f32, 2.0, 3.0]))?;
    let mut unique = ok(gpu.upload(&[9u32; 4]))?;
    let mut short_unique = ok(gpu.upload(&[9u32; 3]))?;
    let mut sums = ok(DeviceVec::from_slice(gpu, &[9.0f32; 4]))?;
    let mut short_sums = ok(DeviceVec::from_slice(gpu, &[9.0f32; 3]))?;
    let mut count = ok(gpu.upload(&[77u64]))?;
    let mut no_count = ok(gpu.alloc_zeroed::<u64>(0))?;
    let is_length_error = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    let cases = [
        (
            "values shorter than keys",
            is_length_error(device::reduce_by_key::<u32, f32, Sum>(
                gpu,
                &keys,
                &short_x,
                &mut unique,
                &mut sums,
                &mut count,
                ws,
            )),
        ),
        (
            "short keys output",
            is_length_error(device::reduce_by_key::<u32, f32, Sum>(
                gpu,
                &keys,
                &x,
                &mut short_unique,
                &mut sums,
                &mut count,
                ws,
            )),
        ),
        (
            "short reductions",
            is_length_error(device::reduce_by_key::<u32, f32, Max>(
                gpu,
                &keys,
                &x,
                &mut unique,
                &mut short_sums,
                &mut count,
                ws,
            )),
        ),
        (
            "no count",
            is_length_error(device::reduce_by_key::<u32, f32, Min>(
                gpu,
                &keys,
                &x,
                &mut unique,
                &mut sums,
                &mut no_count,
                ws,
            )),
        ),
        (
            "unique: short values output",
            is_length_error(device::unique_by_key::<u32, f32>(
                gpu,
                &keys,
                &x,
                &mut unique,
                &mut short_sums,
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
    check_eq("keys output untouched", ok(gpu.download(&unique))?, vec![9u32; 4])?;
    check_eq("reductions untouched", ok(sums.to_vec(gpu))?, vec![9.0f32; 4])?;
    check_eq("count untouched", ok(gpu.download(&count))?, vec![77])?;
    let (no_keys, no_x) = (
        ok(gpu.upload::<u32>(&[]))?,
        ok(DeviceVec::<f32>::from_slice(gpu, &[]))?,
    );
    ok(device::reduce_by_key::<u32, f32, Sum>(
        gpu,
        &no_keys,
        &no_x,
        &mut unique,
        &mut sums,
        &mut count,
        ws,
    ))?;
    check_eq("n = 0: count", ok(gpu.download(&count))?, vec![0])?;
    ok(gpu.upload(&[77u64]).map(|c| count = c))?;
    ok(device::unique_by_key::<u32, f32>(
        gpu,
        &no_keys,
        &no_x,
        &mut unique,
        &mut sums,
        &mut count,
        ws,
    ))?;
    check_eq("unique n = 0: count", ok(gpu.download(&count))?, vec![0])?;
    check_eq(
        "n = 0: keys output untouched",
        ok(gpu.download(&unique))?,
        vec![9u32; 4],
    )
}
