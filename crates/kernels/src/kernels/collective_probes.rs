//! Probe kernels for the warp and block collectives, over a runtime-chosen operator
//! (0 = `Sum`, 1 = `Max`, 2 = `Min`; for `u32` also 3 = the non-commutative `Affine`), for `i32`,
//! `f32` and `u32`, so the GPU tests can sweep block sizes, items per thread and tile boundaries
//! against CPU references.

use crate::block::{
    BlockBroadcastStorage, BlockReduceStorage, BlockScanStorage, block_broadcast, block_exclusive_scan,
    block_inclusive_scan, block_reduce, block_reduce_all,
};
use crate::op::{Affine, Max, Min, ReduceOp, Sum};
use crate::shared::SharedValue;
use crate::shared_array;
use crate::thread::{block_dim, block_idx, global_idx, lane_id, lanes_in_warp, thread_idx};
use crate::warp::{
    Shuffle, warp_broadcast, warp_exclusive_scan, warp_inclusive_scan, warp_reduce, warp_reduce_all,
};

/// Warp collectives on one value per thread; `input` and `output` hold `grid * block` values.
/// mode 0: `warp_reduce` (lane 0 writes); 1: `warp_reduce_all` (full warps only); 2: inclusive
/// scan; 3: exclusive scan; 4: broadcast from lane `src_lane % lanes`.
#[inline(always)]
unsafe fn warp_probe<T: Shuffle, Op: ReduceOp<T>>(input: *const T, output: *mut T, mode: u32, src_lane: u32) {
    let i = global_idx();
    let lanes = lanes_in_warp();
    // SAFETY: (whole body) i < grid * block; each mode's collective is called by every live lane
    // of the warp (the mode is uniform).
    unsafe {
        let v = *input.add(i);
        let r = match mode {
            0 => warp_reduce::<T, Op>(v, lanes),
            1 => warp_reduce_all::<T, Op>(v),
            2 => warp_inclusive_scan::<T, Op>(v, lanes),
            3 => warp_exclusive_scan::<T, Op>(v, lanes).0,
            _ => warp_broadcast(v, src_lane % lanes, lanes),
        };
        if mode != 0 || lane_id() == 0 {
            *output.add(i) = r;
        }
    }
}

/// Block collectives on a tile of `block_dim() * ITEMS` values per block, blocked arrangement,
/// items at or past `n` set to the identity. mode 0: `block_reduce` (thread 0 writes
/// `totals[block]`); 1: `block_reduce_all` (every item's output gets the total); 2 / 3:
/// inclusive / exclusive scan (outputs, and `totals[block]`); 4: broadcast of thread
/// `src % block_dim()`'s first item to every item.
#[inline(always)]
unsafe fn block_probe<T, Op, const ITEMS: usize>(
    input: *const T,
    output: *mut T,
    totals: *mut T,
    n: usize,
    mode: u32,
    src: u32,
    storage: crate::shared::SharedArray<T>,
) where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    let first = (block_idx() as usize * block_dim() as usize + thread_idx() as usize) * ITEMS;
    let mut items = [Op::identity(); ITEMS];
    for (k, item) in items.iter_mut().enumerate() {
        if first + k < n {
            // SAFETY: first + k < n.
            *item = unsafe { *input.add(first + k) };
        }
    }
    // SAFETY: (whole body) every thread of the block runs the same mode's collective; outputs are
    // written only below n; `totals` holds one value per block.
    unsafe {
        match mode {
            0 | 1 => {
                let mut own = items[0];
                for item in &items[1..] {
                    own = Op::combine(own, *item);
                }
                let storage = BlockReduceStorage::new(storage);
                if mode == 0 {
                    let total = block_reduce::<T, Op>(own, storage);
                    if thread_idx() == 0 {
                        *totals.add(block_idx() as usize) = total;
                    }
                } else {
                    items = [block_reduce_all::<T, Op>(own, storage); ITEMS];
                }
            }
            2 | 3 => {
                let storage = BlockScanStorage::new(storage);
                let total = if mode == 2 {
                    block_inclusive_scan::<T, Op, ITEMS>(&mut items, storage)
                } else {
                    block_exclusive_scan::<T, Op, ITEMS>(&mut items, storage)
                };
                if thread_idx() == 0 {
                    *totals.add(block_idx() as usize) = total;
                }
            }
            _ => {
                let value = block_broadcast(items[0], src % block_dim(), BlockBroadcastStorage::new(storage));
                items = [value; ITEMS];
            }
        }
        if mode != 0 {
            for (k, item) in items.iter().enumerate() {
                if first + k < n {
                    *output.add(first + k) = *item;
                }
            }
        }
    }
}

macro_rules! probes {
    ($ty:ty, $op3:ty, $warp:ident, $($block:ident = $items:literal, $smem:ident);*) => {
        /// Warp probe (see `warp_probe`): `op` 0 Sum, 1 Max, 2 Min, 3 the type's fourth operator
        /// (`Affine` for u32).
        ///
        /// # Safety
        /// `input` and `output` hold `grid * block` values.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $warp(input: *const $ty, output: *mut $ty, op: u32, mode: u32, src_lane: u32) {
            // SAFETY: forwarded.
            unsafe {
                match op {
                    0 => warp_probe::<$ty, Sum>(input, output, mode, src_lane),
                    1 => warp_probe::<$ty, Max>(input, output, mode, src_lane),
                    2 => warp_probe::<$ty, Min>(input, output, mode, src_lane),
                    _ => warp_probe::<$ty, $op3>(input, output, mode, src_lane),
                }
            }
        }
        $(
            /// Block probe (see `block_probe`) with this many items per thread; `op` 0 Sum,
            /// 1 Max, 2 Min, 3 the type's fourth operator.
            ///
            /// # Safety
            /// `input` and `output` hold `n` values, `totals` one per block; any block size.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $block(input: *const $ty, output: *mut $ty, totals: *mut $ty, n: usize, op: u32, mode: u32, src: u32) {
                let storage = shared_array!($smem: [$ty; BlockScanStorage::<$ty>::SLOTS as usize]);
                // SAFETY: forwarded.
                unsafe {
                    match op {
                        0 => block_probe::<$ty, Sum, $items>(input, output, totals, n, mode, src, storage),
                        1 => block_probe::<$ty, Max, $items>(input, output, totals, n, mode, src, storage),
                        2 => block_probe::<$ty, Min, $items>(input, output, totals, n, mode, src, storage),
                        _ => block_probe::<$ty, $op3, $items>(input, output, totals, n, mode, src, storage),
                    }
                }
            }
        )*
    };
}
probes!(i32, Min, probe_warp_i32,
    probe_block_i32_items1 = 1, PROBE_SMEM_I32_1; probe_block_i32_items2 = 2, PROBE_SMEM_I32_2;
    probe_block_i32_items3 = 3, PROBE_SMEM_I32_3; probe_block_i32_items4 = 4, PROBE_SMEM_I32_4);
probes!(f32, Min, probe_warp_f32,
    probe_block_f32_items1 = 1, PROBE_SMEM_F32_1; probe_block_f32_items2 = 2, PROBE_SMEM_F32_2;
    probe_block_f32_items3 = 3, PROBE_SMEM_F32_3; probe_block_f32_items4 = 4, PROBE_SMEM_F32_4);
probes!(u32, Affine, probe_warp_u32,
    probe_block_u32_items1 = 1, PROBE_SMEM_U32_1; probe_block_u32_items2 = 2, PROBE_SMEM_U32_2;
    probe_block_u32_items3 = 3, PROBE_SMEM_U32_3; probe_block_u32_items4 = 4, PROBE_SMEM_U32_4);

/// The warp-striped tile pieces together: block `b` loads tile `b` of `block_dim() * ITEMS`
/// f32 ([`block_load_warp_striped_words`](crate::block::block_load_warp_striped_words), whole
/// tiles with 16-byte loads when `input` is 16-byte aligned), flags its heads
/// ([`block_flag_heads_warp_striped`](crate::block::block_flag_heads_warp_striped), `!=`) and
/// its tails ([`block_flag_tails_warp_striped`](crate::block::block_flag_tails_warp_striped)),
/// and writes every item below `n` back: `values[i]` = the item loaded, `heads[i]` = bit 0 where
/// it starts a run, bit 1 where it ends one.
#[inline(always)]
unsafe fn tile_probe<const ITEMS: usize>(input: *const f32, values: *mut f32, heads: *mut u8, n: usize) {
    use crate::block::{
        block_flag_heads_warp_striped, block_flag_tails_warp_striped, block_load_warp_striped_words,
        row_element,
    };
    use crate::thread::{WARP_SIZE, warp_id};
    const VEC: usize = 4;
    let tile_first = block_idx() as usize * block_dim() as usize * ITEMS;
    let warp_first = tile_first + warp_id() as usize * WARP_SIZE as usize * ITEMS;
    let row_first = |r: usize| warp_first + (r * WARP_SIZE as usize + lane_id() as usize) * VEC;
    let whole = tile_first + block_dim() as usize * ITEMS <= n && (input as usize).is_multiple_of(16);
    // SAFETY: (whole body) `input` holds n values; `whole` says the tile is in bounds and aligned
    // and every row_first(r) is a multiple of VEC; the whole warp calls the head flags (blocks
    // are whole warps, the test's contract); writes go below n, one thread per index.
    unsafe {
        let rows = block_load_warp_striped_words::<f32, VEC, ITEMS>(input, n, whole, row_first);
        let item = |r: usize, v: usize| row_element::<f32>(rows[r], v);
        let valid = |r: usize, v: usize| row_first(r) + v < n;
        let before_warp = || (warp_first > 0 && warp_first <= n).then(|| *input.add(warp_first - 1));
        let flags = block_flag_heads_warp_striped::<f32, VEC, ITEMS>(item, valid, before_warp, |a, b| a != b);
        // Lane 31: whether the element after its last item starts a run (or there is none).
        let after_warp = || {
            let last = row_first(ITEMS / VEC - 1) + VEC - 1;
            last + 1 >= n || *input.add(last + 1) != item(ITEMS / VEC - 1, VEC - 1)
        };
        let tails = block_flag_tails_warp_striped::<VEC, ITEMS>(&flags, after_warp);
        crate::unroll::unrolled_for(ITEMS / VEC, |r| {
            crate::unroll::unrolled_for(VEC, |v| {
                let i = row_first(r) + v;
                if i < n {
                    // The input's last item ends its run: its successor, past n, has no head flag.
                    let tail = (tails[r] >> v) & 1 != 0 || i + 1 == n;
                    *values.add(i) = item(r, v);
                    *heads.add(i) = ((flags[r] >> v) & 1) as u8 | (tail as u8) << 1;
                }
            })
        });
    }
}

macro_rules! tile_probes {
    ($($name:ident = $items:literal;)*) => {$(
        /// Tile probe (see `tile_probe`) with this many items per thread (rows of 4).
        ///
        /// # Safety
        /// `input` and `values` hold `n` f32, `heads` `n` bytes; one block per tile; the block
        /// is whole warps.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(input: *const f32, values: *mut f32, heads: *mut u8, n: usize) {
            // SAFETY: forwarded.
            unsafe { tile_probe::<$items>(input, values, heads, n) }
        }
    )*};
}
tile_probes!(probe_tile_f32_items4 = 4; probe_tile_f32_items8 = 8; probe_tile_f32_items16 = 16; probe_tile_f32_items32 = 32;);

/// The segmented scan and the flag ranks of a warp-striped tile: block `b` takes tile `b` of
/// `block_dim() * ITEMS` u32 values (rows of 4, items past `n` the identity, never heads) with
/// their head flags (`heads[i] != 0`), and scans it restarting at the heads
/// ([`block_segmented_scan_warp_striped`](crate::block::block_segmented_scan_warp_striped); `op`
/// 0 `Sum`, else the non-commutative `Affine`; inclusive, or exclusive when `exclusive != 0`),
/// and ranks the heads among the tile's heads
/// ([`block_rank_flags_warp_striped`](crate::block::block_rank_flags_warp_striped)). Writes,
/// below `n`: `output[i]` the scan, `covered[i]` whether the tile has a head at or before `i`,
/// `ranks[i]` the number of heads before `i` in its tile; per block, `totals[3 b ..]` the
/// aggregate's value, 1 when the tile has a head (else 0), and the tile's number of heads.
#[inline(always)]
unsafe fn segmented_tile_probe<Op: ReduceOp<u32>, const ITEMS: usize>(
    p: SegmentedTileProbe,
    scan: BlockScanStorage<crate::op::Keyed<u32>>,
    rank: BlockScanStorage<u32>,
) {
    use crate::block::{block_rank_flags_warp_striped, block_segmented_scan_warp_striped};
    use crate::op::NO_HEAD;
    use crate::sync::block_barrier;
    use crate::thread::{WARP_SIZE, warp_id};
    use crate::unroll::unrolled_for;
    const VEC: usize = 4;
    let tile_first = block_idx() as usize * block_dim() as usize * ITEMS;
    let warp_first = tile_first + warp_id() as usize * WARP_SIZE as usize * ITEMS;
    let index = |r: usize, v: usize| warp_first + (r * WARP_SIZE as usize + lane_id() as usize) * VEC + v;
    let mut items = [Op::identity(); ITEMS];
    let mut flags = [0u32; ITEMS];
    // SAFETY: (whole body) reads and writes go below n, one thread per index; `totals` holds 3
    // values per block; every thread of the block (whole warps, the test's contract) calls both
    // collectives, with a barrier between their uses of shared memory (distinct arrays).
    unsafe {
        unrolled_for(ITEMS / VEC, |r| {
            unrolled_for(VEC, |v| {
                let i = index(r, v);
                if i < p.n {
                    items[r * VEC + v] = *p.input.add(i);
                    flags[r] |= u32::from(*p.heads.add(i) != 0) << v;
                }
            })
        });
        let (ranks, count) = block_rank_flags_warp_striped::<VEC, ITEMS>(&flags, rank);
        let mut covered = flags;
        let aggregate = block_segmented_scan_warp_striped::<u32, Op, VEC, ITEMS>(
            &mut items,
            &mut covered,
            p.exclusive != 0,
            scan,
        );
        block_barrier();
        unrolled_for(ITEMS / VEC, |r| {
            unrolled_for(VEC, |v| {
                let i = index(r, v);
                if i < p.n {
                    *p.output.add(i) = items[r * VEC + v];
                    *p.covered.add(i) = ((covered[r] >> v) & 1) as u8;
                    *p.ranks.add(i) = ranks[r] + (flags[r] & ((1 << v) - 1)).count_ones();
                }
            })
        });
        if thread_idx() == 0 {
            let b = block_idx() as usize * 3;
            *p.totals.add(b) = aggregate.value;
            *p.totals.add(b + 1) = u32::from(aggregate.segment != NO_HEAD);
            *p.totals.add(b + 2) = count;
        }
    }
}

/// The parameters of the `probe_segmented_tile_u32_items<K>` kernels, in their order (see
/// `segmented_tile_probe`).
#[derive(Clone, Copy)]
struct SegmentedTileProbe {
    /// `n` values.
    input: *const u32,
    /// `n` head flags.
    heads: *const u8,
    /// `n` scanned values.
    output: *mut u32,
    /// `n` covered flags.
    covered: *mut u8,
    /// `n` ranks.
    ranks: *mut u32,
    /// 3 values per block.
    totals: *mut u32,
    /// Number of items.
    n: usize,
    /// Exclusive rather than inclusive.
    exclusive: u32,
}

macro_rules! segmented_tile_probes {
    ($($name:ident = $items:literal, $scan:ident, $rank:ident;)*) => {$(
        /// Segmented tile probe (see `segmented_tile_probe`) with this many items per thread
        /// (rows of 4).
        ///
        /// # Safety
        /// `input`, `output` and `ranks` hold `n` u32, `heads` and `covered` `n` bytes, `totals`
        /// 3 u32 per block; one block per tile; the block is whole warps. `op` 0 is `Sum`, any
        /// other `Affine`.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const u32, heads: *const u8, output: *mut u32, covered: *mut u8,
            ranks: *mut u32, totals: *mut u32, n: usize, op: u32, exclusive: u32,
        ) {
            let p = SegmentedTileProbe { input, heads, output, covered, ranks, totals, n, exclusive };
            let scan = shared_array!($scan: [crate::op::Keyed<u32>; BlockScanStorage::<u32>::SLOTS as usize]);
            let rank = shared_array!($rank: [u32; BlockScanStorage::<u32>::SLOTS as usize]);
            let (scan, rank) = (BlockScanStorage::new(scan), BlockScanStorage::new(rank));
            // SAFETY: forwarded.
            unsafe {
                if op == 0 {
                    segmented_tile_probe::<Sum, $items>(p, scan, rank)
                } else {
                    segmented_tile_probe::<Affine, $items>(p, scan, rank)
                }
            }
        }
    )*};
}
segmented_tile_probes!(
    probe_segmented_tile_u32_items4 = 4, PROBE_SEGMENTED_SCAN_4, PROBE_SEGMENTED_RANK_4;
    probe_segmented_tile_u32_items8 = 8, PROBE_SEGMENTED_SCAN_8, PROBE_SEGMENTED_RANK_8;
    probe_segmented_tile_u32_items24 = 24, PROBE_SEGMENTED_SCAN_24, PROBE_SEGMENTED_RANK_24;
);
