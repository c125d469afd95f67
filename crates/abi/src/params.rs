//! One `#[repr(C)]` parameter struct per kernel family. A kernel takes its struct by value as its
//! only parameter (PTX: one `.param .align 8 .b8 name_param_0[size]`); the host passes the same
//! struct, so the order and types of the fields are written once, here.
//!
//! Pointers are device addresses; lengths count elements. The element type parameters are the
//! types as stored in device memory (the host instantiates them with `u16` where the device has
//! its `F16` / `Bf16` wrappers: the layout is the same, a pointer).

use crate::layout::Indexed;

/// What the tiles of one single-pass launch share for the decoupled look-back (Merrill and
/// Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002):
/// the status slots, the dynamic tile counter and this call's place in both. Every look-back
/// kernel's parameters hold one; the host's `DeviceWorkspace::look_back_status` gives one per
/// call (a kernel of your own that runs a library agent, such as `select_tile`, takes it the
/// same way), and the device's `TileStatus::from` reads it.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct LookBackStatus {
    /// The status slots (how many per tile: the kernel's parameters say), 16-byte aligned, every
    /// one from an epoch older than this call's.
    pub slots: *mut u64,
    /// The dynamic tile counter (one `u64`, never reset): each block takes the next tile from
    /// it, so that a tile's predecessors have started before it.
    pub tile_counter: *mut u64,
    /// The counter's value at the start of this call.
    pub tile_base: u64,
    /// This call's epoch, `1..=MAX_EPOCH`, newer than every status slot's.
    pub epoch: u32,
}

/// Device reduce, first pass (`device_reduce_<type>_<op>`), and the second pass over the
/// partials (the accumulator type's kernel with `blocks_done` null and `partials` = the result).
///
/// - `blocks_done` null: `partials[block]` = this block's part (with one block, the whole
///   reduction; `result` is not used).
/// - `blocks_done` not null (a `u32` equal to 0): the last block to finish writes `*result` and
///   resets the counter to 0.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ReduceParams<In, Acc> {
    /// `n` input elements.
    pub input: *const In,
    /// Number of input elements.
    pub n: usize,
    /// One accumulator per block.
    pub partials: *mut Acc,
    /// One accumulator (single-launch form only).
    pub result: *mut Acc,
    /// The single-launch counter, or null.
    pub blocks_done: *mut u32,
}

/// Device argmin / argmax, first pass (`device_argmin_<type>`, `device_argmax_<type>`): as
/// [`ReduceParams`] over [`Indexed`] accumulators.
pub type ArgReduceParams<In, Acc> = ReduceParams<In, Indexed<Acc>>;

/// Second pass of argmin / argmax (`device_argmin_final_<acc>`): one block, `*result` = the pair
/// the operator picks among `partials[0..n]`.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ArgFinalParams<Acc> {
    /// `n` pairs.
    pub partials: *const Indexed<Acc>,
    /// Number of pairs.
    pub n: usize,
    /// One pair.
    pub result: *mut Indexed<Acc>,
}

/// Device dot product (`device_dot_<type>`): as [`ReduceParams`] over `a[i] * b[i]`.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct DotParams<In, Acc> {
    /// `n` elements.
    pub a: *const In,
    /// `n` elements.
    pub b: *const In,
    /// Number of elements of each input.
    pub n: usize,
    /// One accumulator per block.
    pub partials: *mut Acc,
    /// One accumulator (single-launch form only).
    pub result: *mut Acc,
    /// The single-launch counter, or null.
    pub blocks_done: *mut u32,
}

/// Segmented reduce of equal-length rows (`device_segmented_reduce_<type>_<op>`):
/// `output[r]` = the reduction of row `r`.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct SegmentedReduceParams<In, Acc> {
    /// `rows * row_len` elements, row-major.
    pub input: *const In,
    /// Elements per row.
    pub row_len: usize,
    /// Number of rows.
    pub rows: usize,
    /// One accumulator per row.
    pub output: *mut Acc,
}

/// Single-pass scan with decoupled look-back (`device_scan_<type>_<op>`).
///
/// Launch: exactly one block per tile (`ceil(n / (block * items))`), the block a multiple of
/// the warp size, [`DEVICE_SHARED_BYTES`](crate::layout::DEVICE_SHARED_BYTES) of dynamic shared
/// memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ScanParams<In, Out> {
    /// `n` input elements.
    pub input: *const In,
    /// `n` outputs (may equal `input` for an in-place scan of a type scanned in itself).
    pub output: *mut Out,
    /// Null, or one value read when the kernel runs (CUB's `FutureValue`), combined before the
    /// first element: `output[i] = initial ⊕ input[0] ⊕ ... ⊕ input[i]` (inclusive),
    /// `output[0] = initial` (exclusive).
    pub initial: *const Out,
    /// Number of elements.
    pub n: usize,
    /// The tiles' look-back status: [`TILE_STATUS_BYTES`](crate::layout::TILE_STATUS_BYTES)
    /// per tile.
    pub status: LookBackStatus,
    /// Non-zero for an exclusive scan.
    pub exclusive: u32,
    /// Nanoseconds warp 0 waits before its first look-back read (0 for small grids).
    pub look_back_delay_ns: u32,
}

/// Segmented scans and reduce in one pass with decoupled look-back: the scans by key
/// (`device_scan_by_<key>_key_<type>_<op>`, heads where `keys` changes), the scans by offsets
/// (`device_segmented_scan_<type>_<op>`) and the reduce by offsets
/// (`device_segmented_reduce_by_offsets_<type>_<op>`), segment `s` being
/// `offsets[s] .. offsets[s + 1]`.
///
/// Launch: exactly `max(1, ceil(n / tile))` blocks of [`SegmentedPolicy::block_threads`](crate::tuning::SegmentedPolicy::block_threads)
/// threads, a tile being `block_threads * scan_items(vector width, accumulator bytes)` items
/// ([`SegmentedPolicy::scan_items`](crate::tuning::SegmentedPolicy::scan_items)); dynamic shared memory
/// [`segmented_shared_bytes`](crate::layout::segmented_shared_bytes) (by offsets) or
/// [`DEVICE_SHARED_BYTES`](crate::layout::DEVICE_SHARED_BYTES) (by key).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct SegmentedScanParams<In, Out, Key> {
    /// `n` input values.
    pub input: *const In,
    /// Scans: `n` outputs; reduce: one per segment.
    pub output: *mut Out,
    /// Number of input values.
    pub n: usize,
    /// By key: `n` keys (else null).
    pub keys: *const Key,
    /// By offsets: `segments + 1` non-decreasing offsets, the last at most `n` (else null).
    pub offsets: *const u64,
    /// By offsets: the number of segments, below `u32::MAX`.
    pub segments: usize,
    /// By offsets: per tile and one more, the first segment whose offset reaches the tile's
    /// first item ([`SegmentTileStartsParams`]); null: each tile searches (by key: null).
    pub tile_starts: *const u32,
    /// The tiles' look-back status: [`TILE_STATUS_BYTES`](crate::layout::TILE_STATUS_BYTES)
    /// per tile.
    pub status: LookBackStatus,
    /// Scans: non-zero for an exclusive scan.
    pub exclusive: u32,
    /// Nanoseconds warp 0 waits before its first look-back read (0 for small grids).
    pub look_back_delay_ns: u32,
}

/// Segmented argmin / argmax by CSR offsets (`device_segmented_arg{min,max}_<type>`): per segment
/// `s`, the first smallest (largest) item's value to `values[s]` and its index within the
/// segment to `indices[s]` (a NaN wins; an empty segment gets the operator's identity and
/// `u32::MAX`). Launch as [`SegmentedScanParams`] by offsets, the tile of the reduce
/// ([`SegmentedPolicy::reduce_items`](crate::tuning::SegmentedPolicy::reduce_items)).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct SegmentedArgParams<In, Acc> {
    /// `n` input values, `n < 2^32`.
    pub input: *const In,
    /// One value per segment.
    pub values: *mut Acc,
    /// One index per segment.
    pub indices: *mut u32,
    /// Number of input values.
    pub n: usize,
    /// `segments + 1` non-decreasing offsets, the last at most `n`.
    pub offsets: *const u64,
    /// The number of segments, below `u32::MAX`.
    pub segments: usize,
    /// Per tile and one more, the first segment whose offset reaches the tile's first item
    /// ([`SegmentTileStartsParams`]); null: each tile searches.
    pub tile_starts: *const u32,
    /// The tiles' look-back status: [`TILE_STATUS_BYTES`](crate::layout::TILE_STATUS_BYTES)
    /// per tile.
    pub status: LookBackStatus,
    /// Nanoseconds warp 0 waits before its first look-back read (0 for small grids).
    pub look_back_delay_ns: u32,
}

/// Where each tile of a segmented kernel by offsets starts among the segments
/// (`device_segment_tile_starts`): `starts[t]` = the first `s` with `offsets[s] >= t *
/// tile_items`, for `t` in `0 ..= tiles`. Launch: one warp per entry (any block of whole warps).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct SegmentTileStartsParams {
    /// `segments + 1` non-decreasing offsets.
    pub offsets: *const u64,
    /// The number of segments.
    pub segments: usize,
    /// Items per tile of the kernel that reads the starts.
    pub tile_items: usize,
    /// Its number of tiles.
    pub tiles: usize,
    /// `tiles + 1` values.
    pub starts: *mut u32,
}

/// Which prebuilt test `select_if` / `partition_if` apply to each item `x` (one `u32` code in
/// [`Comparison::kind`]). Floats compare as IEEE 754 does: every comparison with NaN is false
/// except [`NotEqual`](CompareKind::NotEqual); -0.0 equals +0.0. f16 / bf16 compare in f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CompareKind {
    /// `x < lo`.
    Less = 0,
    /// `x <= lo`.
    LessEqual = 1,
    /// `x > lo`.
    Greater = 2,
    /// `x >= lo`.
    GreaterEqual = 3,
    /// `x == lo`.
    Equal = 4,
    /// `x != lo`.
    NotEqual = 5,
    /// `lo <= x && x < hi`.
    InRange = 6,
    /// `x == x` (not NaN; every integer).
    NotNan = 7,
}

impl CompareKind {
    /// Every kind, in code order.
    pub const ALL: [CompareKind; 8] = [
        CompareKind::Less,
        CompareKind::LessEqual,
        CompareKind::Greater,
        CompareKind::GreaterEqual,
        CompareKind::Equal,
        CompareKind::NotEqual,
        CompareKind::InRange,
        CompareKind::NotNan,
    ];

    /// The kind of a code (`None` past the last).
    pub const fn from_code(code: u32) -> Option<Self> {
        if (code as usize) < Self::ALL.len() {
            Some(Self::ALL[code as usize])
        } else {
            None
        }
    }
}

/// A prebuilt predicate of `select_if` / `partition_if`: `kind` ([`CompareKind`] as `u32`) with
/// its operands, as stored in device memory (`u16` bits for f16 / bf16).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Comparison<T> {
    /// A [`CompareKind`] code.
    pub kind: u32,
    /// The threshold (the range's lower bound for `InRange`).
    pub lo: T,
    /// The range's upper bound (exclusive; `InRange` only).
    pub hi: T,
}

/// Stream compaction in one pass with decoupled look-back (`device_select_if_<type>`,
/// `device_select_flagged_<type>`, `device_unique_<type>`): the items kept, in input order, at
/// the front of `output`, and their number in `*num_selected`. With `partition` non-zero, the
/// rejected items fill the back of `output` in reverse input order (`device_reverse_tail_<type>`
/// then restores their order).
///
/// Launch: exactly one block of [`SelectPolicy::block_threads`](crate::tuning::SelectPolicy::block_threads) threads per tile of
/// `block_threads * vector width * rows` elements, [`select_shared_bytes`](crate::layout::select_shared_bytes)
/// of dynamic shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct SelectParams<T> {
    /// `n` input elements.
    pub input: *const T,
    /// `n` flags (`select_flagged` only; non-zero keeps the item), else null.
    pub flags: *const u8,
    /// `n` outputs when partitioning, at least the number selected otherwise; not `input`.
    pub output: *mut T,
    /// One `u64`: the number selected, written by the last tile.
    pub num_selected: *mut u64,
    /// Number of elements.
    pub n: usize,
    /// Nanoseconds warp 0 waits before its first look-back read (0 for small grids).
    pub look_back_delay_ns: u32,
    /// Non-zero: write the rejected items too (partition). In the high half of an 8-byte word:
    /// the back end then tests it as one 64-bit compare and keeps the two gathers (select,
    /// partition) apart; in a low half it hoists their common bit tests above the branch, and
    /// the kernels of 4-byte or of 2-byte items (by where the word falls) spill under
    /// `SelectPolicy::blocks_per_sm`'s 64 registers (ptxas sm_80 and sm_90, 24 to 188 bytes).
    pub partition: u32,
    /// `select_if` only: the test each item must pass (at an 8-byte offset: the
    /// back end reads a parameter that straddles 8-byte words through local memory).
    pub predicate: Comparison<T>,
    /// The tiles' look-back status: [`TILE_STATUS_BYTES`](crate::layout::TILE_STATUS_BYTES)
    /// per tile.
    pub status: LookBackStatus,
}

/// Second pass of a stable partition (`device_reverse_tail_<type>`): reverse
/// `data[*begin..n]` in place. Any grid; each thread swaps pairs in a grid-stride loop.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ReverseTailParams<T> {
    /// `n` elements.
    pub data: *mut T,
    /// Number of elements.
    pub n: usize,
    /// One `u64` at most `n`: where the reversed part starts.
    pub begin: *const u64,
}

/// Device histogram (`device_histogram_even_<sample>_<counter>`,
/// `device_histogram_range_<sample>_<counter>`): adds to `histogram[b]` the number of samples
/// that fall in bin `b` (the host clears the counters first). A sample `x` (compared as its
/// level type `L`: `i64` for integers, `f32` for f32 / f16 / bf16, `f64` for f64) is counted
/// when `levels[0] <= x < levels[bins]`; NaN never is.
///
/// - **Even** bins over `[lower, upper)`: integers go to `(x - lower) * bins / (upper - lower)`
///   exactly; floats to `min((x - lower) * scale, bins - 1)` rounded down, computed in `L`
///   with the host's `scale` (`bins / (upper - lower)` rounded to `L`).
/// - **Range**: `levels` holds `bins + 1` sorted levels; bin `b` is `[levels[b], levels[b + 1])`.
///
/// Launch: any grid (blocks stride over 16-byte vectors of samples), blocks of
/// [`HistogramPolicy::block_threads`](crate::tuning::HistogramPolicy::block_threads) threads; with `privatized`,
/// [`histogram_shared_bytes`](crate::layout::histogram_shared_bytes) of dynamic shared memory
/// (each block counts in shared memory, then adds its counts to `histogram`), else none (every
/// sample is an atomic add to `histogram`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct HistogramParams<T, L, C> {
    /// `n` samples.
    pub samples: *const T,
    /// `bins` counters.
    pub histogram: *mut C,
    /// Range only: `bins + 1` sorted levels (else null).
    pub levels: *const L,
    /// Number of samples.
    pub n: usize,
    /// Even only: the lowest level (included).
    pub lower: L,
    /// Even only: the highest level (excluded).
    pub upper: L,
    /// Even only: `bins / (upper - lower)` in `L` (floats), or in f64 (integers: the estimate
    /// the exact quotient starts from), widened to f64.
    pub scale: f64,
    /// Number of bins, at least 1.
    pub bins: u32,
    /// Non-zero: count in shared memory per block (the levels of a range histogram there too).
    pub privatized: u32,
}

/// Run-length encoding in one pass with decoupled look-back (`device_run_length_encode_<type>`,
/// `device_non_trivial_runs_<type>`). A run is a maximal stretch of equal items (compared with
/// `==` in the accumulator type: -0.0 equals +0.0, NaN equals nothing).
///
/// - Encode: `unique[r]` = run `r`'s item, `lengths[r]` = its length, for every run.
/// - Non-trivial runs: `offsets[r]` = where run `r` of those longer than one item starts,
///   `lengths[r]` its length.
///
/// `*num_runs` = the number of runs written (by the last tile). Offsets and lengths are `u32`:
/// `n` is below 2^32.
///
/// Launch: exactly one block of [`SelectPolicy::block_threads`](crate::tuning::SelectPolicy::block_threads) threads per tile of
/// `block_threads * run_items(vector width)` elements ([`SelectPolicy::run_items`](crate::tuning::SelectPolicy::run_items)),
/// [`run_layout`](crate::layout::run_layout)`.total` bytes of dynamic shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct RunParams<T> {
    /// `n` input elements.
    pub input: *const T,
    /// Encode only: room for every run's item (else null).
    pub unique: *mut T,
    /// Non-trivial runs only: room for every run's offset (else null).
    pub offsets: *mut u32,
    /// Room for every run's length.
    pub lengths: *mut u32,
    /// One `u64`: the number of runs, written by the last tile.
    pub num_runs: *mut u64,
    /// Number of elements, below 2^32.
    pub n: usize,
    /// The tiles' look-back status: [`TILE_STATUS_BYTES`](crate::layout::TILE_STATUS_BYTES)
    /// per tile.
    pub status: LookBackStatus,
    /// Nanoseconds warp 0 waits before its first look-back read (0 for small grids).
    pub look_back_delay_ns: u32,
}

/// Reduce by key and unique by key in one pass with decoupled look-back
/// (`device_reduce_by_key_<key>_<type>_<op>`): for each run of equal consecutive keys (compared
/// by their bits), `unique_keys[r]` = run `r`'s first key and either `reductions[r]` = the
/// reduction of its values with the operator (reduce by key) or `firsts[r]` = its first value
/// (unique by key, `unique` non-zero; the operator is unused). `*num_runs` = the number of runs
/// (written by the last tile). Counts are `u32`: `n` is below 2^32.
///
/// Launch: exactly `ceil(n / tile)` blocks (`n > 0`) of
/// [`SegmentedPolicy::block_threads`](crate::tuning::SegmentedPolicy::block_threads) threads, a tile being `block_threads *`
/// [`SegmentedPolicy::reduce_by_key_items`](crate::tuning::SegmentedPolicy::reduce_by_key_items)`(key bytes, accumulator bytes)`
/// items; [`reduce_by_key_layout`](crate::layout::reduce_by_key_layout)`.total` bytes of dynamic
/// shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ReduceByKeyParams<Key, In, Acc> {
    /// `n` keys.
    pub keys: *const Key,
    /// `n` values.
    pub values: *const In,
    /// Room for every run's first key.
    pub unique_keys: *mut Key,
    /// Reduce by key: room for every run's reduction (else null).
    pub reductions: *mut Acc,
    /// Unique by key: room for every run's first value (else null).
    pub firsts: *mut In,
    /// One `u64`: the number of runs, written by the last tile.
    pub num_runs: *mut u64,
    /// Number of items, 1 to 2^32 - 1.
    pub n: usize,
    /// The tiles' look-back status: [`TILE_STATUS_BYTES`](crate::layout::TILE_STATUS_BYTES)
    /// per tile.
    pub status: LookBackStatus,
    /// Nanoseconds warp 0 waits before its first look-back read (0 for small grids).
    pub look_back_delay_ns: u32,
    /// Non-zero: unique by key.
    pub unique: u32,
}

/// Row operations over a row-major `rows x cols` matrix (`device_rows_<op>_<type>_w<words>`,
/// `row_op_table!`): one group of `group` threads per row at a time.
///
/// - Forward (softmax, log-softmax, RMSNorm, LayerNorm): `input` is `x`, `output` is `y`.
/// - Backward of softmax / log-softmax: `input` is the forward's output `y`, `grad` is `dy`,
///   `output` is `dx`.
/// - Norms: `weight` / `bias` hold `cols` values each, or are null (1 and 0); `mean` / `rstd`
///   receive one `f32` per row (LayerNorm both, RMSNorm `rstd`), or are null.
/// - Norms' backward: `input` is `x`, `grad` is `dy`, `output` is `dx`; `mean` (LayerNorm;
///   null for RMSNorm) and `rstd` are read, one per row.
/// - Cross-entropy: `input` is the logits (a column per class), `targets` one class per row,
///   `loss` receives each row's loss (or is null), `output` the gradient with respect to the
///   logits (or is null: loss only), scaled by `1 / *valid_targets` where that is not null (the
///   mean), else by 1.
///
/// Launch: `block` threads with `group` dividing it (a power of two, `1..=1024`; a group of more
/// than a warp is the whole block), any grid (the groups stride over the rows),
/// [`ROW_SHARED_BYTES`](crate::layout::ROW_SHARED_BYTES) of dynamic shared memory. The thread
/// mapping the host picks is [`row_plan`](crate::planning::rows::row_plan).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct RowParams<T> {
    /// `rows * cols` elements.
    pub input: *const T,
    /// Backward: `rows * cols` elements of `dy` (else null).
    pub grad: *const T,
    /// `cols` elements, or null.
    pub weight: *const T,
    /// `cols` elements, or null.
    pub bias: *const T,
    /// `rows * cols` elements, never one of the inputs; or null (cross-entropy's loss only).
    pub output: *mut T,
    /// One value per row, or null.
    pub mean: *mut f32,
    /// One value per row, or null.
    pub rstd: *mut f32,
    /// Cross-entropy: one target class per row (else null).
    pub targets: *const i64,
    /// Cross-entropy: one loss per row, or null.
    pub loss: *mut f32,
    /// Cross-entropy's mean: the number of rows whose target is not `ignore_index`, or null.
    pub valid_targets: *const u32,
    /// The norms' backward: where each group of threads writes its sums of the weight's and
    /// bias's gradients over the rows it took (the partials of [`NormGradParams`], a chunk per
    /// group: `grid * block / group` groups of a warp or less, else `grid`), or null. Only
    /// while a tile holds the row (`row_plan`'s `tiles` 1); the launch then gives
    /// [`row_column_sums_bytes`](crate::layout::row_column_sums_bytes) more shared memory.
    pub column_partials: *mut f32,
    /// Number of rows.
    pub rows: usize,
    /// Elements per row, at least 1.
    pub cols: usize,
    /// Cross-entropy: the target of rows that take no part (loss and gradient 0).
    pub ignore_index: i64,
    /// Threads per row.
    pub group: u32,
    /// Where the row is read in more than one tile (a group of the whole block), how many of
    /// its first tiles the block keeps in dynamic shared memory, past `ROW_SHARED_BYTES`,
    /// between its reduction and its output instead of reading them again (their bytes:
    /// [`row_staged_tiles_bytes`](crate::layout::row_staged_tiles_bytes)); 0 reads every tile
    /// but the last again. Never with `column_partials` (which need one tile).
    pub shared_tiles: u32,
    /// Norms: added to the variance (LayerNorm) or the mean square (RMSNorm).
    pub eps: f32,
    /// Cross-entropy: the label smoothing, in `[0, 1]`.
    pub smoothing: f32,
}

/// The gradients of a norm's weight and bias, reduced over the rows of a row-major
/// `rows x cols` matrix (`device_rows_norm_grads_partial_<type>`, then
/// `device_rows_norm_grads_finish_<type>`, one per row type of `row_table!`):
/// `dweight[c] = sum_r dy[r][c] * x^[r][c]` and `dbias[c] = sum_r dy[r][c]`, with
/// `x^ = (x - mean_r) * rstd_r` (LayerNorm) or `x * rstd_r` (RMSNorm: `mean` null).
///
/// - The partial launch: block `b` of [`NormGradPolicy::block_threads`](crate::tuning::NormGradPolicy::block_threads)
///   threads sums the rows of chunk `b / column_blocks` (`rows_per_chunk` rows from
///   `chunk * rows_per_chunk`) for the columns of block `b % column_blocks`, one thread per
///   column, into `partials`; `chunks * column_blocks` blocks, no shared memory.
/// - The finish launch: `cols.div_ceil(finish_columns)` blocks of
///   [`NormGradPolicy::block_threads`](crate::tuning::NormGradPolicy::block_threads) threads and
///   [`NormGradPolicy::finish_shared_bytes`](crate::tuning::NormGradPolicy::finish_shared_bytes) of dynamic
///   shared memory add each column's `chunks` partials (warp `w` of the block chunks
///   `w, w + warps, ...`, then the warps' sums in order) and write `dweight` / `dbias` (each null
///   or `cols` elements), rounded to `T`. The row kernel of the norms' backward may have written
///   the partials instead (`RowParams::column_partials`, a chunk per group of threads).
///
/// The order of every addition depends only on `rows`, `cols` and
/// [`norm_grad_chunks`](crate::planning::rows::norm_grad_chunks): the results are deterministic.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct NormGradParams<T> {
    /// `x`: `rows * cols` elements.
    pub input: *const T,
    /// `dy`: `rows * cols` elements.
    pub grad: *const T,
    /// LayerNorm's saved mean per row (`rows` values), or null (RMSNorm).
    pub mean: *const f32,
    /// The saved `rstd` per row (`rows` values).
    pub rstd: *const f32,
    /// `2 * chunks * cols` `f32`: chunk `k`'s (dweight, dbias) sums of column `c` at
    /// `2 * (k * cols + c)`.
    pub partials: *mut f32,
    /// `cols` elements, or null.
    pub dweight: *mut T,
    /// `cols` elements, or null.
    pub dbias: *mut T,
    /// Number of rows.
    pub rows: usize,
    /// Elements per row, at least 1 and below 2^31.
    pub cols: usize,
    /// Rows per chunk, at least 1.
    pub rows_per_chunk: usize,
    /// Number of chunks: `rows.div_ceil(rows_per_chunk)`, at least 1.
    pub chunks: u32,
    /// Blocks across the columns: `cols.div_ceil(block_threads)`.
    pub column_blocks: u32,
}

/// Cross-entropy's mean over the rows whose target is not the ignore index
/// (`device_rows_cross_entropy_count`, then `device_rows_cross_entropy_mean`, one thread):
/// the count adds the valid targets of `targets` into `*valid_targets` (zeroed before; any grid,
/// any block of whole warps); the mean divides `*loss` (the sum of the rows' losses) by it
/// (NaN when it is 0, as PyTorch's mean over nothing).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TargetCountParams {
    /// One target class per row.
    pub targets: *const i64,
    /// Number of rows.
    pub rows: usize,
    /// The target of rows that take no part.
    pub ignore_index: i64,
    /// The count, zeroed before the count launch.
    pub valid_targets: *mut u32,
    /// The loss: the sum of the rows' losses before the mean launch, their mean after.
    pub loss: *mut f32,
}

/// The radix sort's upfront count (`device_radix_sort_histogram_<key>`): adds to
/// `histogram[p * RADIX_DIGITS + d]` the number of keys whose digit of pass `p` is `d` (the
/// host clears the counters first), for every pass at once (Onesweep's first kernel).
///
/// A key's digits are taken from its *ordered bits* (the unsigned image that keeps the key's
/// order, inverted when `descending` is non-zero): pass `p` takes bits `begin_bit + 8 p ..
/// min(begin_bit + 8 (p + 1), end_bit)`.
///
/// Launch: any grid, [`SortPolicy::histogram_block_threads`](crate::tuning::SortPolicy::histogram_block_threads) threads,
/// [`sort_histogram_shared_bytes`](crate::layout::sort_histogram_shared_bytes) of dynamic
/// shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct RadixHistogramParams<K> {
    /// `n` keys.
    pub keys: *const K,
    /// Number of keys.
    pub n: usize,
    /// `passes * RADIX_DIGITS` counters (`u32`: `n` is below 2^32), zero before the launch.
    pub histogram: *mut u32,
    /// First bit of the ordered bits the sort compares.
    pub begin_bit: u32,
    /// One past the last bit compared (at most the key's width).
    pub end_bit: u32,
    /// Non-zero: sort in descending order (the ordered bits are inverted).
    pub descending: u32,
    /// Passes of [`RADIX_BITS`](crate::layout::RADIX_BITS) bits over `begin_bit .. end_bit`.
    pub passes: u32,
    /// Copies of each digit's counter a block keeps, a power of two up to 32
    /// ([`sort_histogram_copies`](crate::planning::sort::sort_histogram_copies)).
    pub copies: u32,
}

/// The segmented radix sort (`device_segmented_radix_sort_<values>_<key>`,
/// `device_segmented_warp_merge_sort_<values>_<key>`,
/// `device_segmented_warp_radix_sort_<values>_<key>`, `device_segmented_warp_sort_<values>_<key>`):
/// each segment of the launch's length range (`shortest ..= longest`) sorted by bits
/// `begin_bit .. end_bit` of its keys' ordered bits, stably (the values moving with them): by
/// one warp (the warp sort, the warp radix tier), by a group of warps (the warp merge tier), or
/// by one block: a segment of at most one tile (`SORT_BLOCK * items` keys: `sort_key_table!`'s
/// items) in shared memory, a longer one by one pass over global memory per digit, through the
/// scratch buffers.
///
/// Segment `s` is `offsets[s] .. offsets[s + 1]`, or with null `offsets` the row
/// `s * row_len .. (s + 1) * row_len`. Its sorted keys go to the same positions of `keys_out`,
/// or with `keep` below `usize::MAX` its first `min(keep, len)` to `s * keep ..` (top-k).
///
/// Launch: [`SORT_BLOCK`](crate::layout::SORT_BLOCK) threads, a block a segment (block `b`
/// sorts segment `first_segment + b`; more segments than a grid holds take a launch each
/// chunk), [`segmented_sort_layout`](crate::layout::segmented_sort_layout)`.total` bytes of
/// dynamic shared memory for the kernel's tile; the warp sort: a warp a segment, 8 a block,
/// no shared memory; the warp radix tier: a warp a segment, 8 a block, and the warp merge
/// tier: a group of 2 or 4 warps a segment (`warp_merge_warps` of the launch's `longest`), each
/// with
/// [`warp_radix_sort_layout`](crate::layout::warp_radix_sort_layout)`.total` bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct SegmentedSortParams<K, V> {
    /// The keys, read: every segment's.
    pub keys_in: *const K,
    /// The sorted keys, written; may be `keys_in` (in place) unless `keep` is set.
    pub keys_out: *mut K,
    /// The values, read (pairs, unless `index_values`), or null.
    pub values_in: *const V,
    /// The values written (pairs), or null; may be `values_in`.
    pub values_out: *mut V,
    /// Two buffers of `scratch_len` keys, `keys_scratch` and `keys_scratch + scratch_len`,
    /// indexed as the input: the passes of segments longer than a tile alternate between them.
    /// Null when no segment is longer than a tile.
    pub keys_scratch: *mut K,
    /// As `keys_scratch`, for the values (pairs).
    pub values_scratch: *mut V,
    /// Keys of each scratch buffer: at least the last segment's end.
    pub scratch_len: usize,
    /// `segments + 1` non-decreasing offsets, or null for rows of `row_len`.
    pub offsets: *const u64,
    /// The rows' length (with null `offsets`).
    pub row_len: usize,
    /// Number of segments.
    pub segments: usize,
    /// The segment of this launch's block 0.
    pub first_segment: usize,
    /// Keys written per segment, at `s * keep` (top-k), or `usize::MAX`: all, in place.
    pub keep: usize,
    /// This launch sorts the segments of `shortest ..= longest` keys and leaves the others
    /// alone: the segments are split by length between the warp sort, the warp radix, the warp
    /// merge and the block kernels (each launched over all of them) and the device-wide sort
    /// (the longest, by the host). The warp sort's range is always `0 ..=`
    /// [`SegmentedSortPolicy::warp_sort_keys`](crate::tuning::SegmentedSortPolicy::warp_sort_keys) (it does not read
    /// these); the warp merge kernel's at most
    /// [`SegmentedSortPolicy::warp_merge_sort_keys`](crate::tuning::SegmentedSortPolicy::warp_merge_sort_keys).
    pub shortest: usize,
    /// See `shortest`.
    pub longest: usize,
    /// First bit of the ordered bits compared.
    pub begin_bit: u32,
    /// One past the last bit compared.
    pub end_bit: u32,
    /// Non-zero: descending order.
    pub descending: u32,
    /// Non-zero: the values are the keys' indices within their segment (`values_in` is not
    /// read).
    pub index_values: u32,
}

/// Top-k of equal rows by radix select (`device_top_k_<key>`): per row of `row_len` keys, the
/// `k` largest (or smallest) in order, ties to the lower column. One block per row finds the
/// k-th key's ordered bits one 8-bit digit at a time from the top (a count of the candidates'
/// digits per pass), gathers the keys before it and the first of its ties, and orders those `k`.
///
/// Launch: [`SORT_BLOCK`](crate::layout::SORT_BLOCK) threads, a block a row (`rows` blocks;
/// more rows than a grid holds take a launch each chunk, `keys` and the outputs moved on),
/// [`top_k_layout`](crate::layout::top_k_layout)`.total` bytes of dynamic shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TopKParams<K> {
    /// `rows * row_len` keys, read.
    pub keys: *const K,
    /// `rows * k` keys written: row `r`'s at `r * k ..`, best first.
    pub values_out: *mut K,
    /// `rows * k` columns written, beside `values_out`.
    pub indices_out: *mut u32,
    /// Number of rows.
    pub rows: usize,
    /// Keys per row, below 2^32.
    pub row_len: usize,
    /// Keys kept per row: 1 to [`TOP_K_SELECT_MAX_K`](crate::layout::TOP_K_SELECT_MAX_K), at
    /// most `row_len`.
    pub k: u32,
    /// Non-zero: the largest keys (the order of a descending sort), else the smallest.
    pub largest: u32,
}

/// The steps of the device-wide top-k ([`RadixSelectTopKParams::step`]).
pub mod radix_select_step {
    /// Count the next digit of every key still a candidate into `counts`.
    pub const COUNT_DIGITS: u32 = 0;
    /// Write the index of every key selected to `indices`, in no order.
    pub const GATHER: u32 = 1;
    /// Load the key of each of the `k` indices into `values_out`.
    pub const LOAD_KEYS: u32 = 2;
}

/// One step of the device-wide top-k by radix select (`device_radix_select_top_k_<key>`; CUB's
/// `DeviceTopK`, the method of RadiK, Li et al., ICS 2024): the `k` smallest of `n` keys in
/// the order of the pair (ordered bits, inverted for the largest; index), which is the order
/// of a stable sort. The host fixes the pair's bits from the top one 8-bit digit at a time:
/// the key's from `key_shift` up are `key_prefix`, then the index's from `index_shift` up are
/// `index_prefix` (nothing of the index is fixed before the key's bits all are).
///
/// - [`COUNT_DIGITS`](radix_select_step::COUNT_DIGITS): each key whose fixed bits equal the
///   prefixes adds one to `counts[d]`, `d` its next digit (the key's below `key_shift` while
///   `key_shift > 0`, else the index's below `index_shift`).
/// - [`GATHER`](radix_select_step::GATHER): each key whose fixed bits are at most the prefixes
///   (the pair's order) is selected: its index plus `index_offset` is written at
///   `indices[atomicAdd(gathered, 1)]`, not past `k` places.
/// - [`LOAD_KEYS`](radix_select_step::LOAD_KEYS): `values_out[j] = keys[indices[j] -
///   index_offset]` for `j < k`.
///
/// Launch: [`TopKPolicy::radix_select_block_threads`](crate::tuning::TopKPolicy::radix_select_block_threads) threads, any grid (the
/// keys grid-strided), [`radix_select_shared_bytes`](crate::layout::radix_select_shared_bytes)
/// of dynamic shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct RadixSelectTopKParams<K> {
    /// `n` keys, read.
    pub keys: *const K,
    /// Number of keys, below 2^32.
    pub n: usize,
    /// [`RADIX_DIGITS`](crate::layout::RADIX_DIGITS) counters, added to (`COUNT_DIGITS`).
    pub counts: *mut u32,
    /// One counter of the indices written, zeroed before `GATHER`.
    pub gathered: *mut u32,
    /// `k` places: written by `GATHER`, read by `LOAD_KEYS`.
    pub indices: *mut u64,
    /// `k` keys written by `LOAD_KEYS`.
    pub values_out: *mut K,
    /// Places of `indices` and `values_out`.
    pub k: usize,
    /// Added to a key's index (`0 .. n`) where it is written.
    pub index_offset: u64,
    /// The key's ordered bits from `key_shift` up, shifted down.
    pub key_prefix: u64,
    /// The key bits fixed: those from `key_shift` (a multiple of 8, at most the key's width).
    pub key_shift: u32,
    /// The index bits fixed from `index_shift` up, shifted down.
    pub index_prefix: u32,
    /// The index bits fixed: those from `index_shift` (a multiple of 8, at most 32; every
    /// index is below `2^index_shift` at the start).
    pub index_shift: u32,
    /// Non-zero: the largest keys (the order of a descending sort), else the smallest.
    pub largest: u32,
    /// One of [`radix_select_step`].
    pub step: u32,
}

/// One digit pass of the radix sort (`device_radix_sort_onesweep_<values>_<key>`): moves the
/// `n` keys (and values) to their places in the order of this pass's digit, stably, from
/// `keys_in` to `keys_out`. Each tile ranks its keys by digit in shared memory and finds where
/// each digit's keys go by decoupled look-back over the preceding tiles' counts per digit
/// (Adinets and Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs",
/// 2022).
///
/// Launch: exactly one block of [`onesweep_threads`](crate::planning::sort::onesweep_threads) threads
/// ([`SORT_BLOCK`](crate::layout::SORT_BLOCK), or 384 for the larger tiles of 8-byte keys with
/// values) per tile of that many times [`onesweep_items`](crate::planning::sort::onesweep_items) keys,
/// [`onesweep_layout`](crate::layout::onesweep_layout)`.total`
/// bytes of dynamic shared memory.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct OnesweepParams<K, V> {
    /// `n` keys, read.
    pub keys_in: *const K,
    /// `n` keys, written; not overlapping `keys_in`.
    pub keys_out: *mut K,
    /// `n` values (pairs), or null: with `index_values` the values are the keys' indices, and
    /// without values (the `keys` kernels) nothing is read.
    pub values_in: *const V,
    /// `n` values written (pairs), or null (keys only); not overlapping `values_in`.
    pub values_out: *mut V,
    /// Number of keys, below 2^32.
    pub n: usize,
    /// This pass's [`RADIX_DIGITS`](crate::layout::RADIX_DIGITS) counts of the whole input (the
    /// histogram kernel's row for the pass).
    pub histogram: *const u32,
    /// The tiles' look-back status for this pass: [`RADIX_DIGITS`](crate::layout::RADIX_DIGITS)
    /// status words (8 bytes) per tile, each `epoch << 2 | state` over a `u32` count.
    pub status: LookBackStatus,
    /// First bit of this pass's digit in the ordered bits.
    pub shift: u32,
    /// Bits of this pass's digit (1 to [`RADIX_BITS`](crate::layout::RADIX_BITS)).
    pub digit_bits: u32,
    /// Non-zero: descending order (as [`RadixHistogramParams::descending`]).
    pub descending: u32,
    /// Non-zero: the values are the keys' indices in `keys_in` (`values_in` is not read).
    pub index_values: u32,
    /// Tiles whose status the look-back reads at once, 1 to
    /// [`SortPolicy::look_back_tiles`](crate::tuning::SortPolicy::look_back_tiles)
    /// ([`onesweep_look_back_tiles`](crate::planning::sort::onesweep_look_back_tiles)).
    pub look_back_tiles: u32,
}
