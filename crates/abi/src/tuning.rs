//! The tuned values the host launches with and the kernels are built for: threads per block,
//! items per thread, blocks per multiprocessor, look-back delays, each with one line of
//! provenance (docs/performance.md has the sweeps behind them). Items per thread and vector
//! widths are per element type, in [`table`](crate::table); the functions that pick among these
//! values for a call's shape are in [`planning`](crate::planning), which imports this module
//! (never the reverse).

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
/// thread leaves two loads in flight, far from the DRAM bandwidth.
/// H100, partition_if of 2^28 f32: 1.72x the copy at 8 pairs (96 registers), 1.85 at 4, 2.36 at 1;
/// docs/performance.md.
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

/// As [`SELECT_LOOK_BACK_DELAY_NS`], for the non-trivial runs, whose tiles publish sooner (no items
/// are gathered, 6 % of them written).
/// H100, 2^28 `f32`: 1.040x the copy at 1000 ns, 1.094 at 2000; docs/performance.md.
pub const NON_TRIVIAL_RUNS_LOOK_BACK_DELAY_NS: u32 = 1000;

/// Threads per block of the histogram kernels.
pub const HISTOGRAM_BLOCK: u32 = 256;
/// Blocks per multiprocessor of the histogram's grid (fewer for small inputs): one wave of the
/// blocks that fit at once (4 of the 4-byte even kernels' 46-56 registers x 256 threads), so that
/// no partial second wave trails; each block adds its counts to the output once.
/// H100, 256 even bins, 2^28 `f32` / `u32`: 0.498 / 0.494x the copy at 4 blocks, 0.521 / 0.492 at
/// 8; docs/performance.md.
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
/// tiles wait longer at the barrier after the look-back since their block scan got cheaper.
/// H100, 2^28 `f32` scan by key: 1.67x the copy at 2000 ns, 1.73 at 1000 (the reduce keeps 1000);
/// docs/performance.md.
pub const SEGMENTED_SCAN_LOOK_BACK_DELAY_NS: u32 = 2000;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented scans are built for
/// (their PTX declares it): like the compaction, they are bound by the latency of each tile's
/// phases, so their speed follows the tiles in flight per multiprocessor.
pub const SEGMENTED_BLOCKS_PER_SM: u32 = 4;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented reduce by offsets (sum,
/// min, max) is built for: its tile carries one value per item and one pair per thread, so ptxas
/// fits it in 40 registers without spilling, and it is bound by each tile's latency more than the
/// scans.
/// H100, 2^28 `f32`, 1000-item segments: 1.35x the copy at 6 blocks, 1.55 at 4, 1.61 at 8
/// (spilling); docs/performance.md.
pub const SEGMENTED_REDUCE_BLOCKS_PER_SM: u32 = 6;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented argmin / argmax are built
/// for: as the segmented reduce, 40 registers and no spills since each item is one packed `u64` key
/// carried from its loaded value in the reduce (at 5 the kernels took 40 registers too, so ran 6
/// blocks a multiprocessor as well).
/// H100, 2^28 `f32`, 1000-item segments: 1.60 -> 1.08x the copy; docs/performance.md.
pub const SEGMENTED_ARG_BLOCKS_PER_SM: u32 = 6;

/// From this many tiles on, a segmented call by offsets first finds every tile's first segment in a
/// small kernel of its own (`device_segment_tile_starts`) instead of each tile searching the
/// offsets on its critical path; below, the extra launch costs more than the searches.
/// H100, `f32` 1000-item segments: reduce 1.74 -> 1.54x the copy at 2^28, 13.5 -> 19.8 µs at 2^20;
/// docs/performance.md.
pub const SEGMENT_TILE_STARTS_MIN_TILES: usize = 1024;

/// Threads per block of the row operations when a row takes a warp or less (several rows per
/// block); a row of more than a warp takes a whole block of its group's size.
pub const ROW_BLOCK: u32 = 256;

/// Items of each row input a row thread holds at most (16 `f32` in 16 words, 16 halves in 8): ptxas
/// keeps them in registers within the 64 a thread has at 1024 threads (32 spill), and 8 halves a
/// thread ran slower than 16. Each operation also caps the words of all its inputs together
/// (`row_op_table!`).
/// H100, 16384 x 16384 `bf16` softmax: 1.18x the copy at 16 halves a thread, 2.00 at 8;
/// docs/performance.md.
pub const ROW_ITEMS: usize = 16;

/// Words of each of `inputs` row inputs a thread holds, for an operation holding at most `op_words`
/// words of all of them and elements of `vector` per 16 bytes: the smaller of `op_words / inputs`
/// and [`ROW_ITEMS`]' words (the `f32` backward and LayerNorm spilled at 16 words of each input).
/// H100, `f32` backward at 1024 to 16384 columns: 1.50-1.60x the copy at 8 words of each input,
/// 1.70 at 16; docs/performance.md.
pub const fn row_words(vector: usize, inputs: usize, op_words: u32) -> u32 {
    let per_input = op_words / inputs as u32;
    let most = (ROW_ITEMS / (vector / 4)) as u32;
    if per_input < most { per_input } else { most }
}

/// Items of each row input a thread of the kernels summing the norms' weight and bias gradients
/// holds at most (the `sums` operations of `row_op_table!`,
/// [`row_sums_plan`](crate::planning::rows::row_sums_plan)): 8; the halves' kernels of 16 spilled
/// and ran slower.
/// H100, `f32` LayerNorm backward 65536 x 4096: 1.58x the copy at 8 items, 2.02 at 4;
/// docs/performance.md.
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

/// Most threads a row of more than a warp takes (a power of two, 64 to 1024).
pub const ROW_MAX_GROUP: u32 = 1024;

/// Most threads a row held in registers takes when each thread holds `words` words of each of
/// `inputs` row inputs: 1024 where that is 64 bytes or more (16 `f32`, or 8 words of each of two
/// inputs), else 256. A block of 1024 threads is alone on its multiprocessor (64 registers each),
/// so nothing overlaps its phases (load, reduce, write): that pays for 64 KiB of rows, not for 32
/// KiB, which gains more from four blocks of 256 threads reading their rows twice.
/// H100, 16384 x 16384 `bf16` softmax: 1.18x the copy in four tiles of 256 threads, 1.63 in
/// registers; docs/performance.md.
pub const fn row_register_group(words: u32, inputs: usize) -> u32 {
    if 4 * words as usize * inputs >= 64 {
        1024
    } else {
        256
    }
}

/// Rows of at most this many tiles of [`row_register_group`] threads are read in such tiles; longer
/// ones in tiles of [`ROW_MAX_GROUP`] threads.
/// H100, 4096 x 65536 `bf16` softmax: 1.29x the copy in 4 tiles of 1024 threads, 1.45 in 16 of 256;
/// docs/performance.md.
pub const ROW_FEW_TILES: usize = 4;

/// Row kernels held to fewer registers than the row operations' bounds (1024 threads, one block)
/// allow (`.maxnreg`), with the limit: the halves' softmax, log-softmax, RMSNorm and LayerNorm of 8
/// words, which take rows of 1024 to 4096 halves in blocks of 64 to 256 threads, and rows past that
/// in tiles. At 48 registers (56 without the limit) a multiprocessor holds 5 blocks of 256 threads
/// instead of 4, without a spill (LayerNorm, one tile only, spills 20 bytes and still gains; at 40
/// they all spill).
/// H100, `bf16` 65536 x 4096 softmax: 1.034x the copy at 48 registers, 1.116 at 56;
/// docs/performance.md.
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

/// Threads of a block of the clusters summing the norms' parameter gradients over `f32` rows that
/// tiles of [`ROW_MAX_GROUP`] threads would cut into fewer tiles than a cluster has blocks (on an
/// H100 8193 to 24576 columns, which one block of 1024 threads a multiprocessor took, its sums of
/// all the row's tiles in its shared memory): four blocks of 256 threads a row, each summing 2 or 3
/// tiles, several blocks a multiprocessor. Not for halves, slower so, as their other re-read tiles.
/// H100, `f32` 16384 x 16384 LayerNorm backward: 1.788x the copy at 256 threads, 1.935 at 1024;
/// docs/performance.md.
pub const ROW_SUMS_CLUSTER_GROUP: u32 = 256;

/// Threads of a tile of the norms' backward summing kernels over rows of halves that one tile of
/// more threads would hold, where tiles of this many cut the row into at most
/// [`ROW_SUMS_HALVES_TILES`] (one block a row, its sums of both tiles in shared memory, the row
/// read twice from L2): on an H100 `f16` and `bf16` rows of 2049 to 4096 columns, one tile of 512
/// threads before. Rows of 4 tiles of 256 (8192 columns) were not measured and keep their one tile.
/// H100, `bf16` 65536 x 4096 LayerNorm backward: 1.997x the copy in tiles of 256 threads, 2.112 in
/// one of 1024; docs/performance.md.
pub const ROW_SUMS_HALVES_GROUP: u32 = 256;
/// Most tiles of [`ROW_SUMS_HALVES_GROUP`] threads a row of halves is cut into for its summing
/// kernel instead of one tile of more threads.
pub const ROW_SUMS_HALVES_TILES: usize = 2;

/// Fewest threads a row of several tiles takes ([`row_plan_fewer_threads`](crate::planning::rows::row_plan_fewer_threads)), but for
/// [`ROW_SMALL_TILE_OPS`].
pub const ROW_MIN_TILE_GROUP: u32 = 256;

/// Row operations whose rows go to tiles of as few as [`ROW_SMALL_TILE_GROUP`] threads
/// ([`row_plan_fewer_threads`](crate::planning::rows::row_plan_fewer_threads)), rows of one tile
/// too: the cross-entropy; not the others (RMSNorm and LayerNorm ran slower so). Below
/// [`ROW_MIN_TILE_GROUP`] threads only while the rows, a block each, hold at least half the threads
/// the device runs at once: fewer rows in such small blocks leave the device partly idle.
/// H100, `bf16` 65536 x 4096 cross-entropy loss: 0.650x the copy in tiles of 64 threads, 1.110 in
/// one tile; docs/performance.md.
pub const ROW_SMALL_TILE_OPS: &[&str] = &["cross_entropy"];

/// Fewest threads a tile of [`ROW_SMALL_TILE_OPS`] takes.
pub const ROW_SMALL_TILE_GROUP: u32 = 64;

/// Blocks of a thread-block cluster that share one row of the row operations (sm_90 and later):
/// a row of at least this many tiles of [`ROW_MAX_GROUP`] threads is split among them, each
/// block holding its share of the tiles (in registers and its own shared memory) and the
/// blocks exchanging only their statistics through distributed shared memory, so that rows of
/// up to this many times what one block holds are read once. 4 is portable (the limit is 8),
/// and a GPC of an H100 (16 or 18 multiprocessors) holds four such clusters of one block each.
pub const ROW_CLUSTER_BLOCKS: u32 = 4;

/// Threads per block of the onesweep pass: one per digit (the block's per-digit steps, its
/// counts, their scan and the look-back, take one thread each).
pub const SORT_BLOCK: u32 = RADIX_DIGITS;
/// Most tiles whose status a onesweep pass's look-back reads at once, per digit (one thread
/// each), before adding their counts in order: a walk of `t` tiles costs
/// `t / SORT_LOOK_BACK_TILES` round trips to L2 instead of `t`. See
/// [`onesweep_look_back_tiles`](crate::planning::sort::onesweep_look_back_tiles).
pub const SORT_LOOK_BACK_TILES: usize = 4;
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the onesweep passes of keys alone
/// (`device_radix_sort_onesweep_keys_*`) are built for (their PTX declares it): 64 registers, no
/// spill at 20 keys a thread (each key stored to the exchange as it is ranked, each digit made from
/// its key where the rank uses it); the fourth block hides more of the look-back's and the
/// barriers' latency.
/// H100, 2^28 `u32` keys: 5577 µs at 4 blocks, 6116 at 3; docs/performance.md.
pub const SORT_KEYS_BLOCKS_PER_SM: u32 = 4;
/// As [`SORT_KEYS_BLOCKS_PER_SM`], for the passes that move values too: at 3 blocks their values
/// spill, and without spills (the values loaded after the rank, 80 registers) 3 blocks still ran
/// slower.
/// H100, `u32` pairs at 2^28: 21.8 Gpairs/s at 2 blocks, 15.9 at 3; docs/performance.md.
pub const SORT_PAIRS_BLOCKS_PER_SM: u32 = 2;
/// As [`SORT_KEYS_BLOCKS_PER_SM`], for the passes of 8-byte keys alone in their larger tiles
/// (`u64`, `i64`, `f64`: 24 keys a thread, 128 registers, no spill).
/// H100, 2^28 keys: 2 blocks of 24 keys fastest of 2 x 24, 3 x 16 and 4 x 12 for `f64` (16234.5
/// µs), 1.6 % behind 3 x 16 for `u64`; docs/performance.md.
pub const SORT_WIDE_KEYS_BLOCKS_PER_SM: u32 = 2;
/// Threads per block of the onesweep passes of 8-byte keys with values (CUB 3.0's shape for 8-byte
/// keys with 4-byte values on sm_90: 384 threads of 15 keys at 2 blocks a multiprocessor, 80
/// registers): thread `t < RADIX_DIGITS` owns digit `t`, every thread ranks and moves its keys. At
/// 2^20 they lost to blocks of 256, so their small tiles, taken where they fit in one wave, stay in
/// blocks of 256 ([`onesweep_small_tiles`](crate::planning::sort::onesweep_small_tiles)).
/// H200, 2^28 `u64` keys with `u32` values: 20187 µs in 384 x 15, 21880 in 256 x 20 (CUB 20071);
/// docs/performance.md.
pub const SORT_WIDE_PAIRS_BLOCK: u32 = 384;
/// Most blocks of [`SORT_BLOCK`] threads per multiprocessor the segmented radix sort is built for
/// (its PTX declares it), but for those
/// [`segmented_sort_blocks_per_sm`](crate::planning::sort::segmented_sort_blocks_per_sm) gives 2: a
/// block takes one segment and stores its keys as ranked, and 3 blocks (80 registers) outrun 2
/// though they spill more.
/// H100, 65536 rows of 4096 `f32` keys: 3616 µs at 3 blocks, 4182 at 2; docs/performance.md.
pub const SEGMENTED_SORT_BLOCKS_PER_SM: u32 = 3;
/// Keys per lane of the segmented sort's warp sort: segments of at most
/// [`SEGMENTED_WARP_SORT_KEYS`] keys are sorted by one warp each, every key ranked against the
/// segment's others (a shuffle a key of the segment, a comparison a key of the lane), in registers;
/// segments of at most half as many take half the keys a lane. The comparisons grow as the
/// segment's length squared, so longer segments go to the warp radix tier (8 passes of about 29
/// instructions a key).
/// Estimated, H100: about 640 instructions a key at 256 keys, 320 at 128; docs/performance.md.
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
/// Keys per lane of the warp radix tier's tile; segments of at most half a tile take a tile of half
/// as many.
/// H100, 524288 rows of 512 `f32` keys: 2755 µs in the warp radix tier, 9330 in the medium tier's
/// block a row; docs/performance.md.
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
/// pass's counters ([`sort_histogram_copies`](crate::planning::sort::sort_histogram_copies)).
pub const SORT_HISTOGRAM_SHARED_BYTES: u32 = 128 * 1024;
/// 16-byte loads of keys each thread of the upfront histogram issues before it counts them: 2
/// keeps its loop over the keys loaded within 32 (16 one-byte keys a load).
pub const SORT_HISTOGRAM_LOADS_IN_FLIGHT: u32 = 2;
/// Most keys a radix sort call takes: tile counts and digit offsets are `u32`.
pub const SORT_MAX_KEYS: usize = u32::MAX as usize;
