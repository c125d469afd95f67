//! Block stores of a tile to global memory, the counterparts of [`load`](super::load) (CUB's
//! `BlockStore`): direct (each thread writes its own items where the arrangement puts them:
//! [`block_store_direct_blocked`], [`block_store_direct_striped`],
//! [`block_store_direct_warp_striped`]) and transposed (blocked items exchanged, then written
//! coalesced: [`block_store_transposed`], [`block_store_warp_transposed`]). Only the tile's
//! first `valid` positions are written (tile edges); nothing past them is touched.
//!
//! - **Who calls:** any thread for the direct stores (no barrier); every thread of the block
//!   for the transposed ones (one barrier, or the warp's wait).
//! - **Example:** 128 threads, 4 items blocked, `valid` 510: [`block_store_transposed`] writes
//!   `tile[0 .. 510]`, thread `t`'s item `k` at `t * 4 + k`, each warp's writes 32 consecutive
//!   elements.

use super::exchange::{
    BlockExchangeStorage, block_blocked_to_striped, block_blocked_to_warp_striped, blocked_position,
    striped_position, warp_striped_position,
};
use super::load::whole_tile;
use crate::shared::SharedValue;
use crate::unroll::unrolled_for;

/// Store this thread's items, item `k` to `tile[position(k)]` where that is below `valid`.
///
/// # Safety
/// `tile[0 .. valid]` is writable, and no other thread writes the same positions.
#[inline(always)]
unsafe fn store_direct<T: Copy, const ITEMS: usize>(
    tile: *mut T,
    valid: u32,
    items: &[T; ITEMS],
    position: impl Fn(usize) -> u32,
) {
    if whole_tile::<ITEMS>(valid) {
        unrolled_for(ITEMS, |k| {
            // SAFETY: every position of a whole tile is below valid.
            unsafe { *tile.add(position(k) as usize) = items[k] };
        });
    } else {
        unrolled_for(ITEMS, |k| {
            let p = position(k);
            if p < valid {
                // SAFETY: p < valid.
                unsafe { *tile.add(p as usize) = items[k] };
            }
        });
    }
}

/// Store this thread's items blocked (CUB's `StoreDirectBlocked`): item `k` to
/// `tile[thread * ITEMS + k]`, below `valid`.
///
/// # Safety
/// `tile[0 .. valid]` is writable and written by no one else meanwhile (`valid`: the tile's
/// positions to write, at most `block_dim() * ITEMS` are).
#[inline(always)]
pub unsafe fn block_store_direct_blocked<T: Copy, const ITEMS: usize>(
    tile: *mut T,
    valid: u32,
    items: &[T; ITEMS],
) {
    // SAFETY: forwarded; each position is one thread's.
    unsafe { store_direct(tile, valid, items, blocked_position::<ITEMS>) }
}

/// Store this thread's items striped (CUB's `StoreDirectStriped`): item `k` to
/// `tile[k * block_dim() + thread]`, below `valid`. Coalesced.
///
/// # Safety
/// As [`block_store_direct_blocked`].
#[inline(always)]
pub unsafe fn block_store_direct_striped<T: Copy, const ITEMS: usize>(
    tile: *mut T,
    valid: u32,
    items: &[T; ITEMS],
) {
    // SAFETY: forwarded; each position is one thread's.
    unsafe { store_direct(tile, valid, items, striped_position) }
}

/// Store this thread's items warp-striped (CUB's `StoreDirectWarpStriped`): item `k` to
/// `tile[(warp * ITEMS + k) * 32 + lane]`, below `valid`. Coalesced.
///
/// # Safety
/// As [`block_store_direct_blocked`]; `block_dim()` is a multiple of 32.
#[inline(always)]
pub unsafe fn block_store_direct_warp_striped<T: Copy, const ITEMS: usize>(
    tile: *mut T,
    valid: u32,
    items: &[T; ITEMS],
) {
    // SAFETY: forwarded; each position is one thread's.
    unsafe { store_direct(tile, valid, items, warp_striped_position::<ITEMS>) }
}

/// Store this thread's *blocked* items through coalesced writes (CUB's
/// `BLOCK_STORE_TRANSPOSE`): [`block_blocked_to_striped`], then a striped store. Item `k` goes
/// to `tile[thread * ITEMS + k]`, below `valid`.
///
/// # Safety
/// As [`block_store_direct_blocked`] and [`block_blocked_to_striped`] (every thread of the
/// block calls it).
#[inline(always)]
pub unsafe fn block_store_transposed<T: SharedValue, const ITEMS: usize>(
    tile: *mut T,
    valid: u32,
    mut items: [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded.
    unsafe {
        block_blocked_to_striped(&mut items, storage);
        block_store_direct_striped(tile, valid, &items);
    }
}

/// As [`block_store_transposed`], through a warp's exchange and warp-striped writes (CUB's
/// `BLOCK_STORE_WARP_TRANSPOSE`): no block barrier, whole warps.
///
/// # Safety
/// As [`block_store_direct_warp_striped`] and [`block_blocked_to_warp_striped`].
#[inline(always)]
pub unsafe fn block_store_warp_transposed<T: SharedValue, const ITEMS: usize>(
    tile: *mut T,
    valid: u32,
    mut items: [T; ITEMS],
    storage: BlockExchangeStorage<T>,
) {
    // SAFETY: forwarded.
    unsafe {
        block_blocked_to_warp_striped(&mut items, storage);
        block_store_direct_warp_striped(tile, valid, &items);
    }
}
