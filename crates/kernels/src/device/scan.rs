//! Device-wide scan in one pass with decoupled look-back (Merrill & Garland, "Single-pass Parallel
//! Prefix Scan with Decoupled Look-back", NVIDIA technical report NVR-2016-002).
//!
//! Each block scans one *tile* of `block_dim() * ITEMS` elements:
//! 1. thread 0 takes the next tile index from a global counter (tiles start in order, so every
//!    tile's predecessors are running or done: no dead-lock whatever the scheduling);
//! 2. the block loads its tile (coalesced 16-byte accesses for whole tiles) and scans it
//!    ([`block_scan_warp_striped`]; for f16 / bf16, whose raw tile takes half the registers,
//!    [`block_scan_warp_striped_rows`]), which also gives the tile's aggregate;
//! 3. warp 0 publishes the aggregate (state `AGGREGATE`), sleeps a moment (large grids), then
//!    *looks back* over the preceding tiles, 32 at a time: it combines their aggregates, newest
//!    first, until it meets one whose inclusive prefix is published (state `PREFIX`), and
//!    publishes its own inclusive prefix;
//! 4. the block adds the exclusive prefix to its scanned items and stores them.
//!
//! The tile status (one word per tile, packed with the value for 4-byte types) is in
//! [`super::tile_status`]; it needs no clearing between calls. The tile counter is never reset
//! either: the host passes the count of tiles handed out before this call (`tile_base`).
//!
//! Input and output may be the same array (in-place scan): each element is read by the thread
//! that later writes it, and no other block touches the tile.

use super::element::{Element, store_aligned};
use super::tile_status::{STATE_AGGREGATE, STATE_PREFIX, TileStatus, TileStatusValue};
use crate::atomic::AtomicAdd;
use crate::block::{
    BlockScanStorage, block_load_warp_striped, block_load_warp_striped_words, block_scan_warp_striped,
    block_scan_warp_striped_rows, row_element,
};
use crate::op::ReduceOp;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, lane_id, sleep_ns, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_ballot, warp_reduce};

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

/// Nanoseconds a lane sleeps between two reads of a status that is not published yet (0: none).
/// A status a lane finds unpublished is usually published within a few hundred nanoseconds:
/// on an H100 at 2^28, 100 ns against 500 took the segmented reduce of 1000-item segments from
/// 0.847 to 0.817x the copy, and moved the scans, the compaction and the run-length encodings
/// by less than 0.5 % (docs/performance.md).
const LOOK_BACK_POLL_DELAY_NS: u32 = 100;

/// The tile this block scans: thread 0 takes the next ticket of the status's counter (tiles
/// start in order, so every tile's predecessors are running or done) and shares it through
/// `slot`. Returns the tile's index in this call, in every thread.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); `status.launch.tile_counter` is a valid
/// `u64` whose value at the call's start was `status.launch.tile_base`.
#[inline(always)]
pub(crate) unsafe fn next_tile<A>(status: &TileStatus<A>, slot: SharedArray<u32>) -> usize {
    if thread_idx() == 0 {
        // SAFETY: the counter is a valid u64; the result is published to the block below.
        unsafe {
            let ticket = u64::atomic_add(status.launch.tile_counter, 1);
            slot.write(0, (ticket - status.launch.tile_base) as u32);
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    (unsafe { slot.read(0) }) as usize
}

/// Warp 0's part: publish the aggregate, sleep `first_delay_ns`, look back, publish the
/// inclusive prefix; returns the tile's exclusive prefix (valid in lane 0).
///
/// The sleep before the first read is what CUB calls the L2 write latency of its delay
/// constructors: by the time the warp reads, its nearest predecessors have usually published
/// their inclusive prefix, so one window ends the walk, and fewer polls compete with the tiles'
/// loads in L2. On the H100 it took the f32 scan from 1.26x to 1.08x the copy time (the sweep
/// is in docs/performance.md); the host passes 0 for grids of about one wave, whose latency it
/// would only add to.
///
/// The look-back reads 32 predecessors at a time, one per lane, lane 31 the nearest: each lane
/// waits until its tile has a status in this epoch; the newest tile with a published prefix ends
/// the walk; the lanes from it to lane 31 are combined in tile order ([`warp_reduce`]); with no
/// prefix in the window, all 32 aggregates are, and the window moves 32 tiles back. An
/// aggregate that discards what comes before it ([`ReduceOp::absorbs_left`]: a segmented tile
/// with a head) is published as the tile's prefix at once, so a walk ends at the nearest tile
/// holding a head without waiting for that tile's own look-back.
#[inline(always)]
pub(crate) unsafe fn look_back<A: TileStatusValue + Shuffle, Op: ReduceOp<A>>(
    status: &TileStatus<A>,
    tile: usize,
    aggregate: A,
    first_delay_ns: u32,
) -> A {
    let lane = lane_id();
    if tile == 0 {
        if lane == 0 {
            // SAFETY: tile 0 exists; its prefix is its aggregate.
            unsafe { A::publish(status, 0, STATE_PREFIX, aggregate) };
        }
        return Op::identity();
    }
    // An aggregate that discards what comes before it (a segmented tile holding a head) is
    // already the tile's inclusive prefix: published as one, it ends its successors' walks
    // here, without waiting for this tile's own look-back.
    let finished = Op::absorbs_left(&aggregate);
    if lane == 0 {
        let state = if finished { STATE_PREFIX } else { STATE_AGGREGATE };
        // SAFETY: tile < number of tiles.
        unsafe { A::publish(status, tile, state, aggregate) };
    }
    // SAFETY: warp 0 of the block that owns `tile` (the caller's), 0 < tile, the aggregate
    // published just above.
    unsafe { walk_back::<A, Op>(status, tile, aggregate, finished, first_delay_ns) }
}

/// [`look_back`]'s first step, for a kernel that has work to do between it and the walk
/// ([`look_back_after_publish`]): lane 0 publishes the tile's aggregate (tile 0's, and one that
/// discards what comes before it, as the tile's inclusive prefix).
///
/// # Safety
/// Called by warp 0 of the block that owns `tile`, once; `tile` < the number of tiles.
#[inline(always)]
pub(crate) unsafe fn publish_aggregate<A: TileStatusValue, Op: ReduceOp<A>>(
    status: &TileStatus<A>,
    tile: usize,
    aggregate: A,
) {
    let lane = lane_id();
    if tile == 0 {
        if lane == 0 {
            // SAFETY: tile 0 exists; its prefix is its aggregate.
            unsafe { A::publish(status, 0, STATE_PREFIX, aggregate) };
        }
        return;
    }
    // An aggregate that discards what comes before it (a segmented tile holding a head) is
    // already the tile's inclusive prefix: published as one, it ends its successors' walks
    // here, without waiting for this tile's own look-back.
    if lane == 0 {
        let state = if Op::absorbs_left(&aggregate) {
            STATE_PREFIX
        } else {
            STATE_AGGREGATE
        };
        // SAFETY: tile < number of tiles.
        unsafe { A::publish(status, tile, state, aggregate) };
    }
}

/// [`look_back`] after [`publish_aggregate`]: sleep `first_delay_ns`, walk back, publish the
/// inclusive prefix; returns the tile's exclusive prefix (valid in lane 0).
///
/// # Safety
/// Called by the whole of warp 0 of the block that owns `tile`, after [`publish_aggregate`] of
/// the same `aggregate`.
#[inline(always)]
pub(crate) unsafe fn look_back_after_publish<A: TileStatusValue + Shuffle, Op: ReduceOp<A>>(
    status: &TileStatus<A>,
    tile: usize,
    aggregate: A,
    first_delay_ns: u32,
) -> A {
    if tile == 0 {
        return Op::identity();
    }
    // SAFETY: forwarded from the caller; 0 < tile.
    unsafe {
        walk_back::<A, Op>(
            status,
            tile,
            aggregate,
            Op::absorbs_left(&aggregate),
            first_delay_ns,
        )
    }
}

/// The walk of [`look_back`] and [`look_back_after_publish`], after the aggregate is published
/// (as the tile's prefix where `finished`): sleep, combine the predecessors, publish the
/// inclusive prefix unless `finished`; returns the exclusive prefix (valid in lane 0).
///
/// # Safety
/// Called by the whole of warp 0 of the block that owns `tile`, `0 < tile` < the number of
/// tiles, after its aggregate was published.
#[inline(always)]
unsafe fn walk_back<A: TileStatusValue + Shuffle, Op: ReduceOp<A>>(
    status: &TileStatus<A>,
    tile: usize,
    aggregate: A,
    finished: bool,
    first_delay_ns: u32,
) -> A {
    let lane = lane_id();
    if first_delay_ns > 0 {
        sleep_ns(first_delay_ns);
    }
    let mut exclusive = Op::identity();
    // The window is tiles `newest - 31 ..= newest`; lane l looks at `newest - 31 + l`.
    let mut newest = tile as isize - 1;
    loop {
        let mine = newest - (WARP_SIZE - 1 - lane) as isize;
        // Tiles before 0 count as an empty, finished prefix.
        let (mut state, mut value) = (STATE_PREFIX, Op::identity());
        if mine >= 0 {
            loop {
                // SAFETY: 0 <= mine < tile.
                if let Some(found) = unsafe { A::try_read(status, mine as usize) } {
                    (state, value) = found;
                    break;
                }
                if LOOK_BACK_POLL_DELAY_NS > 0 {
                    sleep_ns(LOOK_BACK_POLL_DELAY_NS);
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
        if lane < stop {
            value = Op::identity();
        }
        // SAFETY: the whole warp calls it; lane order is tile order.
        let window = unsafe { warp_reduce::<A, Op>(value, WARP_SIZE) };
        exclusive = Op::combine(window, exclusive);
        if prefixes != 0 {
            break;
        }
        newest -= WARP_SIZE as isize;
    }
    if lane == 0 && !finished {
        // SAFETY: tile < number of tiles; `exclusive` is valid in lane 0.
        unsafe { A::publish(status, tile, STATE_PREFIX, Op::combine(exclusive, aggregate)) };
    }
    exclusive
}

/// Scan one tile of `input[0..n]` into `output` (inclusive, or exclusive when `exclusive`),
/// starting from `*initial` where it is not null (tile 0 folds it into the prefix it publishes,
/// so every later tile's look-back carries it); warp 0 sleeps `look_back_delay_ns` before its look-back reads the predecessors (`look_back`).
/// The grid must have exactly `ceil(n / (block_dim() * ITEMS))` blocks, each a whole number of
/// warps.
///
/// The tile is held warp-striped ([`block_scan_warp_striped`]): each lane loads and
/// stores rows of `VEC` consecutive elements (one 16-byte vector of `T` when both arrays are
/// 16-byte aligned), so every warp access is coalesced. Inputs narrower than their accumulator
/// (f16, bf16) stay raw in registers, two to a register, and each row is converted twice
/// ([`block_scan_warp_striped_rows`]): twice the items per thread in the same registers.
///
/// Floating-point results can differ in the last bits from run to run: where the look-back stops
/// (and so how the sums are grouped) depends on timing.
///
/// # Safety
/// Every thread of the block calls it; `block_dim()` is a multiple of 32; `input` holds `n`
/// readable elements and `output` `n` writable values (they may be the same memory when
/// `T::Acc == T`); `initial` is null or one readable value; `status` points at 16 bytes per tile, 16-byte aligned, every slot from an
/// older epoch; `storage` is this block's.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // CUB's AgentScan: the ranges, the initial value, the status, the kind, the delay, shared storage.
pub unsafe fn scan_tile<T, Op, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    output: *mut T::Acc,
    initial: *const T::Acc,
    n: usize,
    status: TileStatus<T::Acc>,
    exclusive: bool,
    look_back_delay_ns: u32,
    storage: ScanTileStorage<T::Acc>,
) where
    T: Element,
    T::Acc: SharedValue + TileStatusValue,
    Op: ReduceOp<T::Acc>,
{
    let t = thread_idx();
    if t == 0 {
        // SAFETY: the counter is a valid u64; the result is published to the block below.
        unsafe {
            let ticket = u64::atomic_add(status.launch.tile_counter, 1);
            storage.tile.write(0, (ticket - status.launch.tile_base) as u32);
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let tile = unsafe { storage.tile.read(0) } as usize;
    let tile_len = block_dim() as usize * ITEMS;
    let warp_first = tile * tile_len + warp_id() as usize * WARP_SIZE as usize * ITEMS;
    // Element of item `r * VEC + v` of this lane: row r, position v of the lane's vector.
    let row_first = |r: usize| warp_first + (r * WARP_SIZE as usize + lane_id() as usize) * VEC;
    let whole_tile = (tile + 1) * tile_len <= n
        && (input as usize).is_multiple_of(16)
        && (output as usize).is_multiple_of(16);

    // Every thread: warp 0 looks back; the block gets the tile's exclusive prefix.
    // Tile 0 with an initial value: its exclusive prefix is that value, and the prefix it
    // publishes includes it (no other tile combines anything more).
    let tile_prefix = |aggregate: T::Acc| {
        if t < WARP_SIZE {
            let prefix = if tile == 0 && !initial.is_null() {
                // SAFETY: not null: one readable value (the caller's contract).
                let first = unsafe { *initial };
                if t == 0 {
                    // SAFETY: tile 0 exists; its inclusive prefix is the initial value and its
                    // aggregate (as `look_back` publishes tile 0's).
                    unsafe { T::Acc::publish(&status, 0, STATE_PREFIX, Op::combine(first, aggregate)) };
                }
                first
            } else {
                // SAFETY: this block owns `tile`; the status holds one slot per tile; the whole
                // of warp 0 takes this branch (blocks are whole warps).
                unsafe { look_back::<T::Acc, Op>(&status, tile, aggregate, look_back_delay_ns) }
            };
            if t == 0 {
                // SAFETY: read by the block after the barrier below.
                unsafe { storage.prefix.write(0, prefix) };
            }
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // SAFETY: written before the barrier.
        unsafe { storage.prefix.read(0) }
    };
    let store_row = |r: usize, row: [T::Acc; VEC]| {
        let first = row_first(r);
        if whole_tile {
            // SAFETY: as the load; `first * size_of::<T::Acc>()` is a multiple of 16 too.
            unsafe { store_aligned::<T::Acc, VEC>(output.add(first), row) };
        } else {
            for v in 0..VEC {
                if first + v < n {
                    // SAFETY: first + v < n.
                    unsafe { *output.add(first + v) = row[v] };
                }
            }
        }
    };
    if core::mem::size_of::<T>() < core::mem::size_of::<T::Acc>() {
        // Narrow inputs (f16, bf16): the raw tile, packed two to a 32-bit register, takes half
        // the registers of its f32 values, so each row is converted twice rather than kept
        // scanned. Elements past `n` are zero bits and never converted: `item` gives the
        // identity for them.
        // SAFETY: `input` holds `n` elements; `whole_tile` says this tile is in bounds and
        // 16-byte aligned, and `row_first(r)` is a multiple of VEC.
        let rows = unsafe { block_load_warp_striped_words::<T, VEC, ITEMS>(input, n, whole_tile, row_first) };
        let item = |r: usize, v: usize| {
            if whole_tile || row_first(r) + v < n {
                row_element::<T>(rows[r], v).to_acc()
            } else {
                Op::identity()
            }
        };
        // SAFETY: the whole block calls it with its own storage; blocks are whole warps.
        unsafe {
            block_scan_warp_striped_rows::<T::Acc, Op, VEC, ITEMS>(
                item,
                exclusive,
                storage.scan,
                tile_prefix,
                store_row,
            )
        };
    } else {
        // SAFETY: as for `block_load_warp_striped_words` above.
        let mut values = unsafe {
            block_load_warp_striped::<T, T::Acc, VEC, ITEMS>(
                input,
                n,
                whole_tile,
                row_first,
                Op::identity(),
                T::to_acc,
            )
        };
        // SAFETY: the whole block calls it with its own storage; blocks are whole warps.
        let aggregate = unsafe {
            block_scan_warp_striped::<T::Acc, Op, VEC, ITEMS>(&mut values, exclusive, storage.scan)
        };
        let prefix = tile_prefix(aggregate);
        unrolled_for(ITEMS / VEC, |r| {
            let mut row = [Op::identity(); VEC];
            for v in 0..VEC {
                row[v] = Op::combine(prefix, values[r * VEC + v]);
            }
            store_row(r, row);
        });
    }
}
