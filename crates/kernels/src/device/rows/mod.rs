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
//!   `evict_first`, so that the streamed rows leave them in L2
//!   ([`load_words_read_only_kept`](super::element::load_words_read_only_kept),
//!   [`store_words_streaming`](super::element::store_words_streaming)).
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
//!
//! Files, by scope (each built on the one below): the fast math is the thread layer's
//! ([`crate::math`]); the row group's reduction the block's ([`RowGroup`], [`Stats`]), with the
//! blocks' combination in a cluster beside it ([`cluster_all`], in
//! [`block::row_group`](crate::block::row_group): `cluster` imports nothing). Here: the agent
//! [`row_op`] with [`RowOp`] and [`RowFacts`]; [`tile`], the row tiles, their loads and stores;
//! and a file per family of operations: [`softmax`], [`norm`], [`cross_entropy`].

pub mod cross_entropy;
pub mod norm;
pub mod softmax;
pub mod tile;

pub use cross_entropy::{CrossEntropy, CrossEntropyRow};
pub use norm::{
    LayerNorm, LayerNormBackward, LayerNormBackwardOp, LayerNormBackwardSums, RmsNorm, RmsNormBackward,
    RmsNormBackwardOp, RmsNormBackwardSums,
};
pub use softmax::{LogSoftmax, LogSoftmaxBackward, Softmax, SoftmaxBackward};
pub use tile::{RowMapping, RowTile, row_tiles};

use crate::block::{RowGroup, Stats, cluster_all};
use crate::cluster::{cluster_barrier, cluster_count, cluster_idx, cluster_rank};
use crate::device::element::{RowElement, prefetch_l1};
use crate::math::fma;
use crate::policy::ROWS;
use crate::shared::{SharedArray, dynamic_shared};
use crate::thread::{WARP_SIZE, block_dim, block_idx, grid_dim, thread_idx};
use crate::unroll::{opaque_u32, unrolled_for};
use gpu_primitives_abi::layout::{
    ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_column_sums_bytes, row_staged_word,
};
use gpu_primitives_abi::params::RowParams;
use gpu_primitives_abi::planning::rows::row_block_tiles;

/// Blocks of a cluster that share a row ([`RowPolicy::cluster_blocks`](gpu_primitives_abi::tuning::RowPolicy::cluster_blocks)).
const ROW_CLUSTER_BLOCKS: u32 = ROWS.cluster_blocks;
use tile::{aligned_or_null, load_tile, per_chunk, row_tile_items, store_tile};

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

/// The row operation `Op` over every row of `p` (see [`RowParams`] and the [module docs](self)),
/// each thread holding `W` words (a multiple of 4) of each row input per tile. `ONE`: rows of
/// one tile kept in registers between the reduction and the output; `TILED`: rows of several
/// tiles ([`row_tiles`]; of one tile too, through the tile loop, without `ONE`). A kernel
/// compiled without one of the paths needs fewer registers (ptxas, sm_90: without the tile
/// loop, the halves' kernels summing the norms' parameter gradients spilled 28 -> 8 bytes;
/// without the one-tile path, their `f32` tiled kernels of 8 words 116 -> 0). `CLUSTER` (with
/// `TILED`, without `ONE`): each row
/// shared among the [`RowPolicy::cluster_blocks`](gpu_primitives_abi::tuning::RowPolicy::cluster_blocks) blocks of a thread-block cluster (sm_90), block `r`
/// reading the tiles [`row_block_tiles`] gives it (as a block alone reads all of them, keeping
/// `shared_tiles` of its own in shared memory), the blocks' statistics combined through
/// distributed shared memory in rank order; cluster `c` takes rows `c`, `c + clusters`, ...
///
/// # Safety
/// - With `CLUSTER`: launched in clusters of [`RowPolicy::cluster_blocks`](gpu_primitives_abi::tuning::RowPolicy::cluster_blocks) blocks (the grid a whole
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
