//! Warp and block collectives (reduce, reduce-all, inclusive / exclusive scan, broadcast) for
//! i32 and f32, Sum / Max / Min, over block sizes 1..1024 (not only warp multiples), 1 to 4 items
//! per thread, and lengths at tile boundaries, against CPU references.

use crate::support::{GpuTest, check_slices, grid_values, ok, rng, tile_edge_lengths};
use gpu_primitives::{Gpu, LaunchConfig, WARP_SIZE};
use gpu_primitives_runtime::DeviceCopy;
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("collectives::warp_i32_all_ops_modes_block_sizes", warp_i32),
    ("collectives::warp_f32_all_ops_modes_block_sizes", warp_f32),
    (
        "collectives::block_i32_sizes_x_items_x_tile_boundaries",
        block_i32,
    ),
    (
        "collectives::block_f32_sizes_x_items_x_tile_boundaries",
        block_f32,
    ),
    ("collectives::warp_u32_with_non_commutative_affine", warp_u32),
    ("collectives::block_u32_with_non_commutative_affine", block_u32),
    (
        "collectives::tile_load_head_and_tail_flags_sizes_x_items_x_alignment",
        tile_load_and_heads,
    ),
    (
        "collectives::segmented_tile_scan_and_flag_ranks_sizes_x_items_x_heads",
        segmented_tile,
    ),
];

const BLOCK_SIZES: [u32; 7] = [1, 7, 32, 65, 128, 256, 1024];
const MODES: [&str; 5] = [
    "reduce",
    "reduce_all",
    "inclusive_scan",
    "exclusive_scan",
    "broadcast",
];

/// An element type of the probes, with its CPU model of each operator.
pub trait Element: DeviceCopy + Copy + Default + PartialEq + std::fmt::Debug {
    const NAME: &'static str;
    /// The operators of the probes for this type (index = the kernel's `op`).
    const OPS: &'static [&'static str] = &["sum", "max", "min"];
    fn identity(op: u32) -> Self;
    fn combine(op: u32, a: Self, b: Self) -> Self;
    fn inputs(n: usize, salt: u64) -> Vec<Self>;
}

impl Element for i32 {
    const NAME: &'static str = "i32";
    fn identity(op: u32) -> Self {
        [0, i32::MIN, i32::MAX][op as usize]
    }
    fn combine(op: u32, a: Self, b: Self) -> Self {
        match op {
            0 => a.wrapping_add(b),
            1 => a.max(b),
            _ => a.min(b),
        }
    }
    fn inputs(n: usize, salt: u64) -> Vec<Self> {
        let mut r = rng(salt);
        (0..n).map(|_| r.random()).collect()
    }
}

impl Element for f32 {
    const NAME: &'static str = "f32";
    fn identity(op: u32) -> Self {
        [0.0, f32::NEG_INFINITY, f32::INFINITY][op as usize]
    }
    fn combine(op: u32, a: Self, b: Self) -> Self {
        match op {
            0 => a + b,
            1 => a.max(b),
            _ => a.min(b),
        }
    }
    /// Grid values: every partial sum is exact, so any grouping gives the CPU's answer.
    fn inputs(n: usize, salt: u64) -> Vec<Self> {
        grid_values(n, salt)
    }
}

/// u32 adds the non-commutative composition of affine maps (`Affine`, 16-bit halves).
impl Element for u32 {
    const NAME: &'static str = "u32";
    const OPS: &'static [&'static str] = &["sum", "max", "min", "affine"];
    fn identity(op: u32) -> Self {
        [0, 0, u32::MAX, 1 << 16][op as usize]
    }
    fn combine(op: u32, a: Self, b: Self) -> Self {
        match op {
            0 => a.wrapping_add(b),
            1 => a.max(b),
            2 => a.min(b),
            _ => gpu_primitives::device::Affine::combine_u32(a, b),
        }
    }
    /// Odd multipliers (bit 16 set), so that products of affine maps stay non-trivial.
    fn inputs(n: usize, salt: u64) -> Vec<Self> {
        let mut r = rng(salt);
        (0..n).map(|_| r.random::<u32>() | 1 << 16).collect()
    }
}

fn fold<T: Element>(op: u32, xs: &[T]) -> T {
    xs.iter().fold(T::identity(op), |a, &b| T::combine(op, a, b))
}

fn warp_probe<T: Element>(gpu: &Gpu) -> Result<(), Failed> {
    for block in BLOCK_SIZES {
        for op in 0..T::OPS.len() as u32 {
            for mode in 0..MODES.len() as u32 {
                if mode == 1 && (block % WARP_SIZE != 0 || T::OPS[op as usize] == "affine") {
                    continue; // the butterfly reduce-all: full warps, commutative operators
                }
                warp_case::<T>(
                    gpu,
                    WarpCase {
                        block,
                        grid: 3,
                        op,
                        mode,
                        src_lane: 5,
                        seed: block as u64,
                    },
                )?;
            }
        }
    }
    Ok(())
}

/// One launch of a warp probe kernel, checked against the CPU.
#[derive(Clone, Copy, Debug)]
pub struct WarpCase {
    pub block: u32,
    pub grid: u32,
    /// Index into `OPS`.
    pub op: u32,
    /// Index into `MODES` (1, reduce-all, needs whole warps).
    pub mode: u32,
    pub src_lane: u32,
    pub seed: u64,
}

pub fn warp_case<T: Element>(gpu: &Gpu, case: WarpCase) -> Result<(), Failed> {
    let WarpCase {
        block,
        grid,
        op,
        mode,
        src_lane,
        seed,
    } = case;
    let kernel = format!("probe_warp_{}", T::NAME);
    let n = (grid * block) as usize;
    let input = T::inputs(n, seed);
    let d_in = ok(gpu.upload(&input))?;
    let poison = vec![T::identity(op); n];
    let d_out = ok(gpu.upload(&poison))?;
    // SAFETY: probe_warp_<T> takes (input, output, op, mode, src_lane) with grid * block elements
    // each.
    unsafe {
        ok(gpu.launch(
            &kernel,
            LaunchConfig::new(grid, block),
            (d_in.as_device_ptr(), d_out.as_device_ptr(), op, mode, src_lane),
        ))?
    };
    let out = ok(gpu.download(&d_out))?;
    let mut expected = poison.clone();
    for b in 0..grid as usize {
        for w in (0..block as usize).step_by(WARP_SIZE as usize) {
            let start = b * block as usize + w;
            let lanes = (block as usize - w).min(WARP_SIZE as usize);
            let warp = &input[start..start + lanes];
            for l in 0..lanes {
                expected[start + l] = match mode {
                    0 if l == 0 => fold(op, warp),
                    0 => T::identity(op),
                    1 => fold(op, warp),
                    2 => fold(op, &warp[..=l]),
                    3 => fold(op, &warp[..l]),
                    _ => warp[src_lane as usize % lanes],
                };
            }
        }
    }
    check_slices(
        &format!(
            "{kernel} {} {} {case:?}",
            T::OPS[op as usize],
            MODES[mode as usize]
        ),
        &out,
        &expected,
        |_| false,
    )
}

fn warp_i32(gpu: &Gpu) -> Result<(), Failed> {
    warp_probe::<i32>(gpu)
}

fn warp_f32(gpu: &Gpu) -> Result<(), Failed> {
    warp_probe::<f32>(gpu)
}

fn block_probe<T: Element>(gpu: &Gpu) -> Result<(), Failed> {
    for items in 1..=4u32 {
        for block in BLOCK_SIZES {
            let tile = (block * items) as usize;
            for n in [0, 1, tile - 1, tile, tile + 1, 3 * tile + 5] {
                for op in 0..T::OPS.len() as u32 {
                    for mode in 0..MODES.len() as u32 {
                        let seed = (tile * 31 + n) as u64;
                        block_case::<T>(
                            gpu,
                            BlockCase {
                                items,
                                block,
                                n,
                                op,
                                mode,
                                src: 3,
                                seed,
                            },
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// One launch of a block probe kernel, checked against the CPU.
#[derive(Clone, Copy, Debug)]
pub struct BlockCase {
    /// Items per thread, 1 to 4.
    pub items: u32,
    pub block: u32,
    pub n: usize,
    /// Index into `OPS`.
    pub op: u32,
    /// Index into `MODES`.
    pub mode: u32,
    pub src: u32,
    pub seed: u64,
}

pub fn block_case<T: Element>(gpu: &Gpu, case: BlockCase) -> Result<(), Failed> {
    let BlockCase {
        items,
        block,
        n,
        op,
        mode,
        src,
        seed,
    } = case;
    let kernel = format!("probe_block_{}_items{items}", T::NAME);
    let tile = (block * items) as usize;
    let input = T::inputs(n, seed);
    let grid = n.div_ceil(tile).max(1);
    let d_in = ok(gpu.upload(&input))?;
    let poison = vec![T::identity(op); n];
    let d_out = ok(gpu.upload(&poison))?;
    let d_totals = ok(gpu.upload(&vec![T::default(); grid]))?;
    // SAFETY: probe_block_<T>_items<K> takes (input, output, totals, n, op, mode, src): n
    // elements in and out, one total per block.
    unsafe {
        ok(gpu.launch(
            &kernel,
            LaunchConfig::new(grid as u32, block),
            (
                d_in.as_device_ptr(),
                d_out.as_device_ptr(),
                d_totals.as_device_ptr(),
                n,
                op,
                mode,
                src,
            ),
        ))?
    };
    let (out, totals) = (ok(gpu.download(&d_out))?, ok(gpu.download(&d_totals))?);
    let mut expected = poison.clone();
    let mut expected_totals = vec![T::default(); grid];
    for (b, expected_total) in expected_totals.iter_mut().enumerate() {
        let lo = (b * tile).min(n);
        let hi = ((b + 1) * tile).min(n);
        let section = &input[lo..hi];
        let total = fold(op, section);
        if mode != 1 && mode != 4 {
            *expected_total = total;
        }
        let src_item = (src % block) as usize * items as usize;
        let broadcast = section.get(src_item).copied().unwrap_or(T::identity(op));
        for (k, e) in expected[lo..hi].iter_mut().enumerate() {
            *e = match mode {
                0 => T::identity(op),
                1 => total,
                2 => fold(op, &section[..=k]),
                3 => fold(op, &section[..k]),
                _ => broadcast,
            };
        }
    }
    let what = format!(
        "{kernel} {} {} {case:?}",
        T::OPS[op as usize],
        MODES[mode as usize]
    );
    check_slices(&what, &out, &expected, |_| false)?;
    check_slices(&format!("{what} totals"), &totals, &expected_totals, |_| false)
}

fn block_i32(gpu: &Gpu) -> Result<(), Failed> {
    block_probe::<i32>(gpu)
}

fn block_f32(gpu: &Gpu) -> Result<(), Failed> {
    block_probe::<f32>(gpu)
}

fn warp_u32(gpu: &Gpu) -> Result<(), Failed> {
    warp_probe::<u32>(gpu)
}

fn block_u32(gpu: &Gpu) -> Result<(), Failed> {
    block_probe::<u32>(gpu)
}

/// The warp-striped tile load and head flags (`probe_tile_f32_items<K>`): block sizes 32 to
/// 1024 (whole warps), 4 to 32 items per thread, lengths around the tile edges, inputs 16-byte
/// aligned or not (a view 1 to 3 elements in), runs with NaN and signed zeros. Every item must
/// come back as loaded, and its head flag be `i == 0 || x[i] != x[i - 1]`.
fn tile_load_and_heads(gpu: &Gpu) -> Result<(), Failed> {
    let specials = [f32::NAN, -0.0, 0.0, 1.0, 2.5, -3.0];
    let mut r = rng(31);
    // 32 items with head and tail flags take about 124 registers.
    for (items, block, n) in tile_shapes(&[4, 8, 16, 32], 32, &mut r) {
        let tile = (block * items) as usize;
        let skip = r.random_range(0..4usize);
        let mut x: Vec<f32> = Vec::with_capacity(n + skip);
        while x.len() < n + skip {
            let v = specials[r.random_range(0..specials.len())];
            let run = r.random_range(1..6).min(n + skip - x.len());
            x.extend(std::iter::repeat_n(v, run));
        }
        let d_x = ok(gpu.upload(&x))?;
        let d_values = ok(gpu.upload(&vec![7.0f32; n]))?;
        let d_heads = ok(gpu.upload(&vec![9u8; n]))?;
        let input = d_x.as_device_ptr().offset(skip);
        let grid = n.div_ceil(tile) as u32;
        let kernel = format!("probe_tile_f32_items{items}");
        // SAFETY: probe_tile_f32_items<K> takes (input, values, heads, n): n f32 from
        // `input` (inside d_x), n f32 and n bytes out; one block per tile, whole warps.
        unsafe {
            ok(gpu.launch(
                &kernel,
                LaunchConfig::new(grid, block),
                (input, d_values.as_device_ptr(), d_heads.as_device_ptr(), n),
            ))?
        };
        let view = &x[skip..];
        let what = format!("{kernel} block {block} n {n} skip {skip}");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        check_slices(
            &format!("{what}: values"),
            &bits(&ok(gpu.download(&d_values))?),
            &bits(view),
            |_| false,
        )?;
        // Bit 0: starts a run; bit 1: ends one (`!=`: every NaN is a run of its own).
        let expected: Vec<u8> = (0..n)
            .map(|i| {
                u8::from(i == 0 || view[i] != view[i - 1])
                    | u8::from(i + 1 == n || view[i] != view[i + 1]) << 1
            })
            .collect();
        check_slices(
            &format!("{what}: head and tail flags"),
            &ok(gpu.download(&d_heads))?,
            &expected,
            |_| false,
        )?;
    }
    Ok(())
}

/// The warp-striped segmented scan and flag ranks (`probe_segmented_tile_u32_items<K>`, rows of
/// 4): block sizes 32 to 1024 (whole warps), 4, 8 and 24 items per thread (1, 2 and 6 rows: one
/// and two packed rank words), lengths around the tile edges, heads from none to every item, `Sum`
/// and the non-commutative `Affine`, inclusive and exclusive. Against a CPU model of each tile:
/// the scan from the last head at or before the item (or the tile's start), whether the tile has
/// a head at or before it, its heads before it, and the tile's aggregate and count.
fn segmented_tile(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(41);
    // 24 items take about 96 registers.
    for (items, block, n) in tile_shapes(&[4, 8, 24], 24, &mut r) {
        let tile = (block * items) as usize;
        let density = [0.0, 0.002, 0.05, 0.5, 1.0][r.random_range(0..5)];
        let x = u32::inputs(n, r.random());
        let heads: Vec<u8> = (0..n).map(|_| u8::from(r.random_bool(density))).collect();
        let grid = n.div_ceil(tile);
        let d_x = ok(gpu.upload(&x))?;
        let d_heads = ok(gpu.upload(&heads))?;
        for (op, exclusive) in [(0u32, 0u32), (3, 0), (0, 1), (3, 1)] {
            let d_out = ok(gpu.upload(&vec![7u32; n]))?;
            let d_covered = ok(gpu.upload(&vec![9u8; n]))?;
            let d_ranks = ok(gpu.upload(&vec![7u32; n]))?;
            let d_totals = ok(gpu.upload(&vec![7u32; 3 * grid]))?;
            let kernel = format!("probe_segmented_tile_u32_items{items}");
            // SAFETY: the probe takes (input, heads, output, covered, ranks, totals, n,
            // op, exclusive): n values and flags in, n values, flags and ranks out, 3
            // u32 per block; one block per tile, whole warps.
            unsafe {
                ok(gpu.launch(
                    &kernel,
                    LaunchConfig::new(grid as u32, block),
                    (
                        d_x.as_device_ptr(),
                        d_heads.as_device_ptr(),
                        d_out.as_device_ptr(),
                        d_covered.as_device_ptr(),
                        d_ranks.as_device_ptr(),
                        d_totals.as_device_ptr(),
                        n,
                        op,
                        exclusive,
                    ),
                ))?
            };
            let mut out = vec![0u32; n];
            let mut covered = vec![0u8; n];
            let mut ranks = vec![0u32; n];
            let mut totals = vec![0u32; 3 * grid];
            for b in 0..grid {
                let (lo, hi) = (b * tile, ((b + 1) * tile).min(n));
                // The scan from the last head (or the tile's start) up to before i.
                let mut running = u32::identity(op);
                let mut count = 0;
                for i in lo..hi {
                    let head = heads[i] != 0;
                    let before = if head { u32::identity(op) } else { running };
                    running = u32::combine(op, before, x[i]);
                    out[i] = if exclusive == 0 { running } else { before };
                    ranks[i] = count;
                    count += u32::from(head);
                    covered[i] = u8::from(count > 0);
                }
                totals[3 * b] = running;
                totals[3 * b + 1] = u32::from(count > 0);
                totals[3 * b + 2] = count;
            }
            let what = format!(
                "{kernel} block {block} n {n} heads {density} {} {}",
                u32::OPS[op as usize],
                if exclusive == 0 { "inclusive" } else { "exclusive" }
            );
            let found = |d| ok(gpu.download(d));
            check_slices(&format!("{what}: scan"), &found(&d_out)?, &out, |_| false)?;
            check_slices(&format!("{what}: ranks"), &found(&d_ranks)?, &ranks, |_| false)?;
            check_slices(&format!("{what}: totals"), &found(&d_totals)?, &totals, |_| false)?;
            check_slices(
                &format!("{what}: covered"),
                &ok(gpu.download(&d_covered))?,
                &covered,
                |_| false,
            )?;
        }
    }
    Ok(())
}

/// The `(items, block, n)` shapes of the warp-striped tile probes: blocks of 32 to 1024 threads
/// (whole warps; 512 at most for `items == widest`, whose registers do not fit 1024 threads),
/// lengths around the tile edges and one at random.
fn tile_shapes(items: &[u32], widest: u32, r: &mut impl Rng) -> Vec<(u32, u32, usize)> {
    let mut shapes = Vec::new();
    for &k in items {
        let largest = if k == widest { 512 } else { 1024 };
        for block in [32u32, 64, 96, 256, largest] {
            let tile = (block * k) as usize;
            for n in tile_edge_lengths(tile, r) {
                shapes.push((k, block, n));
            }
        }
    }
    shapes
}
