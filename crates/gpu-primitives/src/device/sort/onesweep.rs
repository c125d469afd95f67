//! The device-wide radix sort past one tile: Onesweep (Adinets and Merrill, "Onesweep: A
//! Faster Least Significant Digit Radix Sort for GPUs", 2022; CUB's `DeviceRadixSort`), one
//! upfront count of every pass's digits, then one pass per 8-bit digit with decoupled look-back
//! (kernels `device::radix_sort`); its launch shape, workspace and tuning overrides.

use super::common::{SortBuffers, SortOptions, SortedIn, Values, check_sort_len, fits_one_tile};
use super::key::SortKey;
use crate::device::element::Bound;
use crate::device::temp_storage::TempStorage;
use crate::device::workspace::{DeviceWorkspace, StatusLayout};
use crate::{Gpu, LaunchConfig, OnStream, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::{onesweep_layout, sort_histogram_shared_bytes};
use gpu_primitives_abi::params::{OnesweepParams, RadixHistogramParams};
use gpu_primitives_abi::table::{onesweep_small_items, sort_payload_name};
use gpu_primitives_abi::tuning::{
    RADIX_BITS, RADIX_DIGITS, SORT_HISTOGRAM_BLOCK, SORT_HISTOGRAM_BLOCKS_PER_SM, onesweep_blocks_per_sm,
    onesweep_items, onesweep_look_back_tiles, onesweep_small_tiles, onesweep_threads, sort_histogram_copies,
};

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

/// Queue the onesweep sort of `buffers` (more than one tile of keys, at most
/// [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS)): the histogram, then one onesweep pass per digit, each from the previous
/// pass's output, alternating between the final output and scratch memory so that the last pass
/// writes the final output (in place with an odd number of passes, the input is first copied to
/// the scratch memory); or, with the caller's `alternate` buffers, between the input and those,
/// instead of the final output and the workspace's scratch: then `buffers` is in place, nothing
/// is copied, and the result is in the input ([`SortedIn::Current`]) after an even number of
/// passes, in the alternate buffers after an odd one. The caller checked the views' bounds.
pub(in crate::device) fn launch<K: SortKey>(
    on: OnStream<'_>,
    mut buffers: SortBuffers,
    alternate: Option<Alternate>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    let (begin_bit, end_bit) = options.bit_range::<K>()?;
    let n = buffers.n;
    check_sort_len(n)?;
    debug_assert!(!fits_one_tile::<K>(n), "one tile is the block radix sort's");
    let key_bytes = size_of::<K::Raw>();
    let value_bytes = buffers.value_bytes();
    let passes = sort_passes(begin_bit, end_bit);
    let stream = on.stream();
    let mut workspace = workspace.begin(stream)?;
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
        None => {
            // Scratch: the alternate keys, then the alternate values (16-byte aligned).
            let (keys_scratch_bytes, scratch_bytes) = onesweep_scratch_bytes(n, key_bytes, value_bytes);
            let scratch = workspace.sort_scratch(stream, scratch_bytes)?;
            (scratch, scratch + keys_scratch_bytes as u64)
        }
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
    let counts = workspace.sort_counts(stream, sort_counts(passes))?;
    let histogram =
        module.kernel::<RadixHistogramParams<K::Raw>>(crate::registered(SORT_HISTOGRAM, &[K::NAME])?.name)?;
    let blocks = (on.gpu().info().multiprocessors * histogram_blocks_per_sm())
        .min(n.div_ceil(SORT_HISTOGRAM_BLOCK as usize) as u32)
        .max(1);
    let copies = sort_histogram_copies(size_of::<K::Raw>() as u32, on.gpu().info().max_shared_per_block);
    let config = LaunchConfig::new(blocks, SORT_HISTOGRAM_BLOCK)
        .with_shared_mem(sort_histogram_shared_bytes(passes, copies));
    let params = RadixHistogramParams {
        keys: keys_from as *const K::Raw,
        n,
        histogram: counts as *mut u32,
        begin_bit,
        end_bit,
        descending: options.is_descending() as u32,
        passes,
        copies,
    };
    // SAFETY: n keys; passes * RADIX_DIGITS zeroed counters; the bit range is within the key
    // (checked) and the passes cover it; the shared memory holds every pass's counters.
    unsafe { stream.launch(&histogram, config, &params)? };

    let OnesweepShape {
        small,
        threads,
        tile,
        tiles,
    } = onesweep_shape::<K>(on.gpu(), n, value_bytes);
    let name = crate::registered(families::onesweep_family(value_bytes, small), &[K::NAME])?.name;
    let layout = onesweep_layout(threads, tile as u32, key_bytes as u32, value_bytes as u32);
    let config = LaunchConfig::new(tiles as u32, threads).with_shared_mem(layout.total);
    let look_back_tiles = match look_back_tiles_override() {
        0 => onesweep_look_back_tiles(
            tiles,
            on.gpu().info().multiprocessors,
            onesweep_blocks_per_sm(key_bytes, value_bytes, small),
        ),
        forced => forced,
    };
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
        let status =
            workspace.look_back_words(stream, StatusLayout::Word, onesweep_status_words(tiles), tiles)?;
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
            descending: options.is_descending() as u32,
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
/// (0 for keys alone) on `gpu`.
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
fn onesweep_kernel<K: SortKey>(value_bytes: usize, small: bool) -> Option<(u32, usize)> {
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
    Some((onesweep_threads(size_of::<K::Raw>(), value_bytes, small), items))
}

fn onesweep_shape<K: SortKey>(gpu: &Gpu, n: usize, value_bytes: usize) -> OnesweepShape {
    let large = onesweep_kernel::<K>(value_bytes, false).expect("every key type has onesweep kernels");
    let small_kernel = onesweep_kernel::<K>(value_bytes, true);
    let small = match (small_kernel, tiles_override()) {
        (None, _) => false,
        (Some((_, small_items)), 0) => onesweep_small_tiles(
            n,
            gpu.info().multiprocessors,
            (size_of::<K::Raw>(), value_bytes),
            large.1,
            small_items,
        ),
        (Some(_), forced) => forced == 2,
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

/// The most tiles a onesweep pass over up to `n` keys of `K` takes, whichever kernel it picks.
fn onesweep_most_tiles<K: SortKey>(n: usize, value_bytes: usize) -> usize {
    [false, true]
        .into_iter()
        .filter_map(|small| onesweep_kernel::<K>(value_bytes, small))
        .map(|(threads, items)| n.div_ceil(threads as usize * items))
        .max()
        .unwrap_or(0)
}

/// The onesweep scratch of `n` keys of `key_bytes` and values of `value_bytes`: the alternate
/// keys' bytes (rounded up to 16, where the alternate values start) and the whole.
fn onesweep_scratch_bytes(n: usize, key_bytes: usize, value_bytes: usize) -> (usize, usize) {
    let keys = (n * key_bytes).next_multiple_of(16);
    (keys, keys + n * value_bytes)
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
/// `n` keys needs (the segmented sort's large segments).
pub(in crate::device) fn storage<K: SortKey>(
    gpu: &Gpu,
    n: usize,
    value_bytes: usize,
    options: SortOptions,
    up_to: bool,
) -> Result<TempStorage> {
    let (begin_bit, end_bit) = options.bit_range::<K>()?;
    check_sort_len(n)?;
    if fits_one_tile::<K>(n) {
        // One tile: sorted in one block's shared memory, no onesweep pass.
        return Ok(TempStorage::default());
    }
    let tiles = if up_to {
        onesweep_most_tiles::<K>(n, value_bytes)
    } else {
        onesweep_shape::<K>(gpu, n, value_bytes).tiles
    };
    Ok(TempStorage {
        sort_scratch: onesweep_scratch_bytes(n, size_of::<K::Raw>(), value_bytes).1,
        sort_counts: sort_counts(sort_passes(begin_bit, end_bit)),
        ..TempStorage::look_back_words(StatusLayout::Word, onesweep_status_words(tiles))
    })
}

/// [`SORT_HISTOGRAM_BLOCKS_PER_SM`], or its override ([`TuningOverrides`](crate::TuningOverrides)).
fn histogram_blocks_per_sm() -> u32 {
    crate::tuning::overrides()
        .sort_histogram_blocks_per_sm
        .unwrap_or(SORT_HISTOGRAM_BLOCKS_PER_SM)
}

/// The tiles the look-back reads at once in every pass where overridden, for measurements; 0
/// (none) takes [`onesweep_look_back_tiles`].
fn look_back_tiles_override() -> u32 {
    crate::tuning::overrides().sort_look_back_tiles.unwrap_or(0)
}

/// Where overridden, 1 takes the onesweep passes' larger tiles, 2 their small ones where the key
/// type and payload have them, for measurements; 0 (none) chooses by [`onesweep_small_tiles`].
fn tiles_override() -> u32 {
    crate::tuning::overrides().sort_tiles.unwrap_or(0)
}
