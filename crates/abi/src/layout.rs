//! Sizes and layouts both sides compute with.

/// Threads per warp the kernels are compiled for; the host checks the device reports the same.
pub const WARP_SIZE: u32 = 32;

/// Most threads in one block (`blockDim.x`) on every supported GPU.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Most warps in one block: one shared-memory slot each in the block collectives.
pub const MAX_WARPS: u32 = MAX_BLOCK_THREADS / WARP_SIZE;

/// A value and its position in the input: what argmin / argmax reduce and return.
/// 16 bytes for every accumulator type: `value` at offset 0 (padded to 8 bytes), `index` at 8.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Indexed<A> {
    /// The value.
    pub value: A,
    /// Its index in the input (`u64::MAX` for the identity).
    pub index: u64,
}

/// Bytes of the largest value a block collective of the device kernels exchanges through shared
/// memory: an [`Indexed`] `f64` / `u64` / `i64`.
pub const MAX_SLOT_BYTES: u32 = core::mem::size_of::<Indexed<u64>>() as u32;

/// Offset of the scan tile's prefix in the device kernels' dynamic shared memory: after one slot
/// per warp.
pub const PREFIX_OFFSET: u32 = MAX_WARPS * MAX_SLOT_BYTES;

/// Offset of one `u32` (the scan's tile index, the reduce's "last block" flag): after the prefix
/// (one value of at most 16 bytes).
pub const TILE_OFFSET: u32 = PREFIX_OFFSET + MAX_SLOT_BYTES;

/// Dynamic shared memory every device-wide kernel is launched with, in bytes: the slots, the
/// prefix and the `u32`, rounded up to 16.
pub const DEVICE_SHARED_BYTES: u32 = (TILE_OFFSET + 4).next_multiple_of(16);

/// Largest epoch a scan's tile status can carry: its flag is `epoch << 2 | state` in 32 bits.
pub const MAX_EPOCH: u32 = (1 << 30) - 1;

/// Bytes of tile status per scan tile (a flag word and a value of up to 8 bytes, written by one
/// 16-byte access).
pub const TILE_STATUS_BYTES: usize = 16;

const _: () = assert!(core::mem::size_of::<Indexed<f32>>() == 16);
const _: () = assert!(DEVICE_SHARED_BYTES == 544);

/// Offset of a tile's items in the dynamic shared memory of the compaction kernels (select,
/// partition, unique): after what every device-wide kernel uses.
pub const EXCHANGE_OFFSET: u32 = DEVICE_SHARED_BYTES;

/// Dynamic shared memory of a compaction kernel, in bytes, for tiles of `tile_items` elements of
/// `element_bytes` each: [`DEVICE_SHARED_BYTES`] and the tile, where its kept (and rejected)
/// items are gathered before they are written out.
pub const fn select_shared_bytes(tile_items: u32, element_bytes: u32) -> u32 {
    EXCHANGE_OFFSET + (tile_items * element_bytes).next_multiple_of(16)
}

/// Dynamic shared memory of a privatized histogram block, in bytes: `bins` `u32` counters, then
/// (range histograms, `level_bytes` > 0) the `bins + 1` levels, 8-byte aligned.
pub const fn histogram_shared_bytes(bins: u32, level_bytes: u32) -> u64 {
    let counters = (bins as u64 * 4).next_multiple_of(8);
    if level_bytes == 0 {
        counters
    } else {
        counters + (bins as u64 + 1) * level_bytes as u64
    }
}

/// Offset of a range histogram's levels in its dynamic shared memory.
pub const fn histogram_levels_offset(bins: u32) -> u32 {
    (bins * 4).next_multiple_of(8)
}

/// Where the reduce-by-key kernels keep a tile in their dynamic shared memory (byte offsets from
/// its start), for tiles of `tile_items` items, keys of `key_bytes` and values of `value_bytes`
/// stored, `acc_bytes` accumulated (a slot holds the wider): after [`DEVICE_SHARED_BYTES`], the
/// keys, then the values, each as a padded tile ([`padded_slots`]) that first takes the tile's
/// items from warp-striped loads to blocked, then gathers the first key of each run starting in
/// the tile and each run's reduction (one slot more, for the run continued from an earlier tile)
/// or first value; then two `u32` (whether the tile's first item starts a run and its last ends
/// one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceByKeyLayout {
    /// [`padded_slots`]`(tile_items)` keys.
    pub keys: u32,
    /// [`padded_slots`]`(tile_items)` values (at least `tile_items + 1`).
    pub values: u32,
    /// Two `u32`.
    pub edges: u32,
    /// Bytes in all (the launch's dynamic shared memory).
    pub total: u32,
}

/// The [`ReduceByKeyLayout`] of a tile.
pub const fn reduce_by_key_layout(
    tile_items: u32,
    key_bytes: u32,
    value_bytes: u32,
    acc_bytes: u32,
) -> ReduceByKeyLayout {
    let value_bytes = if acc_bytes > value_bytes {
        acc_bytes
    } else {
        value_bytes
    };
    let slots = padded_slots(tile_items);
    let keys = EXCHANGE_OFFSET;
    let values = keys + (slots * key_bytes).next_multiple_of(16);
    let edges = values + (slots * value_bytes).next_multiple_of(16);
    ReduceByKeyLayout {
        keys,
        values,
        edges,
        total: edges + 16,
    }
}

/// Where the run-length kernels keep a tile in their dynamic shared memory (byte offsets from
/// its start), for tiles of `tile_items` items of `element_bytes`: after [`DEVICE_SHARED_BYTES`],
/// the items of the runs (encode), each run's start and end in the tile (`u16`), and two `u32`
/// (where the run continued from the previous tile ends; whether the tile's last run ends in it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLayout {
    /// `tile_items` elements: the runs' items.
    pub values: u32,
    /// `tile_items` `u16`: each run's first item, tile-local.
    pub starts: u32,
    /// `tile_items` `u16`: one past each run's last item, tile-local.
    pub ends: u32,
    /// Two `u32`.
    pub edges: u32,
    /// Bytes in all (the launch's dynamic shared memory).
    pub total: u32,
}

/// The [`RunLayout`] of a tile (`tile_items` at most 65,535: tile positions are `u16`).
pub const fn run_layout(tile_items: u32, element_bytes: u32) -> RunLayout {
    let values = EXCHANGE_OFFSET;
    let starts = values + (tile_items * element_bytes).next_multiple_of(16);
    let ends = starts + (tile_items * 2).next_multiple_of(16);
    let edges = ends + (tile_items * 2).next_multiple_of(16);
    RunLayout {
        values,
        starts,
        ends,
        edges,
        total: edges + 16,
    }
}

/// The shared-memory slot of tile position `position` in a *padded* tile: one unused slot
/// after every [`WARP_SIZE`], so that a warp's 32 lanes reading positions a power of two apart
/// (the blocked arrangement's item `k`, `ITEMS` apart) meet 32 banks instead of a few. The
/// block exchanges (`kernels::block::exchange`), the blocked radix sort and the segmented
/// kernels' head slots all pad this way.
pub const fn padded_slot(position: u32) -> u32 {
    position + position / WARP_SIZE
}

/// Slots a padded tile of `tile_items` positions takes ([`padded_slot`] of each).
pub const fn padded_slots(tile_items: u32) -> u32 {
    tile_items + tile_items / WARP_SIZE
}

/// Where the segmented kernels by offsets keep tile position `position`'s head slot (the
/// segment that starts there), in `u32` from their first: padded ([`padded_slot`]), so that
/// neither the blocked reduce (thread `t` reading positions `16 t ..= 16 t + 16`, 16 words
/// apart across the warp: a 16-way bank conflict unpadded) nor the warp-striped scans (4
/// consecutive positions per lane) read two words of one bank at once.
pub const fn head_slot(position: u32) -> u32 {
    padded_slot(position)
}

/// Head slots of a tile of `tile_items` items: positions `0 ..= tile_items` (the last being the
/// next tile's first item), then two for the tile's range of segments, padded ([`head_slot`]).
pub const fn head_slots(tile_items: u32) -> u32 {
    head_slot(tile_items + 2) + 1
}

/// Dynamic shared memory of the segmented kernels by offsets, in bytes, for tiles of
/// `tile_items` items: [`DEVICE_SHARED_BYTES`], then the [`head_slots`] `u32` from
/// [`EXCHANGE_OFFSET`].
pub const fn segmented_shared_bytes(tile_items: u32) -> u32 {
    EXCHANGE_OFFSET + (head_slots(tile_items) * 4).next_multiple_of(16)
}

/// Most `f32` statistics one row reduction of the row operations exchanges per warp (LayerNorm:
/// count, mean and sum of squared deviations).
pub const ROW_STATS: u32 = 3;

/// Shared memory the CUDA driver reserves for each resident block on the GPUs this library
/// targets (sm_80 to sm_90: `CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK`, which the GPU
/// test `device::shared_memory_reserved_per_block` checks): a multiprocessor holds the opt-in
/// block limit plus this, and each resident block takes its own shared memory plus this
/// (H100: 227 KiB + 1 KiB = 228 KiB, so four blocks of 256 threads fit 56 KiB each, not 56.75).
pub const SHARED_RESERVED_PER_BLOCK: u32 = 1024;

/// Dynamic shared memory of the row operations (`RowParams`), in bytes: two sets (alternate
/// reductions use alternate sets, so one barrier each suffices) of [`ROW_STATS`] `f32` slots
/// per warp of the largest block.
pub const ROW_SHARED_BYTES: u32 = 2 * ROW_STATS * MAX_WARPS * 4;

/// Static shared memory of the row operations' cluster kernels, in bytes: where a block of a
/// thread-block cluster leaves its statistics for the cluster's other blocks, two alternating
/// sets of [`ROW_STATS`] `f32` (a `.shared` array of their own, so that the other row kernels'
/// layout does not move; the host takes it off the block's shared-memory limit).
pub const ROW_CLUSTER_SLOTS_BYTES: u32 = 2 * ROW_STATS * 4;

/// Dynamic shared memory, past [`ROW_SHARED_BYTES`], of a row operation summing its weight's and
/// bias's gradients (`RowParams::column_partials`), in bytes: two `f32` per item of each of the
/// block's threads (`items_per_thread` over all the tiles of a row the block reads), and one
/// more (an odd stride between threads: no bank conflicts). Computed in `u64`: the host checks
/// it against the device's limit; a multiple of 16 for whole warps (the kept tiles follow).
pub const fn row_column_sums_bytes(items_per_thread: u64, block: u32) -> u64 {
    4 * (2 * items_per_thread + 1) * block as u64
}

/// Dynamic shared memory, past [`ROW_SHARED_BYTES`], of a row operation keeping `tiles` tiles of
/// its row in shared memory (`RowParams::shared_tiles`), in bytes: `words` 32-bit words of each
/// of its `inputs` row inputs per thread of the `block`, per tile, each thread's 16-byte chunks
/// where [`row_staged_word`] places them: a warp's chunks are consecutive (no bank conflicts),
/// and each thread reads back only what it wrote (no barrier). Computed in `u64`: the host
/// checks it against the device's limit.
pub const fn row_staged_tiles_bytes(tiles: u32, words: u32, inputs: u32, block: u32) -> u64 {
    tiles as u64 * words as u64 * 4 * inputs as u64 * block as u64
}

/// The first word (`u32` index from the start of the kept tiles) of 16-byte chunk `chunk` of
/// input `input` of thread `thread`, in kept tile `tile`, laid out as
/// [`row_staged_tiles_bytes`] says for `words` words of each of `inputs` inputs and `block`
/// threads: word `4 * (((tile * inputs + input) * words / 4 + chunk) * block + thread)`. The
/// row kernels' one place for it; the caller keeps it below `row_staged_tiles_bytes / 4`.
pub const fn row_staged_word(
    tile: u32,
    input: u32,
    chunk: u32,
    words: u32,
    inputs: u32,
    block: u32,
    thread: u32,
) -> u32 {
    4 * (((tile * inputs + input) * (words / 4) + chunk) * block + thread)
}

/// Dynamic shared memory of the radix sort's upfront histogram, in bytes, for `passes` passes
/// and `copies` copies of each digit's counter
/// ([`sort_histogram_copies`](crate::planning::sort::sort_histogram_copies)): `u32` counters, the copies
/// of a counter consecutive.
pub const fn sort_histogram_shared_bytes(passes: u32, copies: u32) -> u32 {
    passes * RADIX_DIGITS * copies * 4
}

/// Bits of the digit each radix sort pass orders by: 256 digits, counted by one thread each.
pub const RADIX_BITS: u32 = 8;
/// Digits per radix sort pass.
pub const RADIX_DIGITS: u32 = 1 << RADIX_BITS;
/// Bits of the digit each pass of the *blocked* block radix sort orders by
/// (`block_radix_sort_blocked`, CUB's `BlockRadixSort` with its per-thread counters), which the
/// segmented sort of keys alone runs per segment of one tile: 16 digits, two 16-bit counters a
/// word, 8 words a thread. 4 bits measured fastest on an H100 (docs/performance.md, the
/// segmented sort's blocked rank).
pub const BLOCKED_RADIX_BITS: u32 = 4;
/// Counter words per thread of the blocked rank: one 16-bit counter per digit, two a word.
pub const BLOCKED_COUNTER_WORDS: u32 = (1 << BLOCKED_RADIX_BITS) / 2;
/// Copies of each digit's counter a block of the device-wide top-k counts in, lane `l` adding
/// to copy `l % copies`: one per lane, so that a warp's adds never meet on a bank (as
/// [`sort_histogram_copies`](crate::planning::sort::sort_histogram_copies) found for the sort's histogram).
pub const RADIX_SELECT_COPIES: u32 = 32;
/// Largest `k` the top-k takes by radix select; a larger one sorts each row
/// (`device::top_k`). The `k` keys found are put in order by counting, `k` comparisons each.
pub const TOP_K_SELECT_MAX_K: u32 = 256;
/// Most keys a radix sort call takes (and one segment of a segmented sort, and one top-k): tile
/// counts and digit offsets are `u32`.
pub const SORT_MAX_KEYS: usize = u32::MAX as usize;
/// Threads per block of the onesweep pass (but the larger tiles of 8-byte keys with values,
/// [`SortPolicy::wide_pairs_block_threads`](crate::tuning::SortPolicy::wide_pairs_block_threads)),
/// the segmented sort and the per-row top-k: one per digit (the block's per-digit steps, its
/// counts, their scan and the look-back, take one thread each).
pub const SORT_BLOCK: u32 = RADIX_DIGITS;

/// Dynamic shared memory of a block of the device-wide top-k (`device_radix_select_top_k_<key>`):
/// [`RADIX_SELECT_COPIES`] copies of each digit's counter,
/// bytes.
pub const fn radix_select_shared_bytes() -> u32 {
    RADIX_DIGITS * RADIX_SELECT_COPIES * 4
}

/// Where a onesweep pass keeps its tile in dynamic shared memory (byte offsets from its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnesweepLayout {
    /// One `u32`: the tile index.
    pub tile: u32,
    /// The block scan's slots (one per warp, [`MAX_SLOT_BYTES`] each).
    pub scan: u32,
    /// `warps * RADIX_DIGITS` `u32`: each warp's count per digit, then the digit's keys in the
    /// warps before it.
    pub warp_counts: u32,
    /// `RADIX_DIGITS` `u32`: the digit's place in the output minus its start in the tile.
    pub digit_places: u32,
    /// The tile's keys in digit order (ordered bits), then its values in the same order.
    pub exchange: u32,
    /// Bytes in all (the launch's dynamic shared memory).
    pub total: u32,
}

/// The [`OnesweepLayout`] of a block of `block` threads and tiles of `tile_items` keys of
/// `key_bytes` with values of `value_bytes` (0 for keys only). Keys of one byte are exchanged
/// as `u16`.
pub const fn onesweep_layout(
    block: u32,
    tile_items: u32,
    key_bytes: u32,
    value_bytes: u32,
) -> OnesweepLayout {
    let digits = RADIX_DIGITS;
    let tile = 0;
    let scan = 16;
    let warp_counts = scan + MAX_WARPS * MAX_SLOT_BYTES;
    let digit_places = warp_counts + (block / WARP_SIZE * digits * 4).next_multiple_of(16);
    let exchange = digit_places + digits * 4;
    let key_slot = if key_bytes < 2 { 2 } else { key_bytes };
    let slot = if value_bytes > key_slot {
        value_bytes
    } else {
        key_slot
    };
    OnesweepLayout {
        tile,
        scan,
        warp_counts,
        digit_places,
        exchange,
        total: exchange + (tile_items * slot).next_multiple_of(16),
    }
}

/// Where the segmented radix sort keeps its tile in dynamic shared memory (byte offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedSortLayout {
    /// The onesweep pass's regions (its rank and the long segments' passes), the exchange one
    /// slot longer every [`WARP_SIZE`] for the blocked sort's padded places.
    pub sort: OnesweepLayout,
    /// `block * (BLOCKED_COUNTER_WORDS + 1)` `u32`: the blocked rank's per-thread counters and
    /// a row of zeros after them (the scan's odd stride).
    pub counters: u32,
    /// Bytes in all (the launch's dynamic shared memory).
    pub total: u32,
}

/// The [`SegmentedSortLayout`] of a block of `block` threads and tiles of `tile_items` keys of
/// `key_bytes` with values of `value_bytes` (0 for keys only).
pub const fn segmented_sort_layout(
    block: u32,
    tile_items: u32,
    key_bytes: u32,
    value_bytes: u32,
) -> SegmentedSortLayout {
    let sort = onesweep_layout(block, padded_slots(tile_items), key_bytes, value_bytes);
    let counters = sort.total;
    let words = BLOCKED_COUNTER_WORDS + 1;
    SegmentedSortLayout {
        sort,
        counters,
        total: counters + (block * words * 4).next_multiple_of(16),
    }
}

/// Where the warps of the segmented sort's warp radix and warp merge tiers keep their tiles in
/// dynamic shared memory: four regions (byte offsets), each holding every warp's part one after
/// another, warp `w`'s at `w` times its part's length. The warps' padded tiles of keys (indices,
/// values) are thus one padded array: place `p` of warp `w`'s tile is slot
/// [`padded_slot`]`(w * WARP_SIZE * items + p)` of it (a tile is a whole number of rows of 32),
/// so a group of warps merging their tiles reads them as one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpRadixSortLayout {
    /// `WARP_SIZE * (BLOCKED_COUNTER_WORDS + 1)` `u32` a warp: the lanes' counters and a row of
    /// zeros.
    pub counters: u32,
    /// [`slots`](Self::slots) key slots a warp (keys of one byte as `u16`).
    pub keys: u32,
    /// As many `u32` a warp: each key's position in the segment, which the sort moves with the
    /// keys (pairs; none for keys alone).
    pub indices: u32,
    /// As many values a warp, staged at their positions until the sorted positions fetch them
    /// (pairs; none for keys alone).
    pub values: u32,
    /// Slots of one warp's tile: [`padded_slots`]`(WARP_SIZE * items)`.
    pub slots: u32,
    /// Bytes in all (the launch's dynamic shared memory).
    pub total: u32,
}

/// The [`WarpRadixSortLayout`] of a block of `block` threads (whole warps), tiles of `items`
/// keys a lane of `key_bytes` with values of `value_bytes` (0 for keys only).
pub const fn warp_radix_sort_layout(
    block: u32,
    items: u32,
    key_bytes: u32,
    value_bytes: u32,
) -> WarpRadixSortLayout {
    let warps = block / WARP_SIZE;
    let slots = padded_slots(WARP_SIZE * items);
    let key_slot = if key_bytes < 2 { 2 } else { key_bytes };
    let index_bytes = if value_bytes > 0 { 4 } else { 0 };
    let counters = 0;
    let keys = counters + (warps * WARP_SIZE * (BLOCKED_COUNTER_WORDS + 1) * 4).next_multiple_of(16);
    let indices = keys + (warps * slots * key_slot).next_multiple_of(16);
    let values = indices + (warps * slots * index_bytes).next_multiple_of(16);
    WarpRadixSortLayout {
        counters,
        keys,
        indices,
        values,
        slots,
        total: values + (warps * slots * value_bytes).next_multiple_of(16),
    }
}

/// Where the top-k by radix select keeps its state in dynamic shared memory (byte offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopKLayout {
    /// The block scan's slots (one per warp, [`MAX_SLOT_BYTES`] each).
    pub scan: u32,
    /// `RADIX_DIGITS` `u32`: the candidates' count per digit of this pass.
    pub counts: u32,
    /// 4 `u32`: the digit found, the keys still needed from it, its candidates, and the
    /// number of keys gathered ahead of it.
    pub found: u32,
    /// [`TOP_K_SELECT_MAX_K`] gathered keys (ordered
    /// bits; keys of one byte as `u16`).
    pub keys: u32,
    /// As many `u32`: the gathered keys' columns.
    pub indices: u32,
    /// Bytes in all (the launch's dynamic shared memory).
    pub total: u32,
}

/// The [`TopKLayout`] for keys of `key_bytes`.
pub const fn top_k_layout(key_bytes: u32) -> TopKLayout {
    let k = TOP_K_SELECT_MAX_K;
    let scan = 0;
    let counts = scan + MAX_WARPS * MAX_SLOT_BYTES;
    let found = counts + RADIX_DIGITS * 4;
    let keys = found + 16;
    let key_slot = if key_bytes < 2 { 2 } else { key_bytes };
    let indices = keys + (k * key_slot).next_multiple_of(16);
    TopKLayout {
        scan,
        counts,
        found,
        keys,
        indices,
        total: indices + k * 4,
    }
}

const _: () = assert!(onesweep_layout(256, 256 * 16, 4, 8).total <= 48 * 1024);
const _: () = assert!(onesweep_layout(256, 256 * 12, 8, 8).total <= 48 * 1024);

#[cfg(test)]
mod tests {
    use super::*;

    /// The warp radix layout's regions are 16-byte aligned, in order and apart, and the warps'
    /// tiles of one array form one padded array: place `p` of warp `w`'s tile is
    /// `padded_slot(w * tile + p)`, the slot the warp merge tier reads a group's places at.
    #[test]
    fn warp_radix_layout_tiles_form_one_padded_array() {
        for items in [8u32, 16] {
            for key_bytes in [1u32, 2, 4, 8] {
                for value_bytes in [0u32, 4, 8] {
                    let l = warp_radix_sort_layout(256, items, key_bytes, value_bytes);
                    let tile = WARP_SIZE * items;
                    assert_eq!(l.slots, padded_slots(tile));
                    for offset in [l.counters, l.keys, l.indices, l.values, l.total] {
                        assert_eq!(offset % 16, 0, "{items} {key_bytes} {value_bytes}");
                    }
                    let warps = 256 / WARP_SIZE;
                    let key_slot = key_bytes.max(2);
                    let index_bytes = if value_bytes > 0 { 4 } else { 0 };
                    assert!(l.keys >= l.counters + warps * WARP_SIZE * (BLOCKED_COUNTER_WORDS + 1) * 4);
                    assert!(l.indices >= l.keys + warps * l.slots * key_slot);
                    assert!(l.values >= l.indices + warps * l.slots * index_bytes);
                    assert!(l.total >= l.values + warps * l.slots * value_bytes);
                    for w in 0..warps {
                        for p in [0, 1, 31, 32, tile - 1] {
                            assert_eq!(padded_slot(w * tile + p), w * l.slots + padded_slot(p));
                        }
                    }
                }
            }
        }
    }
}
