//! Device-wide entry points: one reduce and one scan kernel per element type and operator
//! (`device_reduce_<type>_<op>`, `device_scan_<type>_<op>`; types f32 f64 i32 u32 i64 u64 f16
//! bf16, operators sum min max). f16 and bf16 are combined in f32.
//!
//! Shared memory comes from the launch's dynamic shared memory, [`DEVICE_SHARED_BYTES`] bytes.

use crate::block::{BlockReduceStorage, BlockScanStorage};
use crate::device::reduce::{reduce_partials, reduce_single_launch};
use crate::device::scan::{ScanTileStorage, TileStatus, scan_tile};
use crate::device::{Bf16, Element, F16};
use crate::op::{Max, Min, Sum};
use crate::shared::dynamic_shared;

/// Dynamic shared memory every device kernel must be launched with, in bytes: 32 slots of up to
/// 8 bytes for the block collectives, then the tile's prefix (8) and tile index (4), rounded up.
pub const DEVICE_SHARED_BYTES: u32 = 288;
const PREFIX_OFFSET: u32 = 256;
const TILE_OFFSET: u32 = 272;

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
            // SAFETY: forwarded from the kernel's contract; `last` is a region of its own.
            unsafe {
                if blocks_done.is_null() {
                    reduce_partials::<$ty, $op, $vec>(input, n, partials, slots)
                } else {
                    let last = dynamic_shared(TILE_OFFSET);
                    reduce_single_launch::<$ty, $op, $vec>(
                        input,
                        n,
                        partials,
                        result,
                        blocks_done,
                        slots,
                        last,
                    )
                }
            }
        }

        /// Single-pass scan (see `device::scan`) of `input[0..n]` into `output`; `exclusive`
        /// != 0 for an exclusive scan. Launch: `ceil(n / (block * ITEMS))` blocks, block size
        /// any, `DEVICE_SHARED_BYTES` of dynamic shared memory; status arrays of one entry per
        /// tile.
        ///
        /// # Safety
        /// As `scan_tile`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $scan(
            input: *const $ty,
            output: *mut <$ty as Element>::Acc,
            n: usize,
            flags: *mut u32,
            aggregates: *mut <$ty as Element>::Acc,
            prefixes: *mut <$ty as Element>::Acc,
            tile_counter: *mut u64,
            tile_base: u64,
            epoch: u32,
            exclusive: u32,
        ) {
            let status = TileStatus {
                flags,
                aggregates,
                prefixes,
                tile_counter,
                tile_base,
                epoch,
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
            unsafe { scan_tile::<$ty, $op, $items>(input, output, n, status, exclusive != 0, storage) };
        }
    };
}

device_entries!(f32, Sum, 4, 16, device_reduce_f32_sum, device_scan_f32_sum);
device_entries!(f32, Min, 4, 16, device_reduce_f32_min, device_scan_f32_min);
device_entries!(f32, Max, 4, 16, device_reduce_f32_max, device_scan_f32_max);
device_entries!(f64, Sum, 2, 8, device_reduce_f64_sum, device_scan_f64_sum);
device_entries!(f64, Min, 2, 8, device_reduce_f64_min, device_scan_f64_min);
device_entries!(f64, Max, 2, 8, device_reduce_f64_max, device_scan_f64_max);
device_entries!(i32, Sum, 4, 16, device_reduce_i32_sum, device_scan_i32_sum);
device_entries!(i32, Min, 4, 16, device_reduce_i32_min, device_scan_i32_min);
device_entries!(i32, Max, 4, 16, device_reduce_i32_max, device_scan_i32_max);
device_entries!(u32, Sum, 4, 16, device_reduce_u32_sum, device_scan_u32_sum);
device_entries!(u32, Min, 4, 16, device_reduce_u32_min, device_scan_u32_min);
device_entries!(u32, Max, 4, 16, device_reduce_u32_max, device_scan_u32_max);
device_entries!(i64, Sum, 2, 8, device_reduce_i64_sum, device_scan_i64_sum);
device_entries!(i64, Min, 2, 8, device_reduce_i64_min, device_scan_i64_min);
device_entries!(i64, Max, 2, 8, device_reduce_i64_max, device_scan_i64_max);
device_entries!(u64, Sum, 2, 8, device_reduce_u64_sum, device_scan_u64_sum);
device_entries!(u64, Min, 2, 8, device_reduce_u64_min, device_scan_u64_min);
device_entries!(u64, Max, 2, 8, device_reduce_u64_max, device_scan_u64_max);
device_entries!(F16, Sum, 8, 16, device_reduce_f16_sum, device_scan_f16_sum);
device_entries!(F16, Min, 8, 16, device_reduce_f16_min, device_scan_f16_min);
device_entries!(F16, Max, 8, 16, device_reduce_f16_max, device_scan_f16_max);
device_entries!(Bf16, Sum, 8, 16, device_reduce_bf16_sum, device_scan_bf16_sum);
device_entries!(Bf16, Min, 8, 16, device_reduce_bf16_min, device_scan_bf16_min);
device_entries!(Bf16, Max, 8, 16, device_reduce_bf16_max, device_scan_bf16_max);
