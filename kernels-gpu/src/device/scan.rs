//! Device-wide scan in one pass with decoupled look-back (Merrill & Garland, "Single-pass Parallel
//! Prefix Scan with Decoupled Look-back", NVIDIA technical report NVR-2016-002).
//!
//! Each block scans one *tile* of `block_dim() * ITEMS` elements:
//! 1. thread 0 takes the next tile index from a global counter (tiles start in order, so every
//!    tile's predecessors are running or done: no dead-lock whatever the scheduling);
//! 2. the block loads its tile (16-byte accesses for whole tiles) and scans it
//!    ([`block_exclusive_scan`]), which also gives the tile's aggregate;
//! 3. thread 0 publishes the aggregate (state `AGGREGATE`), then *looks back* over the preceding
//!    tiles: it adds their aggregates, newest first, until it meets one whose inclusive prefix is
//!    published (state `PREFIX`), and publishes its own inclusive prefix;
//! 4. the block adds the exclusive prefix to its scanned items and stores them.
//!
//! Status words: `flag[tile] = epoch << 2 | state`, written with release and read with acquire
//! ordering at device scope; the values they guard are written and read relaxed at device scope.
//! The epoch (a per-call number from the host) lets the status array be reused across calls
//! without clearing: a flag from another call never matches. The tile counter is never reset
//! either: the host passes the count of tiles handed out before this call (`tile_base`).
//!
//! Input and output may be the same array (in-place scan): each element is read by the thread
//! that later writes it, and no other block touches the tile.

use super::element::{Element, load_aligned, store_aligned};
use crate::atomic::{AtomicAdd, AtomicWord, RelaxedAccess};
use crate::block::{BlockScanStorage, block_exclusive_scan};
use crate::op::ReduceOp;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, lane_id, thread_idx};
use crate::warp::{Shuffle, warp_ballot, warp_reduce};

/// Tile state: its aggregate is published.
pub const STATE_AGGREGATE: u32 = 1;
/// Tile state: its inclusive prefix is published.
pub const STATE_PREFIX: u32 = 2;

/// Global memory the scan shares between blocks (all device pointers, one entry per tile).
#[derive(Clone, Copy)]
pub struct TileStatus<A> {
    /// `epoch << 2 | state` per tile.
    pub flags: *mut u32,
    /// Each tile's aggregate (valid from `STATE_AGGREGATE`).
    pub aggregates: *mut A,
    /// Each tile's inclusive prefix (valid from `STATE_PREFIX`).
    pub prefixes: *mut A,
    /// Tiles handed out, over all calls.
    pub tile_counter: *mut u64,
    /// `*tile_counter` before this call.
    pub tile_base: u64,
    /// This call's epoch, `1 .. 2^30`.
    pub epoch: u32,
}

/// Shared memory of [`scan_tile`]: the block scan's slots, the tile index and the tile's prefix.
#[derive(Clone, Copy)]
pub struct ScanTileStorage<A> {
    /// For the block scan.
    pub scan: BlockScanStorage<A>,
    /// One u32: the tile index, from thread 0 to the block.
    pub tile: SharedArray<u32>,
    /// One value: the tile's exclusive prefix, from thread 0 to the block.
    pub prefix: SharedArray<A>,
}

/// Warp 0's part: publish the aggregate, look back, publish the inclusive prefix; returns the
/// tile's exclusive prefix (valid in lane 0).
///
/// The look-back reads 32 predecessors at a time, one per lane, lane 31 the nearest: each lane
/// waits until its tile has a status in this epoch; the newest tile with a published prefix ends
/// the walk; the lanes from it to lane 31 are combined in tile order ([`warp_reduce`]); with no
/// prefix in the window, all 32 aggregates are, and the window moves 32 tiles back.
#[inline(always)]
unsafe fn look_back<A: RelaxedAccess + Shuffle, Op: ReduceOp<A>>(
    status: &TileStatus<A>,
    tile: usize,
    aggregate: A,
) -> A {
    let lane = lane_id();
    let publish = |state: u32| {
        // SAFETY: tile < number of tiles.
        unsafe { u32::store_release(status.flags.add(tile), status.epoch << 2 | state) };
    };
    if tile == 0 {
        if lane == 0 {
            // SAFETY: tile 0 exists.
            unsafe { A::store_relaxed(status.prefixes, aggregate) };
            publish(STATE_PREFIX);
        }
        return Op::identity();
    }
    if lane == 0 {
        // SAFETY: tile < number of tiles.
        unsafe { A::store_relaxed(status.aggregates.add(tile), aggregate) };
        publish(STATE_AGGREGATE);
    }
    let mut exclusive = Op::identity();
    // The window is tiles `newest - 31 ..= newest`; lane l looks at `newest - 31 + l`.
    let mut newest = tile as isize - 1;
    loop {
        let mine = newest - (WARP_SIZE - 1 - lane) as isize;
        let mut state = STATE_PREFIX; // tiles before 0 count as an empty, finished prefix
        if mine >= 0 {
            loop {
                // Acquire: the value read below is the one published before this flag. (Relaxed
                // polling plus one fence measured slower on an H100: 2.5x the copy time vs 2.1x.)
                // SAFETY: 0 <= mine < tile.
                let flag = unsafe { u32::load_acquire(status.flags.add(mine as usize)) };
                if flag >> 2 == status.epoch {
                    state = flag & 3;
                    break;
                }
            }
        }
        // SAFETY: the whole warp reaches this vote (every lane left its wait loop).
        let prefixes = unsafe { warp_ballot(state == STATE_PREFIX, u32::MAX) };
        // The nearest published prefix in the window (prefixes != 0: tile 0 or a pre-0 lane).
        let stop = if prefixes == 0 {
            0
        } else {
            WARP_SIZE - 1 - prefixes.leading_zeros()
        };
        let value = if mine < 0 || lane < stop {
            Op::identity()
        } else if lane == stop && prefixes != 0 {
            // SAFETY: mine is a finished tile with a published prefix.
            unsafe { A::load_relaxed(status.prefixes.add(mine as usize)) }
        } else {
            // SAFETY: mine is a tile with a published aggregate.
            unsafe { A::load_relaxed(status.aggregates.add(mine as usize)) }
        };
        // SAFETY: the whole warp calls it; lane order is tile order.
        let window = unsafe { warp_reduce::<A, Op>(value, WARP_SIZE) };
        exclusive = Op::combine(window, exclusive);
        if prefixes != 0 {
            break;
        }
        newest -= WARP_SIZE as isize;
    }
    if lane == 0 {
        // SAFETY: tile < number of tiles; `exclusive` is valid in lane 0.
        unsafe { A::store_relaxed(status.prefixes.add(tile), Op::combine(exclusive, aggregate)) };
        publish(STATE_PREFIX);
    }
    exclusive
}

/// Scan one tile of `input[0..n]` into `output` (inclusive, or exclusive when `exclusive`).
/// The grid must have exactly `ceil(n / (block_dim() * ITEMS))` blocks of at least `WARP_SIZE`
/// threads.
///
/// Floating-point results can differ in the last bits from run to run: where the look-back stops
/// (and so how the sums are grouped) depends on timing.
///
/// # Safety
/// Every thread of the block calls it; `input` holds `n` readable elements and `output` `n`
/// writable values (they may be the same memory when `T::Acc == T`); `status` points at arrays
/// of one entry per tile, with every flag from an older epoch; `storage` is this block's.
#[inline(always)]
pub unsafe fn scan_tile<T, Op, const ITEMS: usize>(
    input: *const T,
    output: *mut T::Acc,
    n: usize,
    status: TileStatus<T::Acc>,
    exclusive: bool,
    storage: ScanTileStorage<T::Acc>,
) where
    T: Element,
    T::Acc: SharedValue,
    Op: ReduceOp<T::Acc>,
{
    let t = thread_idx();
    if t == 0 {
        // SAFETY: the counter is a valid u64; the result is published to the block below.
        unsafe {
            let ticket = u64::atomic_add(status.tile_counter, 1);
            storage.tile.write(0, (ticket - status.tile_base) as u32);
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let tile = unsafe { storage.tile.read(0) } as usize;
    let tile_len = block_dim() as usize * ITEMS;
    let first = tile * tile_len + t as usize * ITEMS;
    let whole_tile = (tile + 1) * tile_len <= n && input as usize % 16 == 0 && output as usize % 16 == 0;

    let mut values = [Op::identity(); ITEMS];
    if whole_tile {
        // SAFETY: the whole tile is in bounds and both arrays are 16-byte aligned.
        let raw = unsafe { load_aligned::<T, ITEMS>(input.add(first)) };
        // Index loops over register arrays: iterators over arrays taken by value leave their
        // state in local memory on this back end.
        for k in 0..ITEMS {
            values[k] = raw[k].to_acc();
        }
    } else {
        for k in 0..ITEMS {
            if first + k < n {
                // SAFETY: first + k < n.
                values[k] = unsafe { (*input.add(first + k)).to_acc() };
            }
        }
    }
    let mut scanned = values;
    // SAFETY: the whole block calls it with its own storage.
    let aggregate = unsafe { block_exclusive_scan::<T::Acc, Op, ITEMS>(&mut scanned, storage.scan) };
    if t < WARP_SIZE {
        // SAFETY: this block owns `tile`; the status arrays hold one entry per tile; the whole of
        // warp 0 takes this branch (blocks have at least WARP_SIZE threads, checked by the host).
        let prefix = unsafe { look_back::<T::Acc, Op>(&status, tile, aggregate) };
        if t == 0 {
            // SAFETY: read by the block after the barrier below.
            unsafe { storage.prefix.write(0, prefix) };
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let prefix = unsafe { storage.prefix.read(0) };
    let mut out = scanned;
    for k in 0..ITEMS {
        let before = Op::combine(prefix, scanned[k]);
        out[k] = if exclusive {
            before
        } else {
            Op::combine(before, values[k])
        };
    }
    if whole_tile {
        // SAFETY: as the load.
        unsafe { store_aligned::<T::Acc, ITEMS>(output.add(first), out) };
    } else {
        for k in 0..ITEMS {
            if first + k < n {
                // SAFETY: first + k < n.
                unsafe { *output.add(first + k) = out[k] };
            }
        }
    }
}
