//! Block loads of a tile from global memory: direct (each thread reads its own items, blocked,
//! striped or warp-striped: [`block_load_direct_blocked`], [`block_load_direct_striped`],
//! [`block_load_direct_warp_striped`]), transposed (coalesced reads, then an exchange to blocked:
//! [`block_load_transposed`], [`block_load_warp_transposed`]), as CUB's `BlockLoad`; each takes
//! the tile's first element and the number of its items that exist (`valid`: tile edges),
//! filling the rest with a value of the caller's. The arrangements are
//! [`exchange`](super::exchange)'s.
//!
//! The vectorised loads below read the *warp-striped* arrangement of
//! [`block_scan_warp_striped`](super::block_scan_warp_striped): warp `w` of the block reads
//! `ITEMS / VEC` rows of `32 * VEC` consecutive elements, lane `l` the `VEC` elements
//! `row_first(r) .. row_first(r) + VEC` of row `r`: one coalesced access per warp and row, one
//! 16-byte vector per lane for whole tiles.
//!
//! The caller says where each lane's rows start (`row_first`) and whether the tile is whole
//! (`whole_tile`: every row in bounds and the array 16-byte aligned); partial tiles are read
//! element by element, up to `n`.
//!
//! - **Who calls:** any thread (no barrier, no shared memory); the rows of a warp are coalesced
//!   when its 32 lanes call together.
//! - **Example:** 256 threads, f32, `VEC` 4, `ITEMS` 32 (a tile of 8192): lane 3 of warp 1 reads
//!   elements `1024 + 12 ..= 1024 + 15` as its row 0, then `1024 + 140 ..` as row 1.

use super::exchange::{
    BlockExchangeStorage, block_striped_to_blocked, block_warp_striped_to_blocked, blocked_position,
    striped_position, warp_striped_position,
};
use crate::device::element::{Element, MAX_WORDS, Packed, load_aligned};
use crate::shared::SharedValue;
use crate::thread::{WARP_SIZE, block_dim, lane_id, warp_id};
use crate::unroll::unrolled_for;

/// Element `v` of a row read by [`block_load_warp_striped_words`].
#[inline(always)]
pub fn row_element<T: Packed>(row: [u32; 4], v: usize) -> T {
    let mut words = [0; MAX_WORDS];
    words[..4].copy_from_slice(&row);
    T::unpack(&words, v)
}

/// As [`block_load_warp_striped`], the raw bits: row `r` of this lane as the four words of its 16 bytes
/// (rows `ITEMS / VEC ..` unused); elements past `n` are zero bits.
///
/// # Safety
/// As [`block_load_warp_striped`].
#[inline(always)]
pub unsafe fn block_load_warp_striped_words<T: Element, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    n: usize,
    whole_tile: bool,
    row_first: impl Fn(usize) -> usize,
) -> [[u32; 4]; ITEMS] {
    let mut rows = [[0; 4]; ITEMS];
    // The test outside the rows, as in `block_load_warp_striped`.
    if whole_tile {
        unrolled_for(ITEMS / VEC, |r| {
            // SAFETY: the caller's contract for whole tiles; 16 bytes are four u32.
            rows[r] = unsafe { load_aligned::<u32, 4>(input.add(row_first(r)).cast::<u32>()) };
        });
    } else {
        unrolled_for(ITEMS / VEC, |r| {
            let first = row_first(r);
            let mut words = [0; MAX_WORDS];
            for v in 0..VEC {
                if first + v < n {
                    // SAFETY: first + v < n.
                    unsafe { *input.add(first + v) }.pack(&mut words, v);
                }
            }
            rows[r] = [words[0], words[1], words[2], words[3]];
        });
    }
    rows
}

/// This lane's items of the tile, warp-striped: item `r * VEC + v` is `convert` of element
/// `row_first(r) + v`, or `past_end` from `n` on. Whole tiles (`whole_tile`) are read with one
/// 16-byte load per row.
///
/// # Safety
/// `input` holds `n` readable elements; when `whole_tile`, every `row_first(r) .. + VEC` is below
/// `n`, `input` is 16-byte aligned and `row_first(r)` a multiple of `VEC` (16 bytes of `T`).
#[inline(always)]
pub unsafe fn block_load_warp_striped<T: Packed, U: Copy, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    n: usize,
    whole_tile: bool,
    row_first: impl Fn(usize) -> usize,
    past_end: U,
    convert: impl Fn(T) -> U,
) -> [U; ITEMS] {
    let mut items = [past_end; ITEMS];
    // Index loops over register arrays: iterators over arrays taken by value leave their state in
    // local memory on this back end. The whole-tile test is outside the rows: tested in each
    // row, every row's load ended in a branch whose join copied the loaded registers, and each
    // copy waited for its load before the next row's load was issued (ptxas, sm_90: the f64
    // scan's rows loaded one after another).
    if whole_tile {
        unrolled_for(ITEMS / VEC, |r| {
            // SAFETY: the caller's contract for whole tiles.
            let row = unsafe { load_aligned::<T, VEC>(input.add(row_first(r))) };
            for v in 0..VEC {
                items[r * VEC + v] = convert(row[v]);
            }
        });
    } else {
        unrolled_for(ITEMS / VEC, |r| {
            let first = row_first(r);
            for v in 0..VEC {
                if first + v < n {
                    // SAFETY: first + v < n.
                    items[r * VEC + v] = convert(unsafe { *input.add(first + v) });
                }
            }
        });
    }
    items
}

/// Whether the tile of `block_dim() * ITEMS` positions holds `valid` or more items: loads and
/// stores of a whole tile take no test per item.
#[inline(always)]
pub(crate) fn whole_tile<const ITEMS: usize>(valid: u32) -> bool {
    valid >= block_dim() * ITEMS as u32
}

/// Load this thread's `ITEMS` items of the tile at `tile`, each from tile position
/// `position(k)`: `tile[position(k)]` where that is below `valid`, else `past_end`.
///
/// # Safety
/// `tile[0 .. valid]` is readable.
#[inline(always)]
unsafe fn load_direct<T: Copy, const ITEMS: usize>(
    tile: *const T,
    valid: u32,
    past_end: T,
    position: impl Fn(usize) -> u32,
) -> [T; ITEMS] {
    let mut items = [past_end; ITEMS];
    if whole_tile::<ITEMS>(valid) {
        unrolled_for(ITEMS, |k| {
            // SAFETY: every position of a whole tile is below valid.
            items[k] = unsafe { *tile.add(position(k) as usize) };
        });
    } else {
        unrolled_for(ITEMS, |k| {
            let p = position(k);
            if p < valid {
                // SAFETY: p < valid.
                items[k] = unsafe { *tile.add(p as usize) };
            }
        });
    }
    items
}

/// Load this thread's items blocked (CUB's `LoadDirectBlocked`): item `k` is `tile[thread *
/// ITEMS + k]`, or `past_end` from `valid` on. Each thread reads consecutive elements: a warp's
/// accesses are `ITEMS` elements apart (not coalesced past `ITEMS == 1`; see
/// [`block_load_transposed`]).
///
/// - **Who calls:** any thread (no barrier); **result valid in:** the calling thread.
/// - **Example:** 128 threads, 4 items, `valid` 510: thread 127 gets `tile[508]`, `tile[509]`
///   and `past_end` twice.
///
/// # Safety
/// `tile[0 .. valid]` is readable (`valid`: the tile's items that exist, at most
/// `block_dim() * ITEMS` are read).
#[inline(always)]
pub unsafe fn block_load_direct_blocked<T: Copy, const ITEMS: usize>(
    tile: *const T,
    valid: u32,
    past_end: T,
) -> [T; ITEMS] {
    // SAFETY: forwarded.
    unsafe { load_direct::<T, ITEMS>(tile, valid, past_end, blocked_position::<ITEMS>) }
}

/// Load this thread's items striped (CUB's `LoadDirectStriped`): item `k` is
/// `tile[k * block_dim() + thread]`, or `past_end` from `valid` on. Coalesced: the block's item
/// `k` is `block_dim()` consecutive elements.
///
/// # Safety
/// As [`block_load_direct_blocked`].
#[inline(always)]
pub unsafe fn block_load_direct_striped<T: Copy, const ITEMS: usize>(
    tile: *const T,
    valid: u32,
    past_end: T,
) -> [T; ITEMS] {
    // SAFETY: forwarded.
    unsafe { load_direct::<T, ITEMS>(tile, valid, past_end, striped_position) }
}

/// Load this thread's items warp-striped (CUB's `LoadDirectWarpStriped`): item `k` is
/// `tile[(warp * ITEMS + k) * 32 + lane]`, or `past_end` from `valid` on. Coalesced: each
/// warp's item `k` is 32 consecutive elements.
///
/// # Safety
/// As [`block_load_direct_blocked`]; `block_dim()` is a multiple of 32.
#[inline(always)]
pub unsafe fn block_load_direct_warp_striped<T: Copy, const ITEMS: usize>(
    tile: *const T,
    valid: u32,
    past_end: T,
) -> [T; ITEMS] {
    // SAFETY: forwarded.
    unsafe { load_direct::<T, ITEMS>(tile, valid, past_end, warp_striped_position::<ITEMS>) }
}

/// Load this thread's items *blocked* through coalesced reads (CUB's `BLOCK_LOAD_TRANSPOSE`):
/// a striped load ([`block_load_direct_striped`]), then [`block_striped_to_blocked`]. Item `k`
/// is `tile[thread * ITEMS + k]`, or `past_end` from `valid` on.
///
/// - **Who calls:** every thread of the block (one barrier inside); **result valid in:** every
///   thread; `storage` may be written again after a barrier.
///
/// # Safety
/// As [`block_load_direct_blocked`] and [`block_striped_to_blocked`].
#[inline(always)]
pub unsafe fn block_load_transposed<T: SharedValue, const ITEMS: usize>(
    tile: *const T,
    valid: u32,
    past_end: T,
    storage: BlockExchangeStorage<T>,
) -> [T; ITEMS] {
    // SAFETY: forwarded.
    unsafe {
        let mut items = block_load_direct_striped::<T, ITEMS>(tile, valid, past_end);
        block_striped_to_blocked(&mut items, storage);
        items
    }
}

/// As [`block_load_transposed`], through warp-striped reads and a warp's exchange (CUB's
/// `BLOCK_LOAD_WARP_TRANSPOSE`): no block barrier, whole warps.
///
/// # Safety
/// As [`block_load_direct_warp_striped`] and [`block_warp_striped_to_blocked`].
#[inline(always)]
pub unsafe fn block_load_warp_transposed<T: SharedValue, const ITEMS: usize>(
    tile: *const T,
    valid: u32,
    past_end: T,
    storage: BlockExchangeStorage<T>,
) -> [T; ITEMS] {
    // SAFETY: forwarded.
    unsafe {
        let mut items = block_load_direct_warp_striped::<T, ITEMS>(tile, valid, past_end);
        block_warp_striped_to_blocked(&mut items, storage);
        items
    }
}

/// This warp's `32 * ITEMS` items of the tile as `ITEMS / VEC` warp-striped rows of `32 * VEC`
/// consecutive elements (one coalesced 16-byte load a lane and row, [`block_load_warp_striped`]):
/// item `r * VEC + v` is `tile[warp * 32 * ITEMS + (r * 32 + lane) * VEC + v]`, or zero bits from
/// `valid` on. A warp whose items all exist, from a 16-byte aligned `tile`, reads whole rows;
/// any other reads element by element. [`block_warp_rows_to_blocked`](super::exchange::block_warp_rows_to_blocked) makes them blocked; a
/// kernel loading two arrays issues both loads before either exchange, so that the second
/// array's loads do not wait for the first's data (the exchange writes it to shared memory).
///
/// - **Who calls:** any lane (no barrier); **result valid in:** the calling lane.
///
/// # Safety
/// `tile[0 .. valid]` is readable; `VEC` elements are 16 bytes.
#[inline(always)]
pub unsafe fn block_load_warp_rows<T: Packed, const VEC: usize, const ITEMS: usize>(
    tile: *const T,
    valid: usize,
) -> [T; ITEMS] {
    let warp_first = warp_id() as usize * WARP_SIZE as usize * ITEMS;
    let lane = lane_id() as usize;
    let whole = warp_first + WARP_SIZE as usize * ITEMS <= valid && (tile as usize).is_multiple_of(16);
    // SAFETY: rows of this warp's items; read whole only where every one exists and each row
    // start (a multiple of VEC from the aligned tile) is 16-byte aligned; else up to `valid`.
    unsafe {
        block_load_warp_striped::<T, T, VEC, ITEMS>(
            tile,
            valid,
            whole,
            |r| warp_first + (r * WARP_SIZE as usize + lane) * VEC,
            T::zero(),
            |x| x,
        )
    }
}
