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
use crate::thread::{block_dim, thread_idx};

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

/// Wait for tile `p`'s status in this epoch; returns its state.
#[inline(always)]
unsafe fn wait_for<A>(status: &TileStatus<A>, p: usize) -> u32 {
    loop {
        // SAFETY: p < number of tiles; the flag array holds one word per tile.
        let flag = unsafe { u32::load_acquire(status.flags.add(p)) };
        if flag >> 2 == status.epoch {
            return flag & 3;
        }
    }
}

/// Thread 0's part: publish the aggregate, look back, publish the inclusive prefix; returns the
/// tile's exclusive prefix.
#[inline(always)]
unsafe fn look_back<A: RelaxedAccess, Op: ReduceOp<A>>(
    status: &TileStatus<A>,
    tile: usize,
    aggregate: A,
) -> A {
    let publish = |state: u32| {
        // SAFETY: tile < number of tiles.
        unsafe { u32::store_release(status.flags.add(tile), status.epoch << 2 | state) };
    };
    // SAFETY (whole body): all indices are < tile < number of tiles.
    unsafe {
        if tile == 0 {
            A::store_relaxed(status.prefixes, aggregate);
            publish(STATE_PREFIX);
            return Op::identity();
        }
        A::store_relaxed(status.aggregates.add(tile), aggregate);
        publish(STATE_AGGREGATE);
        let mut exclusive = Op::identity();
        let mut p = tile - 1;
        loop {
            if wait_for(status, p) == STATE_PREFIX {
                exclusive = Op::combine(A::load_relaxed(status.prefixes.add(p)), exclusive);
                break;
            }
            exclusive = Op::combine(A::load_relaxed(status.aggregates.add(p)), exclusive);
            p -= 1; // tile 0 always publishes STATE_PREFIX, so p never passes 0
        }
        A::store_relaxed(status.prefixes.add(tile), Op::combine(exclusive, aggregate));
        publish(STATE_PREFIX);
        exclusive
    }
}

/// Scan one tile of `input[0..n]` into `output` (inclusive, or exclusive when `exclusive`).
/// The grid must have exactly `ceil(n / (block_dim() * ITEMS))` blocks.
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
    if t == 0 {
        // SAFETY: this block owns `tile`; the status arrays hold one entry per tile.
        let prefix = unsafe { look_back::<T::Acc, Op>(&status, tile, aggregate) };
        // SAFETY: read by the block after the barrier below.
        unsafe { storage.prefix.write(0, prefix) };
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
