//! Device-wide entry points, per element type (f32 f64 i32 u32 i64 u64 f16 bf16; f16 and bf16
//! combined in f32) and operator (sum min max): `device_reduce_<type>_<op>`,
//! `device_scan_<type>_<op>`, `device_segmented_reduce_<type>_<op>`; `device_argmin_<type>`,
//! `device_argmax_<type>` (with `device_arg{min,max}_final_<acc>`, their second pass);
//! `device_dot_<type>` for the float types; `device_scan_u32_affine` and `device_scan_u64_affine`
//! (the non-commutative `op::Affine`).
//!
//! Shared memory comes from the launch's dynamic shared memory, [`DEVICE_SHARED_BYTES`] bytes.

use core::marker::PhantomData;

use crate::block::{BlockReduceStorage, BlockScanStorage};
use crate::device::indexed::{ArgMax, ArgMin, Indexed};
use crate::device::reduce::{
    arg_reduce_partials, dot_partials, last_block_reduces, reduce_partials, segmented_reduce,
};
use crate::device::scan::{ScanTileStorage, scan_tile};
use crate::device::tile_status::TileStatus;
use crate::device::{Bf16, Element, F16};
use crate::op::{Affine, Max, Min, Sum};
use crate::shared::dynamic_shared;

/// Dynamic shared memory every device kernel must be launched with, in bytes: 32 slots of up to
/// 16 bytes (a value and its index) for the block collectives, then the tile's prefix (16) and a
/// u32 (the tile index, or the reduce's "last block" flag), rounded up.
pub const DEVICE_SHARED_BYTES: u32 = 544;
const PREFIX_OFFSET: u32 = 512;
const TILE_OFFSET: u32 = 528;

macro_rules! scan_entry {
    ($ty:ty, $op:ty, $vec:literal, $items:literal, $scan:ident) => {
        /// Single-pass scan (see `device::scan`) of `input[0..n]` into `output`; `exclusive`
        /// != 0 for an exclusive scan; warp 0 sleeps `look_back_delay_ns` before looking back
        /// (0 for small grids). Launch: `ceil(n / (block * ITEMS))` blocks, block size
        /// a multiple of 32, `DEVICE_SHARED_BYTES` of dynamic shared memory; 16 bytes of tile
        /// status per tile, 16-byte aligned (see `device::tile_status`).
        ///
        /// # Safety
        /// As `scan_tile`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $scan(
            input: *const $ty,
            output: *mut <$ty as Element>::Acc,
            n: usize,
            status_slots: *mut u64,
            tile_counter: *mut u64,
            tile_base: u64,
            epoch: u32,
            exclusive: u32,
            look_back_delay_ns: u32,
        ) {
            let status = TileStatus {
                slots: status_slots,
                tile_counter,
                tile_base,
                epoch,
                value: PhantomData,
            };
            // SAFETY: three disjoint regions of the launch's DEVICE_SHARED_BYTES, each aligned.
            let storage = unsafe {
                ScanTileStorage {
                    scan: BlockScanStorage::new(dynamic_shared(0)),
                    prefix: dynamic_shared(PREFIX_OFFSET),
                    tile: dynamic_shared(TILE_OFFSET),
                }
            };
            // SAFETY: forwarded from the kernel's contract.
            unsafe {
                scan_tile::<$ty, $op, $vec, $items>(
                    input,
                    output,
                    n,
                    status,
                    exclusive != 0,
                    look_back_delay_ns,
                    storage,
                )
            };
        }
    };
}

macro_rules! device_entries {
    ($ty:ty, $op:ty, $vec:literal, $items:literal, $reduce:ident, $scan:ident) => {
        /// Device reduce of `input[0..n]` (see `device::reduce`). With `blocks_done` null:
        /// `partials[block]` = this block's part (with one block, the whole reduction; `result`
        /// unused). Otherwise a single launch: the last block writes `*result`. Launch: any grid,
        /// any block size, `DEVICE_SHARED_BYTES` of dynamic shared memory.
        ///
        /// # Safety
        /// `input` holds `n` elements, `partials` one value per block; if `blocks_done` is not
        /// null it is a `u32` equal to 0 and `result` one writable value.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $reduce(
            input: *const $ty,
            n: usize,
            partials: *mut <$ty as Element>::Acc,
            result: *mut <$ty as Element>::Acc,
            blocks_done: *mut u32,
        ) {
            // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
            let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
            // SAFETY: forwarded from the kernel's contract; the flag region is separate.
            unsafe {
                reduce_partials::<$ty, $op, $vec>(input, n, partials, slots);
                if !blocks_done.is_null() {
                    last_block_reduces::<_, $op>(
                        partials,
                        result,
                        blocks_done,
                        slots,
                        dynamic_shared(TILE_OFFSET),
                    );
                }
            }
        }

        scan_entry!($ty, $op, $vec, $items, $scan);
    };
}

macro_rules! arg_entries {
    ($ty:ty, $vec:literal, $argmin:ident, $argmax:ident) => {
        arg_entry!($ty, ArgMin, $vec, $argmin);
        arg_entry!($ty, ArgMax, $vec, $argmax);
    };
}

macro_rules! arg_entry {
    ($ty:ty, $op:ty, $vec:literal, $name:ident) => {
        /// Argmin / argmax of `input[0..n]` as (value, index) pairs: per-block partials, then the
        /// last block (`blocks_done` not null) or a second launch reduces them. Launch as the
        /// reduce kernels.
        ///
        /// # Safety
        /// As the reduce kernels, with 16-byte (value, index) partials and result.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const $ty,
            n: usize,
            partials: *mut Indexed<<$ty as Element>::Acc>,
            result: *mut Indexed<<$ty as Element>::Acc>,
            blocks_done: *mut u32,
        ) {
            // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
            let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
            // SAFETY: forwarded from the kernel's contract.
            unsafe {
                arg_reduce_partials::<$ty, $op, $vec>(input, n, partials, slots);
                if !blocks_done.is_null() {
                    last_block_reduces::<_, $op>(
                        partials,
                        result,
                        blocks_done,
                        slots,
                        dynamic_shared(TILE_OFFSET),
                    );
                }
            }
        }
    };
}

/// The second pass of argmin / argmax over `n` (value, index) partials: one block, `*result` =
/// the winner. Same contract as the reduce kernels' second pass.
macro_rules! arg_final_entry {
    ($acc:ty, $op:ty, $name:ident) => {
        /// Second pass of argmin / argmax: `*result` = the pair `Op` picks among `partials[0..n]`.
        /// Launch: one block, `DEVICE_SHARED_BYTES` of dynamic shared memory.
        ///
        /// # Safety
        /// `partials` holds `n` pairs; `result` one.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            partials: *const Indexed<$acc>,
            n: usize,
            result: *mut Indexed<$acc>,
        ) {
            use crate::op::ReduceOp;
            use crate::thread::{block_dim, thread_idx};
            // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
            let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
            let mut acc = <$op as ReduceOp<Indexed<$acc>>>::identity();
            let mut i = thread_idx() as usize;
            while i < n {
                // SAFETY: i < n.
                acc = <$op as ReduceOp<Indexed<$acc>>>::combine(acc, unsafe { *partials.add(i) });
                i += block_dim() as usize;
            }
            // SAFETY: the whole block calls it.
            let best = unsafe { crate::block::block_reduce::<Indexed<$acc>, $op>(acc, slots) };
            if thread_idx() == 0 {
                // SAFETY: `result` is one writable pair.
                unsafe { *result = best };
            }
        }
    };
}

macro_rules! dot_entry {
    ($ty:ty, $vec:literal, $name:ident) => {
        /// Dot product of `a[0..n]` and `b[0..n]` in `T::Acc`: per-block partials, then the last
        /// block (`blocks_done` not null) or a second launch (the Acc sum reduce kernel) adds
        /// them. Launch as the reduce kernels.
        ///
        /// # Safety
        /// `a` and `b` hold `n` elements; as the reduce kernels otherwise.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const $ty,
            b: *const $ty,
            n: usize,
            partials: *mut <$ty as Element>::Acc,
            result: *mut <$ty as Element>::Acc,
            blocks_done: *mut u32,
        ) {
            // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
            let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
            // SAFETY: forwarded from the kernel's contract.
            unsafe {
                dot_partials::<$ty, $vec>(a, b, n, partials, slots);
                if !blocks_done.is_null() {
                    last_block_reduces::<_, Sum>(
                        partials,
                        result,
                        blocks_done,
                        slots,
                        dynamic_shared(TILE_OFFSET),
                    );
                }
            }
        }
    };
}

macro_rules! segmented_entry {
    ($ty:ty, $op:ty, $vec:literal, $name:ident) => {
        /// Segmented reduce: `output[r]` = reduction of row `r` (`row_len` elements) for
        /// `r < rows`. Launch: any grid (blocks stride over rows), any block size,
        /// `DEVICE_SHARED_BYTES` of dynamic shared memory.
        ///
        /// # Safety
        /// `input` holds `rows * row_len` elements, `output` `rows` values.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const $ty,
            row_len: usize,
            rows: usize,
            output: *mut <$ty as Element>::Acc,
        ) {
            // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
            let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
            // SAFETY: forwarded from the kernel's contract.
            unsafe { segmented_reduce::<$ty, $op, $vec>(input, row_len, rows, output, slots) };
        }
    };
}

device_entries!(f32, Sum, 4, 32, device_reduce_f32_sum, device_scan_f32_sum);
device_entries!(f32, Min, 4, 32, device_reduce_f32_min, device_scan_f32_min);
device_entries!(f32, Max, 4, 32, device_reduce_f32_max, device_scan_f32_max);
device_entries!(f64, Sum, 2, 8, device_reduce_f64_sum, device_scan_f64_sum);
device_entries!(f64, Min, 2, 8, device_reduce_f64_min, device_scan_f64_min);
device_entries!(f64, Max, 2, 8, device_reduce_f64_max, device_scan_f64_max);
device_entries!(i32, Sum, 4, 32, device_reduce_i32_sum, device_scan_i32_sum);
device_entries!(i32, Min, 4, 32, device_reduce_i32_min, device_scan_i32_min);
device_entries!(i32, Max, 4, 32, device_reduce_i32_max, device_scan_i32_max);
device_entries!(u32, Sum, 4, 32, device_reduce_u32_sum, device_scan_u32_sum);
device_entries!(u32, Min, 4, 32, device_reduce_u32_min, device_scan_u32_min);
device_entries!(u32, Max, 4, 32, device_reduce_u32_max, device_scan_u32_max);
device_entries!(i64, Sum, 2, 16, device_reduce_i64_sum, device_scan_i64_sum);
device_entries!(i64, Min, 2, 16, device_reduce_i64_min, device_scan_i64_min);
device_entries!(i64, Max, 2, 16, device_reduce_i64_max, device_scan_i64_max);
device_entries!(u64, Sum, 2, 16, device_reduce_u64_sum, device_scan_u64_sum);
device_entries!(u64, Min, 2, 16, device_reduce_u64_min, device_scan_u64_min);
device_entries!(u64, Max, 2, 16, device_reduce_u64_max, device_scan_u64_max);
device_entries!(F16, Sum, 8, 64, device_reduce_f16_sum, device_scan_f16_sum);
device_entries!(F16, Min, 8, 64, device_reduce_f16_min, device_scan_f16_min);
device_entries!(F16, Max, 8, 64, device_reduce_f16_max, device_scan_f16_max);
device_entries!(Bf16, Sum, 8, 32, device_reduce_bf16_sum, device_scan_bf16_sum);
device_entries!(Bf16, Min, 8, 32, device_reduce_bf16_min, device_scan_bf16_min);
device_entries!(Bf16, Max, 8, 32, device_reduce_bf16_max, device_scan_bf16_max);
arg_entries!(f32, 4, device_argmin_f32, device_argmax_f32);
arg_entries!(f64, 2, device_argmin_f64, device_argmax_f64);
arg_entries!(i32, 4, device_argmin_i32, device_argmax_i32);
arg_entries!(u32, 4, device_argmin_u32, device_argmax_u32);
arg_entries!(i64, 2, device_argmin_i64, device_argmax_i64);
arg_entries!(u64, 2, device_argmin_u64, device_argmax_u64);
arg_entries!(F16, 8, device_argmin_f16, device_argmax_f16);
arg_entries!(Bf16, 8, device_argmin_bf16, device_argmax_bf16);
arg_final_entry!(f32, ArgMin, device_argmin_final_f32);
arg_final_entry!(f32, ArgMax, device_argmax_final_f32);
arg_final_entry!(f64, ArgMin, device_argmin_final_f64);
arg_final_entry!(f64, ArgMax, device_argmax_final_f64);
arg_final_entry!(i32, ArgMin, device_argmin_final_i32);
arg_final_entry!(i32, ArgMax, device_argmax_final_i32);
arg_final_entry!(u32, ArgMin, device_argmin_final_u32);
arg_final_entry!(u32, ArgMax, device_argmax_final_u32);
arg_final_entry!(i64, ArgMin, device_argmin_final_i64);
arg_final_entry!(i64, ArgMax, device_argmax_final_i64);
arg_final_entry!(u64, ArgMin, device_argmin_final_u64);
arg_final_entry!(u64, ArgMax, device_argmax_final_u64);
dot_entry!(f32, 4, device_dot_f32);
dot_entry!(f64, 2, device_dot_f64);
dot_entry!(F16, 8, device_dot_f16);
dot_entry!(Bf16, 8, device_dot_bf16);
segmented_entry!(f32, Sum, 4, device_segmented_reduce_f32_sum);
segmented_entry!(f32, Min, 4, device_segmented_reduce_f32_min);
segmented_entry!(f32, Max, 4, device_segmented_reduce_f32_max);
segmented_entry!(f64, Sum, 2, device_segmented_reduce_f64_sum);
segmented_entry!(f64, Min, 2, device_segmented_reduce_f64_min);
segmented_entry!(f64, Max, 2, device_segmented_reduce_f64_max);
segmented_entry!(i32, Sum, 4, device_segmented_reduce_i32_sum);
segmented_entry!(i32, Min, 4, device_segmented_reduce_i32_min);
segmented_entry!(i32, Max, 4, device_segmented_reduce_i32_max);
segmented_entry!(u32, Sum, 4, device_segmented_reduce_u32_sum);
segmented_entry!(u32, Min, 4, device_segmented_reduce_u32_min);
segmented_entry!(u32, Max, 4, device_segmented_reduce_u32_max);
segmented_entry!(i64, Sum, 2, device_segmented_reduce_i64_sum);
segmented_entry!(i64, Min, 2, device_segmented_reduce_i64_min);
segmented_entry!(i64, Max, 2, device_segmented_reduce_i64_max);
segmented_entry!(u64, Sum, 2, device_segmented_reduce_u64_sum);
segmented_entry!(u64, Min, 2, device_segmented_reduce_u64_min);
segmented_entry!(u64, Max, 2, device_segmented_reduce_u64_max);
segmented_entry!(F16, Sum, 8, device_segmented_reduce_f16_sum);
segmented_entry!(F16, Min, 8, device_segmented_reduce_f16_min);
segmented_entry!(F16, Max, 8, device_segmented_reduce_f16_max);
segmented_entry!(Bf16, Sum, 8, device_segmented_reduce_bf16_sum);
segmented_entry!(Bf16, Min, 8, device_segmented_reduce_bf16_min);
segmented_entry!(Bf16, Max, 8, device_segmented_reduce_bf16_max);

// Scans with a non-commutative operator (composition of affine maps, `op::Affine`): the scan is
// order-preserving for any associative operator; the device reduce is not (its grid-stride
// loops need commutativity), so these have no reduce.
scan_entry!(u32, Affine, 4, 32, device_scan_u32_affine);
scan_entry!(u64, Affine, 2, 16, device_scan_u64_affine);
