//! Device radix sort: [`sort_keys`], [`sort_pairs`], [`argsort`] and their in-place forms, as
//! CUB's `DeviceRadixSort` (Onesweep; kernels `device::radix_sort`).

use super::element::{Bound, DeviceView, DeviceViewMut, check_bound};
use super::segmented::Segments;
use super::segmented_sort::{self, SegmentedCall};
use super::temp_storage::TempStorage;
use super::workspace::{DeviceWorkspace, StatusLayout};
use crate::{Error, Gpu, LaunchConfig, OnStream, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::{onesweep_layout, sort_histogram_shared_bytes};
use gpu_primitives_abi::params::{OnesweepParams, RadixHistogramParams};
use gpu_primitives_abi::table::{onesweep_small_items, sort_payload_name};
use gpu_primitives_abi::tuning::{
    RADIX_BITS, RADIX_DIGITS, SORT_BLOCK, SORT_HISTOGRAM_BLOCK, SORT_HISTOGRAM_BLOCKS_PER_SM, SORT_MAX_KEYS,
    onesweep_blocks_per_sm, onesweep_items, onesweep_look_back_tiles, onesweep_small_tiles, onesweep_threads,
    sort_histogram_copies,
};
use gpu_primitives_runtime::DeviceCopy;
use std::cmp::Ordering;
use std::ops::Range;

/// The sort's upfront digit counts of every pass (`device_radix_sort_histogram_<key>`).
const SORT_HISTOGRAM: &Family = families::family("device_radix_sort_histogram");

mod sealed {
    pub trait Key {}
}

/// A key type of the radix sort: `u8`, `u16`, `u32`, `i32`, `f32`, `u64`, `i64`, `f64`,
/// `f16`, `bf16`.
///
/// **Order.** Integers in their natural order. Floats in IEEE 754 total order (-0.0 before
/// +0.0, every bit pattern distinct), except that every NaN sorts after +infinity whatever its
/// sign: ascending, `-inf .. -0.0, +0.0 .. +inf`, then NaNs with the sign bit clear by payload,
/// then those with it set by payload from the largest. Keys come out bit for bit as they went in.
pub trait SortKey: Copy + Send + Sync + std::fmt::Debug + 'static + sealed::Key {
    /// How it is stored on the device (`u16` bits for f16 / bf16).
    type Raw: DeviceCopy + bytemuck::Pod + Default + PartialEq + std::fmt::Debug;
    /// Kernel-name part: "u32", "f16", ...
    const NAME: &'static str;
    /// Bits of the key: the most a bit range may cover.
    const BITS: u32;
    /// Keys per thread of the block radix sort's tile (the segmented sort sorts a segment of up
    /// to `SORT_BLOCK * ITEMS` keys in one block).
    const ITEMS: usize;
    /// Keys per thread of a onesweep pass's tile (`onesweep_threads(..) * ONESWEEP_KEYS_ITEMS`
    /// keys), keys alone.
    const ONESWEEP_KEYS_ITEMS: usize;
    /// As [`ONESWEEP_KEYS_ITEMS`](Self::ONESWEEP_KEYS_ITEMS), keys with 4-byte values.
    const ONESWEEP_V4_ITEMS: usize;
    /// As [`ONESWEEP_KEYS_ITEMS`](Self::ONESWEEP_KEYS_ITEMS), keys with 8-byte values.
    const ONESWEEP_V8_ITEMS: usize;
    /// The value payloads ("keys", "v4", "v8") whose onesweep passes also come with small
    /// tiles, with their keys per thread (tiles of `onesweep_threads(.., true)` threads), taken
    /// for inputs too short for the larger tiles ([`onesweep_small_tiles`]).
    const ONESWEEP_SMALL: &'static [(&'static str, usize)];
    /// The sort's order (see the trait's docs), computed on the host (the CPU reference).
    fn sort_cmp(&self, other: &Self) -> Ordering;
    /// The key's *ordered bits* (widened to `u64`): the unsigned image whose order is
    /// [`sort_cmp`](Self::sort_cmp); a bit range selects bits of it.
    fn ordered_bits(self) -> u64;
    /// The values as the device stores them.
    fn as_raw(values: &[Self]) -> &[Self::Raw];
    /// Stored values as keys.
    fn from_raw(values: &[Self::Raw]) -> &[Self];
}

/// The sort order of floats (see [`SortKey`]): non-NaN values by total order, then NaNs with
/// the sign bit clear by payload, then those with it set by payload from the largest.
fn float_cmp(a_nan: bool, b_nan: bool, total: Ordering, (a_bits, b_bits): (u64, u64), sign: u64) -> Ordering {
    match (a_nan, b_nan) {
        (false, false) => total,
        (false, true) => Ordering::Less,
        (true, false) => Ordering::Greater,
        (true, true) => {
            let (a_neg, b_neg) = (a_bits & sign != 0, b_bits & sign != 0);
            a_neg.cmp(&b_neg).then(if a_neg {
                b_bits.cmp(&a_bits)
            } else {
                a_bits.cmp(&b_bits)
            })
        }
    }
}

/// The ordered bits of a float of `width` bits `b` with a `mantissa` mask: total order,
/// rotated down by the negative NaNs (as the kernels compute it).
fn float_ordered_bits(b: u64, width: u32, mantissa: u64) -> u64 {
    let sign = 1u64 << (width - 1);
    let all = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let total = if b & sign != 0 { !b & all } else { b | sign };
    total.wrapping_sub(mantissa) & all
}

macro_rules! key_order {
    (u8, $k:ident) => {
        key_order! { @uint $k }
    };
    (u16, $k:ident) => {
        key_order! { @uint $k }
    };
    (u32, $k:ident) => {
        key_order! { @uint $k }
    };
    (u64, $k:ident) => {
        key_order! { @uint $k }
    };
    (i32, $k:ident) => {
        key_order! { @int $k, u32 }
    };
    (i64, $k:ident) => {
        key_order! { @int $k, u64 }
    };
    (f32, $k:ident) => {
        key_order! { @float $k, $k.to_bits() as u64, 32, 0x7f_ffff }
    };
    (f64, $k:ident) => {
        key_order! { @float $k, $k.to_bits(), 64, 0xf_ffff_ffff_ffff }
    };
    (f16, $k:ident) => {
        key_order! { @float $k, $k.to_bits() as u64, 16, 0x3ff }
    };
    (bf16, $k:ident) => {
        key_order! { @float $k, $k.to_bits() as u64, 16, 0x7f }
    };
    (@uint $k:ident) => {
        fn sort_cmp(&self, other: &Self) -> Ordering {
            self.cmp(other)
        }
        fn ordered_bits(self) -> u64 {
            self as u64
        }
    };
    (@int $k:ident, $u:ty) => {
        fn sort_cmp(&self, other: &Self) -> Ordering {
            self.cmp(other)
        }
        fn ordered_bits(self) -> u64 {
            ((self as $u) ^ (1 << (<$u>::BITS - 1))) as u64
        }
    };
    (@float $k:ident, $bits:expr, $width:literal, $mantissa:literal) => {
        fn sort_cmp(&self, other: &Self) -> Ordering {
            let bits = |$k: Self| $bits;
            float_cmp(
                self.is_nan(),
                other.is_nan(),
                self.total_cmp(other),
                (bits(*self), bits(*other)),
                1 << ($width - 1),
            )
        }
        fn ordered_bits(self) -> u64 {
            let $k = self;
            float_ordered_bits($bits, $width, $mantissa)
        }
    };
}

macro_rules! sort_keys_impl {
    ([] $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
          $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
        $(
            impl sealed::Key for crate::host_type!($name) {}
            impl SortKey for crate::host_type!($name) {
                type Raw = $stored;
                const NAME: &'static str = stringify!($name);
                const BITS: u32 = <$bits>::BITS;
                const ITEMS: usize = $items;
                const ONESWEEP_KEYS_ITEMS: usize = $keys_items;
                const ONESWEEP_V4_ITEMS: usize = $v4_items;
                const ONESWEEP_V8_ITEMS: usize = $v8_items;
                const ONESWEEP_SMALL: &'static [(&'static str, usize)] =
                    gpu_primitives_abi::small_tiles_list!($small);
                key_order!($name, k);
                fn as_raw(values: &[Self]) -> &[$stored] {
                    bytemuck::cast_slice(values)
                }
                fn from_raw(values: &[$stored]) -> &[Self] {
                    bytemuck::cast_slice(values)
                }
            }
        )*
        /// The name of every sort key type, in table order (for the CLI and the benchmark).
        pub const SORT_KEY_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}
gpu_primitives_abi::sort_key_table!(sort_keys_impl);

/// How a radix sort orders its keys: ascending (the default) or descending, and which bits of
/// the keys' ordered bits ([`SortKey::ordered_bits`]) it compares (all by default; CUB's
/// `begin_bit` / `end_bit`). Keys equal in the compared bits keep their input order (stable),
/// in both directions.
///
/// ```
/// use gpu_primitives::device::SortOptions;
/// let low_byte_descending = SortOptions::descending().bits(0..8);
/// assert!(low_byte_descending.is_descending());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SortOptions {
    descending: bool,
    bits: Option<(u32, u32)>,
}

impl SortOptions {
    /// Smallest key first.
    pub fn ascending() -> Self {
        Self::default()
    }

    /// Largest key first (NaNs first for floats).
    pub fn descending() -> Self {
        Self {
            descending: true,
            bits: None,
        }
    }

    /// Compare only bits `range` of the ordered bits (`range.end` at most the key's width).
    /// For floats the ordered bits are not the stored bits (see [`SortKey`]). An empty range
    /// compares nothing: the output is the input, in its order.
    pub fn bits(self, range: Range<u32>) -> Self {
        Self {
            bits: Some((range.start, range.end)),
            ..self
        }
    }

    /// Whether the order is descending.
    pub fn is_descending(&self) -> bool {
        self.descending
    }

    /// The bits of the ordered bits compared for keys of `K` (all of them unless
    /// [`bits`](Self::bits) narrowed it), checked.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] when the range is reversed or past the key's width.
    pub fn compared_bits<K: SortKey>(&self) -> Result<Range<u32>> {
        self.bit_range::<K>().map(|(begin, end)| begin..end)
    }

    /// The bit range compared for keys of `K`, checked.
    pub(super) fn bit_range<K: SortKey>(&self) -> Result<(u32, u32)> {
        let (begin, end) = self.bits.unwrap_or((0, K::BITS));
        if begin > end || end > K::BITS {
            return Err(Error::InvalidLaunch(format!(
                "sort: bit range {begin}..{end} is not within the {} bits of {}",
                K::BITS,
                K::NAME
            )));
        }
        Ok((begin, end))
    }
}

/// Where a sort's values come from and go.
#[derive(Clone, Copy)]
pub(super) enum Values {
    /// Keys only.
    None,
    /// Values of `bytes` (4 or 8) each, read from `input` (or the keys' indices when `input`
    /// is `None`), written to `output`.
    Pairs {
        input: Option<u64>,
        output: u64,
        bytes: usize,
    },
}

/// The device memory one sort reads and writes: inputs, final outputs, whether it sorts in
/// place (the input is the output).
#[derive(Clone, Copy)]
pub(super) struct SortBuffers {
    pub(super) n: usize,
    pub(super) keys_in: u64,
    pub(super) keys_out: u64,
    pub(super) values: Values,
    /// The bounds of the caller's views, checked before anything is queued: keys in, keys out,
    /// values in, values out (the default where there is none).
    pub(super) bounds: [Bound; 4],
}

impl SortBuffers {
    /// `n` keys at `keys` sorted where they lie, with `values` (their address and bytes per
    /// value) where given, sorted where they lie too; `[keys, values]` are the views' bounds.
    pub(super) fn in_place(
        n: usize,
        keys: u64,
        values: Option<(u64, usize)>,
        [key_bound, value_bound]: [Bound; 2],
    ) -> Self {
        Self {
            n,
            keys_in: keys,
            keys_out: keys,
            bounds: [key_bound, key_bound, value_bound, value_bound],
            values: match values {
                None => Values::None,
                Some((address, bytes)) => Values::Pairs {
                    input: Some(address),
                    output: address,
                    bytes,
                },
            },
        }
    }
}

/// Check `len` against the keys' number.
pub(super) fn check_len(what: &'static str, n: usize, len: usize) -> Result<()> {
    if len < n {
        return Err(Error::LengthMismatch {
            what,
            expected: n,
            found: len,
        });
    }
    Ok(())
}

/// Queue the sort `buffers` describes: the histogram, then one onesweep pass per digit, each
/// from the previous pass's output, alternating between the final output and scratch memory so
/// that the last pass writes the final output (in place with an odd number of passes, the
/// input is first copied to the scratch memory).
pub(super) fn launch<K: SortKey>(
    on: OnStream<'_>,
    buffers: SortBuffers,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    launch_with::<K>(on, buffers, None, options, workspace).map(|_| ())
}

/// The caller's alternate buffers of a double-buffered sort: keys, and values for pairs.
#[derive(Clone, Copy)]
struct Alternate {
    keys: u64,
    values: Option<u64>,
    /// The bounds of the keys' and the values' views.
    bounds: [Bound; 2],
}

/// [`launch`], with the passes alternating between the input and the caller's `alternate`
/// buffers instead of the final output and the workspace's scratch, where one is given: then
/// `buffers` is in place, nothing is copied, and the result is in the input
/// ([`SortedIn::Current`]) after an even number of passes, in the alternate buffers after an
/// odd one.
fn launch_with<K: SortKey>(
    on: OnStream<'_>,
    mut buffers: SortBuffers,
    alternate: Option<Alternate>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    check_bound(&on, "sort", &buffers.bounds)?;
    if let Some(alternate) = &alternate {
        check_bound(&on, "sort: alternate buffers", &alternate.bounds)?;
    }
    let (begin_bit, end_bit) = options.bit_range::<K>()?;
    let n = buffers.n;
    check_sort_len(n)?;
    let key_bytes = size_of::<K::Raw>();
    let value_bytes = match buffers.values {
        Values::None => 0,
        Values::Pairs { bytes, .. } => bytes,
    };
    let passes = sort_passes(begin_bit, end_bit);
    if n == 0 {
        return Ok(SortedIn::Current);
    }
    if n <= SORT_BLOCK as usize * K::ITEMS {
        // One tile: one block sorts it in shared memory (the segmented sort's tile path, one
        // segment: one launch, each key read and written once, in place too) instead of the
        // upfront count and a onesweep pass per digit (CUB's single-tile sort).
        let call = SegmentedCall {
            buffers,
            segments: Segments::Rows(n),
            keep: None,
        };
        segmented_sort::launch::<K>(on, "sort", call, options, workspace)?;
        return Ok(SortedIn::Current);
    }
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
        descending: options.descending as u32,
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
            descending: options.descending as u32,
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
pub(super) fn sort_storage<K: SortKey>(
    gpu: &Gpu,
    n: usize,
    value_bytes: usize,
    options: SortOptions,
    up_to: bool,
) -> Result<TempStorage> {
    let (begin_bit, end_bit) = options.bit_range::<K>()?;
    check_sort_len(n)?;
    if n <= SORT_BLOCK as usize * K::ITEMS {
        // One tile: sorted in one block's shared memory.
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

/// `n` keys, at most [`SORT_MAX_KEYS`].
fn check_sort_len(n: usize) -> Result<()> {
    if n > SORT_MAX_KEYS {
        return Err(Error::InvalidLaunch(format!(
            "sort: {n} keys, past the most one call sorts ({SORT_MAX_KEYS})"
        )));
    }
    Ok(())
}

impl TempStorage {
    /// [`sort_keys`] and [`sort_keys_in_place`] of `n` keys of `K` on `gpu`: alternate keys
    /// (`n * size_of::<K>()` bytes), 1 KiB of digit counts a pass, and 2 KiB of look-back status
    /// a onesweep tile; nothing up to one tile (`SORT_BLOCK * K::ITEMS` keys), which one block
    /// sorts. At most what [`sort_keys_double_buffer`] needs (it takes no scratch).
    ///
    /// # Errors
    /// As the sort: a bit range outside the key, more than [`SORT_MAX_KEYS`] keys.
    pub fn sort_keys<K: SortKey>(gpu: &Gpu, n: usize, options: SortOptions) -> Result<Self> {
        sort_storage::<K>(gpu, n, 0, options, false)
    }

    /// [`sort_pairs`] and [`sort_pairs_in_place`] of `n` keys of `K` and values of `V` (4 or 8
    /// bytes): as [`sort_keys`](Self::sort_keys), the scratch holding the alternate values
    /// too. At most what [`sort_pairs_double_buffer`] needs. [`argsort`] is a sort of pairs
    /// with `u32` values.
    ///
    /// # Errors
    /// As [`sort_keys`](Self::sort_keys).
    pub fn sort_pairs<K: SortKey, V: DeviceCopy>(gpu: &Gpu, n: usize, options: SortOptions) -> Result<Self> {
        sort_storage::<K>(gpu, n, ValueBytes::<V>::BYTES, options, false)
    }
}

/// [`SORT_HISTOGRAM_BLOCKS_PER_SM`], or `$GPU_PRIMITIVES_SORT_HISTOGRAM_BLOCKS_PER_SM` (1 to 4)
/// when set: a tuning override (read once).
fn histogram_blocks_per_sm() -> u32 {
    static VALUE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    super::tuning_override(
        &VALUE,
        "GPU_PRIMITIVES_SORT_HISTOGRAM_BLOCKS_PER_SM",
        SORT_HISTOGRAM_BLOCKS_PER_SM,
        1..=4,
    )
}

/// `$GPU_PRIMITIVES_SORT_LOOK_BACK_TILES` (1 to `SORT_LOOK_BACK_TILES`) when set: the tiles the
/// look-back reads at once in every pass, for measurements; 0 (unset) takes
/// [`onesweep_look_back_tiles`] (read once).
fn look_back_tiles_override() -> u32 {
    static VALUE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    super::tuning_override(
        &VALUE,
        "GPU_PRIMITIVES_SORT_LOOK_BACK_TILES",
        0,
        1..=gpu_primitives_abi::tuning::SORT_LOOK_BACK_TILES as u32,
    )
}

/// `$GPU_PRIMITIVES_SORT_TILES` when set: 1 takes the onesweep passes' larger tiles, 2 their
/// small ones where the key type and payload have them, for measurements; 0 (unset) chooses by
/// [`onesweep_small_tiles`] (read once).
fn tiles_override() -> u32 {
    static VALUE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    super::tuning_override(&VALUE, "GPU_PRIMITIVES_SORT_TILES", 0, 1..=2)
}

/// The compile-time check that a value type is 4 or 8 bytes.
pub(super) struct ValueBytes<V>(std::marker::PhantomData<V>);
impl<V> ValueBytes<V> {
    pub(super) const BYTES: usize = {
        assert!(
            size_of::<V>() == 4 || size_of::<V>() == 8,
            "sort_pairs moves values of 4 or 8 bytes"
        );
        size_of::<V>()
    };
}

/// Sort `keys_in` into `keys_out` (CUB's `DeviceRadixSort::SortKeys`): stable, in the order of
/// [`SortKey`] and `options`. Stream-ordered: returns once queued. `keys_in` is not modified.
///
/// Onesweep (Adinets and Merrill, 2022): one launch counts every pass's digits, then one launch
/// per 8-bit digit of the compared bits (4 for 32-bit keys) moves the keys, each tile finding
/// its place by decoupled look-back. Deterministic: the output depends only on the input.
/// Device memory: the workspace grows by one copy of the keys (the passes' alternate buffer),
/// 2 KiB of status per tile of `SORT_BLOCK * K::ONESWEEP_KEYS_ITEMS` keys (of the small tiles
/// for inputs of a few tiles per multiprocessor, [`SortKey::ONESWEEP_SMALL`]) and 1 KiB per pass.
/// Up to one tile of the block radix sort (`SORT_BLOCK * K::ITEMS` keys: 4096 of 4 bytes or
/// less, 3072 of 8) one block sorts the keys in shared memory in one launch, with no workspace
/// (CUB's single-tile sort); the result is the same.
///
/// # Errors
/// [`Error::LengthMismatch`] when `keys_out` is shorter than `keys_in`;
/// [`Error::InvalidLaunch`] for a bit range past the key's width or more than
/// [`SORT_MAX_KEYS`] keys; device errors (out of memory). Nothing is launched on an error.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let keys = DeviceVec::from_slice(&gpu, &[3.0f32, -1.0, f32::NAN, -0.0, 0.0])?;
/// let mut sorted = DeviceVec::<f32>::zeroed(&gpu, 5)?;
/// let mut workspace = DeviceWorkspace::new();
/// device::sort_keys(&gpu, &keys, &mut sorted, SortOptions::ascending(), &mut workspace)?;
/// let out = sorted.to_vec(&gpu)?;
/// assert_eq!(&out[..4], [-1.0, -0.0, 0.0, 3.0]);
/// assert!(out[4].is_nan());
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn sort_keys<'a, 'o, 'g, K: SortKey>(
    on: impl Into<OnStream<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (keys_in, keys_out) = (keys_in.into(), keys_out.into());
    check_len("sort_keys: keys_out", keys_in.len, keys_out.len)?;
    let buffers = SortBuffers {
        n: keys_in.len,
        keys_in: keys_in.address,
        keys_out: keys_out.address,
        values: Values::None,
        bounds: [keys_in.bound, keys_out.bound, Bound::default(), Bound::default()],
    };
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `keys` in place (through the workspace's alternate buffer); as [`sort_keys`].
///
/// # Errors
/// As [`sort_keys`].
pub fn sort_keys_in_place<'k, 'g, K: SortKey>(
    on: impl Into<OnStream<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let keys = keys.into();
    let buffers = SortBuffers::in_place(keys.len, keys.address, None, [keys.bound, Bound::default()]);
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `(key, value)` pairs by key into `keys_out` / `values_out` (CUB's
/// `DeviceRadixSort::SortPairs`): as [`sort_keys`], each value moving with its key. Values
/// are any type of 4 or 8 bytes (a compile-time check), moved as their bits.
///
/// # Errors
/// As [`sort_keys`], and [`Error::LengthMismatch`] when `values_in` or `values_out` is
/// shorter than `keys_in`.
pub fn sort_pairs<'a, 'b, 'o, 'p, 'g, K: SortKey, V: DeviceCopy>(
    on: impl Into<OnStream<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    values_in: impl Into<DeviceView<'b, V>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    values_out: impl Into<DeviceViewMut<'p, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys_in, keys_out) = (keys_in.into(), keys_out.into());
    let (values_in, values_out) = (values_in.into(), values_out.into());
    let n = keys_in.len;
    check_len("sort_pairs: keys_out", n, keys_out.len)?;
    check_len("sort_pairs: values_in", n, values_in.len)?;
    check_len("sort_pairs: values_out", n, values_out.len)?;
    let buffers = SortBuffers {
        n,
        keys_in: keys_in.address,
        keys_out: keys_out.address,
        values: Values::Pairs {
            input: Some(values_in.address),
            output: values_out.address,
            bytes,
        },
        bounds: [keys_in.bound, keys_out.bound, values_in.bound, values_out.bound],
    };
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `(key, value)` pairs in place; as [`sort_pairs`].
///
/// # Errors
/// As [`sort_pairs`].
pub fn sort_pairs_in_place<'k, 'v, 'g, K: SortKey, V: DeviceCopy>(
    on: impl Into<OnStream<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    values: impl Into<DeviceViewMut<'v, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys, values) = (keys.into(), values.into());
    check_len("sort_pairs_in_place: values", keys.len, values.len)?;
    let buffers = SortBuffers::in_place(
        keys.len,
        keys.address,
        Some((values.address, bytes)),
        [keys.bound, values.bound],
    );
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Which of a double-buffered sort's two buffers holds the sorted keys (and values): CUB's
/// `DoubleBuffer::selector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortedIn {
    /// The buffers the keys (and values) were given in.
    Current,
    /// The alternate buffers.
    Alternate,
}

/// Sort `keys` with the caller's `alternate` buffer instead of workspace memory (CUB's
/// `DeviceRadixSort::SortKeys` on a `DoubleBuffer`): the passes alternate between the two, so
/// nothing is copied and the workspace holds only the counts and the look-back status (no copy
/// of the keys). Returns which buffer holds the sorted keys: [`SortedIn::Current`] after an
/// even number of 8-bit passes over the compared bits, and for inputs of one tile (sorted in
/// place by one block); [`SortedIn::Alternate`] after an odd number. Both buffers' contents are
/// overwritten (the one not returned holds a partly sorted copy); otherwise as [`sort_keys`].
///
/// # Errors
/// As [`sort_keys`], and [`Error::LengthMismatch`] when `alternate` is shorter than `keys`.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SortOptions, SortedIn};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let host: Vec<u32> = (0..1_000_000u32).map(|i| i.wrapping_mul(2654435761)).collect();
/// let mut keys = DeviceVec::from_slice(&gpu, &host)?;
/// let mut alternate = DeviceVec::<u32>::zeroed(&gpu, host.len())?;
/// let mut workspace = DeviceWorkspace::new();
/// let options = SortOptions::ascending().bits(0..24); // 3 passes: an odd number
/// let sorted = device::sort_keys_double_buffer(&gpu, &mut keys, &mut alternate, options, &mut workspace)?;
/// assert_eq!(sorted, SortedIn::Alternate);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn sort_keys_double_buffer<'k, 'a, 'g, K: SortKey>(
    on: impl Into<OnStream<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    alternate: impl Into<DeviceViewMut<'a, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    let (keys, alternate) = (keys.into(), alternate.into());
    check_len("sort_keys_double_buffer: alternate", keys.len, alternate.len)?;
    let buffers = SortBuffers::in_place(keys.len, keys.address, None, [keys.bound, Bound::default()]);
    let alternate = Alternate {
        keys: alternate.address,
        values: None,
        bounds: [alternate.bound, Bound::default()],
    };
    launch_with::<K>(on.into(), buffers, Some(alternate), options, workspace)
}

/// Sort `(key, value)` pairs with the caller's alternate buffers (CUB's
/// `DeviceRadixSort::SortPairs` on two `DoubleBuffer`s); as [`sort_keys_double_buffer`], the
/// keys and values always ending in the same side.
///
/// # Errors
/// As [`sort_pairs`], and [`Error::LengthMismatch`] when a buffer is shorter than `keys`.
pub fn sort_pairs_double_buffer<'k, 'a, 'v, 'b, 'g, K: SortKey, V: DeviceCopy>(
    on: impl Into<OnStream<'g>>,
    (keys, keys_alternate): (impl Into<DeviceViewMut<'k, K>>, impl Into<DeviceViewMut<'a, K>>),
    (values, values_alternate): (impl Into<DeviceViewMut<'v, V>>, impl Into<DeviceViewMut<'b, V>>),
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys, keys_alternate) = (keys.into(), keys_alternate.into());
    let (values, values_alternate) = (values.into(), values_alternate.into());
    let n = keys.len;
    check_len("sort_pairs_double_buffer: keys alternate", n, keys_alternate.len)?;
    check_len("sort_pairs_double_buffer: values", n, values.len)?;
    check_len(
        "sort_pairs_double_buffer: values alternate",
        n,
        values_alternate.len,
    )?;
    let buffers = SortBuffers::in_place(
        n,
        keys.address,
        Some((values.address, bytes)),
        [keys.bound, values.bound],
    );
    let alternate = Alternate {
        keys: keys_alternate.address,
        values: Some(values_alternate.address),
        bounds: [keys_alternate.bound, values_alternate.bound],
    };
    launch_with::<K>(on.into(), buffers, Some(alternate), options, workspace)
}

/// The permutation that sorts `keys_in` (as `torch.argsort(stable=True)`): `indices_out[i]` is
/// the input index of the `i`-th key in order, and the sorted keys go to `keys_out`. The
/// indices are made by the first pass (nothing to upload); `u32`, as one call sorts fewer than
/// 2^32 keys. Otherwise as [`sort_pairs`].
///
/// # Errors
/// As [`sort_keys`], and [`Error::LengthMismatch`] when `indices_out` is short.
pub fn argsort<'a, 'o, 'i, 'g, K: SortKey>(
    on: impl Into<OnStream<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    indices_out: impl Into<DeviceViewMut<'i, u32>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (keys_in, keys_out, indices) = (keys_in.into(), keys_out.into(), indices_out.into());
    let n = keys_in.len;
    check_len("argsort: keys_out", n, keys_out.len)?;
    check_len("argsort: indices_out", n, indices.len)?;
    let buffers = SortBuffers {
        n,
        keys_in: keys_in.address,
        keys_out: keys_out.address,
        values: Values::Pairs {
            input: None,
            output: indices.address,
            bytes: 4,
        },
        bounds: [keys_in.bound, keys_out.bound, Bound::default(), indices.bound],
    };
    launch::<K>(on.into(), buffers, options, workspace)
}

/// [`sort_keys`] of a host slice (synchronises).
///
/// # Errors
/// As [`sort_keys`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::sort_keys_slice(&gpu, &[5i64, -1, 7, 2], SortOptions::descending())?, [7, 5, 2, -1]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn sort_keys_slice<K: SortKey>(gpu: &Gpu, keys: &[K], options: SortOptions) -> Result<Vec<K>> {
    let mut d_keys = gpu.upload(K::as_raw(keys))?;
    let mut workspace = DeviceWorkspace::new();
    sort_keys_in_place::<K>(gpu, raw_view_mut::<K>(&mut d_keys), options, &mut workspace)?;
    Ok(K::from_raw(&gpu.download(&d_keys)?).to_vec())
}

/// [`sort_pairs`] of host slices: the sorted keys and their values (synchronises).
///
/// # Errors
/// As [`sort_pairs`].
pub fn sort_pairs_slice<K: SortKey, V: DeviceCopy + Default + Clone>(
    gpu: &Gpu,
    keys: &[K],
    values: &[V],
    options: SortOptions,
) -> Result<(Vec<K>, Vec<V>)> {
    let mut d_keys = gpu.upload(K::as_raw(keys))?;
    let mut d_values = gpu.upload(values)?;
    let mut workspace = DeviceWorkspace::new();
    sort_pairs_in_place::<K, V>(
        gpu,
        raw_view_mut::<K>(&mut d_keys),
        &mut d_values,
        options,
        &mut workspace,
    )?;
    Ok((
        K::from_raw(&gpu.download(&d_keys)?).to_vec(),
        gpu.download(&d_values)?,
    ))
}

/// [`argsort`] of a host slice: the permutation that sorts it (synchronises).
///
/// # Errors
/// As [`argsort`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::argsort_slice(&gpu, &[0.5f32, -2.0, 0.5, 1.0], SortOptions::ascending())?, [1, 0, 2, 3]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn argsort_slice<K: SortKey>(gpu: &Gpu, keys: &[K], options: SortOptions) -> Result<Vec<u32>> {
    let d_keys = gpu.upload(K::as_raw(keys))?;
    let mut d_sorted = gpu.alloc_zeroed::<K::Raw>(keys.len())?;
    let mut d_indices = gpu.alloc_zeroed::<u32>(keys.len())?;
    let mut workspace = DeviceWorkspace::new();
    argsort::<K>(
        gpu,
        raw_view::<K>(&d_keys),
        raw_view_mut::<K>(&mut d_sorted),
        &mut d_indices,
        options,
        &mut workspace,
    )?;
    gpu.download(&d_indices)
}

/// A buffer of stored keys as a view of keys.
pub(super) fn raw_view<K: SortKey>(buffer: &crate::DeviceBuffer<K::Raw>) -> DeviceView<'_, K> {
    // SAFETY: a live buffer of `len` keys as stored, borrowed for the view's lifetime.
    unsafe { DeviceView::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
}

/// A buffer of stored keys as a writable view of keys.
pub(super) fn raw_view_mut<K: SortKey>(buffer: &mut crate::DeviceBuffer<K::Raw>) -> DeviceViewMut<'_, K> {
    // SAFETY: a live buffer of `len` keys as stored, borrowed mutably for the view's lifetime.
    unsafe { DeviceViewMut::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
}
