//! Block loads of a tile from global memory in the *warp-striped* arrangement of
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

use crate::device::element::{Element, MAX_WORDS, Packed, load_aligned};
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
    unrolled_for(ITEMS / VEC, |r| {
        let first = row_first(r);
        if whole_tile {
            // SAFETY: the caller's contract for whole tiles; 16 bytes are four u32.
            rows[r] = unsafe { load_aligned::<u32, 4>(input.add(first).cast::<u32>()) };
        } else {
            let mut words = [0; MAX_WORDS];
            for v in 0..VEC {
                if first + v < n {
                    // SAFETY: first + v < n.
                    unsafe { *input.add(first + v) }.pack(&mut words, v);
                }
            }
            rows[r] = [words[0], words[1], words[2], words[3]];
        }
    });
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
pub unsafe fn block_load_warp_striped<T: Element, U: Copy, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    n: usize,
    whole_tile: bool,
    row_first: impl Fn(usize) -> usize,
    past_end: U,
    convert: impl Fn(T) -> U,
) -> [U; ITEMS] {
    let mut items = [past_end; ITEMS];
    // Index loops over register arrays: iterators over arrays taken by value leave their state in
    // local memory on this back end.
    unrolled_for(ITEMS / VEC, |r| {
        let first = row_first(r);
        if whole_tile {
            // SAFETY: the caller's contract for whole tiles.
            let row = unsafe { load_aligned::<T, VEC>(input.add(first)) };
            for v in 0..VEC {
                items[r * VEC + v] = convert(row[v]);
            }
        } else {
            for v in 0..VEC {
                if first + v < n {
                    // SAFETY: first + v < n.
                    items[r * VEC + v] = convert(unsafe { *input.add(first + v) });
                }
            }
        }
    });
    items
}
