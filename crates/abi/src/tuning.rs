//! Launch shapes the host picks and the kernels are built for (docs/performance.md has the
//! sweeps behind each value). Items per thread and vector widths are per element type, in
//! [`table`](crate::table).

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
/// `SELECT_BLOCK * vector width * SELECT_ROWS` elements (4096 f32). Fewer rows
/// than the scan's: the flags, ranks and gathered items take registers the scan does not need,
/// and more blocks per multiprocessor hide the look-back.
pub const SELECT_ROWS: usize = 4;
/// Nanoseconds each scan tile waits after publishing its aggregate before it looks back at its
/// predecessors, in grids of at least [`SCAN_LOOK_BACK_DELAY_MIN_TILES`] tiles.
pub const SCAN_LOOK_BACK_DELAY_NS: u32 = 3000;
/// Smaller scans look back at once: their tiles are all resident together (about one wave on
/// an H100), and the delay would only add to the call's latency.
pub const SCAN_LOOK_BACK_DELAY_MIN_TILES: usize = 1024;

/// Entry-point name prefixes of the kernels launched with [`REDUCE_BLOCK`] threads and at most
/// [`REDUCE_BLOCKS_PER_SM`] blocks per multiprocessor (the reduce's first and second passes,
/// argmin / argmax, dot). Their PTX declares those launch bounds (`.maxntid`, `.minnctapersm`,
/// written by `cargo xtask ptx`): ptxas may then give each thread the registers to keep all
/// [`REDUCE_LOADS_IN_FLIGHT`] 16-byte loads in flight instead of sizing for full occupancy.
pub const REDUCE_FAMILIES: &[&str] = &[
    "device_reduce_",
    "device_argmin_",
    "device_argmax_",
    "device_dot_",
];

/// Most blocks of [`SELECT_BLOCK`] threads per multiprocessor the compaction kernels are built for
/// (their PTX declares it, as the reduce's): the compaction is bound by the latency of each
/// tile's phases (load, block scan, look-back, gather, write), so its speed follows the tiles
/// in flight per multiprocessor, and the bound keeps ptxas from taking the registers that
/// would cost one.
pub const SELECT_BLOCKS_PER_SM: u32 = 4;

/// Entry-point name prefixes of the compaction kernels (select, unique, run-length), launched
/// with [`SELECT_BLOCK`] threads and built for at most [`SELECT_BLOCKS_PER_SM`] blocks per
/// multiprocessor.
pub const SELECT_FAMILIES: &[&str] = &[
    "device_select_if_",
    "device_select_flagged_",
    "device_unique_",
    "device_run_length_encode_",
    "device_non_trivial_runs_",
];

/// Nanoseconds each compaction tile waits after publishing its count before it looks back, in
/// grids of at least [`SCAN_LOOK_BACK_DELAY_MIN_TILES`] tiles.
pub const SELECT_LOOK_BACK_DELAY_NS: u32 = 500;

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

/// Nanoseconds each segmented tile waits after publishing its aggregate before it looks back,
/// in grids of at least [`SCAN_LOOK_BACK_DELAY_MIN_TILES`] tiles.
pub const SEGMENTED_LOOK_BACK_DELAY_NS: u32 = 1000;

/// Most blocks of [`SCAN_BLOCK`] threads per multiprocessor the segmented kernels are built for
/// (their PTX declares it): like the compaction, they are bound by the latency of each tile's
/// phases, so their speed follows the tiles in flight per multiprocessor.
pub const SEGMENTED_BLOCKS_PER_SM: u32 = 4;

/// Entry-point name prefixes of the segmented kernels (scans by key and by offsets, reduce by
/// offsets), launched with [`SCAN_BLOCK`] threads and built for at most
/// [`SEGMENTED_BLOCKS_PER_SM`] blocks per multiprocessor.
pub const SEGMENTED_FAMILIES: &[&str] = &[
    "device_scan_by_",
    "device_segmented_scan_",
    "device_segmented_reduce_by_offsets_",
    "device_segmented_argmin_",
    "device_segmented_argmax_",
];

/// From this many tiles on, a segmented call by offsets first finds every tile's first segment
/// in a small kernel of its own (`device_segment_tile_starts`) instead of each tile searching
/// the offsets on its critical path (H100, 2^28 f32, 1000-item segments: reduce 1.74 -> 1.54x
/// the copy, scan 2.02 -> 1.83x); below, the extra launch costs more than the searches (2^20:
/// reduce 13.5 -> 19.8 µs).
pub const SEGMENT_TILE_STARTS_MIN_TILES: usize = 1024;
