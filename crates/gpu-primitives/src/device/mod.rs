//! The device-wide algorithms: reduce, scan, compaction, run-length encoding, reduce and unique
//! by key, histograms, the
//! radix sort, the segmented sort and the top-k (per row and of a whole array), over whole
//! arrays with every block of the GPU.
//!
//! | function | algorithm | passes over the input | result |
//! |---|---|---|---|
//! | [`reduce`], [`reduce_into`] | per-block partials (16-byte loads, 4 in flight), then one block over the partials: the last block to finish (up to 2^22 elements, one launch) or a second launch | 1 | a value on the host (synchronises), or in device memory (stream-ordered) |
//! | [`argmin`], [`argmax`] | as reduce, over (value, index) pairs; first index on ties, NaN wins | 1 | `(value, index)` on the host |
//! | [`dot`] | as reduce, over products (f32, f64, f16, bf16) | 2 inputs | a value on the host |
//! | [`segmented_reduce`] | equal-length rows: one block per row; CSR offsets ([`SegmentOffsets`]): the segmented scan below, each segment's total written at its last item | 1 | one value per segment (stream-ordered) |
//! | [`segmented_argmin`], [`segmented_argmax`] | as the segmented reduce by offsets, over (value rank, `u32` index) keys of 8 bytes (4-byte accumulators: f32, i32, u32, f16, bf16; fewer than 2^32 items) | 1 | per segment the first smallest / largest value and its index within the segment (stream-ordered) |
//! | [`segmented_inclusive_scan`], [`segmented_exclusive_scan`], [`inclusive_scan_by_key`], [`exclusive_scan_by_key`] | single pass over the items (balanced whatever the segment lengths): heads from CSR offsets or key changes, block scan of (value, segment) pairs, look-back over them | 1 read (+ the keys or offsets) + 1 write | a device array (stream-ordered) |
//! | [`inclusive_scan`], [`exclusive_scan`], [`scan_in_place`] | single pass, decoupled look-back (Merrill & Garland 2016) | 1 read + 1 write | a device array (stream-ordered, no synchronisation) |
//! | [`select_if`], [`select_flagged`], [`unique`] | single pass: block scan of the flags, look-back over the counts, kept items gathered in shared memory and written coalesced (CUB's `DeviceSelect`) | 1 (+ the flags) + the kept items written | the kept items in input order and their number (device `u64`), stream-ordered |
//! | [`run_length_encode`], [`non_trivial_runs`] | single pass: head and tail flags, block scan of the runs' starts, look-back over (runs, last start) pairs | 1 + the runs written | each run's item (or offset) and `u32` length, their number (device `u64`), stream-ordered |
//! | [`reduce_by_key`], [`unique_by_key`] | single pass over the items in blocked tiles: heads and tails from key changes, block scan of (runs, open run's reduction) pairs, look-back over them, the tile's results gathered in shared memory and written coalesced (CUB's `ReduceByKey`, `UniqueByKey`) | 1 (keys and values) + the runs written | each run's first key and its reduction (or first value), their number (device `u64`), stream-ordered |
//! | [`histogram_even`], [`histogram_range`] | per-block `u32` counters in shared memory (16-byte loads), then one global atomic per non-zero counter; global atomics per sample past 12,288 bins | 1 | `bins` counters (`u32` / `u64`), stream-ordered |
//! | [`partition_if`], [`partition_flagged`] | as select, the rejected items from the back; a second launch reverses them into input order | 1 + n written + the rejected moved again | all items, kept first, both groups in input order (stable) |
//! | [`sort_keys`], [`sort_pairs`], [`argsort`] (and in place, double-buffered) | LSD radix sort: one upfront count of every pass's digits, then a onesweep pass a digit (Adinets and Merrill 2022); one block up to a tile | 1 + 1 read and write a digit | the sorted keys (values), stable, stream-ordered |
//! | [`segmented_sort_keys`], [`segmented_sort_pairs`], [`segmented_argsort`] | a warp, a group of warps or a block a segment by its length, the longest through the radix sort | 1 read and write (a pass a digit past a tile) | each segment sorted, stable |
//! | [`top_k`] | per row: a block a row, radix select (k up to 256), or the segmented sort's first k | 1 (a row past a tile: a pass a digit) | each row's k best and their columns |
//! | [`top_k_of_all`] | radix select over the grid: a count of the candidates' next digit a pass (the host fixes it; the index's digits break ties), a gather, two sorts of the k | 1 a pass (at most one a byte of the key; ties: one a byte of the index too) + 1 | the k best of the whole array and their `u64` indices (synchronises once a pass) |
//!
//! Element types: `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, and `half::f16` / `half::bf16`,
//! which are combined and returned in `f32` (the table in `gpu_primitives_abi::table`).
//! Operators: [`Sum`] (wrapping for integers), [`Min`], [`Max`] (NaN-propagating for floats).
//! Lengths are `usize`, past 2^31 included.
//!
//! **Inputs and outputs** are any device memory: a [`DeviceView`] / [`DeviceViewMut`] converts
//! from a [`DeviceVec`], a cust `DeviceBuffer` or `DeviceSlice`, a sub-range, or a raw device
//! address (cudarc's buffers, another library's). Inputs are never modified, except by
//! [`scan_in_place`].
//!
//! **Streams and tuning.** Every call takes a [`CallOn`](crate::CallOn): `&gpu` for the `Gpu`'s
//! own stream, or `gpu.on(&stream)?` for another (the caller's, e.g. cudarc's, through
//! `Stream::from_raw`). All its work (launches, the workspace's memsets) is queued there; calls
//! that return a value to the host synchronise that stream, the others do not. A call may also
//! carry its own launch shapes: `gpu.with_tuning(overrides)?` or
//! `gpu.on(&stream)?.with_tuning(overrides)?` ([`WithTuning`](crate::WithTuning),
//! [`TuningOverrides`](crate::TuningOverrides)), written over the process default and the tuned
//! values for that call only; they change how it is launched, not what it computes. The
//! [`TempStorage`] queries that take a GPU take the same argument, so that a tuned call's need
//! is the one asked. The `*_slice` helpers of host slices take the same argument (`&gpu`,
//! `gpu.on(&stream)?`, a tuned call): they copy the slice on the call's stream, run the call
//! there with its tuning, copy the result back on it, and synchronise it.
//!
//! **Errors of every call** (besides those its `# Errors` section names): before the workspace
//! is used or anything is queued, each view (inputs, outputs, flags, keys, values, offsets,
//! counts) is checked against the call's stream: [`Error::WrongContext`](crate::Error::WrongContext)
//! for memory of another context (a [`DeviceVec`] or runtime buffer of another GPU),
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a cudarc slice borrowed
//! (`interop::CudarcInput` / `CudarcOutput`) for another stream than the call's. Views of
//! other memory (`from_raw_parts`, cust's buffers) are the caller's word and are not checked.
//!
//! **Determinism.** The reduce uses no floating-point atomics: its partition and the order of
//! every combination depend only on `n` and the GPU (its multiprocessor count), so a float
//! reduce gives bitwise-identical results from run to run on the same GPU. The scan does not
//! promise that for floats: where each tile's look-back stops (and so how its prefix is grouped)
//! depends on timing, so float scans can differ in the last bits between runs, within the usual
//! rounding bound (CUB's decoupled look-back scan behaves the same). Integer results are exact.
//!
//! **Temporary storage.** Each call needs some device memory (per-block partials; per-tile
//! status words). A [`DeviceWorkspace`] holds it: persistent look-back state, and one scratch
//! arena carved per call; it grows once at the start of a call that needs more, never in the
//! middle of one. Pass the same one to repeated calls to avoid allocations. Each algorithm says what it needs ahead of the call
//! ([`TempStorage`], CUB's `temp_storage_bytes`): [`DeviceWorkspace::reserve_for`] allocates it
//! once, and the calls it covers allocate nothing. The `*_slice` helpers make a workspace per
//! call.

mod arg;
mod dot;
mod element;
mod histogram;
mod radix_select;
mod reduce;
mod reduce_by_key;
mod run_length;
mod scan;
mod segmented;
mod segmented_arg;
mod segmented_scan;
mod select;
mod sort;
mod temp_storage;
mod top_k;
mod workspace;

pub use arg::{argmax, argmin};
pub use dot::{DotElement, dot};
pub use element::{
    Accumulator, Affine, DeviceVec, DeviceView, DeviceViewMut, ELEMENT_NAMES, Element, Max, Min,
    OPERATOR_NAMES, Operator, ScanOperator, Sum,
};
pub(crate) use element::{Bound, check_bound};
pub use gpu_primitives_abi::layout::{DEVICE_SHARED_BYTES, select_shared_bytes};
pub use gpu_primitives_abi::params::{CompareKind, LookBackStatus};
// The tuned launch shapes are the library's own (the policies of `crate::tuning`, which a
// call's or the process's `TuningOverrides` change for a measurement); only the limits of the
// API are public.
/// The most keys one sort (and one segment of a segmented sort, and one top-k) takes.
pub use gpu_primitives_abi::layout::SORT_MAX_KEYS;
/// The largest `k` the per-row [`top_k`] takes by radix select; a larger one sorts each row.
pub use gpu_primitives_abi::layout::TOP_K_SELECT_MAX_K;
pub use histogram::{
    HISTOGRAM_SAMPLE_NAMES, HistogramCounter, HistogramLevel, HistogramSample, check_even_bins,
    check_range_levels, histogram_even, histogram_even_slice, histogram_range, histogram_range_slice,
};
pub use radix_select::top_k_of_all;
pub(crate) use reduce::launch as reduce_to_address;
pub use reduce::{reduce, reduce_into, reduce_slice};
pub use reduce_by_key::{ReduceByKeyPlan, reduce_by_key, unique_by_key};
pub use run_length::{non_trivial_runs, non_trivial_runs_slice, run_length_encode, run_length_encode_slice};
pub use scan::{
    exclusive_scan, exclusive_scan_init, inclusive_scan, inclusive_scan_init, scan_in_place, scan_slice,
};
pub use segmented::{Segments, segmented_reduce};
pub use segmented_arg::{SegmentArgElement, segmented_argmax, segmented_argmin};
pub use segmented_scan::{
    ScanKey, SegmentOffsets, exclusive_scan_by_key, inclusive_scan_by_key, segmented_exclusive_scan,
    segmented_inclusive_scan,
};
pub use select::{
    Predicate, partition_flagged, partition_flagged_slice, partition_if, partition_if_slice, select_flagged,
    select_flagged_slice, select_if, select_if_slice, unique, unique_slice,
};
pub use sort::{
    SORT_KEY_NAMES, SortKey, SortOptions, SortedIn, argsort, argsort_slice, segmented_argsort,
    segmented_sort_keys, segmented_sort_keys_in_place, segmented_sort_pairs, segmented_sort_pairs_in_place,
    sort_keys, sort_keys_double_buffer, sort_keys_in_place, sort_keys_slice, sort_pairs,
    sort_pairs_double_buffer, sort_pairs_in_place, sort_pairs_slice,
};
pub(crate) use temp_storage::Region;
pub use temp_storage::{SCRATCH_ALIGN, TempStorage};
pub use top_k::top_k;
pub(crate) use workspace::InUse;
pub use workspace::{DeviceWorkspace, LookBackTicket};

/// Inclusive (`y[i] = x[0] ⊕ ... ⊕ x[i]`) or exclusive (`y[i] = x[0] ⊕ ... ⊕ x[i-1]`, `y[0]` =
/// the identity) scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// Includes element i.
    Inclusive,
    /// Excludes element i.
    Exclusive,
}

/// The look-back delay of a single-pass kernel's grid of `tiles` tiles: `delay_ns` (a policy's
/// tuned delay, or its override) from `min_tiles` tiles on (the policy's
/// `look_back_delay_min_tiles`); 0 below, where the tiles are all resident together and the
/// delay would only add to the call's latency. Warp 0 of each tile sleeps this long after
/// publishing its aggregate before it reads the predecessors' status.
pub(crate) fn look_back_delay(tiles: usize, min_tiles: usize, delay_ns: u32) -> u32 {
    if tiles < min_tiles { 0 } else { delay_ns }
}

#[cfg(test)]
mod tests {
    use super::look_back_delay;
    use gpu_primitives_abi::tuning::ScanPolicy;

    #[test]
    fn look_back_delay_is_zero_for_small_grids_and_tuned_above() {
        let min = ScanPolicy::SM90.look_back_delay_min_tiles;
        assert_eq!(look_back_delay(0, min, 1234), 0);
        assert_eq!(look_back_delay(min - 1, min, 1234), 0);
        assert_eq!(look_back_delay(min, min, 1234), 1234);
        assert_eq!(look_back_delay(1 << 20, min, 1234), 1234);
        assert_eq!(look_back_delay(1 << 20, min, 0), 0);
    }
}
