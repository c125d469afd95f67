//! Segmented radix sort (segmented_sort_keys / _pairs, segmented_argsort, both in place) and top_k against the
//! CPU reference (`reference::sort`: each segment's stable sort): property tests over every key
//! type and segment layouts from empty segments to one long one beside many short ones, rows of
//! 1 to 10^4 keys (past a tile, and the rows that go through the device-wide sort), both
//! directions and bit ranges; stability through pairs carrying the input index; keys outside
//! every segment untouched; the input unchanged; bad input; a length past 2^31.

use crate::sort::{download_keys, fail, key_bits, make_keys, random_options, view, view_mut};
use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::device::{self, DeviceWorkspace, SegmentOffsets, Segments, SortKey, SortOptions};
use gpu_primitives::reference::sort as reference;
use gpu_primitives::{Error, Gpu};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("segmented_sort::every_key_type_random", every_key_type),
    ("segmented_sort::top_k_random", top_k_random),
    ("segmented_sort::bad_input_and_empty", bad_input),
    ("segmented_sort::past_2_pow_31_keys", past_2_pow_31),
    (
        "segmented_sort::top_k_past_2_pow_31_rows",
        top_k_past_2_pow_31_rows,
    ),
];

/// A segment layout: `lead` keys before the first segment, the segments' lengths, `tail` keys
/// after the last; or equal rows (`rows` set: the lengths are all the row length, no lead or
/// tail).
#[derive(Clone, Debug)]
struct Layout {
    lead: usize,
    lengths: Vec<usize>,
    tail: usize,
    rows: bool,
}

impl Layout {
    fn offsets(&self) -> Vec<u64> {
        let mut offsets = vec![self.lead as u64];
        for &len in &self.lengths {
            offsets.push(offsets[offsets.len() - 1] + len as u64);
        }
        offsets
    }

    fn n(&self) -> usize {
        self.lead + self.lengths.iter().sum::<usize>() + self.tail
    }

    /// Segments of `lengths` by offsets, `lead` keys before them and `tail` after.
    fn by_offsets(lengths: Vec<usize>, (lead, tail): (usize, usize)) -> Self {
        Layout {
            lead,
            lengths,
            tail,
            rows: false,
        }
    }

    /// `rows` equal rows of `row_len` keys.
    fn equal_rows(row_len: usize, rows: usize) -> Self {
        Layout {
            lead: 0,
            lengths: vec![row_len; rows],
            tail: 0,
            rows: true,
        }
    }

    /// As [`by_offsets`](Self::by_offsets), one segment of `long` keys put among `lengths` at
    /// `at` (or last).
    fn with_long(mut lengths: Vec<usize>, long: usize, at: usize, ends: (usize, usize)) -> Self {
        lengths.insert(at.min(lengths.len()), long);
        Self::by_offsets(lengths, ends)
    }
}

/// Layouts: many short segments; lengths at the tiers' edges (the warp sort's 256, the warp
/// radix tier's 512, the warp merge tier's groups of 2 and 4 warps, 1024 and 2048, the block's
/// tile of 3072 or 4096 keys); one long segment among short ones (the device-wide sort's); equal rows of 1 to 10^4 keys (few rows
/// of 4097 or more go through the device-wide sort); more segments past a tile than
/// multiprocessors (by blocks, a pass per digit, and with offsets beside one of 10^5 keys or
/// more, which the device-wide sort takes).
fn layout() -> impl Strategy<Value = Layout> {
    // Around the warp sort's one row (32), half its longest (128), its longest (256), the
    // warp radix tier's tile (512), the warp merge tier's groups (1024, 2048; 1536, past which
    // the fourth warp of a group holds keys, not padding alone), a block's tile (3072 or 4096)
    // and past it.
    let edges = vec![
        0usize, 1, 2, 31, 32, 33, 127, 128, 129, 255, 256, 257, 300, 511, 512, 513, 600, 768, 1023, 1024,
        1025, 1100, 1536, 1537, 2047, 2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 9000,
    ];
    let ends = (0usize..3, 0usize..3);
    prop_oneof![
        (prop::collection::vec(0usize..70, 0..300), ends.clone())
            .prop_map(|(lengths, ends)| Layout::by_offsets(lengths, ends)),
        (
            prop::collection::vec(prop::sample::select(edges), 1..12),
            ends.clone()
        )
            .prop_map(|(lengths, ends)| Layout::by_offsets(lengths, ends)),
        (
            prop::collection::vec(0usize..40, 0..100),
            10_000usize..300_000,
            0usize..100,
            ends.clone()
        )
            .prop_map(|(lengths, long, at, ends)| Layout::with_long(lengths, long, at, ends)),
        (
            prop::sample::select(vec![
                1usize, 7, 32, 100, 128, 129, 256, 257, 400, 512, 513, 1000, 1024, 1025, 1500, 2048, 2049,
                3072, 4096, 4097, 10_000
            ]),
            1usize..40
        )
            .prop_map(|(row_len, rows)| Layout::equal_rows(row_len, rows)),
        // More segments past a tile than multiprocessors (132 on an H100 or H200): rows all
        // by blocks, a pass per digit; with offsets and one segment of 10^5 keys or more, that
        // one by the device sort and the others by blocks.
        (prop::sample::select(vec![3073usize, 4097, 5000]), 133usize..150)
            .prop_map(|(row_len, rows)| Layout::equal_rows(row_len, rows)),
        (
            prop::collection::vec(3073usize..6000, 133..150),
            100_000usize..300_000,
            0usize..150,
            ends
        )
            .prop_map(|(lengths, long, at, ends)| Layout::with_long(lengths, long, at, ends)),
    ]
}

/// Every segmented sort of `keys` in `layout` under `options` against the reference.
fn check_layout<K: SortKey>(
    gpu: &Gpu,
    keys: &[K],
    layout: &Layout,
    options: SortOptions,
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError> {
    let n = keys.len();
    let what = format!(
        "{} n={n} segments={} rows={} {options:?}",
        K::NAME,
        layout.lengths.len(),
        layout.rows
    );
    let offsets = layout.offsets();
    let local = reference::segmented_argsort(keys, &offsets, options);
    // The expected output: the sentinel outside the segments, each segment sorted.
    let sentinel = make_keys::<K>(n, 0, n as u64 ^ 77);
    let mut expected_keys = sentinel.clone();
    let mut expected_global = vec![u32::MAX; n];
    for w in offsets.windows(2) {
        for j in w[0] as usize..w[1] as usize {
            let from = w[0] as usize + local[j] as usize;
            expected_keys[j] = keys[from];
            expected_global[j] = from as u32;
        }
    }
    let expected_bits = key_bits(&expected_keys);
    let d_offsets = gpu.upload(&offsets).map_err(fail)?;
    let segment_offsets = SegmentOffsets::new(gpu, &d_offsets).map_err(fail)?;
    let segments = || -> Segments<'_> {
        if layout.rows {
            Segments::Rows(layout.lengths[0])
        } else {
            (&segment_offsets).into()
        }
    };
    let d_keys = gpu.upload(K::as_raw(keys)).map_err(fail)?;
    let keys_in = || view::<K>(&d_keys, 0..n);
    let index: Vec<u32> = (0..n as u32).collect();
    let wide: Vec<u64> = index.iter().map(|&i| (i as u64) << 33 | 0x5a5a).collect();
    let d_index = gpu.upload(&index).map_err(fail)?;
    let d_wide = gpu.upload(&wide).map_err(fail)?;
    let mut d_out = gpu.upload(K::as_raw(&sentinel)).map_err(fail)?;
    let mut d_values = gpu.upload(&vec![u32::MAX; n]).map_err(fail)?;
    let mut d_wide_out = gpu.upload(&vec![u64::MAX; n]).map_err(fail)?;
    let in_segments = |j: usize| expected_global[j] != u32::MAX;

    let check_bits = |name: &str,
                      d: &gpu_primitives::DeviceBuffer<K::Raw>,
                      expected: &[u64]|
     -> Result<(), TestCaseError> {
        let found = key_bits(&download_keys::<K>(gpu, d)?);
        if let Some(i) = (0..n).find(|&i| found[i] != expected[i]) {
            return Err(TestCaseError::fail(format!(
                "{name} {what}: index {i}: found bits {:#x}, expected {:#x}",
                found[i], expected[i]
            )));
        }
        Ok(())
    };
    device::segmented_sort_keys(gpu, keys_in(), view_mut::<K>(&mut d_out), segments(), options, ws)
        .map_err(fail)?;
    check_bits("segmented_sort_keys", &d_out, &expected_bits)?;

    device::segmented_sort_pairs(
        gpu,
        keys_in(),
        &d_index,
        view_mut::<K>(&mut d_out),
        &mut d_values,
        segments(),
        options,
        ws,
    )
    .map_err(fail)?;
    check_bits("segmented_sort_pairs", &d_out, &expected_bits)?;
    let values = gpu.download(&d_values).map_err(fail)?;
    prop_assert!(
        values == expected_global,
        "segmented_sort_pairs {}: values (the input index) out of order",
        what
    );

    device::segmented_sort_pairs(
        gpu,
        keys_in(),
        &d_wide,
        view_mut::<K>(&mut d_out),
        &mut d_wide_out,
        segments(),
        options,
        ws,
    )
    .map_err(fail)?;
    let wide_out = gpu.download(&d_wide_out).map_err(fail)?;
    prop_assert!(
        (0..n).all(|j| wide_out[j]
            == if in_segments(j) {
                wide[expected_global[j] as usize]
            } else {
                u64::MAX
            }),
        "segmented_sort_pairs {}: 8-byte values",
        what
    );

    let mut d_indices = gpu.upload(&vec![u32::MAX; n]).map_err(fail)?;
    device::segmented_argsort(
        gpu,
        keys_in(),
        view_mut::<K>(&mut d_out),
        &mut d_indices,
        segments(),
        options,
        ws,
    )
    .map_err(fail)?;
    check_bits("segmented_argsort", &d_out, &expected_bits)?;
    let indices = gpu.download(&d_indices).map_err(fail)?;
    prop_assert!(
        (0..n).all(|j| indices[j] == if in_segments(j) { local[j] } else { u32::MAX }),
        "segmented_argsort {}: indices",
        what
    );
    prop_assert!(
        key_bits(&download_keys::<K>(gpu, &d_keys)?) == key_bits(keys),
        "{}: the input changed",
        what
    );

    // In place: each segment sorted where it lies, the keys (values) outside every segment as
    // they were.
    let in_place: Vec<K> = (0..n)
        .map(|j| if in_segments(j) { expected_keys[j] } else { keys[j] })
        .collect();
    let in_place_bits = key_bits(&in_place);
    let mut d_sorted = gpu.upload(K::as_raw(keys)).map_err(fail)?;
    device::segmented_sort_keys_in_place(gpu, view_mut::<K>(&mut d_sorted), segments(), options, ws)
        .map_err(fail)?;
    check_bits("segmented_sort_keys_in_place", &d_sorted, &in_place_bits)?;
    let mut d_sorted = gpu.upload(K::as_raw(keys)).map_err(fail)?;
    let mut d_moved = gpu.upload(&index).map_err(fail)?;
    device::segmented_sort_pairs_in_place(
        gpu,
        view_mut::<K>(&mut d_sorted),
        &mut d_moved,
        segments(),
        options,
        ws,
    )
    .map_err(fail)?;
    check_bits("segmented_sort_pairs_in_place", &d_sorted, &in_place_bits)?;
    let moved = gpu.download(&d_moved).map_err(fail)?;
    prop_assert!(
        (0..n).all(|j| moved[j]
            == if in_segments(j) {
                expected_global[j]
            } else {
                j as u32
            }),
        "segmented_sort_pairs_in_place {}: values (the input index) out of order",
        what
    );
    Ok(())
}

fn random_segmented<K: SortKey>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    crate::properties::runner()
        .run(
            &(layout(), 0u32..5, any::<bool>(), 0u32..4, any::<u64>()),
            |(layout, shape, descending, range, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let keys = make_keys::<K>(layout.n(), shape, seed);
                let options = random_options::<K>(descending, range, seed);
                check_layout(gpu, &keys, &layout, options, ws)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_key_type(gpu: &Gpu) -> Result<(), Failed> {
    random_segmented::<u32>(gpu)?;
    random_segmented::<f32>(gpu)?;
    random_segmented::<i32>(gpu)?;
    random_segmented::<u64>(gpu)?;
    random_segmented::<i64>(gpu)?;
    random_segmented::<f64>(gpu)?;
    random_segmented::<u8>(gpu)?;
    random_segmented::<u16>(gpu)?;
    random_segmented::<f16>(gpu)?;
    random_segmented::<bf16>(gpu)
}

/// top_k of random rows (1 to 10^4 columns, past a tile too), k from 0 to 16 (one case in
/// two), to 64 or (one case in four) to 600 (past the radix select's largest k: the sort), largest and smallest, against
/// the reference: values bit for bit and columns (ties to the lower column).
fn random_top_k<K: SortKey>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    let row_lens = vec![1usize, 5, 32, 100, 1000, 3072, 4096, 4097, 10_000];
    crate::properties::runner()
        .run(
            &(
                prop::sample::select(row_lens),
                0usize..30,
                0u32..5,
                any::<bool>(),
                any::<u64>(),
            ),
            |(row_len, rows, shape, largest, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let keys = make_keys::<K>(rows * row_len, shape, seed);
                // Small k mostly: up to 16 (the warps' sort finds the threshold), to 64 (radix
                // select does), to 600 (past TOP_K_SELECT_MAX_K: the sort).
                let most_k = match seed % 4 {
                    0 => 600,
                    1 => 64,
                    _ => 16,
                };
                let k = rng(seed ^ 3).random_range(0..=row_len.min(most_k));
                let (expected_values, expected_indices) = reference::top_k(&keys, row_len, k, largest);
                let d_keys = gpu.upload(K::as_raw(&keys)).map_err(fail)?;
                let mut d_values = gpu.alloc_zeroed::<K::Raw>(rows * k).map_err(fail)?;
                let mut d_indices = gpu.alloc_zeroed::<u32>(rows * k).map_err(fail)?;
                device::top_k(
                    gpu,
                    view::<K>(&d_keys, 0..keys.len()),
                    row_len,
                    k,
                    largest,
                    view_mut::<K>(&mut d_values),
                    &mut d_indices,
                    ws,
                )
                .map_err(fail)?;
                let what = format!("top_k {} {rows} x {row_len}, k = {k}, largest {largest}", K::NAME);
                prop_assert!(
                    key_bits(&download_keys::<K>(gpu, &d_values)?) == key_bits(&expected_values),
                    "{}: values",
                    what
                );
                prop_assert!(
                    gpu.download(&d_indices).map_err(fail)? == expected_indices,
                    "{}: indices",
                    what
                );
                Ok(())
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn top_k_random(gpu: &Gpu) -> Result<(), Failed> {
    random_top_k::<f32>(gpu)?;
    random_top_k::<bf16>(gpu)?;
    random_top_k::<u8>(gpu)?;
    random_top_k::<i32>(gpu)?;
    random_top_k::<f64>(gpu)?;
    random_top_k::<i64>(gpu)
}

/// Bad shapes, offsets past the input, short outputs, k past the row, bad bit ranges: an error
/// before any launch, outputs untouched. No segments, empty segments and k = 0.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let keys = ok(gpu.upload(&[3u32, 1, 2, 0, 7, 5]))?;
    let mut out = ok(gpu.upload(&[9u32; 6]))?;
    let mut short = ok(gpu.upload(&[9u32; 5]))?;
    let asc = SortOptions::ascending();
    let invalid = |r: gpu_primitives::Result<()>| {
        matches!(
            r,
            Err(Error::InvalidBitRange { .. }
                | Error::TooManyKeys { .. }
                | Error::InvalidOffsets { .. }
                | Error::NotWholeRows { .. }
                | Error::KPastInput { .. })
        )
    };
    let short_error = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    if !invalid(device::segmented_sort_keys::<u32>(
        gpu, &keys, &mut out, 4, asc, ws,
    )) {
        return Err("rows of 4 over 6 keys: no argument error".into());
    }
    if !invalid(device::segmented_sort_keys::<u32>(
        gpu, &keys, &mut out, 0, asc, ws,
    )) {
        return Err("rows of 0: no argument error".into());
    }
    if !invalid(device::segmented_sort_keys::<u32>(
        gpu,
        &keys,
        &mut out,
        3,
        asc.bits(0..40),
        ws,
    )) {
        return Err("bits 0..40 of u32: no argument error".into());
    }
    let past = ok(gpu.upload(&[0u64, 4, 7]))?;
    let past = ok(SegmentOffsets::new(gpu, &past))?;
    if !invalid(device::segmented_sort_keys::<u32>(
        gpu, &keys, &mut out, &past, asc, ws,
    )) {
        return Err("offsets past the input: no invalid-offsets error".into());
    }
    if !short_error(device::segmented_sort_keys::<u32>(
        gpu, &keys, &mut short, 3, asc, ws,
    )) {
        return Err("short keys_out: no length error".into());
    }
    if !short_error(device::segmented_argsort::<u32>(
        gpu, &keys, &mut out, &mut short, 3, asc, ws,
    )) {
        return Err("short indices: no length error".into());
    }
    let mut idx = ok(gpu.upload(&[9u32; 6]))?;
    if !invalid(device::top_k::<u32>(
        gpu, &keys, 3, 4, true, &mut out, &mut idx, ws,
    )) {
        return Err("top_k with k past the row: no argument error".into());
    }
    if !short_error(device::top_k::<u32>(
        gpu, &keys, 3, 3, true, &mut short, &mut idx, ws,
    )) {
        return Err("top_k into short values: no length error".into());
    }
    check_eq("output untouched", ok(gpu.download(&out))?, vec![9u32; 6])?;
    check_eq("short output untouched", ok(gpu.download(&short))?, vec![9u32; 5])?;
    check_eq("indices untouched", ok(gpu.download(&idx))?, vec![9u32; 6])?;
    // k = 0 writes nothing; empty segments and no segments.
    ok(device::top_k::<u32>(
        gpu, &keys, 3, 0, true, &mut out, &mut idx, ws,
    ))?;
    check_eq("k = 0", ok(gpu.download(&out))?, vec![9u32; 6])?;
    let empties = ok(gpu.upload(&[0u64, 0, 2, 2, 6, 6]))?;
    let empties = ok(SegmentOffsets::new(gpu, &empties))?;
    ok(device::segmented_sort_keys::<u32>(
        gpu, &keys, &mut out, &empties, asc, ws,
    ))?;
    check_eq("empty segments", ok(gpu.download(&out))?, vec![1, 3, 0, 2, 5, 7])?;
    let none = ok(gpu.upload(&[0u64]))?;
    let none = ok(SegmentOffsets::new(gpu, &none))?;
    ok(device::segmented_sort_keys::<u32>(
        gpu,
        &keys,
        &mut out,
        &none,
        SortOptions::descending(),
        ws,
    ))?;
    check_eq("no segments", ok(gpu.download(&out))?, vec![1, 3, 0, 2, 5, 7])?;
    let empty = ok(gpu.alloc_zeroed::<u32>(0))?;
    let mut empty_out = ok(gpu.alloc_zeroed::<u32>(0))?;
    ok(device::segmented_sort_keys::<u32>(
        gpu,
        &empty,
        &mut empty_out,
        5,
        asc,
        ws,
    ))
}

/// 2^31 + 3 * 4096 `u8` keys in rows of 4096 (the row at 2^31 and the last ones sorted in shared
/// memory past 2^31), descending argsort: rows 0, the two around 2^31 and the last checked
/// against the reference.
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let row_len = 4096;
    let n = (1usize << 31) + 3 * row_len;
    let keys: Vec<u8> = (0..n)
        .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 13) as u8)
        .collect();
    let d_keys = ok(gpu.upload(&keys))?;
    let mut d_sorted = ok(gpu.alloc_zeroed::<u8>(n))?;
    let mut d_indices = ok(gpu.alloc_zeroed::<u32>(n))?;
    let ws = &mut DeviceWorkspace::new();
    let options = SortOptions::descending();
    ok(device::segmented_argsort::<u8>(
        gpu,
        &d_keys,
        &mut d_sorted,
        &mut d_indices,
        row_len,
        options,
        ws,
    ))?;
    let sorted = ok(gpu.download(&d_sorted))?;
    let indices = ok(gpu.download(&d_indices))?;
    let rows = n / row_len;
    for row in [0, (1 << 31) / row_len - 1, (1 << 31) / row_len, rows - 1] {
        let range = row * row_len..(row + 1) * row_len;
        let order = reference::argsort(&keys[range.clone()], options);
        check_eq(
            &format!("row {row} indices"),
            indices[range.clone()].to_vec(),
            order.clone(),
        )?;
        let expected: Vec<u8> = order.iter().map(|&i| keys[row * row_len + i as usize]).collect();
        check_eq(&format!("row {row} keys"), sorted[range].to_vec(), expected)?;
    }
    Ok(())
}

/// top_k (k = 1, largest) of 2^31 + 5 rows of 2 `u8` keys: more rows than one grid's blocks
/// (a block a row), so two launches; the rows around 2^31 - 1 (the second launch's first) and
/// the last checked against the reference, and every row's index below 2.
fn top_k_past_2_pow_31_rows(gpu: &Gpu) -> Result<(), Failed> {
    let row_len = 2;
    let rows = (1usize << 31) + 5;
    let keys: Vec<u8> = (0..rows * row_len)
        .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 13) as u8)
        .collect();
    let d_keys = ok(gpu.upload(&keys))?;
    let mut d_values = ok(gpu.alloc_zeroed::<u8>(rows))?;
    let mut d_indices = ok(gpu.alloc_zeroed::<u32>(rows))?;
    let ws = &mut DeviceWorkspace::new();
    ok(device::top_k::<u8>(
        gpu,
        &d_keys,
        row_len,
        1,
        true,
        &mut d_values,
        &mut d_indices,
        ws,
    ))?;
    let values = ok(gpu.download(&d_values))?;
    let indices = ok(gpu.download(&d_indices))?;
    if let Some(row) = indices.iter().position(|&i| i >= row_len as u32) {
        return Err(format!("row {row}: index {} past the row", indices[row]).into());
    }
    let boundary = i32::MAX as usize;
    for row in [0, boundary - 1, boundary, boundary + 1, rows - 1] {
        let range = row * row_len..(row + 1) * row_len;
        let (expected_values, expected_indices) = reference::top_k(&keys[range], row_len, 1, true);
        check_eq(&format!("row {row} value"), vec![values[row]], expected_values)?;
        check_eq(&format!("row {row} index"), vec![indices[row]], expected_indices)?;
    }
    Ok(())
}
