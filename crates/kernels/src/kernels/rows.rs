//! Row-operation entry points, generated from the row tables of `gpu-primitives-abi` (`table`):
//! per element type and words per thread (`row_table!`) and operation (`row_op_table!`),
//! `device_rows_<op>_<type>_w<words>` (with `_tiled` and, in the sm_90 module, `_cluster`
//! variants for rows of several tiles), each calling [`row_op`] with [`RowParams`] and
//! [`ROW_SHARED_BYTES`](gpu_primitives_abi::layout::ROW_SHARED_BYTES) of dynamic shared memory;
//! the entries of more words than `ROWS.words` (`ROWS.sums_words`) gives the operation are never launched and trap
//! (compiled, they only spilled); per element type the two launches of the norms' weight and
//! bias gradients, `device_rows_norm_grads_{partial,finish}_<type>` ([`NormGradParams`]); and
//! cross-entropy's count of valid targets and mean ([`TargetCountParams`]).

use crate::device::cross_entropy::{count_valid_targets, mean_loss};
use crate::device::norm_grads::{norm_grads_finish, norm_grads_partial};
use crate::device::rows::{
    CrossEntropy, LayerNorm, LayerNormBackward, LayerNormBackwardSums, LogSoftmax, LogSoftmaxBackward,
    RmsNorm, RmsNormBackward, RmsNormBackwardSums, RowOp, Softmax, SoftmaxBackward, row_op, row_tiles,
};
use crate::policy::ROWS;
use crate::shared::dynamic_shared;
use gpu_primitives_abi::params::{NormGradParams, RowParams, TargetCountParams};
use gpu_primitives_abi::{kernel_name, row_kernel_name, row_op_table, row_table};

macro_rules! row_entries_per_words {
    ($op:ident, $Op:ty, $name:ident, $ty:ty, $vec:literal, $inputs:literal, $op_words:literal,
     $tiled_words:literal, $paths:ident, [$($words:literal),*]) => {$(
        const _: () = {
            /// # Safety
            /// As `row_op`, with the launch [`RowParams`] describes.
            #[unsafe(export_name = row_kernel_name!($op, $name, $words))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RowParams<$ty>) {
                // Rows of several tiles too (`any`), or of one tile only (`split`, `sums`: those
                // go to the `_tiled` kernel).
                let any_tiles = row_paths!($paths);
                if $words > row_most_words!($paths, $vec, $inputs, $op_words)
                    || (!any_tiles && row_tiles::<$ty, $words>(&p) != 1)
                {
                    // SAFETY: ends the launch with an error. More words than the operation's
                    // threads hold (`ROWS.words`, or `ROWS.sums_words` for the summing kernels:
                    // `row_plan` and `row_sums_plan` never pick this kernel), or a row
                    // of several tiles for a one-tile kernel (`rows::launch` never asks).
                    unsafe { core::arch::nvptx::trap() };
                } else if any_tiles {
                    // SAFETY: the launch provides ROW_SHARED_BYTES of dynamic shared memory, and
                    // the rest is forwarded from the kernel's contract.
                    unsafe { row_op::<$ty, $Op, $words, true, true, false>(&p, dynamic_shared(0)) };
                } else {
                    // SAFETY: the launch provides ROW_SHARED_BYTES of dynamic shared memory;
                    // rows of one tile (tested above); the rest is forwarded from the kernel's
                    // contract.
                    unsafe { row_op::<$ty, $Op, $words, true, false, false>(&p, dynamic_shared(0)) };
                }
            }
        };
        row_tiled_entry!($paths, $op, $Op, $name, $ty, $vec, $inputs, $tiled_words, $words);
        row_cluster_entry!($paths, $op, $Op, $name, $ty, $vec, $inputs, $op_words, $tiled_words, $words);
    )*};
}

/// Whether a `row_op_table!` operation's `_w<words>` kernel takes rows of several tiles.
macro_rules! row_paths {
    (any) => {
        true
    };
    (split) => {
        false
    };
    (sums) => {
        false
    };
}

/// The most words of each input a `row_op_table!` operation's one-tile kernel holds: `sums`
/// operations (the kernels summing the norms' parameter gradients) hold at most
/// `RowPolicy::sums_items` items of each.
macro_rules! row_most_words {
    (sums, $vec:literal, $inputs:literal, $op_words:literal) => {
        ROWS.sums_words($vec, $inputs, $op_words)
    };
    ($paths:ident, $vec:literal, $inputs:literal, $op_words:literal) => {
        ROWS.words($vec, $inputs, $op_words)
    };
}

/// The `_w<words>_tiled` kernel of a `split` or `sums` operation: rows of several tiles of
/// `ROWS.words` of its `tiled_words`.
macro_rules! row_tiled_entry {
    (any, $($rest:tt)*) => {};
    ($paths:ident, $op:ident, $Op:ty, $name:ident, $ty:ty, $vec:literal, $inputs:literal, $tiled_words:literal, $words:literal) => {
        const _: () = {
            /// # Safety
            /// As `row_op`, with the launch [`RowParams`] describes.
            #[unsafe(export_name = row_kernel_name!($op, $name, $words, tiled))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RowParams<$ty>) {
                if $words > ROWS.words($vec, $inputs, $tiled_words) {
                    // SAFETY: ends the launch with an error, as in the one-tile kernel (more
                    // words than the operation's tiles hold).
                    unsafe { core::arch::nvptx::trap() };
                } else {
                    // SAFETY: the launch provides ROW_SHARED_BYTES of dynamic shared memory, and
                    // the rest is forwarded from the kernel's contract.
                    unsafe { row_op::<$ty, $Op, $words, false, true, false>(&p, dynamic_shared(0)) };
                }
            }
        };
    };
}

/// The words of each input a `row_op_table!` operation's cluster kernel holds: its tiles'
/// (`ROWS.words` of `tiled_words`), or for `sums` operations their one tile's (`ROWS.sums_words`
/// of `op_words`: `planning::rows::row_sums_launch`). Used by the sm_90 module's entries only.
#[cfg_attr(not(target_feature = "sm_90"), allow(unused_macros))]
macro_rules! row_cluster_words {
    (sums, $vec:literal, $inputs:literal, $op_words:literal, $tiled_words:literal) => {
        ROWS.sums_words($vec, $inputs, $op_words)
    };
    ($paths:ident, $vec:literal, $inputs:literal, $op_words:literal, $tiled_words:literal) => {
        ROWS.words($vec, $inputs, $tiled_words)
    };
}

/// The `_w<words>_cluster` kernel of an operation (each takes rows of several tiles): each row
/// shared among the blocks of a thread-block cluster (sm_90 modules only; its PTX declares
/// `ROW_CLUSTER_BLOCKS` blocks per cluster). Only the operation's kernel of
/// `row_cluster_words!` is compiled; the others trap.
macro_rules! row_cluster_entry {
    ($paths:ident, $op:ident, $Op:ty, $name:ident, $ty:ty, $vec:literal, $inputs:literal, $op_words:literal,
     $tiled_words:literal, $words:literal) => {
        #[cfg(target_feature = "sm_90")]
        const _: () = {
            /// # Safety
            /// As `row_op` with `CLUSTER`, with the launch [`RowParams`] describes.
            #[unsafe(export_name = row_kernel_name!($op, $name, $words, cluster))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RowParams<$ty>) {
                if $words != row_cluster_words!($paths, $vec, $inputs, $op_words, $tiled_words) {
                    // SAFETY: ends the launch with an error: the host launches only the
                    // operation's cluster kernel of its tiles' word count.
                    unsafe { core::arch::nvptx::trap() };
                } else {
                    // SAFETY: the launch provides ROW_SHARED_BYTES of dynamic shared memory in
                    // clusters of ROW_CLUSTER_BLOCKS (the PTX's `.reqnctapercluster`), and the
                    // rest is forwarded from the kernel's contract.
                    unsafe { row_op::<$ty, $Op, $words, false, true, true>(&p, dynamic_shared(0)) };
                }
            }
        };
    };
}

macro_rules! row_entries_per_op {
    ([$name:ident, $ty:ty, $vec:literal, $words:tt]
     $($op:ident => $Op:ident, $inputs:literal, $op_words:literal, $tiled_words:literal, $paths:ident;)*) => {$(
        const _: () = assert!(<$Op as RowOp>::GRAD == ($inputs == 2), "the table's inputs are the operation's");
        const _: () = assert!(
            !row_paths!($paths) || $op_words == $tiled_words,
            "an `any` operation's one kernel takes every row: one word count"
        );
        row_entries_per_words!($op, $Op, $name, $ty, $vec, $inputs, $op_words, $tiled_words, $paths, $words);
    )*};
}

macro_rules! row_entries {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {$(
        row_op_table!(row_entries_per_op, $name, $device, $vec, [$($words),*]);
    )*};
}
row_table!(row_entries);

macro_rules! norm_grads_entries {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {$(
        const _: () = {
            /// # Safety
            /// As `norm_grads_partial`, with the launch [`NormGradParams`] describes.
            #[unsafe(export_name = kernel_name!(rows_norm_grads, partial, $name))]
            pub unsafe extern "ptx-kernel" fn partial(p: NormGradParams<$device>) {
                // SAFETY: forwarded from the kernel's contract.
                unsafe { norm_grads_partial(&p) };
            }
            /// # Safety
            /// As `norm_grads_finish`, with the launch [`NormGradParams`] describes.
            #[unsafe(export_name = kernel_name!(rows_norm_grads, finish, $name))]
            pub unsafe extern "ptx-kernel" fn finish(p: NormGradParams<$device>) {
                // SAFETY: the launch provides NORM_GRAD_FINISH_SHARED_BYTES of dynamic shared
                // memory; the rest is forwarded from the kernel's contract.
                unsafe { norm_grads_finish(&p, dynamic_shared(0)) };
            }
        };
    )*};
}
row_table!(norm_grads_entries);

/// # Safety
/// As `count_valid_targets`, with the launch [`TargetCountParams`] describes.
#[unsafe(export_name = kernel_name!(rows_cross_entropy, count))]
pub unsafe extern "ptx-kernel" fn cross_entropy_count(p: TargetCountParams) {
    // SAFETY: forwarded from the kernel's contract.
    unsafe { count_valid_targets(&p) };
}

/// # Safety
/// As `mean_loss`, with the launch [`TargetCountParams`] describes.
#[unsafe(export_name = kernel_name!(rows_cross_entropy, mean))]
pub unsafe extern "ptx-kernel" fn cross_entropy_mean(p: TargetCountParams) {
    // SAFETY: forwarded from the kernel's contract.
    unsafe { mean_loss(&p) };
}
