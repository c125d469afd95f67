//! Segmented radix sort: [`segmented_sort_keys`], [`segmented_sort_pairs`],
//! [`segmented_argsort`] (CUB's `DeviceSegmentedRadixSort`, torch's `sort(dim=-1)`), on the
//! kernels of `device::segmented_sort`; also the sort behind [`top_k`](crate::device::top_k) for large k.

use super::common::{SortBuffers, SortOptions, ValueBytes, Values, check_len, check_sort_len};
use super::key::SortKey;
use super::onesweep;
use crate::device::element::{Bound, DeviceView, DeviceViewMut, check_bound};
use crate::device::segmented::Segments;
use crate::device::temp_storage::{Region, TempStorage};
use crate::device::workspace::DeviceWorkspace;
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, SegmentedSortTier};
use gpu_primitives_abi::layout::SORT_BLOCK;
use gpu_primitives_abi::layout::{WARP_SIZE, segmented_sort_layout, warp_radix_sort_layout};
use gpu_primitives_abi::params::SegmentedSortParams;
use gpu_primitives_abi::planning::sort::warp_merge_warps;
use gpu_primitives_abi::tuning::SegmentedSortPolicy;
use gpu_primitives_runtime::DeviceCopy;

/// One segmented sort: its buffers (`n` is the input's length), its segments and how much of
/// each it keeps.
#[derive(Clone, Copy)]
pub(in crate::device) struct SegmentedCall<'s> {
    pub(in crate::device) buffers: SortBuffers,
    pub(in crate::device) segments: Segments<'s>,
    /// `Some(k)`: the first `k` of each row, to `s * k` (top-k).
    pub(in crate::device) keep: Option<usize>,
}

/// The segments of `segments` over an input of `n` keys: (number, offsets address or 0, row
/// length, the longest segment, one past the last key), checked.
pub(in crate::device) fn layout(
    what: &'static str,
    segments: Segments<'_>,
    n: usize,
) -> Result<(usize, u64, usize, usize, usize)> {
    match segments {
        Segments::Rows(row_len) => {
            if n == 0 {
                return Ok((0, 0, row_len, 0, 0));
            }
            if row_len == 0 || !n.is_multiple_of(row_len) {
                return Err(Error::NotWholeRows {
                    what,
                    len: n,
                    row_len,
                });
            }
            Ok((n / row_len, 0, row_len, row_len, n))
        }
        Segments::Offsets(offsets) => {
            crate::device::segmented_scan::check_fit(what, &offsets, n)?;
            Ok((
                offsets.segments(),
                offsets.offsets().address,
                0,
                offsets.longest() as usize,
                offsets.end() as usize,
            ))
        }
    }
}

/// The scratch buffers' bytes for segments past a tile, indexed as the input's `end` keys: two
/// copies of the keys (`key_bytes` each, rounded up to 16 bytes) and of the values
/// (`value_bytes` each): (the keys' bytes, the total), checked: [`Error::PastAddressSpace`]
/// where they pass `usize`. Its success also bounds every `key * bytes` offset into the buffers.
fn scratch_bytes(
    what: &'static str,
    end: usize,
    key_bytes: usize,
    value_bytes: usize,
) -> Result<(usize, usize)> {
    let both = |bytes: usize| end.checked_mul(bytes)?.checked_mul(2);
    let sizes = both(key_bytes)
        .and_then(|keys| keys.checked_next_multiple_of(16))
        .and_then(|keys| Some((keys, keys.checked_add(both(value_bytes)?)?)));
    sizes.ok_or(Error::PastAddressSpace {
        what,
        buffer: "scratch (two copies of each key and value)",
        items: end,
        item_bytes: key_bytes.saturating_add(value_bytes),
        start: 0,
    })
}

/// The segmented kernels' scratch for `n` keys of `K` with `value_bytes`-byte values, at most:
/// two alternates of each key (and value) where a segment is longer than a tile.
pub(in crate::device) fn segmented_scratch<K: SortKey>(n: usize, value_bytes: usize) -> Result<TempStorage> {
    let used = n > SORT_BLOCK as usize * K::ITEMS;
    Ok(tiers_scratch("segmented sort", n, (size_of::<K::Raw>(), value_bytes), used)?.0)
}

/// The segmented kernels' scratch regions where `used` (else empty ones), indexed as the
/// input's `end` keys: the keys' two alternates, then the values' ([`scratch_bytes`]).
fn tiers_scratch(
    what: &'static str,
    end: usize,
    (key_bytes, value_bytes): (usize, usize),
    used: bool,
) -> Result<(TempStorage, Region, Region)> {
    let (keys, total) = scratch_bytes(what, end, key_bytes, value_bytes)?;
    let (keys, values) = if used { (keys, total - keys) } else { (0, 0) };
    let mut need = TempStorage::default();
    let keys = need.scratch.push(keys);
    let values = need.scratch.push(values);
    Ok((need, keys, values))
}

/// What a segmented sort of `n` keys needs, at most: [`segmented_scratch`], and the
/// device-wide sort of its longest segment.
fn segmented_sort_storage<K: SortKey>(
    on: &CallOn<'_>,
    n: usize,
    value_bytes: usize,
    options: SortOptions,
) -> Result<TempStorage> {
    let device_sort = onesweep::storage::<K>(on, n, value_bytes, options, true)?;
    Ok(segmented_scratch::<K>(n, value_bytes)?.max(device_sort))
}

impl TempStorage {
    /// [`segmented_sort_keys`] and [`segmented_sort_keys_in_place`] of `n` keys of `K` on `on`
    /// (`&gpu`, or a call with its tuning), whatever the segments, at most: two alternate keys a key where a segment is
    /// longer than one block's tile (`SORT_BLOCK * K::ITEMS` keys), and what
    /// [`sort_keys`](Self::sort_keys) of the longest segment needs (segments long enough go
    /// through the device-wide sort).
    ///
    /// # Errors
    /// A bit range outside the key; sizes past the address space.
    pub fn segmented_sort_keys<'g, K: SortKey>(
        on: impl Into<CallOn<'g>>,
        n: usize,
        options: SortOptions,
    ) -> Result<Self> {
        segmented_sort_storage::<K>(&on.into(), n, 0, options)
    }

    /// [`segmented_sort_pairs`], [`segmented_sort_pairs_in_place`] (and, with `u32` values,
    /// [`segmented_argsort`]) of `n` keys of `K` and values of `V`: as
    /// [`segmented_sort_keys`](Self::segmented_sort_keys), the values' alternates too.
    ///
    /// # Errors
    /// As [`segmented_sort_keys`](Self::segmented_sort_keys).
    pub fn segmented_sort_pairs<'g, K: SortKey, V: DeviceCopy>(
        on: impl Into<CallOn<'g>>,
        n: usize,
        options: SortOptions,
    ) -> Result<Self> {
        segmented_sort_storage::<K>(&on.into(), n, ValueBytes::<V>::BYTES, options)
    }
}

/// Which segments the device-wide sort takes and which the segmented kernels.
struct Plan {
    /// The large segments, (first key, keys), longest first, each sorted by the device-wide
    /// sort.
    large: Vec<(usize, usize)>,
    /// The longest segment the segmented kernels sort: the longer ones are the device-wide
    /// sort's.
    longest_left: usize,
}

/// How many of the `candidates` (segment lengths, longest first) the device-wide sort should
/// take, one after another, the segmented kernels taking the rest and the others (of at most
/// `longest_other` keys): the `k` with the least estimated time, in the keys one block sorts
/// in it, of `k` device sorts (`policy.device_sort_fixed_keys` each, and their keys over
/// `policy.device_sort_speedup`) and then the blocks, which run side by side and take as
/// long as the longest segment left. Never splits equal lengths (the block kernel skips by
/// length).
pub(in crate::device) fn device_sorted_count(
    policy: SegmentedSortPolicy,
    candidates: &[usize],
    longest_other: usize,
) -> usize {
    let block_time = |k: usize| candidates.get(k).copied().unwrap_or(0).max(longest_other);
    let (mut best, mut best_k, mut device) = (block_time(0), 0, 0usize);
    for k in 1..=candidates.len() {
        device += policy.device_sort_fixed_keys + candidates[k - 1] / policy.device_sort_speedup;
        let splits_equal = candidates.get(k).is_some_and(|&next| next == candidates[k - 1]);
        if !splits_equal && device + block_time(k) < best {
            (best, best_k) = (device + block_time(k), k);
        }
    }
    best_k
}

/// The [`Plan`] of `call` (its segments' longest `longest`, the last ending at `end`). The
/// candidates are the segments longer than a tile and than a multiprocessor's share of the
/// keys (one block on such a segment leaves most multiprocessors idle); of those,
/// [`device_sorted_count`] picks the longest few. With equal rows, every row or none; with
/// offsets read by [`SegmentOffsets::new`](crate::device::SegmentOffsets::new), the offsets are read
/// back (which synchronises the stream) only when the longest segment is a candidate. Top-k
/// (`keep`) and offsets given unchecked stay with the segmented kernels.
fn plan(on: CallOn<'_>, call: SegmentedCall<'_>, tile: usize, longest: usize, end: usize) -> Result<Plan> {
    let share = end.div_ceil(on.gpu().info().multiprocessors.max(1) as usize);
    let limit = tile.max(share);
    let none = Plan {
        large: Vec::new(),
        longest_left: longest,
    };
    if call.keep.is_some() || longest <= limit {
        return Ok(none);
    }
    // The candidates, (first key, keys), and the longest of the other segments.
    let (mut candidates, longest_other) = match call.segments {
        Segments::Rows(row_len) => (
            (0..end / row_len).map(|row| (row * row_len, row_len)).collect(),
            0,
        ),
        Segments::Offsets(offsets) if offsets.checked() => {
            let view = offsets.offsets();
            let mut host = vec![0u64; view.len];
            // SAFETY: a view holds `len` initialised u64 in the GPU's context.
            unsafe { on.stream().copy_to_host(view.address, &mut host)? };
            let mut candidates = Vec::new();
            let mut longest_other = 0;
            for w in host.windows(2) {
                let len = (w[1] - w[0]) as usize;
                if len > limit {
                    candidates.push((w[0] as usize, len));
                } else {
                    longest_other = longest_other.max(len);
                }
            }
            (candidates, longest_other)
        }
        Segments::Offsets(_) => return Ok(none),
    };
    candidates.sort_by_key(|&(begin, len)| (std::cmp::Reverse(len), begin));
    let lengths: Vec<usize> = candidates.iter().map(|&(_, len)| len).collect();
    let policy = crate::tuning::segmented_sort_for(on.gpu().info().arch);
    let k = device_sorted_count(policy, &lengths, longest_other);
    if k == 0 {
        return Ok(none);
    }
    candidates.truncate(k);
    Ok(Plan {
        large: candidates,
        longest_left: lengths.get(k).copied().unwrap_or(0).max(longest_other),
    })
}

/// Queue the segmented sort `call` describes (see [`segmented_sort_keys`]).
pub(in crate::device) fn launch<K: SortKey>(
    on: CallOn<'_>,
    what: &'static str,
    call: SegmentedCall<'_>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    check_bound(&on, what, &call.buffers.bounds)?;
    check_bound(&on, what, &[call.segments.bound()])?;
    let (begin_bit, end_bit) = options.bit_range::<K>()?;
    let buffers = call.buffers;
    let (segments, offsets, row_len, longest, end) = layout(what, call.segments, buffers.n)?;
    check_sort_len(what, longest)?;
    if segments == 0 || call.keep == Some(0) {
        return Ok(());
    }
    let tile = SORT_BLOCK as usize * K::ITEMS;
    let key_bytes = size_of::<K::Raw>();
    let value_bytes = buffers.value_bytes();
    scratch_bytes(what, end, key_bytes, value_bytes)?;
    let plan = plan(on, call, tile, longest, end)?;
    let longest = plan.longest_left;
    let by_kernels = plan.large.len() < segments;
    // The call's whole need, before anything of it is queued: the blocks' scratch where a
    // segment they take is longer than a tile, and each large segment's device-wide sort. Those
    // run first, one after another in stream order, each over the whole arena, and the blocks'
    // kernels write their scratch before reading it: they share the arena (the larger need).
    let tiers_use_scratch = by_kernels && longest > tile;
    let (mut need, keys_region, values_region) =
        tiers_scratch(what, end, (key_bytes, value_bytes), tiers_use_scratch)?;
    let mut large = Vec::with_capacity(plan.large.len());
    for &(begin, len) in &plan.large {
        // Longer than a tile and than a multiprocessor's share: onesweep.
        let sort =
            onesweep::OnesweepPlan::new::<K>(on.gpu().info(), len, value_bytes, options, &on.tuning())?;
        need = need.max(sort.temp_storage());
        large.push((begin, len, sort));
    }
    let mut workspace = workspace.begin(on.stream(), &need)?;
    let arena = workspace.arena();

    let (values_in, values_out, index_values) = match buffers.values {
        Values::None => (0, 0, false),
        Values::Pairs { input, output, .. } => (input.unwrap_or(0), output, input.is_none()),
    };
    let stream = on.stream();
    // Segments longer than a tile alternate between two scratch buffers, indexed as the input.
    let (keys_scratch, values_scratch, scratch_len) = if tiers_use_scratch {
        (
            arena.carve(keys_region, keys_region.bytes)?,
            arena.carve(values_region, values_region.bytes)?,
            end,
        )
    } else {
        (0, 0, 0)
    };
    let mut params = SegmentedSortParams::<K::Raw, u64> {
        keys_in: buffers.keys_in as *const K::Raw,
        keys_out: buffers.keys_out as *mut K::Raw,
        values_in: values_in as *const u64,
        values_out: values_out as *mut u64,
        keys_scratch: keys_scratch as *mut K::Raw,
        values_scratch: values_scratch as *mut u64,
        scratch_len,
        offsets: offsets as *const u64,
        row_len,
        segments,
        first_segment: 0,
        keep: call.keep.unwrap_or(usize::MAX),
        shortest: 0,
        longest: 0,
        begin_bit,
        end_bit,
        descending: options.is_descending() as u32,
        index_values: index_values as u32,
    };
    let module = crate::module(on.gpu())?;
    let policy = crate::tuning::segmented_sort_for(on.gpu().info().arch);
    let (warp_keys, warp_radix_keys) = (policy.warp_sort_keys(), policy.warp_radix_sort_keys());
    // The tiers by length: a warp a segment in registers, a warp a segment in its shared
    // memory, a group of 2 or 4 warps a segment (such tiles merged), a block a segment of the
    // block kernel's tile or longer, up to the longest left (any longer ones are the
    // device-wide sort's). Equal rows are all of one tier: one launch; with offsets, a launch per tier up to the longest
    // segment left, each passing over the others' segments.
    let tiers = [
        (Tier::Warp, 0, warp_keys),
        (Tier::WarpRadix, warp_keys + 1, warp_radix_keys),
        // Groups of 2 warps, then of 4 (`warp_merge_warps` of each range's longest).
        (Tier::WarpMerge, warp_radix_keys + 1, 2 * warp_radix_keys),
        (
            Tier::WarpMerge,
            2 * warp_radix_keys + 1,
            policy.warp_merge_sort_keys(),
        ),
        (Tier::Block, policy.warp_merge_sort_keys() + 1, longest),
    ];
    // Every kernel found before anything is launched (a missing one is an error that launches
    // nothing).
    let mut launches = Vec::new();
    for (tier, shortest, most) in tiers {
        let takes_rows = offsets == 0 && (shortest..=most).contains(&row_len);
        if !by_kernels || shortest > longest || (offsets == 0 && !takes_rows) {
            continue;
        }
        let (family, items) = match tier {
            Tier::Warp => (SegmentedSortTier::Warp, 0),
            Tier::WarpRadix => (SegmentedSortTier::WarpRadix, policy.warp_radix_sort_items),
            Tier::WarpMerge => (SegmentedSortTier::WarpMerge, policy.warp_radix_sort_items),
            Tier::Block => (SegmentedSortTier::Block, K::ITEMS),
        };
        let family = families::segmented_sort_family(family, value_bytes);
        let kernel =
            module.kernel::<SegmentedSortParams<K::Raw, u64>>(crate::registered(family, &[K::NAME])?.name)?;
        launches.push((tier, shortest, most, items, kernel));
    }
    // The large segments, each through the device-wide sort, which spreads it over the whole
    // GPU (one block on it would leave most multiprocessors idle); longest first. Each carves
    // its scratch from the whole arena, grown for the largest above.
    for (begin, len, sort) in large {
        let at = |address: u64, bytes: usize| address + (begin * bytes) as u64;
        let values = match buffers.values {
            Values::None => Values::None,
            Values::Pairs { input, output, bytes } => Values::Pairs {
                input: input.map(|a| at(a, bytes)),
                output: at(output, bytes),
                bytes,
            },
        };
        let segment = SortBuffers {
            n: len,
            keys_in: at(buffers.keys_in, key_bytes),
            keys_out: at(buffers.keys_out, key_bytes),
            values,
            bounds: buffers.bounds,
        };
        // Its bounds checked above as the whole input's.
        onesweep::launch::<K>(on, &sort, segment, None, &mut workspace, arena)?;
    }
    for (tier, shortest, most, items, kernel) in launches {
        (params.shortest, params.longest) = (shortest, most);
        if tier != Tier::Block {
            // The warp radix and warp merge tiers' tiles in the warps' own shared memory; none
            // for the warp sort.
            let shared = match tier {
                Tier::Warp => 0,
                _ => {
                    warp_radix_sort_layout(SORT_BLOCK, items as u32, key_bytes as u32, value_bytes as u32)
                        .total
                }
            };
            // A warp a segment, or a group of warps (as the kernel takes it).
            let warps = if tier == Tier::WarpMerge {
                warp_merge_warps(most) as usize
            } else {
                1
            };
            let per_block = (SORT_BLOCK / WARP_SIZE) as usize / warps;
            for (first_block, grid) in LaunchConfig::grid_chunks(segments.div_ceil(per_block)) {
                params.first_segment = first_block * per_block;
                let config = LaunchConfig::new(grid, SORT_BLOCK).with_shared_mem(shared);
                // SAFETY: as below; a warp (a group of warps) a segment from `first_segment`,
                // blocks of 8 warps; the warp radix and warp merge tiers' segments fit their
                // warps' tiles (the warp merge tier's longest is at most
                // the policy's warp_merge_sort_keys), and their kernels have its layout of shared
                // memory.
                unsafe { stream.launch(&kernel, config, &params)? };
            }
            continue;
        }
        let layout = segmented_sort_layout(
            SORT_BLOCK,
            (SORT_BLOCK as usize * items) as u32,
            key_bytes as u32,
            value_bytes as u32,
        );
        // A block a segment: past the most blocks a grid holds, a launch each chunk of segments.
        for (first_segment, grid) in LaunchConfig::grid_chunks(segments) {
            let config = LaunchConfig::new(grid, SORT_BLOCK).with_shared_mem(layout.total);
            params.first_segment = first_segment;
            // SAFETY: the segments are within the input (checked), each below 2^32 keys; the
            // outputs hold the input's length (checked by the callers) or `segments * keep`
            // (top_k); scratch buffers of two inputs' length wherever a segment of the block
            // tier is longer than a tile; the bit range is within the key; the kernel's layout
            // of shared memory; blocks `first_segment + b` below `segments`.
            unsafe { stream.launch(&kernel, config, &params)? };
        }
    }
    Ok(())
}

/// The segmented kernels, by the lengths they take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// `device_segmented_warp_sort_*`: up to the segmented sort policy's `warp_sort_keys()` keys.
    Warp,
    /// `device_segmented_warp_radix_sort_*`: up to its `warp_radix_sort_keys()` keys.
    WarpRadix,
    /// `device_segmented_warp_merge_sort_*`: up to its `warp_merge_sort_keys()` keys.
    WarpMerge,
    /// `device_segmented_radix_sort_*`: longer.
    Block,
}

/// Sort each segment of `keys_in` into the same positions of `keys_out` (CUB's
/// `DeviceSegmentedRadixSort::SortKeys`, torch's `sort(dim=-1)` of rows): stable, in the order of
/// [`SortKey`] and `options`. Stream-ordered: returns once queued. `keys_in` is not modified;
/// keys of `keys_out` outside every segment are left alone.
///
/// `segments`: equal rows (a row length: `keys_in.len()` must be a whole number of rows) or
/// [`SegmentOffsets`](crate::device::SegmentOffsets) (any lengths, empty ones too).
///
/// A segment of at most the segmented sort policy's `warp_sort_keys()` (128) keys is sorted by one warp in
/// registers (each key's place counted against the segment's others, 8 segments a block); one
/// of up to its `warp_radix_sort_keys()` (512) by one warp in shared memory of its own
/// (a radix sort of a tile of 256 or 512 keys, 8 segments a block); one of up to
/// its `warp_merge_sort_keys()` (2048) by 2 warps (up to 1024 keys) or 4, each sorting
/// a part of 512 keys so, then the group merging the sorted parts pairwise by merge path;
/// longer ones by one block of [`SORT_BLOCK`] threads each: a segment of up to `SORT_BLOCK *
/// K::ITEMS` keys (4096 for 4-byte keys, 3072 for 8-byte ones) in shared memory by the block
/// radix sort of a tile of that many (each key read and written once in every tier so far); a
/// longer one takes, per 8-bit
/// digit, a count of its digits and one pass over its keys (reading them twice and writing them
/// once per digit), through two scratch buffers of the input's length in the workspace. The
/// longest few segments, each longer than a tile and than a multiprocessor's share of all the
/// keys (the last offset over the multiprocessors), go through [`sort_keys`](crate::device::sort_keys)
/// one after another instead, each spread over the whole GPU (CUB would give each one block),
/// where an estimate of both ways' times says so (a device sort costs about as much as one
/// block's sort of 2048 keys, and takes each key some 460 times faster: one huge segment among
/// short ones, or a few long rows; not many long segments, which the blocks take side by side).
/// With [`SegmentOffsets::new`](crate::device::SegmentOffsets::new)'s offsets such segments are found
/// in a copy of the offsets read back, which synchronises the stream, and only when the
/// longest segment is longer than a tile and that share; offsets given
/// [unchecked](crate::device::SegmentOffsets::new_unchecked) are never read back and every segment is
/// sorted by a block. Deterministic.
///
/// # Errors
/// [`Error::LengthMismatch`] when `keys_out` is shorter than `keys_in`;
/// [`Error::InvalidBitRange`] for a bit range past the key's width; [`Error::InvalidOffsets`] for
/// offsets past the input; [`Error::NotWholeRows`] for rows that do not divide the input;
/// [`Error::TooManyKeys`] for a segment past [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys; device errors (out
/// of memory). Nothing is launched on an input error or when memory runs out (the scratch
/// buffers and the longest segment's device sort are allocated before anything is launched,
/// and the later device sorts need no more).
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let rows = DeviceVec::from_slice(&gpu, &[3.0f32, 1.0, 2.0, 0.5, -1.0, 9.0])?; // 2 rows of 3
/// let mut sorted = DeviceVec::<f32>::zeroed(&gpu, 6)?;
/// let mut workspace = DeviceWorkspace::new();
/// device::segmented_sort_keys(&gpu, &rows, &mut sorted, 3, SortOptions::ascending(), &mut workspace)?;
/// assert_eq!(sorted.to_vec(&gpu)?, [1.0, 2.0, 3.0, -1.0, 0.5, 9.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_sort_keys<'a, 'o, 'g, 's, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    segments: impl Into<Segments<'s>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (keys_in, keys_out) = (keys_in.into(), keys_out.into());
    check_len("segmented_sort_keys: keys_out", keys_in.len, keys_out.len)?;
    let call = SegmentedCall {
        buffers: SortBuffers {
            n: keys_in.len,
            keys_in: keys_in.address,
            keys_out: keys_out.address,
            values: Values::None,
            bounds: [keys_in.bound, keys_out.bound, Bound::default(), Bound::default()],
        },
        segments: segments.into(),
        keep: None,
    };
    launch::<K>(on.into(), "segmented_sort_keys", call, options, workspace)
}

/// Sort each segment of `keys` in place (CUB's `DeviceSegmentedRadixSort::SortKeys` on a
/// `DoubleBuffer`, whose result may be in either buffer; here it is always in `keys`); otherwise
/// as [`segmented_sort_keys`], keys outside every segment left as they are. A segment of up to
/// a tile is read into the block before any key is written; a longer one goes through the
/// workspace's scratch buffers (copied there first when the bit range is one digit), so the
/// extra device memory is the out-of-place call's.
///
/// # Errors
/// As [`segmented_sort_keys`].
pub fn segmented_sort_keys_in_place<'k, 'g, 's, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    segments: impl Into<Segments<'s>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let keys = keys.into();
    let call = SegmentedCall {
        buffers: SortBuffers::in_place(keys.len, keys.address, None, [keys.bound, Bound::default()]),
        segments: segments.into(),
        keep: None,
    };
    launch::<K>(
        on.into(),
        "segmented_sort_keys_in_place",
        call,
        options,
        workspace,
    )
}

/// Sort each segment's `(key, value)` pairs by key in place; as [`segmented_sort_pairs`] and
/// [`segmented_sort_keys_in_place`].
///
/// # Errors
/// As [`segmented_sort_pairs`] (`values` shorter than `keys`).
pub fn segmented_sort_pairs_in_place<'k, 'v, 'g, 's, K: SortKey, V: DeviceCopy>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    values: impl Into<DeviceViewMut<'v, V>>,
    segments: impl Into<Segments<'s>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys, values) = (keys.into(), values.into());
    check_len("segmented_sort_pairs_in_place: values", keys.len, values.len)?;
    let call = SegmentedCall {
        buffers: SortBuffers::in_place(
            keys.len,
            keys.address,
            Some((values.address, bytes)),
            [keys.bound, values.bound],
        ),
        segments: segments.into(),
        keep: None,
    };
    launch::<K>(
        on.into(),
        "segmented_sort_pairs_in_place",
        call,
        options,
        workspace,
    )
}

/// Sort each segment's `(key, value)` pairs by key (CUB's `DeviceSegmentedRadixSort::SortPairs`):
/// as [`segmented_sort_keys`], each value (any type of 4 or 8 bytes) moving with its key.
///
/// # Errors
/// As [`segmented_sort_keys`], and [`Error::LengthMismatch`] when `values_in` or `values_out` is
/// shorter than `keys_in`.
#[allow(clippy::too_many_arguments)] // CUB's SortPairs: inputs, outputs, segments, order, storage.
pub fn segmented_sort_pairs<'a, 'b, 'o, 'p, 'g, 's, K: SortKey, V: DeviceCopy>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    values_in: impl Into<DeviceView<'b, V>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    values_out: impl Into<DeviceViewMut<'p, V>>,
    segments: impl Into<Segments<'s>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys_in, keys_out) = (keys_in.into(), keys_out.into());
    let (values_in, values_out) = (values_in.into(), values_out.into());
    let n = keys_in.len;
    check_len("segmented_sort_pairs: keys_out", n, keys_out.len)?;
    check_len("segmented_sort_pairs: values_in", n, values_in.len)?;
    check_len("segmented_sort_pairs: values_out", n, values_out.len)?;
    let call = SegmentedCall {
        buffers: SortBuffers {
            n,
            keys_in: keys_in.address,
            keys_out: keys_out.address,
            values: Values::Pairs {
                input: Some(values_in.address),
                output: values_out.address,
                bytes,
            },
            bounds: [keys_in.bound, keys_out.bound, values_in.bound, values_out.bound],
        },
        segments: segments.into(),
        keep: None,
    };
    launch::<K>(on.into(), "segmented_sort_pairs", call, options, workspace)
}

/// Each segment's sorted keys and the permutation that sorts it (torch's `sort(dim=-1)`, which
/// returns both): `indices_out[i]` is the index *within its segment* of the key that
/// `keys_out[i]` holds. Stable; otherwise as [`segmented_sort_pairs`].
///
/// # Errors
/// As [`segmented_sort_keys`], and [`Error::LengthMismatch`] when `indices_out` is short.
pub fn segmented_argsort<'a, 'o, 'i, 'g, 's, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    indices_out: impl Into<DeviceViewMut<'i, u32>>,
    segments: impl Into<Segments<'s>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (keys_in, keys_out, indices) = (keys_in.into(), keys_out.into(), indices_out.into());
    let n = keys_in.len;
    check_len("segmented_argsort: keys_out", n, keys_out.len)?;
    check_len("segmented_argsort: indices_out", n, indices.len)?;
    let call = SegmentedCall {
        buffers: SortBuffers {
            n,
            keys_in: keys_in.address,
            keys_out: keys_out.address,
            values: Values::Pairs {
                input: None,
                output: indices.address,
                bytes: 4,
            },
            bounds: [keys_in.bound, keys_out.bound, Bound::default(), indices.bound],
        },
        segments: segments.into(),
        keep: None,
    };
    launch::<K>(on.into(), "segmented_argsort", call, options, workspace)
}

#[cfg(test)]
mod tests {
    use super::{device_sorted_count, layout, scratch_bytes};
    use crate::Error;
    use crate::device::Segments;
    use gpu_primitives_abi::tuning::SegmentedSortPolicy;

    #[test]
    fn rows_that_do_not_divide_the_keys_are_named() {
        match layout("t", Segments::Rows(3), 10) {
            Err(Error::NotWholeRows { what, len, row_len }) => assert_eq!((what, len, row_len), ("t", 10, 3)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            layout("t", Segments::Rows(0), 4),
            Err(Error::NotWholeRows { row_len: 0, .. })
        ));
        assert_eq!(layout("t", Segments::Rows(0), 0).unwrap().0, 0);
        assert_eq!(layout("t", Segments::Rows(5), 10).unwrap().0, 2);
    }

    #[test]
    fn scratch_past_the_address_space_is_rejected() {
        assert_eq!(scratch_bytes("t", 5, 4, 0).unwrap(), (48, 48));
        assert_eq!(scratch_bytes("t", 5, 4, 8).unwrap(), (48, 128));
        for (end, key, value) in [
            (usize::MAX / 4, 4, 0),
            (usize::MAX / 16 + 1, 8, 0),
            (usize::MAX / 16, 4, 8),
            (usize::MAX / 2, 1, 1),
        ] {
            let r = scratch_bytes("t", end, key, value);
            assert!(
                matches!(r, Err(Error::PastAddressSpace { items, .. }) if items == end),
                "{end} {key} {value}: {r:?}"
            );
        }
    }

    #[test]
    fn a_huge_segment_goes_to_the_device_sort_and_many_long_ones_stay_with_the_blocks() {
        // One segment of 2^24 keys among rows of 4096: the device sort takes it.
        assert_eq!(
            device_sorted_count(SegmentedSortPolicy::SM90, &[1 << 24], 4096),
            1
        );
        // 100 segments of 5000: side by side in blocks (100 device sorts would cost more).
        assert_eq!(device_sorted_count(SegmentedSortPolicy::SM90, &[5000; 100], 0), 0);
        // A row just past a tile: alone, by the device sort; two such rows, by blocks.
        assert_eq!(device_sorted_count(SegmentedSortPolicy::SM90, &[4097], 0), 1);
        assert_eq!(
            device_sorted_count(SegmentedSortPolicy::SM90, &[4097, 4097], 0),
            0
        );
        // Three rows of a million: each by the device sort.
        assert_eq!(
            device_sorted_count(SegmentedSortPolicy::SM90, &[1 << 20; 3], 0),
            3
        );
        // Equal lengths are never split: the block kernel skips segments by length.
        let k = device_sorted_count(SegmentedSortPolicy::SM90, &[300_000, 50_000, 50_000], 4096);
        assert!(k == 1 || k == 3, "{k}");
        // Nothing to take.
        assert_eq!(device_sorted_count(SegmentedSortPolicy::SM90, &[], 100), 0);
    }
}
