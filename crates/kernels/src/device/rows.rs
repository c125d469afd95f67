//! Row operations over a row-major `rows x cols` matrix: softmax, log-softmax, RMSNorm,
//! LayerNorm and the backward of each (the norms' with their parameters' gradients summed per
//! group or cluster where their sums fit in shared memory), cross-entropy with its gradient. Each row is one
//! reduction (a few `f32` statistics) followed by one elementwise output, fused in one kernel
//! ([`row_op`]) so that the row is read once and written once while it fits the registers of
//! the threads that hold it.
//!
//! - **Thread mapping** (the host picks it: `gpu_primitives_abi::planning::rows::row_plan`): a *group*
//!   of `G` threads (a power of two) per row. Groups of a warp or less share the block's warps
//!   (several rows per warp for short rows) and reduce with shuffles; a group of more than a warp
//!   is the whole block and reduces through shared memory ([`RowGroup`]).
//! - **Tiles:** each thread holds `W` 32-bit words of each row input (`W / 4` 16-byte chunks).
//!   A row of at most `G * W * 4` bytes is one tile: loaded once, reduced, written from the same
//!   registers. Longer rows (past what the group holds) are read twice: every tile for the
//!   statistics, then every tile again for the output, last tile first (it is still in
//!   registers, and the tiles read last are likeliest to be in L2), except the first
//!   `RowParams::shared_tiles`, which the block keeps in shared memory in between (as many as
//!   the device's shared memory holds: a row of up to 4 tiles of 1024 threads (65536 `f32`) is
//!   read once on an H100).
//! - **Clusters** (sm_90): a row of at least `ROW_CLUSTER_BLOCKS` tiles of whole blocks is
//!   shared among the blocks of a thread-block cluster, each reading its share of the tiles as
//!   above (`row_block_tiles`); the blocks' statistics are combined through distributed shared
//!   memory (`cluster_all`), so a cluster holds four times the row one block holds.
//! - **Loads:** chunk `c` of thread `r` is columns `(c * G + r) * V ..` (`V` elements per 16
//!   bytes), read with one 16-byte load when every row and pointer allows it (`cols` a
//!   multiple of `V`, 16-byte aligned pointers), otherwise one element per load. In the forward
//!   norms' kernels of rows of several tiles (sm_90) the weight and bias, which every row reads
//!   again, are loaded with an L2 `evict_last` policy and the cluster kernels' outputs stored
//!   `evict_first`, so that the streamed rows leave them in L2 ([`load_words_read_only_kept`],
//!   [`store_words_streaming`]).
//! - **Statistics** combine per thread first ([`RowOp::fold`]: a thread's items), then over
//!   the group ([`RowOp::combine`]), in an order fixed by the launch shape: results are the same
//!   from run to run, and every thread of a row uses the same statistics.
//! - **Numerics:** `f32` throughout; halves are widened exactly and rounded to nearest even on
//!   output. `exp` is `ex2.approx.ftz.f32` of `x * log2(e)` (relative error at most about
//!   `2^-22 + |x| * 2^-24`; softmax's `exp(x - max)` is `ex2` of one fma,
//!   `x log2(e) - max log2(e)`, which adds about `|max| * 2^-24`; a result below 2^-126, the
//!   smallest normal `f32`, is 0: softmax outputs below about 1.2e-38 are flushed to zero, where
//!   PyTorch keeps subnormals), `ln` is `lg2.approx.f32` times `ln 2`, `1 / sqrt` is
//!   `rsqrt.approx.f32` (relative error at most 2^-22.9), the `1 / n` of Chan's step (below)
//!   `rcp.approx.f32` (at most 2^-23): PTX ISA, "Floating Point
//!   Instructions". NaN propagates (the row maximum is NaN-propagating); a row of all `-inf`
//!   gives NaN, as PyTorch does.
//!
//! Softmax statistics are the online pair (running maximum, sum of `exp(x - maximum)`) of
//! Milakov and Gimelshein, "Online normalizer calculation for softmax" (2018). LayerNorm holding
//! its row sums it, then the squared deviations from its mean; reading it in tiles, it carries
//! (count, mean, sum of squared deviations), each thread's found in two passes over its
//! registers and combined by Chan, Golub and LeVeque, "Updating formulae and a pairwise
//! algorithm for computing sample variances" (1979).

use super::element::{
    MAX_WORDS, RowElement, load_words_read_only, load_words_read_only_kept, prefetch_l1, store_words,
    store_words_streaming,
};
use crate::cluster::{cluster_barrier, cluster_count, cluster_idx, cluster_rank};
use crate::op::max_nan_f32;
use crate::shared::{SharedArray, dynamic_shared};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, block_idx, grid_dim, lane_id, thread_idx};
use crate::unroll::{opaque_u32, unrolled_for};
use crate::warp::Shuffle;
use core::arch::asm;
use gpu_primitives_abi::layout::{
    MAX_WARPS, ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, ROW_STATS, row_column_sums_bytes, row_staged_word,
};
use gpu_primitives_abi::params::RowParams;
use gpu_primitives_abi::planning::rows::row_block_tiles;
use gpu_primitives_abi::tuning::ROW_CLUSTER_BLOCKS;

/// `e^x` through `ex2.approx.ftz.f32` (see the [module docs](self) for its error).
#[inline(always)]
pub fn exp_approx(x: f32) -> f32 {
    exp2_approx(x * core::f32::consts::LOG2_E)
}

/// `ln x` through `lg2.approx.f32`.
#[inline(always)]
pub fn ln_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("lg2.approx.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out * core::f32::consts::LN_2
}

/// `1 / x` through `rcp.approx.f32` (relative error at most 2^-23).
#[inline(always)]
pub fn rcp_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("rcp.approx.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out
}

/// `1 / sqrt(x)` through `rsqrt.approx.f32`.
#[inline(always)]
pub fn rsqrt_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("rsqrt.approx.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out
}

/// `a * b + c` rounded once (`fma.rn.f32`, one `FFMA`). Rust never fuses `a * b + c` itself
/// (no floating-point contraction), so a product added to a sum took an `FMUL` and an `FADD`.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("fma.rn.f32 {o}, {a}, {b}, {c};", o = out(reg32) out, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack))
    };
    out
}

/// A row operation's statistics: `N` `f32` values (at most [`ROW_STATS`]).
pub trait Stats: Copy {
    /// Number of values.
    const LEN: usize;
    /// Value `k`.
    fn get(&self, k: usize) -> f32;
    /// The values `f(0), f(1), ...`.
    fn from_fn(f: impl FnMut(usize) -> f32) -> Self;
}

impl<const N: usize> Stats for [f32; N] {
    const LEN: usize = {
        assert!(N as u32 <= ROW_STATS, "at most ROW_STATS statistics");
        N
    };
    #[inline(always)]
    fn get(&self, k: usize) -> f32 {
        self[k]
    }
    #[inline(always)]
    fn from_fn(f: impl FnMut(usize) -> f32) -> Self {
        core::array::from_fn(f)
    }
}

/// The threads that hold one row: `threads` of them (a power of two).
///
/// Groups of up to a warp are aligned segments of a warp; a larger group is the whole block.
pub struct RowGroup {
    threads: u32,
    slots: SharedArray<f32>,
    set: u32,
}

impl RowGroup {
    /// `threads` per row, exchanging through `slots` ([`ROW_SHARED_BYTES`] of `f32`, used only
    /// when a group is larger than a warp).
    ///
    /// [`ROW_SHARED_BYTES`]: gpu_primitives_abi::layout::ROW_SHARED_BYTES
    #[inline(always)]
    pub fn new(threads: u32, slots: SharedArray<f32>) -> Self {
        Self {
            threads,
            slots,
            set: 0,
        }
    }

    /// `combine` of every thread's `value` over the group, in an order fixed by the group size.
    ///
    /// - **Who calls:** every thread of the block, together (all of each warp's groups).
    /// - **Result valid in:** every thread of the group, the same bits in each.
    /// - `combine` must be associative, with `identity` its identity; it need not be
    ///   commutative.
    /// - **Cost:** `log2(min(group, 32))` shuffle steps; a group of more than a warp adds one
    ///   barrier and `log2(warps)` more steps (each warp combines the warps' values the same
    ///   way, so no second barrier is needed).
    ///
    /// # Safety
    /// Every thread of the block calls it with the same group size; groups of more than a warp
    /// span the whole block (the call contains a barrier). Consecutive calls may reuse the
    /// slots: two sets alternate, and each call's barrier orders the reads of the call before.
    #[inline(always)]
    pub unsafe fn all<S: Stats>(&mut self, value: S, identity: S, combine: impl Fn(S, S) -> S) -> S {
        let width = if self.threads < WARP_SIZE {
            self.threads
        } else {
            WARP_SIZE
        };
        // SAFETY: every lane of each warp calls this (the caller's contract).
        let value = unsafe { tree(value, width, width, &combine) };
        if self.threads <= WARP_SIZE {
            return value;
        }
        let base = self.set * ROW_STATS * MAX_WARPS;
        self.set ^= 1;
        let lane = lane_id();
        if lane == 0 {
            let warp = thread_idx() / WARP_SIZE;
            for k in 0..S::LEN {
                // SAFETY: within ROW_SHARED_BYTES (k < ROW_STATS, warp < MAX_WARPS).
                unsafe { self.slots.write(base + k as u32 * MAX_WARPS + warp, value.get(k)) };
            }
        }
        // SAFETY: the whole block calls this (the group is the block).
        unsafe { block_barrier() };
        let warps = self.threads / WARP_SIZE;
        let mine = if lane < warps {
            // SAFETY: written by warp `lane`'s lane 0 before the barrier.
            S::from_fn(|k| unsafe { self.slots.read(base + k as u32 * MAX_WARPS + lane) })
        } else {
            identity
        };
        // SAFETY: every lane of the warp calls this; lane 0 ends with every warp's values.
        unsafe { tree(mine, warps, WARP_SIZE, &combine) }
    }
}

/// `combine` over aligned segments of `width` lanes (a power of two), down a tree (lane 0 of
/// each segment ends with its total, combined in lane order), then broadcast from lane 0 of
/// each segment of `broadcast` lanes (`width` or more): every lane of it gets the same bits.
///
/// # Safety
/// Every lane of the warp calls it, with the same `width` and `broadcast`.
#[inline(always)]
unsafe fn tree<S: Stats>(value: S, width: u32, broadcast: u32, combine: &impl Fn(S, S) -> S) -> S {
    let mut value = value;
    let mut offset = 1;
    while offset < width {
        // SAFETY: every lane of the warp shuffles (the caller's contract).
        let other = S::from_fn(|k| unsafe { value.get(k).shuffle_down(offset, width, u32::MAX) });
        value = combine(value, other);
        offset *= 2;
    }
    // SAFETY: as above; lane 0 of each segment holds its total.
    S::from_fn(|k| unsafe { value.get(k).shuffle_idx(0, broadcast, u32::MAX) })
}

/// `combine` of each block's `value` (the same bits in every thread of the block) over the
/// [`ROW_CLUSTER_BLOCKS`] blocks of this block's thread-block cluster, in rank order: every
/// thread of the cluster gets the same bits. Thread 0 of each block leaves its value in its
/// block's `slots` (set `set` of two), a cluster barrier, then every thread reads each block's
/// through distributed shared memory: [`ROW_CLUSTER_BLOCKS`] x [`ROW_STATS`] loads a thread,
/// once a row.
///
/// # Safety
/// Every thread of every block of the cluster calls it, as many times, with `set` alternating
/// between calls (the barrier of the call between orders one call's reads before the next
/// writes of the same set); `slots` is `2 * ROW_STATS` `f32` at the same place in every block,
/// used by nothing else; a block does not exit before a last [`cluster_barrier`] after its last
/// call (others may still read its slots). Needs sm_90.
#[inline(always)]
unsafe fn cluster_all<S: Stats>(
    value: S,
    slots: SharedArray<f32>,
    set: u32,
    combine: impl Fn(S, S) -> S,
) -> S {
    let base = set * ROW_STATS;
    if thread_idx() == 0 {
        for k in 0..S::LEN {
            // SAFETY: within the slots (k < ROW_STATS); only this thread writes them, and no
            // block reads this set before the barrier below.
            unsafe { slots.write(base + k as u32, value.get(k)) };
        }
    }
    // SAFETY: the whole cluster calls this (the caller's contract).
    unsafe { cluster_barrier() };
    // SAFETY: written by thread 0 of block `rank` before the barrier just passed; that block
    // runs until the last cluster barrier (the caller's contract).
    let of_block = |rank: u32| S::from_fn(|k| unsafe { slots.read_of_block(rank, base + k as u32) });
    let mut total = of_block(0);
    for rank in 1..ROW_CLUSTER_BLOCKS {
        total = combine(total, of_block(rank));
    }
    total
}

/// Where a thread's items lie in a tile of its row: 16-byte chunk `c` of the thread starts at
/// column `first + base + c * step` of the row (`base` = rank x elements per chunk, `step` =
/// threads x elements per chunk). Columns are `u32` (rows of fewer than 2^31 elements).
#[derive(Clone, Copy)]
pub struct RowMapping {
    base: u32,
    step: u32,
    vector: bool,
}

impl RowMapping {
    /// First column of chunk `c` of the tile starting at column `first`.
    #[inline(always)]
    fn chunk(&self, first: u32, c: usize) -> u32 {
        first + self.base + c as u32 * self.step
    }
}

/// Elements of `T` per 16 bytes.
const fn per_chunk<T>() -> usize {
    16 / core::mem::size_of::<T>()
}

/// Item `j` of a 16-byte chunk, widened to `f32` (again at every call).
#[inline(always)]
fn chunk_item<T: RowElement>(chunk: &[u32], j: usize) -> f32 {
    T::widen_each_time(chunk, j)
}

/// One thread's part of one tile of a row: `W` words of the input (and of the gradient, where
/// `grad`).
pub struct RowTile<T, const W: usize> {
    x: [u32; W],
    dy: [u32; W],
    grad: bool,
    /// The norms' `cols` weights, or null (1).
    weight: *const T,
    first: u32,
    cols: u32,
    map: RowMapping,
    /// Made by a kernel of rows of one tile only (which has the registers for
    /// [`fold_valid`](Self::fold_valid)'s second loop).
    one_tile: bool,
    _element: core::marker::PhantomData<T>,
}

impl<T: RowElement, const W: usize> RowTile<T, W> {
    /// Fold `f(acc, x, dy)` over every item of this thread, those past the row's end holding the
    /// operation's [`RowOp::PAD`] (and `dy` 0; 0 throughout without a gradient).
    #[inline(always)]
    pub fn fold<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32, f32) -> A) -> A {
        let mut acc = init;
        unrolled_for(W / 4, |c| {
            unrolled_for(per_chunk::<T>(), |j| {
                let x = chunk_item::<T>(&self.x[4 * c..], j);
                // Halves widen through asm the compiler cannot drop: only where there is a dy.
                let dy = if self.grad {
                    chunk_item::<T>(&self.dy[4 * c..], j)
                } else {
                    0.0
                };
                acc = f(acc, x, dy);
            });
        });
        acc
    }

    /// As [`fold`](Self::fold), with each item's weight (1 where there is none, and past the
    /// row's end).
    #[inline(always)]
    pub fn fold_weighted<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32, f32, f32) -> A) -> A {
        let mut acc = init;
        unrolled_for(W / 4, |c| {
            let col = self.map.chunk(self.first, c);
            // SAFETY: a non-null weight holds `cols` elements nothing writes during the launch,
            // aligned as the row inputs when `map.vector` (the kernel's contract).
            let weight = unsafe { chunk_words(self.weight, col, self.cols, self.map.vector, 1.0, false) };
            unrolled_for(per_chunk::<T>(), |j| {
                let x = chunk_item::<T>(&self.x[4 * c..], j);
                let dy = chunk_item::<T>(&self.dy[4 * c..], j);
                acc = f(acc, x, dy, chunk_item::<T>(&weight, j));
            });
        });
        acc
    }

    /// As [`fold`](Self::fold), over this thread's items that lie in the row only: in kernels of
    /// one tile without a test per item where all of this thread's items lie in the row (its
    /// last chunk ends within it), a second copy of the loop (H100: LayerNorm `f32` 16384 x
    /// 16384 4 % faster, cross-entropy `f32` 262144 x 1024 7 %; in kernels of tiles the
    /// cross-entropy measured 3 to 9 % slower with it, `bf16` from 65536 columns).
    #[inline(always)]
    pub fn fold_valid<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32) -> A) -> A {
        let last = self.map.chunk(self.first, W / 4 - 1) + per_chunk::<T>() as u32;
        if self.one_tile && last <= self.cols {
            self.fold(init, |acc, x, _| f(acc, x))
        } else {
            self.fold_valid_each(init, f)
        }
    }

    /// As [`fold`](Self::fold), over this thread's items that lie in the row only (a test per
    /// item).
    #[inline(always)]
    fn fold_valid_each<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32) -> A) -> A {
        let mut acc = init;
        unrolled_for(W / 4, |c| {
            let col = self.map.chunk(self.first, c);
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < self.cols {
                    acc = f(acc, chunk_item::<T>(&self.x[4 * c..], j));
                }
            });
        });
        acc
    }

    /// `f(k, x, dy)` for each item `k` of this thread (its index among the thread's items: chunk
    /// by chunk), pads included (`x` the pad, `dy` 0).
    #[inline(always)]
    pub fn for_each_item(&self, mut f: impl FnMut(usize, f32, f32)) {
        unrolled_for(W / 4, |c| {
            unrolled_for(per_chunk::<T>(), |j| {
                let x = chunk_item::<T>(&self.x[4 * c..], j);
                let dy = chunk_item::<T>(&self.dy[4 * c..], j);
                f(c * per_chunk::<T>() + j, x, dy);
            });
        });
    }

    /// How many of this thread's items lie in the row.
    #[inline(always)]
    pub fn valid_items(&self) -> u32 {
        let mut count = 0;
        unrolled_for(W / 4, |c| {
            let room = self.cols.saturating_sub(self.map.chunk(self.first, c));
            count += room.min(per_chunk::<T>() as u32);
        });
        count
    }
}

/// Read this thread's part of the tile at column `first` of a row of `cols` elements at `row`
/// (nothing when `cols` is 0): a 16-byte load per chunk, or with `map.vector` false one load
/// per element; items past the row hold `pad`.
///
/// # Safety
/// `row[0..cols]` is readable and not written during the launch; with `map.vector`, `row` is
/// 16-byte aligned and `cols` a multiple of [`per_chunk`].
#[inline(always)]
unsafe fn load_tile<T: RowElement, const W: usize>(
    row: *const T,
    cols: u32,
    first: u32,
    map: RowMapping,
    pad: T,
) -> [u32; W] {
    let mut padding = [0u32; MAX_WORDS];
    unrolled_for(per_chunk::<T>(), |j| pad.pack(&mut padding, j));
    let mut words = [0u32; W];
    unrolled_for(W / 4, |c| {
        let col = map.chunk(first, c);
        if map.vector {
            let chunk = if col < cols {
                // SAFETY: the chunk's columns are < cols (a whole number of chunks), aligned.
                unsafe { load_words_read_only(row.add(col as usize) as *const u8) }
            } else {
                [padding[0], padding[1], padding[2], padding[3]]
            };
            words[4 * c..4 * c + 4].copy_from_slice(&chunk);
        } else {
            let mut chunk = padding;
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < cols {
                    // SAFETY: the column is < cols.
                    unsafe { *row.add(col as usize + j) }.pack(&mut chunk, j);
                }
            });
            words[4 * c..4 * c + 4].copy_from_slice(&chunk[..4]);
        }
    });
    words
}

/// What a row operation knows of the row besides its items: its length, the norms' `eps`, and
/// what [`RowOp::row_facts`] reads per row (NaN, or `u32::MAX` for `target`, where not read).
#[derive(Clone, Copy)]
pub struct RowFacts {
    /// Items in the row (of the matrix: the same for a group past the last row).
    pub cols: u32,
    /// The norms' epsilon.
    pub eps: f32,
    /// Cross-entropy's label smoothing.
    pub smoothing: f32,
    /// The norms' backward: LayerNorm's saved mean of the row.
    pub mean: f32,
    /// The norms' backward: the saved `1 / sqrt(var + eps)` of the row.
    pub rstd: f32,
    /// Cross-entropy: the row's target class (`u32::MAX` for none).
    pub target: u32,
    /// Cross-entropy: the row's item at its target class.
    pub target_logit: f32,
    /// Cross-entropy: what the row's gradient is scaled by (0 for an ignored row).
    pub scale: f32,
}

/// One row operation: its statistics and its output. See the [module docs](self).
pub trait RowOp {
    /// Reads the gradient `dy` beside the input (the backward).
    const GRAD: bool = false;
    /// Scales its output by `weight[col]` and adds `bias[col]` where they are given (the norms).
    const AFFINE: bool = false;
    /// What a thread's items past the row's end hold in [`RowTile::fold`]: a value that changes
    /// no statistic (their gradient is 0).
    const PAD: f32 = 0.0;
    /// Sums `parameter_grads` per column over the rows a group takes, into
    /// `RowParams::column_partials` where that is not null and a tile holds the row (the norms'
    /// backward: their weight's and bias's gradients).
    const PARAMETER_GRADS: bool = false;
    /// An item's `x^` and `dy`: its terms of the weight's and the bias's gradients are
    /// `dy * x^` and `dy`.
    #[inline(always)]
    fn parameter_grads(_x: f32, _dy: f32, _row: &RowFacts) -> [f32; 2] {
        [0.0; 2]
    }
    /// May be launched with a null output (nothing written but what [`write_row`](Self::write_row)
    /// writes: cross-entropy's loss alone).
    const OUTPUT_OPTIONAL: bool = false;
    /// What one thread, then the group, accumulates.
    type Partial: Stats;
    /// The row's statistics as the output needs them.
    type Row: Copy;
    /// The partial of no items.
    fn identity() -> Self::Partial;
    /// This thread's partial over its items of one tile.
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, row: &RowFacts) -> Self::Partial;
    /// Two partials as one (associative).
    fn combine(a: Self::Partial, b: Self::Partial) -> Self::Partial;
    /// The row's statistics from the partial of all its `cols` items.
    fn finish(total: Self::Partial, row: &RowFacts) -> Self::Row;
    /// The row's statistics when the group holds the whole row in one tile (every thread of
    /// the block calls it, as [`RowGroup::all`]): by default [`fold`](Self::fold), then
    /// [`combine`](Self::combine) over the group and [`finish`](Self::finish); an operation may
    /// use the registers better (LayerNorm: the mean first, then the deviations from it).
    ///
    /// # Safety
    /// As [`RowGroup::all`].
    #[inline(always)]
    unsafe fn in_registers<T: RowElement, const W: usize>(
        tile: &RowTile<T, W>,
        group: &mut RowGroup,
        row: &RowFacts,
    ) -> Self::Row {
        // SAFETY: forwarded.
        let total = unsafe { group.all(Self::fold(tile, row), Self::identity(), Self::combine) };
        Self::finish(total, row)
    }
    /// The output at an item `x` (with gradient `dy`; the norms: scaled by `weight` and shifted
    /// by `bias`, 1 and 0 where not given).
    fn output(x: f32, dy: f32, weight: f32, bias: f32, col: u32, row: &Self::Row) -> f32;
    /// What the operation reads of row `row` besides its items, into `facts` (by default
    /// nothing): the norms' backward its saved statistics, cross-entropy its target.
    ///
    /// # Safety
    /// `row < p.rows`, `p` as [`row_op`] requires.
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(_p: &RowParams<T>, _row: usize, facts: RowFacts) -> RowFacts {
        facts
    }
    /// What one thread of the row's group writes for row `row` once its statistics are known
    /// (by default nothing): the norms' saved mean and rstd, cross-entropy's loss.
    ///
    /// # Safety
    /// As [`row_facts`](Self::row_facts).
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(_p: &RowParams<T>, _row: usize, _stats: &Self::Row) {}
}

/// The partial of the operations whose statistic is one sum.
const SUM_IDENTITY: [f32; 1] = [0.0];

/// Two one-sum partials as one.
#[inline(always)]
fn add([a]: [f32; 1], [b]: [f32; 1]) -> [f32; 1] {
    [a + b]
}

/// `exp(x - max)` as `2^(x log2(e) - max log2(e))`: one fused multiply-add and one `ex2.approx`
/// (the shift's rounding adds about `|max| * 2^-24` to the relative error). `x = -inf` gives 0
/// for a finite `max`; `max = -inf` gives NaN (a row of all `-inf`).
#[inline(always)]
fn exp_shifted(x: f32, max: f32) -> f32 {
    let shift = max * core::f32::consts::LOG2_E;
    exp2_approx(fma(x, core::f32::consts::LOG2_E, -shift))
}

/// `2^x` through `ex2.approx.ftz.f32` (`-inf` gives 0; a result below 2^-126, the smallest
/// normal `f32`, gives 0). One `MUFU.EX2`, where `ex2.approx.f32` without `.ftz` adds a compare
/// and two conditional multiplies to keep subnormal results (ptxas sm_90).
#[inline(always)]
fn exp2_approx(x: f32) -> f32 {
    let out: f32;
    // SAFETY: a register instruction; no memory is touched.
    unsafe {
        asm!("ex2.approx.ftz.f32 {o}, {i};", o = out(reg32) out, i = in(reg32) x, options(pure, nomem, nostack))
    };
    out
}

/// `exp(m - max)` for a partial maximum `m` of the row maximum `max`: 1 when they are equal
/// (both `-inf` included).
#[inline(always)]
fn rescale(m: f32, max: f32) -> f32 {
    if m == max { 1.0 } else { exp_approx(m - max) }
}

/// The (maximum, sum of `exp(x - maximum)`) pair of softmax and log-softmax over a thread's
/// items: a thread whose items are all `-inf` sums `exp(-inf - 0)` = 0.
#[inline(always)]
fn softmax_fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>) -> [f32; 2] {
    let max = tile.fold(f32::NEG_INFINITY, |m, x, _| max_nan_f32(m, x));
    let shift = if max == f32::NEG_INFINITY { 0.0 } else { max };
    [max, tile.fold(0.0, |s, x, _| s + exp_shifted(x, shift))]
}

#[inline(always)]
fn softmax_combine([ma, sa]: [f32; 2], [mb, sb]: [f32; 2]) -> [f32; 2] {
    let max = max_nan_f32(ma, mb);
    [max, sa * rescale(ma, max) + sb * rescale(mb, max)]
}

/// `y = exp(x - max) / sum(exp(x - max))`.
pub struct Softmax;
impl RowOp for Softmax {
    const PAD: f32 = f32::NEG_INFINITY;
    type Partial = [f32; 2];
    /// (maximum, 1 / sum)
    type Row = [f32; 2];
    fn identity() -> [f32; 2] {
        [f32::NEG_INFINITY, 0.0]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 2] {
        softmax_fold(tile)
    }
    fn combine(a: [f32; 2], b: [f32; 2]) -> [f32; 2] {
        softmax_combine(a, b)
    }
    fn finish([max, sum]: [f32; 2], _: &RowFacts) -> [f32; 2] {
        [max, 1.0 / sum]
    }
    fn output(x: f32, _: f32, _: f32, _: f32, _: u32, &[max, inverse]: &[f32; 2]) -> f32 {
        exp_shifted(x, max) * inverse
    }
}

/// `y = x - max - ln(sum(exp(x - max)))`.
pub struct LogSoftmax;
impl RowOp for LogSoftmax {
    const PAD: f32 = f32::NEG_INFINITY;
    type Partial = [f32; 2];
    /// (maximum, ln sum)
    type Row = [f32; 2];
    fn identity() -> [f32; 2] {
        [f32::NEG_INFINITY, 0.0]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 2] {
        softmax_fold(tile)
    }
    fn combine(a: [f32; 2], b: [f32; 2]) -> [f32; 2] {
        softmax_combine(a, b)
    }
    fn finish([max, sum]: [f32; 2], _: &RowFacts) -> [f32; 2] {
        [max, ln_approx(sum)]
    }
    fn output(x: f32, _: f32, _: f32, _: f32, _: u32, &[max, ln_sum]: &[f32; 2]) -> f32 {
        (x - max) - ln_sum
    }
}

/// Backward of softmax: from its output `y` and `dy`, `dx = y * (dy - sum(dy * y))`.
pub struct SoftmaxBackward;
impl RowOp for SoftmaxBackward {
    const GRAD: bool = true;
    type Partial = [f32; 1];
    type Row = f32;
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 1] {
        [tile.fold(0.0, |s, y, dy| fma(dy, y, s))]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([dot]: [f32; 1], _: &RowFacts) -> f32 {
        dot
    }
    fn output(y: f32, dy: f32, _: f32, _: f32, _: u32, dot: &f32) -> f32 {
        y * (dy - dot)
    }
}

/// Backward of log-softmax: from its output `y` and `dy`, `dx = dy - exp(y) * sum(dy)`.
pub struct LogSoftmaxBackward;
impl RowOp for LogSoftmaxBackward {
    const GRAD: bool = true;
    type Partial = [f32; 1];
    type Row = f32;
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 1] {
        [tile.fold(0.0, |s, _, dy| s + dy)]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([sum]: [f32; 1], _: &RowFacts) -> f32 {
        sum
    }
    fn output(y: f32, dy: f32, _: f32, _: f32, _: u32, sum: &f32) -> f32 {
        fma(-exp_approx(y), *sum, dy)
    }
}

/// RMSNorm: `y = x / sqrt(mean(x^2) + eps) * weight` (Zhang and Sennrich, "Root Mean Square
/// Layer Normalization", 2019); saves `rstd = 1 / sqrt(mean(x^2) + eps)`.
pub struct RmsNorm;
impl RowOp for RmsNorm {
    const AFFINE: bool = true;
    type Partial = [f32; 1];
    /// rstd
    type Row = f32;
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 1] {
        [tile.fold(0.0, |s, x, _| fma(x, x, s))]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([squares]: [f32; 1], row: &RowFacts) -> f32 {
        rsqrt_approx(squares / row.cols as f32 + row.eps)
    }
    fn output(x: f32, _: f32, weight: f32, _: f32, _: u32, rstd: &f32) -> f32 {
        x * (rstd * weight)
    }
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(p: &RowParams<T>, row: usize, rstd: &f32) {
        // SAFETY: a non-null rstd holds one value per row (the caller's contract).
        unsafe { save(p.rstd, row, *rstd) };
    }
}

/// LayerNorm: `y = (x - mean) / sqrt(var + eps) * weight + bias`, the biased variance (Ba, Kiros
/// and Hinton, "Layer Normalization", 2016); saves `mean` and `rstd = 1 / sqrt(var + eps)`.
pub struct LayerNorm;
impl RowOp for LayerNorm {
    const AFFINE: bool = true;
    /// (count, mean, sum of squared deviations)
    type Partial = [f32; 3];
    /// (mean, rstd)
    type Row = [f32; 2];
    fn identity() -> [f32; 3] {
        [0.0; 3]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 3] {
        let count = tile.valid_items() as f32;
        let sum = tile.fold(0.0, |s, x, _| s + x);
        let mean = if count > 0.0 { sum / count } else { 0.0 };
        let deviations = tile.fold_valid(0.0, |d, x| fma(x - mean, x - mean, d));
        [count, mean, deviations]
    }
    fn combine(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
        let ([na, ma, da], [nb, mb, db]) = (a, b);
        if nb == 0.0 {
            return a;
        }
        if na == 0.0 {
            return b;
        }
        let n = na + nb;
        let delta = mb - ma;
        // nb / n and na nb / n through one reciprocal (counts are exact in f32 below 2^24).
        let share = nb * rcp_approx(n);
        [n, fma(delta, share, ma), fma(delta * delta, na * share, da + db)]
    }
    fn finish([_, mean, deviations]: [f32; 3], row: &RowFacts) -> [f32; 2] {
        [mean, rsqrt_approx(deviations / row.cols as f32 + row.eps)]
    }
    /// The row's sum first, then the sum of squared deviations from its mean: two plain sums,
    /// fewer instructions than (count, mean, deviations) combined at every step (H100, `bf16`
    /// 262144 x 1024 and 65536 x 4096: that way 10 and 14 % slower; `f32` within 1 %).
    #[inline(always)]
    unsafe fn in_registers<T: RowElement, const W: usize>(
        tile: &RowTile<T, W>,
        group: &mut RowGroup,
        row: &RowFacts,
    ) -> [f32; 2] {
        // SAFETY: forwarded (two calls in a row alternate the slots).
        let [sum] = unsafe { group.all([tile.fold(0.0, |s, x, _| s + x)], SUM_IDENTITY, add) };
        let mean = sum / row.cols as f32;
        let squares = tile.fold_valid(0.0, |d, x| fma(x - mean, x - mean, d));
        // SAFETY: as above.
        let [deviations] = unsafe { group.all([squares], SUM_IDENTITY, add) };
        [mean, rsqrt_approx(deviations / row.cols as f32 + row.eps)]
    }
    /// `(x - mean) * (rstd * weight) + bias`: `x - mean` is exact for close values, so a row of
    /// nearly equal items (a large `rstd`) keeps its precision.
    fn output(x: f32, _: f32, weight: f32, bias: f32, _: u32, &[mean, rstd]: &[f32; 2]) -> f32 {
        fma(x - mean, rstd * weight, bias)
    }
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(p: &RowParams<T>, row: usize, &[mean, rstd]: &[f32; 2]) {
        // SAFETY: non-null mean / rstd hold one value per row (the caller's contract).
        unsafe {
            save(p.mean, row, mean);
            save(p.rstd, row, rstd);
        }
    }
}

/// Backward of LayerNorm: from `x`, `dy`, the weight and the saved (mean, rstd), with
/// `g = dy * weight` and `x^ = (x - mean) * rstd`,
/// `dx = rstd * (g - mean(g) - x^ * mean(g * x^))`; with `SUMS`, also each group's sums of the
/// weight's and bias's gradients (`RowOp::PARAMETER_GRADS`; else `device::norm_grads` reads the
/// rows again for them). Two kernels, so that the one without keeps its registers.
pub struct LayerNormBackwardOp<const SUMS: bool>;
/// [`LayerNormBackwardOp`], `dx` alone.
pub type LayerNormBackward = LayerNormBackwardOp<false>;
/// [`LayerNormBackwardOp`] summing the parameters' gradients too.
pub type LayerNormBackwardSums = LayerNormBackwardOp<true>;
impl<const SUMS: bool> RowOp for LayerNormBackwardOp<SUMS> {
    const GRAD: bool = true;
    const AFFINE: bool = true;
    const PARAMETER_GRADS: bool = SUMS;
    #[inline(always)]
    fn parameter_grads(x: f32, dy: f32, row: &RowFacts) -> [f32; 2] {
        norm_parameter_grads(x, dy, row)
    }
    /// (sum of g, sum of g x^)
    type Partial = [f32; 2];
    /// (mean, rstd, mean of g, mean of g x^)
    type Row = [f32; 4];
    fn identity() -> [f32; 2] {
        [0.0; 2]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, row: &RowFacts) -> [f32; 2] {
        let (mean, rstd) = (row.mean, row.rstd);
        tile.fold_weighted([0.0; 2], |[g_sum, gx_sum], x, dy, weight| {
            let g = dy * weight;
            [g_sum + g, fma(g, (x - mean) * rstd, gx_sum)]
        })
    }
    fn combine([a, b]: [f32; 2], [c, d]: [f32; 2]) -> [f32; 2] {
        [a + c, b + d]
    }
    fn finish([g_sum, gx_sum]: [f32; 2], row: &RowFacts) -> [f32; 4] {
        let cols = row.cols as f32;
        [row.mean, row.rstd, g_sum / cols, gx_sum / cols]
    }
    fn output(
        x: f32,
        dy: f32,
        weight: f32,
        _: f32,
        _: u32,
        &[mean, rstd, g_mean, gx_mean]: &[f32; 4],
    ) -> f32 {
        let normalized = (x - mean) * rstd;
        rstd * fma(-normalized, gx_mean, fma(dy, weight, -g_mean))
    }
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
        // SAFETY: forwarded.
        unsafe { saved_facts(p, row, facts) }
    }
}

/// Backward of RMSNorm (as [`LayerNormBackwardOp`]): with `g = dy * weight` and `x^ = x * rstd`,
/// `dx = rstd * (g - x^ * mean(g * x^))`.
pub struct RmsNormBackwardOp<const SUMS: bool>;
/// [`RmsNormBackwardOp`], `dx` alone.
pub type RmsNormBackward = RmsNormBackwardOp<false>;
/// [`RmsNormBackwardOp`] summing the weight's gradient too.
pub type RmsNormBackwardSums = RmsNormBackwardOp<true>;
impl<const SUMS: bool> RowOp for RmsNormBackwardOp<SUMS> {
    const GRAD: bool = true;
    const AFFINE: bool = true;
    const PARAMETER_GRADS: bool = SUMS;
    #[inline(always)]
    fn parameter_grads(x: f32, dy: f32, row: &RowFacts) -> [f32; 2] {
        norm_parameter_grads(x, dy, row)
    }
    type Partial = [f32; 1];
    /// (rstd, mean of g x^)
    type Row = [f32; 2];
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, row: &RowFacts) -> [f32; 1] {
        let rstd = row.rstd;
        [tile.fold_weighted(0.0, |s, x, dy, weight| fma(dy * weight, x * rstd, s))]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([gx_sum]: [f32; 1], row: &RowFacts) -> [f32; 2] {
        [row.rstd, gx_sum / row.cols as f32]
    }
    fn output(x: f32, dy: f32, weight: f32, _: f32, _: u32, &[rstd, gx_mean]: &[f32; 2]) -> f32 {
        rstd * fma(-(x * rstd), gx_mean, dy * weight)
    }
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
        // SAFETY: forwarded.
        unsafe { saved_facts(p, row, facts) }
    }
}

/// The norms' `x^` and `dy` at an item (`x^ = (x - mean) * rstd`, the mean 0 for RMSNorm): its
/// terms of `dweight` and `dbias` are `dy * x^` and `dy`.
#[inline(always)]
fn norm_parameter_grads(x: f32, dy: f32, row: &RowFacts) -> [f32; 2] {
    [(x - row.mean) * row.rstd, dy]
}

/// `values[row] = value` where `values` is not null.
///
/// # Safety
/// A non-null `values` holds more than `row` values.
#[inline(always)]
unsafe fn save(values: *mut f32, row: usize, value: f32) {
    if !values.is_null() {
        // SAFETY: the caller's.
        unsafe { *values.add(row) = value };
    }
}

/// The norms' backward: `facts` with the (mean, rstd) the forward saved for `row` (mean 0 where
/// `p.mean` is null: RMSNorm).
///
/// # Safety
/// `row < p.rows`; `p.rstd` holds `rows` values, and a non-null `p.mean` too.
#[inline(always)]
unsafe fn saved_facts<T>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
    // SAFETY: the caller's.
    unsafe {
        RowFacts {
            mean: if p.mean.is_null() { 0.0 } else { *p.mean.add(row) },
            rstd: *p.rstd.add(row),
            ..facts
        }
    }
}

/// Cross-entropy's row: softmax's pair, the row's loss (before the mean's division), and how
/// its gradient is formed.
#[derive(Clone, Copy)]
pub struct CrossEntropyRow {
    max: f32,
    inverse: f32,
    loss: f32,
    /// The gradient's scale: 0 for an ignored row, NaN for a target out of range.
    scale: f32,
    target: u32,
    /// `1 - smoothing`, added at the target.
    keep: f32,
    /// `smoothing / classes`, added at every class.
    spread: f32,
}

/// Cross-entropy from logits (a row per sample, a column per class) and a target class per row,
/// with label smoothing `s` over `C` classes (PyTorch's `cross_entropy`):
/// `loss = ln(sum(exp(x))) - (1 - s) x[target] - s mean(x)`, and fused with it the gradient
/// with respect to the logits, `(softmax(x) - (1 - s) onehot(target) - s / C) * scale`. A row
/// whose target is the ignore index has loss 0 and gradient 0; a target outside `0..C` gives
/// NaN for both.
pub struct CrossEntropy;
impl RowOp for CrossEntropy {
    const PAD: f32 = f32::NEG_INFINITY;
    const OUTPUT_OPTIONAL: bool = true;
    /// (maximum, sum of `exp(x - maximum)`, sum of the row's items)
    type Partial = [f32; 3];
    type Row = CrossEntropyRow;
    fn identity() -> [f32; 3] {
        [f32::NEG_INFINITY, 0.0, 0.0]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 3] {
        let [max, sum] = softmax_fold(tile);
        [max, sum, tile.fold_valid(0.0, |s, x| s + x)]
    }
    fn combine([ma, sa, xa]: [f32; 3], [mb, sb, xb]: [f32; 3]) -> [f32; 3] {
        let [max, sum] = softmax_combine([ma, sa], [mb, sb]);
        [max, sum, xa + xb]
    }
    fn finish([max, sum, items]: [f32; 3], row: &RowFacts) -> CrossEntropyRow {
        let smoothing = row.smoothing;
        let classes = row.cols as f32;
        let log_sum = max + ln_approx(sum);
        let loss = log_sum - (1.0 - smoothing) * row.target_logit - smoothing * (items / classes);
        CrossEntropyRow {
            max,
            inverse: 1.0 / sum,
            loss: if row.scale == 0.0 { 0.0 } else { loss },
            scale: row.scale,
            target: row.target,
            keep: 1.0 - smoothing,
            spread: smoothing / classes,
        }
    }
    fn output(x: f32, _: f32, _: f32, _: f32, col: u32, row: &CrossEntropyRow) -> f32 {
        if row.scale == 0.0 {
            return 0.0;
        }
        let wanted = if col == row.target {
            row.keep + row.spread
        } else {
            row.spread
        };
        (exp_shifted(x, row.max) * row.inverse - wanted) * row.scale
    }
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
        // SAFETY: `targets` holds `rows` values; a target in 0..cols lies in the row; a non-null
        // `valid_targets` is one count (the caller's contract).
        unsafe {
            let target = *p.targets.add(row);
            if target == p.ignore_index {
                RowFacts {
                    target_logit: 0.0,
                    scale: 0.0,
                    ..facts
                }
            } else if target >= 0 && (target as u64) < facts.cols as u64 {
                let scale = if p.valid_targets.is_null() {
                    1.0
                } else {
                    1.0 / *p.valid_targets as f32
                };
                RowFacts {
                    target: target as u32,
                    target_logit: (*p.input.add(row * p.cols + target as usize)).to_acc(),
                    scale,
                    ..facts
                }
            } else {
                RowFacts {
                    target_logit: f32::NAN,
                    scale: f32::NAN,
                    ..facts
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(p: &RowParams<T>, row: usize, stats: &CrossEntropyRow) {
        // SAFETY: a non-null loss holds one value per row (the caller's contract).
        unsafe { save(p.loss, row, stats.loss) };
    }
}

/// Whether `ptr` is null or 16-byte aligned.
#[inline(always)]
fn aligned_or_null<T>(ptr: *const T) -> bool {
    (ptr as usize).is_multiple_of(16)
}

/// `values[col ..]` for the items of the chunk at column `col`, packed as `T` (`default` where
/// `values` is null or past `cols`): read an item with [`chunk_item`] where it is used, so that
/// halves take 4 registers a chunk, not 8 widened. `kept` (the forward norms' kernels of rows of
/// several tiles): 16-byte chunks are marked last to be evicted from L2
/// ([`load_words_read_only_kept`]), so that the streamed rows do not push the weight and bias
/// every row reads out of L2 (H100, `f32` RMSNorm 1024 x 262144: DRAM reads 1.109 -> 1.075 GB,
/// 1014 -> 835 µs under Nsight Compute).
///
/// # Safety
/// A non-null `values` holds `cols` readable elements; with `vector`, aligned as [`load_tile`].
#[inline(always)]
unsafe fn chunk_words<T: RowElement>(
    values: *const T,
    col: u32,
    cols: u32,
    vector: bool,
    default: f32,
    kept: bool,
) -> [u32; 4] {
    let mut words = [0u32; MAX_WORDS];
    unrolled_for(per_chunk::<T>(), |j| T::from_f32(default).pack(&mut words, j));
    if !values.is_null() {
        if vector {
            if col < cols {
                // SAFETY: a whole chunk below cols, aligned, not written during the launch (the
                // caller's contract).
                return unsafe {
                    let at = values.add(col as usize) as *const u8;
                    if kept {
                        load_words_read_only_kept(at)
                    } else {
                        load_words_read_only(at)
                    }
                };
            }
        } else {
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < cols {
                    // SAFETY: the column is < cols.
                    unsafe { *values.add(col as usize + j) }.pack(&mut words, j);
                }
            });
        }
    }
    [words[0], words[1], words[2], words[3]]
}

/// Write this thread's outputs of one tile (`cluster`: made by a cluster kernel). In the forward
/// norms' kernels of rows of several tiles the weight and bias are read `kept` ([`chunk_words`]),
/// and in their cluster kernels the outputs stored marked first to be evicted from L2
/// ([`store_words_streaming`]), which leaves L2 to the weight, the bias and the tiles read
/// again.
///
/// # Safety
/// `out[0..cols]` is writable; as [`load_tile`] for alignment; `weight` / `bias` as
/// [`chunk_words`].
#[inline(always)]
unsafe fn store_tile<T: RowElement, Op: RowOp, const W: usize>(
    p: &RowParams<T>,
    out: *mut T,
    tile: &RowTile<T, W>,
    row: &Op::Row,
    cluster: bool,
) {
    let vector = tile.map.vector;
    // The forward operations' weight and bias in tiled kernels (in the backward kernels the hint
    // measured 1-2 % slower for halves, H100 `bf16` 4096 x 65536, and no faster for `f32`).
    let kept = !tile.one_tile && !Op::GRAD;
    let streaming = cluster && Op::AFFINE && kept;
    unrolled_for(W / 4, |c| {
        let col = tile.map.chunk(tile.first, c);
        let (weight, bias) = if Op::AFFINE {
            // SAFETY: forwarded.
            unsafe {
                (
                    Some(chunk_words(p.weight, col, tile.cols, vector, 1.0, kept)),
                    Some(chunk_words(p.bias, col, tile.cols, vector, 0.0, kept)),
                )
            }
        } else {
            (None, None)
        };
        let item =
            |words: Option<[u32; 4]>, j: usize, none: f32| words.map_or(none, |w| chunk_item::<T>(&w, j));
        // The chunk's outputs in f32: at most a 16-byte chunk of 2-byte elements.
        let mut ys = [0.0f32; per_chunk::<u16>()];
        unrolled_for(per_chunk::<T>(), |j| {
            let x = chunk_item::<T>(&tile.x[4 * c..], j);
            let dy = if Op::GRAD {
                chunk_item::<T>(&tile.dy[4 * c..], j)
            } else {
                0.0
            };
            ys[j] = Op::output(
                x,
                dy,
                item(weight, j, 1.0),
                item(bias, j, 0.0),
                col + j as u32,
                row,
            );
        });
        let mut words = [0u32; MAX_WORDS];
        unrolled_for(4, |w| words[w] = T::narrow_word(&ys, w));
        if vector {
            if col < tile.cols {
                let chunk = [words[0], words[1], words[2], words[3]];
                // SAFETY: a whole chunk below cols, aligned.
                unsafe {
                    let at = out.add(col as usize) as *mut u8;
                    if streaming {
                        store_words_streaming(at, chunk)
                    } else {
                        store_words(at, chunk)
                    }
                };
            }
        } else {
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < tile.cols {
                    // SAFETY: the column is < cols.
                    unsafe { *out.add(col as usize + j) = T::unpack(&words, j) };
                }
            });
        }
    });
}

/// Items of a row in one tile of `W` words per thread of a group of `group` threads.
#[inline(always)]
fn row_tile_items<T: RowElement, const W: usize>(group: u32) -> u32 {
    group * (W as u32 / 4) * per_chunk::<T>() as u32
}

/// Tiles of `W` words per thread in which a group of `p.group` threads reads a row of `p` (1: the
/// row stays in registers).
#[inline(always)]
pub fn row_tiles<T: RowElement, const W: usize>(p: &RowParams<T>) -> u32 {
    (p.cols as u32).div_ceil(row_tile_items::<T, W>(p.group))
}

/// The row operation `Op` over every row of `p` (see [`RowParams`] and the [module docs](self)),
/// each thread holding `W` words (a multiple of 4) of each row input per tile. `ONE`: rows of
/// one tile kept in registers between the reduction and the output; `TILED`: rows of several
/// tiles ([`row_tiles`]; of one tile too, through the tile loop, without `ONE`). A kernel
/// compiled without one of the paths needs fewer registers (ptxas, sm_90: without the tile
/// loop, the halves' kernels summing the norms' parameter gradients spilled 28 -> 8 bytes;
/// without the one-tile path, their `f32` tiled kernels of 8 words 116 -> 0). `CLUSTER` (with
/// `TILED`, without `ONE`): each row
/// shared among the [`ROW_CLUSTER_BLOCKS`] blocks of a thread-block cluster (sm_90), block `r`
/// reading the tiles [`row_block_tiles`] gives it (as a block alone reads all of them, keeping
/// `shared_tiles` of its own in shared memory), the blocks' statistics combined through
/// distributed shared memory in rank order; cluster `c` takes rows `c`, `c + clusters`, ...
///
/// # Safety
/// - With `CLUSTER`: launched in clusters of [`ROW_CLUSTER_BLOCKS`] blocks (the grid a whole
///   number of them), `p.group` the block, rows of at least `ROW_CLUSTER_BLOCKS` tiles (the
///   blocks' statistics go through a static shared array of `ROW_CLUSTER_SLOTS_BYTES`); needs
///   sm_90. Its `column_partials` are a chunk a cluster, each block summing the columns of its
///   own tiles (at most `tiles.div_ceil(ROW_CLUSTER_BLOCKS)`, whose sums the launch's shared
///   memory holds).
/// - Launched as [`RowParams`] says: every thread of the block calls it; `p.group` divides the
///   block and is at most a warp or the whole block; `slots` is
///   [`ROW_SHARED_BYTES`] of this block's shared
///   memory, used by nothing else.
/// - `input` (and `grad` for backward operations) hold `rows * cols` readable elements that
///   nothing writes during the launch; `output` `rows * cols` writable ones, overlapping no
///   input; `weight` / `bias` are null or hold `cols` elements; `mean` / `rstd` are null or hold
///   `rows` values (the norms' backward reads them: `rstd` is never null there, and nothing
///   writes them during the launch); `cols` is below 2^31; a non-null `column_partials` (the
///   norms' backward) holds `2 * cols` `f32` for each group of the grid (`grid * block / group`
///   groups of a warp or less, else `grid`; with `CLUSTER`, each cluster), and the launch gives
///   [`row_column_sums_bytes`]`(items * tiles, block)` of dynamic shared memory past
///   `ROW_SHARED_BYTES` (`items` a thread's items of a tile, `tiles` the row's); a non-zero
///   `shared_tiles` (rows of more than one tile only) comes with
///   [`row_staged_tiles_bytes`](gpu_primitives_abi::layout::row_staged_tiles_bytes) past those.
#[inline(always)]
pub unsafe fn row_op<
    T: RowElement,
    Op: RowOp,
    const W: usize,
    const ONE: bool,
    const TILED: bool,
    const CLUSTER: bool,
>(
    p: &RowParams<T>,
    slots: SharedArray<f32>,
) {
    const { assert!(W.is_multiple_of(4) && W >= 4 && (ONE || TILED) && (!CLUSTER || (TILED && !ONE))) };
    let group = p.group;
    let (groups, index, rank) = if group <= WARP_SIZE {
        (block_dim() / group, thread_idx() / group, thread_idx() % group)
    } else {
        (1, 0, thread_idx())
    };
    let cols = p.cols as u32;
    let vector = cols.is_multiple_of(per_chunk::<T>() as u32)
        && aligned_or_null(p.input)
        && aligned_or_null(p.grad)
        && aligned_or_null(p.weight)
        && aligned_or_null(p.bias)
        && aligned_or_null(p.output);
    let chunk = per_chunk::<T>() as u32;
    let map = RowMapping {
        base: rank * chunk,
        step: group * chunk,
        vector,
    };
    let per_tile = row_tile_items::<T, W>(group);
    let all_tiles = if TILED { row_tiles::<T, W>(p) } else { 1 };
    if CLUSTER && all_tiles < ROW_CLUSTER_BLOCKS {
        // SAFETY: ends the launch with an error: a block of the cluster would have no tile (the
        // host never asks).
        unsafe { core::arch::nvptx::trap() };
    }
    // This block's tiles of each row: all of them, or its share of the cluster's.
    let (first_tile, tiles) = if CLUSTER {
        row_block_tiles(all_tiles, cluster_rank(), ROW_CLUSTER_BLOCKS)
    } else {
        (0, all_tiles)
    };
    let mut cluster_set = 0;
    let mut reducer = RowGroup::new(group, slots);
    // The norms' backward: this thread's share of the weight's and bias's gradients, item by
    // item of each of this block's tiles, over the rows its group takes (the same columns every
    // row). Kept in shared memory (in registers they spilled), each thread's own slots, so no
    // barrier is needed: sum `s` of item `k` of tile `t` at
    // `thread * (2 items tiles + 1) + 2 (items t + k) + s` (one base address and constant
    // offsets; the odd stride keeps a warp's accesses on distinct banks).
    let column_sums = Op::PARAMETER_GRADS && !p.column_partials.is_null();
    let items = W / 4 * per_chunk::<T>();
    // SAFETY: past the reductions' ROW_SHARED_BYTES (a multiple of 4), viewed as f32 only here.
    let sums = unsafe { dynamic_shared::<f32>(ROW_SHARED_BYTES) };
    let sum_base = thread_idx() * (2 * items as u32 * tiles + 1);
    let sum_slot = |t: u32, k: usize, s: usize| sum_base + 2 * items as u32 * t + (2 * k + s) as u32;
    // Unchecked: each bounds check is a compare and a branch to a trap (23 traps in the summing
    // kernel's PTX; with 8 items a thread instead of 4, H100 262144 x 1024 `f32`: 757 M -> 504 M
    // warp instructions).
    if column_sums {
        for t in 0..tiles {
            for k in 0..items {
                // SAFETY: the launch gives row_column_sums_bytes(items * tiles, block) past
                // ROW_SHARED_BYTES with column partials (the kernel's contract): slot < len;
                // this thread's own slots.
                unsafe {
                    sums.write_unchecked(sum_slot(t, k, 0), 0.0);
                    sums.write_unchecked(sum_slot(t, k, 1), 0.0);
                }
            }
        }
    }
    // Rows read in tiles: tile t < p.shared_tiles stays in shared memory between the reduction
    // and the output, past the reductions' slots and the column sums. The count is read from the
    // parameters at each use, so that no register holds it (the rows in registers have none to
    // spare). The group is the block; each thread reads back only its own vectors, after
    // writing them, so no barrier is needed (nor between rows: the same thread overwrites them
    // only after reading them back).
    let writes = !(Op::OUTPUT_OPTIONAL && p.output.is_null());
    let sums_bytes = if column_sums {
        // Within the launch's shared memory (the kernel's contract): below 2^32.
        row_column_sums_bytes(items as u64 * tiles as u64, block_dim()) as u32
    } else {
        0
    };
    // SAFETY: past ROW_SHARED_BYTES and the column sums (multiples of 16: whole warps of
    // threads), viewed as u32 only where tiles are kept (rows of more than one tile).
    let stage = unsafe { dynamic_shared::<u32>(ROW_SHARED_BYTES + sums_bytes) };
    let inputs = if Op::GRAD { 2 } else { 1 };
    let stage_at = |t: u32, input: u32, c: usize| {
        row_staged_word(t, input, c as u32, W as u32, inputs, p.group, thread_idx())
    };
    let (stride, mut first_row) = if CLUSTER {
        (cluster_count() as usize, cluster_idx() as usize)
    } else {
        (
            grid_dim() as usize * groups as usize,
            block_idx() as usize * groups as usize,
        )
    };
    while first_row < p.rows {
        // The columns of this thread's chunks, computed again for each row: hoisted out of the
        // loop (as LLVM does with loop-invariant values) they take a register per chunk and per
        // item of the unaligned path across the whole row (ptxas, sm_90: halves' tiled LayerNorm
        // 60 -> 4 bytes spilled, f32 LayerNorm of 8 words a thread 20 -> 0, of 16 words 132 -> 56).
        let map = RowMapping {
            base: opaque_u32(map.base),
            ..map
        };
        let row = first_row + index as usize;
        // A group past the last row takes part in the reductions with no items.
        let (offset, row_cols) = if row < p.rows {
            (row * p.cols, cols)
        } else {
            (0, 0)
        };
        let tile_of = |first: u32, x: [u32; W], dy: [u32; W]| RowTile::<T, W> {
            x,
            dy,
            grad: Op::GRAD,
            weight: p.weight,
            first,
            cols: row_cols,
            map,
            one_tile: !TILED,
            _element: core::marker::PhantomData,
        };
        let load = |first: u32| {
            // SAFETY: the row lies in the inputs (the caller's contract); row_cols is 0 past them.
            let (x, dy) = unsafe {
                (
                    load_tile::<T, W>(p.input.add(offset), row_cols, first, map, T::from_f32(Op::PAD)),
                    if Op::GRAD {
                        load_tile::<T, W>(p.grad.add(offset), row_cols, first, map, T::from_f32(0.0))
                    } else {
                        [0; W]
                    },
                )
            };
            tile_of(first, x, dy)
        };
        // This thread's part of tile t (< p.shared_tiles) into shared memory, and back.
        let keep = |t: u32, tile: &RowTile<T, W>| {
            unrolled_for(W / 4, |c| {
                let words = |w: &[u32; W]| [w[4 * c], w[4 * c + 1], w[4 * c + 2], w[4 * c + 3]];
                // SAFETY: this thread's own vectors of a kept tile (t < shared_tiles), inside the
                // launch's dynamic shared memory (row_staged_tiles_bytes past ROW_SHARED_BYTES:
                // the kernel's contract), at multiples of 4 words.
                unsafe {
                    stage.write_vector_unchecked(stage_at(t, 0, c), words(&tile.x));
                    if Op::GRAD {
                        stage.write_vector_unchecked(stage_at(t, 1, c), words(&tile.dy));
                    }
                }
            });
        };
        let restore = |t: u32| {
            let (mut x, mut dy) = ([0u32; W], [0u32; W]);
            unrolled_for(W / 4, |c| {
                // SAFETY: written by this thread's `keep` of tile t for this row, before; in
                // bounds as there.
                unsafe {
                    x[4 * c..4 * c + 4].copy_from_slice(&stage.read_vector_unchecked(stage_at(t, 0, c)));
                    if Op::GRAD {
                        dy[4 * c..4 * c + 4].copy_from_slice(&stage.read_vector_unchecked(stage_at(t, 1, c)));
                    }
                }
            });
            tile_of((first_tile + t) * per_tile, x, dy)
        };
        let facts = RowFacts {
            cols,
            eps: p.eps,
            smoothing: p.smoothing,
            mean: f32::NAN,
            rstd: f32::NAN,
            target: u32::MAX,
            target_logit: f32::NAN,
            scale: f32::NAN,
        };
        let facts = if row < p.rows {
            // SAFETY: a row of the matrix (the kernel's contract covers what Op reads of it).
            unsafe { Op::row_facts(p, row, facts) }
        } else {
            facts
        };
        let mut tile = load(first_tile * per_tile);
        let stats = if ONE && tiles == 1 {
            // SAFETY: every thread of the block reaches the group's reductions once per
            // iteration (the loop bounds and `tiles` are uniform over the block).
            unsafe { Op::in_registers(&tile, &mut reducer, &facts) }
        } else {
            let mut partial = Op::fold(&tile, &facts);
            for t in 1..tiles {
                if writes && t - 1 < p.shared_tiles {
                    keep(t - 1, &tile);
                }
                tile = load((first_tile + t) * per_tile);
                partial = Op::combine(partial, Op::fold(&tile, &facts));
            }
            // SAFETY: as above.
            let total = unsafe { reducer.all(partial, Op::identity(), Op::combine) };
            let total = if CLUSTER {
                cluster_set ^= 1;
                let cluster_slots =
                    crate::shared_array!(ROW_CLUSTER_SLOTS: [f32; ROW_CLUSTER_SLOTS_BYTES as usize / 4]);
                // SAFETY: every thread of the cluster's blocks reaches this once per row (they
                // take the same rows), the sets alternate, and the blocks wait at a last cluster
                // barrier after the loop.
                unsafe { cluster_all(total, cluster_slots, cluster_set, Op::combine) }
            } else {
                total
            };
            Op::finish(total, &facts)
        };
        if row < p.rows && rank == 0 && (!CLUSTER || cluster_rank() == 0) {
            // SAFETY: a row of the matrix (the kernel's contract covers what Op writes of it).
            unsafe { Op::write_row(p, row, &stats) };
        }
        let tiles_out = if writes { tiles } else { 0 };
        for t in (tiles - tiles_out..tiles).rev() {
            if t + 1 != tiles {
                tile = if t < p.shared_tiles {
                    restore(t)
                } else {
                    load((first_tile + t) * per_tile)
                };
            }
            if Op::AFFINE && t > tiles - tiles_out {
                // The weight and bias of the next tile out, on their way to L1 while this one is
                // written (in L2 only, past what the kept tiles leave of L1, they cost a round
                // trip a tile: H100, f32 RMSNorm 4096 x 65536 1.24x the copy, softmax 1.03).
                let first = (first_tile + t - 1) * per_tile;
                unrolled_for(W / 4, |c| {
                    let col = map.chunk(first, c);
                    if col < row_cols {
                        for values in [p.weight, p.bias] {
                            if !values.is_null() {
                                // SAFETY: a column of a non-null weight or bias of `cols` elements.
                                unsafe { prefetch_l1(values.add(col as usize) as *const u8) };
                            }
                        }
                    }
                });
            }
            if column_sums && row < p.rows {
                tile.for_each_item(|k, x, dy| {
                    // dweight += dy x^, dbias += dy.
                    let [normalized, grad] = Op::parameter_grads(x, dy, &facts);
                    // SAFETY: this thread's own slots of tile t, in bounds, as above.
                    unsafe {
                        let (w, b) = (sum_slot(t, k, 0), sum_slot(t, k, 1));
                        sums.write_unchecked(w, fma(grad, normalized, sums.read_unchecked(w)));
                        sums.write_unchecked(b, sums.read_unchecked(b) + grad);
                    }
                });
            }
            // SAFETY: the output row lies in `output` (row_cols is 0 past the last row).
            unsafe { store_tile::<T, Op, W>(p, p.output.add(offset), &tile, &stats, CLUSTER) };
        }
        first_row += stride;
    }
    if CLUSTER {
        // SAFETY: every thread of the cluster's blocks reaches this once, after its last read
        // of another block's slots: no block exits while its slots may still be read.
        unsafe { cluster_barrier() };
    }
    if column_sums {
        // The chunk of partials: the group's, or the cluster's (its blocks write their own
        // tiles' columns).
        let slot = if CLUSTER {
            cluster_idx() as usize
        } else {
            block_idx() as usize * groups as usize + index as usize
        };
        for t in 0..tiles {
            let first = (first_tile + t) * per_tile;
            unrolled_for(W / 4, |c| {
                unrolled_for(per_chunk::<T>(), |j| {
                    let col = map.chunk(first, c) as usize + j;
                    if col < p.cols {
                        let k = c * per_chunk::<T>() + j;
                        let at = 2 * (slot * p.cols + col);
                        // SAFETY: `column_partials` holds 2 f32 per column for each group of the
                        // grid (the kernel's contract); col < cols. This thread's own shared
                        // slots, in bounds as above.
                        unsafe {
                            *p.column_partials.add(at) = sums.read_unchecked(sum_slot(t, k, 0));
                            *p.column_partials.add(at + 1) = sums.read_unchecked(sum_slot(t, k, 1));
                        }
                    }
                });
            });
        }
    }
}
