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

use crate::op::{Keyed, NO_HEAD, ReduceOp, SegmentedOp, Sum};
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, lane_id, lane_mask_below, lanes_in_warp, warp_id, warps_per_block};
use crate::unroll::unrolled_for;
use crate::warp::{
    Shuffle, warp_broadcast, warp_exclusive_scan, warp_inclusive_scan, warp_segmented_exclusive_scan,
};

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

    /// The slots, for a scan of its own (one slot per warp).
    #[inline(always)]
    pub(crate) fn slots(&self) -> SharedArray<T> {
        self.slots
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
    let shifted = unsafe { inclusive.shuffle_up(1, WARP_SIZE, lane_mask_below(lanes)) };
    let in_warp_prefix = if lane_id() == 0 { Op::identity() } else { shifted };
    // SAFETY: forwarded from the caller; the last live lane holds the warp's total.
    let (warp_prefix, total) = unsafe { combine_warp_totals::<T, Op>(inclusive, lanes, storage) };
    (Op::combine(warp_prefix, in_warp_prefix), total)
}

/// Phases 3 and 4: lane `lanes - 1` of each warp publishes `warp_total`; returns the combination
/// of the earlier warps' totals and the block's total, in every thread.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside).
#[inline(always)]
unsafe fn combine_warp_totals<T, Op>(warp_total: T, lanes: u32, storage: BlockScanStorage<T>) -> (T, T)
where
    T: SharedValue,
    Op: ReduceOp<T>,
{
    if lane_id() == lanes - 1 {
        // SAFETY: the last live lane of each warp writes its warp's slot; read after the barrier.
        unsafe { storage.slots.write(warp_id(), warp_total) };
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
    (warp_prefix, total)
}

/// Phase 5 for one thread's consecutive `items`: scan them in place, in order, starting from
/// `running` (the combination of everything before them); inclusive, or exclusive when
/// `exclusive`. Returns the combination up to and including the last item.
#[inline(always)]
fn thread_scan<T: Copy, Op: ReduceOp<T>>(items: &mut [T], mut running: T, exclusive: bool) -> T {
    // An index loop: the slice is a register array after inlining.
    for k in 0..items.len() {
        let next = Op::combine(running, items[k]);
        items[k] = if exclusive { running } else { next };
        running = next;
    }
    running
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
    let (running, total) = unsafe { thread_prefix::<T, Op, ITEMS>(items, storage) };
    thread_scan::<T, Op>(items, running, false);
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
    let (running, total) = unsafe { thread_prefix::<T, Op, ITEMS>(items, storage) };
    thread_scan::<T, Op>(items, running, true);
    total
}

/// The warp-striped shape's rule, checked at compile time: `items` is whole rows of `vec`.
const fn assert_whole_rows(vec: usize, items: usize) {
    assert!(
        vec > 0 && items.is_multiple_of(vec),
        "ITEMS must be whole rows of VEC items"
    );
}

/// Scan of a tile held in the *warp-striped* arrangement, in place: inclusive, or exclusive
/// when `exclusive` (as [`block_inclusive_scan`] / [`block_exclusive_scan`]). Returns the tile's
/// total.
///
/// Warp `w` holds items `w * 32 * ITEMS .. (w + 1) * 32 * ITEMS` of the tile, as `ITEMS / VEC`
/// *rows* of `32 * VEC` consecutive items: lane `l` holds `VEC` consecutive items of each row,
/// its items `r * VEC .. (r + 1) * VEC` being the row `r` items `l * VEC ..`. Each row is then one
/// coalesced access per warp (`VEC` = one 16-byte vector per lane), where the blocked
/// arrangement of [`block_exclusive_scan`] has each lane read `ITEMS` consecutive items, 32
/// strided accesses per warp instruction.
///
/// Per row: each lane combines its `VEC` items, one warp scan ([`warp_exclusive_scan`]) orders
/// the lanes, and the row totals are carried from row to row; then the warps' totals are
/// combined through `storage` as in [`block_exclusive_scan`]. Operands are never reordered.
///
/// - **Result valid in:** every thread (its items, and the total).
/// - **Example:** 64 threads, `VEC` 2, `ITEMS` 4, all 1, `Sum`, exclusive: warp 0 lane 3 holds
///   tile items 6, 7 (row 0) and 70, 71 (row 1), which become 6, 7, 70, 71 (inclusive: 7, 8,
///   71, 72); total 256.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); the block is whole warps
/// (`block_dim()` a multiple of 32); call [`block_barrier`] before reusing `storage`.
#[inline(always)]
pub unsafe fn block_scan_warp_striped<T, Op, const VEC: usize, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    exclusive: bool,
    storage: BlockScanStorage<T>,
) -> T
where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    const { assert_whole_rows(VEC, ITEMS) };
    // The combination of this warp's rows before the current one.
    let mut carry = Op::identity();
    unrolled_for(ITEMS / VEC, |r| {
        let mut lane_total = items[r * VEC];
        for v in 1..VEC {
            lane_total = Op::combine(lane_total, items[r * VEC + v]);
        }
        // SAFETY: whole warps call it (the caller's contract).
        let (before, row_total) = unsafe { warp_exclusive_scan::<T, Op>(lane_total, WARP_SIZE) };
        let row = &mut items[r * VEC..(r + 1) * VEC];
        thread_scan::<T, Op>(row, Op::combine(carry, before), exclusive);
        carry = Op::combine(carry, row_total);
    });
    // SAFETY: forwarded from the caller; every lane holds the warp's total in `carry`.
    let (warp_prefix, total) = unsafe { combine_warp_totals::<T, Op>(carry, WARP_SIZE, storage) };
    unrolled_for(ITEMS, |k| items[k] = Op::combine(warp_prefix, items[k]));
    total
}

/// Segmented scan of a warp-striped tile (the arrangement of [`block_scan_warp_striped`]), in
/// place: bit `v` of `heads[r]` (for `r < ITEMS / VEC`) flags item `(r, v)` as a segment's
/// first item (a *head*), and each item becomes the combination of the tile's items from the
/// last head at or before it (inclusive), or of those before it (exclusive: the identity at a
/// head). Returns the tile's aggregate as a [`Keyed`] pair: the combination from the tile's last
/// head on, `segment` 0 when the tile has a head and [`NO_HEAD`] when not. On return, bit `v` of
/// `heads[r]` says whether the tile holds a head at or before item `(r, v)`: where it is clear,
/// the item still wants what precedes the tile combined on its left (a device scan's prefix).
///
/// Per row: each lane combines its `VEC` items from its last head, one segmented warp scan
/// ([`warp_segmented_exclusive_scan`]: a ballot of the lanes' heads, then one shuffle per step)
/// orders the lanes; the rows' totals are carried as [`Keyed`] pairs, and the warps' totals are
/// combined through `storage` as in [`block_exclusive_scan`]; last, each lane scans its items
/// from its prefix. Against [`block_scan_warp_striped`] over [`Keyed`] items with
/// [`SegmentedOp`], each item carries a bit instead of a 32-bit segment and each scan step moves
/// one value instead of a pair (half the shuffles; the scan by key's figures are in
/// docs/performance.md).
///
/// - **Who calls:** every thread of the block.
/// - **Result valid in:** every thread (its items and covered bits, and the aggregate).
/// - **Example:** 64 threads, `VEC` 2, `ITEMS` 4, all 1, `Sum`, inclusive, heads at tile items
///   0 and 68: warp 0 lane 3 holds tile items 6, 7 (row 0) and 70, 71 (row 1), which become 7,
///   8, 3, 4, all covered; the aggregate is `(256 - 68, 0)`.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); the block is whole warps
/// (`block_dim()` a multiple of 32); call [`block_barrier`] before reusing `storage`.
#[inline(always)]
pub unsafe fn block_segmented_scan_warp_striped<T, Op, const VEC: usize, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    heads: &mut [u32; ITEMS],
    exclusive: bool,
    storage: BlockScanStorage<Keyed<T>>,
) -> Keyed<T>
where
    T: Shuffle + SharedValue,
    Keyed<T>: SharedValue,
    Op: ReduceOp<T>,
{
    const { assert_whole_rows(VEC, ITEMS) };
    let keyed = |value: T, head: bool| Keyed {
        value,
        segment: if head { 0 } else { NO_HEAD },
    };
    let lane = lane_id();
    // Per row, the combination of the warp's items before the lane's item (r, 0); only the
    // first ITEMS / VEC entries are used.
    let mut before_row = [SegmentedOp::<Op>::identity(); ITEMS];
    // The combination of the warp's rows before the current one.
    let mut carry = SegmentedOp::<Op>::identity();
    unrolled_for(ITEMS / VEC, |r| {
        let row_heads = heads[r];
        let mut lane_total = items[r * VEC];
        for v in 1..VEC {
            let x = items[r * VEC + v];
            lane_total = if (row_heads >> v) & 1 != 0 {
                x
            } else {
                Op::combine(lane_total, x)
            };
        }
        // SAFETY: whole warps call it (the caller's contract).
        let (before, row_total, lanes_with_heads) =
            unsafe { warp_segmented_exclusive_scan::<T, Op>(lane_total, row_heads != 0) };
        let head_before = lanes_with_heads & lane_mask_below(lane) != 0;
        before_row[r] = SegmentedOp::<Op>::combine(carry, keyed(before, head_before));
        carry = SegmentedOp::<Op>::combine(carry, keyed(row_total, lanes_with_heads != 0));
    });
    // SAFETY: forwarded from the caller; every lane holds the warp's total in `carry`.
    let (warp_prefix, total) =
        unsafe { combine_warp_totals::<Keyed<T>, SegmentedOp<Op>>(carry, WARP_SIZE, storage) };
    unrolled_for(ITEMS / VEC, |r| {
        let row_heads = heads[r];
        let mut running = SegmentedOp::<Op>::combine(warp_prefix, before_row[r]);
        let mut covered = 0;
        for v in 0..VEC {
            let head = (row_heads >> v) & 1 != 0;
            let next = SegmentedOp::<Op>::combine(running, keyed(items[r * VEC + v], head));
            items[r * VEC + v] = match (exclusive, head) {
                (false, _) => next.value,
                (true, true) => Op::identity(),
                (true, false) => running.value,
            };
            covered |= ((next.segment != NO_HEAD) as u32) << v;
            running = next;
        }
        heads[r] = covered;
    });
    total
}

/// Scan of a warp-striped tile (the arrangement of [`block_scan_warp_striped`]) whose items are
/// produced by `item(row, position)` instead of held scanned in registers: each row is produced
/// twice, so only one value per row stays in registers beside whatever `item` reads from (for a
/// tile of narrow inputs, its raw elements: half the registers of f32 accumulators). Every item
/// is combined after `tile_prefix(total)` (the prefix of the tile, from the tile's total: the
/// device scan's look-back), and each scanned row of `VEC` items goes to `store_row(row, items)`.
///
/// 1. Per row `r < ITEMS / VEC`: each lane combines its `VEC` items, one warp scan orders the
///    lanes; the lane keeps the combination of the warp's items before its row items.
/// 2. The warps' totals are combined through `storage` as in [`block_exclusive_scan`].
/// 3. `tile_prefix(total)`, called by every thread (it may hold barriers).
/// 4. Per row: the thread's prefix and the sequential scan of its `VEC` items; `store_row`.
///
/// Operands are never reordered; `item` must give the same value both times.
///
/// - **Result valid in:** every thread (the rows it stores).
///
/// # Safety
/// Every thread of the block calls it (one barrier inside, and those of `tile_prefix`); the
/// block is whole warps (`block_dim()` a multiple of 32); call [`block_barrier`] before reusing
/// `storage`.
#[inline(always)]
pub unsafe fn block_scan_warp_striped_rows<T, Op, const VEC: usize, const ITEMS: usize>(
    item: impl Fn(usize, usize) -> T,
    exclusive: bool,
    storage: BlockScanStorage<T>,
    tile_prefix: impl FnOnce(T) -> T,
    mut store_row: impl FnMut(usize, [T; VEC]),
) where
    T: Shuffle + SharedValue,
    Op: ReduceOp<T>,
{
    const { assert_whole_rows(VEC, ITEMS) };
    // Only the first ITEMS / VEC entries are used (the count cannot be a const argument here).
    let mut before_row = [Op::identity(); ITEMS];
    let mut carry = Op::identity();
    unrolled_for(ITEMS / VEC, |r| {
        let mut lane_total = item(r, 0);
        for v in 1..VEC {
            lane_total = Op::combine(lane_total, item(r, v));
        }
        // SAFETY: whole warps call it (the caller's contract).
        let (before, row_total) = unsafe { warp_exclusive_scan::<T, Op>(lane_total, WARP_SIZE) };
        before_row[r] = Op::combine(carry, before);
        carry = Op::combine(carry, row_total);
    });
    // SAFETY: forwarded from the caller; every lane holds the warp's total in `carry`.
    let (warp_prefix, total) = unsafe { combine_warp_totals::<T, Op>(carry, WARP_SIZE, storage) };
    let prefix = Op::combine(tile_prefix(total), warp_prefix);
    unrolled_for(ITEMS / VEC, |r| {
        let mut row = [Op::identity(); VEC];
        for v in 0..VEC {
            row[v] = item(r, v);
        }
        thread_scan::<T, Op>(&mut row, Op::combine(prefix, before_row[r]), exclusive);
        store_row(r, row);
    });
}

/// Ranks of the set flags of a warp-striped tile (the arrangement of
/// [`block_scan_warp_striped`]): bit `v` of `flags[r]` (for `r < ITEMS / VEC`) flags this lane's
/// item `(r, v)`. Returns, per row `r`, the number of flagged items before the lane's item
/// `(r, 0)` in the tile, and the tile's count: flagged item `(r, v)` is number
/// `ranks[r] + (flags[r] & ((1 << v) - 1)).count_ones()`. The ranks of a stream compaction.
///
/// The lane's count of each row (at most `VEC`) is packed into a field of a 32-bit word (8 bits,
/// or 16 when a row of the warp can count 256), so that one warp scan of 5 shuffles ranks four
/// rows at once (two when the fields are 16 bits); the warps' totals are then scanned by one
/// warp scan of the per-warp slots in `storage`. Compared with [`block_scan_warp_striped`] over
/// the flags as `u32` items, a quarter of the shuffles and no loop over the warps.
///
/// - **Who calls:** every thread of the block, `VEC` at most 2048.
/// - **Result valid in:** every thread (its ranks, and the count).
/// - **Example:** 64 threads, `VEC` 2, `ITEMS` 4, every item flagged: warp 0 lane 3 holds tile
///   items 6, 7 (row 0) and 70, 71 (row 1): ranks `[6, 70]`, count 256.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); the block is whole warps
/// (`block_dim()` a multiple of 32); call [`block_barrier`] before reusing `storage`.
#[inline(always)]
pub unsafe fn block_rank_flags_warp_striped<const VEC: usize, const ITEMS: usize>(
    flags: &[u32; ITEMS],
    storage: BlockScanStorage<u32>,
) -> ([u32; ITEMS], u32) {
    const { assert_whole_rows(VEC, ITEMS) };
    const { assert!(VEC <= 2048, "a row's count must fit 16 bits") };
    let rows = ITEMS / VEC;
    // A row of the warp counts up to 32 * VEC.
    let field_bits = if 32 * VEC < 256 { 8 } else { 16 };
    let fields = 32 / field_bits;
    let mask = (1u32 << field_bits) - 1;
    // Row r's count is field r % fields of word r / fields (words past the first unused when
    // they all fit one).
    let mut words = [0u32; ITEMS];
    unrolled_for(rows, |r| {
        words[r / fields] |= flags[r].count_ones() << ((r % fields) * field_bits)
    });
    let mut before = [0u32; ITEMS];
    let mut totals = [0u32; ITEMS];
    unrolled_for(rows.div_ceil(fields), |w| {
        // SAFETY: whole warps call it (the caller's contract).
        (before[w], totals[w]) = unsafe { warp_exclusive_scan::<u32, Sum>(words[w], WARP_SIZE) };
    });
    // Per row: the lane's prefix in the row after the warp's count of the rows before it.
    let mut ranks = [0u32; ITEMS];
    let mut warp_count = 0;
    unrolled_for(rows, |r| {
        let shift = (r % fields) * field_bits;
        ranks[r] = warp_count + ((before[r / fields] >> shift) & mask);
        warp_count += (totals[r / fields] >> shift) & mask;
    });
    if lane_id() == 0 {
        // SAFETY: lane 0 of each warp writes its warp's slot; read after the barrier.
        unsafe { storage.slots.write(warp_id(), warp_count) };
    }
    // SAFETY: the caller guarantees the whole block calls this.
    unsafe { block_barrier() };
    let warps = warps_per_block();
    let slot = if lane_id() < warps {
        // SAFETY: every slot below `warps` was written before the barrier.
        unsafe { storage.slots.read(lane_id()) }
    } else {
        0
    };
    // SAFETY: whole warps call it; each lane's slot is a warp's count (or 0 past the last).
    let (before, count) = unsafe { warp_exclusive_scan::<u32, Sum>(slot, WARP_SIZE) };
    // SAFETY: as above.
    let warp_prefix = unsafe { warp_broadcast(before, warp_id(), WARP_SIZE) };
    unrolled_for(rows, |r| ranks[r] += warp_prefix);
    (ranks, count)
}
