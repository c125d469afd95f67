//! Segmented scans and reductions in one pass with decoupled look-back: a scan that starts over
//! at every segment's first item (its *head*), where the heads come from key changes
//! (`inclusive_scan_by_key` / `exclusive_scan_by_key`, CUB's `DeviceScan::*ScanByKey`) or from
//! CSR offsets (`segmented_inclusive_scan` / `segmented_exclusive_scan`, and the segmented
//! reduce, whose result per segment is the inclusive scan at the segment's last item).
//!
//! The tiles split the *items*, not the segments, so the work is the same whatever the segment
//! lengths: one segment of 2^28 items beside a million of one item costs what a plain scan
//! costs. Each block handles one tile of `block_dim() * ITEMS` items:
//! 1. it takes the next tile index (as [`super::scan`]) and starts loading its values;
//! 2. it finds which of its items are heads ([`SegmentHeads`]): from the keys, an item whose key
//!    differs from the one before it ([`block_flag_heads_warp_striped`]); from offsets, the
//!    first item of each non-empty segment that starts in the tile (a small kernel launched
//!    before, [`segment_tile_starts`], finds each tile's first segment by a 32-way search of
//!    the offsets, [`warp_lower_bound`], or in small grids warp 0 searches; the block marks its
//!    segments' first items in shared memory);
//! 3. it scans the tile's values restarting at the heads (one bit per item,
//!    [`block_segmented_scan_warp_striped`]), and warp 0 looks back over the preceding tiles'
//!    aggregates as `(value, segment)` pairs ([`Keyed`]) with the segmented operator
//!    ([`SegmentedOp`]: a pair whose stretch holds a head discards what came before it; the
//!    16-byte tile status: flag and segment in one word, the value in the other); items with no
//!    head before them in the tile take the prefix on their left;
//! 4. it writes each item's scan (scans) or, at each segment's last item, the segment's total
//!    (reduce); empty segments get the identity.
//!
//! The reduce ([`segmented_reduce_tile`]) holds its tile *blocked* instead (16 consecutive items
//! per thread, reduced in order), so that one pair per thread, not one per item, goes through
//! the block scan; through a [`SegmentReduction`] it gives each segment's total ([`Totals`]) or
//! its first smallest / largest item and that item's index ([`ArgTotals`], one packed `u64` an
//! item: [`super::indexed::ArgOrder`]).
//!
//! Source: the segmented operator is Blelloch's ("Prefix Sums and Their Applications", 1990,
//! section 1.5); the single pass is Merrill & Garland's decoupled look-back (NVIDIA
//! NVR-2016-002), as in CUB's `AgentScanByKey`.

use core::marker::PhantomData;

use super::element::{Element, load_aligned, store_aligned};
use super::indexed::{ArgOrder, ArgRank};
use super::scan::{look_back, next_tile};
use super::tile_status::{TileStatus, TileStatusValue, decode_flag, encode_flag};
use crate::atomic::{load_relaxed_pair, store_relaxed_pair};
use crate::block::{
    BlockScanStorage, block_exclusive_scan, block_flag_heads_warp_striped, block_load_warp_striped,
    block_segmented_scan_warp_striped, row_element,
};
use crate::op::ReduceOp;
pub use crate::op::{Keyed, NO_HEAD, SegmentedOp};
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, global_idx, lane_id, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use crate::warp::{Shuffle, warp_ballot};
use gpu_primitives_abi::layout::head_slot;

// `Shuffle` and `SharedValue` for the `#[repr(C)]` pair of a value and its `u32` segment (at
// `size_of::<A>()`): each field moves on its own path.
impl<A: Shuffle> Shuffle for Keyed<A> {
    #[inline(always)]
    unsafe fn shuffle_raw(self, mode_b: (u8, u32), width: u32, member_mask: u32) -> Self {
        // SAFETY: forwarded from the caller; both fields take the same path.
        unsafe {
            Keyed {
                value: self.value.shuffle_raw(mode_b, width, member_mask),
                segment: self.segment.shuffle_raw(mode_b, width, member_mask),
            }
        }
    }
}

impl<A: SharedValue> SharedValue for Keyed<A> {
    #[inline(always)]
    unsafe fn load_shared(addr: u32) -> Self {
        // SAFETY: the caller's address holds the pair (`#[repr(C)]`: the value at 0, the u32 at
        // size_of::<A>(), both aligned as the pair is).
        unsafe {
            Keyed {
                value: A::load_shared(addr),
                segment: u32::load_shared(addr + size_of::<A>() as u32),
            }
        }
    }
    #[inline(always)]
    unsafe fn store_shared(addr: u32, value: Self) {
        // SAFETY: as in load_shared.
        unsafe {
            A::store_shared(addr, value.value);
            u32::store_shared(addr + size_of::<A>() as u32, value.segment);
        }
    }
}

/// The bits of a value the tile status carries in its second word.
pub trait StatusBits: Copy {
    /// The value's bits, zero-extended to 64.
    fn to_status_bits(self) -> u64;
    /// The value of [`to_status_bits`](Self::to_status_bits)'s result.
    fn from_status_bits(bits: u64) -> Self;
}

macro_rules! status_bits {
    ($($t:ty => $bits:ty),*) => {$(
        impl StatusBits for $t {
            #[inline(always)]
            fn to_status_bits(self) -> u64 {
                <$bits>::from_ne_bytes(self.to_ne_bytes()) as u64
            }
            #[inline(always)]
            fn from_status_bits(bits: u64) -> Self {
                <$t>::from_ne_bytes((bits as $bits).to_ne_bytes())
            }
        }
    )*};
}
status_bits!(f32 => u32, u32 => u32, i32 => u32, f64 => u64, u64 => u64, i64 => u64);

/// A [`Keyed`] pair in the 16-byte tile status: the flag in the low half of the first word and
/// the segment in its high half, the value's bits in the second word; one 16-byte store and
/// load, as the 8-byte scans' status ([`super::tile_status`]).
impl<A: StatusBits> TileStatusValue for Keyed<A> {
    #[inline(always)]
    unsafe fn publish(status: &TileStatus<Self>, tile: usize, state: u32, value: Self) {
        let pair = [
            encode_flag(status.launch.epoch, state) as u64 | (value.segment as u64) << 32,
            value.value.to_status_bits(),
        ];
        // SAFETY: the caller guarantees tile is in range; the slots are 16-byte aligned, 16
        // bytes per tile.
        unsafe { store_relaxed_pair(status.launch.slots.cast::<[u64; 2]>().add(tile), pair) };
    }
    #[inline(always)]
    unsafe fn try_read(status: &TileStatus<Self>, tile: usize) -> Option<(u32, Self)> {
        // SAFETY: as in publish.
        let [flag, bits] = unsafe { load_relaxed_pair(status.launch.slots.cast::<[u64; 2]>().add(tile)) };
        decode_flag(status.launch.epoch, flag as u32).map(|state| {
            (
                state,
                Keyed {
                    value: A::from_status_bits(bits),
                    segment: (flag >> 32) as u32,
                },
            )
        })
    }
}

/// The first `s` in `0..count` with `offsets[s] >= target` (`count` when there is none), found
/// by the 32 lanes together: each round, lane `l` tests the `l`-th of 32 evenly spaced
/// candidates and a ballot narrows the range 32-fold (4 rounds for a million offsets, each one
/// dependent load per lane).
///
/// - **Who calls:** every lane of one warp, with the same arguments.
/// - **Result valid in:** every lane.
///
/// # Safety
/// The whole warp calls it, converged; `offsets[0..count]` is readable and non-decreasing.
#[inline(always)]
pub unsafe fn warp_lower_bound(offsets: *const u64, count: usize, target: u64) -> usize {
    let (mut lo, mut hi) = (0usize, count);
    let lane = lane_id() as usize;
    while lo < hi {
        let probe = lo + (hi - lo) * lane / WARP_SIZE as usize;
        // SAFETY: lo <= probe < hi <= count.
        let below = unsafe { *offsets.add(probe) } < target;
        // SAFETY: the whole warp runs the same rounds (lo, hi are the same in every lane).
        let ballot = unsafe { warp_ballot(below, u32::MAX) };
        // The candidates below the target are lanes 0 .. c (monotone offsets).
        let c = ballot.count_ones() as usize;
        if c == 0 {
            hi = lo;
        } else {
            let last_below = lo + (hi - lo) * (c - 1) / WARP_SIZE as usize;
            if c < WARP_SIZE as usize {
                hi = lo + (hi - lo) * c / WARP_SIZE as usize;
            }
            lo = last_below + 1;
        }
    }
    lo
}

/// Shared memory of [`segmented_tile`] and [`segmented_reduce_tile`].
#[derive(Clone, Copy)]
pub struct SegmentedStorage<A> {
    /// For the block scan of the pairs (one per item, or one per thread for the reduce).
    pub scan: BlockScanStorage<Keyed<A>>,
    /// One u32: the tile index, from thread 0 to the block.
    pub tile: SharedArray<u32>,
    /// One pair: the tile's exclusive prefix, from thread 0 to the block.
    pub prefix: SharedArray<Keyed<A>>,
    /// Heads from offsets ([`OffsetHeads::mark`]): `block_dim() * ITEMS + 1` u32, the segment
    /// each tile position (and the next tile's first) starts, or [`NO_HEAD`]; then two u32, the
    /// tile's range of segments. Unused by scans by key.
    pub heads: SharedArray<u32>,
}

/// Where a tile is: what [`SegmentHeads`] needs to find its heads.
#[derive(Clone, Copy)]
pub struct TileSpan {
    /// Input index of the tile's first item.
    pub first: usize,
    /// Items in a full tile (`block_dim() * ITEMS`).
    pub len: usize,
    /// The tile is the grid's last.
    pub last: bool,
    /// Tile position of this lane's item `(0, 0)`.
    pub lane_first: usize,
    /// Number of input items.
    pub n: usize,
}

impl TileSpan {
    /// Tile position of item `(r, 0)` of this lane (rows of `VEC`, warp-striped).
    #[inline(always)]
    pub fn local<const VEC: usize>(&self, r: usize) -> usize {
        self.lane_first + r * WARP_SIZE as usize * VEC
    }
}

/// Where the segments' heads come from.
pub trait SegmentHeads: Copy {
    /// Which of this lane's items start a segment: bit `v` of entry `r` (for `r < ITEMS / VEC`)
    /// for item `v` of row `r`; items past `n` are never heads.
    ///
    /// # Safety
    /// Every thread of the block calls it (it may use barriers and `storage.heads`), with the
    /// tile it handles; the implementation's arrays are valid.
    unsafe fn heads<const VEC: usize, const ITEMS: usize>(
        &self,
        span: TileSpan,
        storage: SharedArray<u32>,
    ) -> [u32; ITEMS];
}

/// Heads where the key changes: item `i` starts a segment when `i == 0` or
/// `keys[i] != keys[i - 1]` (compared by `!=`; the library's key types are integers).
#[derive(Clone, Copy)]
pub struct KeyHeads<K>(pub *const K);

impl<K: Element<Acc = K> + Shuffle + PartialEq + Default> SegmentHeads for KeyHeads<K> {
    #[inline(always)]
    unsafe fn heads<const VEC: usize, const ITEMS: usize>(
        &self,
        span: TileSpan,
        _storage: SharedArray<u32>,
    ) -> [u32; ITEMS] {
        let keys = self.0;
        let tile_items = span.len.min(span.n.saturating_sub(span.first));
        let valid = |r: usize, v: usize| span.local::<VEC>(r) + v < tile_items;
        let whole = tile_items == span.len && (keys as usize).is_multiple_of(16);
        // SAFETY: `keys` holds n items; `whole` says every row is in bounds and aligned, each
        // row's first a multiple of VEC.
        let items = unsafe {
            block_load_warp_striped::<K, K, VEC, ITEMS>(
                keys,
                span.n,
                whole,
                |r| span.first + span.local::<VEC>(r),
                K::default(),
                |k| k,
            )
        };
        let before_warp = || {
            let first = span.first + span.lane_first;
            // SAFETY: 0 < first <= the tile's last valid index + 1: the key before exists.
            (first > 0 && span.lane_first <= tile_items).then(|| unsafe { *keys.add(first - 1) })
        };
        // SAFETY: the whole warp calls it (every thread of the block does).
        unsafe {
            block_flag_heads_warp_striped::<K, VEC, ITEMS>(
                |r, v| items[r * VEC + v],
                valid,
                before_warp,
                |a, b| a != b,
            )
        }
    }
}

/// Heads from CSR offsets: segment `s` is `offsets[s] .. offsets[s + 1]`, `s < segments`; its
/// first item is a head when it is not empty.
#[derive(Clone, Copy)]
pub struct OffsetHeads {
    /// `segments + 1` non-decreasing offsets, the last at most `n`.
    pub offsets: *const u64,
    /// Number of segments (below [`NO_HEAD`]).
    pub segments: usize,
    /// Per tile and one more, the first segment whose offset reaches the tile's first item
    /// ([`segment_tile_starts`]); null: each tile searches the offsets itself.
    pub tile_starts: *const u32,
}

impl OffsetHeads {
    /// Mark the tile's heads in `storage`: slot [`head_slot`]`(p)` (`p` in `0 ..= len`, the
    /// last being the next tile's first item) gets the segment that starts at tile position
    /// `p`, or [`NO_HEAD`];
    /// `empty(s)` is called once for each empty segment, by the tile where it sits (the last
    /// tile for those at n). Ends with a barrier, after which every thread may read the slots.
    ///
    /// # Safety
    /// Every thread of the block calls it, with the tile it handles; `storage` holds
    /// [`head_slots`](gpu_primitives_abi::layout::head_slots)`(span.len)` u32; `offsets[0 ..= segments]` is readable and non-decreasing, its last
    /// at most n.
    #[inline(always)]
    pub unsafe fn mark(&self, span: TileSpan, storage: SharedArray<u32>, empty: impl Fn(usize)) {
        let t = thread_idx() as usize;
        let block = block_dim() as usize;
        let tile = span.first / span.len;
        let tile_end = span.first + span.len;
        let len = span.len as u32;
        let bounds = [head_slot(len + 1), head_slot(len + 2)];
        if t < WARP_SIZE as usize {
            // The segments that start in the tile: from the first whose offset reaches the
            // tile to the first that reaches the next tile (the last tile takes every segment
            // from its first on, empty ones at n included). Read from the tile starts, or
            // searched here when there are none (small grids, where the extra launch would
            // cost more than the search).
            // SAFETY: the whole of warp 0 takes this branch; `tile_starts`, when not null,
            // holds one entry per tile and one more; the offsets are readable and
            // non-decreasing (the caller's contract).
            let (lo, hi) = unsafe {
                let start = |tile: usize, first: usize| {
                    if self.tile_starts.is_null() {
                        warp_lower_bound(self.offsets, self.segments, first as u64)
                    } else {
                        *self.tile_starts.add(tile) as usize
                    }
                };
                let lo = start(tile, span.first);
                let hi = if span.last {
                    self.segments
                } else {
                    start(tile + 1, tile_end)
                };
                (lo, hi)
            };
            if t == 0 {
                // Slot `len`: whether the next tile's first item starts a segment, i.e. is one
                // of the offsets (CSR segments are contiguous) before the last.
                // SAFETY: hi < segments, so offsets[hi] and offsets[segments] are readable.
                let next_is_head = !span.last
                    && hi < self.segments
                    && unsafe {
                        *self.offsets.add(hi) == tile_end as u64
                            && tile_end < *self.offsets.add(self.segments) as usize
                    };
                // SAFETY: slot len and the two bounds slots after it, read after the barrier.
                unsafe {
                    storage.write(head_slot(len), if next_is_head { 0 } else { NO_HEAD });
                    storage.write(bounds[0], lo as u32);
                    storage.write(bounds[1], hi as u32);
                }
            }
        }
        let mut p = t;
        while p < span.len {
            // SAFETY: p < len: one of the head slots.
            unsafe { storage.write_unchecked(head_slot(p as u32), NO_HEAD) };
            p += block;
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // SAFETY: written before the barrier.
        let (lo, hi) = unsafe { (storage.read(bounds[0]) as usize, storage.read(bounds[1]) as usize) };
        let mut s = lo + t;
        while s < hi {
            // SAFETY: s < segments: offsets[s] and offsets[s + 1] are readable.
            let (begin, end) = unsafe { (*self.offsets.add(s) as usize, *self.offsets.add(s + 1) as usize) };
            if begin < end {
                // SAFETY: first <= begin < min(first + len, n) (the tile's range of segments;
                // a non-empty segment starts before n); one thread per segment, and non-empty
                // segments start at different positions.
                unsafe { storage.write_unchecked(head_slot((begin - span.first) as u32), s as u32) };
            } else {
                empty(s);
            }
            s += block;
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
    }
}

/// `starts[t]` = the first segment whose offset reaches tile `t`'s first item (`t * tile_items`),
/// for `t` in `0 ..= tiles`: one warp per tile ([`warp_lower_bound`]). The segmented kernels by
/// offsets read their range of segments from it instead of searching on their critical path.
///
/// # Safety
/// Launched with whole warps; `offsets[0 ..= segments]` is readable and non-decreasing;
/// `starts` holds `tiles + 1` values.
#[inline(always)]
pub unsafe fn segment_tile_starts(
    offsets: *const u64,
    segments: usize,
    tile_items: usize,
    tiles: usize,
    starts: *mut u32,
) {
    let tile = global_idx() / WARP_SIZE as usize;
    if tile <= tiles {
        // SAFETY: the whole warp takes this branch (the condition is the warp's); the offsets
        // are valid (the caller's contract).
        let s = unsafe { warp_lower_bound(offsets, segments, (tile * tile_items) as u64) };
        if lane_id() == 0 {
            // SAFETY: tile <= tiles.
            unsafe { *starts.add(tile) = s as u32 };
        }
    }
}

impl SegmentHeads for OffsetHeads {
    #[inline(always)]
    unsafe fn heads<const VEC: usize, const ITEMS: usize>(
        &self,
        span: TileSpan,
        storage: SharedArray<u32>,
    ) -> [u32; ITEMS] {
        // SAFETY: forwarded from the caller.
        unsafe { self.mark(span, storage, |_| {}) };
        let mut heads = [0; ITEMS];
        unrolled_for(ITEMS / VEC, |r| {
            unrolled_for(VEC, |v| {
                let local = span.local::<VEC>(r) + v;
                // SAFETY: local < len, written by `mark`, which ends with a barrier.
                let head = unsafe { storage.read_unchecked(head_slot(local as u32)) };
                if span.first + local < span.n && head != NO_HEAD {
                    heads[r] |= 1 << v;
                }
            });
        });
        heads
    }
}

/// Where [`segmented_tile`] writes: each item's segmented scan, to `output[i]` for `i` in
/// `from .. to` (items outside every segment are left alone); exclusive: the identity at each
/// head.
#[derive(Clone, Copy)]
pub struct ScanOutput<A> {
    /// `n` values.
    pub output: *mut A,
    /// Exclusive rather than inclusive.
    pub exclusive: bool,
    /// First item written (`offsets[0]`; 0 by key).
    pub from: usize,
    /// One past the last item written (`offsets[segments]`; n by key).
    pub to: usize,
}

/// Segmented scan of one tile of `input[0..n]` (see the [module docs](self)), held
/// warp-striped: heads from `heads`, results as `output` says; warp 0 sleeps
/// `look_back_delay_ns` before its look-back.
///
/// The grid must have exactly `max(1, ceil(n / (block_dim() * ITEMS)))` blocks, each a whole
/// number of warps. Floating-point results can differ in the last bits from run to run, as the
/// scan's ([`super::scan::scan_tile`]).
///
/// # Safety
/// Every thread of the block calls it; `block_dim()` is a multiple of 32; `input` holds `n`
/// readable elements; the output holds `n` values and does not overlap the input; `status` points at 16 bytes per tile, 16-byte aligned, every slot from
/// an older epoch; `storage` is this block's, `heads` at least [`head_slots`](gpu_primitives_abi::layout::head_slots)`(block_dim() * ITEMS)` long;
/// what `heads` reads is valid (its own contract).
#[inline(always)]
pub unsafe fn segmented_tile<T, Op, H, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    n: usize,
    heads: H,
    output: ScanOutput<T::Acc>,
    status: TileStatus<Keyed<T::Acc>>,
    look_back_delay_ns: u32,
    storage: SegmentedStorage<T::Acc>,
) where
    T: Element,
    T::Acc: SharedValue + Shuffle + StatusBits,
    Op: ReduceOp<T::Acc>,
    H: SegmentHeads,
{
    let t = thread_idx();
    // SAFETY: the whole block calls it; the counter is the status's.
    let tile = unsafe { next_tile(&status, storage.tile) };
    let tile_len = block_dim() as usize * ITEMS;
    let span = TileSpan {
        first: tile * tile_len,
        len: tile_len,
        last: (tile + 1) * tile_len >= n,
        lane_first: warp_id() as usize * WARP_SIZE as usize * ITEMS + lane_id() as usize * VEC,
        n,
    };
    let tile_items = tile_len.min(n.saturating_sub(span.first));
    let whole = tile_items == tile_len;
    let row_first = |r: usize| span.first + span.local::<VEC>(r);
    // The values first: their loads are in flight while the heads are found.
    // SAFETY: `input` holds n elements; whole tiles of an aligned input are in bounds and
    // aligned, each row's first a multiple of VEC.
    let values = unsafe {
        block_load_warp_striped::<T, T::Acc, VEC, ITEMS>(
            input,
            n,
            whole && (input as usize).is_multiple_of(16),
            row_first,
            Op::identity(),
            T::to_acc,
        )
    };
    // SAFETY: the whole block calls it with its tile and storage.
    let mut covered = unsafe { heads.heads::<VEC, ITEMS>(span, storage.heads) };
    let mut items = values;
    let ScanOutput {
        output,
        exclusive,
        from,
        to,
    } = output;
    // SAFETY: the whole block calls it with its own storage; blocks are whole warps.
    let aggregate = unsafe {
        block_segmented_scan_warp_striped::<T::Acc, Op, VEC, ITEMS>(
            &mut items,
            &mut covered,
            exclusive,
            storage.scan,
        )
    };
    if t < WARP_SIZE {
        // SAFETY: this block owns `tile`; the status holds one slot per tile; the whole of warp
        // 0 takes this branch (blocks are whole warps).
        let prefix = unsafe {
            look_back::<Keyed<T::Acc>, SegmentedOp<Op>>(&status, tile, aggregate, look_back_delay_ns)
        };
        if t == 0 {
            // SAFETY: read by the block after the barrier below.
            unsafe { storage.prefix.write(0, prefix) };
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let prefix = unsafe { storage.prefix.read(0) };
    let aligned =
        whole && (output as usize).is_multiple_of(16) && from <= span.first && span.first + tile_len <= to;
    unrolled_for(ITEMS / VEC, |r| {
        let mut row = [Op::identity(); VEC];
        unrolled_for(VEC, |v| {
            let item = items[r * VEC + v];
            // Items with no head before them in the tile continue the prefix's segment.
            row[v] = if (covered[r] >> v) & 1 != 0 {
                item
            } else {
                Op::combine(prefix.value, item)
            };
        });
        let first = row_first(r);
        if aligned {
            // SAFETY: the tile is whole and inside `from .. to <= n`; the output is
            // 16-byte aligned and `first` a multiple of VEC (VEC values fill whole
            // 16-byte vectors).
            unsafe { store_aligned::<T::Acc, VEC>(output.add(first), row) };
        } else {
            unrolled_for(VEC, |v| {
                if first + v >= from && first + v < to.min(n) {
                    // SAFETY: first + v < n.
                    unsafe { *output.add(first + v) = row[v] };
                }
            });
        }
    });
}

/// An item and its input index as the segmented reduce carries it.
pub trait SegmentReduction<T: Element>: Copy {
    /// What is carried per item, combined per segment.
    type Carry: SharedValue + Shuffle + StatusBits;
    /// How it is combined.
    type Op: ReduceOp<Self::Carry>;
    /// Item `x`, at input index `i`.
    fn carry(x: T, i: usize) -> Self::Carry;
    /// Write segment `s`'s result: `total` over its items, or the identity for an empty one.
    ///
    /// # Safety
    /// `s` is below the number of segments; one call per segment.
    unsafe fn write(&self, s: usize, total: Self::Carry);
}

/// Each segment's total with `Op`, to `output[s]`.
#[derive(Clone, Copy)]
pub struct Totals<A, Op> {
    /// One value per segment.
    pub output: *mut A,
    /// The operator.
    pub op: PhantomData<Op>,
}

impl<T: Element, Op: ReduceOp<T::Acc>> SegmentReduction<T> for Totals<T::Acc, Op>
where
    T::Acc: SharedValue + Shuffle + StatusBits,
{
    type Carry = T::Acc;
    type Op = Op;
    #[inline(always)]
    fn carry(x: T, _: usize) -> T::Acc {
        x.to_acc()
    }
    #[inline(always)]
    unsafe fn write(&self, s: usize, total: T::Acc) {
        // SAFETY: s < segments: the output holds one value per segment (the caller's contract).
        unsafe { *self.output.add(s) = total };
    }
}

/// Each segment's first smallest (argmin) or largest (argmax) item: its value to `values[s]`,
/// its index within the segment to `indices[s]` (`u32::MAX` for an empty segment, whose value
/// is [`ArgOrder::empty`]). Each item is carried as one packed `u64` key ([`ArgOrder`]: its
/// value's rank and its input index) that a plain `Min` / `Max` combines, 8 bytes, so that it
/// fits the tile status beside its segment; the winner's value is read back from the input.
#[derive(Clone, Copy)]
pub struct ArgTotals<T: Element, Order> {
    /// The input (the winner's value is read from it).
    pub input: *const T,
    /// One value per segment.
    pub values: *mut T::Acc,
    /// One index per segment.
    pub indices: *mut u32,
    /// The segments' offsets (the index is made relative to its segment's first item).
    pub offsets: *const u64,
    /// [`ArgMin`](super::indexed::ArgMin) or [`ArgMax`](super::indexed::ArgMax).
    pub order: PhantomData<Order>,
}

impl<T: Element, Order: ArgOrder> SegmentReduction<T> for ArgTotals<T, Order>
where
    T::Acc: ArgRank,
{
    type Carry = u64;
    type Op = Order::Op;
    #[inline(always)]
    fn carry(x: T, i: usize) -> u64 {
        Order::key(x.to_acc(), i as u32)
    }
    #[inline(always)]
    unsafe fn write(&self, s: usize, total: u64) {
        let (value, index) = if total == <Order::Op as ReduceOp<u64>>::identity() {
            (Order::empty::<T::Acc>(), u32::MAX)
        } else {
            let at = Order::index(total);
            // SAFETY: s < segments: offsets[s] is readable; the winner is an item of segment s
            // (so at < n: the input holds it), at or past the segment's first item.
            unsafe {
                (
                    (*self.input.add(at as usize)).to_acc(),
                    at - *self.offsets.add(s) as u32,
                )
            }
        };
        // SAFETY: s < segments: the outputs hold one value and one index per segment.
        unsafe {
            *self.values.add(s) = value;
            *self.indices.add(s) = index;
        }
    }
}

/// Segmented reduce of one tile of `input[0..n]` by the CSR offsets of `heads`: each non-empty
/// segment's total goes to `reduction.write` from the tile that holds its last item, each empty
/// segment's identity from the tile where it sits. Warp 0 sleeps `look_back_delay_ns` before
/// its look-back.
///
/// The tile is held *blocked*: thread `t` loads the `ITEMS` consecutive items from
/// `t * ITEMS` on (16-byte loads for whole tiles, `ITEMS` a whole number of them) and reduces them in order, segment by
/// segment, writing the totals of the segments that start and end among them. What crosses a
/// thread's edge is one [`Keyed`] pair per thread (the combination of its items, and the
/// segment of its last head): an exclusive block scan of the pairs and the look-back over the
/// tiles' pairs give each thread what comes before it, which completes the segment that
/// reaches into its items from the left, where that segment ends among them. One pair per
/// thread goes through the block scan, where the scans carry one per item.
///
/// The grid must have exactly `max(1, ceil(n / (block_dim() * ITEMS)))` blocks, each a whole
/// number of warps. Float results can differ in the last bits from run to run (where the
/// look-back stops).
///
/// # Safety
/// Every thread of the block calls it; `block_dim()` is a multiple of 32; `input` holds `n`
/// readable elements (fewer than 2^32 for an [`ArgTotals`]); what `reduction` writes holds one
/// result per segment and does not overlap the input; `heads` is valid as
/// [`OffsetHeads::mark`] requires;
/// `status` points at 16 bytes per tile, 16-byte aligned, every slot from an older epoch;
/// `storage` is this block's.
#[inline(always)]
pub unsafe fn segmented_reduce_tile<T, R, const ITEMS: usize>(
    input: *const T,
    n: usize,
    heads: OffsetHeads,
    reduction: R,
    status: TileStatus<Keyed<R::Carry>>,
    look_back_delay_ns: u32,
    storage: SegmentedStorage<R::Carry>,
) where
    T: Element,
    R: SegmentReduction<T>,
{
    let t = thread_idx() as usize;
    // SAFETY: the whole block calls it; the counter is the status's.
    let tile = unsafe { next_tile(&status, storage.tile) };
    let tile_len = block_dim() as usize * ITEMS;
    let span = TileSpan {
        first: tile * tile_len,
        len: tile_len,
        last: (tile + 1) * tile_len >= n,
        lane_first: t * ITEMS,
        n,
    };
    let first = span.first + t * ITEMS;
    let whole = (tile + 1) * tile_len <= n && (input as usize).is_multiple_of(16);
    // The items first: their loads are in flight while the heads are marked. They are held as
    // loaded and carried (`R::carry`) in the reduce below, so that a carry wider than the item
    // (an argmin's 8-byte key of a 4-byte value) takes its registers only one item at a time.
    let mut items = [T::zero(); ITEMS];
    if whole {
        // 16-byte vectors of `per_vector` items each.
        let per_vector = 16 / size_of::<T>();
        let mut words = [0u32; 4];
        unrolled_for(ITEMS, |j| {
            if j % per_vector == 0 {
                // SAFETY: the tile is in bounds; `first` is a multiple of ITEMS, whose items
                // fill whole 16-byte vectors, and the input is 16-byte aligned.
                words = unsafe { load_aligned::<u32, 4>(input.add(first + j).cast::<u32>()) };
            }
            items[j] = row_element::<T>(words, j % per_vector);
        });
    } else {
        unrolled_for(ITEMS, |j| {
            if first + j < n {
                // SAFETY: first + j < n.
                items[j] = unsafe { *input.add(first + j) };
            }
        });
    }
    // SAFETY: the whole block calls it with its tile and storage (the caller's contract); an
    // empty segment is written once, by the tile where it sits.
    unsafe {
        heads.mark(span, storage.heads, |s| {
            reduction.write(s, <R::Op as ReduceOp<R::Carry>>::identity())
        })
    };
    // SAFETY: offsets[segments] is readable: one past the last segment's last item.
    let to = unsafe { *heads.offsets.add(heads.segments) } as usize;
    // This thread's items as 32-bit positions among its ITEMS, so that each item's tests are
    // one compare with a constant: item j is in the input while j < `valid`, and the last
    // segment's last item where j + 1 == `to_local` (0: not among them).
    let valid = n.saturating_sub(first).min(ITEMS) as u32;
    let to_local = if to > first && to - first <= ITEMS {
        (to - first) as u32
    } else {
        0
    };
    // In order: `running` is the pair of the items so far; `lead` the combination of the items
    // before the first head, and whether the segment they continue ends here.
    let mut running = SegmentedOp::<R::Op>::identity();
    let mut lead_ends = false;
    let mut lead = <R::Op as ReduceOp<R::Carry>>::identity();
    let mut next_head = NO_HEAD;
    unrolled_for(ITEMS, |j| {
        let local = (t * ITEMS + j) as u32;
        // SAFETY: local + 1 <= len: head slots written by `mark` (which ends with a barrier).
        let (head, after) = unsafe {
            let head = if j == 0 {
                storage.heads.read_unchecked(head_slot(local))
            } else {
                next_head
            };
            (head, storage.heads.read_unchecked(head_slot(local + 1)))
        };
        next_head = after;
        let item = Keyed {
            value: if (j as u32) < valid {
                R::carry(items[j], first + j)
            } else {
                <R::Op as ReduceOp<R::Carry>>::identity()
            },
            segment: head,
        };
        running = SegmentedOp::<R::Op>::combine(running, item);
        let tail = (j as u32) < valid && (j as u32 + 1 == to_local || after != NO_HEAD);
        if tail {
            if running.segment != NO_HEAD {
                // SAFETY: a segment's number is below the segment count; its last item is
                // this one only.
                unsafe { reduction.write(running.segment as usize, running.value) };
            } else {
                lead_ends = true;
                lead = running.value;
            }
        }
    });
    let mut pair = [running];
    // SAFETY: the whole block calls it with its own storage.
    let aggregate =
        unsafe { block_exclusive_scan::<Keyed<R::Carry>, SegmentedOp<R::Op>, 1>(&mut pair, storage.scan) };
    if t < WARP_SIZE as usize {
        // SAFETY: this block owns `tile`; the status holds one slot per tile; the whole of warp
        // 0 takes this branch (blocks are whole warps).
        let prefix = unsafe {
            look_back::<Keyed<R::Carry>, SegmentedOp<R::Op>>(&status, tile, aggregate, look_back_delay_ns)
        };
        if t == 0 {
            // SAFETY: read by the block after the barrier below.
            unsafe { storage.prefix.write(0, prefix) };
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    if lead_ends {
        // SAFETY: written before the barrier.
        let before = SegmentedOp::<R::Op>::combine(unsafe { storage.prefix.read(0) }, pair[0]);
        if before.segment != NO_HEAD {
            // SAFETY: as above: the continued segment ends at this thread's item.
            unsafe { reduction.write(before.segment as usize, R::Op::combine(before.value, lead)) };
        }
    }
}
