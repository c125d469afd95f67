//! Radix sort (sort_keys, sort_pairs, argsort, in place) against the CPU reference
//! (`reference::sort`, a stable comparison sort): property tests over every key type (random
//! lengths around tile edges, uniform / duplicate-heavy / sorted / reversed keys, both
//! directions, bit ranges, misaligned views), stability through pairs carrying the input
//! index, special float values, both onesweep tile sizes at their tiles' edges, bad input, and a
//! length past 2^31.

use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::device::{
    self, DeviceView, DeviceViewMut, DeviceWorkspace, SortKey, SortOptions, SortedIn,
};
use gpu_primitives::reference::sort as reference;
use gpu_primitives::{DeviceBuffer, Error, Gpu};
use gpu_primitives_abi::tuning::SortPolicy;
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("sort::every_key_type_random", every_key_type),
    ("sort::special_float_values", special_floats),
    ("sort::both_onesweep_tile_sizes", both_tile_sizes),
    ("sort::bad_input_and_empty", bad_input),
    ("sort::past_2_pow_31_keys", past_2_pow_31),
];

pub(crate) fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Keys of `K` from random bits, shaped by `shape`: 0 uniform, 1 a pool of 5 values
/// (duplicate-heavy), 2 sorted, 3 reversed, 4 all equal.
pub(crate) fn make_keys<K: SortKey>(n: usize, shape: u32, seed: u64) -> Vec<K> {
    let mut r = rng(seed);
    let mut raw = vec![K::Raw::default(); n];
    r.fill(bytemuck::cast_slice_mut::<K::Raw, u8>(&mut raw));
    let mut keys = K::from_raw(&raw).to_vec();
    match shape {
        1 if n > 0 => {
            let pool: Vec<K> = keys.iter().take(5).copied().collect();
            for k in keys.iter_mut() {
                *k = pool[r.random_range(0..pool.len())];
            }
        }
        2 => keys = reference::sort_keys(&keys, SortOptions::ascending()),
        3 => keys = reference::sort_keys(&keys, SortOptions::descending()),
        4 if n > 0 => {
            let first = keys[0];
            keys.fill(first);
        }
        _ => {}
    }
    keys
}

/// Bits of stored keys (so NaNs compare equal to themselves).
pub(crate) fn key_bits<K: SortKey>(keys: &[K]) -> Vec<u64> {
    K::as_raw(keys)
        .iter()
        .map(|v| {
            bytemuck::bytes_of(v)
                .iter()
                .rev()
                .fold(0u64, |a, &b| a << 8 | b as u64)
        })
        .collect()
}

pub(crate) fn download_keys<K: SortKey>(
    gpu: &Gpu,
    d: &DeviceBuffer<K::Raw>,
) -> Result<Vec<K>, TestCaseError> {
    Ok(K::from_raw(&gpu.download(d).map_err(fail)?).to_vec())
}

pub(crate) fn view<K: SortKey>(d: &DeviceBuffer<K::Raw>, range: std::ops::Range<usize>) -> DeviceView<'_, K> {
    // SAFETY: a live buffer of keys as stored; the range is within it.
    unsafe { DeviceView::from_raw_parts(d.as_device_ptr().as_raw(), d.len()) }.slice(range)
}

pub(crate) fn view_mut<K: SortKey>(d: &mut DeviceBuffer<K::Raw>) -> DeviceViewMut<'_, K> {
    // SAFETY: a live buffer of keys as stored, borrowed mutably.
    unsafe { DeviceViewMut::from_raw_parts(d.as_device_ptr().as_raw(), d.len()) }
}

/// Every sort of `keys[skip..]` under `options` against the reference: keys, pairs with `u32`
/// values (each key's input index: stability) and `u64` values, argsort, both in-place forms;
/// the input unchanged.
fn check_all<K: SortKey>(
    gpu: &Gpu,
    keys: &[K],
    skip: usize,
    options: SortOptions,
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError> {
    let input = &keys[skip..];
    let n = input.len();
    let what = format!("{} n={n} skip={skip} {options:?}", K::NAME);
    let expected_order = reference::argsort(input, options);
    let expected_keys = key_bits(&reference::sort_keys(input, options));
    let d_keys = gpu.upload(K::as_raw(keys)).map_err(fail)?;
    let keys_in = || view::<K>(&d_keys, skip..keys.len());
    let index: Vec<u32> = (0..n as u32).collect();
    let wide: Vec<u64> = index.iter().map(|&i| (i as u64) << 33 | 0x5a5a).collect();
    let d_index = gpu.upload(&index).map_err(fail)?;
    let d_wide = gpu.upload(&wide).map_err(fail)?;
    let mut d_out = gpu.alloc_zeroed::<K::Raw>(n).map_err(fail)?;
    let mut d_values = gpu.alloc_zeroed::<u32>(n).map_err(fail)?;
    let mut d_wide_out = gpu.alloc_zeroed::<u64>(n).map_err(fail)?;

    device::sort_keys(gpu, keys_in(), view_mut::<K>(&mut d_out), options, ws).map_err(fail)?;
    let check_keys = |name: &str, d: &DeviceBuffer<K::Raw>| -> Result<(), TestCaseError> {
        let found = key_bits(&download_keys::<K>(gpu, d)?);
        if let Some(i) = (0..n).find(|&i| found[i] != expected_keys[i]) {
            return Err(TestCaseError::fail(format!(
                "{name} {what}: index {i}: found bits {:#x}, expected {:#x}",
                found[i], expected_keys[i]
            )));
        }
        Ok(())
    };
    check_keys("sort_keys", &d_out)?;

    device::sort_pairs(
        gpu,
        keys_in(),
        &d_index,
        view_mut::<K>(&mut d_out),
        &mut d_values,
        options,
        ws,
    )
    .map_err(fail)?;
    check_keys("sort_pairs", &d_out)?;
    let values = gpu.download(&d_values).map_err(fail)?;
    prop_assert!(
        values == expected_order,
        "sort_pairs {}: values (the input index) out of order",
        what
    );

    device::sort_pairs(
        gpu,
        keys_in(),
        &d_wide,
        view_mut::<K>(&mut d_out),
        &mut d_wide_out,
        options,
        ws,
    )
    .map_err(fail)?;
    let wide_out = gpu.download(&d_wide_out).map_err(fail)?;
    prop_assert!(
        wide_out
            .iter()
            .zip(&expected_order)
            .all(|(&v, &i)| v == wide[i as usize]),
        "sort_pairs {}: 8-byte values",
        what
    );

    d_values = gpu.alloc_zeroed::<u32>(n).map_err(fail)?;
    device::argsort(
        gpu,
        keys_in(),
        view_mut::<K>(&mut d_out),
        &mut d_values,
        options,
        ws,
    )
    .map_err(fail)?;
    check_keys("argsort", &d_out)?;
    prop_assert!(
        gpu.download(&d_values).map_err(fail)? == expected_order,
        "argsort {}: indices",
        what
    );

    let mut d_place = gpu.upload(K::as_raw(input)).map_err(fail)?;
    device::sort_keys_in_place(gpu, view_mut::<K>(&mut d_place), options, ws).map_err(fail)?;
    check_keys("sort_keys_in_place", &d_place)?;
    let mut d_place = gpu.upload(K::as_raw(input)).map_err(fail)?;
    let mut d_place_values = gpu.upload(&index).map_err(fail)?;
    device::sort_pairs_in_place(gpu, view_mut::<K>(&mut d_place), &mut d_place_values, options, ws)
        .map_err(fail)?;
    check_keys("sort_pairs_in_place", &d_place)?;
    prop_assert!(
        gpu.download(&d_place_values).map_err(fail)? == expected_order,
        "sort_pairs_in_place {}: values",
        what
    );
    // Double buffers: the result on the side the call names (the input's for one tile or an
    // even number of 8-bit passes over the compared bits), keys and values on the same side.
    let passes = options
        .compared_bits::<K>()
        .map_err(fail)?
        .len()
        .div_ceil(8)
        .max(1);
    let expected_side = if n > gpu_primitives_abi::layout::SORT_BLOCK as usize * K::ITEMS && passes % 2 == 1 {
        SortedIn::Alternate
    } else {
        SortedIn::Current
    };
    let mut d_current = gpu.upload(K::as_raw(input)).map_err(fail)?;
    let mut d_alternate = gpu.alloc_zeroed::<K::Raw>(n).map_err(fail)?;
    let side = device::sort_keys_double_buffer(
        gpu,
        view_mut::<K>(&mut d_current),
        view_mut::<K>(&mut d_alternate),
        options,
        ws,
    )
    .map_err(fail)?;
    prop_assert!(
        side == expected_side,
        "sort_keys_double_buffer {}: {:?} after {} passes",
        what,
        side,
        passes
    );
    let sorted = |side| {
        if side == SortedIn::Current {
            &d_current
        } else {
            &d_alternate
        }
    };
    check_keys("sort_keys_double_buffer", sorted(side))?;
    let mut d_current = gpu.upload(K::as_raw(input)).map_err(fail)?;
    let mut d_alternate = gpu.alloc_zeroed::<K::Raw>(n).map_err(fail)?;
    let mut d_values = gpu.upload(&index).map_err(fail)?;
    let mut d_values_alternate = gpu.alloc_zeroed::<u32>(n).map_err(fail)?;
    let side = device::sort_pairs_double_buffer(
        gpu,
        (view_mut::<K>(&mut d_current), view_mut::<K>(&mut d_alternate)),
        (&mut d_values, &mut d_values_alternate),
        options,
        ws,
    )
    .map_err(fail)?;
    prop_assert!(
        side == expected_side,
        "sort_pairs_double_buffer {}: {:?}",
        what,
        side
    );
    let (keys_side, values_side) = match side {
        SortedIn::Current => (&d_current, &d_values),
        SortedIn::Alternate => (&d_alternate, &d_values_alternate),
    };
    check_keys("sort_pairs_double_buffer", keys_side)?;
    prop_assert!(
        gpu.download(values_side).map_err(fail)? == expected_order,
        "sort_pairs_double_buffer {}: values",
        what
    );
    prop_assert!(
        key_bits(&download_keys::<K>(gpu, &d_keys)?) == key_bits(keys),
        "{}: the input changed",
        what
    );
    Ok(())
}

/// Every key type's tile lengths in keys (`sort_key_table!`): the one-block sort's (its block
/// items), then the onesweep passes' larger tiles and small ones (keys alone, with 4-byte
/// values, with 8-byte values), each its pass's threads times its items.
const TILE_LENGTHS: &[[usize; 7]] = {
    use gpu_primitives_abi::table::{onesweep_small_items, sort_payload_name};
    const fn tile(key_bytes: usize, value_bytes: usize, items: usize) -> usize {
        gpu_primitives_abi::planning::sort::onesweep_threads(SortPolicy::SM80, key_bytes, value_bytes, false)
            as usize
            * items
    }
    /// The small tiles of `value_bytes` values, or the one-block sort's tile where there are none.
    const fn small_tile(
        key_bytes: usize,
        value_bytes: usize,
        small: &[(&str, usize)],
        block: usize,
    ) -> usize {
        match onesweep_small_items(small, sort_payload_name(value_bytes)) {
            Some(items) => {
                gpu_primitives_abi::planning::sort::onesweep_threads(
                    SortPolicy::SM80,
                    key_bytes,
                    value_bytes,
                    true,
                ) as usize
                    * items
            }
            None => block,
        }
    }
    macro_rules! lengths {
        ([] $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
           $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
            &[$([
                gpu_primitives_abi::layout::SORT_BLOCK as usize * $items,
                tile(size_of::<$bits>(), 0, $keys_items),
                tile(size_of::<$bits>(), 4, $v4_items),
                tile(size_of::<$bits>(), 8, $v8_items),
                small_tile(size_of::<$bits>(), 0, gpu_primitives_abi::small_tiles_list!($small), gpu_primitives_abi::layout::SORT_BLOCK as usize * $items),
                small_tile(size_of::<$bits>(), 4, gpu_primitives_abi::small_tiles_list!($small), gpu_primitives_abi::layout::SORT_BLOCK as usize * $items),
                small_tile(size_of::<$bits>(), 8, gpu_primitives_abi::small_tiles_list!($small), gpu_primitives_abi::layout::SORT_BLOCK as usize * $items),
            ]),*]
        };
    }
    gpu_primitives_abi::sort_key_table!(lengths)
};

/// Lengths around the tile edges of every key type's tiles ([`TILE_LENGTHS`], one tile and
/// two: a tile's length, one less, one more, two tiles and one), a few more, and random
/// lengths, small and large.
fn length() -> impl Strategy<Value = usize> {
    let mut edges: Vec<usize> = TILE_LENGTHS
        .iter()
        .flatten()
        .flat_map(|&tile| [tile - 1, tile, tile + 1, 2 * tile + 1])
        .chain([0, 1, 2, 31, 255, 256, 65_537, 1_048_573])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    prop_oneof![
        5 => prop::sample::select(edges),
        4 => 0usize..200_000,
        1 => 200_000usize..3_000_000,
    ]
}

/// A random sort order: the direction, and for `range` 1 a random bit range, for 2 a single
/// digit's (the low byte), else all bits.
pub(crate) fn random_options<K: SortKey>(descending: bool, range: u32, seed: u64) -> SortOptions {
    let options = SortOptions::descending_if(descending);
    let mut r = rng(seed ^ 9);
    match range {
        1 => {
            let begin = r.random_range(0..K::BITS);
            options.bits(begin..r.random_range(begin..=K::BITS))
        }
        2 => options.bits(0..K::BITS.min(8)),
        _ => options,
    }
}

fn random_sorts<K: SortKey>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    crate::properties::runner()
        .run(
            &(length(), 0usize..4, 0u32..5, any::<bool>(), 0u32..4, any::<u64>()),
            |(n, skip, shape, descending, range, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let keys = make_keys::<K>(n + skip, shape, seed);
                let options = random_options::<K>(descending, range, seed);
                check_all(gpu, &keys, skip, options, ws)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_key_type(gpu: &Gpu) -> Result<(), Failed> {
    random_sorts::<u32>(gpu)?;
    random_sorts::<f32>(gpu)?;
    random_sorts::<i32>(gpu)?;
    random_sorts::<u64>(gpu)?;
    random_sorts::<i64>(gpu)?;
    random_sorts::<f64>(gpu)?;
    random_sorts::<u8>(gpu)?;
    random_sorts::<u16>(gpu)?;
    random_sorts::<f16>(gpu)?;
    random_sorts::<bf16>(gpu)
}

/// NaNs of both signs and several payloads, infinities, both zeros, denormals: the documented
/// order, bit for bit, every float type, both directions.
fn special_floats(gpu: &Gpu) -> Result<(), Failed> {
    let specials32: Vec<f32> = [
        0x7fc0_0000u32,
        0x7f80_0001,
        0xffc0_0000,
        0xff80_0001,
        0x7f80_0000,
        0xff80_0000,
        0x8000_0000,
        0,
        1,
        0x8000_0001,
        0x3f80_0000,
        0xbf80_0000,
    ]
    .into_iter()
    .map(f32::from_bits)
    .collect();
    let ws = &mut DeviceWorkspace::new();
    let mut r = rng(11);
    for n in [1usize, 100, 4097, 300_001] {
        let x: Vec<f32> = (0..n)
            .map(|_| specials32[r.random_range(0..specials32.len())])
            .collect();
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
        for options in [SortOptions::ascending(), SortOptions::descending()] {
            let err = |e: TestCaseError| Failed::from(e.to_string());
            check_all(gpu, &x, 0, options, ws).map_err(err)?;
            check_all(gpu, &x64, 0, options, ws).map_err(err)?;
            check_all(gpu, &xh, 0, options, ws).map_err(err)?;
            check_all(gpu, &xb, 0, options, ws).map_err(err)?;
        }
    }
    // The documented order, spelled out.
    let sorted = ok(device::sort_keys_slice(
        gpu,
        &specials32,
        SortOptions::ascending(),
    ))?;
    let bits: Vec<u32> = sorted.iter().map(|x| x.to_bits()).collect();
    check_eq(
        "ascending f32 specials",
        bits,
        vec![
            0xff80_0000,
            0xbf80_0000,
            0x8000_0001,
            0x8000_0000,
            0,
            1,
            0x3f80_0000,
            0x7f80_0000,
            0x7f80_0001,
            0x7fc0_0000,
            0xffc0_0000,
            0xff80_0001,
        ],
    )
}

/// The onesweep passes of both tile sizes (`sort_key_table!`'s small tiles, taken by
/// `planning::sort::onesweep_small_tiles` for this GPU's multiprocessors) and both look-backs (tiles
/// read at once or one by one, `planning::sort::onesweep_look_back_tiles`), keys alone, with 4-byte and
/// with 8-byte values, for every key width whose tiles differ from its small ones, at lengths
/// one past a whole number of tiles of each: every key and value checked.
fn both_tile_sizes(gpu: &Gpu) -> Result<(), Failed> {
    use gpu_primitives_abi::planning::sort::{
        onesweep_blocks_per_sm, onesweep_look_back_tiles, onesweep_small_tiles, onesweep_threads,
    };
    use gpu_primitives_abi::table::{onesweep_small_items, sort_payload_name};
    let sms = gpu.info().multiprocessors;
    let ws = &mut DeviceWorkspace::new();
    fn sorts<K: SortKey>(gpu: &Gpu, sms: u32, ws: &mut DeviceWorkspace) -> Result<(), Failed> {
        let policy = SortPolicy::for_arch(gpu.info().arch);
        let small_items =
            |value_bytes| onesweep_small_items(K::ONESWEEP_SMALL, sort_payload_name(value_bytes));
        let key_bytes = size_of::<K::Raw>();
        // Keys alone, with 4-byte values, with 8-byte values: items a thread, value bytes.
        let payloads = [
            (K::ONESWEEP_KEYS_ITEMS, 0),
            (K::ONESWEEP_V4_ITEMS, 4),
            (K::ONESWEEP_V8_ITEMS, 8),
        ];
        let mut taken = [[false; 2]; 3];
        let mut walks = [[false; 2]; 3];
        for (i, tiles) in [3, sms as usize, 4 * sms as usize + 1].into_iter().enumerate() {
            for (j, (items, bytes)) in payloads.into_iter().enumerate() {
                let n = tiles * onesweep_threads(policy, key_bytes, bytes, false) as usize * items + 1;
                for (payload, (payload_items, value_bytes)) in payloads.into_iter().enumerate() {
                    let small = small_items(value_bytes);
                    let small_tiles = small.is_some_and(|small| {
                        onesweep_small_tiles(policy, n, sms, (key_bytes, value_bytes), payload_items, small)
                    });
                    taken[payload][small_tiles as usize] = true;
                    let threads = onesweep_threads(policy, key_bytes, value_bytes, small_tiles);
                    let tile = threads as usize * small.filter(|_| small_tiles).unwrap_or(payload_items);
                    let blocks = onesweep_blocks_per_sm(policy, key_bytes, value_bytes, small_tiles);
                    let at_once = onesweep_look_back_tiles(policy, n.div_ceil(tile), sms, blocks) > 1;
                    walks[payload][at_once as usize] = true;
                }
                let keys = make_keys::<K>(n, 0, n as u64);
                let options = if (i + j) % 2 == 0 {
                    SortOptions::ascending()
                } else {
                    SortOptions::descending()
                };
                check_all(gpu, &keys, 0, options, ws).map_err(|e| Failed::from(e.to_string()))?;
            }
        }
        // Payloads without small tiles have one size only.
        let expected = payloads.map(|(_, bytes)| [true, small_items(bytes).is_some()]);
        check_eq(
            &format!(
                "{} tile sizes taken (keys, 4-byte, 8-byte values) x (large, small), {:?} vs {:?} items",
                K::NAME,
                payloads.map(|(items, _)| items),
                K::ONESWEEP_SMALL
            ),
            taken,
            expected,
        )?;
        check_eq(
            &format!(
                "{} look-backs taken (keys, 4-byte, 8-byte values) x (one by one, tiles at once)",
                K::NAME
            ),
            walks,
            [[true; 2]; 3],
        )
    }
    sorts::<u32>(gpu, sms, ws)?;
    sorts::<i32>(gpu, sms, ws)?;
    sorts::<f32>(gpu, sms, ws)?;
    sorts::<u64>(gpu, sms, ws)?;
    sorts::<i64>(gpu, sms, ws)?;
    sorts::<f64>(gpu, sms, ws)
}

/// Short outputs and bad bit ranges: an error before any launch, outputs untouched. n = 0 and
/// an empty bit range.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let keys = ok(gpu.upload(&[3u32, 1, 2, 0]))?;
    let mut short = ok(gpu.upload(&[9u32; 3]))?;
    let mut out = ok(gpu.upload(&[9u32; 4]))?;
    let mut values_out = ok(gpu.upload(&[9u32; 4]))?;
    let is_length_error = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    let is_invalid = |r: gpu_primitives::Result<()>| {
        matches!(r, Err(Error::InvalidBitRange { .. } | Error::TooManyKeys { .. }))
    };
    let asc = SortOptions::ascending();
    if !is_length_error(device::sort_keys::<u32>(gpu, &keys, &mut short, asc, ws)) {
        return Err("sort_keys into a short output: no length error".into());
    }
    if !is_length_error(device::sort_pairs::<u32, u32>(
        gpu, &keys, &keys, &mut out, &mut short, asc, ws,
    )) {
        return Err("sort_pairs into short values: no length error".into());
    }
    if !is_length_error(device::argsort::<u32>(gpu, &keys, &mut out, &mut short, asc, ws)) {
        return Err("argsort into short indices: no length error".into());
    }
    let short_values = ok(gpu.upload(&[5u32; 3]))?;
    if !is_length_error(device::sort_pairs::<u32, u32>(
        gpu,
        &keys,
        &short_values,
        &mut out,
        &mut values_out,
        asc,
        ws,
    )) {
        return Err("sort_pairs of short values: no length error".into());
    }
    #[allow(clippy::reversed_empty_ranges)] // The reversed range is the bad input under test.
    let bad_ranges = [asc.bits(0..33), asc.bits(9..8)];
    for bad in bad_ranges {
        if !is_invalid(device::sort_keys::<u32>(gpu, &keys, &mut out, bad, ws)) {
            return Err(format!("sort_keys with {bad:?}: no bit-range error").into());
        }
    }
    check_eq("output untouched", ok(gpu.download(&out))?, vec![9u32; 4])?;
    check_eq("short output untouched", ok(gpu.download(&short))?, vec![9u32; 3])?;
    check_eq("values untouched", ok(gpu.download(&values_out))?, vec![9u32; 4])?;
    // An empty bit range keeps the input's order (a copy), argsort the identity.
    ok(device::sort_keys::<u32>(gpu, &keys, &mut out, asc.bits(4..4), ws))?;
    check_eq("no bits: a copy", ok(gpu.download(&out))?, vec![3, 1, 2, 0])?;
    ok(device::argsort::<u32>(
        gpu,
        &keys,
        &mut out,
        &mut values_out,
        asc.bits(32..32),
        ws,
    ))?;
    check_eq(
        "no bits: argsort",
        ok(gpu.download(&values_out))?,
        vec![0, 1, 2, 3],
    )?;
    // Only the low bit: stable by it.
    ok(device::sort_keys::<u32>(gpu, &keys, &mut out, asc.bits(0..1), ws))?;
    check_eq("the low bit", ok(gpu.download(&out))?, vec![2, 0, 3, 1])?;
    let empty: Vec<u32> = vec![];
    check_eq("n = 0", ok(device::sort_keys_slice(gpu, &empty, asc))?, vec![])?;
    check_eq(
        "n = 0 argsort",
        ok(device::argsort_slice(gpu, &empty, asc))?,
        vec![],
    )?;
    check_eq(
        "pairs slice",
        ok(device::sort_pairs_slice(
            gpu,
            &[2i32, -1, 2, 0],
            &[0.5f64, 1.5, 2.5, 3.5],
            asc,
        ))?,
        (vec![-1, 0, 2, 2], vec![1.5, 3.5, 0.5, 2.5]),
    )
}

/// 2^31 + 6 u32 keys, each key twice, in reversed order: argsort puts key k at 2k and 2k + 1,
/// with the two inputs' indices in input order (stable past 2^31).
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 31) + 6;
    let keys: Vec<u32> = (0..n).map(|i| ((n - 1 - i) / 2) as u32).collect();
    let d_keys = ok(gpu.upload(&keys))?;
    drop(keys);
    let mut d_sorted = ok(gpu.alloc_zeroed::<u32>(n))?;
    let mut d_indices = ok(gpu.alloc_zeroed::<u32>(n))?;
    let ws = &mut DeviceWorkspace::new();
    ok(device::argsort::<u32>(
        gpu,
        &d_keys,
        &mut d_sorted,
        &mut d_indices,
        SortOptions::ascending(),
        ws,
    ))?;
    let sorted = ok(gpu.download(&d_sorted))?;
    if let Some(j) = (0..n).find(|&j| sorted[j] != (j / 2) as u32) {
        return Err(format!("key {j}: {} instead of {}", sorted[j], j / 2).into());
    }
    drop(sorted);
    let indices = ok(gpu.download(&d_indices))?;
    let expected = |j: usize| (if j.is_multiple_of(2) { n - 2 - j } else { n - j }) as u32;
    if let Some(j) = (0..n).find(|&j| indices[j] != expected(j)) {
        return Err(format!("index {j}: {} instead of {}", indices[j], expected(j)).into());
    }
    Ok(())
}
