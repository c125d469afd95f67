//! Device histograms: [`histogram_even`] (bins evenly spaced over `[lower, upper)`) and
//! [`histogram_range`] (bins between sorted levels), as CUB's `DeviceHistogram::HistogramEven` /
//! `HistogramRange`.

use super::element::{DeviceView, DeviceViewMut, check_bound};
use super::temp_storage::TempStorage;
use super::workspace::DeviceWorkspace;
use crate::{BinRule, CallOn, DeviceBuffer, Error, LaunchConfig, LevelValue, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::histogram_shared_bytes;
use gpu_primitives_abi::params::HistogramParams;
use gpu_primitives_runtime::DeviceCopy;

/// The histograms of evenly spaced bins (`device_histogram_even_<sample>_<counter>`).
const HISTOGRAM_EVEN: &Family = families::family("device_histogram_even");
/// The histograms of bins between levels (`device_histogram_range_<sample>_<counter>`).
const HISTOGRAM_RANGE: &Family = families::family("device_histogram_range");

mod sealed {
    pub trait Level {}
    pub trait Sample {}
    pub trait Counter {}
}

/// The type bin levels are given in and samples compared in: `i64` for integer samples, `f32`
/// for `f32`, `f16` and `bf16` samples, `f64` for `f64`; with the even bins' arithmetic, as the
/// kernels compute it.
pub trait HistogramLevel:
    Copy + PartialOrd + std::fmt::Debug + DeviceCopy + bytemuck::Pod + Send + Sync + 'static + sealed::Level
{
    /// What the kernel multiplies `x - lower` by for even bins, widened to f64: `bins / (upper -
    /// lower)` rounded to the level type for floats, an f64 estimate for integers (whose bins
    /// are then exact).
    fn scale(lower: Self, upper: Self, bins: u32) -> f64;
    /// The even bin of `x` in `[lower, upper)`: for integers exactly
    /// `floor((x - lower) * bins / (upper - lower))`; for floats
    /// `min(floor((x - lower) * scale), bins - 1)` in the level type.
    fn even_bin(x: Self, lower: Self, upper: Self, bins: u32) -> u32;
    /// Whether it is a usable level: not NaN or infinite.
    fn is_finite(self) -> bool;
    /// `upper - lower` is a usable width (finite for floats).
    fn width_is_finite(lower: Self, upper: Self) -> bool;
    /// The level as an error names it ([`Error::InvalidBins`]).
    fn value(self) -> LevelValue;
}

macro_rules! float_level {
    ($t:ty, $value:ident) => {
        impl sealed::Level for $t {}
        impl HistogramLevel for $t {
            fn scale(lower: $t, upper: $t, bins: u32) -> f64 {
                (bins as $t / (upper - lower)) as f64
            }
            fn even_bin(x: $t, lower: $t, upper: $t, bins: u32) -> u32 {
                let scale = Self::scale(lower, upper, bins) as $t;
                (((x - lower) * scale) as u32).min(bins - 1)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn width_is_finite(lower: $t, upper: $t) -> bool {
                (upper - lower).is_finite()
            }
            fn value(self) -> LevelValue {
                LevelValue::$value(self)
            }
        }
    };
}
float_level!(f32, F32);
float_level!(f64, F64);

impl sealed::Level for i64 {}
impl HistogramLevel for i64 {
    fn scale(lower: i64, upper: i64, bins: u32) -> f64 {
        bins as f64 / (upper - lower) as f64
    }
    fn even_bin(x: i64, lower: i64, upper: i64, bins: u32) -> u32 {
        ((x - lower) as u128 * bins as u128 / (upper - lower) as u128) as u32
    }
    fn is_finite(self) -> bool {
        true
    }
    fn width_is_finite(_lower: i64, _upper: i64) -> bool {
        true
    }
    fn value(self) -> LevelValue {
        LevelValue::I64(self)
    }
}

/// A sample type of the histograms (one row of `gpu_primitives_abi::histogram_sample_table!`):
/// `u8`, `u16`, `i32`, `u32`, `half::f16`, `half::bf16`, `f32`, `f64`; no other (sealed).
pub trait HistogramSample: Copy + Send + Sync + 'static + sealed::Sample {
    /// How it is stored on the device (`u16` bits for f16 / bf16).
    type Raw: DeviceCopy + bytemuck::Pod + Default + PartialEq + std::fmt::Debug;
    /// What levels are given in and samples compared in.
    type Level: HistogramLevel;
    /// Kernel-name part: "u8", "f16", ...
    const NAME: &'static str;
    /// Integers: the lowest and highest level an even histogram may have (the type's range, the
    /// top one past its largest value: `[0, 256]` for `u8`); floats: `None`.
    const LEVEL_DOMAIN: Option<(Self::Level, Self::Level)>;
    /// The sample as a level (exact).
    fn level(self) -> Self::Level;
    /// The values as the device stores them.
    fn as_raw(values: &[Self]) -> &[Self::Raw];
    /// A buffer of stored samples (a `DeviceBuffer<u16>` of f16 bits, ...) as samples.
    fn view(buffer: &DeviceBuffer<Self::Raw>) -> DeviceView<'_, Self> {
        // SAFETY: a live buffer of `len` samples as stored, borrowed for the view's lifetime.
        unsafe { DeviceView::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
    }
}

/// A histogram counter type: `u32` or `u64`. A `u32` counter wraps past 2^32 - 1 samples in one
/// bin.
pub trait HistogramCounter:
    DeviceCopy + bytemuck::Pod + Default + Send + Sync + 'static + sealed::Counter
{
    /// Kernel-name part.
    const NAME: &'static str;
}
macro_rules! counters {
    ([] $($name:ident => $ty:ty;)*) => {$(
        impl sealed::Counter for $ty {}
        impl HistogramCounter for $ty {
            const NAME: &'static str = stringify!($name);
        }
    )*};
}
gpu_primitives_abi::histogram_counter_table!(counters);

/// A sample's level, per table row (halves widen with `half`).
macro_rules! sample_level {
    (f16, $v:expr) => {
        $v.to_f32()
    };
    (bf16, $v:expr) => {
        $v.to_f32()
    };
    (f32, $v:expr) => {
        $v
    };
    (f64, $v:expr) => {
        $v
    };
    ($name:ident, $v:expr) => {
        $v as i64
    };
}

/// The level domain of a table row.
macro_rules! level_domain {
    (f16) => {
        None
    };
    (bf16) => {
        None
    };
    (f32) => {
        None
    };
    (f64) => {
        None
    };
    ($name:ident) => {
        Some(($name::MIN as i64, $name::MAX as i64 + 1))
    };
}

macro_rules! samples {
    ([] $($name:ident => $device:ty, $stored:ty, $level:ty, $vec:literal;)*) => {
        $(
            impl sealed::Sample for crate::host_type!($name) {}
            impl HistogramSample for crate::host_type!($name) {
                type Raw = $stored;
                type Level = $level;
                const NAME: &'static str = stringify!($name);
                const LEVEL_DOMAIN: Option<($level, $level)> = level_domain!($name);
                fn level(self) -> $level {
                    sample_level!($name, self)
                }
                fn as_raw(values: &[Self]) -> &[$stored] {
                    bytemuck::cast_slice(values)
                }
            }
        )*
        /// The name of every histogram sample type, in table order (for the CLI and the
        /// benchmark).
        pub const HISTOGRAM_SAMPLE_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}
gpu_primitives_abi::histogram_sample_table!(samples);

/// The bins a histogram call counts into, checked.
enum Bins<'l, L> {
    Even { lower: L, upper: L, bins: u32 },
    Range(&'l [L]),
}

impl<L: HistogramLevel> Bins<'_, L> {
    fn count(&self) -> usize {
        match self {
            Bins::Even { bins, .. } => *bins as usize,
            Bins::Range(levels) => levels.len().saturating_sub(1),
        }
    }
}

/// Check `bins` even bins over `[lower, upper)` for samples of `S` as [`histogram_even`] does
/// before any launch, without a GPU (a command line can refuse its arguments before opening
/// one): at least one bin, finite increasing bounds whose width and bin scale
/// `bins / (upper - lower)` are finite, within the samples' domain.
///
/// # Errors
/// [`Error::InvalidBins`] with the rule that failed.
pub fn check_even_bins<S: HistogramSample>(bins: u32, lower: S::Level, upper: S::Level) -> Result<()> {
    check_bins::<S>(&Bins::Even { lower, upper, bins })
}

impl TempStorage {
    /// [`histogram_range`] with `levels` levels of samples of `S`: a copy of the levels
    /// (`size_of::<S::Level>()` bytes each). [`histogram_even`] needs nothing.
    pub fn histogram_range<S: HistogramSample>(levels: usize) -> Self {
        Self::region(levels.saturating_mul(size_of::<S::Level>())).0
    }
}

/// Check the levels of [`histogram_range`] for samples of `S` without a GPU: at least two,
/// finite, in increasing order (equal neighbours make an empty bin).
///
/// # Errors
/// [`Error::InvalidBins`] with the rule that failed; [`Error::PastLimit`] past `u32::MAX`
/// levels.
pub fn check_range_levels<S: HistogramSample>(levels: &[S::Level]) -> Result<()> {
    check_bins::<S>(&Bins::Range(levels))
}

/// Check `bins` against the sample type; the error says which rule failed.
fn check_bins<S: HistogramSample>(bins: &Bins<'_, S::Level>) -> Result<()> {
    let what = match bins {
        Bins::Even { .. } => "histogram_even",
        Bins::Range(_) => "histogram_range",
    };
    let invalid = |rule: BinRule| Err(Error::InvalidBins { what, rule });
    match *bins {
        Bins::Even { lower, upper, bins } => {
            if bins == 0 {
                return invalid(BinRule::NoBins);
            }
            let (lower_value, upper_value) = (lower.value(), upper.value());
            if !(lower.is_finite() && upper.is_finite() && lower < upper) {
                return invalid(BinRule::NotIncreasing {
                    lower: lower_value,
                    upper: upper_value,
                });
            }
            if !S::Level::width_is_finite(lower, upper) {
                return invalid(BinRule::WidthOverflows {
                    lower: lower_value,
                    upper: upper_value,
                });
            }
            // bins / (upper - lower), as the kernel multiplies by it: infinite for a width too
            // small for the bins (NaN bins for every sample).
            let scale = S::Level::scale(lower, upper, bins);
            if !(scale.is_finite() && scale > 0.0) {
                return invalid(BinRule::ScaleNotFinite {
                    bins,
                    lower: lower_value,
                    upper: upper_value,
                    scale,
                });
            }
            if let Some((min, max)) = S::LEVEL_DOMAIN
                && (lower < min || upper > max)
            {
                return invalid(BinRule::OutsideDomain {
                    lower: lower_value,
                    upper: upper_value,
                    sample: S::NAME,
                    min: min.value(),
                    max: max.value(),
                });
            }
        }
        Bins::Range(levels) => {
            if levels.len() < 2 {
                return invalid(BinRule::TooFewLevels { levels: levels.len() });
            }
            if levels.len() > u32::MAX as usize {
                return Err(Error::PastLimit {
                    what,
                    count: levels.len(),
                    unit: "levels",
                    max: u32::MAX as usize,
                });
            }
            if let Some(at) = levels.iter().position(|l| !l.is_finite()) {
                return invalid(BinRule::LevelNotFinite {
                    at,
                    level: levels[at].value(),
                });
            }
            if let Some(i) = levels.windows(2).position(|w| w[1] < w[0]) {
                return invalid(BinRule::Decreasing {
                    at: i + 1,
                    level: levels[i + 1].value(),
                    before: levels[i].value(),
                });
            }
        }
    }
    Ok(())
}

/// Check (the views' bounds, the bins, the output's length), clear the counters, and queue the
/// histogram of `samples`.
fn launch<S: HistogramSample, C: HistogramCounter>(
    on: CallOn<'_>,
    samples: DeviceView<'_, S>,
    bins: Bins<'_, S::Level>,
    histogram: DeviceViewMut<'_, C>,
    workspace: Option<&mut DeviceWorkspace>,
) -> Result<()> {
    let (family, kernels) = if matches!(bins, Bins::Even { .. }) {
        ("histogram_even", HISTOGRAM_EVEN)
    } else {
        ("histogram_range", HISTOGRAM_RANGE)
    };
    check_bound(&on, family, &[samples.bound, histogram.bound])?;
    check_bins::<S>(&bins)?;
    let count = bins.count();
    if histogram.len() < count {
        return Err(Error::LengthMismatch {
            what: "histogram: output shorter than the bins",
            expected: count,
            found: histogram.len(),
        });
    }
    let (Some(counter_bytes), Ok(bins_u32)) = (count.checked_mul(size_of::<C>()), u32::try_from(count))
    else {
        return Err(Error::PastLimit {
            what: family,
            count,
            unit: "bins",
            max: u32::MAX as usize,
        });
    };
    // A range histogram's copy of its levels, in the scratch arena.
    let (need, levels_region) = match bins {
        Bins::Range(levels) if samples.len > 0 => TempStorage::region(size_of_val(levels)),
        _ => TempStorage::region(0),
    };
    let workspace = match workspace {
        Some(workspace) => Some(workspace.begin(on.stream(), &need)?),
        None => None,
    };
    // SAFETY: the first `count` counters of the caller's output, cleared in stream order.
    unsafe { on.stream().clear(histogram.address, counter_bytes)? };
    let n = samples.len;
    if n == 0 {
        return Ok(());
    }
    let level_bytes = size_of::<S::Level>() as u32;
    let (lower, upper, scale, levels, shared) = match bins {
        Bins::Even { lower, upper, bins } => (
            lower,
            upper,
            S::Level::scale(lower, upper, bins),
            0,
            histogram_shared_bytes(bins, 0),
        ),
        Bins::Range(levels) => {
            let workspace = workspace.as_ref().expect("range histograms pass a workspace");
            let address =
                workspace.carve_copy(workspace.arena(), levels_region, bytemuck::cast_slice(levels))?;
            (
                levels[0],
                levels[levels.len() - 1],
                0.0,
                address,
                histogram_shared_bytes(bins_u32, level_bytes),
            )
        }
    };
    let policy = crate::tuning::histogram(&on);
    let privatized = shared <= policy.max_shared_bytes as u64;
    let per_block =
        policy.block_threads as usize * (16 / size_of::<S::Raw>()) * policy.loads_in_flight as usize;
    let grid = n
        .div_ceil(per_block)
        .min((policy.blocks_per_sm * on.gpu().info().multiprocessors) as usize)
        .max(1);
    let kernel = crate::module(on.gpu())?.kernel::<HistogramParams<S::Raw, S::Level, C>>(
        crate::registered(kernels, &[S::NAME, C::NAME])?.name,
    )?;
    let mut config = LaunchConfig::new(grid as u32, policy.block_threads);
    if privatized {
        config = config.with_shared_mem(shared as u32);
    }
    let params = HistogramParams {
        samples: samples.address as *const S::Raw,
        histogram: histogram.address as *mut C,
        levels: levels as *const S::Level,
        n,
        lower,
        upper,
        scale,
        bins: bins_u32,
        privatized: privatized as u32,
    };
    // SAFETY: `samples` holds n samples, `histogram` `count` counters (checked above); the
    // levels (range) are `count + 1` sorted finite values the workspace holds until its next
    // call; with `privatized`, the launch has the shared memory `HistogramParams` asks for.
    unsafe { on.stream().launch(&kernel, config, &params) }
}

/// Count the samples of `samples` in `bins` even bins over `[lower, upper)` into
/// `histogram[0..bins]` (overwritten; entries past `bins` left alone). Stream-ordered: returns
/// once queued (CUB's `DeviceHistogram::HistogramEven`).
///
/// A sample `x` (as its level: `i64` for integers, `f32` for f32 / f16 / bf16, `f64`) is counted
/// when `lower <= x < upper`: samples out of range, NaN and infinities outside it are not.
/// Integers go to bin `(x - lower) * bins / (upper - lower)` rounded down, exactly; floats to
/// `min(floor((x - lower) * scale), bins - 1)`, `scale = bins / (upper - lower)`, in the level
/// type ([`HistogramLevel::even_bin`] computes the same on the host). Counts are exact and
/// deterministic (integer atomics). Each block counts in shared memory while `bins` `u32`
/// counters fit in the histogram policy's `max_shared_bytes` (12,288 bins); past that, every sample is one
/// global atomic (correct for any number of bins, slower).
///
/// # Errors
/// [`Error::InvalidBins`] for no bins, levels not finite and increasing, a range too narrow
/// for the bins (`bins / (upper - lower)` not finite in the level type), or integer levels
/// outside the sample type's domain (`[T::MIN, T::MAX + 1]`); [`Error::LengthMismatch`] for a
/// histogram shorter than `bins`; all before anything is queued. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device;
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = gpu.upload(&[0u8, 1, 2, 200, 255])?;
/// let mut counts = gpu.alloc_zeroed::<u32>(4)?;
/// device::histogram_even::<u8, u32>(&gpu, &x, 4, 0, 256, &mut counts)?; // 4 bins of 64 values
/// assert_eq!(gpu.download(&counts)?, [3, 0, 0, 2]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn histogram_even<'s, 'o, 'g, S: HistogramSample, C: HistogramCounter>(
    on: impl Into<CallOn<'g>>,
    samples: impl Into<DeviceView<'s, S>>,
    bins: u32,
    lower: S::Level,
    upper: S::Level,
    histogram: impl Into<DeviceViewMut<'o, C>>,
) -> Result<()> {
    launch(
        on.into(),
        samples.into(),
        Bins::Even { lower, upper, bins },
        histogram.into(),
        None,
    )
}

/// Count the samples of `samples` in the `levels.len() - 1` bins between sorted levels, bin `b`
/// being `[levels[b], levels[b + 1])`, into `histogram[0..bins]` (overwritten) (CUB's
/// `DeviceHistogram::HistogramRange`). Samples below the first level, from the last up, and
/// NaN are not counted. Each sample's bin is found by binary search over the levels (in shared
/// memory while the counters and levels fit in the histogram policy's `max_shared_bytes`).
///
/// The levels are copied to the device through `workspace`, which waits for the stream's
/// earlier work (the call then returns once the histogram is queued).
///
/// # Errors
/// [`Error::InvalidBins`] for fewer than two levels, a level that is NaN or infinite, or
/// levels that decrease; [`Error::LengthMismatch`] for a histogram shorter than the bins; all
/// before anything is queued. Device errors.
pub fn histogram_range<'s, 'o, 'g, S: HistogramSample, C: HistogramCounter>(
    on: impl Into<CallOn<'g>>,
    samples: impl Into<DeviceView<'s, S>>,
    levels: &[S::Level],
    histogram: impl Into<DeviceViewMut<'o, C>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    launch(
        on.into(),
        samples.into(),
        Bins::Range(levels),
        histogram.into(),
        Some(workspace),
    )
}

/// [`histogram_even`] of a host slice, with `u64` counters.
///
/// Takes any call, as [`histogram_even`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the clear of the counters, the histogram
/// (with the call's tuning) and the copy back are queued in that order on the call's stream,
/// which is synchronised.
///
/// # Errors
/// As [`histogram_even`].
pub fn histogram_even_slice<'g, S: HistogramSample>(
    on: impl Into<CallOn<'g>>,
    samples: &[S],
    bins: u32,
    lower: S::Level,
    upper: S::Level,
) -> Result<Vec<u64>> {
    let on = on.into();
    check_bins::<S>(&Bins::Even { lower, upper, bins })?;
    let stream = on.stream();
    let input = stream.upload(S::as_raw(samples))?;
    let mut counts = stream.alloc_zeroed::<u64>(bins as usize)?;
    histogram_even(on, S::view(&input), bins, lower, upper, &mut counts)?;
    stream.download(&counts)
}

/// [`histogram_range`] of a host slice, with `u64` counters.
///
/// Takes any call, as [`histogram_range`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copies, the clear of the counters, the histogram
/// (with the call's tuning) and the copy back are queued in that order on the call's stream,
/// which is synchronised.
///
/// # Errors
/// As [`histogram_range`].
pub fn histogram_range_slice<'g, S: HistogramSample>(
    on: impl Into<CallOn<'g>>,
    samples: &[S],
    levels: &[S::Level],
) -> Result<Vec<u64>> {
    let on = on.into();
    check_bins::<S>(&Bins::Range(levels))?;
    let stream = on.stream();
    let input = stream.upload(S::as_raw(samples))?;
    let mut counts = stream.alloc_zeroed::<u64>(levels.len() - 1)?;
    let mut workspace = DeviceWorkspace::new();
    histogram_range(on, S::view(&input), levels, &mut counts, &mut workspace)?;
    stream.download(&counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule `r` breaks, if it is an [`Error::InvalidBins`].
    fn rule(r: Result<()>) -> Option<BinRule> {
        match r {
            Err(Error::InvalidBins { rule, .. }) => Some(rule),
            _ => None,
        }
    }

    fn even<S: HistogramSample>(lower: S::Level, upper: S::Level, bins: u32) -> Result<()> {
        check_bins::<S>(&Bins::Even { lower, upper, bins })
    }

    fn scale_not_finite(r: Result<()>) -> bool {
        matches!(rule(r), Some(BinRule::ScaleNotFinite { .. }))
    }

    #[test]
    fn even_bins_whose_scale_is_not_finite_are_rejected() {
        // A finite width, but bins / width overflows the level type to infinity.
        assert!(scale_not_finite(even::<f32>(0.0, 1e-38, 1_000_000_000)));
        assert!(scale_not_finite(even::<f32>(0.0, f32::from_bits(1), 1)));
        assert!(scale_not_finite(even::<half::f16>(0.0, 1e-38, 1_000_000_000)));
        assert!(scale_not_finite(even::<f64>(0.0, f64::from_bits(1), 1)));
        assert!(scale_not_finite(even::<f64>(0.0, 1e-300, u32::MAX)));
        // Narrow but representable.
        assert!(even::<f32>(1.0, 1.0 + f32::EPSILON, 1 << 20).is_ok());
        assert!(even::<f64>(0.0, 1e-300, 4).is_ok());
        assert!(even::<u8>(0, 1, u32::MAX).is_ok());
        let message = even::<f32>(0.0, 1e-38, 1_000_000_000).unwrap_err().to_string();
        assert!(
            message.starts_with("histogram_even: the bin scale 1000000000 / (1e-38 - 0.0) = inf"),
            "{message}"
        );
    }

    #[test]
    fn even_bins_other_rules_are_kept() {
        assert_eq!(rule(even::<f32>(0.0, 1.0, 0)), Some(BinRule::NoBins));
        for (lower, upper) in [(1.0, 1.0), (2.0, 1.0), (f32::NAN, 1.0), (0.0, f32::INFINITY)] {
            assert!(
                matches!(
                    rule(even::<f32>(lower, upper, 4)),
                    Some(BinRule::NotIncreasing { .. })
                ),
                "[{lower}, {upper})"
            );
        }
        assert_eq!(
            rule(even::<f32>(-f32::MAX, f32::MAX, 4)),
            Some(BinRule::WidthOverflows {
                lower: LevelValue::F32(-f32::MAX),
                upper: LevelValue::F32(f32::MAX)
            })
        );
        for (lower, upper) in [(-1, 256), (0, 257)] {
            assert_eq!(
                rule(even::<u8>(lower, upper, 4)),
                Some(BinRule::OutsideDomain {
                    lower: LevelValue::I64(lower),
                    upper: LevelValue::I64(upper),
                    sample: "u8",
                    min: LevelValue::I64(0),
                    max: LevelValue::I64(256),
                })
            );
        }
        let message = even::<u8>(0, 257, 4).unwrap_err().to_string();
        assert_eq!(
            message,
            "histogram_even: levels [0, 257) outside the u8 domain [0, 256]"
        );
        assert!(even::<u8>(0, 256, 256).is_ok());
        assert!(even::<i32>(i32::MIN as i64, i32::MAX as i64 + 1, u32::MAX).is_ok());
    }

    #[test]
    fn range_levels_are_checked() {
        let range = |levels: &[f32]| check_bins::<f32>(&Bins::Range(levels));
        assert_eq!(rule(range(&[])), Some(BinRule::TooFewLevels { levels: 0 }));
        assert_eq!(rule(range(&[0.0])), Some(BinRule::TooFewLevels { levels: 1 }));
        assert!(matches!(
            rule(range(&[0.0, f32::NAN, 2.0])),
            Some(BinRule::LevelNotFinite { at: 1, .. })
        ));
        assert_eq!(
            rule(range(&[f32::NEG_INFINITY, 0.0])),
            Some(BinRule::LevelNotFinite {
                at: 0,
                level: LevelValue::F32(f32::NEG_INFINITY)
            })
        );
        assert_eq!(
            rule(range(&[0.0, 2.0, 1.0])),
            Some(BinRule::Decreasing {
                at: 2,
                level: LevelValue::F32(1.0),
                before: LevelValue::F32(2.0)
            })
        );
        assert_eq!(
            range(&[0.0, 2.0, 1.0]).unwrap_err().to_string(),
            "histogram_range: levels not sorted: level 2 (1.0) is below level 1 (2.0)"
        );
        assert!(range(&[0.0, 1.0, 2.0]).is_ok());
        // Repeated levels are an empty bin (documented; the GPU tests draw them).
        assert!(range(&[0.0, 1.0, 1.0, 2.0]).is_ok());
    }
}
