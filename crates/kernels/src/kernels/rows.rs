//! Row-operation entry points, generated from the row tables of `gpu-primitives-abi` (`table`):
//! per element type and words per thread (`row_table!`) and operation (`row_op_table!`),
//! `device_rows_<op>_<type>_w<words>`, each calling [`row_op`] with [`RowParams`] and
//! [`ROW_SHARED_BYTES`](gpu_primitives_abi::layout::ROW_SHARED_BYTES) of dynamic shared memory.

use crate::device::rows::{
    LayerNorm, LogSoftmax, LogSoftmaxBackward, RmsNorm, RowOp, Softmax, SoftmaxBackward, row_op,
};
use crate::shared::dynamic_shared;
use gpu_primitives_abi::params::RowParams;
use gpu_primitives_abi::{row_kernel_name, row_op_table, row_table};

macro_rules! row_entries_per_words {
    ($op:ident, $Op:ty, $name:ident, $ty:ty, [$($words:literal),*]) => {$(
        const _: () = {
            /// # Safety
            /// As `row_op`, with the launch [`RowParams`] describes.
            #[unsafe(export_name = row_kernel_name!($op, $name, $words))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RowParams<$ty>) {
                // SAFETY: the launch provides ROW_SHARED_BYTES of dynamic shared memory, and the
                // rest is forwarded from the kernel's contract.
                unsafe { row_op::<$ty, $Op, $words>(&p, dynamic_shared(0)) };
            }
        };
    )*};
}

macro_rules! row_entries_per_op {
    ([$name:ident, $ty:ty, $words:tt] $($op:ident => $Op:ident, $inputs:literal, $op_words:literal;)*) => {$(
        const _: () = assert!(<$Op as RowOp>::GRAD == ($inputs == 2), "the table's inputs are the operation's");
        row_entries_per_words!($op, $Op, $name, $ty, $words);
    )*};
}

macro_rules! row_entries {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {$(
        row_op_table!(row_entries_per_op, $name, $device, [$($words),*]);
    )*};
}
row_table!(row_entries);
