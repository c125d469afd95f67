//! Radix sort entry points (`device::radix_sort`), generated from `sort_key_table!` and
//! `sort_value_table!` of `gpu-primitives-abi`: per key type, `device_radix_sort_histogram_<key>`
//! and `device_radix_sort_onesweep_{keys,v4,v8}_<key>` (keys only, 4-byte values, 8-byte values;
//! `onesweep_<values>_small_<key>` for the smaller tiles some payloads also have),
//! `device_segmented_radix_sort_{keys,v4,v8}_<key>`, `device_segmented_warp_merge_sort_{keys,v4,v8}_<key>`,
//! `device_segmented_warp_sort_{keys,v4,v8}_<key>`, `device_segmented_warp_radix_sort_{keys,v4,v8}_<key>`
//! `device_top_k_<key>` and `device_radix_select_top_k_<key>`.
//! Each takes its `#[repr(C)]` parameter struct from `gpu_primitives_abi::params` by value.

use crate::block::{BlockRadixSortStorage, BlockScanStorage, RadixRankStorage};
use crate::device::radix_select::{count_digits, gather, load_keys};
use crate::device::radix_sort::{OnesweepPass, OnesweepStorage, onesweep_tile, radix_histogram};
use crate::device::segmented_sort::WarpTileStorage;
use crate::device::segmented_sort::{
    SegmentedSortStorage, segmented_radix_sort, segmented_warp_merge_sort, segmented_warp_radix_sort,
    segmented_warp_sort,
};
use crate::device::tile_status::TileStatus;
use crate::device::top_k::{TopKStorage, top_k_rows};
use crate::policy::{SEGMENTED_SORT, SORT, TOP_K};
use crate::shared::dynamic_shared;
use crate::warp::WarpRadixSortStorage;
use gpu_primitives_abi::layout::OnesweepLayout;
use gpu_primitives_abi::layout::{RADIX_DIGITS, SORT_BLOCK};
use gpu_primitives_abi::layout::{
    onesweep_layout, segmented_sort_layout, top_k_layout, warp_radix_sort_layout,
};
use gpu_primitives_abi::params::{
    OnesweepParams, RadixHistogramParams, RadixSelectTopKParams, SegmentedSortParams, TopKParams,
    radix_select_step,
};
use gpu_primitives_abi::planning::sort::{onesweep_items, onesweep_threads, warp_merge_warps};
use gpu_primitives_abi::{radix_sort_kernel_name, sort_value_table};

/// Whether a value payload of the value table moves values.
macro_rules! pairs {
    (keys) => {
        false
    };
    ($other:ident) => {
        true
    };
}

/// The pass of small tiles of value payload `$values` where the key type's small tiles
/// (`sort_key_table!`) list it, with the keys a thread listed.
macro_rules! onesweep_small_kernel {
    ($key:ident, $ty:ty, $v:ty, $values:ident, []) => {};
    ($key:ident, $ty:ty, $v:ty, keys, [keys $items:literal $(, $($rest:tt)*)?]) => {
        onesweep_kernel!(radix_sort_kernel_name!(onesweep_small, $key, keys), $ty, $v, keys, true, $items);
    };
    ($key:ident, $ty:ty, $v:ty, v4, [v4 $items:literal $(, $($rest:tt)*)?]) => {
        onesweep_kernel!(radix_sort_kernel_name!(onesweep_small, $key, v4), $ty, $v, v4, true, $items);
    };
    ($key:ident, $ty:ty, $v:ty, v8, [v8 $items:literal $(, $($rest:tt)*)?]) => {
        onesweep_kernel!(radix_sort_kernel_name!(onesweep_small, $key, v8), $ty, $v, v8, true, $items);
    };
    ($key:ident, $ty:ty, $v:ty, $values:ident, [$other:ident $items:literal $(, $($rest:tt)*)?]) => {
        onesweep_small_kernel!($key, $ty, $v, $values, [$($($rest)*)?]);
    };
}

/// A onesweep pass named `$name` with tiles of `$items` keys per thread (its small tiles where
/// `$small`), as [`OnesweepParams`] says.
macro_rules! onesweep_kernel {
    ($name:expr, $ty:ty, $v:ty, $values:ident, $small:expr, $items:expr) => {
        const _: () = {
            /// # Safety
            /// As `onesweep_tile`, with the launch [`OnesweepParams`] describes.
            #[unsafe(export_name = $name)]
            pub unsafe extern "ptx-kernel" fn kernel(p: OnesweepParams<$ty, $v>) {
                const PAIRS: bool = pairs!($values);
                const ITEMS: usize = $items;
                const VALUE_BYTES: usize = if PAIRS { size_of::<$v>() } else { 0 };
                const BLOCK: u32 = onesweep_threads(SORT, size_of::<$ty>(), VALUE_BYTES, $small);
                let layout = onesweep_layout(
                    BLOCK,
                    BLOCK * ITEMS as u32,
                    size_of::<$ty>() as u32,
                    VALUE_BYTES as u32,
                );
                let status = TileStatus::from(p.status);
                // SAFETY: the launch's dynamic shared memory, as the layout (the host sizes the
                // launch with the same) places it.
                let (rank, digit_places) = unsafe { rank_storage(&layout) };
                // SAFETY: as above; keys and values share the exchange, one after the other.
                let storage = unsafe {
                    OnesweepStorage {
                        tile: dynamic_shared(layout.tile),
                        rank,
                        digit_places,
                        keys: dynamic_shared(layout.exchange),
                        values: dynamic_shared(layout.exchange),
                    }
                };
                let pass = OnesweepPass {
                    keys_in: p.keys_in,
                    keys_out: p.keys_out,
                    values_in: p.values_in,
                    values_out: p.values_out,
                    n: p.n,
                    histogram: p.histogram,
                    shift: p.shift,
                    bits: p.digit_bits,
                    descending: p.descending != 0,
                    index_values: p.index_values != 0,
                    look_back_tiles: p.look_back_tiles,
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe { onesweep_tile::<$ty, $v, PAIRS, BLOCK, ITEMS>(pass, status, storage) };
            }
        };
    };
}

/// Per value payload: `device_radix_sort_onesweep_<values>_<key>` (one digit pass, tiles of the
/// payload's onesweep items), `device_radix_sort_onesweep_<values>_small_<key>` (the small
/// tiles, for the payloads the key's small tiles list) and
/// `device_segmented_radix_sort_<values>_<key>`.
macro_rules! onesweep_entries {
    ([$key:ident, $ty:ty, $items:literal, $keys_items:literal, $v4_items:literal, $v8_items:literal,
      $small:tt]
     $($values:ident => $v:ty;)*) => {$(
        onesweep_kernel!(
            radix_sort_kernel_name!(onesweep, $key, $values),
            $ty,
            $v,
            $values,
            false,
            onesweep_items(
                if pairs!($values) { size_of::<$v>() } else { 0 },
                $keys_items,
                $v4_items,
                $v8_items,
            )
        );
        onesweep_small_kernel!($key, $ty, $v, $values, $small);
        const _: () = {
            /// # Safety
            /// As `segmented_radix_sort`, with the launch [`SegmentedSortParams`] describes.
            #[unsafe(export_name = radix_sort_kernel_name!(segmented, $key, $values))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedSortParams<$ty, $v>) {
                const PAIRS: bool = pairs!($values);
                // SAFETY: the kernel's contract: the layout's dynamic shared memory.
                let storage = unsafe { segmented_storage::<$ty, $v, PAIRS>($items) };
                // SAFETY: forwarded from the kernel's contract.
                unsafe { segmented_radix_sort::<$ty, $v, PAIRS, $items>(&p, storage) };
            }
        };
        const _: () = {
            /// # Safety
            /// As `segmented_warp_merge_sort`, with the launch [`SegmentedSortParams`] describes
            /// ([`SORT_BLOCK`] threads a block, the [`warp_radix_sort_layout`]'s dynamic shared
            /// memory).
            #[unsafe(export_name = radix_sort_kernel_name!(segmented_warp_merge, $key, $values))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedSortParams<$ty, $v>) {
                const PAIRS: bool = pairs!($values);
                const ITEMS: usize = SEGMENTED_SORT.warp_radix_sort_items;
                const MOST: usize = SEGMENTED_SORT.warp_merge_sort_keys();
                let warps = warp_merge_warps(p.longest.min(MOST));
                let warp = crate::thread::warp_id();
                // SAFETY: the kernel's contract: the layout's dynamic shared memory (SORT_BLOCK
                // threads: 8 warps, groups of 2 or 4 within them); this warp's part, and its
                // group's.
                let (own, group) = unsafe {
                    (
                        warp_tiles::<$ty, $v, PAIRS>(ITEMS, warp, 1),
                        warp_tiles::<$ty, $v, PAIRS>(ITEMS, warp - warp % warps, warps),
                    )
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe { segmented_warp_merge_sort::<$ty, $v, PAIRS>(&p, warps, own, group) };
            }
        };
        const _: () = {
            /// # Safety
            /// As `segmented_warp_radix_sort`, with the launch [`SegmentedSortParams`] describes
            /// ([`SORT_BLOCK`] threads a block, the [`warp_radix_sort_layout`]'s dynamic shared
            /// memory).
            #[unsafe(export_name = radix_sort_kernel_name!(segmented_warp_radix, $key, $values))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedSortParams<$ty, $v>) {
                const PAIRS: bool = pairs!($values);
                const ITEMS: usize = SEGMENTED_SORT.warp_radix_sort_items;
                // SAFETY: the kernel's contract: the layout's dynamic shared memory.
                let storage = unsafe { warp_tiles::<$ty, $v, PAIRS>(ITEMS, crate::thread::warp_id(), 1) };
                // SAFETY: forwarded from the kernel's contract; the storage is this warp's.
                unsafe { segmented_warp_radix_sort::<$ty, $v, PAIRS>(&p, storage) };
            }
        };
        const _: () = {
            /// # Safety
            /// As `segmented_warp_sort`, with the launch [`SegmentedSortParams`] describes
            /// ([`SORT_BLOCK`] threads a block, no shared memory).
            #[unsafe(export_name = radix_sort_kernel_name!(segmented_warp, $key, $values))]
            pub unsafe extern "ptx-kernel" fn kernel(p: SegmentedSortParams<$ty, $v>) {
                // SAFETY: forwarded from the kernel's contract.
                unsafe { segmented_warp_sort::<$ty, $v, { pairs!($values) }>(&p) };
            }
        };
    )*};
}

/// A segmented sort's shared memory: the [`segmented_sort_layout`] of tiles of `items` keys a
/// thread of `K` (with values of `V` for `PAIRS`), in the launch's dynamic shared memory.
///
/// # Safety
/// The launch has that layout's `total` bytes of dynamic shared memory (the host sizes it with
/// the same function); the regions are used as the layout places them.
#[inline(always)]
unsafe fn segmented_storage<K: crate::radix::RadixKey, V: crate::shared::SharedValue, const PAIRS: bool>(
    items: usize,
) -> SegmentedSortStorage<<K::Bits as crate::radix::RadixBits>::Slot, V> {
    let layout = segmented_sort_layout(
        SORT_BLOCK,
        SORT_BLOCK * items as u32,
        size_of::<K>() as u32,
        if PAIRS { size_of::<V>() as u32 } else { 0 },
    );
    // SAFETY: the caller's contract.
    let (rank, digit_places) = unsafe { rank_storage(&layout.sort) };
    // SAFETY: as above; keys and values share the exchange, one after the other.
    unsafe {
        SegmentedSortStorage {
            sort: BlockRadixSortStorage {
                rank,
                keys: dynamic_shared(layout.sort.exchange),
                values: dynamic_shared(layout.sort.exchange),
            },
            digit_places,
            counters: dynamic_shared(layout.counters),
        }
    }
}

/// Shared memory of warps `first_warp ..` (`warps` of them) in the warp radix and warp merge
/// tiers: their parts of the [`warp_radix_sort_layout`] of tiles of `items` keys a lane of `K`
/// (values of `V` for `PAIRS`), in the launch's dynamic shared memory, as one storage whose
/// arrays hold their tiles one after another (the counters: the first warp's).
///
/// # Safety
/// The launch has that layout's `total` bytes of dynamic shared memory (the host sizes it with
/// the same function) and `first_warp + warps` is at most the block's warps; each warp's part is
/// used by the warps its tier gives it to (the warp radix tier: its own warp; the warp merge
/// tier: its group).
#[inline(always)]
unsafe fn warp_tiles<K: crate::radix::RadixKey, V: crate::shared::SharedValue, const PAIRS: bool>(
    items: usize,
    first_warp: u32,
    warps: u32,
) -> WarpTileStorage<<K::Bits as crate::radix::RadixBits>::Slot, V> {
    let layout = warp_radix_sort_layout(
        SORT_BLOCK,
        items as u32,
        size_of::<K>() as u32,
        if PAIRS { size_of::<V>() as u32 } else { 0 },
    );
    const COUNTERS: u32 = 32 * (gpu_primitives_abi::layout::BLOCKED_COUNTER_WORDS + 1);
    let (at, len) = (first_warp * layout.slots, warps * layout.slots);
    let pair_len = if PAIRS { len } else { 0 };
    // SAFETY: the caller's contract: disjoint, 16-byte-aligned regions of the dynamic shared
    // memory, each holding every warp's part; these warps' parts of each.
    unsafe {
        WarpTileStorage {
            sort: WarpRadixSortStorage {
                counters: dynamic_shared::<u32>(layout.counters).slice(first_warp * COUNTERS, COUNTERS),
                keys: dynamic_shared(layout.keys).slice(at, len),
                values: dynamic_shared(layout.indices).slice(if PAIRS { at } else { 0 }, pair_len),
            },
            values: dynamic_shared(layout.values).slice(if PAIRS { at } else { 0 }, pair_len),
        }
    }
}

/// The rank's storage and the digit places of a onesweep layout, in the launch's dynamic shared
/// memory.
///
/// # Safety
/// The launch has `layout.total` bytes of dynamic shared memory; the regions are used as the
/// layout places them.
#[inline(always)]
unsafe fn rank_storage(layout: &OnesweepLayout) -> (RadixRankStorage, crate::shared::SharedArray<u32>) {
    // SAFETY: disjoint, aligned regions of the launch's dynamic shared memory (the caller's
    // contract).
    unsafe {
        (
            RadixRankStorage {
                warp_counts: dynamic_shared(layout.warp_counts),
                scan: BlockScanStorage::new(dynamic_shared(layout.scan)),
            },
            dynamic_shared::<u32>(layout.digit_places).slice(0, RADIX_DIGITS),
        )
    }
}

macro_rules! sort_entries {
    ([] $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
          $v4_items:literal, $v8_items:literal, $small:tt;)*) => {$(
        const _: () = {
            /// `device_radix_sort_histogram_<key>`: the counts of every pass's digits, as
            /// [`RadixHistogramParams`] says.
            ///
            /// # Safety
            /// As `radix_histogram`, with the launch [`RadixHistogramParams`] describes.
            #[unsafe(export_name = radix_sort_kernel_name!(histogram, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RadixHistogramParams<$device>) {
                // SAFETY: the launch's dynamic shared memory holds the counters.
                let counters = unsafe { dynamic_shared::<u32>(0) };
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    radix_histogram::<$device, { 16 / size_of::<$device>() }>(
                        p.keys,
                        p.n,
                        p.histogram,
                        (p.begin_bit, p.end_bit, p.passes, p.copies),
                        p.descending != 0,
                        counters,
                    )
                };
            }
        };
        const _: () = {
            /// `device_top_k_<key>`: each row's top k by radix select, as [`TopKParams`] says.
            ///
            /// # Safety
            /// As `top_k_rows`, with the launch [`TopKParams`] describes.
            #[unsafe(export_name = radix_sort_kernel_name!(top_k, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: TopKParams<$device>) {
                let layout = top_k_layout(size_of::<$device>() as u32);
                // SAFETY: disjoint regions of the launch's dynamic shared memory, as the layout
                // (the host sizes the launch with the same) places them.
                let storage = unsafe {
                    TopKStorage {
                        scan: BlockScanStorage::new(dynamic_shared(layout.scan)),
                        counts: dynamic_shared::<u32>(layout.counts).slice(0, RADIX_DIGITS),
                        found: dynamic_shared::<u32>(layout.found).slice(0, 4),
                        keys: dynamic_shared(layout.keys),
                        indices: dynamic_shared(layout.indices),
                    }
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe { top_k_rows::<$device, { TOP_K.items_for(size_of::<$device>() as u32) }>(&p, storage) };
            }
        };
        const _: () = {
            /// `device_radix_select_top_k_<key>`: one step of the device-wide top-k, as
            /// [`RadixSelectTopKParams`] says.
            ///
            /// # Safety
            /// As `count_digits`, `gather` or `load_keys` (by `p.step`), with the launch
            /// [`RadixSelectTopKParams`] describes.
            #[unsafe(export_name = radix_sort_kernel_name!(radix_select_top_k, $name))]
            pub unsafe extern "ptx-kernel" fn kernel(p: RadixSelectTopKParams<$device>) {
                const VEC: usize = 16 / size_of::<$device>();
                match p.step {
                    radix_select_step::COUNT_DIGITS => {
                        // SAFETY: the launch's dynamic shared memory holds the counters
                        // (`radix_select_shared_bytes`, the host's size too).
                        let counters = unsafe { dynamic_shared::<u32>(0) };
                        // SAFETY: forwarded from the kernel's contract.
                        unsafe { count_digits::<$device, VEC>(&p, counters) }
                    }
                    // SAFETY: forwarded from the kernel's contract.
                    radix_select_step::GATHER => unsafe { gather::<$device, VEC>(&p) },
                    // SAFETY: forwarded from the kernel's contract.
                    radix_select_step::LOAD_KEYS => unsafe { load_keys(&p) },
                    _ => {}
                }
            }
        };
        sort_value_table!(onesweep_entries, $name, $device, $items, $keys_items, $v4_items, $v8_items, $small);
    )*};
}
gpu_primitives_abi::sort_key_table!(sort_entries);
