//! Block scans over a *tile* of `block_dim() * ITEMS` values in the blocked arrangement: thread
//! `t` holds items `t * ITEMS .. (t + 1) * ITEMS` in registers.
//!
//! Phases (CUB's "warp scans" algorithm):
//! 1. each thread scans its `ITEMS` sequentially: its aggregate;
//! 2. each warp scans the aggregates with shuffles ([`warp_inclusive_scan`]);
//! 3. the last lane of each warp writes the warp's total to a shared slot; barrier;
//! 4. each thread combines the totals of the warps before its own: its warp's prefix;
//! 5. each item gets `warp prefix ⊕ thread prefix ⊕ its local scan`.
//!
//! One barrier; any block size 1..=1024; `Op` associative (operands are never reordered).

use crate::op::ReduceOp;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, lane_id, lanes_in_warp, warp_id, warps_per_block};
use crate::warp::{Shuffle, warp_inclusive_scan};

/// Shared memory for the block scans: one slot per warp.
#[derive(Clone, Copy)]
pub struct BlockScanStorage<T> {
    slots: SharedArray<T>,
}

impl<T: SharedValue> BlockScanStorage<T> {
    /// Slots needed for the largest block (1024 threads).
    pub const SLOTS: u32 = 1024 / WARP_SIZE;

    /// Wrap `slots` (at least `warps_per_block()` elements; traps otherwise, at first use).
    #[inline(always)]
    pub fn new(slots: SharedArray<T>) -> Self {
        Self { slots }
    }
}

/// What phase 1 to 4 give a thread: the combination of every item before its own first item,
/// and the whole tile's total.
#[inline(always)]
unsafe fn thread_prefix<T, Op, const ITEMS: usize>(items: &[T; ITEMS], storage: BlockScanStorage<T>) -> (T, T)
where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    let mut aggregate = items[0];
    for k in 1..ITEMS {
        aggregate = Op::combine(aggregate, items[k]);
    }
    let lanes = lanes_in_warp();
    // SAFETY: the live lanes of this warp call it together.
    let inclusive = unsafe { warp_inclusive_scan::<T, Op>(aggregate, lanes) };
    // SAFETY: as above; lane 0 replaces its own value with the identity.
    let shifted = unsafe { inclusive.shuffle_up(1, WARP_SIZE, crate::thread::lane_mask_below(lanes)) };
    let in_warp_prefix = if lane_id() == 0 { Op::identity() } else { shifted };
    if lane_id() == lanes - 1 {
        // SAFETY: the last live lane of each warp writes its warp's slot; read after the barrier.
        unsafe { storage.slots.write(warp_id(), inclusive) };
    }
    // SAFETY: the caller guarantees the whole block calls this.
    unsafe { block_barrier() };
    let mut warp_prefix = Op::identity();
    let mut total = Op::identity();
    for w in 0..warps_per_block() {
        // SAFETY: every slot was written before the barrier.
        let slot = unsafe { storage.slots.read(w) };
        if w < warp_id() {
            warp_prefix = Op::combine(warp_prefix, slot);
        }
        total = Op::combine(total, slot);
    }
    (Op::combine(warp_prefix, in_warp_prefix), total)
}

/// Inclusive scan of the tile, in place: item `k` of thread `t` becomes the combination of every
/// item up to and including it. Returns the tile's total.
///
/// - **Who calls:** every thread of the block, each with `ITEMS` items.
/// - **Result valid in:** every thread (its items, and the total).
/// - **Example:** 128 threads, 1 item each, all 1.0, `Sum` -> thread t holds t + 1; total 128.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); call [`block_barrier`] before reusing
/// `storage`.
#[inline(always)]
pub unsafe fn block_inclusive_scan<T, Op, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockScanStorage<T>,
) -> T
where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    // SAFETY: forwarded from the caller.
    let (mut running, total) = unsafe { thread_prefix::<T, Op, ITEMS>(items, storage) };
    for k in 0..ITEMS {
        running = Op::combine(running, items[k]);
        items[k] = running;
    }
    total
}

/// Exclusive scan of the tile, in place: item `k` of thread `t` becomes the combination of every
/// item before it (`Op::identity()` for the first item of thread 0). Returns the tile's total.
///
/// - **Result valid in:** every thread.
/// - **Example:** 128 threads, 1 item each, all 1.0, `Sum` -> thread t holds t; total 128.
///
/// # Safety
/// As [`block_inclusive_scan`].
#[inline(always)]
pub unsafe fn block_exclusive_scan<T, Op, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockScanStorage<T>,
) -> T
where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    // SAFETY: forwarded from the caller.
    let (mut running, total) = unsafe { thread_prefix::<T, Op, ITEMS>(items, storage) };
    for k in 0..ITEMS {
        let value = items[k];
        items[k] = running;
        running = Op::combine(running, value);
    }
    total
}
