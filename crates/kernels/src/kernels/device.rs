//! Device-wide entry points, generated from the element and operator table of
//! `gpu-primitives-abi` (`table`): per element type and operator, `device_reduce_<type>_<op>`,
//! `device_scan_<type>_<op>`, `device_segmented_reduce_<type>_<op>`; per type
//! `device_argmin_<type>`, `device_argmax_<type>`; per type accumulated in itself
//! `device_arg{min,max}_final_<type>` (the second pass); per float type `device_dot_<type>`; per
//! scan-only operator and its types, `device_scan_<type>_<op>` (the non-commutative
//! `op::Affine`); per type the compaction family, `device_select_if_<type>`,
//! `device_select_flagged_<type>`, `device_unique_<type>`, `device_reverse_tail_<type>`; per
//! histogram sample type (`histogram_sample_table!`) and counter,
//! `device_histogram_{even,range}_<sample>_<counter>`.
//!
//! Every kernel takes its family's `#[repr(C)]` parameter struct from `gpu_primitives_abi::params`
//! by value (the host passes the same struct). Shared memory comes from the launch's dynamic
//! shared memory, [`DEVICE_SHARED_BYTES`] bytes, laid out as `gpu_primitives_abi::layout` says.

use crate::block::{BlockReduceStorage, BlockScanStorage};
use crate::device::Element;
use crate::device::histogram::{
    EvenBins, GlobalLevels, RangeBins, SharedLevels, histogram_global, histogram_privatized,
};
use crate::device::indexed::{ArgMax, ArgMin, Indexed};
use crate::device::reduce::{
    arg_reduce_partials, dot_partials, last_block_reduces, reduce_partials, segmented_reduce,
};
use crate::device::reduce_by_key::{ReduceByKeyOutput, ReduceByKeyStorage, reduce_by_key_tile};
use crate::device::run_length::{RunOutput, RunStorage, run_tile};
use crate::device::scan::{ScanTileStorage, scan_tile};
use crate::device::segmented_scan::{
    ArgTotals, KeyHeads, OffsetHeads, ScanOutput, SegmentedStorage, Totals, segment_tile_starts,
    segmented_reduce_tile, segmented_tile,
};
use crate::device::select::{
    ByFlagArray, ByPredicate, Compare, Heads, SelectOutput, SelectStorage, reverse_tail, select_tile,
};
use crate::device::tile_status::TileStatus;
use crate::op::{Affine, Max, Min, Sum};
use crate::policy::{SEGMENTED, SELECT};
use crate::shared::dynamic_shared;
pub use gpu_primitives_abi::layout::DEVICE_SHARED_BYTES;
use gpu_primitives_abi::layout::{
    EXCHANGE_OFFSET, PREFIX_OFFSET, TILE_OFFSET, head_slots, histogram_levels_offset, padded_slots,
    reduce_by_key_layout, run_layout,
};
use gpu_primitives_abi::params::{
    ArgFinalParams, ArgReduceParams, DotParams, HistogramParams, ReduceByKeyParams, ReduceParams,
    ReverseTailParams, RunParams, ScanParams, SegmentTileStartsParams, SegmentedArgParams,
    SegmentedReduceParams, SegmentedScanParams, SelectParams,
};
use gpu_primitives_abi::{
    histogram_counter_table, kernel_name, operator_table, scan_key_table, scan_operator_table,
};

/// `device_scan_<name>_<op>`: single-pass scan (see `device::scan`) of `input[0..n]` into
/// `output`, as [`ScanParams`] says.
macro_rules! scan_entry {
    ($name:ident, $ty:ty, $op:ident, $Op:ty, $vec:tt, $items:tt) => {
        const _: () = {
            /// # Safety
            /// As `scan_tile`, with the launch [`ScanParams`] describes.
            #[unsafe(export_name = kernel_name!(scan, $name, $op))]
            pub unsafe extern "ptx-kernel" fn kernel(p: ScanParams<$ty, <$ty as Element>::Acc>) {
                let status = TileStatus::from(p.status);
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
                    scan_tile::<$ty, $Op, $vec, $items>(
                        p.input,
                        p.output,
                        p.initial,
                        p.n,
                        status,
                        p.exclusive != 0,
                        p.look_back_delay_ns,
                        storage,
                    )
                };
            }
        };
    };
}

/// `device_reduce_<name>_<op>` and `device_segmented_reduce_<name>_<op>`.
macro_rules! reduce_entries {
    ($name:ident, $ty:ty, $op:ident, $Op:ty, $vec:literal) => {
        const _: () = {
            /// Device reduce of `input[0..n]` (see `device::reduce` and [`ReduceParams`]).
            /// Launch: any grid, any block size, `DEVICE_SHARED_BYTES` of dynamic shared memory.
            ///
            /// # Safety
            /// As [`ReduceParams`] says.
            #[unsafe(export_name = kernel_name!(reduce, $name, $op))]
            pub unsafe extern "ptx-kernel" fn kernel(p: ReduceParams<$ty, <$ty as Element>::Acc>) {
                // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
                let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
                // SAFETY: forwarded from the kernel's contract; the flag region is separate.
                unsafe {
                    reduce_partials::<$ty, $Op, $vec>(p.input, p.n, p.partials, slots);
                    if !p.blocks_done.is_null() {
                        last_block_reduces::<_, $Op>(
                            p.partials,
                            p.result,
                            p.blocks_done,
                            slots,
                            dynamic_shared(TILE_OFFSET),
                        );
                    }
                }
            }
        };
        const _: () = {
            /// Segmented reduce: `output[r]` = reduction of row `r`. Launch: any grid (blocks
            /// stride over rows), any block size, `DEVICE_SHARED_BYTES` of dynamic shared memory.
            ///
            /// # Safety
            /// As [`SegmentedReduceParams`] says.
            #[unsafe(export_name = kernel_name!(segmented_reduce, $name, $op))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedReduceParams<$ty, <$ty as Element>::Acc>) {
                // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
                let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
                // SAFETY: forwarded from the kernel's contract.
                unsafe { segmented_reduce::<$ty, $Op, $vec>(p.input, p.row_len, p.rows, p.output, slots) };
            }
        };
    };
}

/// `device_segmented_scan_<name>_<op>` and `device_segmented_reduce_by_offsets_<name>_<op>`:
/// the segmented scan (`device::segmented_scan`) of `input[0..n]` by CSR offsets, or its total per
/// segment, as [`SegmentedScanParams`] says.
macro_rules! segmented_entries {
    ($name:ident, $ty:ty, $op:ident, $Op:ty, $vec:literal) => {
        const _: () = {
            const ITEMS: usize = SEGMENTED.scan_items($vec, size_of::<<$ty as Element>::Acc>());
            /// # Safety
            /// As `segmented_tile`, with the launch [`SegmentedScanParams`] describes.
            #[unsafe(export_name = kernel_name!(segmented_scan, $name, $op))]
            pub unsafe extern "ptx-kernel" fn kernel(
                p: SegmentedScanParams<$ty, <$ty as Element>::Acc, u64>,
            ) {
                type Acc = <$ty as Element>::Acc;
                let status = TileStatus::from(p.status);
                let tile_items = crate::thread::block_dim() * ITEMS as u32;
                // SAFETY: disjoint regions of the launch's dynamic shared memory
                // (`segmented_shared_bytes` for blocks of `SEGMENTED.block_threads` threads), each aligned.
                let storage = unsafe { segmented_storage::<Acc>(head_slots(tile_items)) };
                // SAFETY: offsets[0] and offsets[segments] are readable (the params' contract).
                let (from, to) = unsafe { (*p.offsets as usize, *p.offsets.add(p.segments) as usize) };
                let heads = OffsetHeads {
                    offsets: p.offsets,
                    segments: p.segments,
                    tile_starts: p.tile_starts,
                };
                let output = ScanOutput {
                    output: p.output,
                    exclusive: p.exclusive != 0,
                    from,
                    to,
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    segmented_tile::<$ty, $Op, _, $vec, ITEMS>(
                        p.input,
                        p.n,
                        heads,
                        output,
                        status,
                        p.look_back_delay_ns,
                        storage,
                    )
                };
            }
        };
        const _: () = {
            const ITEMS: usize = SEGMENTED.reduce_items(size_of::<<$ty as Element>::Acc>());
            /// # Safety
            /// As `segmented_reduce_tile`, with the launch [`SegmentedScanParams`] describes.
            #[unsafe(export_name = kernel_name!(segmented_reduce_by_offsets, $name, $op))]
            pub unsafe extern "ptx-kernel" fn kernel(
                p: SegmentedScanParams<$ty, <$ty as Element>::Acc, u64>,
            ) {
                type Acc = <$ty as Element>::Acc;
                let status = TileStatus::from(p.status);
                let tile_items = crate::thread::block_dim() * ITEMS as u32;
                // SAFETY: as the scan's: the same regions of the same shared memory.
                let storage = unsafe { segmented_storage::<Acc>(head_slots(tile_items)) };
                let heads = OffsetHeads {
                    offsets: p.offsets,
                    segments: p.segments,
                    tile_starts: p.tile_starts,
                };
                let totals = Totals::<Acc, $Op> {
                    output: p.output,
                    op: core::marker::PhantomData,
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    segmented_reduce_tile::<$ty, _, ITEMS>(
                        p.input,
                        p.n,
                        heads,
                        totals,
                        status,
                        p.look_back_delay_ns,
                        storage,
                    )
                };
            }
        };
    };
}

/// `device_segmented_argmin_<name>` and `device_segmented_argmax_<name>` for every row of
/// `segment_arg_table!`: per segment, the first smallest (largest) item's value and index
/// within the segment, as [`SegmentedArgParams`] says.
macro_rules! segment_arg_entries {
    ([] $($name:ident => $ty:ty, $vec:literal;)*) => {
        $(
            segment_arg_entry!(segmented_argmin, $name, $ty, ArgMin);
            segment_arg_entry!(segmented_argmax, $name, $ty, ArgMax);
        )*
    };
}

macro_rules! segment_arg_entry {
    ($family:ident, $name:ident, $ty:ty, $Op:ty) => {
        const _: () = {
            const ITEMS: usize = SEGMENTED.reduce_items(size_of::<<$ty as Element>::Acc>());
            /// # Safety
            /// As `segmented_reduce_tile`, with the launch [`SegmentedArgParams`] describes.
            #[unsafe(export_name = kernel_name!($family, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedArgParams<$ty, <$ty as Element>::Acc>) {
                let status = TileStatus::from(p.status);
                let tile_items = crate::thread::block_dim() * ITEMS as u32;
                // SAFETY: as the segmented reduce's: the same regions of the same shared memory.
                let storage = unsafe { segmented_storage::<u64>(head_slots(tile_items)) };
                let heads = OffsetHeads {
                    offsets: p.offsets,
                    segments: p.segments,
                    tile_starts: p.tile_starts,
                };
                let totals = ArgTotals::<$ty, $Op> {
                    input: p.input,
                    values: p.values,
                    indices: p.indices,
                    offsets: p.offsets,
                    order: core::marker::PhantomData,
                };
                // SAFETY: forwarded from the kernel's contract (n < 2^32).
                unsafe {
                    segmented_reduce_tile::<$ty, _, ITEMS>(
                        p.input,
                        p.n,
                        heads,
                        totals,
                        status,
                        p.look_back_delay_ns,
                        storage,
                    )
                };
            }
        };
    };
}
gpu_primitives_abi::segment_arg_table!(segment_arg_entries);

/// `device_segment_tile_starts`: where each tile of a segmented kernel by offsets starts among
/// the segments, as [`SegmentTileStartsParams`] says.
///
/// # Safety
/// As `segment_tile_starts`, with the launch [`SegmentTileStartsParams`] describes.
#[unsafe(export_name = gpu_primitives_abi::kernel_name!(segment_tile_starts))]
pub unsafe extern "ptx-kernel" fn segment_tile_starts_kernel(p: SegmentTileStartsParams) {
    // SAFETY: forwarded from the kernel's contract.
    unsafe { segment_tile_starts(p.offsets, p.segments, p.tile_items, p.tiles, p.starts) };
}

/// `device_scan_by_<key>_key_<name>_<op>` for every key type: the segmented scan of
/// `input[0..n]` with a head wherever the key changes, as [`SegmentedScanParams`] says.
macro_rules! by_key_entries {
    ([$name:ident, $ty:ty, $op:ident, $Op:ty, $vec:literal] $($key:ident => $kty:ty, $kvec:literal;)*) => {
        $(
            const _: () = {
                /// Rows of the wider of the key's and the value's 16-byte vectors.
                const VEC: usize = if $kvec > $vec { $kvec } else { $vec };
                const ITEMS: usize = SEGMENTED.scan_items(VEC, size_of::<<$ty as Element>::Acc>());
                /// # Safety
                /// As `segmented_tile`, with the launch [`SegmentedScanParams`] describes.
                #[unsafe(export_name = gpu_primitives_abi::scan_by_key_name!($key, $name, $op))]
                pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedScanParams<$ty, <$ty as Element>::Acc, $kty>) {
                    let status = TileStatus::from(p.status);
                    // SAFETY: the regions of DEVICE_SHARED_BYTES; no head slots by key.
                    let storage = unsafe { segmented_storage::<<$ty as Element>::Acc>(0) };
                    let output = ScanOutput { output: p.output, exclusive: p.exclusive != 0, from: 0, to: p.n };
                    // SAFETY: forwarded from the kernel's contract.
                    unsafe {
                        segmented_tile::<$ty, $Op, _, VEC, ITEMS>(
                            p.input,
                            p.n,
                            KeyHeads(p.keys),
                            output,
                            status,
                            p.look_back_delay_ns,
                            storage,
                        )
                    };
                }
            };
        )*
    };
}

/// `device_reduce_by_key_<key>_<name>_<op>` for every key type: each run's first key and the
/// reduction of its values (or, `p.unique` set, its first value), as [`ReduceByKeyParams`] says.
macro_rules! reduce_by_key_entries {
    ([$name:ident, $ty:ty, $op:ident, $Op:ty, $vec:literal] $($key:ident => $kty:ty, $kvec:literal;)*) => {
        $(
            const _: () = {
                type Acc = <$ty as Element>::Acc;
                const ITEMS: usize = SEGMENTED.reduce_by_key_items(size_of::<$kty>(), size_of::<Acc>());
                const TILE: u32 = SEGMENTED.block_threads * ITEMS as u32;
                /// # Safety
                /// As `reduce_by_key_tile`, with the launch [`ReduceByKeyParams`] describes.
                #[unsafe(export_name = gpu_primitives_abi::kernel_name!(reduce_by_key, $key, $name, $op))]
                pub unsafe extern "ptx-kernel" fn kernel(p: ReduceByKeyParams<$kty, $ty, Acc>) {
                    let status = TileStatus::from(p.status);
                    let layout = reduce_by_key_layout(
                        TILE,
                        size_of::<$kty>() as u32,
                        size_of::<$ty>() as u32,
                        size_of::<Acc>() as u32,
                    );
                    // SAFETY: disjoint, aligned regions of the launch's dynamic shared memory
                    // (`layout.total` bytes: the launch's contract).
                    let storage = unsafe {
                        ReduceByKeyStorage {
                            scan: BlockScanStorage::new(dynamic_shared(0)),
                            prefix: dynamic_shared(PREFIX_OFFSET),
                            tile: dynamic_shared(TILE_OFFSET),
                            keys: dynamic_shared::<$kty>(layout.keys).slice(0, padded_slots(TILE)),
                            reductions: dynamic_shared::<Acc>(layout.values).slice(0, TILE + 1),
                            firsts: dynamic_shared::<$ty>(layout.values).slice(0, padded_slots(TILE)),
                            edges: dynamic_shared::<u32>(layout.edges).slice(0, 2),
                        }
                    };
                    let output = ReduceByKeyOutput {
                        keys: p.unique_keys,
                        reductions: p.reductions,
                        firsts: p.firsts,
                        num_runs: p.num_runs,
                    };
                    // SAFETY: forwarded from the kernel's contract; `$kvec` keys and `$vec` values
                    // are 16 bytes, and both divide 32 and ITEMS (64 bytes of the wider, 32 or 64
                    // of the other: whole 16-byte vectors).
                    unsafe {
                        if p.unique != 0 {
                            reduce_by_key_tile::<$kty, $ty, $Op, true, $kvec, $vec, ITEMS>(
                                p.keys, p.values, p.n, output, status, p.look_back_delay_ns, storage,
                            )
                        } else {
                            reduce_by_key_tile::<$kty, $ty, $Op, false, $kvec, $vec, ITEMS>(
                                p.keys, p.values, p.n, output, status, p.look_back_delay_ns, storage,
                            )
                        }
                    };
                }
            };
        )*
    };
}

/// The shared memory of a segmented kernel: the regions of every device-wide kernel, then
/// `heads` u32 from `EXCHANGE_OFFSET` (a tile's [`head_slots`]).
///
/// # Safety
/// The launch's dynamic shared memory holds `EXCHANGE_OFFSET + 4 * heads` bytes.
#[inline(always)]
unsafe fn segmented_storage<A: crate::shared::SharedValue>(heads: u32) -> SegmentedStorage<A> {
    // SAFETY: disjoint, aligned regions of the caller's dynamic shared memory.
    unsafe {
        SegmentedStorage {
            scan: BlockScanStorage::new(dynamic_shared(0)),
            prefix: dynamic_shared(PREFIX_OFFSET),
            tile: dynamic_shared(TILE_OFFSET),
            heads: dynamic_shared::<u32>(EXCHANGE_OFFSET).slice(0, heads),
        }
    }
}

/// Every operator of the table for one element type.
macro_rules! per_operator {
    ([$name:ident, $ty:ty, $vec:literal, $items:literal] $($op:ident => $Op:ident;)*) => {
        $(
            reduce_entries!($name, $ty, $op, $Op, $vec);
            scan_entry!($name, $ty, $op, $Op, $vec, $items);
            segmented_entries!($name, $ty, $op, $Op, $vec);
            scan_key_table!(by_key_entries, $name, $ty, $op, $Op, $vec);
            scan_key_table!(reduce_by_key_entries, $name, $ty, $op, $Op, $vec);
        )*
    };
}

/// `device_argmin_<name>` / `device_argmax_<name>`: (value, index) partials, then the last block
/// (`blocks_done` not null) or a second launch reduces them. Launch as the reduce kernels.
macro_rules! arg_entry {
    ($family:ident, $name:ident, $ty:ty, $Op:ty, $vec:literal) => {
        const _: () = {
            /// # Safety
            /// As [`ReduceParams`] says, with 16-byte (value, index) partials and result.
            #[unsafe(export_name = kernel_name!($family, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: ArgReduceParams<$ty, <$ty as Element>::Acc>) {
                // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
                let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    arg_reduce_partials::<$ty, $Op, $vec>(p.input, p.n, p.partials, slots);
                    if !p.blocks_done.is_null() {
                        last_block_reduces::<_, $Op>(
                            p.partials,
                            p.result,
                            p.blocks_done,
                            slots,
                            dynamic_shared(TILE_OFFSET),
                        );
                    }
                }
            }
        };
    };
}

/// `device_argmin_final_<name>` / `device_argmax_final_<name>`: the second pass of argmin /
/// argmax over `n` (value, index) partials, one block, `DEVICE_SHARED_BYTES` of dynamic shared
/// memory.
macro_rules! arg_final_entry {
    ($family:ident, $name:ident, $acc:ty, $Op:ty) => {
        const _: () = {
            /// # Safety
            /// As [`ArgFinalParams`] says.
            #[unsafe(export_name = kernel_name!($family, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: ArgFinalParams<$acc>) {
                use crate::op::ReduceOp;
                use crate::thread::{block_dim, thread_idx};
                // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
                let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
                let mut acc = <$Op as ReduceOp<Indexed<$acc>>>::identity();
                let mut i = thread_idx() as usize;
                while i < p.n {
                    // SAFETY: i < n.
                    acc = <$Op as ReduceOp<Indexed<$acc>>>::combine(acc, unsafe { *p.partials.add(i) });
                    i += block_dim() as usize;
                }
                // SAFETY: the whole block calls it.
                let best = unsafe { crate::block::block_reduce::<Indexed<$acc>, $Op>(acc, slots) };
                if thread_idx() == 0 {
                    // SAFETY: `result` is one writable pair.
                    unsafe { *p.result = best };
                }
            }
        };
    };
}

/// `device_dot_<name>`: per-block partials of `a[i] * b[i]`, then the last block (`blocks_done`
/// not null) or a second launch (the accumulator's sum reduce kernel) adds them. Launch as the
/// reduce kernels.
macro_rules! dot_entry {
    ($name:ident, $ty:ty, $vec:literal) => {
        const _: () = {
            /// # Safety
            /// As [`DotParams`] says.
            #[unsafe(export_name = kernel_name!(dot, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: DotParams<$ty, <$ty as Element>::Acc>) {
                // SAFETY: the launch provides DEVICE_SHARED_BYTES of dynamic shared memory.
                let slots = BlockReduceStorage::new(unsafe { dynamic_shared(0) });
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    dot_partials::<$ty, $vec>(p.a, p.b, p.n, p.partials, slots);
                    if !p.blocks_done.is_null() {
                        last_block_reduces::<_, Sum>(
                            p.partials,
                            p.result,
                            p.blocks_done,
                            slots,
                            dynamic_shared(TILE_OFFSET),
                        );
                    }
                }
            }
        };
    };
}

/// `device_<family>_<name>` of the compaction family: select (`device::select`) of
/// `input[0..n]` with the flags `$flags` makes of the parameters, as [`SelectParams`] says.
macro_rules! select_entry {
    ($family:ident, $name:ident, $ty:ty, $vec:literal, $items:expr, $flags:expr) => {
        const _: () = {
            /// # Safety
            /// As `select_tile`, with the launch [`SelectParams`] describes.
            #[unsafe(export_name = kernel_name!($family, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SelectParams<$ty>) {
                let status = TileStatus::from(p.status);
                // SAFETY: the host launches with `select_shared_bytes` of dynamic shared memory.
                let storage = unsafe { SelectStorage::<$ty>::in_dynamic_shared() };
                let output = SelectOutput {
                    items: p.output,
                    num_selected: p.num_selected,
                    partition: p.partition != 0,
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    select_tile::<$ty, _, $vec, $items>(
                        p.input,
                        p.n,
                        $flags(&p),
                        output,
                        status,
                        p.look_back_delay_ns,
                        storage,
                    )
                };
            }
        };
    };
}

/// The compaction family of one element type: `device_select_if_<name>`,
/// `device_select_flagged_<name>`, `device_unique_<name>` and `device_reverse_tail_<name>`.
macro_rules! select_entries {
    ($name:ident, $ty:ty, $vec:literal) => {
        select_entry!(
            select_if,
            $name,
            $ty,
            $vec,
            { $vec * SELECT.rows },
            |p: &SelectParams<$ty>| { ByPredicate(Compare::new(p.predicate)) }
        );
        select_entry!(
            select_flagged,
            $name,
            $ty,
            $vec,
            { $vec * SELECT.rows },
            |p: &SelectParams<$ty>| ByFlagArray(p.flags)
        );
        select_entry!(
            unique,
            $name,
            $ty,
            $vec,
            { $vec * SELECT.rows },
            |_: &SelectParams<$ty>| { Heads }
        );
        const _: () = {
            /// Second pass of a stable partition. Launch: any grid, any block.
            ///
            /// # Safety
            /// As [`ReverseTailParams`] says.
            #[unsafe(export_name = kernel_name!(reverse_tail, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: ReverseTailParams<$ty>) {
                // SAFETY: `begin` is one readable u64 at most n (the caller's contract).
                let begin = unsafe { *p.begin } as usize;
                // SAFETY: forwarded from the kernel's contract.
                unsafe { reverse_tail::<_, { SELECT.reverse_tail_items }>(p.data, begin, p.n) };
            }
        };
    };
}

/// `device_run_length_encode_<name>` and `device_non_trivial_runs_<name>`: run-length encoding
/// (`device::run_length`) of `input[0..n]`, as [`RunParams`] says.
macro_rules! run_entries {
    ($name:ident, $ty:ty, $vec:literal) => {
        run_entry!(run_length_encode, false, $name, $ty, $vec);
        run_entry!(non_trivial_runs, true, $name, $ty, $vec);
    };
}

macro_rules! run_entry {
    ($family:ident, $non_trivial:literal, $name:ident, $ty:ty, $vec:literal) => {
        const _: () = {
            const ITEMS: usize = SELECT.run_items($vec);
            /// # Safety
            /// As `run_tile`, with the launch [`RunParams`] describes.
            #[unsafe(export_name = kernel_name!($family, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RunParams<$ty>) {
                let status = TileStatus::from(p.status);
                let tile_items = crate::thread::block_dim() * ITEMS as u32;
                let layout = run_layout(tile_items, size_of::<$ty>() as u32);
                // SAFETY: disjoint regions of the launch's dynamic shared memory (`layout.total`
                // bytes for blocks of `SELECT.block_threads` threads), each aligned.
                let storage = unsafe {
                    RunStorage {
                        scan: BlockScanStorage::new(dynamic_shared(0)),
                        prefix: dynamic_shared(PREFIX_OFFSET),
                        tile: dynamic_shared(TILE_OFFSET),
                        values: dynamic_shared::<$ty>(layout.values).slice(0, tile_items),
                        starts: dynamic_shared::<u16>(layout.starts).slice(0, tile_items),
                        ends: dynamic_shared::<u16>(layout.ends).slice(0, tile_items),
                        edges: dynamic_shared::<u32>(layout.edges).slice(0, 2),
                    }
                };
                let output = RunOutput {
                    unique: p.unique,
                    offsets: p.offsets,
                    lengths: p.lengths,
                    num_runs: p.num_runs,
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    run_tile::<$ty, $non_trivial, $vec, ITEMS>(
                        p.input,
                        p.n,
                        output,
                        status,
                        p.look_back_delay_ns,
                        storage,
                    )
                };
            }
        };
    };
}
const _: () = assert!(
    SELECT.block_threads as usize * SELECT.run_items(16) < 1 << 16,
    "tile positions are u16"
);

/// The families that depend on the kind of element type (see `gpu_primitives_abi::table`).
macro_rules! per_kind {
    (int, $name:ident, $ty:ty, $vec:literal) => {
        arg_final_entry!(argmin_final, $name, $ty, ArgMin);
        arg_final_entry!(argmax_final, $name, $ty, ArgMax);
    };
    (float, $name:ident, $ty:ty, $vec:literal) => {
        per_kind!(int, $name, $ty, $vec);
        dot_entry!($name, $ty, $vec);
    };
    (half, $name:ident, $ty:ty, $vec:literal) => {
        dot_entry!($name, $ty, $vec);
    };
}

macro_rules! device_entries {
    ([] $($name:ident => $ty:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        $(
            operator_table!(per_operator, $name, $ty, $vec, $items);
            arg_entry!(argmin, $name, $ty, ArgMin, $vec);
            arg_entry!(argmax, $name, $ty, ArgMax, $vec);
            per_kind!($kind, $name, $ty, $vec);
            select_entries!($name, $ty, $vec);
            run_entries!($name, $ty, $vec);
        )*
    };
}
gpu_primitives_abi::element_table!(device_entries);

/// The launch constants of one row of the table, for entry points generated from other tables.
pub trait TableRow {
    /// Elements per 16-byte load.
    const VECTOR: usize;
    /// Scan items per thread.
    const SCAN_ITEMS: usize;
}
macro_rules! table_rows {
    ([] $($name:ident => $ty:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
        $(impl TableRow for $ty {
            const VECTOR: usize = $vec;
            const SCAN_ITEMS: usize = $items;
        })*
    };
}
gpu_primitives_abi::element_table!(table_rows);

/// Scans with a non-commutative operator (composition of affine maps, `op::Affine`): the scan is
/// order-preserving for any associative operator; the device reduce is not (its grid-stride
/// loops need commutativity), so these have no reduce. The element names of a scan-only row are
/// device types (integers); vector width and items per thread are theirs, from the table.
macro_rules! scan_only_entries {
    ([] $($op:ident => $Op:ident: $($element:ident),*;)*) => {
        $($(
            scan_entry!(
                $element,
                $element,
                $op,
                $Op,
                { <$element as TableRow>::VECTOR },
                { <$element as TableRow>::SCAN_ITEMS }
            );
        )*)*
    };
}
scan_operator_table!(scan_only_entries);

/// `device_histogram_even_<sample>_<counter>` and `device_histogram_range_<sample>_<counter>`
/// (`device::histogram`), as [`HistogramParams`] says.
macro_rules! histogram_entries {
    ([$name:ident, $ty:ty, $level:ty, $vec:literal] $($counter:ident => $C:ty;)*) => {$(
        const _: () = {
            /// # Safety
            /// As [`HistogramParams`] says.
            #[unsafe(export_name = concat!("device_histogram_even_", stringify!($name), "_", stringify!($counter)))]
            pub unsafe extern "ptx-kernel" fn kernel(p: HistogramParams<$ty, $level, $C>) {
                let binning = EvenBins::<$level>::new(p.lower, p.upper, p.scale, p.bins);
                if p.privatized != 0 {
                    // SAFETY: the launch's dynamic shared memory holds `bins` counters.
                    let counters = unsafe { dynamic_shared::<u32>(0) }.slice(0, p.bins);
                    // SAFETY: forwarded from the kernel's contract.
                    unsafe {
                        histogram_privatized::<$ty, _, $C, $vec>(
                            p.samples, p.n, p.histogram, counters, p.bins, || {}, || binning,
                        )
                    };
                } else {
                    // SAFETY: forwarded from the kernel's contract.
                    unsafe { histogram_global::<$ty, _, $C, $vec>(p.samples, p.n, p.histogram, binning) };
                }
            }
        };
        const _: () = {
            /// # Safety
            /// As [`HistogramParams`] says.
            #[unsafe(export_name = concat!("device_histogram_range_", stringify!($name), "_", stringify!($counter)))]
            pub unsafe extern "ptx-kernel" fn kernel(p: HistogramParams<$ty, $level, $C>) {
                use crate::thread::{block_dim, thread_idx};
                if p.privatized != 0 {
                    // SAFETY: the launch's dynamic shared memory holds `bins` counters, then the
                    // bins + 1 levels at their offset (aligned for the level type).
                    let (counters, levels) = unsafe {
                        (
                            dynamic_shared::<u32>(0).slice(0, p.bins),
                            dynamic_shared::<$level>(histogram_levels_offset(p.bins)).slice(0, p.bins + 1),
                        )
                    };
                    let stage = || {
                        let mut i = thread_idx();
                        while i <= p.bins {
                            // SAFETY: i <= bins: within both arrays of bins + 1 levels.
                            unsafe { levels.write_unchecked(i, *p.levels.add(i as usize)) };
                            i += block_dim();
                        }
                    };
                    // SAFETY: the levels were copied before the barrier `binning` comes after.
                    let binning = || unsafe { RangeBins::new(SharedLevels(levels), p.bins) };
                    // SAFETY: forwarded from the kernel's contract.
                    unsafe {
                        histogram_privatized::<$ty, _, $C, $vec>(
                            p.samples, p.n, p.histogram, counters, p.bins, stage, binning,
                        )
                    };
                } else {
                    // SAFETY: `levels` holds bins + 1 sorted levels (the kernel's contract).
                    let binning = unsafe { RangeBins::new(GlobalLevels(p.levels), p.bins) };
                    // SAFETY: forwarded from the kernel's contract.
                    unsafe { histogram_global::<$ty, _, $C, $vec>(p.samples, p.n, p.histogram, binning) };
                }
            }
        };
    )*};
}

macro_rules! histogram_samples {
    ([] $($name:ident => $ty:ty, $stored:ty, $level:ty, $vec:literal;)*) => {
        $(histogram_counter_table!(histogram_entries, $name, $ty, $level, $vec);)*
    };
}
gpu_primitives_abi::histogram_sample_table!(histogram_samples);
