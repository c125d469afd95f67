//! Device-wide histogram: how many samples fall in each bin, bins evenly spaced
//! ([`EvenBins`]) or between sorted levels ([`RangeBins`]), as CUB's `DeviceHistogram` does.
//!
//! - **Privatized** ([`histogram_privatized`]), when a block's counters fit in shared memory:
//!   each block clears `bins` `u32` counters in shared memory, counts its part of the samples
//!   there (`red.shared.add`), then adds each non-zero counter to the output with one global
//!   atomic. The global atomics scale with blocks x bins, not with samples (Podlozhnyuk,
//!   "Histogram calculation in CUDA", NVIDIA 2007; Gómez-Luna et al., "An optimized approach to
//!   histogram computation on GPU", 2013).
//! - **Global** ([`histogram_global`]), for any number of bins: every counted sample is one
//!   atomic add to the output.
//!
//! Thread `g` of the grid reads 16-byte vectors `g, g + S, ...` (`S` = threads in the grid),
//! [`LOADS`] in flight, then the samples past the last whole vector. Counts are integers:
//! the result does not depend on the order the atomics land in.

use super::element::{Bf16, F16, Packed, load_aligned_read_only};
use crate::atomic::AtomicAdd;
use crate::shared::{SharedArray, SharedValue};
use crate::sync::block_barrier;
use crate::thread::{block_dim, global_idx, grid_stride, thread_idx};
use crate::unroll::unrolled_for;

/// 16-byte loads each thread issues before it counts their samples.
pub const LOADS: usize = crate::policy::HISTOGRAM.loads_in_flight as usize;

/// The type bin levels are given in and samples compared in, with the arithmetic of even bins.
pub trait HistogramLevel: Copy + PartialOrd + SharedValue {
    /// What [`even_bin`](Self::even_bin) multiplies by: `f32` / `f64` for floats, an `f64`
    /// estimate for integers.
    type Scale: Copy;
    /// The scale as the host passes it (widened to f64).
    fn scale(host: f64) -> Self::Scale;
    /// The bin of `x` among `bins` even bins over `[lower, lower + range)`, for `x` in it.
    fn even_bin(x: Self, lower: Self, scale: Self::Scale, range: u64, bins: u32) -> u32;
    /// `upper - lower` as an integer width (integers; floats do not use it).
    fn range(lower: Self, upper: Self) -> u64;
}

macro_rules! float_level {
    ($t:ty) => {
        impl HistogramLevel for $t {
            type Scale = $t;
            #[inline(always)]
            fn scale(host: f64) -> $t {
                host as $t
            }
            /// `min(floor((x - lower) * scale), bins - 1)`: the product can round up to `bins`
            /// just below `upper`.
            #[inline(always)]
            fn even_bin(x: $t, lower: $t, scale: $t, _range: u64, bins: u32) -> u32 {
                (((x - lower) * scale) as u32).min(bins - 1)
            }
            #[inline(always)]
            fn range(_lower: $t, _upper: $t) -> u64 {
                0
            }
        }
    };
}
float_level!(f32);
float_level!(f64);

impl HistogramLevel for i64 {
    type Scale = f64;
    #[inline(always)]
    fn scale(host: f64) -> f64 {
        host
    }
    /// `floor(d * bins / range)` exactly, `d = x - lower < range <= 2^32`: an f64 estimate (off
    /// by at most one: its error is below 2^-19), corrected with 64-bit products (each below
    /// 2^64: `d * bins`, `(q + 1) * range` with `q < bins`), which avoids a 64-bit division.
    #[inline(always)]
    fn even_bin(x: i64, lower: i64, scale: f64, range: u64, bins: u32) -> u32 {
        let d = (x - lower) as u64;
        let target = d * bins as u64;
        let mut q = (d as f64 * scale) as u64;
        if q * range > target {
            q -= 1;
        } else if (q + 1) * range <= target {
            q += 1;
        }
        q as u32
    }
    #[inline(always)]
    fn range(lower: i64, upper: i64) -> u64 {
        (upper - lower) as u64
    }
}

/// A histogram sample type: read in 16-byte vectors, compared as its level type.
pub trait HistogramSample: Packed {
    /// `i64` for integers, `f32` for f32 / f16 / bf16, `f64` for f64.
    type Level: HistogramLevel;
    /// The sample as a level (exact).
    fn level(self) -> Self::Level;
}

macro_rules! integer_sample {
    ($($t:ty),*) => {$(
        impl HistogramSample for $t {
            type Level = i64;
            #[inline(always)]
            fn level(self) -> i64 {
                self as i64
            }
        }
    )*};
}
integer_sample!(u8, u16, i32, u32);

impl HistogramSample for f32 {
    type Level = f32;
    #[inline(always)]
    fn level(self) -> f32 {
        self
    }
}
impl HistogramSample for f64 {
    type Level = f64;
    #[inline(always)]
    fn level(self) -> f64 {
        self
    }
}
impl HistogramSample for F16 {
    type Level = f32;
    #[inline(always)]
    fn level(self) -> f32 {
        super::Element::to_acc(self)
    }
}
impl HistogramSample for Bf16 {
    type Level = f32;
    #[inline(always)]
    fn level(self) -> f32 {
        super::Element::to_acc(self)
    }
}

/// How a sample's level maps to a bin.
pub trait Binning<L>: Copy {
    /// Number of bins.
    fn bins(&self) -> u32;
    /// The bin of `x`, or [`bins`](Self::bins) (or more) when it is not counted (out of range,
    /// NaN).
    fn bin(&self, x: L) -> u32;
}

/// `bins` even bins over `[lower, upper)`.
#[derive(Clone, Copy)]
pub struct EvenBins<L: HistogramLevel> {
    lower: L,
    upper: L,
    scale: L::Scale,
    range: u64,
    bins: u32,
}

impl<L: HistogramLevel> EvenBins<L> {
    /// The bins of a launch's parameters (`scale` as the host computed it).
    #[inline(always)]
    pub fn new(lower: L, upper: L, scale: f64, bins: u32) -> Self {
        Self {
            lower,
            upper,
            scale: L::scale(scale),
            range: L::range(lower, upper),
            bins,
        }
    }
}

impl<L: HistogramLevel> Binning<L> for EvenBins<L> {
    #[inline(always)]
    fn bins(&self) -> u32 {
        self.bins
    }
    #[inline(always)]
    fn bin(&self, x: L) -> u32 {
        // Written so that NaN (every comparison false) is not counted.
        if x >= self.lower && x < self.upper {
            L::even_bin(x, self.lower, self.scale, self.range, self.bins)
        } else {
            self.bins
        }
    }
}

/// Where a range histogram reads its `bins + 1` levels.
pub trait Levels<L>: Copy {
    /// Level `i` (`i <= bins`).
    ///
    /// # Safety
    /// `i` is at most the number of bins.
    unsafe fn level(&self, i: u32) -> L;
}

/// Levels in global memory (read through the read-only cache).
#[derive(Clone, Copy)]
pub struct GlobalLevels<L>(pub *const L);

impl<L: Copy> Levels<L> for GlobalLevels<L> {
    #[inline(always)]
    unsafe fn level(&self, i: u32) -> L {
        // SAFETY: the array holds bins + 1 levels; i <= bins (the caller's contract).
        unsafe { *self.0.add(i as usize) }
    }
}

/// Levels a block copied to shared memory.
#[derive(Clone, Copy)]
pub struct SharedLevels<L>(pub SharedArray<L>);

impl<L: SharedValue> Levels<L> for SharedLevels<L> {
    #[inline(always)]
    unsafe fn level(&self, i: u32) -> L {
        // SAFETY: the array holds bins + 1 levels, written before a barrier; i <= bins.
        unsafe { self.0.read_unchecked(i) }
    }
}

/// Bins between sorted levels: bin `b` is `[levels[b], levels[b + 1])`, found by binary search
/// (`ceil(log2(bins))` level reads per sample).
#[derive(Clone, Copy)]
pub struct RangeBins<L, S> {
    levels: S,
    first: L,
    last: L,
    bins: u32,
}

impl<L: Copy, S: Levels<L>> RangeBins<L, S> {
    /// The bins of `bins + 1` levels.
    ///
    /// # Safety
    /// `levels` holds `bins + 1` readable levels, sorted.
    #[inline(always)]
    pub unsafe fn new(levels: S, bins: u32) -> Self {
        // SAFETY: 0 and bins are within the bins + 1 levels.
        let (first, last) = unsafe { (levels.level(0), levels.level(bins)) };
        Self {
            levels,
            first,
            last,
            bins,
        }
    }
}

impl<L: Copy + PartialOrd, S: Levels<L>> Binning<L> for RangeBins<L, S> {
    #[inline(always)]
    fn bins(&self) -> u32 {
        self.bins
    }
    #[inline(always)]
    fn bin(&self, x: L) -> u32 {
        if !(x >= self.first && x < self.last) {
            return self.bins;
        }
        // levels[lo] <= x < levels[hi] throughout.
        let (mut lo, mut hi) = (0u32, self.bins);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            // SAFETY: 0 < mid < bins.
            if unsafe { self.levels.level(mid) } <= x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// A histogram counter type (`u32`, `u64`): integers, so atomic adds in any order give the same
/// counts.
pub trait Counter: AtomicAdd {
    /// `count` as a counter.
    fn from_count(count: u32) -> Self;
}
impl Counter for u32 {
    #[inline(always)]
    fn from_count(count: u32) -> u32 {
        count
    }
}
impl Counter for u64 {
    #[inline(always)]
    fn from_count(count: u32) -> u64 {
        count as u64
    }
}

/// Call `count(bin)` for each sample of this thread's part of `samples[0..n]` that `binning`
/// counts.
///
/// # Safety
/// `samples` holds `n` readable samples nothing writes during the launch.
#[inline(always)]
unsafe fn for_each_bin<S, B, const VEC: usize>(
    samples: *const S,
    n: usize,
    binning: B,
    mut count: impl FnMut(u32),
) where
    S: HistogramSample,
    B: Binning<S::Level>,
{
    let bins = binning.bins();
    let mut take = |x: S| {
        let b = binning.bin(x.level());
        if b < bins {
            count(b);
        }
    };
    let vectors = if (samples as usize).is_multiple_of(16) {
        n / VEC
    } else {
        0
    };
    let stride = grid_stride();
    let mut v = global_idx();
    // SAFETY: (loops) every vector read is below `vectors`, so its samples are below n; the base
    // is 16-byte aligned (checked above); nothing writes the samples.
    unsafe {
        while v + (LOADS - 1) * stride < vectors {
            let mut loaded = [[samples.read(); VEC]; LOADS];
            unrolled_for(LOADS, |k| {
                loaded[k] = load_aligned_read_only::<S, VEC>(samples.add((v + k * stride) * VEC));
            });
            unrolled_for(LOADS, |k| unrolled_for(VEC, |i| take(loaded[k][i])));
            v += LOADS * stride;
        }
        while v < vectors {
            let vector = load_aligned_read_only::<S, VEC>(samples.add(v * VEC));
            unrolled_for(VEC, |i| take(vector[i]));
            v += stride;
        }
        let mut i = vectors * VEC + global_idx();
        while i < n {
            take(*samples.add(i));
            i += stride;
        }
    }
}

/// Count this block's part of `samples[0..n]` in shared memory, then add the counts to
/// `histogram` (one atomic per non-zero counter). `stage` runs before the block's first
/// barrier (a range histogram copies its levels there); `binning` is made after it.
///
/// # Safety
/// Every thread of the block calls it; `counters` is this block's, at least `bins` long;
/// `histogram` holds `bins` counters; `samples` holds `n` readable samples nothing writes during the launch; `binning` may read
/// what `stage` wrote.
#[inline(always)]
pub unsafe fn histogram_privatized<S, B, C, const VEC: usize>(
    samples: *const S,
    n: usize,
    histogram: *mut C,
    counters: SharedArray<u32>,
    bins: u32,
    stage: impl FnOnce(),
    binning: impl FnOnce() -> B,
) where
    S: HistogramSample,
    B: Binning<S::Level>,
    C: Counter,
{
    let mut b = thread_idx();
    while b < bins {
        // SAFETY: b < bins <= the counters' length.
        unsafe { counters.write_unchecked(b, 0) };
        b += block_dim();
    }
    stage();
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let binning = binning();
    // SAFETY: forwarded; every counted bin is below `bins`, cleared before the barrier.
    unsafe { for_each_bin::<S, B, VEC>(samples, n, binning, |bin| counters.atomic_add_unchecked(bin, 1)) };
    // SAFETY: the whole block calls it.
    unsafe { block_barrier() };
    let mut b = thread_idx();
    while b < bins {
        // SAFETY: b < bins; the adds came before the barrier.
        let count = unsafe { counters.read_unchecked(b) };
        if count != 0 {
            // SAFETY: histogram holds bins counters.
            unsafe { C::atomic_add(histogram.add(b as usize), C::from_count(count)) };
        }
        b += block_dim();
    }
}

/// Count this thread's part of `samples[0..n]` straight into `histogram`, one global atomic per
/// counted sample: for bin counts past what a block's shared memory holds.
///
/// # Safety
/// `histogram` holds `binning.bins()` counters; `samples` holds `n` readable samples nothing writes during the launch.
#[inline(always)]
pub unsafe fn histogram_global<S, B, C, const VEC: usize>(
    samples: *const S,
    n: usize,
    histogram: *mut C,
    binning: B,
) where
    S: HistogramSample,
    B: Binning<S::Level>,
    C: Counter,
{
    // SAFETY: forwarded; every counted bin is below `bins`.
    unsafe {
        for_each_bin::<S, B, VEC>(samples, n, binning, |bin| {
            C::atomic_add(histogram.add(bin as usize), C::from_count(1));
        })
    };
}
