//! Device-wide stream compaction in one pass: select (keep the items that pass a test, in input
//! order), partition (kept items first, then the rejected ones) and unique (drop consecutive
//! duplicates), as CUB's `DeviceSelect` / `DevicePartition` agents do it.
//!
//! Each block handles one *tile* of `block_dim() * ITEMS` elements:
//! 1. it takes the next tile index from the counter (as the scan, [`super::scan`]);
//! 2. it loads the tile warp-striped ([`block_load_warp_striped_words`]) and flags each item
//!    ([`TileFlags`]: a predicate, a flag array, or the head flags of unique);
//! 3. the flags are ranked ([`block_rank_flags_warp_striped`]: one barrier): each kept item's
//!    rank in the tile and the tile's count;
//! 4. kept items go to shared memory at their rank (rejected ones, when partitioning, from the
//!    tile's end down) while warp 0 publishes the count and looks back over the preceding tiles'
//!    counts (the scan's look-back, over `u64` sums): the number kept before the tile;
//! 5. after one barrier the block writes the kept items out, consecutive threads to consecutive
//!    addresses: coalesced whatever the flags (CUB's two-phase scatter);
//! 6. the last tile writes the total to `*num_selected`.
//!
//! Stable: kept items keep their input order. Rejected items of a partition land at the back
//! of the output in *reverse* input order (their place is known from the end without the
//! total); the host's second kernel ([`reverse_tail`]) puts them back in input order.

use super::element::{Element, Packed};
use super::scan::{look_back, next_tile};
use super::tile_status::TileStatus;
use crate::block::{
    BlockScanStorage, block_flag_heads_warp_striped, block_load_warp_striped_words,
    block_rank_flags_warp_striped, row_element,
};
use crate::op::Sum;
use crate::radix::{RadixBits, RadixKey};
use crate::shared::{SharedArray, SharedValue, dynamic_shared};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, block_idx, grid_stride, lane_id, thread_idx, warp_id};
use crate::unroll::unrolled_for;
pub use gpu_primitives_abi::layout::select_shared_bytes;
use gpu_primitives_abi::layout::{EXCHANGE_OFFSET, PREFIX_OFFSET, TILE_OFFSET};
use gpu_primitives_abi::params::{CompareKind, Comparison};

/// A test select and partition apply to each item: implement it for your own predicate and
/// pass it as [`ByPredicate`] to [`select_tile`] from your own kernel.
pub trait SelectPredicate<T>: Copy {
    /// Whether `item` is kept.
    fn keep(&self, item: T) -> bool;
}

/// The library's prebuilt predicates ([`Comparison`], see [`CompareKind`]), ready to test. Every
/// kind keeps the items whose ordered bits ([`RadixKey`]: the radix sort's order, NaNs after
/// +infinity) fall inside one interval, or outside it for `NotEqual`: the interval is found once
/// from the kind and its operands, and testing an item is a subtraction and an unsigned
/// comparison, with no branch and no float comparison. The result is IEEE 754's: -0.0 equals
/// +0.0 (both are in the interval of either), a NaN item or operand compares false except with
/// `NotEqual`, and f16 / bf16 compare as their f32 values would (the conversion is exact and
/// keeps the order).
#[derive(Clone, Copy)]
pub struct Compare<B> {
    /// The interval's smallest ordered bits.
    first: B,
    /// Its last minus its first.
    span: B,
    /// Keep the items outside the interval instead.
    outside: bool,
}

impl<B: RadixBits> Compare<B> {
    /// Keep nothing.
    const NONE: Self = Self {
        first: B::ZERO,
        span: B::MAX,
        outside: true,
    };

    /// Keep everything.
    const ALL: Self = Self {
        first: B::ZERO,
        span: B::MAX,
        outside: false,
    };

    /// The items whose ordered bits are in `first ..= last` (nothing when `last < first`).
    #[inline(always)]
    fn within(first: B, last: B) -> Self {
        if last < first {
            return Self::NONE;
        }
        Self {
            first,
            span: last.wrapping_sub(first),
            outside: false,
        }
    }

    /// The test a [`Comparison`] of element type `T` describes; an unknown kind keeps nothing.
    /// Each thread computes it once per tile, from the launch parameters alone.
    #[inline(always)]
    pub fn new<T: Element + RadixKey<Bits = B>>(c: Comparison<T>) -> Self {
        let Some(kind) = CompareKind::from_code(c.kind) else {
            return Self::NONE;
        };
        // The largest ordered bits of a number: the NaNs are above.
        let top = T::largest_number();
        if kind == CompareKind::NotNan {
            return Self::within(B::ZERO, top);
        }
        let is_nan = |t: T| t.to_acc().partial_cmp(&t.to_acc()).is_none();
        if is_nan(c.lo) || (kind == CompareKind::InRange && is_nan(c.hi)) {
            // Every comparison with a NaN is false, but `!=`.
            return if kind == CompareKind::NotEqual {
                Self::ALL
            } else {
                Self::NONE
            };
        }
        // The ordered bits of the keys equal to `t`, as (lowest, highest): one key, or two for
        // a zero (-0.0 and +0.0, adjacent in the order).
        let equal = |t: T| {
            let bits = t.to_ordered();
            let same = |other: B| T::from_ordered(other).to_acc() == t.to_acc();
            let below = bits.wrapping_sub(B::ONE);
            let above = bits.wrapping_add(B::ONE);
            (
                if bits > B::ZERO && same(below) {
                    below
                } else {
                    bits
                },
                if bits < B::MAX && same(above) { above } else { bits },
            )
        };
        let (lowest, highest) = equal(c.lo);
        match kind {
            CompareKind::Less if lowest > B::ZERO => Self::within(B::ZERO, lowest.wrapping_sub(B::ONE)),
            CompareKind::LessEqual => Self::within(B::ZERO, highest),
            CompareKind::Greater if highest < top => Self::within(highest.wrapping_add(B::ONE), top),
            CompareKind::GreaterEqual => Self::within(lowest, top),
            CompareKind::Equal => Self::within(lowest, highest),
            CompareKind::NotEqual => Self {
                outside: true,
                ..Self::within(lowest, highest)
            },
            CompareKind::InRange => {
                let (end, _) = equal(c.hi);
                if end > B::ZERO {
                    Self::within(lowest, end.wrapping_sub(B::ONE))
                } else {
                    Self::NONE
                }
            }
            // `x < lowest` for the lowest key, `x > highest` for the largest number.
            _ => Self::NONE,
        }
    }
}

impl<T: Element + RadixKey> SelectPredicate<T> for Compare<T::Bits> {
    #[inline(always)]
    fn keep(&self, item: T) -> bool {
        (item.to_ordered().wrapping_sub(self.first) <= self.span) != self.outside
    }
}

/// One tile as this lane loaded it: `ITEMS / VEC` rows of `VEC` elements, warp-striped. Positions
/// inside the tile are 32-bit (a tile is at most a few thousand items), which keeps the per-item
/// index arithmetic in 32-bit registers.
pub struct LoadedTile<T, const VEC: usize, const ITEMS: usize> {
    /// Row `r`'s 16 bytes (rows `ITEMS / VEC ..` unused).
    pub rows: [[u32; 4]; ITEMS],
    /// The whole input.
    pub input: *const T,
    /// Input index of the tile's first item.
    pub tile_first: usize,
    /// Items of the tile below `n` (the tile's length for every tile but the last).
    pub tile_items: u32,
    /// Tile position of this lane's item `(0, 0)`.
    pub lane_first: u32,
    /// Every row of the tile is in bounds.
    pub whole: bool,
}

impl<T: Element, const VEC: usize, const ITEMS: usize> LoadedTile<T, VEC, ITEMS> {
    /// Load tile `tile` (of `block_dim() * ITEMS` items) of `input[0..n]` warp-striped
    /// ([`block_load_warp_striped_words`]): each lane holds `ITEMS / VEC` rows of `VEC` items,
    /// one 16-byte load per row when the tile is whole and `input` 16-byte aligned.
    ///
    /// # Safety
    /// `input` holds `n` readable elements; the tile starts below `n`; `block_dim()` is a
    /// multiple of 32.
    #[inline(always)]
    pub unsafe fn load(input: *const T, n: usize, tile: usize) -> Self {
        let tile_len = block_dim() as usize * ITEMS;
        let tile_first = tile * tile_len;
        let tile_items = tile_len.min(n - tile_first);
        let lane_first = (warp_id() as usize * WARP_SIZE as usize * ITEMS) as u32 + lane_id() * VEC as u32;
        let whole = tile_items == tile_len && (input as usize).is_multiple_of(16);
        let row_first = |r: usize| tile_first + (lane_first as usize + r * WARP_SIZE as usize * VEC);
        // SAFETY: `input` holds n elements; `whole` says the tile is in bounds and aligned, and
        // every `row_first(r)` is a multiple of VEC.
        let rows = unsafe { block_load_warp_striped_words::<T, VEC, ITEMS>(input, n, whole, row_first) };
        Self {
            rows,
            input,
            tile_first,
            tile_items: tile_items as u32,
            lane_first,
            whole,
        }
    }

    /// Tile position of item `(r, 0)` of this lane.
    #[inline(always)]
    pub fn local(&self, r: usize) -> u32 {
        self.lane_first + (r * WARP_SIZE as usize * VEC) as u32
    }

    /// Input index of item `(r, 0)` of this lane.
    #[inline(always)]
    pub fn row_first(&self, r: usize) -> usize {
        self.tile_first + self.local(r) as usize
    }

    /// Item `v` of row `r`.
    #[inline(always)]
    pub fn item(&self, r: usize, v: usize) -> T {
        row_element::<T>(self.rows[r], v)
    }

    /// Whether item `(r, v)` is below `n`.
    #[inline(always)]
    pub fn valid(&self, r: usize, v: usize) -> bool {
        self.whole || self.local(r) + (v as u32) < self.tile_items
    }

    /// Bit `v` set where item `(r, v)` is below `n`.
    #[inline(always)]
    pub fn valid_bits(&self, r: usize) -> u32 {
        let row = (1u32 << VEC) - 1;
        if self.whole {
            return row;
        }
        let left = self.tile_items.saturating_sub(self.local(r));
        if left >= VEC as u32 { row } else { (1 << left) - 1 }
    }
}

/// Where select's flags come from: bit `v` of entry `r` of [`row_flags`](Self::row_flags) keeps
/// item `(r, v)`; items past `n` are never kept.
pub trait TileFlags<T: Element>: Copy {
    /// This lane's flags.
    ///
    /// # Safety
    /// The whole warp calls it together (an implementation may use warp collectives), with the
    /// tile of `input[0..n]` it loaded.
    unsafe fn row_flags<const VEC: usize, const ITEMS: usize>(
        &self,
        tile: &LoadedTile<T, VEC, ITEMS>,
    ) -> [u32; ITEMS];
}

/// Flags from a predicate: `select_if` / `partition_if`.
#[derive(Clone, Copy)]
pub struct ByPredicate<P>(pub P);

impl<T: Element, P: SelectPredicate<T>> TileFlags<T> for ByPredicate<P> {
    #[inline(always)]
    unsafe fn row_flags<const VEC: usize, const ITEMS: usize>(
        &self,
        tile: &LoadedTile<T, VEC, ITEMS>,
    ) -> [u32; ITEMS] {
        let mut flags = [0; ITEMS];
        unrolled_for(ITEMS / VEC, |r| {
            // Items past n are zero bits: tested like the others, then masked off.
            unrolled_for(VEC, |v| flags[r] |= (self.0.keep(tile.item(r, v)) as u32) << v);
            flags[r] &= tile.valid_bits(r);
        });
        flags
    }
}

/// Flags from an array of `n` bytes, non-zero keeps: `select_flagged` / `partition_flagged`.
#[derive(Clone, Copy)]
pub struct ByFlagArray(pub *const u8);

impl<T: Element> TileFlags<T> for ByFlagArray {
    #[inline(always)]
    unsafe fn row_flags<const VEC: usize, const ITEMS: usize>(
        &self,
        tile: &LoadedTile<T, VEC, ITEMS>,
    ) -> [u32; ITEMS] {
        let mut flags = [0; ITEMS];
        // Whole rows of VEC flags (2, 4 or 8 bytes) are one load when the array allows it.
        let one_load = tile.whole && (self.0 as usize).is_multiple_of(VEC) && matches!(VEC, 2 | 4 | 8);
        if one_load {
            // Every row's load first, then their bits: each row's use right after its load
            // made ptxas wait for one load's latency per row (H100: the flagged select 1.3x the
            // copy where select_if, without flags, took 0.88; docs/performance.md).
            let mut rows = [0u64; ITEMS];
            unrolled_for(ITEMS / VEC, |r| {
                let first = tile.row_first(r);
                // SAFETY: the tile is whole, so `first .. first + VEC` is below n; `first` is a
                // multiple of VEC and so is the array's address: the load is aligned.
                rows[r] = unsafe {
                    match VEC {
                        2 => *(self.0.add(first) as *const u16) as u64,
                        4 => *(self.0.add(first) as *const u32) as u64,
                        _ => *(self.0.add(first) as *const u64),
                    }
                };
            });
            unrolled_for(ITEMS / VEC, |r| {
                unrolled_for(VEC, |v| {
                    flags[r] |= (((rows[r] >> (8 * v)) & 0xff != 0) as u32) << v
                });
            });
        } else {
            unrolled_for(ITEMS / VEC, |r| {
                let first = tile.row_first(r);
                unrolled_for(VEC, |v| {
                    // SAFETY: first + v < n: the array holds n flags (the caller's contract).
                    if tile.valid(r, v) && unsafe { *self.0.add(first + v) } != 0 {
                        flags[r] |= 1 << v;
                    }
                });
            });
        }
        flags
    }
}

/// Head flags: an item is kept where it differs from the one before it (`unique`). Compared
/// in the accumulator type with `!=`: -0.0 equals +0.0, and every NaN starts a run of its own.
#[derive(Clone, Copy)]
pub struct Heads;

impl<T: Element> TileFlags<T> for Heads {
    #[inline(always)]
    unsafe fn row_flags<const VEC: usize, const ITEMS: usize>(
        &self,
        tile: &LoadedTile<T, VEC, ITEMS>,
    ) -> [u32; ITEMS] {
        // Lane 0 asks: its item (0, 0) is the warp's first.
        let before_warp = || {
            let first = tile.row_first(0);
            // SAFETY: 0 < first <= the tile's last valid index + 1: the element before exists.
            (first > 0 && tile.lane_first <= tile.tile_items)
                .then(|| unsafe { *tile.input.add(first - 1) }.to_acc())
        };
        // SAFETY: the whole warp calls it (this function's contract).
        unsafe {
            block_flag_heads_warp_striped::<T::Acc, VEC, ITEMS>(
                |r, v| tile.item(r, v).to_acc(),
                |r, v| tile.valid(r, v),
                before_warp,
                |a, b| a != b,
            )
        }
    }
}

/// Shared memory of [`select_tile`].
#[derive(Clone, Copy)]
pub struct SelectStorage<T> {
    /// For the block scan of the flags.
    pub scan: BlockScanStorage<u32>,
    /// One u32: the tile index, from thread 0 to the block.
    pub tile: SharedArray<u32>,
    /// One u64: the number kept before the tile, from thread 0 to the block.
    pub prefix: SharedArray<u64>,
    /// `block_dim() * ITEMS` items: the tile's kept items at their ranks (and its rejected ones
    /// from the end down).
    pub exchange: SharedArray<T>,
}

impl<T: SharedValue> SelectStorage<T> {
    /// The storage laid out in the launch's dynamic shared memory as the library's compaction
    /// kernels lay it: launch with
    /// [`select_shared_bytes`]`(tile items, size_of::<T>())` bytes of it.
    ///
    /// # Safety
    /// The launch has at least that much dynamic shared memory, and nothing else of the kernel
    /// uses it.
    #[inline(always)]
    pub unsafe fn in_dynamic_shared() -> Self {
        // SAFETY: four disjoint regions of the launch's dynamic shared memory, each aligned for
        // its type; the exchange is what the launch adds past DEVICE_SHARED_BYTES (the caller's
        // contract).
        unsafe {
            Self {
                scan: BlockScanStorage::new(dynamic_shared(0)),
                prefix: dynamic_shared(PREFIX_OFFSET),
                tile: dynamic_shared(TILE_OFFSET),
                exchange: dynamic_shared(EXCHANGE_OFFSET),
            }
        }
    }
}

/// Where [`select_tile`] writes.
#[derive(Clone, Copy)]
pub struct SelectOutput<T> {
    /// The kept items, from index 0 (and, when `partition`, the rejected ones from `n - 1` down).
    pub items: *mut T,
    /// One u64: the number kept, written by the last tile.
    pub num_selected: *mut u64,
    /// Write the rejected items too.
    pub partition: bool,
}

/// Compact one tile of `input[0..n]` (see the [module docs](self)): keep the items `flags` sets.
/// Warp 0 sleeps `look_back_delay_ns` before its look-back (as the scan's).
///
/// The grid must have exactly `ceil(n / (block_dim() * ITEMS))` blocks, each a whole number of
/// warps.
///
/// # Safety
/// Every thread of the block calls it; `block_dim()` is a multiple of 32; `input` holds `n`
/// readable elements (16-byte alignment makes whole tiles one vector per row); `output.items`
/// has room for every kept item (`n` when partitioning) and does not overlap `input`;
/// `status` points at 16 bytes per tile, 16-byte aligned, every slot from an older epoch;
/// `storage` is this block's, `exchange` at least `block_dim() * ITEMS` long; what `flags`
/// reads is valid (its own contract).
#[inline(always)]
pub unsafe fn select_tile<T, F, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    n: usize,
    flags: F,
    output: SelectOutput<T>,
    status: TileStatus<u64>,
    look_back_delay_ns: u32,
    storage: SelectStorage<T>,
) where
    T: Element + SharedValue,
    F: TileFlags<T>,
{
    let t = thread_idx();
    // SAFETY: the whole block calls it; the counter is the status's.
    let tile = unsafe { next_tile(&status, storage.tile) };
    let tile_len = (block_dim() as usize * ITEMS) as u32;
    // SAFETY: the caller's contract: `input` holds n elements, the grid has one block per tile.
    let loaded = unsafe { LoadedTile::<T, VEC, ITEMS>::load(input, n, tile) };
    let (tile_first, tile_items) = (loaded.tile_first, loaded.tile_items);
    // SAFETY: the whole warp calls it with the tile it loaded.
    let kept = unsafe { flags.row_flags(&loaded) };
    // Tile-local ranks: the tile's place in the output is added when writing out.
    // SAFETY: the whole block calls it with its own storage; blocks are whole warps.
    let (ranks, kept_in_tile) = unsafe { block_rank_flags_warp_striped::<VEC, ITEMS>(&kept, storage.scan) };

    // Kept items to the exchange at their ranks (rejected ones, when partitioning, from the
    // tile's end down), while warp 0 looks back: one barrier covers both. One branch on the
    // kind of output, so that the gather of a select is one predicated store per item.
    // SAFETY: the ranks are the tile's (above); the exchange holds the tile.
    unsafe {
        if output.partition {
            gather_tile::<T, true, VEC, ITEMS>(&loaded, &kept, &ranks, storage.exchange)
        } else {
            gather_tile::<T, false, VEC, ITEMS>(&loaded, &kept, &ranks, storage.exchange)
        }
    };
    if t < WARP_SIZE {
        // SAFETY: this block owns `tile`; the status holds one slot per tile; the whole of
        // warp 0 takes this branch (blocks are whole warps).
        let before = unsafe { look_back::<u64, Sum>(&status, tile, kept_in_tile as u64, look_back_delay_ns) };
        if t == 0 {
            // SAFETY: read by the block after the barrier below.
            unsafe { storage.prefix.write(0, before) };
        }
    }
    // SAFETY: the whole block calls it; the exchange and the prefix were written before it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let kept_before = unsafe { storage.prefix.read(0) } as usize;

    // SAFETY: the output has room for every kept item: the tile's are numbers kept_before ..
    let out = unsafe { output.items.add(kept_before) };
    let mut j = t;
    while j < kept_in_tile {
        // SAFETY: slot j < the tile's count (within the exchange) was written; output item
        // kept_before + j is in bounds (above).
        unsafe { *out.add(j as usize) = storage.exchange.read_unchecked(j) };
        j += block_dim();
    }
    if output.partition {
        let rejected = tile_items - kept_in_tile;
        let rejected_before = tile_first - kept_before;
        // SAFETY: the tile's rejected items are numbers rejected_before .. of the input's,
        // whose places are counted down from the last of the n outputs.
        let out = unsafe { output.items.add(n - 1 - rejected_before) };
        let mut j = t;
        while j < rejected {
            // SAFETY: the tile's j-th rejected item is in slot tile_len - 1 - j; its place is
            // `out - j`, at least output.items (rejected_before + j < n).
            unsafe { *out.sub(j as usize) = storage.exchange.read_unchecked(tile_len - 1 - j) };
            j += block_dim();
        }
    }
    if t == 0 && tile_first + tile_len as usize >= n {
        // SAFETY: the last tile knows the total; `num_selected` is one writable u64.
        unsafe { *output.num_selected = kept_before as u64 + kept_in_tile as u64 };
    }
}

/// Step 4 of [`select_tile`]: this lane's kept items to `exchange` at their ranks (`ranks[r]`:
/// the kept items of the tile before the lane's item `(r, 0)`), and with `PARTITION` its
/// rejected items below `n` from the tile's end down.
///
/// # Safety
/// `ranks` are the tile's ([`block_rank_flags_warp_striped`] of `kept`); `exchange` holds
/// `block_dim() * ITEMS` items.
#[inline(always)]
unsafe fn gather_tile<
    T: Element + SharedValue,
    const PARTITION: bool,
    const VEC: usize,
    const ITEMS: usize,
>(
    loaded: &LoadedTile<T, VEC, ITEMS>,
    kept: &[u32; ITEMS],
    ranks: &[u32; ITEMS],
    exchange: SharedArray<T>,
) {
    let tile_len = (block_dim() as usize * ITEMS) as u32;
    unrolled_for(ITEMS / VEC, |r| {
        let mut rank = ranks[r];
        let rejected = if PARTITION {
            loaded.valid_bits(r) & !kept[r]
        } else {
            0
        };
        unrolled_for(VEC, |v| {
            let keep = (kept[r] >> v) & 1;
            if keep != 0 {
                // SAFETY: a kept item's rank is below the tile's count, within the exchange;
                // each rank is one item's.
                unsafe { exchange.write_unchecked(rank, loaded.item(r, v)) };
            } else if PARTITION && (rejected >> v) & 1 != 0 {
                // Rejected items before this one in the tile: its tile position minus its rank.
                let slot = tile_len - 1 - (loaded.local(r) + v as u32 - rank);
                // SAFETY: kept ranks fill the exchange from 0 up, rejected ones from the end
                // down: together the tile's items, at most its length; each slot is one item's.
                unsafe { exchange.write_unchecked(slot, loaded.item(r, v)) };
            }
            rank += keep;
        });
    });
}

/// Reverse `data[begin..n]` in place, over the whole grid: each thread swaps `ITEMS` pairs a
/// step, `block_dim()` apart (each load a warp makes is 32 consecutive elements at either end),
/// loading all of them before storing any, then strides by the grid.
///
/// # Safety
/// `data` holds `n` writable elements; `begin <= n`; no other thread of the launch touches
/// them, and every thread of the grid calls it with the same arguments.
#[inline(always)]
pub unsafe fn reverse_tail<T: Packed, const ITEMS: usize>(data: *mut T, begin: usize, n: usize) {
    let pairs = (n - begin) / 2;
    let block = block_dim() as usize;
    let step = grid_stride() * ITEMS;
    let mut first = block_idx() as usize * block * ITEMS + thread_idx() as usize;
    while first < pairs {
        // This step's pairs: `m * block < left` of them are in the tail.
        let left = pairs - first;
        // SAFETY: first < pairs: both ends are in `data[begin..n]`.
        let (low_end, high_end) = unsafe { (data.add(begin + first), data.add(n - 1 - first)) };
        let zero = T::zero();
        let (mut low, mut high) = ([zero; ITEMS], [zero; ITEMS]);
        unrolled_for(ITEMS, |m| {
            if m * block < left {
                // SAFETY: begin + first + m * block < n - 1 - first - m * block < n: two
                // distinct elements, this thread's only.
                unsafe { (low[m], high[m]) = (*low_end.add(m * block), *high_end.sub(m * block)) };
            }
        });
        unrolled_for(ITEMS, |m| {
            if m * block < left {
                // SAFETY: as above.
                unsafe { (*low_end.add(m * block), *high_end.sub(m * block)) = (high[m], low[m]) };
            }
        });
        first += step;
    }
}
