//! Reduce by key and unique by key in one pass with decoupled look-back: for each run of equal
//! consecutive keys, its first key and the reduction of its values (`reduce_by_key`, CUB's
//! `DeviceReduce::ReduceByKey`), or its first key and first value (`unique_by_key`, CUB's
//! `DeviceSelect::UniqueByKey`).
//!
//! Each block handles one tile of `block_dim() * ITEMS` items, held *blocked* (thread `t` holds
//! the `ITEMS` consecutive items from `t * ITEMS` on), as the segmented reduce by offsets
//! ([`super::segmented_scan::segmented_reduce_tile`]) holds its own, but read coalesced: each
//! warp loads its `32 * ITEMS` keys and values as 16-byte rows and exchanges them to blocked
//! through shared memory ([`block_load_warp_rows`] for both arrays, then
//! [`block_warp_rows_to_blocked`]; CUB's `BLOCK_LOAD_WARP_TRANSPOSE`):
//! 1. it takes the next tile index and loads its keys and values; an item is a *head* where its
//!    key differs from the one before it (or it is the input's first), a *tail* where the next
//!    key differs (or it is the input's last);
//! 2. each thread reduces its items in order into one [`Keyed`] pair: the number of heads among
//!    them (in `segment`) and the reduction of the values from its last head on (all of them
//!    with none), combined by [`RunsOp`] (counts add, a head discards the values before it:
//!    CUB's `ReduceBySegmentOp`);
//! 3. an exclusive block scan of the pairs, and warp 0's look-back over the tiles' pairs, give
//!    each thread how many runs start before its items and the reduction of the open run's
//!    values before them;
//! 4. each thread walks its items again: a head's key (and, unique by key, its value) goes to
//!    shared memory at its run's place in the tile, a tail's reduction at its run's place (one
//!    slot more, for the run continued from an earlier tile); after a barrier the block writes
//!    the tile's keys and reductions coalesced; the last tile writes the number of runs.
//!
//! Keys compare by their bits. The counts are `u32`: the input has fewer than 2^32 items.
//! Float reductions can differ in the last bits from run to run for a run that crosses tiles
//! (where the look-back stops); within a tile the values combine in input order.
//!
//! Source: Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back"
//! (NVIDIA NVR-2016-002); the reduce-by-segment operator is Blelloch's ("Prefix Sums and Their
//! Applications", 1990, section 1.5), as CUB's `AgentReduceByKey` uses it.

use core::marker::PhantomData;

use super::element::{Element, Packed};
use super::scan::{look_back_after_publish, next_tile, publish_aggregate};
use super::segmented_scan::StatusBits;
use super::tile_status::TileStatus;
use crate::block::{
    BlockExchangeStorage, BlockScanStorage, block_exclusive_scan, block_load_warp_rows,
    block_warp_rows_to_blocked,
};
use crate::op::{Keyed, ReduceOp};
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, lane_id, thread_idx};
use crate::unroll::unrolled_for;
use crate::warp::Shuffle;

/// The reduce-by-segment operator over [`Keyed`] pairs whose `segment` counts the heads of a
/// stretch of items: counts add; the value is `b`'s where `b`'s stretch holds a head, else
/// `Op::combine(a.value, b.value)`. Associative whenever `Op` is; not commutative. Identity:
/// `(Op::identity(), 0)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunsOp<Op>(PhantomData<Op>);

impl<A, Op: ReduceOp<A>> ReduceOp<Keyed<A>> for RunsOp<Op> {
    #[inline(always)]
    fn identity() -> Keyed<A> {
        Keyed {
            value: Op::identity(),
            segment: 0,
        }
    }
    #[inline(always)]
    fn combine(a: Keyed<A>, b: Keyed<A>) -> Keyed<A> {
        Keyed {
            value: if b.segment != 0 {
                b.value
            } else {
                Op::combine(a.value, b.value)
            },
            segment: a.segment + b.segment,
        }
    }
}

/// Shared memory of [`reduce_by_key_tile`].
#[derive(Clone, Copy)]
pub struct ReduceByKeyStorage<K, T, A> {
    /// For the block scan of the pairs, one per thread.
    pub scan: BlockScanStorage<Keyed<A>>,
    /// One u32: the tile index, from thread 0 to the block.
    pub tile: SharedArray<u32>,
    /// One pair: the tile's exclusive prefix, from thread 0 to the block.
    pub prefix: SharedArray<Keyed<A>>,
    /// `block_dim() * ITEMS`: the first key of each run that starts in the tile.
    pub keys: SharedArray<K>,
    /// `block_dim() * ITEMS + 1`: the reduction of each run that ends in the tile, at its run's
    /// place in the tile plus one (slot 0: the run continued from an earlier tile).
    pub reductions: SharedArray<A>,
    /// Unique by key, at the same place as `reductions`: `block_dim() * ITEMS`, the first value
    /// of each run that starts in the tile.
    pub firsts: SharedArray<T>,
    /// Two u32: whether the tile's first item is a head, and its last item a tail.
    pub edges: SharedArray<u32>,
}

/// Where [`reduce_by_key_tile`] writes.
#[derive(Clone, Copy)]
pub struct ReduceByKeyOutput<K, T, A> {
    /// Each run's first key.
    pub keys: *mut K,
    /// Reduce by key: each run's reduction (else null).
    pub reductions: *mut A,
    /// Unique by key: each run's first value (else null).
    pub firsts: *mut T,
    /// One u64: the number of runs, written by the last tile.
    pub num_runs: *mut u64,
}

/// Reduce by key (`UNIQUE` false) or unique by key (`UNIQUE` true) of one tile of `keys[0..n]`
/// and `values[0..n]` (see the [module docs](self)); warp 0 sleeps `look_back_delay_ns` before
/// its look-back.
///
/// The grid must have exactly `ceil(n / (block_dim() * ITEMS))` blocks, each a whole number of
/// warps; `n > 0`.
///
/// # Safety
/// Every thread of the block calls it; `block_dim()` is a multiple of 32; `keys` and `values`
/// hold `0 < n < 2^32` readable items each; the outputs have room for every run (`n` is enough)
/// and overlap neither the inputs nor each other; `status` points at 16 bytes per tile, 16-byte
/// aligned, every slot from an older epoch; `storage` is this block's, `keys` and `firsts` at
/// least [`padded_slots`](crate::block::exchange::padded_slots)`(block_dim() * ITEMS)` long
/// and `reductions` `block_dim() * ITEMS + 1`; `KEY_VEC` keys and `VEC` values are 16 bytes,
/// each dividing 32 and `ITEMS`.
#[inline(always)]
pub unsafe fn reduce_by_key_tile<
    K,
    T,
    Op,
    const UNIQUE: bool,
    const KEY_VEC: usize,
    const VEC: usize,
    const ITEMS: usize,
>(
    keys: *const K,
    values: *const T,
    n: usize,
    output: ReduceByKeyOutput<K, T, T::Acc>,
    status: TileStatus<Keyed<T::Acc>>,
    look_back_delay_ns: u32,
    storage: ReduceByKeyStorage<K, T, T::Acc>,
) where
    K: Packed + SharedValue + Shuffle + PartialEq,
    T: Element + SharedValue,
    T::Acc: StatusBits,
    Op: ReduceOp<T::Acc>,
{
    let t = thread_idx() as usize;
    // SAFETY: the whole block calls it; the counter is the status's.
    let tile = unsafe { next_tile(&status, storage.tile) };
    let tile_len = block_dim() as usize * ITEMS;
    let tile_first = tile * tile_len;
    let tile_items = tile_len.min(n - tile_first);
    let first = tile_first + t * ITEMS;
    // Items of this thread in the input (0 past its end).
    let valid = n.saturating_sub(first).min(ITEMS);
    // Both arrays' loads are issued before either exchange: the keys' exchange writes them to
    // shared memory, which waits for their data, and the values' loads would wait behind it.
    // SAFETY: the tile's `tile_items` keys and values are readable; whole warps (the caller's);
    // `keys` and `firsts` are this block's padded tiles, unused until the block scan's barriers.
    let (k, v) = unsafe {
        let mut k = block_load_warp_rows::<K, KEY_VEC, ITEMS>(keys.add(tile_first), tile_items);
        let mut v = block_load_warp_rows::<T, VEC, ITEMS>(values.add(tile_first), tile_items);
        block_warp_rows_to_blocked::<K, KEY_VEC, ITEMS>(&mut k, BlockExchangeStorage::new(storage.keys));
        block_warp_rows_to_blocked::<T, VEC, ITEMS>(&mut v, BlockExchangeStorage::new(storage.firsts));
        (k, v)
    };
    // The keys beside this thread's, before its first item and after its last: the next lanes'
    // through shuffles, global reads only at the warp's edges (a read a thread, 64 bytes apart
    // across the warp, took a sector each: 28 % of the kernel's sectors; ncu, H200).
    let lane = lane_id();
    // SAFETY: every lane of the warp takes these shuffles (whole warps, no branch before them).
    let (up, down) = unsafe {
        (
            k[ITEMS - 1].shuffle_up(1, WARP_SIZE, u32::MAX),
            k[0].shuffle_down(1, WARP_SIZE, u32::MAX),
        )
    };
    let before = (valid > 0 && first > 0).then(|| {
        if lane == 0 {
            // SAFETY: first - 1 < n.
            unsafe { *keys.add(first - 1) }
        } else {
            // Lane - 1's last item, first - 1 (it holds every item: first - 1 < n).
            up
        }
    });
    let after = (first + ITEMS < n).then(|| {
        if lane == WARP_SIZE - 1 {
            // SAFETY: first + ITEMS < n.
            unsafe { *keys.add(first + ITEMS) }
        } else {
            // Lane + 1's first item, first + ITEMS < n.
            down
        }
    });
    // Heads and tails as bits; this thread's pair, its items reduced in order.
    let (mut heads, mut tails) = (0u32, 0u32);
    let mut pair = [RunsOp::<Op>::identity()];
    unrolled_for(ITEMS, |j| {
        if j < valid {
            let head = match j {
                0 => before.is_none_or(|b| b != k[0]),
                _ => k[j] != k[j - 1],
            };
            let tail = if j + 1 < valid {
                k[j + 1] != k[j]
            } else {
                // This thread's last item: the input ends here, or `after` is the next key.
                after.is_none_or(|a| a != k[j])
            };
            heads |= (head as u32) << j;
            tails |= (tail as u32) << j;
            let item = Keyed {
                value: v[j].to_acc(),
                segment: head as u32,
            };
            pair[0] = RunsOp::<Op>::combine(pair[0], item);
        }
    });
    if t == 0 {
        // SAFETY: two u32 of this block, read after the barriers below; thread 0 holds the
        // tile's first item.
        unsafe { storage.edges.write(0, heads & 1) };
    }
    if valid > 0 && (first + valid == tile_first + tile_items) {
        // SAFETY: as above; this thread holds the tile's last item.
        unsafe { storage.edges.write(1, (tails >> (valid - 1)) & 1) };
    }
    // SAFETY: the whole block calls it with its own storage.
    let aggregate = unsafe { block_exclusive_scan::<Keyed<T::Acc>, RunsOp<Op>, 1>(&mut pair, storage.scan) };
    if t < WARP_SIZE as usize {
        // SAFETY: this block owns `tile`; the status holds one slot per tile; warp 0, once.
        unsafe { publish_aggregate::<Keyed<T::Acc>, RunsOp<Op>>(&status, tile, aggregate) };
    }
    // The staging needs no prefix (every warp does it before warp 0 looks back, in part of its
    // delay): `local` counts the tile's heads up to the item in hand, `running` is the open
    // run's reduction from the tile's start or the run's head, so slot 0 (the run continued
    // from an earlier tile) lacks the prefix's part, combined in as it is written.
    let mut local = pair[0].segment;
    let mut running = pair[0].value;
    unrolled_for(ITEMS, |j| {
        if (heads >> j) & 1 != 0 {
            // SAFETY: local < the tile's heads <= block_dim() * ITEMS: slots of the arrays; one
            // head per slot; every thread read its exchanged items before the block scan's
            // barrier.
            unsafe {
                storage.keys.write_unchecked(local, k[j]);
                if UNIQUE {
                    storage.firsts.write_unchecked(local, v[j]);
                }
            }
            local += 1;
            running = v[j].to_acc();
        } else if j < valid {
            running = Op::combine(running, v[j].to_acc());
        }
        if !UNIQUE && (tails >> j) & 1 != 0 {
            // SAFETY: local <= the tile's heads: one of the block_dim() * ITEMS + 1 slots; one
            // tail per run.
            unsafe { storage.reductions.write_unchecked(local, running) };
        }
    });
    if t < WARP_SIZE as usize {
        // SAFETY: as above, after publishing the same aggregate; the whole of warp 0 takes this
        // branch (blocks are whole warps).
        let prefix = unsafe {
            look_back_after_publish::<Keyed<T::Acc>, RunsOp<Op>>(&status, tile, aggregate, look_back_delay_ns)
        };
        if t == 0 {
            // SAFETY: read by the block after the barrier below.
            unsafe { storage.prefix.write(0, prefix) };
        }
    }
    // SAFETY: the whole block calls it; every staging write and the prefix came before it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let prefix = unsafe { storage.prefix.read(0) };
    // Runs started before the tile.
    let runs_before = prefix.segment as usize;
    let tile_runs = aggregate.segment as usize;
    // SAFETY: written before the barriers.
    let (first_head, last_tail) = unsafe { (storage.edges.read(0) as usize, storage.edges.read(1) as usize) };
    let mut j = t;
    while j < tile_runs {
        // SAFETY: slot j < the tile's heads was written; the outputs have room for every run, of
        // which this is number runs_before + j.
        unsafe {
            *output.keys.add(runs_before + j) = storage.keys.read_unchecked(j as u32);
            if UNIQUE {
                *output.firsts.add(runs_before + j) = storage.firsts.read_unchecked(j as u32);
            }
        }
        j += block_dim() as usize;
    }
    if !UNIQUE {
        // Slots `first_head ..= tile_runs - 1 + last_tail` ended in the tile: slot s is run
        // runs_before - 1 + s (slot 0, the continued run, only where the tile starts inside it).
        let end = tile_runs + last_tail;
        let mut s = first_head + t;
        while s < end {
            // SAFETY: slot s was written by the tail of its run.
            let mut reduction = unsafe { storage.reductions.read_unchecked(s as u32) };
            if s == 0 {
                // The run continued from an earlier tile: its values before the tile first.
                reduction = Op::combine(prefix.value, reduction);
            }
            // SAFETY: runs_before - 1 + s >= 0 (s is 0 only where the tile continues a run, so
            // runs_before > 0) is a run's number; the outputs have room for every run.
            unsafe { *output.reductions.add(runs_before + s - 1) = reduction };
            s += block_dim() as usize;
        }
    }
    if t == 0 && tile_first + tile_len >= n {
        // SAFETY: the last tile knows the total; `num_runs` is one writable u64.
        unsafe { *output.num_runs = (runs_before + tile_runs) as u64 };
    }
}
