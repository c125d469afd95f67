//! The steps of the device-wide top-k by radix select (CUB's `DeviceTopK`; RadiK, Li et al.,
//! ICS 2024), the grid's side of `RadixSelectTopKParams`: a count of the candidates' next digit,
//! the gather of the selected keys' indices, and the load of their keys.
//!
//! The keys are ranked by the pair (ordered bits, inverted for the largest; index), a total
//! order that is the order of a stable sort: the `k` smallest pairs are the `k` best keys, ties
//! to the lower index. The host fixes the pair's bits from the top, a digit a pass (each pass a
//! [`count_digits`] launch and one download of its counts), until the keys whose fixed bits
//! are at most the prefix are exactly `k`; [`gather`] then writes those keys' indices.
//!
//! Each step reads the keys grid-strided, a warp 32 consecutive 16-byte vectors at a time
//! (keys one by one where they are not 16-byte aligned), so that every lane of a warp takes
//! part in each round: the gather's slots are taken one atomic a warp.

use super::element::{Packed, load_aligned_read_only};
use crate::atomic::AtomicAdd;
use crate::radix::{RadixBits, RadixKey, ordered_bits};
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, global_idx, grid_stride, lane_id, thread_idx};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_ballot};
use gpu_primitives_abi::layout::{RADIX_BITS, RADIX_DIGITS, RADIX_SELECT_COPIES};
use gpu_primitives_abi::params::RadixSelectTopKParams;

/// Key `i`'s place against the prefixes: its fixed bits compared with them (`Less`: selected
/// whatever its other bits; `Equal`: still a candidate), and its next digit.
#[inline(always)]
fn place<K: RadixKey>(key: K, i: u32, p: &RadixSelectTopKParams<K>) -> (core::cmp::Ordering, u32) {
    let bits = ordered_bits(key, p.largest != 0);
    let key_top = bits.above(p.key_shift).to_u64();
    let index_top = i.above(p.index_shift);
    let order = key_top.cmp(&p.key_prefix).then(index_top.cmp(&p.index_prefix));
    let digit = if p.key_shift > 0 {
        bits.digit(p.key_shift - RADIX_BITS, RADIX_BITS)
    } else {
        i.digit(p.index_shift.saturating_sub(RADIX_BITS), RADIX_BITS)
    };
    (order, digit)
}

/// `body(key, index, valid)` for `VEC` keys of each lane, in rounds where a warp reads 32
/// consecutive vectors; every lane of the warp makes every call (`valid` false past `n`).
///
/// # Safety
/// `keys` holds `n` readable keys nothing writes during the launch; the whole grid calls it.
#[inline(always)]
unsafe fn for_each_key<K: Packed, const VEC: usize>(
    keys: *const K,
    n: usize,
    mut body: impl FnMut(K, usize, bool),
) {
    let warp = global_idx() / WARP_SIZE as usize;
    let warps = grid_stride() / WARP_SIZE as usize;
    let round = WARP_SIZE as usize * VEC;
    let aligned = (keys as usize).is_multiple_of(16);
    let mut first = warp * round;
    while first < n {
        let at = first + lane_id() as usize * VEC;
        if aligned && at + VEC <= n {
            // SAFETY: keys at .. at + VEC are below n; the base and `at * size` (VEC keys are
            // 16 bytes) are 16-byte aligned; nothing writes the keys.
            let vector = unsafe { load_aligned_read_only::<K, VEC>(keys.add(at)) };
            unrolled_for(VEC, |j| body(vector[j], at + j, true));
        } else {
            unrolled_for(VEC, |j| {
                let i = at + j;
                // SAFETY: read only below n.
                let key = if i < n { unsafe { *keys.add(i) } } else { K::zero() };
                body(key, i, i < n);
            });
        }
        first += warps * round;
    }
}

/// [`COUNT_DIGITS`](gpu_primitives_abi::params::radix_select_step::COUNT_DIGITS): each key still
/// a candidate adds one to its next digit's counter, in `counters` (lane `l`'s copy `l %
/// RADIX_SELECT_COPIES`), then each block adds its non-zero counts to `p.counts`.
///
/// # Safety
/// The launch `RadixSelectTopKParams` describes; `counters` is this block's, `RADIX_DIGITS *
/// RADIX_SELECT_COPIES` long; the whole grid calls it.
#[inline(always)]
pub unsafe fn count_digits<K: RadixKey + Packed, const VEC: usize>(
    p: &RadixSelectTopKParams<K>,
    counters: SharedArray<u32>,
) {
    const { assert!(VEC * core::mem::size_of::<K>() == 16) };
    let copies = RADIX_SELECT_COPIES;
    let mut c = thread_idx();
    while c < RADIX_DIGITS * copies {
        // SAFETY: c is below the counters' length; read after the barrier.
        unsafe { counters.write(c, 0) };
        c += block_dim();
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let copy = lane_id() % copies;
    // SAFETY: the keys as the caller's contract says.
    unsafe {
        for_each_key::<K, VEC>(p.keys, p.n, |key, i, valid| {
            let (order, digit) = place(key, i as u32, p);
            if valid && order.is_eq() {
                // SAFETY: digit < RADIX_DIGITS, copy < copies.
                counters.atomic_add_unchecked(digit * copies + copy, 1);
            }
        })
    };
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let mut d = thread_idx();
    while d < RADIX_DIGITS {
        let mut count = 0u32;
        for k in 0..copies {
            // SAFETY: every add of the block is done (barrier); within the counters.
            count += unsafe { counters.read(d * copies + ((k + d) % copies)) };
        }
        if count != 0 {
            // SAFETY: d < RADIX_DIGITS, the length of `p.counts`.
            unsafe { <u32 as AtomicAdd>::atomic_add(p.counts.add(d as usize), count) };
        }
        d += block_dim();
    }
}

/// [`GATHER`](gpu_primitives_abi::params::radix_select_step::GATHER): each key whose fixed bits
/// are at most the prefixes writes its index plus `p.index_offset` to the next place of
/// `p.indices` (one atomic add a warp a round), never past `p.k` places.
///
/// # Safety
/// The launch `RadixSelectTopKParams` describes (`p.gathered` zeroed before it); the whole grid
/// calls it.
#[inline(always)]
pub unsafe fn gather<K: RadixKey + Packed, const VEC: usize>(p: &RadixSelectTopKParams<K>) {
    let lane = lane_id();
    // SAFETY: the keys as the caller's contract says.
    unsafe {
        for_each_key::<K, VEC>(p.keys, p.n, |key, i, valid| {
            let selected = valid && place(key, i as u32, p).0.is_le();
            // SAFETY: every lane of the warp makes this call (for_each_key's rounds).
            let ballot = warp_ballot(selected, u32::MAX);
            if ballot == 0 {
                return;
            }
            let leader = ballot.trailing_zeros();
            let mut base = 0u32;
            if lane == leader {
                // SAFETY: one counter, zeroed before the launch.
                base = <u32 as AtomicAdd>::atomic_add(p.gathered, ballot.count_ones());
            }
            // SAFETY: the whole warp calls it.
            let base = base.shuffle_idx(leader, WARP_SIZE, u32::MAX);
            let place = base as usize + (ballot & ((1u32 << lane) - 1)).count_ones() as usize;
            if selected && place < p.k {
                // SAFETY: place < k, the indices' length.
                *p.indices.add(place) = p.index_offset + i as u64;
            }
        })
    };
}

/// [`LOAD_KEYS`](gpu_primitives_abi::params::radix_select_step::LOAD_KEYS): `values_out[j] =
/// keys[indices[j] - index_offset]`, grid-strided over `j < k`, bit for bit.
///
/// # Safety
/// The launch `RadixSelectTopKParams` describes: `indices` holds `k` indices, each
/// `index_offset + i` for an `i < n`.
#[inline(always)]
pub unsafe fn load_keys<K: Copy>(p: &RadixSelectTopKParams<K>) {
    let mut j = global_idx();
    while j < p.k {
        // SAFETY: j < k, within indices and values_out; the index is below n (the contract).
        unsafe {
            let i = (*p.indices.add(j) - p.index_offset) as usize;
            *p.values_out.add(j) = *p.keys.add(i);
        }
        j += grid_stride();
    }
}
