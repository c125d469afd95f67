//! Device scope: algorithms over a whole array, spread over every block of a launch.
//!
//! As in CUB, each is an *agent* function that a thin kernel entry point calls
//! ([`kernels::device`](crate::kernels)); the host picks the launch shape and passes the
//! temporary storage.
//!
//! | agent | algorithm | reads | result |
//! |---|---|---|---|
//! | [`reduce::reduce_partials`] | one partial per block, fixed partition (deterministic) | n | `partials[block]` |
//! | [`reduce::arg_reduce_partials`] | as reduce, over (value, index) pairs | n | argmin / argmax |
//! | [`reduce::dot_partials`] | as reduce, over products | 2n | dot product |
//! | [`reduce::segmented_reduce`] | one block per row | n | one value per row |
//! | [`scan::scan_tile`] | single pass, decoupled look-back ([`tile_status`]) | n | output array |
//! | [`select::select_tile`] | single pass: flags, block scan of the flags, look-back over counts, two-phase scatter | n (+ n flags) | kept items, their number |
//! | [`run_length::run_tile`] | single pass: head and tail flags, block scan of the selected heads, look-back over (runs, last start) | n | each run's item or offset, and length; their number |
//! | [`reduce_by_key::reduce_by_key_tile`] | single pass over blocked tiles: head and tail flags from key changes, block scan of (runs, open run's reduction) pairs, look-back over them, keys and reductions gathered in shared memory | 2n (keys and values) | each run's first key and reduction (or first value), their number |
//! | [`histogram::histogram_privatized`], [`histogram::histogram_global`] | per-block counters in shared memory, then one atomic per counter; or a global atomic per sample | n | counts per bin |
//! | [`segmented_scan::segmented_tile`] | single pass over the items (any segment lengths): heads from key changes or CSR offsets, block scan of (value, segment) pairs, look-back over them | n (+ n keys or the offsets) | each item's scan within its segment, or each segment's total |
//! | [`rows::row_op`] | a group of threads (a part of a warp to a block) per row: one reduction of a few `f32` statistics, then the elementwise output, the row kept in registers between them | 1 (2 past 1024 threads' registers) + 1 write | softmax, log-softmax, RMSNorm, LayerNorm, the `dx` of each backward; cross-entropy's loss and gradient |
//! | [`cross_entropy::count_valid_targets`], [`cross_entropy::mean_loss`] | a warp sum and one atomic add per warp (integers); one thread | the targets | cross-entropy's mean |
//! | [`norm_grads::norm_grads_partial`], [`norm_grads::norm_grads_finish`] | a thread per column sums a chunk of rows; then each column's chunks in order (deterministic) | 2n | a norm's `dweight`, `dbias` |
//! | [`radix_sort::radix_histogram`] | per-block digit counts of every pass in shared memory, one atomic per count | n | the sort's digit counts |
//! | [`radix_sort::onesweep_tile`] | one digit pass: block radix rank, look-back over per-digit counts (one thread per digit), scatter through shared memory | n (+ n values) | keys (and values) ordered by the digit, stably |
//! | [`segmented_sort::segmented_radix_sort`] | a block per segment: the block radix sort in shared memory for one tile, else per digit a count, a scan and the tiles in order | n (+ n values; 2n per digit past a tile) | each segment's keys (and values) sorted, or its first k |
//! | [`radix_select::count_digits`], [`radix_select::gather`], [`radix_select::load_keys`] | the device-wide top-k's steps: a count of the candidates' next digit (a shared counter a lane), the selected keys' indices (an atomic a warp), their keys | the keys grid-strided, once a step | 256 digit counts; the k indices; the k keys |
//! | [`top_k::top_k_rows`] | a block per row: radix select of the k-th key (a digit count of the candidates per pass, from the top digit), gather, order the k by counting | 1 row (a row past a tile: once per pass) | each row's k largest or smallest and their columns |
//! | [`select::reverse_tail`] | grid-stride swaps, `REVERSE_TAIL_ITEMS` pairs a thread a step, loaded before stored | the tail | a stable partition's rejected items in order |

pub mod cross_entropy;
pub mod element;
pub mod histogram;
pub mod indexed;
pub mod norm_grads;
pub mod radix_select;
pub mod radix_sort;
pub mod reduce;
pub mod reduce_by_key;
pub mod rows;
pub mod run_length;
pub mod scan;
pub mod segmented_scan;
pub mod segmented_sort;
pub mod select;
pub mod tile_status;
pub mod top_k;

pub use element::{Bf16, Element, F16, RowElement};
