//! Block exchange: a tile of `block_dim() * ITEMS` items rearranged among the block's threads
//! through shared memory (CUB's `BlockExchange`).
//!
//! The arrangements (thread `t`, its item `k`, lane `l` of warp `w`), each a tile position:
//!
//! | arrangement | thread `t`'s item `k` | what it is for |
//! |---|---|---|
//! | blocked | `t * ITEMS + k` ([`blocked_position`]) | consecutive items in one thread: sequential scans, per-thread counters |
//! | striped | `k * block_dim() + t` ([`striped_position`]) | coalesced loads and stores: a block's item `k` is `block_dim()` consecutive elements |
//! | warp-striped | `(w * ITEMS + k) * 32 + l` ([`warp_striped_position`]) | coalesced too, each warp in its own `32 * ITEMS` elements |
//!
//! Blocked and warp-striped differ only within each warp (thread `w * 32 + l`'s blocked items
//! are `w * 32 * ITEMS + l * ITEMS + k`): those exchanges wait for the warp alone.
//!
//! Shared memory: [`BlockExchangeStorage`], padded (one unused slot after every 32,
//! [`padded_slot`]): a warp writing or reading its lanes' item `k` blocked (`ITEMS` apart) meets
//! 32 banks for any `ITEMS` (unpadded, 4-byte items 4 apart meet 8 banks: 4-way conflicts).
//!
//! | function | from -> to | waits for | result valid in |
//! |---|---|---|---|
//! | [`block_blocked_to_striped`], [`block_striped_to_blocked`] | blocked <-> striped | the block (1 barrier) | every thread |
//! | [`block_blocked_to_warp_striped`], [`block_warp_striped_to_blocked`] | blocked <-> warp-striped | the warp (1 `bar.warp.sync`) | every thread |
//! | [`block_warp_rows_to_blocked`] | warp-striped rows of `VEC` -> blocked | the warp (1 `bar.warp.sync`) | every thread |
//! | [`block_scatter_to_blocked`], [`block_scatter_to_striped`], [`block_scatter_to_warp_striped`] | item `k` to tile position `ranks[k]` | the block (1 barrier) | every thread |
//!
//! - **Who calls:** every thread of the block (for the warp-striped ones: whole warps,
//!   `block_dim()` a multiple of 32), each with `ITEMS` items.
//! - **Reuse:** the storage may be written again after a barrier ([`block_barrier`]; for the
//!   warp-striped exchanges a [`warp_sync`] of the full warp suffices).
//! - **Example:** 64 threads, 2 items each, item `k` of thread `t` = `2 t + k` (blocked):
//!   after [`block_blocked_to_striped`] thread `t` holds `t` and `64 + t`.

use crate::shared::{SharedArray, SharedValue};
use crate::sync::{block_barrier, warp_sync};
use crate::thread::{WARP_SIZE, block_dim, lane_id, thread_idx, warp_id};
use crate::unroll::unrolled_for;
pub use gpu_primitives_abi::layout::{padded_slot, padded_slots};

/// Shared memory of the block exchanges: the padded tile.
#[derive(Clone, Copy)]
pub struct BlockExchangeStorage<T> {
    slots: SharedArray<T>,
}

impl<T: SharedValue> BlockExchangeStorage<T> {
    /// Slots a block of `block` threads of `items` items needs ([`padded_slots`] of the tile).
    pub const fn slots(block: u32, items: usize) -> u32 {
        padded_slots(block * items as u32)
    }

    /// Wrap `slots` (at least [`Self::slots`]`(block_dim(), ITEMS)` elements; each exchange
    /// traps otherwise, before touching them).
    #[inline(always)]
    pub fn new(slots: SharedArray<T>) -> Self {
        Self { slots }
    }

    /// Trap unless the storage holds a tile of `ITEMS` items per thread of this block.
    #[inline(always)]
    fn check<const ITEMS: usize>(&self) {
        if self.slots.len() < Self::slots(block_dim(), ITEMS) {
            // SAFETY: `trap` has no preconditions; it ends the launch with an error.
            unsafe { core::arch::nvptx::trap() }
        }
    }
}

/// Tile position of this thread's item `k` in the blocked arrangement: `thread * ITEMS + k`.
#[inline(always)]
pub fn blocked_position<const ITEMS: usize>(k: usize) -> u32 {
    thread_idx() * ITEMS as u32 + k as u32
}

/// Tile position of this thread's item `k` in the striped arrangement: `k * block_dim() + thread`.
#[inline(always)]
pub fn striped_position(k: usize) -> u32 {
    k as u32 * block_dim() + thread_idx()
}

/// Tile position of this thread's item `k` in the warp-striped arrangement of `ITEMS` items per
/// thread: `(warp * ITEMS + k) * 32 + lane`.
#[inline(always)]
pub fn warp_striped_position<const ITEMS: usize>(k: usize) -> u32 {
    (warp_id() * ITEMS as u32 + k as u32) * WARP_SIZE + lane_id()
}

/// The padded slot of this thread's blocked item `k`: a constant offset from the thread's first
/// where `ITEMS` divides 32 or 32 divides `ITEMS` (no address per item kept in registers).
#[inline(always)]
pub(crate) fn blocked_slot<const ITEMS: usize>(k: usize) -> u32 {
    let first = thread_idx() * ITEMS as u32;
    if 32 % ITEMS == 0 {
        padded_slot(first) + k as u32
    } else if ITEMS.is_multiple_of(32) {
        padded_slot(first) + k as u32 + k as u32 / WARP_SIZE
    } else {
        padded_slot(first + k as u32)
    }
}

/// The padded slots of this thread's warp-striped items: item `k`'s is one base and a constant
/// offset (a lane's 32-position rows never cross a padding slot). The base is computed once,
/// here: computed per item, ptxas kept 16 addresses across the blocked sort's passes and
/// spilled.
#[inline(always)]
pub(crate) fn warp_striped_slots<const ITEMS: usize>() -> impl Fn(usize) -> u32 + Copy {
    let base = warp_id() * ITEMS as u32 * (WARP_SIZE + 1) + lane_id();
    move |k| base + k as u32 * (WARP_SIZE + 1)
}

/// The padded slot of this thread's striped item `k`.
#[inline(always)]
fn striped_slot(k: usize) -> u32 {
    padded_slot(striped_position(k))
}

/// Write each item `k` to slot `to(k)`, wait (the block, or with `WARP` the warp), then read
/// item `k` from slot `from(k)`.
///
/// # Safety
/// Every thread of the block calls it (with `WARP`, every lane of each warp, whole warps); the
/// slots written by the threads that wait together are distinct and are the slots they read.
#[inline(always)]
unsafe fn write_wait_read<T: SharedValue, const ITEMS: usize, const WARP: bool>(
    items: &mut [T; ITEMS],
    storage: BlockExchangeStorage<T>,
    to: impl Fn(usize) -> u32,
    from: impl Fn(usize) -> u32,
) {
    storage.check::<ITEMS>();
    unrolled_for(ITEMS, |k| {
        // SAFETY: a padded slot of the tile: within the storage (checked above).
        unsafe { storage.slots.write_unchecked(to(k), items[k]) };
    });
    // SAFETY: the caller's: the block (or the whole warp) calls it.
    unsafe {
        if WARP {
            warp_sync(u32::MAX)
        } else {
            block_barrier()
        }
    };
    unrolled_for(ITEMS, |k| {
        // SAFETY: within the storage; written before the wait by a thread that waited with
        // this one (the caller's).
        items[k] = unsafe { storage.slots.read_unchecked(from(k)) };
    });
}

/// Blocked to striped, in place: on entry item `k` is tile position `thread * ITEMS + k`, on
/// return `k * block_dim() + thread`.
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); `storage` is this block's and was
/// not in use since the last barrier.
#[inline(always)]
pub unsafe fn block_blocked_to_striped<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded; blocked and striped are both every position of the tile once.
    unsafe { write_wait_read::<T, ITEMS, false>(items, storage, blocked_slot::<ITEMS>, striped_slot) }
}

/// Striped to blocked, in place (the reverse of [`block_blocked_to_striped`]).
///
/// # Safety
/// As [`block_blocked_to_striped`].
#[inline(always)]
pub unsafe fn block_striped_to_blocked<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded, as above.
    unsafe { write_wait_read::<T, ITEMS, false>(items, storage, striped_slot, blocked_slot::<ITEMS>) }
}

/// Blocked to warp-striped, in place: on entry item `k` is tile position `thread * ITEMS + k`,
/// on return `(warp * ITEMS + k) * 32 + lane`. Each warp exchanges its own `32 * ITEMS` items:
/// one `bar.warp.sync`, no block barrier.
///
/// # Safety
/// Every lane of each warp calls it; `block_dim()` is a multiple of 32; `storage` is this
/// block's and this warp's part of it was not in use since the warp last synchronised.
#[inline(always)]
pub unsafe fn block_blocked_to_warp_striped<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded; both arrangements give warp w the positions w * 32 * ITEMS .. + 32 *
    // ITEMS, so the lanes that wait together write and read the same slots.
    unsafe {
        write_wait_read::<T, ITEMS, true>(
            items,
            storage,
            blocked_slot::<ITEMS>,
            warp_striped_slots::<ITEMS>(),
        )
    }
}

/// Warp-striped to blocked, in place (the reverse of [`block_blocked_to_warp_striped`]).
///
/// # Safety
/// As [`block_blocked_to_warp_striped`].
#[inline(always)]
pub unsafe fn block_warp_striped_to_blocked<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded, as above.
    unsafe {
        write_wait_read::<T, ITEMS, true>(
            items,
            storage,
            warp_striped_slots::<ITEMS>(),
            blocked_slot::<ITEMS>,
        )
    }
}

/// The padded slots of this thread's items in warp-striped *rows* of `VEC` elements (the
/// arrangement of 16-byte loads, [`block_load_warp_striped`](super::block_load_warp_striped)):
/// item `r * VEC + v` is tile position `warp * 32 * ITEMS + (r * 32 + lane) * VEC + v`. One base
/// and a constant offset an item: with `VEC` dividing 32, a lane's `VEC` elements never cross a
/// padding slot, so the slot is `padded_slot(warp * 32 * ITEMS + lane * VEC) + r * 33 * VEC + v`.
#[inline(always)]
fn warp_row_slots<const VEC: usize, const ITEMS: usize>() -> impl Fn(usize) -> u32 + Copy {
    let base = padded_slot(warp_id() * WARP_SIZE * ITEMS as u32 + lane_id() * VEC as u32);
    move |k| base + (k / VEC) as u32 * (WARP_SIZE + 1) * VEC as u32 + (k % VEC) as u32
}

/// Warp-striped rows of `VEC` elements to blocked, in place: on entry item `r * VEC + v` is tile
/// position `warp * 32 * ITEMS + (r * 32 + lane) * VEC + v` (each row of the warp one coalesced
/// 16-byte load a lane), on return item `k` is `thread * ITEMS + k`. Each warp exchanges its own
/// `32 * ITEMS` items: one `bar.warp.sync`, no block barrier. A warp's writes of one row and its
/// blocked reads of 4-byte items meet 32 banks (the padding).
///
/// # Safety
/// As [`block_blocked_to_warp_striped`]; `VEC` divides both 32 and `ITEMS`.
#[inline(always)]
pub unsafe fn block_warp_rows_to_blocked<T: SharedValue, const VEC: usize, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    const { assert!(32 % VEC == 0 && ITEMS.is_multiple_of(VEC)) };
    // SAFETY: forwarded; both arrangements give warp w the positions w * 32 * ITEMS .. + 32 *
    // ITEMS, each once, so the lanes that wait together write and read the same slots.
    unsafe {
        write_wait_read::<T, ITEMS, true>(
            items,
            storage,
            warp_row_slots::<VEC, ITEMS>(),
            blocked_slot::<ITEMS>,
        )
    }
}

/// Scatter each item `k` to tile position `ranks[k]`, then read the tile back blocked: on return
/// thread `t`'s item `k` is the item ranked `t * ITEMS + k` (the radix sort's "scatter to ranked
/// positions").
///
/// # Safety
/// Every thread of the block calls it (one barrier inside); the ranks of the whole block are
/// each position of the tile (`0 .. block_dim() * ITEMS`) exactly once; `storage` as
/// [`block_blocked_to_striped`].
#[inline(always)]
pub unsafe fn block_scatter_to_blocked<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    ranks: &[u32; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded; the ranks are the tile's positions, each once (the caller's).
    unsafe {
        write_wait_read::<T, ITEMS, false>(items, storage, |k| padded_slot(ranks[k]), blocked_slot::<ITEMS>)
    }
}

/// As [`block_scatter_to_blocked`], read back striped: thread `t`'s item `k` is the item
/// ranked `k * block_dim() + t`.
///
/// # Safety
/// As [`block_scatter_to_blocked`].
#[inline(always)]
pub unsafe fn block_scatter_to_striped<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    ranks: &[u32; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: as above.
    unsafe { write_wait_read::<T, ITEMS, false>(items, storage, |k| padded_slot(ranks[k]), striped_slot) }
}

/// As [`block_scatter_to_blocked`], read back warp-striped: thread `t`'s item `k` is the item
/// ranked `(warp * ITEMS + k) * 32 + lane` (each warp then stores 32 consecutive items).
///
/// # Safety
/// As [`block_scatter_to_blocked`]; `block_dim()` a multiple of 32.
#[inline(always)]
pub unsafe fn block_scatter_to_warp_striped<T: SharedValue, const ITEMS: usize>(
    items: &mut [T; ITEMS],
    ranks: &[u32; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: as above; a rank may be any position of the tile, so the whole block waits.
    unsafe {
        write_wait_read::<T, ITEMS, false>(
            items,
            storage,
            |k| padded_slot(ranks[k]),
            warp_striped_slots::<ITEMS>(),
        )
    }
}
