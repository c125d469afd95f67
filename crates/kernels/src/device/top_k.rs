//! Top-k of equal rows by radix select (torch's `topk(k, dim=-1)`; the selection step of CUB's
//! `DeviceTopK`): one block per row finds the ordered bits of the row's k-th key one
//! [`RADIX_BITS`]-bit digit at a time from the top, instead of sorting the row.
//!
//! Per row (its keys as ordered bits, inverted for the largest, so the k *smallest* are wanted):
//!
//! 1. **Threshold.** Each thread takes the smallest of its keys; the k-th smallest of those
//!    (when at least k threads hold keys) is found, for k up to [`TopKPolicy::warp_sort_max_k`](gpu_primitives_abi::tuning::TopKPolicy::warp_sort_max_k), by
//!    sorting each warp's 32 with a shuffle network (bitonic) and ranking the warps' first k
//!    against one another, and for a larger k by radix select (below, one item per thread, to
//!    the exact key). At least k keys of the row are at or below it, so its first k are, and
//!    for random keys few others: those all go to [`TOP_K_SELECT_MAX_K`] shared slots (an
//!    atomic counter).
//! 2. **Radix select** (only when they do not fit: many keys equal or close to the k-th). Each
//!    pass counts the digit below the prefix fixed so far of every key that carries that
//!    prefix (its *candidates*; all keys in the first pass) into [`RADIX_DIGITS`] shared
//!    counters (a warp's lanes add once per common digit: two leaders, then one add per
//!    remaining lane). A block scan of the counts finds the digit where the k-th key lies; it
//!    extends the prefix, and the keys of smaller digits are counted as gathered. The passes
//!    stop when the prefix is the whole key or when the keys up to it fit the slots; then
//!    those are gathered, or else the keys below the prefix and, of those that carry it (the
//!    *ties*), the first ones in column order (ranked by warp ballots and the warps' counts).
//! 3. **Order.** Each gathered key finds its place by counting the gathered keys before it in
//!    (ordered bits, column) order; those placed below k write themselves and their column.
//!
//! A row of at most one tile (`block_dim() * ITEMS` keys) is read from global memory once and
//! kept in registers; a longer one is read again for the threshold, every pass and each gather. Deterministic:
//! the result is the first k of the row's stable sort.

use crate::block::{BlockScanStorage, block_exclusive_scan, warp_striped_position};
use crate::op::Sum;
use crate::policy::TOP_K;
use crate::radix::{RadixBits, RadixKey, key_of_ordered, ordered_bits, zero_key};
use crate::shared::SharedArray;
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, block_idx, lane_id, lane_mask_below, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_any, warp_ballot};
use gpu_primitives_abi::layout::{RADIX_BITS, RADIX_DIGITS, TOP_K_SELECT_MAX_K};
use gpu_primitives_abi::params::TopKParams;

/// Shared memory of [`top_k_rows`] (placed by `gpu_primitives_abi::layout::top_k_layout`).
#[derive(Clone, Copy)]
pub struct TopKStorage<S> {
    /// For the block scan of the digit counts.
    pub scan: BlockScanStorage<u32>,
    /// [`RADIX_DIGITS`] counters: the candidates per digit of a pass; then each warp's ties
    /// of a tile.
    pub counts: SharedArray<u32>,
    /// 4 words: the digit found by a select pass, the keys still needed from it, its
    /// candidates, and the gather's slot counter.
    pub found: SharedArray<u32>,
    /// `k` gathered keys (ordered bits).
    pub keys: SharedArray<S>,
    /// Their columns.
    pub indices: SharedArray<u32>,
}

/// `found` word: the digit of the k-th key in this pass.
const FOUND_DIGIT: u32 = 0;
/// `found` word: how many keys of that digit are still needed.
const FOUND_NEEDED: u32 = 1;
/// `found` word: how many candidates that digit has.
const FOUND_CANDIDATES: u32 = 2;
/// `found` word: the gather's counter of keys below the prefix.
const FOUND_AHEAD: u32 = 3;

/// The top `p.k` keys of row `block_idx()` (if there is one) with their columns (see the
/// [module docs](self)). A block takes one row: no loop over rows, whose invariants the
/// compiler would keep in registers across the row's loads (ptxas then issued 8 of a thread's
/// 16 loads at a time; 78 % more time on the H100).
///
/// # Safety
/// Every thread of the block calls it; `block_dim() == RADIX_DIGITS`; `p` is as
/// [`TopKParams`] documents it (`1 <= k <= min(row_len, storage's slots)`, `row_len < 2^32`,
/// the outputs `rows * k` long); `storage` is this block's, `keys` and `indices` at least `k`
/// long.
#[inline(always)]
pub unsafe fn top_k_rows<K: RadixKey, const ITEMS: usize>(
    p: &TopKParams<K>,
    storage: TopKStorage<<K::Bits as RadixBits>::Slot>,
) where
    K::Bits: Shuffle,
{
    let t = thread_idx();
    let largest = p.largest != 0;
    let k = p.k;
    let len = p.row_len;
    let tile = block_dim() as usize * ITEMS;
    let tiles = len.div_ceil(tile);
    let resident = tiles == 1;

    let row = block_idx() as usize;
    if row < p.rows {
        let row_start = row * len;
        // This thread's first item of each tile: item `i` is `WARP_SIZE * i` after it.
        let first = warp_striped_position::<ITEMS>(0);
        // Of tile `index`, this thread's items before `avail(index)` (in `WARP_SIZE` steps)
        // are in the row. (Offsets from one base, not an address or a bound per item, which
        // the compiler would keep in registers across the passes.)
        let avail = |index: usize| ((len - index * tile).min(tile) as u32).saturating_sub(first);
        let in_row = |index: usize, i: usize| (i as u32) * WARP_SIZE < avail(index);
        let column = |index: usize, i: usize| (index * tile) as u32 + first + i as u32 * WARP_SIZE;
        // Tile `index` of the row, warp-striped, as ordered bits (past the row's end: zero,
        // never looked at).
        let load = |keys: &mut [K::Bits; ITEMS], index: usize| {
            // Past the row's end for a thread with no item in the row's last tile: never read.
            let from = p.keys.wrapping_add(row_start + index * tile + first as usize);
            if avail(index) as usize >= WARP_SIZE as usize * ITEMS {
                // Every item in the row: every load before any is used.
                let mut loaded = [zero_key::<K>(); ITEMS];
                unrolled_for(ITEMS, |i| {
                    // SAFETY: in the row (above).
                    loaded[i] = unsafe { *from.add(i * WARP_SIZE as usize) };
                });
                unrolled_for(ITEMS, |i| keys[i] = ordered_bits(loaded[i], largest));
            } else {
                unrolled_for(ITEMS, |i| {
                    if in_row(index, i) {
                        // SAFETY: in the row.
                        keys[i] = ordered_bits(unsafe { *from.add(i * WARP_SIZE as usize) }, largest);
                    }
                });
            }
        };
        let mut keys = [<K::Bits as RadixBits>::ZERO; ITEMS];
        if resident {
            load(&mut keys, 0);
        }

        // 1. A threshold: the k-th smallest of the threads' smallest keys, when at least k
        // threads hold keys (a row of a few warps' keys may have fewer). At least k keys of
        // the row are at or below it, so its first k are; for random keys only a few more.
        let span = len.min(tile) as u32;
        let mut holding = 0;
        for w in 0..block_dim() / WARP_SIZE {
            holding += span.saturating_sub(w * ITEMS as u32 * WARP_SIZE).min(WARP_SIZE);
        }
        let mut gathered = TOP_K_SELECT_MAX_K + 1;
        if holding >= k {
            let mut least = [<K::Bits as RadixBits>::ZERO.invert()];
            for index in 0..tiles {
                if !resident {
                    load(&mut keys, index);
                }
                unrolled_for(ITEMS, |i| {
                    if in_row(index, i) && keys[i] < least[0] {
                        least[0] = keys[i];
                    }
                });
            }
            let by_least = if k <= TOP_K.warp_sort_max_k {
                // SAFETY: the whole block calls it; k <= TOP_K_WARP_SORT_MAX_K; the storage is
                // not used before.
                let threshold = unsafe { kth_smallest_by_warp_sort(least[0], k, storage) };
                Selected {
                    prefix: threshold,
                    cut: 0,
                    ahead: 0,
                    needed: k,
                    candidates: 0,
                }
            } else {
                let holds_keys = first < span;
                // SAFETY: the whole block calls it with the storage's counters; `holding >= k`
                // threads hold a key.
                unsafe {
                    // Exact up to the k-th (stopping at a prefix shared by more minima would
                    // let in keys far past it).
                    select_prefix::<K::Bits, 1>(
                        k,
                        k,
                        1,
                        &least,
                        &|_: &mut [K::Bits; 1], _| {},
                        &|_, _| holds_keys,
                        storage,
                    )
                }
            };
            // 2. Gather the keys at or below it, if the slots hold them.
            // SAFETY: as above.
            gathered = unsafe {
                gather_all(
                    &by_least, tiles, resident, &mut keys, &load, &in_row, &column, storage,
                )
            };
        }
        if gathered > TOP_K_SELECT_MAX_K {
            // No threshold, or many keys equal (or close) to it: the k-th key itself, by radix
            // select over all keys, then the keys below it and the first of its ties.
            // SAFETY: the whole block calls it: every thread has read the count.
            unsafe { block_barrier() };
            // SAFETY: as above.
            let selected = unsafe {
                select_prefix::<K::Bits, ITEMS>(k, TOP_K_SELECT_MAX_K, tiles, &keys, &load, &in_row, storage)
            };
            gathered = if selected.ahead + selected.candidates <= TOP_K_SELECT_MAX_K {
                // SAFETY: as above.
                unsafe {
                    gather_all(
                        &selected, tiles, resident, &mut keys, &load, &in_row, &column, storage,
                    )
                }
            } else {
                // SAFETY: as above.
                unsafe {
                    gather_ranked(
                        &selected, k, tiles, resident, &mut keys, &load, &in_row, &column, storage,
                    )
                };
                k
            };
        }

        // 3. Order the keys gathered: each one's place is the keys before it; the first k
        // are written.
        let mut s = t;
        while s < gathered {
            // SAFETY: s < gathered slots, written before the gather's last barrier.
            let (key, column) = unsafe {
                (
                    <K::Bits as RadixBits>::from_slot(storage.keys.read_unchecked(s)),
                    storage.indices.read_unchecked(s),
                )
            };
            let mut place = 0;
            for o in 0..gathered {
                // SAFETY: as above (every thread reads the same slot: a broadcast).
                let (other, other_column) = unsafe {
                    (
                        <K::Bits as RadixBits>::from_slot(storage.keys.read_unchecked(o)),
                        storage.indices.read_unchecked(o),
                    )
                };
                if other < key || (other == key && other_column < column) {
                    place += 1;
                }
            }
            if place < k {
                let out = row * k as usize + place as usize;
                // SAFETY: place < k: within row `row`'s k outputs.
                unsafe {
                    *p.values_out.add(out) = key_of_ordered::<K>(key, largest);
                    *p.indices_out.add(out) = column;
                }
            }
            s += block_dim();
        }
    }
}

/// The k-th smallest of the block's `least` (one a thread; a thread without keys passes
/// [`RadixBits::MAX`]): each warp sorts its 32 ascending by a bitonic network of shuffles
/// (Batcher 1968; 15 compare-exchange steps), its first `k` go to the slots, and each of those
/// `block_dim() / 32 * k` counts the ones before it in (value, slot) order; the one with `k - 1`
/// before it is the k-th. Zeroes the gather's counter, as [`select_prefix`] does.
///
/// # Safety
/// Every thread of the block calls it; `1 <= k <= TOP_K_WARP_SORT_MAX_K`, so that the warps'
/// `k` each and the result fit [`TOP_K_SELECT_MAX_K`] slots; `storage` is this block's, unused
/// by any thread until this returns.
#[inline(always)]
unsafe fn kth_smallest_by_warp_sort<B: RadixBits + Shuffle>(
    least: B,
    k: u32,
    storage: TopKStorage<B::Slot>,
) -> B {
    let lane = lane_id();
    let t = thread_idx();
    let mut v = least;
    let mut size = 2;
    while size <= WARP_SIZE {
        let mut stride = size / 2;
        while stride > 0 {
            // SAFETY: the whole (full) warp exchanges together.
            let other = unsafe { v.shuffle_xor(stride, WARP_SIZE, u32::MAX) };
            // Runs of `size` lanes alternate ascending and descending until the last, which
            // ascends; the lower lane of a pair keeps the smaller in an ascending run.
            let ascending = lane & size == 0;
            let lower = lane & stride == 0;
            let take = if lower == ascending { other < v } else { v < other };
            if take {
                v = other;
            }
            stride /= 2;
        }
        size *= 2;
    }
    let candidates = block_dim() / WARP_SIZE * k;
    if lane < k {
        // SAFETY: warp_id() * k + lane < candidates <= TOP_K_SELECT_MAX_K slots; read after
        // the barrier. FOUND_AHEAD is the gather's, read after its barrier.
        unsafe { storage.keys.write_unchecked(warp_id() * k + lane, v.to_slot()) };
    }
    if t == 0 {
        // SAFETY: one of the 4 words, used by the gather after the barriers below.
        unsafe { storage.found.write(FOUND_AHEAD, 0) };
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    if t < candidates {
        // SAFETY: t < candidates slots, written before the barrier.
        let mine = unsafe { B::from_slot(storage.keys.read_unchecked(t)) };
        let mut before = 0;
        for o in 0..candidates {
            // SAFETY: as above (every thread reads the same slot: a broadcast).
            let other = unsafe { B::from_slot(storage.keys.read_unchecked(o)) };
            if other < mine || (other == mine && o < t) {
                before += 1;
            }
        }
        if before == k - 1 {
            // SAFETY: slot `candidates` < TOP_K_SELECT_MAX_K (k <= TOP_K_WARP_SORT_MAX_K),
            // read by no thread until after the barrier; exactly one candidate has k - 1
            // before it.
            unsafe { storage.keys.write_unchecked(candidates, mine.to_slot()) };
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let kth = unsafe { B::from_slot(storage.keys.read_unchecked(candidates)) };
    // The gather writes the slots next.
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    kth
}

/// What a radix select found: every key whose bits above `cut` are below `prefix` is among
/// the first k (`ahead` of them), and the k-th key's bits above `cut` are `prefix`
/// (`candidates` keys carry it, `needed` of which complete the k).
struct Selected<B> {
    prefix: B,
    cut: u32,
    ahead: u32,
    needed: u32,
    candidates: u32,
}

/// Radix select of the k-th smallest of the block's keys (`N` per thread per tile, `tiles`
/// tiles; item `i` of tile `index` counted where `in_row(index, i)`; `load` fetches a tile
/// unless `tiles == 1`, where `keys` holds it): from the top digit down, until the prefix is
/// the whole key or at most `enough` keys are at or below it. Zeroes the gather's counter.
///
/// # Safety
/// Every thread of the block calls it with the same `k`, `tiles` and row; `block_dim() ==
/// RADIX_DIGITS`; at least `k >= 1` keys are in the row; `storage` is this block's, unused by
/// any thread until this returns (the caller's barriers).
#[inline(always)]
unsafe fn select_prefix<B: RadixBits, const N: usize>(
    k: u32,
    enough: u32,
    tiles: usize,
    resident_keys: &[B; N],
    load: &impl Fn(&mut [B; N], usize),
    in_row: &impl Fn(usize, usize) -> bool,
    storage: TopKStorage<B::Slot>,
) -> Selected<B> {
    let t = thread_idx();
    let width = B::WIDTH;
    let mut keys = *resident_keys;
    let mut prefix = B::ZERO;
    let mut known = 0;
    let mut needed = k;
    let mut candidates;
    loop {
        let shift = width - known - RADIX_BITS;
        // SAFETY: t < RADIX_DIGITS counters; FOUND_AHEAD is one of the 4 words, not used
        // until the gather. Read after the barrier.
        unsafe {
            storage.counts.write(t, 0);
            if t == 0 {
                storage.found.write(FOUND_AHEAD, 0);
            }
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        for index in 0..tiles {
            if tiles > 1 {
                load(&mut keys, index);
            }
            unrolled_for(N, |i| {
                let candidate = in_row(index, i) && keys[i].above(shift + RADIX_BITS) == prefix;
                // SAFETY: the whole (full) warp votes together.
                if unsafe { warp_any(candidate, u32::MAX) } {
                    let digit = if candidate {
                        keys[i].digit(shift, RADIX_BITS)
                    } else {
                        RADIX_DIGITS
                    };
                    // SAFETY: the whole warp calls it; the counters are zeroed before the
                    // barrier.
                    unsafe { warp_count_digit(digit, storage.counts) };
                }
            });
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // SAFETY: t < RADIX_DIGITS; every add is done.
        let count = unsafe { storage.counts.read(t) };
        let mut before = [count];
        // SAFETY: the whole block calls it; the scan storage's last use was two barriers ago.
        unsafe { block_exclusive_scan::<u32, Sum, 1>(&mut before, storage.scan) };
        // The candidates number at least `needed`: exactly one digit holds the k-th key.
        if before[0] < needed && needed <= before[0] + count {
            // SAFETY: three of the 4 words, written by this one thread, read after the
            // barrier.
            unsafe {
                storage.found.write(FOUND_DIGIT, t);
                storage.found.write(FOUND_NEEDED, needed - before[0]);
                storage.found.write(FOUND_CANDIDATES, count);
            }
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // SAFETY: written before the barrier; rewritten only after the next pass's two.
        let digit = unsafe {
            needed = storage.found.read(FOUND_NEEDED);
            candidates = storage.found.read(FOUND_CANDIDATES);
            storage.found.read(FOUND_DIGIT)
        };
        prefix = prefix.push_digit(digit);
        known += RADIX_BITS;
        // Done when the prefix is the whole key, or when few enough keys are up to it.
        if known == width || k - needed + candidates <= enough {
            return Selected {
                prefix,
                cut: width - known,
                ahead: k - needed,
                needed,
                candidates,
            };
        }
    }
}

/// Every key of the row whose bits above `s.cut` are at most `s.prefix`, to the next free
/// slot (as many as fit): returns their number (past the slots when they do not fit).
///
/// # Safety
/// Every thread of the block calls it right after [`select_prefix`] (which zeroed the
/// counter), with its row's tiles; `storage` is this block's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gather_all<B: RadixBits, const N: usize>(
    s: &Selected<B>,
    tiles: usize,
    resident: bool,
    keys: &mut [B; N],
    load: &impl Fn(&mut [B; N], usize),
    in_row: &impl Fn(usize, usize) -> bool,
    column: &impl Fn(usize, usize) -> u32,
    storage: TopKStorage<B::Slot>,
) -> u32 {
    for index in 0..tiles {
        if !resident {
            load(keys, index);
        }
        unrolled_for(N, |i| {
            if in_row(index, i) && keys[i].above(s.cut) <= s.prefix {
                // SAFETY: FOUND_AHEAD was zeroed before the select's barriers; slots below
                // TOP_K_SELECT_MAX_K only; read after the barrier below.
                unsafe {
                    let slot = storage.found.atomic_fetch_add_unchecked(FOUND_AHEAD, 1);
                    if slot < TOP_K_SELECT_MAX_K {
                        storage.keys.write_unchecked(slot, keys[i].to_slot());
                        storage.indices.write_unchecked(slot, column(index, i));
                    }
                }
            }
        });
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: every add is done; rewritten only by the next select, after the caller's barrier.
    unsafe { storage.found.read(FOUND_AHEAD) }
}

/// The keys below `s.prefix` (above `s.cut`) to the first slots, then the first `s.needed` of
/// the keys that carry it in column order (ranked by warp ballots and the warps' counts).
///
/// # Safety
/// As [`gather_all`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gather_ranked<B: RadixBits, const N: usize>(
    s: &Selected<B>,
    k: u32,
    tiles: usize,
    resident: bool,
    keys: &mut [B; N],
    load: &impl Fn(&mut [B; N], usize),
    in_row: &impl Fn(usize, usize) -> bool,
    column: &impl Fn(usize, usize) -> u32,
    storage: TopKStorage<B::Slot>,
) {
    let lane = lane_id();
    let warps = block_dim() / WARP_SIZE;
    let ahead = k - s.needed;
    let mut ties_before = 0;
    for index in 0..tiles {
        if !resident {
            load(keys, index);
        }
        let tie = |keys: &[B; N], i: usize| in_row(index, i) && keys[i].above(s.cut) == s.prefix;
        // This warp's ties (counted by ballots; ranked below, once the warps before are
        // known), and every key below the prefix to the next free slot.
        let mut warp_ties = 0;
        unrolled_for(N, |i| {
            if in_row(index, i) && keys[i].above(s.cut) < s.prefix {
                // SAFETY: FOUND_AHEAD counts from zero to `ahead` < k slots (exactly the
                // row's keys below the prefix); read after the barriers below.
                unsafe {
                    let slot = storage.found.atomic_fetch_add_unchecked(FOUND_AHEAD, 1);
                    storage.keys.write_unchecked(slot, keys[i].to_slot());
                    storage.indices.write_unchecked(slot, column(index, i));
                }
            }
            // SAFETY: the whole (full) warp votes together.
            warp_ties += unsafe { warp_ballot(tie(keys, i), u32::MAX) }.count_ones();
        });
        if lane == 0 {
            // SAFETY: warp_id() < warps <= RADIX_DIGITS counters (the select's, done with:
            // each thread read its own before the select's last barriers).
            unsafe { storage.counts.write(warp_id(), warp_ties) };
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // The ties before this warp's: earlier tiles', then earlier warps'.
        let mut rank = ties_before;
        for w in 0..warps {
            // SAFETY: w < warps: written before the barrier.
            let c = unsafe { storage.counts.read(w) };
            if w < warp_id() {
                rank += c;
            }
            ties_before += c;
        }
        if rank < s.needed {
            unrolled_for(N, |i| {
                // SAFETY: the whole (full) warp votes together (`rank` is the warp's).
                let ties = unsafe { warp_ballot(tie(keys, i), u32::MAX) };
                let mine = rank + (ties & lane_mask_below(lane)).count_ones();
                if tie(keys, i) && mine < s.needed {
                    // SAFETY: ahead + mine < k slots; each rank is one tie's.
                    unsafe {
                        storage.keys.write_unchecked(ahead + mine, keys[i].to_slot());
                        storage.indices.write_unchecked(ahead + mine, column(index, i));
                    }
                }
                rank += ties.count_ones();
            });
        }
        // The warps' counts are read before the next tile writes them (and the slots before
        // the order).
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
    }
}

/// Add this lane's `digit` (or nothing for [`RADIX_DIGITS`]) to `counts`, one shared atomic
/// per group of lanes where the digits agree: the lanes with lane 0's digit add once, those
/// with the digit of the first lane outside them add once, and the rest one each. Two
/// leaders take the common case of skewed keys (most of a warp in one or two digits, as the
/// top digits of floats in a narrow range), at two shuffles and two ballots per call instead
/// of [`warp_match_bits`](crate::warp::warp_match_bits)' one ballot per bit; uniform digits meet few conflicts anyway.
///
/// # Safety
/// Every lane of a full warp calls it; `counts` holds [`RADIX_DIGITS`] counters.
#[inline(always)]
unsafe fn warp_count_digit(digit: u32, counts: SharedArray<u32>) {
    let lane = lane_id();
    // SAFETY: the whole warp calls it (the caller's contract).
    let first = unsafe { digit.shuffle_idx(0, WARP_SIZE, u32::MAX) };
    // SAFETY: as above.
    let with_first = unsafe { warp_ballot(digit == first, u32::MAX) };
    let others = !with_first;
    // Lane 0 is in `with_first`: `others` is empty or starts past it.
    let second_lane = if others == 0 { 0 } else { others.trailing_zeros() };
    // SAFETY: as above.
    let second = unsafe { digit.shuffle_idx(second_lane, WARP_SIZE, u32::MAX) };
    // SAFETY: as above.
    let with_second = unsafe { warp_ballot(digit == second && others != 0, u32::MAX) };
    let mine = 1 << lane;
    let add = if lane == 0 {
        with_first.count_ones()
    } else if others != 0 && lane == second_lane {
        with_second.count_ones()
    } else if (with_first | with_second) & mine == 0 {
        1
    } else {
        0
    };
    if add != 0 && digit < RADIX_DIGITS {
        // SAFETY: digit < RADIX_DIGITS counters.
        unsafe { counts.atomic_add_unchecked(digit, add) };
    }
}
