//! Device-wide stream compaction in one pass: select (keep the items that pass a test, in input
//! order), partition (kept items first, then the rejected ones) and unique (drop consecutive
//! duplicates), as CUB's `DeviceSelect` / `DevicePartition` agents do it.
//!
//! Each block handles one *tile* of `block_dim() * ITEMS` elements:
//! 1. it takes the next tile index from the counter (as the scan, [`super::scan`]);
//! 2. it loads the tile warp-striped ([`block_load_warp_striped_words`]) and flags each item
//!    ([`TileFlags`]: a predicate, a flag array, or the head flags of unique);
//! 3. an exclusive block scan of the flags gives each kept item its rank in the tile and the
//!    tile's count ([`block_scan_warp_striped_rows`]); warp 0 publishes the count and looks back
//!    over the preceding tiles' counts (the scan's look-back, over `u64` sums): the number kept
//!    before the tile;
//! 4. kept items go to shared memory at their rank (rejected ones, when partitioning, from the
//!    tile's end down); after a barrier the block writes them out, consecutive threads to
//!    consecutive addresses: coalesced whatever the flags (CUB's two-phase scatter);
//! 5. the last tile writes the total to `*num_selected`.
//!
//! Stable: kept items keep their input order. Rejected items of a partition land at the back
//! of the output in *reverse* input order (their place is known from the end without the
//! total); the host's second kernel ([`reverse_tail`]) puts them back in input order.

use super::element::Element;
use super::scan::{look_back, next_tile};
use super::tile_status::TileStatus;
use crate::block::{
    BlockScanStorage, block_flag_heads_warp_striped, block_load_warp_striped_words,
    block_scan_warp_striped_rows, row_element,
};
use crate::op::Sum;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, global_idx, grid_stride, lane_id, thread_idx, warp_id};
use crate::unroll::unrolled_for;
use gpu_primitives_abi::params::{CompareKind, Comparison};

/// A test select and partition apply to each item: implement it for your own predicate and
/// pass it as [`ByPredicate`] to [`select_tile`] from your own kernel.
pub trait SelectPredicate<T>: Copy {
    /// Whether `item` is kept.
    fn keep(&self, item: T) -> bool;
}

/// The library's prebuilt predicates ([`Comparison`], see [`CompareKind`]), ready to test: the
/// kind becomes two truth tables over where the item falls against each operand (below, equal,
/// above, unordered), so that testing an item takes no branch on the kind. Compared in the
/// accumulator type (f32 for f16 / bf16), IEEE 754 semantics for floats.
#[derive(Clone, Copy)]
pub struct Compare<A> {
    lo: A,
    hi: A,
    lo_accepts: u32,
    hi_accepts: u32,
}

/// Bits of [`Compare`]'s truth tables: where `x` falls against an operand.
const BELOW: u32 = 1;
const EQUAL: u32 = 2;
const ABOVE: u32 = 4;
const UNORDERED: u32 = 8;
const ANY: u32 = BELOW | EQUAL | ABOVE | UNORDERED;

impl<A: PartialOrd + Copy> Compare<A> {
    /// The test a [`Comparison`] of element type `T` (accumulated in `A`) describes; an unknown
    /// kind keeps nothing.
    #[inline(always)]
    pub fn new<T: Element<Acc = A>>(c: Comparison<T>) -> Self {
        let (lo_accepts, hi_accepts) = match CompareKind::from_code(c.kind) {
            Some(CompareKind::Less) => (BELOW, ANY),
            Some(CompareKind::LessEqual) => (BELOW | EQUAL, ANY),
            Some(CompareKind::Greater) => (ABOVE, ANY),
            Some(CompareKind::GreaterEqual) => (ABOVE | EQUAL, ANY),
            Some(CompareKind::Equal) => (EQUAL, ANY),
            Some(CompareKind::NotEqual) => (BELOW | ABOVE | UNORDERED, ANY),
            Some(CompareKind::InRange) => (ABOVE | EQUAL, BELOW),
            // Against any number (the host passes 0), only NaN is unordered.
            Some(CompareKind::NotNan) => (BELOW | EQUAL | ABOVE, ANY),
            None => (0, 0),
        };
        Self {
            lo: c.lo.to_acc(),
            hi: c.hi.to_acc(),
            lo_accepts,
            hi_accepts,
        }
    }

    /// Where `x` falls against `t`: one of the four bits.
    #[inline(always)]
    fn order(x: A, t: A) -> u32 {
        let (below, equal, above) = ((x < t) as u32, (x == t) as u32, (x > t) as u32);
        (below * BELOW) | (equal * EQUAL) | (above * ABOVE) | ((1 - (below | equal | above)) * UNORDERED)
    }
}

impl<T: Element> SelectPredicate<T> for Compare<T::Acc> {
    #[inline(always)]
    fn keep(&self, item: T) -> bool {
        let x = item.to_acc();
        (Self::order(x, self.lo) & self.lo_accepts) != 0 && (Self::order(x, self.hi) & self.hi_accepts) != 0
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
            unrolled_for(VEC, |v| {
                if tile.valid(r, v) && self.0.keep(tile.item(r, v)) {
                    flags[r] |= 1 << v;
                }
            });
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
        unrolled_for(ITEMS / VEC, |r| {
            let first = tile.row_first(r);
            if one_load {
                // SAFETY: the tile is whole, so `first .. first + VEC` is below n; `first` is a
                // multiple of VEC and so is the array's address: the load is aligned.
                let bytes: u64 = unsafe {
                    match VEC {
                        2 => *(self.0.add(first) as *const u16) as u64,
                        4 => *(self.0.add(first) as *const u32) as u64,
                        _ => *(self.0.add(first) as *const u64),
                    }
                };
                unrolled_for(VEC, |v| {
                    if (bytes >> (8 * v)) & 0xff != 0 {
                        flags[r] |= 1 << v;
                    }
                });
            } else {
                unrolled_for(VEC, |v| {
                    // SAFETY: first + v < n: the array holds n flags (the caller's contract).
                    if tile.valid(r, v) && unsafe { *self.0.add(first + v) } != 0 {
                        flags[r] |= 1 << v;
                    }
                });
            }
        });
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
    let tile_len = block_dim() as usize * ITEMS;
    // SAFETY: the caller's contract: `input` holds n elements, the grid has one block per tile.
    let loaded = unsafe { LoadedTile::<T, VEC, ITEMS>::load(input, n, tile) };
    let (tile_first, tile_items) = (loaded.tile_first, loaded.tile_items as usize);
    // SAFETY: the whole warp calls it with the tile it loaded.
    let kept = unsafe { flags.row_flags(&loaded) };

    let mut kept_before = 0u64;
    let mut kept_in_tile = 0u32;
    let tile_prefix = |count: u32| {
        if t < WARP_SIZE {
            // SAFETY: this block owns `tile`; the status holds one slot per tile; the whole of
            // warp 0 takes this branch (blocks are whole warps).
            let before = unsafe { look_back::<u64, Sum>(&status, tile, count as u64, look_back_delay_ns) };
            if t == 0 {
                // SAFETY: read by the block after the barrier below.
                unsafe { storage.prefix.write(0, before) };
            }
        }
        // SAFETY: the whole block calls it.
        unsafe { block_barrier() };
        // SAFETY: written before the barrier.
        kept_before = unsafe { storage.prefix.read(0) };
        kept_in_tile = count;
        // Ranks stay tile-local: the tile's place in the output is added when writing out.
        0
    };
    let gather_row = |r: usize, ranks: [u32; VEC]| {
        unrolled_for(VEC, |v| {
            if !loaded.valid(r, v) {
                return;
            }
            let item = loaded.item(r, v);
            if (kept[r] >> v) & 1 != 0 {
                // SAFETY: a kept item's rank is below the tile's count, within the exchange's
                // block_dim() * ITEMS slots; each rank is one item's.
                unsafe { storage.exchange.write_unchecked(ranks[v], item) };
            } else if output.partition {
                // Rejected items before this one in the tile: its tile position minus its rank.
                let rejected_rank = loaded.local(r) + v as u32 - ranks[v];
                // SAFETY: kept ranks fill the exchange from 0 up, rejected ones from the end
                // down: together the tile's items, at most its length; each slot is one item's.
                unsafe {
                    storage
                        .exchange
                        .write_unchecked(tile_len as u32 - 1 - rejected_rank, item)
                };
            }
        });
    };
    // SAFETY: the whole block calls it with its own storage; blocks are whole warps.
    unsafe {
        block_scan_warp_striped_rows::<u32, Sum, VEC, ITEMS>(
            |r, v| (kept[r] >> v) & 1,
            true,
            storage.scan,
            tile_prefix,
            gather_row,
        )
    };
    // SAFETY: the whole block calls it; the exchange was written before it.
    unsafe { block_barrier() };

    let mut j = t;
    while j < kept_in_tile {
        // SAFETY: slot j < the tile's count (within the exchange) was written; the output has
        // room for every kept item, of which this is number kept_before + j.
        unsafe { *output.items.add(kept_before as usize + j as usize) = storage.exchange.read_unchecked(j) };
        j += block_dim();
    }
    if output.partition {
        let rejected = tile_items as u32 - kept_in_tile;
        let rejected_before = tile_first - kept_before as usize;
        let mut j = t;
        while j < rejected {
            // SAFETY: the tile's j-th rejected item is in slot tile_len - 1 - j; it is rejected
            // item number rejected_before + j of the input, whose place is counted from the end
            // of the n outputs.
            unsafe {
                *output.items.add(n - 1 - rejected_before - j as usize) =
                    storage.exchange.read_unchecked(tile_len as u32 - 1 - j)
            };
            j += block_dim();
        }
    }
    if t == 0 && tile_first + tile_len >= n {
        // SAFETY: the last tile knows the total; `num_selected` is one writable u64.
        unsafe { *output.num_selected = kept_before + kept_in_tile as u64 };
    }
}

/// Reverse `data[begin..n]` in place, over the whole grid (grid-stride loop over the pairs).
///
/// # Safety
/// `data` holds `n` writable elements; `begin <= n`; no other thread of the launch touches
/// them, and every thread of the grid calls it with the same arguments.
#[inline(always)]
pub unsafe fn reverse_tail<T: Copy>(data: *mut T, begin: usize, n: usize) {
    let len = n - begin;
    let stride = grid_stride();
    let mut i = global_idx();
    while i < len / 2 {
        // SAFETY: begin + i < n - 1 - i < n: two distinct elements, each swapped by one thread.
        unsafe {
            let a = data.add(begin + i);
            let b = data.add(n - 1 - i);
            let (x, y) = (*a, *b);
            *a = y;
            *b = x;
        }
        i += stride;
    }
}
