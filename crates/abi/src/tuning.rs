//! The tuned values the host launches with and the kernels are built for, as CUB keeps them
//! (`cub/device/dispatch/tuning/tuning_<algorithm>.cuh`): a policy type a kernel family (threads
//! per block, items per thread, blocks per multiprocessor, look-back delays), and a value of it
//! per architecture, `SM80` and `SM90`, each value with one line of provenance (docs/performance.md
//! has the sweeps behind them). `for_arch` picks the value of a compute capability.
//!
//! Who reads which value: the kernels take the policies of the architecture they are compiled for
//! (`crates/kernels/src/policy.rs`, one place), the host those of the GPU it launches on
//! (`gpu-primitives`' `tuning`, where `TuningOverrides` may change a field for a measurement), the
//! functions of [`planning`](crate::planning) the policy they are given; the registry of
//! [`families`](crate::families) holds one block and one set of launch bounds a kernel, for every
//! architecture's module, so the policies' launch shapes must agree across architectures (its
//! tests check it). Items per thread and vector widths per element type are in
//! [`table`](crate::table); the limits of the API and the digit shapes in [`layout`](crate::layout).
//!
//! The sm_80 values are the sm_90 ones: every measurement behind them was taken on an H100 or an
//! H200; on sm_80 only `ptxas` checks their bounds and spills (`crates/tests/tests/ptx.rs`).

use crate::layout::RADIX_DIGITS;

/// `for_arch` of each policy: sm_90 and later take `SM90`, the architectures below `SM80`.
macro_rules! for_arch {
    ($($policy:ident),* $(,)?) => {$(
        impl $policy {
            /// The value for a GPU of compute capability `compute_capability_x10` (90 for
            /// sm_90): [`SM90`](Self::SM90) from sm_90 on, [`SM80`](Self::SM80) below.
            pub const fn for_arch(compute_capability_x10: u32) -> Self {
                if compute_capability_x10 >= 90 { Self::SM90 } else { Self::SM80 }
            }
        }
    )*};
}

for_arch!(
    ReducePolicy,
    ScanPolicy,
    SelectPolicy,
    SegmentedPolicy,
    HistogramPolicy,
    RowPolicy,
    NormGradPolicy,
    SortPolicy,
    SegmentedSortPolicy,
    TopKPolicy,
);

/// The device reduce (`device_reduce*`, argmin / argmax, dot): per-block partials from 16-byte
/// loads, then one block over them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducePolicy {
    /// Threads per block of every reduce kernel.
    pub block_threads: u32,
    /// Most blocks per multiprocessor of the first pass (its launch bounds, and its grid).
    pub blocks_per_sm: u32,
    /// 16-byte loads each thread of the first pass keeps in flight.
    pub loads_in_flight: u32,
    /// Up to this many items, the reduce is one block in one launch.
    pub single_block_max_items: usize,
    /// Up to this many items, one launch (the last block to finish reduces the partials); above,
    /// two (the second, one block over the partials).
    pub single_launch_max_items: usize,
}

impl ReducePolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // Every kernel of the family (no sweep recorded).
        block_threads: 256,
        // A wave of 4 blocks (no sweep recorded; `GPU_PRIMITIVES_REDUCE_BLOCKS_PER_SM` sweeps it).
        blocks_per_sm: 4,
        // 64 bytes a thread in flight (no sweep recorded).
        loads_in_flight: 4,
        // Below, a second block costs more than it saves (no sweep recorded).
        single_block_max_items: 1 << 12,
        // Past it, the last block's walk over the partials (no sweep recorded).
        single_launch_max_items: 1 << 22,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;
}

/// The scans (`device_scan*`): one pass, decoupled look-back. Items per thread are per element
/// type (`table`'s scan items).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanPolicy {
    /// Threads per block (a tile is this times the type's scan items).
    pub block_threads: u32,
    /// Nanoseconds each tile waits after publishing its aggregate before it looks back at its
    /// predecessors, in grids of at least `look_back_delay_min_tiles` tiles.
    pub look_back_delay_ns: u32,
    /// As `look_back_delay_ns`, for the scans of 8-byte accumulators (`f64`, `i64`, `u64`).
    pub wide_look_back_delay_ns: u32,
    /// Smaller grids look back at once: their tiles are all resident together (about one wave on
    /// an H100), and the delay would only add to the call's latency.
    pub look_back_delay_min_tiles: usize,
}

/// Whether the GPU of compute capability `compute_capability_x10` named `name` (the driver's
/// device name) is an H200 ("NVIDIA H200", "NVIDIA H200 NVL"; not a GH200, whose memory was
/// not measured): the devices whose policies ([`ScanPolicy::H200`], [`SegmentedPolicy::H200`])
/// differ from their architecture's.
fn is_h200(compute_capability_x10: u32, name: &str) -> bool {
    compute_capability_x10 >= 90 && name.split_whitespace().any(|word| word == "H200")
}

impl ScanPolicy {
    /// The value for a GPU of compute capability `compute_capability_x10` named `name` (the
    /// driver's device name): [`H200`](Self::H200) for an H200 ("NVIDIA H200", "NVIDIA H200
    /// NVL"; not a GH200, whose memory was not measured), else [`for_arch`](Self::for_arch).
    pub fn for_device(compute_capability_x10: u32, name: &str) -> Self {
        if is_h200(compute_capability_x10, name) {
            Self::H200
        } else {
            Self::for_arch(compute_capability_x10)
        }
    }

    /// The H200 (sm_90, faster memory than the H100's): the 8-byte scans look back sooner. Only
    /// delays may differ from [`SM90`](Self::SM90): the tiles are sized from the architecture's
    /// shapes (a test checks it).
    pub const H200: Self = Self {
        // H200, 2^28 i64 inclusive sum: 1226 µs at 2000 ns, 1359 at 3000 (CUB 1237); docs/performance.md.
        wide_look_back_delay_ns: 2000,
        ..Self::SM90
    };

    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // The tile's items per thread come from the element table (no sweep recorded).
        block_threads: 256,
        // H100, 2^28 f32: 1.085x the copy at 3000 ns, 1.127 at 2000, a cliff at 5000; docs/performance.md.
        look_back_delay_ns: 3000,
        // H100, 2^28 i64: 1.089x the copy at 3000 ns, 1.101 at 1500; docs/performance.md.
        wide_look_back_delay_ns: 3000,
        // About one wave of tiles on an H100.
        look_back_delay_min_tiles: 1024,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;
}

/// The compaction (select, partition, unique; `SelectParams`), its stable partition's second pass
/// (`device_reverse_tail_*`) and the run-length encoding (`RunParams`), which share its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelectPolicy {
    /// Threads per block of the compaction and run-length kernels (and the reverse tail's).
    pub block_threads: u32,
    /// 16-byte rows of input each compaction thread holds: a tile is `block_threads * vector
    /// width * rows` items (6144 `f32`). Fewer than the scan's: the flags, ranks and gathered
    /// items take registers the scan does not need.
    pub rows: usize,
    /// Most blocks per multiprocessor the compaction kernels are built for (their PTX declares
    /// it): the compaction is bound by the latency of each tile's phases (load, block scan,
    /// look-back, gather, write), so its speed follows the tiles in flight per multiprocessor.
    pub blocks_per_sm: u32,
    /// Nanoseconds each compaction tile (and run-length encoding tile) waits after publishing its
    /// count before it looks back, in grids of at least `look_back_delay_min_tiles` tiles.
    pub look_back_delay_ns: u32,
    /// As `look_back_delay_ns`, for the non-trivial runs, whose tiles publish sooner (no items are
    /// gathered, 6 % of them written).
    pub non_trivial_runs_look_back_delay_ns: u32,
    /// Smaller grids look back at once (as the scan's).
    pub look_back_delay_min_tiles: usize,
    /// Pairs of items each thread of a stable partition's second pass swaps per step, all loaded
    /// before any is stored.
    pub reverse_tail_items: usize,
    /// 16-byte rows of input each run-length thread holds, up to `run_max_items` items.
    pub run_rows: usize,
    /// Most items per thread of the run-length kernels, so that the tile's items, run starts and
    /// ends fit the shared memory ([`run_layout`](crate::layout::run_layout)).
    pub run_max_items: usize,
}

impl SelectPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // As the scan's block (no sweep recorded).
        block_threads: 256,
        // H100: 6 rows x 4 blocks ahead of 4 x 4, 4 x 5 and 8 x 3; docs/performance.md.
        rows: 6,
        // The fourth block hides the look-back; the bound keeps ptxas from costing one.
        blocks_per_sm: 4,
        // H100, 2^28 f32 select_if: 0.885x the copy at 2000 ns, 0.965 at 2500; docs/performance.md.
        look_back_delay_ns: 2000,
        // H100, 2^28 f32: 1.040x the copy at 1000 ns, 1.094 at 2000; docs/performance.md.
        non_trivial_runs_look_back_delay_ns: 1000,
        // As the scan's.
        look_back_delay_min_tiles: 1024,
        // H100, partition_if of 2^28 f32: 1.72x the copy at 8 pairs, 1.85 at 4, 2.36 at 1.
        reverse_tail_items: 8,
        // Four 16-byte rows: a tile of 4096 4-byte items (no sweep recorded).
        run_rows: 4,
        // The tile's items, run starts and ends fit the shared memory.
        run_max_items: 16,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;

    /// Items per thread of the run-length kernels for elements of `vector` per 16-byte load:
    /// `run_rows` rows, at most `run_max_items` (a tile is `block_threads` times that).
    pub const fn run_items(self, vector: usize) -> usize {
        let items = vector * self.run_rows;
        if items < self.run_max_items {
            items
        } else {
            self.run_max_items
        }
    }
}

/// The segmented scans and reduce (by key and by offsets: `SegmentedScanParams`,
/// `SegmentedReduceParams`, `SegmentedArgParams`) and reduce / unique by key
/// (`ReduceByKeyParams`): single-pass kernels over (value, segment) pairs in blocks of the scan's
/// shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedPolicy {
    /// Threads per block of every kernel of the family.
    pub block_threads: u32,
    /// 16-byte rows of values each thread of the segmented scans holds (at most
    /// `scan_thread_bytes` of accumulated values).
    pub scan_rows: usize,
    /// Most bytes of accumulated values a thread of the segmented scans holds: each item is
    /// carried with its segment through the block scan, twice the registers of a plain scan's.
    pub scan_thread_bytes: usize,
    /// Bytes of accumulated values each thread of the segmented reduce by offsets (sums and
    /// arg-extremes) holds, consecutive in the thread.
    pub reduce_thread_bytes: usize,
    /// Bytes of the wider of key and accumulated value each thread of reduce / unique by key
    /// holds, consecutive in the thread.
    pub reduce_by_key_thread_bytes: usize,
    /// Most blocks per multiprocessor the segmented scans are built for (their PTX declares it).
    pub scan_blocks_per_sm: u32,
    /// Most blocks per multiprocessor the segmented reduce by offsets (sum, min, max) is built for.
    pub reduce_blocks_per_sm: u32,
    /// Most blocks per multiprocessor the segmented argmin / argmax are built for.
    pub arg_blocks_per_sm: u32,
    /// Most blocks per multiprocessor reduce by key is built for.
    pub reduce_by_key_blocks_per_sm: u32,
    /// Nanoseconds each tile of the segmented reduce (by offsets, and by key) waits after
    /// publishing its aggregate before it looks back, in grids of at least
    /// `look_back_delay_min_tiles` tiles.
    pub reduce_look_back_delay_ns: u32,
    /// As `reduce_look_back_delay_ns`, for the segmented scans (by key and by offsets).
    pub scan_look_back_delay_ns: u32,
    /// Smaller grids look back at once (as the scan's).
    pub look_back_delay_min_tiles: usize,
    /// From this many tiles on, a call by offsets first finds every tile's first segment in a
    /// small kernel of its own (`device_segment_tile_starts`) instead of each tile searching the
    /// offsets on its critical path; below, the extra launch costs more than the searches.
    pub tile_starts_min_tiles: usize,
}

impl SegmentedPolicy {
    /// The value for a GPU of compute capability `compute_capability_x10` named `name` (the
    /// driver's device name): [`H200`](Self::H200) for an H200 (as
    /// [`ScanPolicy::for_device`]), else [`for_arch`](Self::for_arch).
    pub fn for_device(compute_capability_x10: u32, name: &str) -> Self {
        if is_h200(compute_capability_x10, name) {
            Self::H200
        } else {
            Self::for_arch(compute_capability_x10)
        }
    }

    /// The H200 (sm_90, faster memory than the H100's): the scans by key look back sooner.
    /// Only delays may differ from [`SM90`](Self::SM90) (a test checks it).
    pub const H200: Self = Self {
        // H200, 2^28 u32 inclusive scan by key: 944-949 µs at 1000 ns, 964 at 500, 967-977 at
        // 2000, 1005 at 0 (f32 903 / 929 / 903-913 / 987); docs/performance.md, session 63.
        scan_look_back_delay_ns: 1000,
        ..Self::SM90
    };

    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // As the scan's block (no sweep recorded).
        block_threads: 256,
        // Four rows: a tile of 4096 4-byte items, 2048 8-byte ones.
        scan_rows: 4,
        // Half the scan's items: each carries its segment.
        scan_thread_bytes: 64,
        // H100, 2^28 f32: 1.75x the copy at 64 bytes, 2.3x at 128 (L1 misses); docs/performance.md.
        reduce_thread_bytes: 64,
        // As the segmented reduce by offsets: a tile of 4096 items of 4-byte keys and values.
        reduce_by_key_thread_bytes: 64,
        // Latency-bound as the compaction; the bound keeps ptxas from costing a block.
        scan_blocks_per_sm: 4,
        // H100, 2^28 f32, 1000-item segments: 1.35x the copy at 6, 1.55 at 4, 1.61 at 8 (spilling).
        reduce_blocks_per_sm: 6,
        // H100, 2^28 f32, 1000-item segments: 1.60 -> 1.08x the copy at 6; docs/performance.md.
        arg_blocks_per_sm: 6,
        // 64 registers a thread, the tile's keys and values held between the reduce and the write.
        reduce_by_key_blocks_per_sm: 4,
        // H100, 2^28 f32, 1000-item segments: 0.815x the copy at 1000 ns, 0.881 at 500, 0.874 at 1500.
        reduce_look_back_delay_ns: 1000,
        // H100, 2^28 f32 scan by key: 1.67x the copy at 2000 ns, 1.73 at 1000; docs/performance.md.
        scan_look_back_delay_ns: 2000,
        // As the scan's.
        look_back_delay_min_tiles: 1024,
        // H100, f32 1000-item segments: reduce 1.74 -> 1.54x the copy at 2^28, 13.5 -> 19.8 µs at 2^20.
        tile_starts_min_tiles: 1024,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;

    /// Items per thread of the segmented scans and of the segmented reduce's CSR rows
    /// (`SegmentedScanParams`) for rows of `vector` elements accumulated in `acc_bytes`-byte
    /// values: `scan_rows` rows, at most `scan_thread_bytes` of values.
    pub const fn scan_items(self, vector: usize, acc_bytes: usize) -> usize {
        let items = vector * self.scan_rows;
        let most = self.scan_thread_bytes / acc_bytes;
        if items < most { items } else { most }
    }

    /// Items per thread of the segmented reduce by offsets for values accumulated in `acc_bytes`
    /// bytes: `reduce_thread_bytes` of values, consecutive in each thread.
    pub const fn reduce_items(self, acc_bytes: usize) -> usize {
        self.reduce_thread_bytes / acc_bytes
    }

    /// Items per thread of reduce by key and unique by key for keys of `key_bytes` and values
    /// accumulated in `acc_bytes`: `reduce_by_key_thread_bytes` of the wider.
    pub const fn reduce_by_key_items(self, key_bytes: usize, acc_bytes: usize) -> usize {
        let wider = if key_bytes > acc_bytes {
            key_bytes
        } else {
            acc_bytes
        };
        self.reduce_by_key_thread_bytes / wider
    }
}

/// The histograms (`HistogramParams`): a grid-stride loop of 16-byte loads, counters per block in
/// shared memory while they fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramPolicy {
    /// Threads per block.
    pub block_threads: u32,
    /// Blocks per multiprocessor of the grid (fewer for small inputs): one wave of the blocks
    /// that fit at once, so that no partial second wave trails; each block adds its counts to
    /// the output once.
    pub blocks_per_sm: u32,
    /// 16-byte loads each thread issues before it counts them.
    pub loads_in_flight: u32,
    /// Most dynamic shared memory a privatized block takes, in bytes (its `u32` counters, and a
    /// range histogram's levels): past it, samples are counted by global atomics.
    pub max_shared_bytes: u32,
}

impl HistogramPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // As the scan's block (no sweep recorded).
        block_threads: 256,
        // H100, 256 even bins, 2^28 f32 / u32: 0.498 / 0.494x the copy at 4, 0.521 / 0.492 at 8.
        blocks_per_sm: 4,
        // Four 16-byte loads a thread in flight, as the reduce.
        loads_in_flight: 4,
        // 48 KiB: 12,288 even bins (no sweep recorded).
        max_shared_bytes: 48 * 1024,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;
}

/// The row operations (`RowParams`: softmax, log-softmax, the norms, their backward,
/// cross-entropy) and cross-entropy's count of valid targets (`TargetCountParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPolicy {
    /// Threads per block when a row takes a warp or less (several rows per block); a row of more
    /// than a warp takes a whole block of its group's size.
    pub block_threads: u32,
    /// Items of each row input a row thread holds at most. Each operation also caps the words of
    /// all its inputs together (`row_op_table!`).
    pub items: usize,
    /// Items of each row input a thread of the kernels summing the norms' weight and bias
    /// gradients holds at most (the `sums` operations of `row_op_table!`).
    pub sums_items: usize,
    /// Most threads a row of more than a warp takes (a power of two, 64 to 1024).
    pub max_group: u32,
    /// Threads a row held in registers takes when each thread holds at least
    /// `register_group_bytes` of its inputs: a block alone on its multiprocessor.
    pub wide_register_group: u32,
    /// Threads a row held in registers takes when each thread holds less.
    pub narrow_register_group: u32,
    /// Bytes of the row inputs a thread holds from which a row takes `wide_register_group`.
    pub register_group_bytes: usize,
    /// Rows of at most this many tiles of [`register_group`](Self::register_group) threads are
    /// read in such tiles; longer ones in tiles of `max_group` threads.
    pub few_tiles: usize,
    /// Row kernels held to fewer registers than the row operations' bounds (1024 threads, one
    /// block) allow (`.maxnreg`), with the limit.
    pub register_limits: &'static [(&'static str, u32)],
    /// Threads of a block of the clusters summing the norms' parameter gradients over `f32` rows
    /// that tiles of `max_group` threads would cut into fewer tiles than a cluster has blocks.
    pub sums_cluster_group: u32,
    /// Threads of a tile of the norms' summing kernels over rows of halves that one tile of more
    /// threads would hold, where tiles of this many cut the row into at most `sums_halves_tiles`.
    pub sums_halves_group: u32,
    /// Most tiles of `sums_halves_group` threads a row of halves is cut into for its summing
    /// kernel instead of one tile of more threads.
    pub sums_halves_tiles: usize,
    /// Fewest threads a row of several tiles takes
    /// ([`row_plan_fewer_threads`](crate::planning::rows::row_plan_fewer_threads)), but for
    /// `small_tile_ops`.
    pub min_tile_group: u32,
    /// Row operations whose rows go to tiles of as few as `small_tile_group` threads, rows of one
    /// tile too; below `min_tile_group` threads only while the rows, a block each, hold at least
    /// half the threads the device runs at once.
    pub small_tile_ops: &'static [&'static str],
    /// Fewest threads a tile of `small_tile_ops` takes.
    pub small_tile_group: u32,
    /// Blocks of a thread-block cluster that share one row (sm_90 and later; the sm_80 module has
    /// no cluster kernels): a row of at least this many tiles of `max_group` threads is split
    /// among them, the blocks exchanging only their statistics through distributed shared memory.
    pub cluster_blocks: u32,
    /// Threads per block of cross-entropy's count of valid targets (whole warps).
    pub target_count_block_threads: u32,
    /// Most blocks of that count (each thread strides over the targets past them).
    pub target_count_max_blocks: usize,
}

impl RowPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // Several rows of a warp or less a block (no sweep recorded).
        block_threads: 256,
        // H100, 16384 x 16384 bf16 softmax: 1.18x the copy at 16 halves a thread, 2.00 at 8.
        items: 16,
        // H100, f32 LayerNorm backward 65536 x 4096: 1.58x the copy at 8 items, 2.02 at 4.
        sums_items: 8,
        // The most threads a block has.
        max_group: 1024,
        // H100, 16384 x 16384 bf16 softmax: 1.63x the copy in four tiles of 256, 1.18 in registers.
        wide_register_group: 1024,
        // Four blocks of 256 threads a multiprocessor overlap their phases.
        narrow_register_group: 256,
        // 64 bytes (16 f32): where a block of 1024 threads alone pays for itself.
        register_group_bytes: 64,
        // H100, 4096 x 65536 bf16 softmax: 1.29x the copy in 4 tiles of 1024 threads, 1.45 in 16 of 256.
        few_tiles: 4,
        // H100, bf16 65536 x 4096 softmax: 1.034x the copy at 48 registers, 1.116 at 56.
        register_limits: &[
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
        ],
        // H100, f32 16384 x 16384 LayerNorm backward: 1.788x the copy at 256 threads, 1.935 at 1024.
        sums_cluster_group: 256,
        // H100, bf16 65536 x 4096 LayerNorm backward: 1.997x the copy in tiles of 256, 2.112 in one.
        sums_halves_group: 256,
        // Rows of 4 tiles of 256 (8192 columns) were not measured and keep their one tile.
        sums_halves_tiles: 2,
        // RMSNorm and LayerNorm ran slower in smaller tiles; docs/performance.md.
        min_tile_group: 256,
        // H100, bf16 65536 x 4096 cross-entropy: 0.650x the copy in tiles of 64 threads, 1.110 in one.
        small_tile_ops: &["cross_entropy"],
        // The tile of the cross-entropy's measurement above.
        small_tile_group: 64,
        // Portable (the limit is 8); a GPC of an H100 holds four such clusters of one block each.
        cluster_blocks: 4,
        // Whole warps (no sweep recorded).
        target_count_block_threads: 256,
        // Each thread strides over the targets past them (no sweep recorded).
        target_count_max_blocks: 1024,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80; `cluster_blocks` unused there).
    pub const SM80: Self = Self::SM90;

    /// Words of each of `inputs` row inputs a thread holds, for an operation holding at most
    /// `op_words` words of all of them and elements of `vector` per 16 bytes: the smaller of
    /// `op_words / inputs` and `items`' words (the `f32` backward and LayerNorm spilled at 16
    /// words of each input; H100, `f32` backward at 1024 to 16384 columns: 1.50-1.60x the copy at
    /// 8 words of each input, 1.70 at 16; docs/performance.md).
    pub const fn words(self, vector: usize, inputs: usize, op_words: u32) -> u32 {
        let per_input = op_words / inputs as u32;
        let most = (self.items / (vector / 4)) as u32;
        if per_input < most { per_input } else { most }
    }

    /// Words of each of `inputs` row inputs a thread of a summing kernel holds (`op_words` of all
    /// of them): [`words`](Self::words), and at most `sums_items` items.
    pub const fn sums_words(self, vector: usize, inputs: usize, op_words: u32) -> u32 {
        let words = self.words(vector, inputs, op_words);
        let most = (self.sums_items / (vector / 4)) as u32;
        if words < most { words } else { most }
    }

    /// Most threads a row held in registers takes when each thread holds `words` words of each
    /// of `inputs` row inputs: `wide_register_group` where that is `register_group_bytes` or
    /// more, else `narrow_register_group`.
    pub const fn register_group(self, words: u32, inputs: usize) -> u32 {
        if 4 * words as usize * inputs >= self.register_group_bytes {
            self.wide_register_group
        } else {
            self.narrow_register_group
        }
    }

    /// The `.maxnreg` limit of the row kernel `name`, where
    /// [`register_limits`](Self::register_limits) names it.
    pub const fn register_limit(self, name: &str) -> Option<u32> {
        let mut i = 0;
        while i < self.register_limits.len() {
            if str_eq(self.register_limits[i].0, name) {
                return Some(self.register_limits[i].1);
            }
            i += 1;
        }
        None
    }
}

/// Whether `a` and `b` are the same string (a `const fn`; the registry's checks use it too).
pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The norms' weight and bias gradients (`NormGradParams`): a partial launch over chunks of rows
/// (a thread a column), then a finish over the chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NormGradPolicy {
    /// Threads per block of both launches (the partial's one per column).
    pub block_threads: u32,
    /// Blocks the first launch aims at.
    pub blocks: usize,
    /// Columns one block of the finish takes (a warp's lanes; its `block_threads` threads split
    /// the chunks by warp).
    pub finish_columns: u32,
    /// Fewest rows a chunk sums.
    pub min_rows: usize,
}

impl NormGradPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // One thread a column (no sweep recorded).
        block_threads: 256,
        // 16 blocks per multiprocessor of a 132-multiprocessor H100, whole waves of 8 resident.
        blocks: 2048,
        // A warp's lanes, one column each.
        finish_columns: 32,
        // No sweep recorded.
        min_rows: 32,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;

    /// Dynamic shared memory of the finish, in bytes: two `f32` per thread of its block.
    pub const fn finish_shared_bytes(self) -> u32 {
        2 * 4 * self.block_threads
    }
}

/// The device-wide radix sort (`OnesweepParams`, `RadixHistogramParams`): one upfront count of
/// every pass's digits, then a onesweep pass a digit. Items per thread are per key type
/// (`sort_key_table!`); the block of one thread a digit is
/// [`SORT_BLOCK`](crate::layout::SORT_BLOCK).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortPolicy {
    /// Most tiles whose status a onesweep pass's look-back reads at once, per digit (one thread
    /// each), before adding their counts in order: a walk of `t` tiles costs `t /
    /// look_back_tiles` round trips to L2 instead of `t`.
    pub look_back_tiles: usize,
    /// Most blocks per multiprocessor the passes of keys alone are built for.
    pub keys_blocks_per_sm: u32,
    /// Most blocks per multiprocessor the passes that move values too are built for.
    pub pairs_blocks_per_sm: u32,
    /// Most blocks per multiprocessor the passes of 8-byte keys alone in their larger tiles are
    /// built for.
    pub wide_keys_blocks_per_sm: u32,
    /// Threads per block of the passes of 8-byte keys with values in their larger tiles: thread
    /// `t < RADIX_DIGITS` owns digit `t`, every thread ranks and moves its keys.
    pub wide_pairs_block_threads: u32,
    /// Threads per block of the upfront histogram.
    pub histogram_block_threads: u32,
    /// Blocks of the upfront histogram per multiprocessor (its PTX declares it).
    pub histogram_blocks_per_sm: u32,
    /// Most shared memory a block of the upfront histogram counts in, in bytes: its copies of
    /// every pass's counters ([`sort_histogram_copies`](crate::planning::sort::sort_histogram_copies)).
    pub histogram_shared_bytes: u32,
    /// 16-byte loads of keys each thread of the upfront histogram issues before it counts them.
    pub histogram_loads_in_flight: u32,
}

impl SortPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // H100, u32 keys: 59.3 µs with 4 at once at 2^20, 64.4 with 1; docs/performance.md.
        look_back_tiles: 4,
        // H100, 2^28 u32 keys: 5577 µs at 4 blocks, 6116 at 3; docs/performance.md.
        keys_blocks_per_sm: 4,
        // H100, u32 pairs at 2^28: 21.8 Gpairs/s at 2 blocks, 15.9 at 3; docs/performance.md.
        pairs_blocks_per_sm: 2,
        // H100, 2^28 keys: 2 x 24 fastest of 2 x 24, 3 x 16 and 4 x 12 for f64; docs/performance.md.
        wide_keys_blocks_per_sm: 2,
        // H200, 2^28 u64 keys with u32 values: 20187 µs in 384 x 15, 21880 in 256 x 20 (CUB 20071).
        wide_pairs_block_threads: 384,
        // No sweep recorded; the block's copies of the counters take the shared memory.
        histogram_block_threads: 1024,
        // One: its counters take the shared memory of a multiprocessor.
        histogram_blocks_per_sm: 1,
        // H100, 2^28 u32 keys: 366.8 µs with 32 copies in 128 KiB, 464 with 1; docs/performance.md.
        histogram_shared_bytes: 128 * 1024,
        // 2 keeps its loop over the keys loaded within 32 registers (16 one-byte keys a load).
        histogram_loads_in_flight: 2,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;
}

/// The segmented sort (`SegmentedSortParams`): a tier a length range, from a warp a segment in
/// registers to a block a segment; blocks of [`SORT_BLOCK`](crate::layout::SORT_BLOCK) threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedSortPolicy {
    /// Most blocks per multiprocessor the block tier is built for, but for those
    /// [`segmented_sort_blocks_per_sm`](crate::planning::sort::segmented_sort_blocks_per_sm)
    /// gives 2.
    pub blocks_per_sm: u32,
    /// Keys per lane of the warp sort (every key ranked against the segment's others in
    /// registers); segments of at most half as many take half the keys a lane.
    pub warp_sort_items: usize,
    /// Keys per lane of the warp radix tier's tile; segments of at most half a tile take a tile
    /// of half as many.
    pub warp_radix_sort_items: usize,
    /// Most blocks per multiprocessor the warp radix tier is built for.
    pub warp_radix_sort_blocks_per_sm: u32,
    /// Most warps the warp merge tier gives one segment.
    pub warp_merge_max_warps: usize,
    /// Most blocks per multiprocessor the warp merge tier is built for.
    pub warp_merge_sort_blocks_per_sm: u32,
    /// A device-wide sort's fixed time, in the keys one block of the block tier sorts by passes
    /// over global memory in that time: the host gives a segment longer than a tile to the
    /// device sort when the estimate says so (`device::sort::segmented`).
    pub device_sort_fixed_keys: usize,
    /// How many times faster a device-wide sort takes a key than one block of the block tier.
    pub device_sort_speedup: usize,
}

impl SegmentedSortPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // H100, 65536 rows of 4096 f32 keys: 3616 µs at 3 blocks, 4182 at 2; docs/performance.md.
        blocks_per_sm: 3,
        // Estimated, H100: about 640 instructions a key at 256 keys, 320 at 128; docs/performance.md.
        warp_sort_items: 4,
        // H100, 524288 rows of 512 f32 keys: 2755 µs in the warp radix tier, 9330 a block a row.
        warp_radix_sort_items: 16,
        // As the block tier's.
        warp_radix_sort_blocks_per_sm: 3,
        // Two levels of merges, written out in the kernel.
        warp_merge_max_warps: 4,
        // The warp radix tier's, whose tiles and shared memory it has.
        warp_merge_sort_blocks_per_sm: 3,
        // Estimated, not tuned: 30 µs of a small device sort (H200) / 15.5 ns a key (H100).
        device_sort_fixed_keys: 2048,
        // Estimated: about 30 Gkeys/s of the device sort against 1 / 15.5 ns; docs/performance.md.
        device_sort_speedup: 460,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;

    /// The longest segment the warp sort takes: a warp of `warp_sort_items` keys a lane.
    pub const fn warp_sort_keys(self) -> usize {
        32 * self.warp_sort_items
    }

    /// The longest segment the warp radix tier takes: one tile of its warp.
    pub const fn warp_radix_sort_keys(self) -> usize {
        32 * self.warp_radix_sort_items
    }

    /// The longest segment the warp merge tier takes: a tile of the warp radix tier for each of
    /// `warp_merge_max_warps` warps.
    pub const fn warp_merge_sort_keys(self) -> usize {
        self.warp_merge_max_warps * self.warp_radix_sort_keys()
    }
}

/// The top-k: per row by radix select (`TopKParams`, blocks of
/// [`SORT_BLOCK`](crate::layout::SORT_BLOCK) threads) and of a whole array
/// (`RadixSelectTopKParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopKPolicy {
    /// Most blocks per multiprocessor the per-row top-k is built for (its PTX declares it).
    pub blocks_per_sm: u32,
    /// Keys per thread of the per-row top-k for keys of up to 4 bytes: a row of up to `SORT_BLOCK`
    /// times this many keys stays in registers.
    pub items: usize,
    /// As `items`, for 8-byte keys.
    pub wide_items: usize,
    /// Largest `k` whose threshold (the k-th smallest of the threads' best keys) is found by
    /// sorting each warp's best keys and ranking the warps' first `k`, instead of by radix select
    /// over the threads' best keys.
    pub warp_sort_max_k: u32,
    /// Threads per block of the device-wide top-k's steps (`device_radix_select_top_k_<key>`).
    pub radix_select_block_threads: u32,
    /// Blocks of the device-wide top-k per multiprocessor (its PTX declares it; the grid is this
    /// many per multiprocessor).
    pub radix_select_blocks_per_sm: u32,
}

impl TopKPolicy {
    /// sm_90 (H100, H200).
    pub const SM90: Self = Self {
        // 64 registers a thread (no sweep recorded).
        blocks_per_sm: 4,
        // 16 keys of up to 4 bytes a thread: 4096 a row.
        items: 16,
        // 8-byte keys spill at 16 a thread under 64 registers.
        wide_items: 8,
        // The warps' first k each fit the gather's slots (checked below; no sweep recorded).
        warp_sort_max_k: 16,
        // No sweep recorded.
        radix_select_block_threads: 512,
        // Three (40 registers, 24 KiB of loads in flight); four made the u8 kernel spill (ptxas).
        radix_select_blocks_per_sm: 3,
    };
    /// sm_80 (A100): the sm_90 values (not measured on sm_80).
    pub const SM80: Self = Self::SM90;

    /// Keys per thread of the per-row top-k for keys of `key_bytes`.
    pub const fn items_for(self, key_bytes: u32) -> usize {
        if key_bytes > 4 {
            self.wide_items
        } else {
            self.items
        }
    }
}

// The warps' first k each, and the k-th after them, fit the gather's slots; a warp's first k are
// among its 32 lanes.
const _: () = {
    let max_k = crate::layout::TOP_K_SELECT_MAX_K;
    let sm80 = TopKPolicy::SM80.warp_sort_max_k;
    let sm90 = TopKPolicy::SM90.warp_sort_max_k;
    assert!(RADIX_DIGITS / 32 * sm80 < max_k && sm80 <= 32);
    assert!(RADIX_DIGITS / 32 * sm90 < max_k && sm90 <= 32);
};
