//! The device-wide radix sort past one tile: Onesweep (Adinets and Merrill, "Onesweep: A
//! Faster Least Significant Digit Radix Sort for GPUs", 2022; CUB's `DeviceRadixSort`), one
//! upfront count of every pass's digits, then one pass per 8-bit digit with decoupled look-back
//! (kernels `device::radix_sort`); its launch shape, workspace and tuning overrides.

use super::common::{SortBuffers, SortOptions, SortedIn, Values, check_sort_len, fits_one_tile};
use super::key::SortKey;
use crate::device::element::Bound;
use crate::device::temp_storage::{Region, TempStorage};
use crate::device::workspace::{Arena, InUse, StatusLayout};
use crate::{CallOn, DeviceInfo, LaunchConfig, Result, TuningOverrides};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::{RADIX_BITS, RADIX_DIGITS};
use gpu_primitives_abi::layout::{onesweep_layout, sort_histogram_shared_bytes};
use gpu_primitives_abi::params::{OnesweepParams, RadixHistogramParams};
use gpu_primitives_abi::planning::sort::{
    onesweep_blocks_per_sm, onesweep_items, onesweep_look_back_tiles, onesweep_small_tiles, onesweep_threads,
    sort_histogram_copies,
};
use gpu_primitives_abi::table::{onesweep_small_items, sort_payload_name};
use gpu_primitives_abi::tuning::SortPolicy;

/// The sort's upfront digit counts of every pass (`device_radix_sort_histogram_<key>`).
const SORT_HISTOGRAM: &Family = families::family("device_radix_sort_histogram");

/// The caller's alternate buffers of a double-buffered sort: keys, and values for pairs.
#[derive(Clone, Copy)]
pub(in crate::device) struct Alternate {
    pub(in crate::device) keys: u64,
    pub(in crate::device) values: Option<u64>,
    /// The bounds of the keys' and the values' views.
    pub(in crate::device) bounds: [Bound; 2],
}

/// Every launch shape and workspace size of one onesweep sort: the plan of CUB's dispatch
/// (plan, temporary bytes, launch), a pure function of the key type, the sizes, the options,
/// the device's multiprocessors and shared memory, and the tuning overrides. No GPU needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::device) struct OnesweepPlan {
    n: usize,
    key_bytes: usize,
    value_bytes: usize,
    begin_bit: u32,
    end_bit: u32,
    descending: bool,
    /// One a digit of the compared bits (one for an empty range: a stable copy).
    passes: u32,
    /// The upfront count's grid and its counters' copies in shared memory.
    histogram_blocks: u32,
    histogram_copies: u32,
    shape: OnesweepShape,
    /// Tiles the look-back reads at once in every pass.
    look_back_tiles: u32,
}

impl OnesweepPlan {
    /// The plan of sorting `n` keys of `K` (more than one tile, at most
    /// [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS)) with `value_bytes`-byte values (0 for
    /// keys alone) as `options` says, on a device like `info` (its architecture's
    /// [`SortPolicy`]), under `overrides`.
    ///
    /// # Errors
    /// As [`SortOptions::compared_bits`], and [`Error::TooManyKeys`](crate::Error::TooManyKeys).
    pub(in crate::device) fn new<K: SortKey>(
        info: &DeviceInfo,
        n: usize,
        value_bytes: usize,
        options: SortOptions,
        overrides: &TuningOverrides,
    ) -> Result<Self> {
        let (begin_bit, end_bit) = options.bit_range::<K>()?;
        check_sort_len("sort", n)?;
        debug_assert!(!fits_one_tile::<K>(n), "one tile is the block radix sort's");
        let key_bytes = size_of::<K::Raw>();
        let policy = crate::tuning::sort_for(info.arch, overrides);
        let shape = onesweep_shape::<K>(policy, info.multiprocessors, n, value_bytes, overrides.sort_tiles);
        let blocks_per_sm = policy.histogram_blocks_per_sm;
        Ok(Self {
            n,
            key_bytes,
            value_bytes,
            begin_bit,
            end_bit,
            descending: options.is_descending(),
            passes: sort_passes(begin_bit, end_bit),
            histogram_blocks: (info.multiprocessors * blocks_per_sm)
                .min(n.div_ceil(policy.histogram_block_threads as usize) as u32)
                .max(1),
            histogram_copies: sort_histogram_copies(policy, key_bytes as u32, info.max_shared_per_block),
            shape,
            look_back_tiles: overrides.sort_look_back_tiles.unwrap_or_else(|| {
                onesweep_look_back_tiles(
                    policy,
                    shape.tiles,
                    info.multiprocessors,
                    onesweep_blocks_per_sm(policy, key_bytes, value_bytes, shape.small),
                )
            }),
        })
    }

    /// What the sort needs of the workspace where the caller gives no alternate buffers: the
    /// scratch of the alternate keys and values, every pass's digit counts, and the look-back
    /// status of a pass (with alternate buffers, all but the alternates).
    pub(in crate::device) fn temp_storage(&self) -> TempStorage {
        self.scratch(true).need
    }

    /// [`temp_storage`](Self::temp_storage) and its regions, with the alternate keys and values
    /// where `alternates` (the caller gives none).
    pub(in crate::device) fn scratch(&self, alternates: bool) -> OnesweepScratch {
        onesweep_scratch(
            (self.n, self.key_bytes, self.value_bytes),
            self.passes,
            self.shape.tiles,
            alternates,
        )
    }
}

/// A onesweep sort's need of the workspace and its scratch regions: every pass's digit counts
/// (4 bytes each), the alternate keys and the alternate values (empty where the caller gives
/// alternate buffers).
#[derive(Clone, Copy, Debug)]
pub(in crate::device) struct OnesweepScratch {
    pub(in crate::device) need: TempStorage,
    counts: Region,
    keys: Region,
    values: Region,
}

/// The [`OnesweepScratch`] of `n` keys of `key_bytes` with `value_bytes`-byte values, in
/// `passes` passes of `tiles` tiles, with the alternates where `alternates`.
fn onesweep_scratch(
    (n, key_bytes, value_bytes): (usize, usize, usize),
    passes: u32,
    tiles: usize,
    alternates: bool,
) -> OnesweepScratch {
    let mut need = TempStorage::look_back_words(StatusLayout::Word, onesweep_status_words(tiles));
    let counts = need.scratch.push(sort_counts(passes) * size_of::<u32>());
    let (keys, values) = if alternates {
        (n * key_bytes, n * value_bytes)
    } else {
        (0, 0)
    };
    let keys = need.scratch.push(keys);
    let values = need.scratch.push(values);
    OnesweepScratch {
        need,
        counts,
        keys,
        values,
    }
}

/// Queue the onesweep sort `plan` describes of `buffers` (as many keys as the plan's, of `K`,
/// with values of its width): the histogram, then one onesweep pass per digit, each from the
/// previous pass's output, alternating between the final output and scratch memory so that the
/// last pass writes the final output (in place with an odd number of passes, the input is first
/// copied to the scratch memory); or, with the caller's `alternate` buffers, between the input
/// and those, instead of the final output and the workspace's scratch: then `buffers` is in
/// place, nothing is copied, and the result is in the input ([`SortedIn::Current`]) after an
/// even number of passes, in the alternate buffers after an odd one. The caller checked the
/// views' bounds.
pub(in crate::device) fn launch<K: SortKey>(
    on: CallOn<'_>,
    plan: &OnesweepPlan,
    mut buffers: SortBuffers,
    alternate: Option<Alternate>,
    workspace: &mut InUse<'_, '_>,
    arena: Arena,
) -> Result<SortedIn> {
    let OnesweepPlan {
        n,
        key_bytes,
        value_bytes,
        begin_bit,
        end_bit,
        descending,
        passes,
        histogram_blocks,
        histogram_copies,
        shape,
        look_back_tiles,
    } = *plan;
    assert!(
        n == buffers.n && key_bytes == size_of::<K::Raw>() && value_bytes == buffers.value_bytes(),
        "a onesweep plan of other buffers"
    );
    let stream = on.stream();
    let scratch = plan.scratch(alternate.is_none());
    let sorted_in = match alternate {
        Some(_) if passes % 2 == 1 => SortedIn::Alternate,
        _ => SortedIn::Current,
    };
    let (keys_scratch, values_scratch) = match alternate {
        // The passes end in the input (even) or in the alternate (odd): that one is the output,
        // the other the scratch; the first pass never writes its own input.
        Some(alt) => {
            let (current_values, alt_values) = match buffers.values {
                Values::Pairs { output, .. } => (output, alt.values.unwrap_or(0)),
                Values::None => (0, 0),
            };
            let (out, scratch) = match sorted_in {
                SortedIn::Alternate => ((alt.keys, alt_values), (buffers.keys_in, current_values)),
                SortedIn::Current => ((buffers.keys_in, current_values), (alt.keys, alt_values)),
            };
            buffers.keys_out = out.0;
            if let Values::Pairs { output, .. } = &mut buffers.values {
                *output = out.1;
            }
            scratch
        }
        None => (
            // Scratch: the alternate keys, then the alternate values (each region aligned).
            arena.carve(scratch.keys, n * key_bytes)?,
            arena.carve(scratch.values, n * value_bytes)?,
        ),
    };
    let in_place_keys = buffers.keys_in == buffers.keys_out;
    // Pass p writes the final output when passes - 1 - p is even, the scratch otherwise.
    let target = |p: u32, out: u64, scratch: u64| {
        if (passes - 1 - p).is_multiple_of(2) {
            out
        } else {
            scratch
        }
    };
    let mut keys_from = buffers.keys_in;
    let mut values_from = match buffers.values {
        Values::Pairs { input, .. } => input,
        Values::None => None,
    };
    if passes % 2 == 1 {
        // Pass 0 writes the final output: an input that is the output moves out of its way.
        if in_place_keys {
            // SAFETY: n keys of the caller's array and of the scratch, distinct.
            unsafe { stream.copy_address(keys_from, keys_scratch, n * key_bytes)? };
            keys_from = keys_scratch;
        }
        if let Values::Pairs {
            input: Some(input),
            output,
            bytes,
        } = buffers.values
            && input == output
        {
            // SAFETY: as the keys'.
            unsafe { stream.copy_address(input, values_scratch, n * bytes)? };
            values_from = Some(values_scratch);
        }
    }

    let module = crate::module(on.gpu())?;
    let counts = workspace.carve_zeroed(arena, scratch.counts, sort_counts(passes) * size_of::<u32>())?;
    let histogram =
        module.kernel::<RadixHistogramParams<K::Raw>>(crate::registered(SORT_HISTOGRAM, &[K::NAME])?.name)?;
    let histogram_block = SortPolicy::for_arch(on.gpu().info().arch).histogram_block_threads;
    let config = LaunchConfig::new(histogram_blocks, histogram_block)
        .with_shared_mem(sort_histogram_shared_bytes(passes, histogram_copies));
    let params = RadixHistogramParams {
        keys: keys_from as *const K::Raw,
        n,
        histogram: counts as *mut u32,
        begin_bit,
        end_bit,
        descending: descending as u32,
        passes,
        copies: histogram_copies,
    };
    // SAFETY: n keys; passes * RADIX_DIGITS zeroed counters; the bit range is within the key
    // (checked) and the passes cover it; the shared memory holds every pass's counters.
    unsafe { stream.launch(&histogram, config, &params)? };

    let OnesweepShape {
        small,
        threads,
        tile,
        tiles,
    } = shape;
    let name = crate::registered(families::onesweep_family(value_bytes, small), &[K::NAME])?.name;
    let layout = onesweep_layout(threads, tile as u32, key_bytes as u32, value_bytes as u32);
    let config = LaunchConfig::new(tiles as u32, threads).with_shared_mem(layout.total);
    for p in 0..passes {
        let shift = begin_bit + p * RADIX_BITS;
        let keys_to = target(p, buffers.keys_out, keys_scratch);
        let (values_in, values_out, index_values) = match buffers.values {
            Values::None => (0, 0, false),
            Values::Pairs { output, .. } => (
                values_from.unwrap_or(0),
                target(p, output, values_scratch),
                values_from.is_none(),
            ),
        };
        let status = workspace.look_back_words(StatusLayout::Word, onesweep_status_words(tiles), tiles)?;
        let params = OnesweepParams::<K::Raw, u64> {
            keys_in: keys_from as *const K::Raw,
            keys_out: keys_to as *mut K::Raw,
            values_in: values_in as *const u64,
            values_out: values_out as *mut u64,
            n,
            histogram: (counts + 4 * (p * RADIX_DIGITS) as u64) as *const u32,
            status,
            shift,
            digit_bits: RADIX_BITS.min(end_bit - shift),
            descending: descending as u32,
            index_values: index_values as u32,
            look_back_tiles,
        };
        let kernel = module.kernel::<OnesweepParams<K::Raw, u64>>(name)?;
        // SAFETY: n keys (and values) in and out, the output never the pass's input (the
        // buffers alternate, and an in-place input was copied away first); the histogram row
        // of this pass counts every key's digit; RADIX_DIGITS status slots per tile in a new
        // epoch; one block per tile with the layout's shared memory.
        unsafe { stream.launch(&kernel, config, &params)? };
        workspace.look_back_launched();
        keys_from = keys_to;
        if let Values::Pairs { .. } = buffers.values {
            values_from = Some(values_out);
        }
    }
    Ok(sorted_in)
}

/// The launch shape of the onesweep passes over `n` keys of `K` with `value_bytes`-byte values
/// (0 for keys alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OnesweepShape {
    /// The kernels of fewer keys a thread, for grids too small to fill the GPU otherwise.
    small: bool,
    threads: u32,
    /// Keys a tile (a block).
    tile: usize,
    tiles: usize,
}

/// Threads and keys a thread of `K`'s onesweep kernels with `value_bytes`-byte values: the
/// small ones (fewer keys a thread) where `small`, `None` where `K` has none.
fn onesweep_kernel<K: SortKey>(policy: SortPolicy, value_bytes: usize, small: bool) -> Option<(u32, usize)> {
    let items = if small {
        onesweep_small_items(K::ONESWEEP_SMALL, sort_payload_name(value_bytes))?
    } else {
        onesweep_items(
            value_bytes,
            K::ONESWEEP_KEYS_ITEMS,
            K::ONESWEEP_V4_ITEMS,
            K::ONESWEEP_V8_ITEMS,
        )
    };
    Some((
        onesweep_threads(policy, size_of::<K::Raw>(), value_bytes, small),
        items,
    ))
}

/// The shape on `multiprocessors` multiprocessors; `forced` (the `sort_tiles` override) takes
/// the large tiles (1) or the small ones where `K` has them (2) in place of
/// [`onesweep_small_tiles`]'s choice.
fn onesweep_shape<K: SortKey>(
    policy: SortPolicy,
    multiprocessors: u32,
    n: usize,
    value_bytes: usize,
    forced: Option<u32>,
) -> OnesweepShape {
    let large =
        onesweep_kernel::<K>(policy, value_bytes, false).expect("every key type has onesweep kernels");
    let small_kernel = onesweep_kernel::<K>(policy, value_bytes, true);
    let small = match (small_kernel, forced) {
        (None, _) => false,
        (Some((_, small_items)), None) => onesweep_small_tiles(
            policy,
            n,
            multiprocessors,
            (size_of::<K::Raw>(), value_bytes),
            large.1,
            small_items,
        ),
        (Some(_), Some(forced)) => forced == 2,
    };
    let (threads, items) = match small_kernel {
        Some(kernel) if small => kernel,
        _ => large,
    };
    let tile = threads as usize * items;
    OnesweepShape {
        small,
        threads,
        tile,
        tiles: n.div_ceil(tile),
    }
}

/// The most tiles a onesweep pass over up to `n` keys of `K` takes, whichever kernel it picks
/// (the tile shapes of every architecture, `crate::tuning::SHAPES_ARCH`'s).
fn onesweep_most_tiles<K: SortKey>(n: usize, value_bytes: usize) -> usize {
    let policy = SortPolicy::for_arch(crate::tuning::SHAPES_ARCH);
    [false, true]
        .into_iter()
        .filter_map(|small| onesweep_kernel::<K>(policy, value_bytes, small))
        .map(|(threads, items)| n.div_ceil(threads as usize * items))
        .max()
        .unwrap_or(0)
}

/// The digit counters of `passes` passes.
fn sort_counts(passes: u32) -> usize {
    passes as usize * RADIX_DIGITS as usize
}

/// The look-back status words of a onesweep pass of `tiles` tiles: one a digit a tile.
fn onesweep_status_words(tiles: usize) -> usize {
    tiles * RADIX_DIGITS as usize
}

/// The passes of a sort over the bit range `begin_bit..end_bit`: an empty range still takes
/// one pass, of a 0-bit digit (a stable copy: argsort's identity permutation).
fn sort_passes(begin_bit: u32, end_bit: u32) -> u32 {
    (end_bit - begin_bit).div_ceil(RADIX_BITS).max(1)
}

/// What a sort of `n` keys of `K` with `value_bytes`-byte values needs of the workspace (the
/// scratch where the caller gives no alternate buffers); with `up_to`, what any sort of at most
/// `n` keys needs (the segmented sort's large segments); on `on`'s GPU, under its tuning.
pub(in crate::device) fn storage<K: SortKey>(
    on: &CallOn<'_>,
    n: usize,
    value_bytes: usize,
    options: SortOptions,
    up_to: bool,
) -> Result<TempStorage> {
    let (begin_bit, end_bit) = options.bit_range::<K>()?;
    check_sort_len("sort", n)?;
    if fits_one_tile::<K>(n) {
        // One tile: sorted in one block's shared memory, no onesweep pass.
        return Ok(TempStorage::default());
    }
    if up_to {
        return Ok(most_storage::<K>(n, value_bytes, (begin_bit, end_bit)));
    }
    let plan = OnesweepPlan::new::<K>(on.gpu().info(), n, value_bytes, options, &on.tuning())?;
    Ok(plan.temp_storage())
}

/// What any onesweep sort of at most `n` keys of `K` over `bits` needs, whichever tiles it
/// takes, on any device.
fn most_storage<K: SortKey>(n: usize, value_bytes: usize, (begin_bit, end_bit): (u32, u32)) -> TempStorage {
    onesweep_scratch(
        (n, size_of::<K::Raw>(), value_bytes),
        sort_passes(begin_bit, end_bit),
        onesweep_most_tiles::<K>(n, value_bytes),
        true,
    )
    .need
}

#[cfg(test)]
mod tests {
    use super::{OnesweepPlan, most_storage};
    use crate::device::sort::{SortKey, SortOptions};
    use crate::{DeviceInfo, TuningOverrides};
    use gpu_primitives_abi::layout::SORT_BLOCK;
    use half::f16;

    /// A device with `multiprocessors` and sm_90's shared memory.
    fn device(multiprocessors: u32) -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: "a plan's device".into(),
            arch: 90,
            multiprocessors,
            max_shared_per_block: 227 * 1024,
            reserved_shared_per_block: 1024,
            warp_size: 32,
            total_memory: 80 << 30,
            driver_cuda_version: "13.0".into(),
            driver_version: 13000,
        }
    }

    fn plan<K: SortKey>(
        n: usize,
        value_bytes: usize,
        options: SortOptions,
        overrides: &TuningOverrides,
    ) -> OnesweepPlan {
        OnesweepPlan::new::<K>(&device(132), n, value_bytes, options, overrides).unwrap()
    }

    #[test]
    fn a_plan_has_a_pass_a_digit_and_the_scratch_of_one_copy() {
        let none = TuningOverrides::default();
        let n = 1 << 28;
        let keys = plan::<u32>(n, 0, SortOptions::ascending(), &none);
        assert_eq!(keys.passes, 4);
        assert_eq!(keys.shape.tiles, n.div_ceil(keys.shape.tile));
        let scratch = keys.scratch(true);
        assert_eq!((scratch.keys.bytes, scratch.values.bytes), (n * 4, 0));
        assert_eq!(scratch.counts.bytes, 4 * 256 * 4);
        assert_eq!(scratch.need, keys.temp_storage());
        // With the caller's alternate buffers, only the counts.
        let counts_only = keys.scratch(false);
        assert_eq!(counts_only.need.scratch.bytes(), 4 * 256 * 4);
        assert_eq!(counts_only.need.word_slots, scratch.need.word_slots);
        // Pairs of f16 keys and 8-byte values over the low 12 bits: 2 passes, scratch of both.
        let pairs = plan::<f16>(n, 8, SortOptions::descending().bits(0..12), &none);
        assert_eq!((pairs.passes, pairs.descending), (2, true));
        let scratch = pairs.scratch(true);
        assert_eq!((scratch.keys.bytes, scratch.values.bytes), (n * 2, n * 8));
        assert_eq!(scratch.need.scratch.bytes(), 2 * 256 * 4 + n * 2 + n * 8);
        // An empty range still takes one pass (a stable copy).
        assert_eq!(
            plan::<u64>(n, 4, SortOptions::ascending().bits(8..8), &none).passes,
            1
        );
        // The refusals of the options and the length.
        let info = device(132);
        assert!(OnesweepPlan::new::<u32>(&info, n, 0, SortOptions::ascending().bits(0..33), &none).is_err());
        assert!(
            OnesweepPlan::new::<u8>(&info, u32::MAX as usize + 1, 0, SortOptions::ascending(), &none)
                .is_err()
        );
    }

    #[test]
    fn the_overrides_are_the_plans() {
        let n = 1 << 20;
        let forced = |sort_tiles| TuningOverrides {
            sort_tiles: Some(sort_tiles),
            sort_look_back_tiles: Some(2),
            sort_histogram_blocks_per_sm: Some(1),
            ..TuningOverrides::default()
        };
        let large = plan::<u32>(n, 0, SortOptions::ascending(), &forced(1));
        let small = plan::<u32>(n, 0, SortOptions::ascending(), &forced(2));
        assert!(!large.shape.small && small.shape.small, "{large:?} {small:?}");
        assert!(small.shape.tile < large.shape.tile);
        assert_eq!((large.look_back_tiles, large.histogram_blocks), (2, 132));
        // Without overrides the histogram takes at least as many blocks.
        let tuned = plan::<u32>(n, 0, SortOptions::ascending(), &TuningOverrides::default());
        assert!(tuned.histogram_blocks >= large.histogram_blocks);
    }

    #[test]
    fn every_plan_fits_what_the_segmented_sort_reserves_for_its_longest_segment() {
        // The segmented sort reserves `most_storage` of its longest segment; each of its large
        // segments is sorted by its own plan, on any device, so each must fit.
        fn fits<K: SortKey>() {
            for value_bytes in [0, 4, 8] {
                for log2 in 13..=30 {
                    for n in [(1usize << log2) - 1, 1 << log2, (1 << log2) + 12345] {
                        if n <= SORT_BLOCK as usize * K::ITEMS {
                            continue;
                        }
                        for multiprocessors in [1, 16, 108, 132, 144] {
                            let plan = OnesweepPlan::new::<K>(
                                &device(multiprocessors),
                                n,
                                value_bytes,
                                SortOptions::ascending(),
                                &TuningOverrides::default(),
                            )
                            .unwrap();
                            let most = most_storage::<K>(n, value_bytes, (0, K::BITS));
                            assert_eq!(
                                plan.temp_storage().max(most),
                                most,
                                "{} {n} {value_bytes}",
                                K::NAME
                            );
                        }
                    }
                }
            }
        }
        fits::<u8>();
        fits::<u32>();
        fits::<f16>();
        fits::<u64>();
        fits::<f64>();
    }
}
