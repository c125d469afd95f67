//! top_k_of_all (the device-wide top-k by radix select) against the CPU reference (the first k
//! of the array's stable sort, `reference::sort::top_k` of one row): every key type, random,
//! duplicate-heavy, sorted and all-equal inputs (ties decided by the index bits), both
//! directions, an index offset, keys not 16-byte aligned; the input unchanged and the outputs past k untouched; 2^26 keys
//! with k = 2^20; bad arguments refused before any launch.

use crate::sort::{download_keys, fail, key_bits, make_keys, view, view_mut};
use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::device::{self, DeviceWorkspace, SortKey};
use gpu_primitives::reference::sort as reference;
use gpu_primitives::{Error, Gpu};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use rand::Rng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("top_k_of_all::every_key_type_random", every_key_type),
    ("top_k_of_all::two_pow_26_keys_k_two_pow_20", large),
    ("top_k_of_all::bad_input_and_empty", bad_input),
];

/// Outputs this many places longer than k: those past k must stay as they were.
const SPARE: usize = 3;

fn random_top_k_of_all<K: SortKey>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    let lens = vec![1usize, 2, 31, 100, 4097, 70_001, 300_000];
    crate::properties::runner()
        .run(
            &(prop::sample::select(lens), 0u32..5, any::<bool>(), any::<u64>()),
            |(n, shape, largest, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let keys = make_keys::<K>(n, shape, seed);
                let k = match seed % 4 {
                    0 => n,
                    1 => rng(seed ^ 5).random_range(0..=n.min(3000)),
                    _ => rng(seed ^ 5).random_range(0..=n.min(40)),
                };
                let first_index = if seed % 3 == 0 { (1u64 << 33) + 7 } else { 0 };
                let (expected_values, expected_indices) = reference::top_k(&keys, n, k, largest);
                let expected_indices: Vec<u64> = expected_indices
                    .iter()
                    .map(|&i| first_index + u64::from(i))
                    .collect();
                // One case in two from the second key of the buffer: keys not 16-byte aligned
                // (the steps' key-by-key path).
                let skip = (seed >> 7) as usize % 2;
                let mut padded = vec![K::Raw::default(); skip];
                padded.extend_from_slice(K::as_raw(&keys));
                let d_keys = gpu.upload(&padded).map_err(fail)?;
                let sentinel = K::Raw::default();
                let mut d_values = gpu.upload(&vec![sentinel; k + SPARE]).map_err(fail)?;
                let mut d_indices = gpu.upload(&vec![u64::MAX; k + SPARE]).map_err(fail)?;
                device::top_k_of_all(
                    gpu,
                    view::<K>(&d_keys, skip..skip + n),
                    k,
                    largest,
                    first_index,
                    view_mut::<K>(&mut d_values),
                    &mut d_indices,
                    ws,
                )
                .map_err(fail)?;
                let what = format!(
                    "top_k_of_all {} n = {n} shape {shape}, k = {k}, largest {largest}",
                    K::NAME
                );
                let values = download_keys::<K>(gpu, &d_values)?;
                prop_assert!(
                    key_bits(&values[..k]) == key_bits(&expected_values),
                    "{}: values",
                    what
                );
                prop_assert!(
                    K::as_raw(&values[k..]).iter().all(|v| *v == sentinel),
                    "{}: values past k written",
                    what
                );
                let indices = gpu.download(&d_indices).map_err(fail)?;
                prop_assert!(indices[..k] == expected_indices[..], "{}: indices", what);
                prop_assert!(
                    indices[k..].iter().all(|&i| i == u64::MAX),
                    "{}: indices past k written",
                    what
                );
                let after = download_keys::<K>(gpu, &d_keys)?;
                prop_assert!(
                    key_bits(&after[skip..]) == key_bits(&keys),
                    "{}: input modified",
                    what
                );
                Ok(())
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_key_type(gpu: &Gpu) -> Result<(), Failed> {
    random_top_k_of_all::<f32>(gpu)?;
    random_top_k_of_all::<u32>(gpu)?;
    random_top_k_of_all::<i32>(gpu)?;
    random_top_k_of_all::<u8>(gpu)?;
    random_top_k_of_all::<u16>(gpu)?;
    random_top_k_of_all::<f16>(gpu)?;
    random_top_k_of_all::<bf16>(gpu)?;
    random_top_k_of_all::<f64>(gpu)?;
    random_top_k_of_all::<i64>(gpu)?;
    random_top_k_of_all::<u64>(gpu)
}

/// 2^26 + 5 random `f32` keys (some NaNs and infinities among the random bits), k = 2^20,
/// largest; and `u8` keys (ties everywhere: the index's bits decide), k = 2^20, smallest.
fn large(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 26) + 5;
    let k = 1usize << 20;
    let ws = &mut DeviceWorkspace::new();
    fn check<K: SortKey>(
        gpu: &Gpu,
        n: usize,
        k: usize,
        largest: bool,
        ws: &mut DeviceWorkspace,
    ) -> Result<(), Failed> {
        let keys = make_keys::<K>(n, 0, 26);
        let (expected_values, expected_indices) = reference::top_k(&keys, n, k, largest);
        let d_keys = ok(gpu.upload(K::as_raw(&keys)))?;
        let mut d_values = ok(gpu.alloc_zeroed::<K::Raw>(k))?;
        let mut d_indices = ok(gpu.alloc_zeroed::<u64>(k))?;
        ok(device::top_k_of_all(
            gpu,
            view::<K>(&d_keys, 0..n),
            k,
            largest,
            0,
            view_mut::<K>(&mut d_values),
            &mut d_indices,
            ws,
        ))?;
        let values = download_keys::<K>(gpu, &d_values).map_err(|e| Failed::from(e.to_string()))?;
        check_eq("values", key_bits(&values), key_bits(&expected_values))?;
        let expected_indices: Vec<u64> = expected_indices.iter().map(|&i| u64::from(i)).collect();
        check_eq("indices", ok(gpu.download(&d_indices))?, expected_indices)
    }
    check::<f32>(gpu, n, k, true, ws)?;
    check::<u8>(gpu, n, k, false, ws)
}

/// k past the input, short outputs, indices past u64::MAX: an error before any launch, the
/// outputs untouched. k = 0 and an empty input: nothing written.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let keys = ok(gpu.upload(&[3u32, 1, 2, 0, 7, 5]))?;
    let mut values = ok(gpu.upload(&[9u32; 6]))?;
    let mut indices = ok(gpu.upload(&[9u64; 6]))?;
    let mut short = ok(gpu.upload(&[9u64; 2]))?;
    let short_error = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    match device::top_k_of_all::<u32>(gpu, &keys, 7, true, 0, &mut values, &mut indices, ws) {
        Err(Error::KPastInput { k: 7, most: 6, .. }) => {}
        other => return Err(format!("k past the input: {other:?}").into()),
    }
    match device::top_k_of_all::<u32>(gpu, &keys, 2, true, u64::MAX - 3, &mut values, &mut indices, ws) {
        Err(Error::IndicesPastU64 { keys: 6, .. }) => {}
        other => return Err(format!("indices past u64::MAX: {other:?}").into()),
    }
    if !short_error(device::top_k_of_all::<u32>(
        gpu,
        &keys,
        3,
        true,
        0,
        &mut values,
        &mut short,
        ws,
    )) {
        return Err("short indices: no length error".into());
    }
    ok(device::top_k_of_all::<u32>(
        gpu,
        &keys,
        0,
        true,
        0,
        &mut values,
        &mut indices,
        ws,
    ))?;
    let empty = ok(gpu.upload::<u32>(&[]))?;
    ok(device::top_k_of_all::<u32>(
        gpu,
        &empty,
        0,
        false,
        0,
        &mut values,
        &mut indices,
        ws,
    ))?;
    check_eq(
        "values after refused calls",
        ok(gpu.download(&values))?,
        vec![9u32; 6],
    )?;
    check_eq(
        "indices after refused calls",
        ok(gpu.download(&indices))?,
        vec![9u64; 6],
    )?;
    check_eq(
        "short after refused calls",
        ok(gpu.download(&short))?,
        vec![9u64; 2],
    )?;
    // One key: it is the top 1.
    ok(device::top_k_of_all::<u32>(
        gpu,
        view::<u32>(&keys, 0..1),
        1,
        true,
        0,
        &mut values,
        &mut indices,
        ws,
    ))?;
    check_eq("one key", ok(gpu.download(&indices))?[0], 0u64)
}
