//! Device-wide run-length encoding in one pass: every run's item and length (CUB's
//! `DeviceRunLengthEncode::Encode`), or the offset and length of every run longer than one item
//! (`NonTrivialRuns`). A run is a maximal stretch of equal items.
//!
//! Each block handles one tile, as the stream compaction does ([`super::select`]):
//! 1. it takes the next tile index and loads the tile warp-striped;
//! 2. it flags each item that starts a run (head flags, [`block_flag_heads_warp_striped`](crate::block::block_flag_heads_warp_striped)) and
//!    each that ends one (tail flags, [`block_flag_tails_warp_striped`]); the *selected* items
//!    are the heads (encode) or the heads whose run goes on past them (non-trivial runs);
//! 3. the selected flags are ranked ([`block_rank_flags_warp_striped`]); selected items put their tile
//!    position (and, encoding, their item) in shared memory at their rank; a tail puts its
//!    end at the rank of its run;
//! 4. warp 0 looks back over the preceding tiles' `(runs, last start + 1)` pairs, packed in one
//!    `u64` and combined by [`RunPrefix`] (sum of the counts, latest start): the tile learns
//!    how many runs come before it and where the last of them started, so that a run that
//!    began in an earlier tile gets its length from the tile where it ends;
//! 5. the block writes the runs' items (or offsets) and lengths, coalesced; the last tile writes
//!    the count.
//!
//! Runs compare items with `==` in the accumulator type (-0.0 equals +0.0, NaN equals nothing,
//! as [`super::select::Heads`]). Offsets, lengths and the packed look-back value hold input
//! positions in 32 bits: the input has fewer than 2^32 items.

use super::element::Element;
use super::scan::{look_back, next_tile};
use super::select::{Heads, LoadedTile, TileFlags};
use super::tile_status::TileStatus;
use crate::block::{BlockScanStorage, block_flag_tails_warp_striped, block_rank_flags_warp_striped};
use crate::op::ReduceOp;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{WARP_SIZE, block_dim, thread_idx};
use crate::unroll::unrolled_for;

/// The look-back's operator over `(runs << 32) | (last start + 1)` (0: no start): counts add,
/// the later start wins (starts grow with the tile index, so the larger one). Associative and
/// commutative; identity 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunPrefix;

impl ReduceOp<u64> for RunPrefix {
    #[inline(always)]
    fn identity() -> u64 {
        0
    }
    #[inline(always)]
    fn combine(a: u64, b: u64) -> u64 {
        let runs = (a >> 32) + (b >> 32);
        let start = (a as u32).max(b as u32);
        runs << 32 | start as u64
    }
}

/// Shared memory of [`run_tile`].
#[derive(Clone, Copy)]
pub struct RunStorage<T> {
    /// For the block scan of the selected flags.
    pub scan: BlockScanStorage<u32>,
    /// One u32: the tile index, from thread 0 to the block.
    pub tile: SharedArray<u32>,
    /// One u64: the look-back's prefix, from thread 0 to the block.
    pub prefix: SharedArray<u64>,
    /// `block_dim() * ITEMS`: the runs' items (encode).
    pub values: SharedArray<T>,
    /// `block_dim() * ITEMS`: each selected run's first item, tile-local.
    pub starts: SharedArray<u16>,
    /// `block_dim() * ITEMS`: one past each selected run's last item, tile-local.
    pub ends: SharedArray<u16>,
    /// Two u32: `[0]` one past the tile-local last item of the run continued from earlier
    /// tiles (0: none ends here); `[1]` non-zero when the tile's last selected run ends in it.
    pub edges: SharedArray<u32>,
}

/// Where [`run_tile`] writes.
#[derive(Clone, Copy)]
pub struct RunOutput<T> {
    /// Encode: each run's item (else null).
    pub unique: *mut T,
    /// Non-trivial runs: each run's offset (else null).
    pub offsets: *mut u32,
    /// Each run's length.
    pub lengths: *mut u32,
    /// One u64: the number of runs, written by the last tile.
    pub num_runs: *mut u64,
}

/// Encode (`NON_TRIVIAL` false) or find the non-trivial runs of one tile of `input[0..n]` (see
/// the [module docs](self)); warp 0 sleeps `look_back_delay_ns` before its look-back.
///
/// The grid must have exactly `ceil(n / (block_dim() * ITEMS))` blocks, each a whole number of
/// warps; a tile has at most 65,535 items.
///
/// # Safety
/// Every thread of the block calls it; `block_dim()` is a multiple of 32; `input` holds
/// `n < 2^32` readable elements; the outputs have room for every run (`n` is enough) and do not
/// overlap the input; `status` points at 16 bytes per tile, 16-byte aligned, every slot from an
/// older epoch; `storage` is this block's, its arrays at least `block_dim() * ITEMS` long.
#[inline(always)]
pub unsafe fn run_tile<T, const NON_TRIVIAL: bool, const VEC: usize, const ITEMS: usize>(
    input: *const T,
    n: usize,
    output: RunOutput<T>,
    status: TileStatus<u64>,
    look_back_delay_ns: u32,
    storage: RunStorage<T>,
) where
    T: Element + SharedValue,
{
    let t = thread_idx();
    // SAFETY: the whole block calls it; the counter is the status's.
    let tile = unsafe { next_tile(&status, storage.tile) };
    let tile_len = block_dim() as usize * ITEMS;
    // SAFETY: the caller's contract: `input` holds n elements, the grid has one block per tile.
    let loaded = unsafe { LoadedTile::<T, VEC, ITEMS>::load(input, n, tile) };
    let (tile_first, tile_items, whole) = (loaded.tile_first, loaded.tile_items as usize, loaded.whole);
    // SAFETY: the whole warp calls it with the tile it loaded.
    let heads = unsafe { Heads.row_flags(&loaded) };
    // Selected items (heads, or heads of runs longer than one) and the tails that end a
    // selected run. Encoding needs no tail flags: a run ends where the next starts, and only
    // whether the tile's last run ends in it (thread 0 reads that from global memory below).
    let mut selected = [0u32; ITEMS];
    let mut ends = [0u32; ITEMS];
    if NON_TRIVIAL {
        // Lane 31 asks whether the element after its last item starts a run (or there is none).
        let after_warp = || {
            let last = loaded.row_first(ITEMS / VEC - 1) + VEC - 1;
            // SAFETY: last + 1 < n: the element exists; `last` is this lane's own item.
            last + 1 >= n
                || unsafe { *input.add(last + 1) }.to_acc() != loaded.item(ITEMS / VEC - 1, VEC - 1).to_acc()
        };
        // SAFETY: the whole warp calls it.
        let mut tails = unsafe { block_flag_tails_warp_striped::<VEC, ITEMS>(&heads, after_warp) };
        unrolled_for(ITEMS / VEC, |r| {
            if !whole {
                unrolled_for(VEC, |v| {
                    // The input's last item ends its run (its successor, past n, flags no head).
                    if loaded.row_first(r) + v + 1 == n {
                        tails[r] |= 1 << v;
                    }
                });
            }
            let valid = loaded.valid_bits(r);
            selected[r] = heads[r] & !tails[r] & valid;
            ends[r] = !heads[r] & tails[r] & valid;
        });
    } else {
        selected = heads;
    }

    if t == 0 {
        let closes = if NON_TRIVIAL {
            0
        } else {
            // Whether the tile's last run ends in it: the input ends there, or the next item
            // starts a run.
            let last = tile_first + tile_items - 1;
            // SAFETY: last < n and, when compared, last + 1 < n.
            (last + 1 == n || unsafe { (*input.add(last + 1)).to_acc() != (*input.add(last)).to_acc() })
                as u32
        };
        // SAFETY: read after the block scan's barrier (below) and the one after the gather.
        unsafe {
            storage.edges.write(0, 0);
            storage.edges.write(1, closes);
        }
    }
    // SAFETY: the whole block calls it with its own storage; blocks are whole warps.
    let (ranks, in_tile) = unsafe { block_rank_flags_warp_striped::<VEC, ITEMS>(&selected, storage.scan) };
    unrolled_for(ITEMS / VEC, |r| {
        // Selected items of the tile before item (r, v).
        let mut rank = ranks[r];
        unrolled_for(VEC, |v| {
            let local = loaded.local(r) + v as u32;
            let chosen = (selected[r] >> v) & 1;
            if chosen != 0 {
                // SAFETY: a selected item's rank is below the tile's count, within the arrays'
                // block_dim() * ITEMS slots; each rank is one item's.
                unsafe {
                    storage.starts.write_unchecked(rank, local as u16);
                    if !NON_TRIVIAL {
                        storage.values.write_unchecked(rank, loaded.item(r, v));
                    }
                }
            }
            if NON_TRIVIAL && (ends[r] >> v) & 1 != 0 {
                // Selected runs started up to this item: it ends the latest of them.
                let run = rank + chosen;
                // SAFETY: 0 < run <= the tile's count (slots as above); one tail per run. The
                // edges are two u32 of this block, each written by one thread at most.
                unsafe {
                    if run == 0 {
                        storage.edges.write(0, local + 1);
                    } else {
                        storage.ends.write_unchecked(run - 1, (local + 1) as u16);
                        if run == in_tile {
                            storage.edges.write(1, 1);
                        }
                    }
                }
            }
            rank += chosen;
        });
    });
    // SAFETY: the whole block calls it; every gather write came before it.
    unsafe { block_barrier() };
    if t < WARP_SIZE {
        let aggregate = if in_tile == 0 {
            0
        } else {
            // SAFETY: slot in_tile - 1 was written before the barrier.
            let start = unsafe { storage.starts.read_unchecked(in_tile - 1) } as u64;
            (in_tile as u64) << 32 | (tile_first as u64 + start + 1)
        };
        // SAFETY: this block owns `tile`; the status holds one slot per tile; the whole of warp
        // 0 takes this branch (blocks are whole warps).
        let before = unsafe { look_back::<u64, RunPrefix>(&status, tile, aggregate, look_back_delay_ns) };
        if t == 0 {
            // SAFETY: read by the block after the barrier below.
            unsafe { storage.prefix.write(0, before) };
        }
    }
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    // SAFETY: written before the barrier.
    let before = unsafe { storage.prefix.read(0) };
    let runs_before = (before >> 32) as usize;
    // Where the last run before the tile started (meaningful when runs_before > 0).
    let start_before = (before as u32 as usize).wrapping_sub(1);
    // SAFETY: written before the barriers above.
    let (continued_end, last_closed) = unsafe { (storage.edges.read(0), storage.edges.read(1)) };
    if NON_TRIVIAL {
        // Runs whose end is in the tile: all but the last, which ends here when `last_closed`.
        let closed = (in_tile + last_closed).saturating_sub(1);
        let mut j = t;
        while j < in_tile {
            // SAFETY: slot j < the tile's count was written (its end too when j < closed); the
            // outputs have room for every run, of which this is number runs_before + j.
            unsafe {
                let start = storage.starts.read_unchecked(j);
                *output.offsets.add(runs_before + j as usize) = (tile_first + start as usize) as u32;
                if j < closed {
                    *output.lengths.add(runs_before + j as usize) =
                        (storage.ends.read_unchecked(j) - start) as u32;
                }
            }
            j += block_dim();
        }
        if t == 0 && continued_end != 0 {
            // SAFETY: a run from an earlier tile is number runs_before - 1 (runs_before > 0);
            // it ends at tile position continued_end.
            unsafe {
                *output.lengths.add(runs_before - 1) =
                    (tile_first + continued_end as usize - start_before) as u32
            };
        }
    } else {
        // Each run's start ends the run before it: thread j writes run runs_before + j's item
        // and the length of the run before it (coalesced, one place to the left).
        let mut j = t;
        while j < in_tile {
            // SAFETY: slots j and j - 1 < the tile's count were written; the outputs have room
            // for every run, of which this is number runs_before + j.
            unsafe {
                let start = tile_first + storage.starts.read_unchecked(j) as usize;
                *output.unique.add(runs_before + j as usize) = storage.values.read_unchecked(j);
                if runs_before + j as usize > 0 {
                    let previous = if j == 0 {
                        start_before
                    } else {
                        tile_first + storage.starts.read_unchecked(j - 1) as usize
                    };
                    *output.lengths.add(runs_before + j as usize - 1) = (start - previous) as u32;
                }
            }
            j += block_dim();
        }
        if t == 0 && last_closed != 0 {
            let last_start = if in_tile > 0 {
                // SAFETY: slot in_tile - 1 was written.
                tile_first + unsafe { storage.starts.read_unchecked(in_tile - 1) } as usize
            } else {
                start_before
            };
            // SAFETY: the tile's last run is number runs_before + in_tile - 1 (at least the
            // input's first run exists before or in the tile).
            unsafe {
                *output.lengths.add(runs_before + in_tile as usize - 1) =
                    (tile_first + tile_items - last_start) as u32
            };
        }
    }
    if t == 0 && tile_first + tile_len >= n {
        // SAFETY: the last tile knows the total; `num_runs` is one writable u64.
        unsafe { *output.num_runs = (runs_before + in_tile as usize) as u64 };
    }
}
