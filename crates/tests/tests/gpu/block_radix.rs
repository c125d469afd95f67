//! The block radix rank and the block radix sort at block scope (`probe_block_radix_rank_items<K>`,
//! `probe_block_radix_sort_<key>_items<K>`: one tile per block of 256 threads, warp-striped), and
//! the warp radix sort at warp scope (`probe_warp_radix_sort_<key>_items<K>`: one tile per warp,
//! 4 warps a block), over items per thread, lengths around the tile edges, digit and key shapes
//! from one value to all distinct, bit ranges, keys alone (through both block sorts,
//! warp-striped and blocked) and pairs; against CPU models of each tile. The device sorts built
//! on them are tested in `sort` and `segmented_sort`.

use crate::sort::make_keys;
use crate::support::{GpuTest, check_slices, ok, rng, tile_edge_lengths};
use gpu_primitives::device::{SortKey, SortOptions};
use gpu_primitives::reference::sort as reference;
use gpu_primitives::{Gpu, LaunchConfig};
use gpu_primitives_abi::layout::RADIX_DIGITS;
use gpu_primitives_runtime::DeviceCopy;
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("block_radix::rank_items_x_tile_edges_x_digit_shapes", rank),
    ("block_radix::sort_keys_and_pairs_x_key_types_x_bit_ranges", sort),
    (
        "block_radix::warp_sort_keys_and_pairs_x_key_types_x_bit_ranges",
        warp_sort,
    ),
];

/// Warps a block of the warp sort probes (`PROBE_WARPS` of the kernels' probes).
const PROBE_WARPS: u32 = 4;

/// Which probe a tile test launches: its kernel, keys a tile (a block's or a warp's), threads
/// and tiles a block, and its `pairs` arguments (1 sorts pairs, the others keys alone).
struct Probe {
    kernel: String,
    tile: usize,
    block: u32,
    tiles_a_block: usize,
    modes: &'static [u32],
}

/// `n` digits below `RADIX_DIGITS`: 0 uniform, 1 a handful of values, 2 one value, 3 ascending,
/// 4 descending (the tile's order reversed), 5 the digit of the position within its warp.
fn digits(n: usize, shape: u32, r: &mut impl Rng) -> Vec<u32> {
    let d = RADIX_DIGITS as usize;
    let one = r.random_range(0..RADIX_DIGITS);
    (0..n)
        .map(|i| match shape {
            0 => r.random_range(0..RADIX_DIGITS),
            1 => [3, 17, 200, 255][r.random_range(0..4)],
            2 => one,
            3 => (i * d / n.max(1)) as u32,
            4 => (d - 1 - i * d / n.max(1)) as u32,
            _ => (i % 32) as u32,
        })
        .collect()
}

/// The rank against a counting sort of each tile: the digit's start in the tile plus the
/// tile's earlier items of that digit; per digit its count (handed out early and returned)
/// and its start.
fn rank(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(61);
    let d = RADIX_DIGITS as usize;
    for items in [1usize, 4, 16] {
        let tile = d * items;
        for n in tile_edge_lengths(tile, &mut r) {
            for shape in 0..6 {
                let input = digits(n, shape, &mut r);
                let grid = n.div_ceil(tile);
                let d_digits = ok(gpu.upload(&input))?;
                let d_ranks = ok(gpu.upload(&vec![7u32; n]))?;
                let d_per_digit = ok(gpu.upload(&vec![7u32; 3 * d * grid]))?;
                let kernel = format!("probe_block_radix_rank_items{items}");
                // SAFETY: the probe takes (digits, ranks, per_digit, n): n digits below
                // RADIX_DIGITS in, n ranks and 3 * RADIX_DIGITS u32 per block out; one block of
                // RADIX_DIGITS threads per tile.
                unsafe {
                    ok(gpu.launch(
                        &kernel,
                        LaunchConfig::new(grid as u32, RADIX_DIGITS),
                        (
                            d_digits.as_device_ptr(),
                            d_ranks.as_device_ptr(),
                            d_per_digit.as_device_ptr(),
                            n,
                        ),
                    ))?
                };
                let mut ranks = vec![0u32; n];
                let mut per_digit = vec![0u32; 3 * d * grid];
                for b in 0..grid {
                    let tile_digits = &input[b * tile..((b + 1) * tile).min(n)];
                    let mut counts = vec![0u32; d];
                    for &digit in tile_digits {
                        counts[digit as usize] += 1;
                    }
                    let mut next: Vec<u32> = counts
                        .iter()
                        .scan(0, |sum, &c| {
                            let start = *sum;
                            *sum += c;
                            Some(start)
                        })
                        .collect();
                    let rows = &mut per_digit[3 * d * b..3 * d * (b + 1)];
                    rows[..d].copy_from_slice(&counts);
                    rows[d..2 * d].copy_from_slice(&counts);
                    rows[2 * d..].copy_from_slice(&next);
                    for (p, &digit) in tile_digits.iter().enumerate() {
                        ranks[b * tile + p] = next[digit as usize];
                        next[digit as usize] += 1;
                    }
                }
                let what = format!("{kernel} n {n} digit shape {shape}");
                check_slices(
                    &format!("{what}: ranks"),
                    &ok(gpu.download(&d_ranks))?,
                    &ranks,
                    |_| false,
                )?;
                check_slices(
                    &format!("{what}: per digit (count handed out, count, start)"),
                    &ok(gpu.download(&d_per_digit))?,
                    &per_digit,
                    |_| false,
                )?;
            }
        }
    }
    Ok(())
}

/// The block sort: u32 keys with 1, 4 and 16 items per thread, u8 and u64 keys with 4; keys
/// alone through the warp-striped (0) and the blocked (2) sort, pairs (1).
fn sort(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(67);
    let probe = |name: &str, items: usize| Probe {
        kernel: format!("probe_block_radix_sort_{name}_items{items}"),
        tile: RADIX_DIGITS as usize * items,
        block: RADIX_DIGITS,
        tiles_a_block: 1,
        modes: &[0, 1, 2],
    };
    for items in [1usize, 4, 16] {
        sort_tiles::<u32>(gpu, &probe("u32", items), &mut r)?;
    }
    sort_tiles::<u8>(gpu, &probe("u8", 4), &mut r)?;
    sort_tiles::<u64>(gpu, &probe("u64", 4), &mut r)
}

/// The warp sort (`warp_radix_sort_blocked`): u32 keys with 1, 8 and 16 items per lane, u8 keys
/// with 16 and u64 keys with 8; keys alone (0) and pairs (1).
fn warp_sort(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(71);
    let probe = |name: &str, items: usize| Probe {
        kernel: format!("probe_warp_radix_sort_{name}_items{items}"),
        tile: 32 * items,
        block: 32 * PROBE_WARPS,
        tiles_a_block: PROBE_WARPS as usize,
        modes: &[0, 1],
    };
    for items in [1usize, 8, 16] {
        sort_tiles::<u32>(gpu, &probe("u32", items), &mut r)?;
    }
    sort_tiles::<u8>(gpu, &probe("u8", 16), &mut r)?;
    sort_tiles::<u64>(gpu, &probe("u64", 8), &mut r)
}

/// Each tile sorted on its own, against the stable CPU sort of the tile by the bit range: keys
/// alone (the values left as they were) and pairs whose values are the keys' input indices
/// (stability), over key shapes from uniform to all equal and bit ranges from empty to all.
fn sort_tiles<K: SortKey + DeviceCopy + Default + PartialEq>(
    gpu: &Gpu,
    probe: &Probe,
    r: &mut impl Rng,
) -> Result<(), Failed> {
    let (tile, kernel) = (probe.tile, &probe.kernel);
    let width = K::BITS;
    let random_begin = r.random_range(0..width);
    let ranges = [
        (0, width),
        (0, 0),
        (width / 2, width / 2),
        (1, width - 1),
        (width - 8, width),
        (random_begin, r.random_range(random_begin..=width)),
    ];
    for n in tile_edge_lengths(tile, r) {
        for shape in 0..5 {
            let keys = make_keys::<K>(n, shape, r.random());
            let tiles = n.div_ceil(tile);
            let grid = tiles.div_ceil(probe.tiles_a_block);
            let offsets: Vec<u64> = (0..=tiles).map(|b| (b * tile).min(n) as u64).collect();
            let d_keys = ok(gpu.upload(&keys))?;
            for (begin_bit, end_bit) in ranges {
                let order = reference::segmented_argsort(
                    &keys,
                    &offsets,
                    SortOptions::ascending().bits(begin_bit..end_bit),
                );
                let index: Vec<u32> = (0..n).map(|i| (i / tile * tile) as u32 + order[i]).collect();
                let sorted: Vec<K> = index.iter().map(|&i| keys[i as usize]).collect();
                for &pairs in probe.modes {
                    let d_out = ok(gpu.alloc_zeroed::<K>(n))?;
                    let d_values = ok(gpu.upload(&vec![7u32; n]))?;
                    // SAFETY: the probes take (keys, keys_out, values_out, n, begin_bit,
                    // end_bit, pairs): n keys in, n keys and n u32 out; begin_bit <= end_bit <=
                    // the key's width; a block probe one block of RADIX_DIGITS threads per tile,
                    // a warp probe blocks of PROBE_WARPS warps, a warp per tile. `pairs` 0 and
                    // 2 sort keys alone (warp-striped and blocked sorts), 1 pairs.
                    unsafe {
                        ok(gpu.launch(
                            kernel,
                            LaunchConfig::new(grid as u32, probe.block),
                            (
                                d_keys.as_device_ptr(),
                                d_out.as_device_ptr(),
                                d_values.as_device_ptr(),
                                n,
                                begin_bit,
                                end_bit,
                                pairs,
                            ),
                        ))?
                    };
                    let what =
                        format!("{kernel} n {n} key shape {shape} bits {begin_bit}..{end_bit} pairs {pairs}");
                    check_slices(
                        &format!("{what}: keys"),
                        &ok(gpu.download(&d_out))?,
                        &sorted,
                        |_| false,
                    )?;
                    let values = if pairs == 1 { index.clone() } else { vec![7u32; n] };
                    check_slices(
                        &format!("{what}: values"),
                        &ok(gpu.download(&d_values))?,
                        &values,
                        |_| false,
                    )?;
                }
            }
        }
    }
    Ok(())
}
