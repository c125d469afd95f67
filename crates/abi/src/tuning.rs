//! Launch shapes the host picks and the kernels are built for (docs/performance.md has the
//! sweeps behind each value). Items per thread and vector widths are per element type, in
//! [`table`](crate::table).

/// The digit and counter shapes that the shared-memory layouts are computed from, defined in
/// [`layout`](crate::layout) and named here too, beside the launch shapes built on them.
pub use crate::layout::{
    BLOCKED_COUNTER_WORDS, BLOCKED_RADIX_BITS, RADIX_BITS, RADIX_DIGITS, RADIX_SELECT_COPIES,
    TOP_K_SELECT_MAX_K,
};

/// Threads per block of the device reduce kernels.
pub const REDUCE_BLOCK: u32 = 256;
/// Most blocks per multiprocessor of the reduce's first pass.
pub const REDUCE_BLOCKS_PER_SM: u32 = 4;
/// Up to this many elements, the reduce is one block in one launch.
pub const REDUCE_SINGLE_BLOCK_MAX: usize = 1 << 12;
/// Up to this many elements, the reduce is one launch (the last block to finish reduces the
/// partials); above, two launches (the second, one block over the partials).
pub const REDUCE_SINGLE_LAUNCH_MAX: usize = 1 << 22;
/// 16-byte loads each thread of the reduce's first pass keeps in flight.
pub const REDUCE_LOADS_IN_FLIGHT: u32 = 4;
/// Threads per block of the scan kernels (a tile is `SCAN_BLOCK * scan items` elements).
pub const SCAN_BLOCK: u32 = 256;
/// Threads per block of the compaction kernels (select, partition, unique).
pub const SELECT_BLOCK: u32 = 256;
/// 16-byte rows of input each thread of the compaction kernels holds: a tile is
/// `SELECT_BLOCK * vector width * SELECT_ROWS` elements (6144 f32). Fewer rows
/// than the scan's: the flags, ranks and gathered items take registers the scan does not need,
/// and 4 blocks per multiprocessor hide the look-back (docs/performance.md: 6 rows x 4 blocks
/// measured ahead of 4 x 4, 4 x 5 and 8 x 3 on an H100).
pub const SELECT_ROWS: usize = 6;
/// Pairs of elements each thread of a stable partition's second pass (`device_reverse_tail_*`,
/// [`SELECT_BLOCK`] threads a block) swaps per step, all loaded before any is stored: one pair a
/// thread left 2 loads in flight and ran at 36 % of the DRAM bandwidth (H100, 2^27 pairs of f32:
/// 860 µs where half a copy takes 360); partition_if of 2^28 f32 took 2.36x the copy with 1
/// pair, 1.85 with 4 (56 registers), 1.72 with 8 (96 registers; docs/performance.md).
pub const REVERSE_TAIL_ITEMS: usize = 8;
/// Nanoseconds each scan tile waits after publishing its aggregate before it looks back at its
/// predecessors, in grids of at least [`SCAN_LOOK_BACK_DELAY_MIN_TILES`] tiles.
pub const SCAN_LOOK_BACK_DELAY_NS: u32 = 3000;
/// Smaller scans look back at once: their tiles are all resident together (about one wave on
/// an H100), and the delay would only add to the call's latency.
pub const SCAN_LOOK_BACK_DELAY_MIN_TILES: usize = 1024;

/// Most blocks of [`SELECT_BLOCK`] threads per multiprocessor the compaction kernels are built for
/// (their PTX declares it, as the reduce's): the compaction is bound by the latency of each
/// tile's phases (load, block scan, look-back, gather, write), so its speed follows the tiles
/// in flight per multiprocessor, and the bound keeps ptxas from taking the registers that
/// would cost one.
pub const SELECT_BLOCKS_PER_SM: u32 = 4;

/// Nanoseconds each compaction tile (and run-length encoding tile) waits after publishing its
/// count before it looks back, in grids of at least [`SCAN_LOOK_BACK_DELAY_MIN_TILES`] tiles.
pub const SELECT_LOOK_BACK_DELAY_NS: u32 = 2000;

/// As [`SELECT_LOOK_BACK_DELAY_NS`], for the non-trivial runs, whose tiles publish sooner (no
/// items are gathered, 6 % of them written): H100, 2^28, time / copy at 1000 / 2000 ns: `f32`
/// 1.040 / 1.094, `u32` 1.044 / 1.097 (the select and the encoding lose 4-5 % at 1000;
/// docs/performance.md).
pub const NON_TRIVIAL_RUNS_LOOK_BACK_DELAY_NS: u32 = 1000;

/// Threads per block of the histogram kernels.
pub const HISTOGRAM_BLOCK: u32 = 256;
/// Blocks per multiprocessor of the histogram's grid (fewer for small inputs): one wave of
/// the blocks that fit at once (4 of the 4-byte even kernels' 46-56 registers x 256 threads),
/// so that no partial second wave trails; each block adds its counts to the output once.
/// (H100, 256 even bins, time / copy at 2^28, f32 / u32: 8 blocks 0.521 / 0.492, 5 blocks
/// 0.500 / 0.582, 4 blocks 0.498 / 0.494; docs/performance.md.)
pub const HISTOGRAM_BLOCKS_PER_SM: u32 = 4;
/// 16-byte loads each histogram thread issues before it counts them.
pub const HISTOGRAM_LOADS_IN_FLIGHT: u32 = 4;
/// Most dynamic shared memory a privatized histogram block takes, in bytes (its `u32`
/// counters, and a range histogram's levels): past it, samples are counted by global atomics.
pub const HISTOGRAM_MAX_SHARED_BYTES: u32 = 48 * 1024;

/// Items per thread of the run-length kernels for elements of `vector` per 16-byte load: four
/// 16-byte rows, at most 16 items (a tile is `SELECT_BLOCK` times that: 4096 4-byte items), so
/// that the tile's items, run starts and ends fit the shared memory ([`run_layout`](crate::layout::run_layout)).
pub const fn run_items(vector: usize) -> usize {
    let items = vector * 4;
    if items < 16 { items } else { 16 }
}

/// Items per thread of reduce by key and unique by key for keys of `key_bytes` and values
/// accumulated in `acc_bytes`: 64 bytes of the wider, consecutive in each thread (a tile of 4096
/// items of 4-byte keys and values with [`SCAN_BLOCK`]), as the segmented reduce by offsets
/// ([`segmented_reduce_items`]).
pub const fn reduce_by_key_items(key_bytes: usize, acc_bytes: usize) -> usize {
    let wider = if key_bytes > acc_bytes {
        key_bytes
    } else {
        acc_bytes
    };
    64 / wider
}

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor reduce by key is built for: 64
/// registers a thread, the tile's keys and values held in registers between the reduce and
/// the write.
pub const REDUCE_BY_KEY_BLOCKS_PER_SM: u32 = 4;

/// Items per thread of the segmented scans and reduce ([`SegmentedScanParams`](crate::params::SegmentedScanParams)) for rows of
/// `vector` elements accumulated in `acc_bytes`-byte values: four rows, at most 64 bytes of
/// values (a tile of 4096 4-byte items with [`SCAN_BLOCK`], 2048 8-byte ones). Each item is
/// carried with its segment through the block scan, twice the registers of a plain scan's
/// item, hence half the scan's items.
pub const fn segmented_items(vector: usize, acc_bytes: usize) -> usize {
    let items = vector * 4;
    let most = 64 / acc_bytes;
    if items < most { items } else { most }
}

/// Items per thread of the segmented reduce by offsets for values accumulated in `acc_bytes`
/// bytes: 64 bytes of values, consecutive in each thread (a tile of 4096 4-byte items with
/// [`SCAN_BLOCK`]). Each thread reads its items with 16-byte loads 64 bytes apart across the
/// warp; at 128 bytes (32 items) the lines no longer stay in L1 between a thread's loads and the
/// reduce took 2.3x the copy instead of 1.75x (H100, 2^28 f32; docs/performance.md).
pub const fn segmented_reduce_items(acc_bytes: usize) -> usize {
    64 / acc_bytes
}

/// Nanoseconds each tile of the segmented reduce (sums and arg-extremes by offsets) waits after
/// publishing its aggregate before it looks back, in grids of at least
/// [`SCAN_LOOK_BACK_DELAY_MIN_TILES`] tiles.
pub const SEGMENTED_LOOK_BACK_DELAY_NS: u32 = 1000;

/// As [`SEGMENTED_LOOK_BACK_DELAY_NS`], for the segmented scans (by key and by offsets), whose
/// tiles wait longer at the barrier after the look-back since their block scan got cheaper
/// (H100, 2^28, time / copy at 1000 / 2000 ns: scan by key f32 1.73 / 1.67, u32 1.76 / 1.68;
/// segmented scan of 1000-item segments f32 1.53 / 1.49; the reduce went 1.60 / 1.65 and keeps
/// 1000; docs/performance.md).
pub const SEGMENTED_SCAN_LOOK_BACK_DELAY_NS: u32 = 2000;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented scans are built for
/// (their PTX declares it): like the compaction, they are bound by the latency of each tile's
/// phases, so their speed follows the tiles in flight per multiprocessor.
pub const SEGMENTED_BLOCKS_PER_SM: u32 = 4;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented reduce by offsets
/// (sum, min, max) is built for: its tile carries one value per item and one pair per thread,
/// so ptxas fits it in 40 registers without spilling, and it is bound by each tile's latency
/// more than the scans (H100, 2^28 f32, 1000-item segments, time / copy at 4 / 6 / 8 blocks:
/// 1.55 / 1.35 / 1.61 before the head slots were padded, 8 spilling 64-80 bytes;
/// docs/performance.md).
pub const SEGMENTED_REDUCE_BLOCKS_PER_SM: u32 = 6;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented argmin / argmax are
/// built for: as the segmented reduce, 40 registers and no spills since each item is one packed
/// `u64` key carried from its loaded value in the reduce (at 5 the kernels took 40 registers
/// too, so ran 6 blocks a multiprocessor as well; H100, 2^28 f32, 1000-item segments, time /
/// copy 1.60 -> 1.08; docs/performance.md).
pub const SEGMENTED_ARG_BLOCKS_PER_SM: u32 = 6;

/// From this many tiles on, a segmented call by offsets first finds every tile's first segment
/// in a small kernel of its own (`device_segment_tile_starts`) instead of each tile searching
/// the offsets on its critical path (H100, 2^28 f32, 1000-item segments: reduce 1.74 -> 1.54x
/// the copy, scan 2.02 -> 1.83x); below, the extra launch costs more than the searches (2^20:
/// reduce 13.5 -> 19.8 µs).
pub const SEGMENT_TILE_STARTS_MIN_TILES: usize = 1024;

/// Threads per block of the row operations when a row takes a warp or less (several rows per
/// block); a row of more than a warp takes a whole block of its group's size.
pub const ROW_BLOCK: u32 = 256;

/// Items of each row input a row thread holds at most (16 `f32` in 16 words, 16 halves in 8):
/// ptxas keeps them in registers within the 64 a thread has at 1024 threads (H100, sm_90: 32
/// `f32` per thread spilled 276 bytes, 32 halves 188), and 8 halves a thread ran slower than 16
/// (H100, 16384 x 16384 bf16 softmax: 2.00x the copy against 1.18x). Each operation also caps
/// the words of all its inputs together (`row_op_table!`).
pub const ROW_ITEMS: usize = 16;

/// Words of each of `inputs` row inputs a thread holds, for an operation holding at most
/// `op_words` words of all of them and elements of `vector` per 16 bytes: the smaller of
/// `op_words / inputs` and [`ROW_ITEMS`]' words. (H100, f32, time / copy at 1024 to 16384
/// columns: the backward at 16 words of each input 1.70x, at 8 1.50 to 1.60x; LayerNorm at 16
/// words 1.28 to 1.48x, at 8 1.18 to 1.45x: both spilled at 16.)
pub const fn row_words(vector: usize, inputs: usize, op_words: u32) -> u32 {
    let per_input = op_words / inputs as u32;
    let most = (ROW_ITEMS / (vector / 4)) as u32;
    if per_input < most { per_input } else { most }
}

/// Items of each row input a thread of the kernels summing the norms' weight and bias gradients
/// holds at most (the `sums` operations of `row_op_table!`, [`row_sums_plan`]): 8. H100, time /
/// copy, `f32` LayerNorm backward with both gradients, 8 items a thread against 4: 262144 x 1024
/// 1.63 against 1.83 (128 and 256 threads a row), 65536 x 4096 1.58 against 2.02 (512 and 1024
/// threads); the halves' kernels of 16 items spilled 128 to 140 bytes (ptxas, sm_90) and ran
/// slower (`bf16` 262144 x 1024 2.76 against 2.32).
pub const ROW_SUMS_ITEMS: usize = 8;

/// Words of each of `inputs` row inputs a thread of a summing kernel holds (`op_words` of all of
/// them): [`row_words`], and at most [`ROW_SUMS_ITEMS`] items.
pub const fn row_sums_words(vector: usize, inputs: usize, op_words: u32) -> u32 {
    let words = row_words(vector, inputs, op_words);
    let most = (ROW_SUMS_ITEMS / (vector / 4)) as u32;
    if words < most { words } else { most }
}

/// Threads per block of the norms' weight and bias gradients (`NormGradParams`), one per
/// column.
pub const NORM_GRAD_BLOCK: u32 = 256;
/// Dynamic shared memory of the finish of the norms' weight and bias gradients
/// (`NormGradParams`), in bytes: two `f32` per thread of its block.
pub const NORM_GRAD_FINISH_SHARED_BYTES: u32 = 2 * 4 * NORM_GRAD_BLOCK;

/// The first launch of the norms' weight and bias gradients aims at about this many blocks
/// (16 per multiprocessor of a 132-multiprocessor H100, whole waves of 8 resident blocks).
pub const NORM_GRAD_BLOCKS: usize = 2048;

/// Threads per block of cross-entropy's count of valid targets (`TargetCountParams`; whole
/// warps).
pub const TARGET_COUNT_BLOCK: u32 = 256;

/// Most blocks of that count (each thread strides over the targets past them).
pub const TARGET_COUNT_MAX_BLOCKS: usize = 1024;

/// Columns one block of the norms' weight and bias gradients' finish takes (a warp's lanes;
/// its [`NORM_GRAD_BLOCK`] threads split the chunks by warp).
pub const NORM_GRAD_FINISH_COLUMNS: u32 = 32;

/// Fewest rows a chunk of the norms' weight and bias gradients sums.
pub const NORM_GRAD_MIN_ROWS: usize = 32;

/// (chunks, rows per chunk) of the norms' weight and bias gradients over `rows x cols`: enough
/// chunks that the first launch has about [`NORM_GRAD_BLOCKS`] blocks, each chunk at least
/// [`NORM_GRAD_MIN_ROWS`] rows (one chunk of 0 rows for an empty matrix). A function of the shape
/// only, so the order of the additions (and the result's bits) does not depend on the GPU.
pub const fn norm_grad_chunks(rows: usize, cols: usize) -> (u32, usize) {
    let column_blocks = cols.div_ceil(NORM_GRAD_BLOCK as usize);
    let by_blocks = if column_blocks >= NORM_GRAD_BLOCKS {
        1
    } else {
        NORM_GRAD_BLOCKS / column_blocks
    };
    let by_rows = rows.div_ceil(NORM_GRAD_MIN_ROWS);
    let wanted = if by_blocks < by_rows { by_blocks } else { by_rows };
    let wanted = if wanted == 0 { 1 } else { wanted };
    let per_chunk = rows.div_ceil(wanted);
    if per_chunk == 0 {
        return (1, 0);
    }
    (rows.div_ceil(per_chunk) as u32, per_chunk)
}

/// Most threads a row of more than a warp takes (a power of two, 64 to 1024).
pub const ROW_MAX_GROUP: u32 = 1024;

/// Most threads a row held in registers takes when each thread holds `words` words of each of
/// `inputs` row inputs: 1024 where that is 64 bytes or more (16 `f32`, or 8 words of each of
/// two inputs), else 256. A block of 1024 threads is alone on its multiprocessor (64
/// registers each), so nothing overlaps its phases (load, reduce, write): that pays for 64 KiB
/// of rows, not for 32 KiB, which gains more from four blocks of 256 threads reading their rows
/// twice (H100, 16384 x 16384 softmax: bf16 1.63x the copy in registers, 1.18x in four tiles of
/// 256 threads; f32 1.04x and 1.33x; bf16 backward 1.48x and 1.90x).
pub const fn row_register_group(words: u32, inputs: usize) -> u32 {
    if 4 * words as usize * inputs >= 64 {
        1024
    } else {
        256
    }
}

/// Rows of at most this many tiles of [`row_register_group`] threads are read in such tiles;
/// longer ones in tiles of [`ROW_MAX_GROUP`] threads (H100, 4096 x 65536 bf16 softmax: 16
/// tiles of 256 threads 1.45x the copy, 4 tiles of 1024 threads 1.29x).
pub const ROW_FEW_TILES: usize = 4;

/// Row kernels held to fewer registers than the row operations' bounds (1024 threads, one block) allow (`.maxnreg`), with
/// the limit: the halves' softmax, log-softmax, RMSNorm and LayerNorm of 8 words, which take
/// rows of 1024 to 4096 halves in blocks of 64 to 256 threads, and rows past that in tiles.
/// ptxas sm_90: 56 registers without the limit (4 blocks of 256 threads a multiprocessor), 48
/// with it (5) and no spill; at 40 they spill 12 to 72 bytes. LayerNorm (one tile only) spills
/// 20 bytes at 48 (sm_80 and sm_90) and measured 1.3 to 1.4 % faster at 1024 and 4096 `bf16`
/// columns (H100) than at 64 registers.
pub const ROW_REGISTER_LIMITS: &[(&str, u32)] = &[
    ("device_rows_softmax_bf16_w8", 48),
    ("device_rows_softmax_bf16_w8_tiled", 48),
    ("device_rows_log_softmax_bf16_w8", 48),
    ("device_rows_log_softmax_bf16_w8_tiled", 48),
    ("device_rows_rms_norm_bf16_w8", 48),
    ("device_rows_softmax_f16_w8", 48),
    ("device_rows_softmax_f16_w8_tiled", 48),
    ("device_rows_log_softmax_f16_w8", 48),
    ("device_rows_log_softmax_f16_w8_tiled", 48),
    ("device_rows_rms_norm_f16_w8", 48),
    ("device_rows_layer_norm_bf16_w8", 48),
    ("device_rows_layer_norm_f16_w8", 48),
];

/// How a row operation is launched for rows of `cols` elements (`row_plan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPlan {
    /// Words of each input per thread and tile (selects the kernel: `_w<words>`).
    pub words: u32,
    /// Threads per row, a power of two.
    pub group: u32,
    /// Threads per block: [`ROW_BLOCK`] for groups of a warp or less, else `group`.
    pub block: u32,
    /// Tiles of `group * words * 4` bytes per row: 1 keeps the row in registers between its
    /// reduction and its output; more read it twice.
    pub tiles: usize,
}

/// The launch of a row operation over rows of `cols` elements (at least 1) of `vector` elements
/// per 16 bytes, whose threads hold at most [`row_words`]`(vector, inputs, op_words)` words of
/// each of its `inputs` row inputs where one tile holds the row, and
/// [`row_words`]`(vector, inputs, tiled_words)` where it does not (`row_op_table!`):
///
/// - **a warp or less per row** while 32 threads hold the row: the fewest words per thread that
///   do, then the fewest threads (several rows per warp for short rows);
/// - **a block per row** while [`row_register_group`] threads hold it (`inputs` row inputs:
///   1, or 2 for the backward): the fewest threads that do;
/// - **longer rows**: a block loops over the row in tiles of [`row_words`] words per thread
///   (statistics, then output), keeping what fits in shared memory ([`row_shared_tiles`]) and
///   reading the rest again: of [`row_register_group`] threads for up to [`ROW_FEW_TILES`]
///   tiles, else of `max_group` threads ([`ROW_MAX_GROUP`], which also caps the others).
pub const fn row_plan(
    cols: usize,
    vector: usize,
    inputs: usize,
    op_words: u32,
    tiled_words: u32,
    max_group: u32,
) -> RowPlan {
    let plan = row_plan_of_words(cols, vector, inputs, op_words, max_group);
    if plan.tiles > 1 && tiled_words != op_words {
        row_plan_of_words(cols, vector, inputs, tiled_words, max_group)
    } else {
        plan
    }
}

/// The one-tile launch of the norms' backward kernels that also sum the weight's and bias's
/// gradients (the `sums` operations of `row_op_table!`, `op_words` words of all `inputs`
/// inputs), each thread holding [`row_sums_words`] of each input: where one tile of up to
/// `max_group` threads holds the row, that tile ([`row_plan`]'s where [`row_register_group`]
/// threads or fewer hold it, else more threads: the launches summing the gradients apart read
/// `x` and `dy` again; H100, `f32` 65536 x 4096 2.48x the copy apart, 1.58 in one tile of 512
/// threads); else tiles of `max_group` threads of as many words (a cluster's,
/// [`row_sums_launch`]).
pub const fn row_sums_plan(
    cols: usize,
    vector: usize,
    inputs: usize,
    op_words: u32,
    max_group: u32,
) -> RowPlan {
    let words = row_sums_words(vector, inputs, op_words);
    let plan = row_plan_of_words(cols, vector, inputs, words * inputs as u32, max_group);
    if plan.tiles == 1 {
        return plan;
    }
    let group = row_threads(cols, words, vector / 4);
    if group <= max_group as usize {
        return RowPlan {
            words,
            group: group as u32,
            block: group as u32,
            tiles: 1,
        };
    }
    let items = words as usize * vector / 4;
    RowPlan {
        words,
        group: max_group,
        block: max_group,
        tiles: cols.div_ceil(max_group as usize * items),
    }
}

/// How a summing kernel runs ([`row_sums_launch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSumsLaunch {
    /// Its launch: words a thread, threads, tiles of the whole row.
    pub plan: RowPlan,
    /// The row is shared among the [`ROW_CLUSTER_BLOCKS`] blocks of a cluster (its `_cluster`
    /// kernel), each summing the columns of its own tiles.
    pub cluster: bool,
    /// Dynamic shared memory of the sums past `ROW_SHARED_BYTES`
    /// ([`row_column_sums_bytes`](crate::layout::row_column_sums_bytes) of a block's largest
    /// share of the tiles). In `f32` the summing kernels keep no tiles in shared memory: with the
    /// sums beside them they ran slower than reading the tiles again (H100, `f32` LayerNorm
    /// backward, time / copy: 16384 x 16384 in one block 2.06 keeping 2 of 4 tiles, 1.94 keeping
    /// none; 4096 x 65536 in a cluster 2.46 keeping 1 of each block's 2, 1.88 keeping none); in
    /// halves they do where they fit ([`row_sums_kept_tiles`]).
    pub sums_bytes: u64,
}

/// Threads of a block of the clusters summing the norms' parameter gradients over `f32` rows that
/// tiles of [`ROW_MAX_GROUP`] threads would cut into fewer tiles than a cluster has blocks (on an
/// H100 8193 to 24576 columns, which one block of 1024 threads a multiprocessor took, its sums
/// of all the row's tiles in its shared memory): four blocks of 256 threads a row, each summing
/// 2 or 3 tiles, several blocks a multiprocessor. H100, `f32` 16384 x 16384 backward, time /
/// copy (`GPU_PRIMITIVES_ROW_MAX_GROUP` 1024 / 512 / 256): LayerNorm 1.935 / 1.905 / 1.788,
/// RMSNorm 1.912 / 1.863 / 1.777; in halves the cluster of 256 measured slower (`bf16` 16384 x
/// 16384 2.32 -> 2.41), as their other re-read tiles (docs/performance.md).
pub const ROW_SUMS_CLUSTER_GROUP: u32 = 256;

/// Threads of a tile of the norms' backward summing kernels over rows of halves that one tile
/// of more threads would hold, where tiles of this many cut the row into at most
/// [`ROW_SUMS_HALVES_TILES`] (one block a row, its sums of both tiles in shared memory, the row
/// read twice from L2): on an H100 `f16` and `bf16` rows of 2049 to 4096 columns, one tile of 512
/// threads before. H100, `bf16` 65536 x 4096, time / copy (`GPU_PRIMITIVES_ROW_MAX_GROUP` 1024 /
/// 512 / 256, session 44): LayerNorm backward 2.112 / 2.104 / 1.997, RMSNorm 1.956 / 1.951 /
/// 1.901 (docs/performance.md). Rows of 4 tiles of 256 (8192 columns) were not measured and keep
/// their one tile.
pub const ROW_SUMS_HALVES_GROUP: u32 = 256;
/// Most tiles of [`ROW_SUMS_HALVES_GROUP`] threads a row of halves is cut into for its summing
/// kernel instead of one tile of more threads.
pub const ROW_SUMS_HALVES_TILES: usize = 2;

/// How the norms' backward sums its parameters' gradients in the `dx` kernel, on a device
/// allowing a block `block_limit_bytes` of shared memory, with or without thread-block
/// `clusters` (a `sums` operation of `inputs` row inputs of `vector` elements per 16 bytes,
/// `op_words` and `tiled_words` words of all of them as `row_op_table!` gives): in one tile
/// ([`row_sums_plan`]); else the row shared among the blocks of a cluster in tiles of
/// [`row_sums_words`] (8 items of each input) where the sums of a block's share fit; else one
/// block a row in the tiles of [`row_plan`] (of `tiled_words`) where the sums of all of them
/// fit; else `None`, and the gradients are summed apart. `f32` rows that tiles of `max_group`
/// threads cut into fewer tiles than a cluster has blocks go to a cluster of blocks of
/// [`ROW_SUMS_CLUSTER_GROUP`] threads; halves' rows one tile of more than
/// [`ROW_SUMS_HALVES_GROUP`] threads would hold, to at most [`ROW_SUMS_HALVES_TILES`] tiles of
/// that many, one block a row. On an H100: one tile to 8192 columns, a cluster from 8193 to
/// 98304 (`f32`); halves: one tile to 2048 columns, two tiles of 256 threads in one block to
/// 4096, one tile to 8192, one block a row from 8193 to 16384, a cluster to 98304.
#[allow(clippy::too_many_arguments)]
pub const fn row_sums_launch(
    cols: usize,
    vector: usize,
    inputs: usize,
    op_words: u32,
    tiled_words: u32,
    max_group: u32,
    block_limit_bytes: u64,
    clusters: bool,
) -> Option<RowSumsLaunch> {
    let plan = row_sums_plan(cols, vector, inputs, op_words, max_group);
    if plan.tiles == 1 {
        // Halves' rows in a few tiles of fewer threads, one block a row.
        if vector == 8 && plan.group > ROW_SUMS_HALVES_GROUP {
            let tiled = row_plan(
                cols,
                vector,
                inputs,
                tiled_words,
                tiled_words,
                ROW_SUMS_HALVES_GROUP,
            );
            if tiled.tiles <= ROW_SUMS_HALVES_TILES
                && let Some(launch) =
                    row_sums_fitting(tiled, vector, tiled.tiles as u64, false, block_limit_bytes)
            {
                return Some(launch);
            }
        }
        return row_sums_fitting(plan, vector, 1, false, block_limit_bytes);
    }
    // f32 rows of fewer tiles than a cluster's blocks: tiles of fewer threads, as many as it
    // takes, for a cluster of blocks of [`ROW_SUMS_CLUSTER_GROUP`] threads.
    let plan = if clusters && vector == 4 && plan.tiles < ROW_CLUSTER_BLOCKS as usize {
        let group = if max_group < ROW_SUMS_CLUSTER_GROUP {
            max_group
        } else {
            ROW_SUMS_CLUSTER_GROUP
        };
        row_sums_plan(cols, vector, inputs, op_words, group)
    } else {
        plan
    };
    if clusters && plan.tiles >= ROW_CLUSTER_BLOCKS as usize {
        let largest = (plan.tiles as u32).div_ceil(ROW_CLUSTER_BLOCKS);
        if let Some(launch) = row_sums_fitting(plan, vector, largest as u64, true, block_limit_bytes) {
            return Some(launch);
        }
    }
    let plan = row_plan(cols, vector, inputs, tiled_words, tiled_words, max_group);
    row_sums_fitting(plan, vector, plan.tiles as u64, false, block_limit_bytes)
}

/// [`row_sums_launch`]'s launch of `plan` (elements of `vector` per 16 bytes), a block summing
/// `tiles` of its tiles (in a `cluster` or not), where its sums fit beside the reductions' slots
/// (and a cluster kernel's static slots) within `block_limit_bytes`.
const fn row_sums_fitting(
    plan: RowPlan,
    vector: usize,
    tiles: u64,
    cluster: bool,
    block_limit_bytes: u64,
) -> Option<RowSumsLaunch> {
    use crate::layout::{ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_column_sums_bytes};
    let items = plan.words as u64 * vector as u64 / 4;
    let sums_bytes = row_column_sums_bytes(items * tiles, plan.block);
    let slots = ROW_SHARED_BYTES as u64
        + if cluster {
            ROW_CLUSTER_SLOTS_BYTES as u64
        } else {
            0
        };
    if slots + sums_bytes <= block_limit_bytes {
        Some(RowSumsLaunch {
            plan,
            cluster,
            sums_bytes,
        })
    } else {
        None
    }
}

/// Tiles of its row a block of a norms' summing kernel ([`row_sums_launch`]'s `launch`, rows of
/// `vector` elements per 16 bytes, `inputs` row inputs) keeps in shared memory past its column
/// sums, on a device allowing a block `block_limit_bytes`: in halves every tile of the block but
/// its last (which stays in registers) that fits without costing a block of occupancy
/// ([`row_sums_room_tiles`]), so the block reads its share of the row once where all fit;
/// in `f32` none, every tile but the last read again (from L2, mostly). H100, time / copy
/// without / with the kept tiles (two rounds each, session 49): `bf16` LayerNorm backward 4096
/// columns 2.00 / 1.97, 16384 2.33 / 2.29, 65536 3.03 / 2.92, RMSNorm 1.92 / 1.88, 2.20 / 2.17,
/// 2.82 / 2.81; but `f32` LayerNorm 16384 1.79 / 1.87 and 65536 1.89 / 2.46.
pub const fn row_sums_kept_tiles(
    launch: RowSumsLaunch,
    vector: usize,
    inputs: usize,
    block_limit_bytes: u64,
) -> u32 {
    if vector == 4 {
        return 0;
    }
    row_sums_room_tiles(launch, inputs, block_limit_bytes)
}

/// How many of its tiles but the last a block of a norms' summing kernel `launch` (`inputs` row
/// inputs) can keep in shared memory past its column sums, on a device allowing a block
/// `block_limit_bytes`, without costing a block of occupancy (as [`row_shared_tiles`]).
pub const fn row_sums_room_tiles(launch: RowSumsLaunch, inputs: usize, block_limit_bytes: u64) -> u32 {
    use crate::layout::{ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_staged_tiles_bytes};
    let plan = launch.plan;
    let (tiles, slots) = if launch.cluster {
        (
            row_block_tiles(plan.tiles as u32, 0, ROW_CLUSTER_BLOCKS).1,
            ROW_CLUSTER_SLOTS_BYTES,
        )
    } else {
        (plan.tiles as u32, 0)
    };
    let used = (ROW_SHARED_BYTES + slots) as u64 + launch.sums_bytes;
    let room = row_block_share_bytes(plan.block, block_limit_bytes).saturating_sub(used);
    let fit = room / row_staged_tiles_bytes(1, plan.words, inputs as u32, plan.block);
    let wanted = tiles.saturating_sub(1) as u64;
    if fit < wanted { fit as u32 } else { wanted as u32 }
}

/// Chunks of the `rows` rows a cluster kernel summing the norms' weight and bias gradients
/// takes, one cluster each (chunk `c` the rows `c`, `c + chunks`, ...): at most `most`, the
/// clusters the device runs at once (one wave: H100, `f32` LayerNorm backward 4096 x 65536, 30
/// clusters at once, time / copy 2.46 in 30 chunks, 3.07 in 64, 2.76 in 128), each at least
/// [`NORM_GRAD_MIN_ROWS`] rows (1 for an empty matrix).
pub const fn row_sums_cluster_chunks(rows: usize, most: usize) -> usize {
    let chunks = rows.div_ceil(NORM_GRAD_MIN_ROWS);
    if chunks > most {
        most
    } else if chunks == 0 {
        1
    } else {
        chunks
    }
}

/// [`row_plan`] of one word count for every row length.
const fn row_plan_of_words(
    cols: usize,
    vector: usize,
    inputs: usize,
    op_words: u32,
    max_group: u32,
) -> RowPlan {
    let items_per_word = vector / 4;
    let most_words = row_words(vector, inputs, op_words);
    let items = most_words as usize * items_per_word;
    let mut words = 4;
    while words <= most_words {
        let group = row_threads(cols, words, items_per_word);
        if group <= 32 {
            return RowPlan {
                words,
                group: group as u32,
                block: ROW_BLOCK,
                tiles: 1,
            };
        }
        words *= 2;
    }
    let register_group = row_register_group(most_words, inputs);
    let in_registers = if register_group < max_group {
        register_group
    } else {
        max_group
    };
    let group = row_threads(cols, most_words, items_per_word);
    if group <= in_registers as usize {
        return RowPlan {
            words: most_words,
            group: group as u32,
            block: group as u32,
            tiles: 1,
        };
    }
    let group = if cols <= ROW_FEW_TILES * in_registers as usize * items {
        in_registers
    } else {
        max_group
    };
    RowPlan {
        words: most_words,
        group,
        block: group,
        tiles: cols.div_ceil(group as usize * items),
    }
}

/// Shared memory one block of `block` threads may take without costing a block of occupancy,
/// on a device allowing a block `block_limit_bytes`: its share among the blocks of that size the
/// row kernels' registers let a multiprocessor hold (built for
/// [`MAX_BLOCK_THREADS`](crate::layout::MAX_BLOCK_THREADS) threads), the multiprocessor holding
/// the limit plus [`SHARED_RESERVED_PER_BLOCK`](crate::layout::SHARED_RESERVED_PER_BLOCK), which
/// each block takes too.
const fn row_block_share_bytes(block: u32, block_limit_bytes: u64) -> u64 {
    let blocks = (crate::layout::MAX_BLOCK_THREADS / block) as u64;
    let reserved = crate::layout::SHARED_RESERVED_PER_BLOCK as u64;
    ((block_limit_bytes + reserved) / if blocks == 0 { 1 } else { blocks }).saturating_sub(reserved)
}

/// How many of a row's first tiles the block keeps in shared memory between its reduction and
/// its output (`RowParams::shared_tiles`) under `plan`, for an operation of `inputs` row inputs
/// on a device allowing a block `block_limit_bytes` of shared memory (its opt-in limit): every
/// tile but the last (which stays in registers) where they fit, else as many as fit (the others
/// are read again); 0 for a row of one tile. They fit in the block's share of that limit among
/// the blocks the row kernels' registers let a multiprocessor hold (built for
/// [`MAX_BLOCK_THREADS`](crate::layout::MAX_BLOCK_THREADS) threads: that many threads per
/// multiprocessor; the multiprocessor holds the limit plus
/// [`SHARED_RESERVED_PER_BLOCK`](crate::layout::SHARED_RESERVED_PER_BLOCK), which each block
/// takes too), less `ROW_SHARED_BYTES`, so that kept tiles never cost a block of occupancy (H100,
/// `f32` cross-entropy with its gradient over 16384 columns: blocks of 256 threads keeping 7
/// tiles of 8 KiB each left room for 3 blocks a multiprocessor, ncu's theoretical occupancy
/// 37.5 %, 1.10x the copy; now they would keep 6, so [`row_plan_fewer_threads`] takes blocks of
/// 512 threads keeping 3 of 4, 1.086x). A tile is [`row_staged_tiles_bytes`](crate::layout::row_staged_tiles_bytes)`(1,
/// ..)`: 64 KiB for 1024 threads of 16 words, so an H100 (227 KiB a block) keeps 3, and reads a
/// row of 4 tiles (65536 `f32`) once.
pub const fn row_shared_tiles(plan: RowPlan, inputs: usize, block_limit_bytes: u64) -> u32 {
    if plan.tiles <= 1 {
        return 0;
    }
    let share = row_block_share_bytes(plan.block, block_limit_bytes);
    let reductions = crate::layout::ROW_SHARED_BYTES as u64;
    let available = share.saturating_sub(reductions);
    let tile = crate::layout::row_staged_tiles_bytes(1, plan.words, inputs as u32, plan.block);
    let fit = available / tile;
    let wanted = (plan.tiles - 1) as u64;
    if fit < wanted { fit as u32 } else { wanted as u32 }
}

/// Fewest threads a row of several tiles takes ([`row_plan_fewer_threads`]), but for
/// [`ROW_SMALL_TILE_OPS`].
pub const ROW_MIN_TILE_GROUP: u32 = 256;

/// Row operations whose rows go to tiles of as few as [`ROW_SMALL_TILE_GROUP`] threads
/// ([`row_plan_fewer_threads`]), rows of one tile too: the cross-entropy (H100, time / copy in
/// one tile -> tiles of 64 threads: `bf16` 65536 x 4096 loss 1.110 -> 0.650, with its gradient
/// 1.486 -> 1.142; `f32` 262144 x 1024 loss 0.769 -> 0.625, with its gradient 1.161 -> 1.092).
/// Not the others: `f32` and `bf16` RMSNorm at 4096 columns 7 to 8 % slower in tiles of 64,
/// `f32` LayerNorm 2 % in tiles of 128. Below [`ROW_MIN_TILE_GROUP`] threads only while the
/// rows, a block each, hold at least half the threads the device runs at once: 1024 rows of
/// 262144 columns in blocks of 64 threads fill a quarter of an H100, and the loss took 20 %
/// longer than in blocks of 256 (half of it), where 65536 rows of 4096 `f32` (2 tiles of 256
/// threads) measured 20 % faster in tiles of 64.
pub const ROW_SMALL_TILE_OPS: &[&str] = &["cross_entropy"];

/// Fewest threads a tile of [`ROW_SMALL_TILE_OPS`] takes.
pub const ROW_SMALL_TILE_GROUP: u32 = 64;

/// Whether a block of `plan` keeps all of its row's tiles but the last in shared memory
/// ([`row_shared_tiles`]), so that it reads the row once (a row of one tile: yes).
const fn row_read_once(plan: RowPlan, inputs: usize, block_limit_bytes: u64) -> bool {
    row_shared_tiles(plan, inputs, block_limit_bytes) as usize + 1 >= plan.tiles
}

/// [`row_plan`]'s `plan` (of `cols`, `vector`, `inputs`, `op_words`, `tiled_words` as given it)
/// for an operation writing an `output` or not (cross-entropy's loss alone) over `rows` rows, on
/// a device running `resident_threads` threads at once and allowing a block `block_limit_bytes`
/// of shared memory, with rows taken by fewer threads a block where that costs no second read:
/// rows of several tiles (with `small_tiles`, an operation of [`ROW_SMALL_TILE_OPS`], rows of one
/// tile of a block too) go to the fewest threads, at least [`ROW_MIN_TILE_GROUP`] (with
/// `small_tiles`, [`ROW_SMALL_TILE_GROUP`], and below [`ROW_MIN_TILE_GROUP`] only while `rows`
/// blocks of them make half of `resident_threads`), whose plan has several tiles and, with an
/// output, reads the row once ([`row_shared_tiles`] keeps all but the last); rows that the
/// plan's block reads partly twice (for a cluster) stay. More blocks a multiprocessor overlap
/// one row's reductions with another's loads. Measured on an H100 (time / copy, tiles of 1024
/// threads -> this): `bf16` 4096 x 65536 softmax 1.144 -> 1.047 (512 threads: 8 tiles, 2 blocks
/// a multiprocessor), LayerNorm 1.311 -> 1.192, cross-entropy's loss 0.753 -> 0.570 (256),
/// `f32` 16384 x 16384 cross-entropy's loss 0.775 -> 0.540 (256), with its gradient 1.233 ->
/// 1.104 (256); where tiles of fewer threads are read twice, slower (`f32` softmax 4096 x 65536
/// 1.027 -> 1.252 at 512).
#[allow(clippy::too_many_arguments)]
pub const fn row_plan_fewer_threads(
    plan: RowPlan,
    cols: usize,
    vector: usize,
    inputs: usize,
    op_words: u32,
    tiled_words: u32,
    small_tiles: bool,
    output: bool,
    rows: usize,
    resident_threads: usize,
    block_limit_bytes: u64,
) -> RowPlan {
    let min_group = if small_tiles {
        ROW_SMALL_TILE_GROUP
    } else {
        ROW_MIN_TILE_GROUP
    };
    if plan.group <= min_group || (plan.tiles <= 1 && !small_tiles) {
        return plan;
    }
    if output && !row_read_once(plan, inputs, block_limit_bytes) {
        return plan;
    }
    let mut group = min_group;
    while group < plan.group {
        let fewer = row_plan(cols, vector, inputs, op_words, tiled_words, group);
        if (group >= ROW_MIN_TILE_GROUP || rows.saturating_mul(group as usize) >= resident_threads / 2)
            && fewer.tiles > 1
            && (!output || row_read_once(fewer, inputs, block_limit_bytes))
        {
            return fewer;
        }
        group *= 2;
    }
    plan
}

/// Blocks of a thread-block cluster that share one row of the row operations (sm_90 and later):
/// a row of at least this many tiles of [`ROW_MAX_GROUP`] threads is split among them, each
/// block holding its share of the tiles (in registers and its own shared memory) and the
/// blocks exchanging only their statistics through distributed shared memory, so that rows of
/// up to this many times what one block holds are read once. 4 is portable (the limit is 8),
/// and a GPC of an H100 (16 or 18 multiprocessors) holds four such clusters of one block each.
pub const ROW_CLUSTER_BLOCKS: u32 = 4;

/// Whether a row of `plan` (an operation of `inputs` row inputs of `vector` elements per 16
/// bytes, writing an output) is split among the [`ROW_CLUSTER_BLOCKS`] blocks of a cluster on a
/// device that has clusters, where one block alone would keep `kept` of its tiles in shared
/// memory ([`row_shared_tiles`]): rows of at least that many tiles of [`ROW_MAX_GROUP`] threads
/// that one block would read partly twice (`kept < tiles - 1`), except the halves' one-input
/// operations. Measured on an H100 (time / copy, one block -> a cluster): where one block
/// reads the row once, the cluster only adds its barrier (`f32` softmax 4096 x 65536 1.03 ->
/// 1.33); where it reads tiles twice the cluster gains (`f32` softmax 1024 x 262144 1.42 ->
/// 1.11, the `f32` and `bf16` softmax backward at 4096 and 262144 columns 1.9-2.4 -> 1.5-1.9,
/// the norms' backward 6-9 %), but not for the halves' forward operations, bound by their
/// instructions with the re-read tiles mostly in L2 (`bf16` softmax 1024 x 262144 1.31 ->
/// 1.60).
pub const fn row_cluster(plan: RowPlan, inputs: usize, vector: usize, kept: u32) -> bool {
    plan.group == ROW_MAX_GROUP
        && plan.tiles >= ROW_CLUSTER_BLOCKS as usize
        && (kept as usize) + 1 < plan.tiles
        && (vector == 4 || inputs == 2)
}

/// The tiles of a row of `plan` that block `rank` of `blocks` sharing it reads: tiles
/// `rank * tiles / blocks ..` up to `(rank + 1) * tiles / blocks` (every block at least one
/// when `tiles >= blocks`; sizes differ by at most one). The kernels' and the host's one place
/// for it.
pub const fn row_block_tiles(tiles: u32, rank: u32, blocks: u32) -> (u32, u32) {
    let first = rank * tiles / blocks;
    (first, (rank + 1) * tiles / blocks - first)
}

/// Threads (a power of two) that hold `cols` items at `words` words of `items_per_word` each.
const fn row_threads(cols: usize, words: u32, items_per_word: usize) -> usize {
    cols.div_ceil(words as usize * items_per_word).next_power_of_two()
}

/// Threads per block of the onesweep pass: one per digit (the block's per-digit steps, its
/// counts, their scan and the look-back, take one thread each).
pub const SORT_BLOCK: u32 = RADIX_DIGITS;
/// Most tiles whose status a onesweep pass's look-back reads at once, per digit (one thread
/// each), before adding their counts in order: a walk of `t` tiles costs
/// `t / SORT_LOOK_BACK_TILES` round trips to L2 instead of `t`. See
/// [`onesweep_look_back_tiles`].
pub const SORT_LOOK_BACK_TILES: usize = 4;
/// Tiles whose status the look-back of a onesweep pass of `tiles` tiles reads at once, on a GPU
/// of `multiprocessors` running `blocks_per_sm` of its blocks each: [`SORT_LOOK_BACK_TILES`]
/// where every tile runs at once (one wave: every tile looks back at the same time, over tiles
/// that have published their counts but mostly not their prefixes: long walks), else 1 (in
/// later waves the walks are short, and the reads past a walk's end cost more than the overlap
/// saves). H100, 2^20 `u32` keys (256 tiles): 64.4 -> 59.3 µs with 4 at once; 2^28 (52429
/// tiles): 5563 -> 5686 µs with 4, 6414 with 8 (docs/performance.md).
pub const fn onesweep_look_back_tiles(tiles: usize, multiprocessors: u32, blocks_per_sm: u32) -> u32 {
    if tiles <= (multiprocessors * blocks_per_sm) as usize {
        SORT_LOOK_BACK_TILES as u32
    } else {
        1
    }
}
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the onesweep passes of keys alone
/// (`device_radix_sort_onesweep_keys_*`) are built for (their PTX declares it): 64 registers, no spill at 20
/// keys a thread (each key stored to the exchange as it is ranked, each digit made from its key
/// where the rank uses it). H100, 2^28 random `u32` keys: 5577 µs at 4 blocks, 6116 at 3 (80
/// registers): the fourth block hides more of the look-back's and the barriers' latency.
pub const SORT_KEYS_BLOCKS_PER_SM: u32 = 4;
/// As [`SORT_KEYS_BLOCKS_PER_SM`], for the passes that move values too: their values spill too
/// much at 3 blocks (H100, `u32` pairs at 2^28: 15.9 Gpairs/s at 3, 21.8 at 2); without spills
/// (the values loaded after the rank, 80 registers) 3 blocks still measured 15-22 % slower
/// (session 43, docs/performance.md).
pub const SORT_PAIRS_BLOCKS_PER_SM: u32 = 2;
/// As [`SORT_KEYS_BLOCKS_PER_SM`], for the passes of 8-byte keys alone in their larger tiles
/// (`u64`, `i64`, `f64`: 24 keys a thread, 128 registers, no spill). H100, 2^28 keys, session
/// 44 (µs, best of two): `u64` 17979.8 at 4 blocks of 12 keys, 16542.6 at 2 of 24, 16288.3 at 3
/// of 16; `f64` 18052.9, 16234.5, 16813.5 (docs/performance.md).
pub const SORT_WIDE_KEYS_BLOCKS_PER_SM: u32 = 2;
/// Blocks per multiprocessor a onesweep pass of `key_bytes` keys with values of `value_bytes`
/// bytes (0: keys alone) is built for: [`SORT_PAIRS_BLOCKS_PER_SM`] with values,
/// [`SORT_WIDE_KEYS_BLOCKS_PER_SM`] for 8-byte keys alone in their larger tiles (not
/// `small_tiles`), else [`SORT_KEYS_BLOCKS_PER_SM`].
pub const fn onesweep_blocks_per_sm(key_bytes: usize, value_bytes: usize, small_tiles: bool) -> u32 {
    if value_bytes != 0 {
        SORT_PAIRS_BLOCKS_PER_SM
    } else if key_bytes == 8 && !small_tiles {
        SORT_WIDE_KEYS_BLOCKS_PER_SM
    } else {
        SORT_KEYS_BLOCKS_PER_SM
    }
}
/// Threads per block of the onesweep passes of 8-byte keys with values (CUB 3.0's shape for
/// 8-byte keys with 4-byte values on sm_90: 384 threads of 15 keys at 2 blocks a
/// multiprocessor, 80 registers): thread `t < RADIX_DIGITS` owns digit `t`, every thread ranks
/// and moves its keys. Session 46, 2^28 random `u64` keys, best of two against 256 threads of
/// 20 (4-byte values) and 16 (8-byte values): `u32` values on an NVIDIA H200 21880 -> 20187 µs
/// (CUB 20071), on an H100 25396 -> 25589 (+0.8 %; CUB 24963); `u64` values at 12 keys a
/// thread H200 27942 -> 27205 (CUB 24610), H100 32619 -> 31982 (CUB 31936); 15 keys a thread
/// (64 bytes spilled) measured 25823 on the H200 but 36366 on the H100. At 2^20 both payloads
/// lost 7 to 9 % (H100 `u32` values 154 -> 168 µs, CUB 194), so their small tiles, taken where
/// they fit in one wave, stay in blocks of 256 ([`onesweep_small_tiles`]; docs/performance.md).
pub const SORT_WIDE_PAIRS_BLOCK: u32 = 384;
/// Threads per block of a onesweep pass of `key_bytes` keys with values of `value_bytes` bytes
/// (0: keys alone): [`SORT_WIDE_PAIRS_BLOCK`] for the larger tiles of 8-byte keys with values,
/// [`SORT_BLOCK`] otherwise (every pass's small tiles included). A tile is this times the
/// pass's items ([`onesweep_items`]) keys.
pub const fn onesweep_threads(key_bytes: usize, value_bytes: usize, small_tiles: bool) -> u32 {
    if key_bytes == 8 && value_bytes != 0 && !small_tiles {
        SORT_WIDE_PAIRS_BLOCK
    } else {
        SORT_BLOCK
    }
}
/// Keys per thread of a onesweep pass's tile for values of `value_bytes` (0: keys alone), from
/// a key type's `sort_key_table!` row: its onesweep keys, v4 and v8 items.
pub const fn onesweep_items(
    value_bytes: usize,
    keys_items: usize,
    v4_items: usize,
    v8_items: usize,
) -> usize {
    match value_bytes {
        0 => keys_items,
        4 => v4_items,
        _ => v8_items,
    }
}
/// Whether a onesweep sort of `n` keys of `key_bytes` with values of `value_bytes` bytes (0:
/// keys alone) takes its small tiles (`small_items` keys a thread, `sort_key_table!`'s small
/// tiles) over its larger ones (`items`), on a GPU of `multiprocessors`; each tile
/// [`onesweep_threads`] times its items. Where the small tiles are shorter, either:
///
/// - the busiest multiprocessor gets more than an eighth fewer keys so (the tiles dealt out
///   evenly). The larger tiles are faster per key (H100, 2^28 keys: 7 % alone, 15 % with
///   values), but an input of only a few tiles per multiprocessor splits unevenly: 2^20 4-byte
///   keys make 205 tiles of 5120 keys on an H200's 132 multiprocessors (10240 keys on the
///   busiest), 256 of 4096 (8192). H200, keys alone at 2^20: 20 keys per thread 4 % slower than
///   16, with `u32` values 24 10 % slower;
/// - or the small tiles take fewer threads (the 8-byte keys with values: 256 against 384) and
///   all of them run at once (one wave of [`onesweep_blocks_per_sm`]): there the larger
///   blocks' threads that own no digit wait at the look-back and the barriers with no later
///   tile to hide it. Session 46, H100, 2^20 `u64` keys with `u32` values: 256 x 20 153.7 µs,
///   384 x 15 160.1-160.9, 384 x 12 167.6 (docs/performance.md).
pub const fn onesweep_small_tiles(
    n: usize,
    multiprocessors: u32,
    (key_bytes, value_bytes): (usize, usize),
    items: usize,
    small_items: usize,
) -> bool {
    let threads = onesweep_threads(key_bytes, value_bytes, false);
    let small_threads = onesweep_threads(key_bytes, value_bytes, true);
    let tile = threads as usize * items;
    let small_tile = small_threads as usize * small_items;
    let one_wave = n.div_ceil(small_tile)
        <= multiprocessors as usize * onesweep_blocks_per_sm(key_bytes, value_bytes, true) as usize;
    small_tile < tile
        && (busiest_keys(n, multiprocessors, small_tile) * 8 < busiest_keys(n, multiprocessors, tile) * 7
            || (small_threads < threads && one_wave))
}

/// Keys of the busiest multiprocessor when `n` keys in tiles of `tile` keys are dealt out
/// evenly over `multiprocessors`.
const fn busiest_keys(n: usize, multiprocessors: u32, tile: usize) -> usize {
    let sms = if multiprocessors == 0 {
        1
    } else {
        multiprocessors as usize
    };
    n.div_ceil(tile).div_ceil(sms) * tile
}
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the segmented radix sort is built
/// for (its PTX declares it), but for those [`segmented_sort_blocks_per_sm`] gives 2. H100, 65536 rows
/// of 4096 random f32 keys: 7.17 ms at 2 blocks (128 registers; ptxas spills 200 to 960 bytes
/// per thread), 10.27 ms at 1 (about 250 registers, no spill); since keys are stored as ranked
/// and a block takes one segment, 4182 us at 2 (24 bytes spilled) and 3616 at 3 (80
/// registers, 248 bytes spilled); the argsort (`u32` values) of f32 keys 4775 -> 4567, of i32
/// keys 5.80 -> 5.43 ms, of f16 keys 3.35 -> 3.58 ms (824 bytes spilled: those stay at 2), f16
/// keys alone 3.0 -> 2.6 ms.
pub const SEGMENTED_SORT_BLOCKS_PER_SM: u32 = 3;
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the segmented radix sort of keys of
/// `key_bytes` with values of `value_bytes` (0: keys alone) is built for:
/// [`SEGMENTED_SORT_BLOCKS_PER_SM`], but 2 (128 registers) for 8-byte values (1316 bytes
/// spilled at 3 blocks, not measured) and for 4-byte values of 1- and 2-byte keys (slower at 3:
/// above).
pub const fn segmented_sort_blocks_per_sm(key_bytes: usize, value_bytes: usize) -> u32 {
    if value_bytes == 8 || (value_bytes == 4 && key_bytes <= 2) {
        2
    } else {
        SEGMENTED_SORT_BLOCKS_PER_SM
    }
}
/// Keys per lane of the segmented sort's warp sort: segments of at most
/// [`SEGMENTED_WARP_SORT_KEYS`] keys are sorted by one warp each, every key ranked against the
/// segment's others (a shuffle a key of the segment, a comparison a key of the lane), in
/// registers; segments of at most half as many take half the keys a lane. The comparisons grow
/// as the segment's length squared: at 256 keys (8 a lane) about 640 instructions a key, 12x
/// the copy's time on an H100, where the warp radix tier (a padded tile in shared memory, 8
/// passes of about 29 instructions a key) is expected faster; at 128, about 320 (not measured
/// against it). ptxas sm_90: 46 to 88 registers, no spill.
pub const SEGMENTED_WARP_SORT_ITEMS: usize = 4;
/// The longest segment the segmented sort's warp sort takes.
pub const SEGMENTED_WARP_SORT_KEYS: usize = 32 * SEGMENTED_WARP_SORT_ITEMS;
/// A device-wide sort's fixed time, in the keys one block of the segmented sort sorts by passes
/// over global memory in that time: the segmented sort gives a segment longer than a tile to
/// the device sort when the estimate says so (`device_sorted_count` in the host's
/// `device::sort::segmented`). Estimated from two figures, not tuned: a sort of up to 2^16 keys
/// takes 26-45 µs (the histogram's and the passes' launches; H200, docs/performance.md), and
/// one block sorted a segment of 2^24 `f32` keys in 261 ms, about 15.5 ns a key (H100, four
/// passes); 30 µs / 15 ns is about 2000.
pub const SEGMENT_DEVICE_SORT_FIXED_KEYS: usize = 2048;
/// How many times faster a device-wide sort takes a key than one block of the segmented sort:
/// about 30 Gkeys/s from 2^24 keys (15 at 2^20) against 1 / 15.5 ns (the figures above).
pub const SEGMENT_DEVICE_SORT_SPEEDUP: usize = 460;
/// Keys per lane of the warp radix tier's tile; segments of at most half a tile take a tile of
/// half as many. H100, 524288 rows of 512 random `f32` keys (the same start): keys 9330 ->
/// 2755 us, argsort 10446 -> 4227 against the medium tier's block a row; with the half tile
/// for 129 to 256 (another start): 1048576 rows of 256 keys 8619 -> 3369 us, argsort 9372 ->
/// 4856 against the warp sort, rows of 512's argsort 4226 -> 4360 (docs/performance.md).
pub const SEGMENTED_WARP_RADIX_SORT_ITEMS: usize = 16;
/// The longest segment the warp radix tier takes: one tile of its warp.
pub const SEGMENTED_WARP_RADIX_SORT_KEYS: usize = 32 * SEGMENTED_WARP_RADIX_SORT_ITEMS;
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the warp radix tier is built for
/// (its PTX declares it).
pub const SEGMENTED_WARP_RADIX_SORT_BLOCKS_PER_SM: u32 = 3;
/// Most warps the warp merge tier gives one segment.
pub const SEGMENTED_WARP_MERGE_MAX_WARPS: usize = 4;
/// The longest segment the warp merge tier takes: a tile of the warp radix tier for each of
/// [`SEGMENTED_WARP_MERGE_MAX_WARPS`] warps.
pub const SEGMENTED_WARP_MERGE_SORT_KEYS: usize =
    SEGMENTED_WARP_MERGE_MAX_WARPS * SEGMENTED_WARP_RADIX_SORT_KEYS;
/// The warps the warp merge tier gives each segment of a launch whose longest segment is
/// `longest` keys (at most [`SEGMENTED_WARP_MERGE_SORT_KEYS`]): a power of two, at least 2,
/// whose tiles hold it. Host and kernel both take it from the launch's length range.
pub const fn warp_merge_warps(longest: usize) -> u32 {
    let parts = longest
        .div_ceil(SEGMENTED_WARP_RADIX_SORT_KEYS)
        .next_power_of_two();
    if parts < 2 { 2 } else { parts as u32 }
}
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the warp merge tier is built for
/// (its PTX declares it): the warp radix tier's, whose tiles and shared memory it has.
pub const SEGMENTED_WARP_MERGE_SORT_BLOCKS_PER_SM: u32 = SEGMENTED_WARP_RADIX_SORT_BLOCKS_PER_SM;
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the top-k by radix select is built
/// for (its PTX declares it).
pub const TOP_K_BLOCKS_PER_SM: u32 = 4;
/// Keys per thread of the top-k by radix select for keys of `key_bytes`: a row of up to
/// `SORT_BLOCK` times this many keys stays in registers (4096 keys of up to 4 bytes; 2048 of 8,
/// which at 16 per thread spill under [`TOP_K_BLOCKS_PER_SM`]'s 64 registers).
pub const fn top_k_items(key_bytes: u32) -> usize {
    if key_bytes > 4 { 8 } else { 16 }
}
/// Threads per block of the device-wide top-k's steps (`device_radix_select_top_k_<key>`).
pub const RADIX_SELECT_BLOCK: u32 = 512;
/// Blocks of the device-wide top-k per multiprocessor (its PTX declares it; the grid is this
/// many per multiprocessor), each with [`RADIX_SELECT_COPIES`] copies of the digit counters
/// (32 KiB): three, 1536 threads (40 registers a thread at most), 24 KiB of 16-byte loads in
/// flight a multiprocessor. Four (32 registers) made the `u8` kernel spill 32 bytes (ptxas):
/// each lane's 16 keys a round, a warp vote each in the gather.
pub const RADIX_SELECT_BLOCKS_PER_SM: u32 = 3;
/// Largest `k` whose top-k threshold (the k-th smallest of the threads' best keys) is found
/// by sorting each warp's best keys (a shuffle network) and ranking the warps' first `k`
/// (`SORT_BLOCK / 32 * k` of them, each against all), instead of by radix select over the
/// threads' best keys.
pub const TOP_K_WARP_SORT_MAX_K: u32 = 16;
// The warps' first k each, and the k-th after them, fit the gather's slots; a warp's first k
// are among its 32 lanes.
const _: () =
    assert!(SORT_BLOCK / 32 * TOP_K_WARP_SORT_MAX_K < TOP_K_SELECT_MAX_K && TOP_K_WARP_SORT_MAX_K <= 32);
/// Threads per block of the radix sort's upfront histogram.
pub const SORT_HISTOGRAM_BLOCK: u32 = 1024;
/// Blocks of the upfront histogram per multiprocessor (its PTX declares it): one, as its
/// counters take [`SORT_HISTOGRAM_SHARED_BYTES`] of shared memory; each block adds its counters
/// to the global ones once.
pub const SORT_HISTOGRAM_BLOCKS_PER_SM: u32 = 1;
/// Most shared memory a block of the upfront histogram counts in, in bytes: its copies of every
/// pass's counters ([`sort_histogram_copies`]).
pub const SORT_HISTOGRAM_SHARED_BYTES: u32 = 128 * 1024;
/// Copies of each digit's counter a block of the upfront histogram keeps for keys of
/// `key_bytes` bytes (one pass a byte) on a GPU whose blocks may take `max_shared_bytes` of
/// shared memory, lane `l` of every warp adding to copy `l % copies`: the largest power of two
/// up to 32 whose counters for every pass fit [`SORT_HISTOGRAM_SHARED_BYTES`] and the GPU (32
/// on an H100 or an A100, 16 for 8-byte keys; at least 1). With one counter per digit, the 32
/// lanes' adds of random digits fell on about 3.2 banks' worth of shared-memory wavefronts each
/// (bank conflicts), which bounded the kernel (H100: one wavefront a cycle, 108 M of them for
/// 2^28 `u32` keys); with a copy per lane each add is one wavefront (two with 16 copies).
pub const fn sort_histogram_copies(key_bytes: u32, max_shared_bytes: u32) -> u32 {
    let budget = if max_shared_bytes < SORT_HISTOGRAM_SHARED_BYTES {
        max_shared_bytes
    } else {
        SORT_HISTOGRAM_SHARED_BYTES
    };
    let mut copies = 32;
    while copies > 1 && key_bytes * RADIX_DIGITS * 4 * copies > budget {
        copies /= 2;
    }
    copies
}
/// 16-byte loads of keys each thread of the upfront histogram issues before it counts them: 2
/// keeps its loop over the keys loaded within 32 (16 one-byte keys a load).
pub const SORT_HISTOGRAM_LOADS_IN_FLIGHT: u32 = 2;
/// Most keys a radix sort call takes: tile counts and digit offsets are `u32`.
pub const SORT_MAX_KEYS: usize = u32::MAX as usize;

#[cfg(test)]
mod row_plan_tests {
    #[test]
    fn cluster_blocks_share_every_tile_once() {
        use super::{ROW_CLUSTER_BLOCKS, row_block_tiles};
        for tiles in ROW_CLUSTER_BLOCKS..200 {
            let mut next = 0;
            for rank in 0..ROW_CLUSTER_BLOCKS {
                let (first, count) = row_block_tiles(tiles, rank, ROW_CLUSTER_BLOCKS);
                assert_eq!(
                    first, next,
                    "{tiles} tiles: block {rank} starts where the last ended"
                );
                assert!(count >= tiles / ROW_CLUSTER_BLOCKS && count <= tiles.div_ceil(ROW_CLUSTER_BLOCKS));
                next = first + count;
            }
            assert_eq!(next, tiles);
        }
    }

    #[test]
    fn clusters_take_rows_one_block_would_read_twice() {
        use super::row_cluster;
        let h100 = 227 * 1024;
        let cluster = |cols: usize, vector: usize, inputs: usize, words: u32, max_group: u32| {
            let plan = row_plan(cols, vector, inputs, words, words, max_group);
            row_cluster(plan, inputs, vector, row_shared_tiles(plan, inputs, h100))
        };
        // f32 forward: 16384 columns a tile of 1024 threads; one block reads 65536 once.
        assert!(!cluster(16384, 4, 1, 16, 1024));
        assert!(!cluster(65536, 4, 1, 16, 1024));
        assert!(cluster(262_144, 4, 1, 16, 1024));
        assert!(cluster(1 << 20, 4, 1, 16, 1024));
        // f32 backward: 8192 columns a tile; one block keeps 3 of 8 at 65536.
        assert!(cluster(65536, 4, 2, 16, 1024));
        // bf16: the backward, not the forward.
        assert!(!cluster(262_144, 8, 1, 16, 1024));
        assert!(cluster(262_144, 8, 2, 16, 1024));
        // A cap on the threads per row (tuning sweeps) keeps rows to one block.
        assert!(!cluster(1 << 20, 4, 1, 16, 256));
    }

    use super::{
        NORM_GRAD_BLOCKS, ROW_MIN_TILE_GROUP, RowPlan, norm_grad_chunks, row_plan, row_shared_tiles,
        row_sums_plan, row_sums_words,
    };

    #[test]
    fn shared_tiles_keep_what_fits_and_leave_the_last_tile_in_registers() {
        use crate::layout::{ROW_SHARED_BYTES, row_staged_tiles_bytes};
        // H100 (sm_90): 227 KiB a block where a kernel opts in; A100 (sm_80): 163 KiB.
        let (h100, a100) = (227 * 1024, 163 * 1024);
        // (cols, vector, inputs, op words, H100 tiles kept, A100 tiles kept)
        for (cols, vector, inputs, words, h, a) in [
            (16384, 4, 1, 16, 0, 0),  // f32 softmax: one tile
            (65536, 4, 1, 16, 3, 2),  // 4 tiles of 64 KiB
            (262144, 4, 1, 16, 3, 2), // 16 tiles: 3 kept, 12 read again
            (65536, 8, 1, 16, 3, 3),  // bf16: 4 tiles of 32 KiB
            (262144, 8, 1, 16, 7, 5), // bf16: 16 tiles of 32 KiB
            (65536, 4, 2, 16, 3, 2),  // f32 backward: 8 tiles of 2 x 32 KiB
            (3000, 4, 1, 8, 1, 1),    // LayerNorm f32: 2 tiles of 256 threads, 8 KiB
            (8000, 4, 1, 8, 3, 3),    // LayerNorm f32: 4 tiles of 256 threads
        ] {
            let plan = row_plan(cols, vector, inputs, words, words, 1024);
            for (available, expected) in [(h100, h), (a100, a)] {
                let kept = row_shared_tiles(plan, inputs, available);
                assert_eq!(kept, expected, "{cols} cols, {plan:?}, {available} bytes");
                assert!(kept as usize <= plan.tiles.saturating_sub(1));
                // Within the block's share of the limit (1024 threads a multiprocessor).
                let blocks = 1024 / plan.block as u64;
                let used = row_staged_tiles_bytes(kept, plan.words, inputs as u32, plan.block);
                assert!(blocks * (used + ROW_SHARED_BYTES as u64) <= available);
            }
        }
        assert_eq!(row_shared_tiles(row_plan(65536, 4, 1, 16, 16, 1024), 1, 0), 0);
        // Blocks of 256 threads (a tuning override) keep a quarter: 65536 f32 in 16 tiles of
        // 16 KiB keeps 3 on an H100, not 14 (which would leave one block a multiprocessor).
        assert_eq!(row_shared_tiles(row_plan(65536, 4, 1, 16, 16, 256), 1, h100), 3);
    }

    #[test]
    fn kept_tiles_chunks_are_distinct_within_their_bytes_and_a_warp_s_consecutive() {
        use crate::layout::{row_staged_tiles_bytes, row_staged_word};
        for (tiles, words, inputs, block) in
            [(3, 16, 1, 1024), (7, 8, 1, 1024), (3, 8, 2, 1024), (3, 8, 1, 256)]
        {
            let total = row_staged_tiles_bytes(tiles, words, inputs, block) / 4;
            let mut seen = std::vec![false; total as usize / 4];
            for t in 0..tiles {
                for i in 0..inputs {
                    for c in 0..words / 4 {
                        for r in 0..block {
                            let w = row_staged_word(t, i, c, words, inputs, block, r);
                            assert!(w.is_multiple_of(4) && u64::from(w) + 4 <= total);
                            assert!(!std::mem::replace(&mut seen[w as usize / 4], true));
                            if r % 32 != 0 {
                                // Lanes of a warp: consecutive 16-byte chunks.
                                assert_eq!(w, row_staged_word(t, i, c, words, inputs, block, r - 1) + 4);
                            }
                        }
                    }
                }
            }
            assert!(seen.iter().all(|&s| s), "every chunk of the bytes is used");
        }
    }

    #[test]
    fn tiled_rows_take_fewer_threads_only_where_none_is_read_twice() {
        let h100 = 227 * 1024;
        let fewer = |plan, cols, vector, output, limit| {
            let f = super::row_plan_fewer_threads;
            f(plan, cols, vector, 1, 16, 16, false, output, 4096, 270_336, limit)
        };
        // bf16 softmax, 65536 columns: 4 tiles of 1024 threads -> 8 of 512, all but the last kept.
        let plan = row_plan(65536, 8, 1, 16, 16, 1024);
        assert_eq!((plan.group, plan.tiles), (1024, 4));
        let less = fewer(plan, 65536, 8, true, h100);
        assert_eq!(
            (less.group, less.block, less.tiles, less.words),
            (512, 512, 8, plan.words)
        );
        assert_eq!(row_shared_tiles(less, 1, h100), 7);
        // Blocks of 256 threads, 4 a multiprocessor: 6 tiles of 8 KiB each, as 7 would leave
        // room for 3 blocks with the driver's 1 KiB a block.
        let quarter = RowPlan {
            words: 8,
            group: 256,
            block: 256,
            tiles: 8,
        };
        assert_eq!(row_shared_tiles(quarter, 1, h100), 6);
        let kept = crate::layout::row_staged_tiles_bytes(6, 8, 1, 256);
        let block =
            kept + u64::from(crate::layout::ROW_SHARED_BYTES + crate::layout::SHARED_RESERVED_PER_BLOCK);
        assert!(4 * block <= h100 + 1024);
        // f32: 512 threads would keep 3 of 8 tiles: unchanged.
        let plan = row_plan(65536, 4, 1, 16, 16, 1024);
        assert_eq!(fewer(plan, 65536, 4, true, h100), plan);
        // Without an output: the fewest threads.
        let less = fewer(plan, 65536, 4, false, h100);
        assert_eq!((less.group, less.tiles), (ROW_MIN_TILE_GROUP, 16));
        // Rows a block reads partly twice (for a cluster) and rows of one tile: unchanged.
        let plan = row_plan(262_144, 8, 1, 16, 16, 1024);
        assert_eq!(fewer(plan, 262_144, 8, true, h100), plan);
        let plan = row_plan(4096, 8, 1, 16, 16, 1024);
        assert_eq!(fewer(plan, 4096, 8, false, h100), plan);
        // The cross-entropy's rows of one tile (bf16 4096: 256 threads): 4 tiles of 64 threads,
        // 3 kept with its gradient; f32 1024 (128 threads): 2 tiles of 64.
        let ce = |cols: usize, vector, output| {
            let plan = row_plan(cols, vector, 1, 8, 8, 1024);
            let rows = (1 << 28) / cols;
            let f = super::row_plan_fewer_threads;
            f(plan, cols, vector, 1, 8, 8, true, output, rows, 270_336, h100)
        };
        assert_eq!(
            (row_plan(4096, 8, 1, 8, 8, 1024).tiles, ce(4096, 8, true).group),
            (1, 64)
        );
        assert_eq!((ce(4096, 8, true).tiles, ce(4096, 8, false).group), (4, 64));
        // f32 4096 (2 tiles of 256 threads): 4 tiles of 128 with its gradient (64 would keep 6
        // of 8), tiles of 64 without.
        assert_eq!((ce(4096, 4, true).group, ce(4096, 4, true).tiles), (128, 4));
        assert_eq!((ce(4096, 4, false).group, ce(1024, 4, false).group), (64, 64));
        // 1024 rows: at least 256 threads (1024 x 128 is under half of an H100's 270336).
        assert_eq!(
            (ce(262_144, 4, false).group, ce(16384, 4, false).group),
            (256, 64)
        );
    }

    #[test]
    fn norm_grad_chunks_cover_the_rows() {
        for (rows, cols) in [
            (0, 5),
            (1, 1),
            (31, 1),
            (33, 1),
            (262_144, 1024),
            (1024, 262_144),
            (1 << 20, 1),
            (7, 3000),
        ] {
            let (chunks, per_chunk) = norm_grad_chunks(rows, cols);
            assert!(chunks >= 1);
            assert!(chunks as usize * per_chunk >= rows && (chunks as usize - 1) * per_chunk < rows.max(1));
            assert!(chunks as usize * cols.div_ceil(256) <= NORM_GRAD_BLOCKS.max(cols.div_ceil(256)));
        }
        assert_eq!(norm_grad_chunks(262_144, 1024), (512, 512));
        assert_eq!(norm_grad_chunks(1024, 262_144), (2, 512));
        assert_eq!(norm_grad_chunks(33, 1), (2, 17));
    }

    #[test]
    fn summing_rows_take_one_tile_of_up_to_max_group_threads() {
        // The norms' backward summing its parameters' gradients: 16 words of x and dy together,
        // at most 8 items of each a thread (8 f32 words, 4 of halves).
        assert_eq!((row_sums_words(4, 2, 16), row_sums_words(8, 2, 16)), (8, 4));
        for (cols, vector) in [(7, 4), (1024, 4), (2048, 4), (100, 8), (2048, 8)] {
            let words = row_sums_words(vector, 2, 16);
            assert_eq!(
                row_sums_plan(cols, vector, 2, 16, 1024),
                row_plan(cols, vector, 2, 2 * words, 2 * words, 1024)
            );
        }
        let one_tile = |words, group| RowPlan {
            words,
            group,
            block: group,
            tiles: 1,
        };
        assert_eq!(row_sums_plan(1024, 4, 2, 16, 1024), one_tile(8, 128));
        // 4096 f32 or 8192 halves: past row_register_group's tiles, one tile of more threads.
        assert_eq!(row_plan(4096, 8, 2, 8, 8, 1024).tiles, 2);
        assert_eq!(row_sums_plan(4096, 4, 2, 16, 1024), one_tile(8, 512));
        assert_eq!(row_sums_plan(4096, 8, 2, 16, 1024), one_tile(4, 512));
        assert_eq!(row_sums_plan(8192, 8, 2, 16, 1024), one_tile(4, 1024));
        assert_eq!(row_sums_plan(8192, 4, 2, 16, 1024), one_tile(8, 1024));
        assert_eq!(row_sums_plan(6007, 4, 2, 16, 1024), one_tile(8, 1024));
        // Past what max_group threads hold in one tile: tiles of max_group threads of as many
        // words (8 items of each input; not the 16 halves a thread one tile of 1024 threads
        // would hold at 16384 columns).
        for (cols, vector, max_group, words, tiles) in [
            (8193, 4, 1024, 8, 2),
            (8193, 8, 1024, 4, 2),
            (16384, 8, 1024, 4, 2),
            (16384, 4, 1024, 8, 2),
            (65536, 4, 1024, 8, 8),
            (8192, 4, 512, 8, 2),
        ] {
            let plan = row_sums_plan(cols, vector, 2, 16, max_group);
            assert_eq!(
                plan,
                RowPlan {
                    words,
                    group: max_group,
                    block: max_group,
                    tiles
                }
            );
        }
    }

    #[test]
    fn summing_kernels_take_one_tile_a_cluster_one_block_or_none() {
        use super::{RowSumsLaunch, row_sums_launch};
        use crate::layout::{ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES};
        let (h100, a100) = (227 * 1024, 163 * 1024);
        // (cols, vector, limit, clusters) -> (cluster, words, tiles of the whole row)
        for (cols, vector, limit, clusters, expected) in [
            (4096, 4, h100, true, Some((false, 8, 1))),
            (8193, 4, h100, true, Some((true, 8, 5))), // 2 tiles of 1024 threads: 5 of 256
            (16384, 4, h100, true, Some((true, 8, 8))),
            (16384, 4, h100, false, Some((false, 4, 4))), // no cluster: one block of 1024
            (16384, 8, h100, true, Some((false, 4, 2))),  // halves: one block
            (2048, 8, h100, true, Some((false, 4, 1))),   // halves: one tile of 256 threads
            (4096, 8, h100, true, Some((false, 4, 2))),   // 2 tiles of 256, not one of 512
            (4096, 8, a100, false, Some((false, 4, 2))),
            (8192, 8, h100, true, Some((false, 4, 1))), // 4 tiles of 256: one of 1024
            (24576, 4, h100, true, Some((true, 8, 12))),
            (24577, 4, h100, true, Some((true, 8, 4))), // 4 tiles of 8 words: a cluster
            (32768, 4, h100, true, Some((true, 8, 4))), // a tile a block
            (32768, 4, h100, false, None),
            (65536, 4, h100, true, Some((true, 8, 8))),
            (65536, 8, h100, true, Some((true, 4, 8))),
            (98304, 4, h100, true, Some((true, 8, 12))),
            (98305, 4, h100, true, None), // 4 tiles a block: their sums take 260 KiB
            (262144, 8, h100, true, None),
            (16384, 4, a100, false, Some((false, 4, 4))),
            (24576, 4, a100, false, None),
        ] {
            let launch = row_sums_launch(cols, vector, 2, 16, 8, 1024, limit, clusters);
            assert_eq!(
                launch.map(|l| (l.cluster, l.plan.words, l.plan.tiles)),
                expected,
                "{cols} cols, {vector} a vector, {limit} bytes"
            );
            if let Some(RowSumsLaunch {
                plan,
                cluster,
                sums_bytes,
            }) = launch
            {
                let items = plan.words as u64 * vector as u64 / 4;
                let tiles = if cluster {
                    plan.tiles.div_ceil(4)
                } else {
                    plan.tiles
                } as u64;
                assert_eq!(sums_bytes, 4 * (2 * items * tiles + 1) * u64::from(plan.block));
                let slots = if cluster { ROW_CLUSTER_SLOTS_BYTES } else { 0 };
                assert!(u64::from(ROW_SHARED_BYTES + slots) + sums_bytes <= limit);
            }
        }
    }

    #[test]
    fn summing_kernels_keep_their_tiles_in_halves_only() {
        use super::{row_sums_kept_tiles, row_sums_launch, row_sums_room_tiles};
        use crate::layout::{ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_staged_tiles_bytes};
        let (h100, a100) = (227 * 1024, 163 * 1024);
        // (cols, vector, limit, clusters) -> tiles kept a block
        for (cols, vector, limit, clusters, kept) in [
            (2048, 8, h100, true, 0),  // one tile
            (4096, 8, h100, true, 1),  // 2 tiles of 256 threads, one block: the row read once
            (4096, 8, a100, false, 0), // A100: a kept tile would cost a block (4 -> 3)
            (16384, 8, h100, true, 1), // one block, 2 tiles of 1024 threads
            (65536, 8, h100, true, 1), // a cluster, 2 tiles a block
            (98304, 8, h100, true, 0), // a cluster, 3 tiles a block: their sums leave no room
            (16384, 4, h100, true, 0), // f32: none
            (65536, 4, h100, true, 0),
        ] {
            let launch = row_sums_launch(cols, vector, 2, 16, 8, 1024, limit, clusters).unwrap();
            assert_eq!(
                row_sums_kept_tiles(launch, vector, 2, limit),
                kept,
                "{cols} cols, {vector} a vector"
            );
            // What may be kept fits past the sums.
            let room = row_sums_room_tiles(launch, 2, limit);
            let slots = if launch.cluster {
                ROW_CLUSTER_SLOTS_BYTES
            } else {
                0
            };
            let staged = row_staged_tiles_bytes(room, launch.plan.words, 2, launch.plan.block);
            assert!(u64::from(ROW_SHARED_BYTES + slots) + launch.sums_bytes + staged <= limit);
        }
    }

    #[test]
    fn cluster_sums_take_a_chunk_a_cluster_at_once() {
        use super::{NORM_GRAD_MIN_ROWS, row_sums_cluster_chunks};
        assert_eq!(row_sums_cluster_chunks(0, 30), 1);
        assert_eq!(row_sums_cluster_chunks(1, 30), 1);
        assert_eq!(row_sums_cluster_chunks(NORM_GRAD_MIN_ROWS + 1, 30), 2);
        assert_eq!(row_sums_cluster_chunks(4096, 30), 30);
        assert_eq!(row_sums_cluster_chunks(4096, 128), 128);
    }

    #[test]
    fn short_rows_share_a_warp_long_rows_take_a_block() {
        // 8 f32: 4 words (4 items) per thread, 2 threads per row.
        assert_eq!(
            row_plan(8, 4, 1, 16, 16, 1024),
            RowPlan {
                words: 4,
                group: 2,
                block: 256,
                tiles: 1
            }
        );
        // 1 item: one thread per row.
        assert_eq!(row_plan(1, 4, 1, 16, 16, 1024).group, 1);
        // 512 f32: a warp of 16 words each; 1024: two warps.
        assert_eq!(
            row_plan(512, 4, 1, 16, 16, 1024),
            RowPlan {
                words: 16,
                group: 32,
                block: 256,
                tiles: 1
            }
        );
        assert_eq!(
            row_plan(1024, 4, 1, 16, 16, 1024),
            RowPlan {
                words: 16,
                group: 64,
                block: 64,
                tiles: 1
            }
        );
        // 512 bf16: a warp of 8 words (16 halves) each.
        assert_eq!(
            row_plan(512, 8, 1, 16, 16, 1024),
            RowPlan {
                words: 8,
                group: 32,
                block: 256,
                tiles: 1
            }
        );
        // 1025 f32: 128 threads.
        assert_eq!(
            row_plan(1025, 4, 1, 16, 16, 1024),
            RowPlan {
                words: 16,
                group: 128,
                block: 128,
                tiles: 1
            }
        );
        // 16384 f32 in 1024 threads, 16384 halves in four tiles of 256; 65536 f32 in four tiles.
        assert_eq!(
            row_plan(16384, 4, 1, 16, 16, 1024),
            RowPlan {
                words: 16,
                group: 1024,
                block: 1024,
                tiles: 1
            }
        );
        assert_eq!(
            row_plan(16384, 8, 1, 16, 16, 1024),
            RowPlan {
                words: 8,
                group: 256,
                block: 256,
                tiles: 4
            }
        );
        // 4096 halves in registers; 65536 in four tiles of 1024 threads.
        assert_eq!(row_plan(4096, 8, 1, 16, 16, 1024).tiles, 1);
        assert_eq!(row_plan(65536, 8, 1, 16, 16, 1024).group, 1024);
        assert_eq!(
            row_plan(65536, 4, 1, 16, 16, 1024),
            RowPlan {
                words: 16,
                group: 1024,
                block: 1024,
                tiles: 4
            }
        );
        assert_eq!(row_plan(1 << 20, 8, 1, 16, 16, 1024).tiles, 64);
        // The backward of 16384 halves holds 64 bytes per thread: 1024 threads, in registers.
        assert_eq!(row_plan(16384, 8, 2, 16, 16, 1024).tiles, 1);
        // The f32 backward holds 8 words of each input; LayerNorm 8 words: 1024 f32 in 128.
        assert_eq!(row_plan(1024, 4, 2, 16, 16, 1024).words, 8);
        assert_eq!(
            row_plan(1024, 4, 1, 8, 8, 1024),
            RowPlan {
                words: 8,
                group: 128,
                block: 128,
                tiles: 1
            }
        );
    }

    #[test]
    fn layer_norm_holds_16_words_in_one_tile_and_8_in_several() {
        let plan = |cols| row_plan(cols, 4, 1, 16, 8, 1024);
        let expect = |words, group, tiles| RowPlan {
            words,
            group,
            block: group,
            tiles,
        };
        assert_eq!(plan(1024), expect(16, 64, 1));
        assert_eq!(plan(4096), expect(16, 256, 1));
        assert_eq!(plan(16384), expect(16, 1024, 1));
        // Past one tile of 1024 threads of 16 words: tiles of 8 words.
        assert_eq!(plan(16385), expect(8, 1024, 3));
        assert_eq!(plan(65536), expect(8, 1024, 8));
        // Halves: 8 words either way.
        assert_eq!(
            row_plan(65536, 8, 1, 16, 8, 1024),
            row_plan(65536, 8, 1, 8, 8, 1024)
        );
    }

    #[test]
    fn every_plan_covers_its_row() {
        for vector in [4usize, 8] {
            for (inputs, op_words, tiled_words) in
                [(1usize, 16u32, 16u32), (2, 16, 16), (1, 8, 8), (1, 16, 8)]
            {
                for cols in (1..5000).chain([1 << 14, 1 << 15, 1 << 16, (1 << 20) - 3, 1 << 20]) {
                    let p = row_plan(cols, vector, inputs, op_words, tiled_words, 1024);
                    let per_tile = p.group as usize * p.words as usize * vector / 4;
                    assert!(p.tiles * per_tile >= cols, "{cols} {vector}: {p:?}");
                    assert!(p.tiles <= super::ROW_FEW_TILES || p.group == 1024);
                    let small = row_plan(cols, vector, inputs, op_words, tiled_words, 256);
                    let small_tile = 256 * small.words as usize * vector / 4;
                    assert!(small.group <= 256 && small.tiles * small_tile >= cols);
                    assert!(p.group.is_power_of_two() && p.block.is_multiple_of(p.group) && p.block <= 1024);
                    assert!(p.words as usize * vector / 4 <= super::ROW_ITEMS);
                    assert!(p.words as usize * inputs <= op_words as usize && p.words >= 4);
                    // Rows of several tiles: at the operation's most words for tiles.
                    for q in [p, small] {
                        assert!(q.tiles == 1 || q.words == super::row_words(vector, inputs, tiled_words));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod sort_histogram_tests {
    use super::sort_histogram_copies;

    /// 32 copies where they fit (16 for 8-byte keys at 128 KiB), halved until every pass's
    /// counters fit the GPU's shared memory per block, at least one.
    #[test]
    fn copies_fit_the_budget_and_the_gpu() {
        let h100 = 227 * 1024;
        let copies = |max: u32| [1, 2, 4, 8].map(|key_bytes| sort_histogram_copies(key_bytes, max));
        assert_eq!(copies(h100), [32, 32, 32, 16]);
        assert_eq!(copies(99 * 1024), [32, 32, 16, 8]);
        assert_eq!(copies(48 * 1024), [32, 16, 8, 4]);
        assert_eq!(copies(1024), [1, 1, 1, 1]);
        for max in [1024, 48 * 1024, 99 * 1024, h100] {
            for (key_bytes, c) in [1, 2, 4, 8].into_iter().zip(copies(max)) {
                assert!(c.is_power_of_two());
                assert!(c == 1 || key_bytes * 256 * 4 * c <= max.min(128 * 1024));
            }
        }
    }
}

#[cfg(test)]
mod onesweep_tests {
    use super::onesweep_small_tiles;

    #[test]
    fn small_tiles_where_the_larger_ones_split_unevenly() {
        // (n, multiprocessors, key and value bytes, items, small items, small tiles taken)
        for (n, sms, bytes, items, small, expected) in [
            (1 << 20, 132, (4, 0), 20, 16, true), // 205 tiles: 2 on the busiest (10240 keys) vs 8192
            (1 << 20, 132, (4, 4), 24, 16, true), // pairs: 171 tiles of 6144 (12288 keys) vs 8192
            (1 << 24, 132, (4, 0), 20, 16, false), // 3277 tiles: 128000 keys vs 131072
            (1 << 28, 132, (4, 0), 20, 16, false),
            (1 << 20, 132, (4, 0), 16, 16, false), // the same tiles: never
            (5120, 132, (4, 0), 20, 16, true),     // one tile of 5120 or two of 4096 side by side
            (1 << 22, 132, (4, 0), 20, 16, false), // 35840 keys vs 32768: not an eighth fewer
            (0, 132, (4, 0), 20, 16, false),
            (1 << 20, 0, (4, 0), 20, 16, false), // no multiprocessors counted: as one
            // 8-byte keys alone, 256 threads both: 171 tiles of 6144 vs 342 of 3072 (3 on
            // the busiest, 9216 keys, against 12288)
            (1 << 20, 132, (8, 0), 24, 12, true),
            (1 << 24, 132, (8, 0), 24, 12, false),
            // 8-byte keys with 4-byte values: 183 tiles of 384 x 15 (11520 keys on the busiest)
            // vs 205 of 256 x 20 (10240, not an eighth fewer) in one wave of 264
            (1 << 20, 132, (8, 4), 15, 20, true),
            (264 * 5120, 132, (8, 4), 15, 20, true), // the last one wave
            (264 * 5120 + 1, 132, (8, 4), 15, 20, false), // 265 tiles
            (1 << 24, 132, (8, 4), 15, 20, false),   // 128000 keys vs 132480
            (1 << 20, 0, (8, 4), 15, 20, false),
            // 8-byte values: 228 tiles of 384 x 12 vs 256 of 256 x 16, one wave
            (1 << 20, 132, (8, 8), 12, 16, true),
            (1 << 21, 132, (8, 8), 12, 16, false),
        ] {
            assert_eq!(
                onesweep_small_tiles(n, sms, bytes, items, small),
                expected,
                "{n} keys, {sms} SMs, {bytes:?} bytes, {items} vs {small} items"
            );
        }
    }
}
