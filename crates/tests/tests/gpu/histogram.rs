//! Histograms (histogram_even, histogram_range) against the CPU references: property tests
//! over every sample type and both counter types (random lengths and alignments, bin counts on
//! both sides of the shared-memory limit, levels at the type's edges, samples out of range,
//! NaN and infinities), bad input, and a length past 2^31.

use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::device::{self, DeviceWorkspace, HistogramCounter, HistogramSample};
use gpu_primitives::{Error, Gpu, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;
use rand::rngs::StdRng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("histogram::every_type_random_bins", every_type),
    ("histogram::bad_input_and_empty", bad_input),
    ("histogram::past_2_pow_31_samples", past_2_pow_31),
];

/// A sample type with what the tests draw samples and levels from.
trait TestSample: HistogramSample {
    /// Samples are drawn from `[SPAN.0, SPAN.1)` (the type's range for integers).
    const SPAN: (f64, f64);
    /// The sample nearest `v` (clamped to the type's range for integers).
    fn from_f64(v: f64) -> Self;
    /// The level nearest `v`.
    fn level_from_f64(v: f64) -> Self::Level;
    /// The level as f64 (rounded for integers past 2^53: only to place samples).
    fn level_to_f64(l: Self::Level) -> f64;
    /// Values that are never or barely counted: NaN and infinities, or the type's extremes.
    fn specials() -> Vec<Self>;
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl TestSample for $t {
            const SPAN: (f64, f64) = (<$t>::MIN as f64, <$t>::MAX as f64 + 1.0);
            fn from_f64(v: f64) -> Self {
                v.floor().clamp(<$t>::MIN as f64, <$t>::MAX as f64) as $t
            }
            fn level_from_f64(v: f64) -> i64 {
                v.floor() as i64
            }
            fn level_to_f64(l: i64) -> f64 {
                l as f64
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX]
            }
        }
    )*};
}
int_sample!(u8, u16, i32, u32);

macro_rules! float_sample {
    ($t:ty, $level:ty, $from:expr) => {
        impl TestSample for $t {
            const SPAN: (f64, f64) = (-1000.0, 1000.0);
            fn from_f64(v: f64) -> Self {
                $from(v)
            }
            fn level_from_f64(v: f64) -> $level {
                v as $level
            }
            fn level_to_f64(l: $level) -> f64 {
                l as f64
            }
            fn specials() -> Vec<Self> {
                [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0]
                    .into_iter()
                    .map($from)
                    .collect()
            }
        }
    };
}
float_sample!(f32, f32, |v: f64| v as f32);
float_sample!(f64, f64, |v: f64| v);
float_sample!(f16, f32, f16::from_f64);
float_sample!(bf16, f32, bf16::from_f64);

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// `n` samples: most within `[lo, hi)` widened by an eighth each side (so some fall outside),
/// a few special values.
fn samples<S: TestSample>(n: usize, lo: f64, hi: f64, r: &mut StdRng) -> Vec<S> {
    let specials = S::specials();
    let pad = (hi - lo) / 8.0;
    (0..n)
        .map(|_| {
            if r.random_bool(0.03) {
                specials[r.random_range(0..specials.len())]
            } else {
                S::from_f64(r.random_range(lo - pad..hi + pad))
            }
        })
        .collect()
}

/// Two increasing levels in the span (sometimes the integer type's whole domain).
fn even_levels<S: TestSample>(r: &mut StdRng) -> (S::Level, S::Level) {
    if let Some(domain) = S::LEVEL_DOMAIN.filter(|_| r.random_bool(0.2)) {
        return domain;
    }
    loop {
        let (a, b) = (
            r.random_range(S::SPAN.0..S::SPAN.1),
            r.random_range(S::SPAN.0..S::SPAN.1),
        );
        let (lo, hi) = (S::level_from_f64(a.min(b)), S::level_from_f64(a.max(b)));
        if lo < hi {
            return (lo, hi);
        }
    }
}

/// `bins + 1` sorted levels drawn from the span (repeats allowed: empty bins).
fn range_levels<S: TestSample>(bins: u32, r: &mut StdRng) -> Vec<S::Level> {
    let (a, b) = (
        r.random_range(S::SPAN.0..S::SPAN.1),
        r.random_range(S::SPAN.0..S::SPAN.1),
    );
    let (lo, hi) = (a.min(b), a.max(b) + 1.0);
    let mut levels: Vec<S::Level> = (0..=bins)
        .map(|_| S::level_from_f64(r.random_range(lo..hi)))
        .collect();
    levels.sort_by(|x, y| x.partial_cmp(y).unwrap());
    levels
}

/// Both histograms of `x` (viewed from `skip` on), with counters `C`, against the references:
/// the counts, the counters past the bins untouched, the samples unchanged.
fn check_both<S: TestSample, C: HistogramCounter + TryFrom<u64> + Into<u64> + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    x: &[S],
    skip: usize,
    bins: u32,
    even: (S::Level, S::Level),
    levels: &[S::Level],
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError> {
    let d_x = gpu.upload(S::as_raw(x)).map_err(fail)?;
    let view = S::view(&d_x).slice(skip..x.len());
    let input = &x[skip..];
    let what = |name: &str| {
        format!(
            "{name} {} -> {} n={} skip={skip} bins={bins}",
            S::NAME,
            C::NAME,
            input.len()
        )
    };
    let sentinel = |len: usize| -> Vec<C> {
        (0..len + 3)
            .map(|i| C::try_from(1000 + i as u64).ok().unwrap())
            .collect()
    };
    let compare = |name: &str, found: Vec<C>, expected: Vec<u64>| -> Result<(), TestCaseError> {
        let bins = expected.len();
        let found: Vec<u64> = found.into_iter().map(Into::into).collect();
        if let Some(b) = (0..bins).find(|&b| found[b] != expected[b]) {
            return Err(TestCaseError::fail(format!(
                "{}: bin {b}: found {}, expected {}",
                what(name),
                found[b],
                expected[b]
            )));
        }
        prop_assert!(
            found[bins..] == (bins..bins + 3).map(|i| 1000 + i as u64).collect::<Vec<_>>(),
            "{}: wrote past the bins",
            what(name)
        );
        Ok(())
    };

    let mut counts = gpu.upload(&sentinel(bins as usize)).map_err(fail)?;
    device::histogram_even::<S, C>(gpu, view, bins, even.0, even.1, &mut counts).map_err(fail)?;
    let expected = reference::histogram_even(input, bins, even.0, even.1);
    compare("histogram_even", gpu.download(&counts).map_err(fail)?, expected)?;

    let range_bins = levels.len() - 1;
    let mut counts = gpu.upload(&sentinel(range_bins)).map_err(fail)?;
    device::histogram_range::<S, C>(gpu, view, levels, &mut counts, ws).map_err(fail)?;
    let expected = reference::histogram_range(input, levels);
    compare("histogram_range", gpu.download(&counts).map_err(fail)?, expected)?;

    let after: Vec<S::Raw> = gpu.download(&d_x).map_err(fail)?;
    // Compared as bytes: a raw f32 is still an f32, and NaN != NaN.
    let bytes = |v: &[S::Raw]| bytemuck::cast_slice::<S::Raw, u8>(v).to_vec();
    prop_assert!(
        bytes(&after) == bytes(S::as_raw(x)),
        "{}: the samples changed",
        what("histogram")
    );
    Ok(())
}

/// Lengths: tiny, around a block's vectors, large.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => prop::sample::select(vec![0usize, 1, 15, 16, 17, 4095, 4096, 4097, 65_537]),
        4 => 0usize..100_000,
        1 => 100_000usize..4_000_000,
    ]
}

/// Bin counts: one, small, 256, the most the shared memory holds (12,288 counters; fewer with
/// a range's levels), and past it (global atomics).
fn bin_count() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => prop::sample::select(vec![1u32, 2, 256, 6000, 12_288, 12_289, 70_000]),
        2 => 1u32..2000,
    ]
}

fn random_bins<S: TestSample>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    crate::properties::runner()
        .run(
            &(length(), 0usize..4, bin_count(), any::<bool>(), any::<u64>()),
            |(n, skip, bins, wide_counters, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let r = &mut rng(seed);
                let even = even_levels::<S>(r);
                let levels = range_levels::<S>(bins, r);
                // Half the samples around the even levels, half around the range's.
                let (lo, hi) = (S::level_to_f64(even.0), S::level_to_f64(even.1));
                let mut x = samples::<S>((n + skip) / 2, lo, hi, r);
                let (lo, hi) = (
                    S::level_to_f64(levels[0]),
                    S::level_to_f64(levels[levels.len() - 1]),
                );
                x.extend(samples::<S>(n + skip - x.len(), lo, hi.max(lo + 1.0), r));
                if wide_counters {
                    check_both::<S, u64>(gpu, &x, skip, bins, even, &levels, ws)
                } else {
                    check_both::<S, u32>(gpu, &x, skip, bins, even, &levels, ws)
                }
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_type(gpu: &Gpu) -> Result<(), Failed> {
    random_bins::<u8>(gpu)?;
    random_bins::<u16>(gpu)?;
    random_bins::<i32>(gpu)?;
    random_bins::<u32>(gpu)?;
    random_bins::<f16>(gpu)?;
    random_bins::<bf16>(gpu)?;
    random_bins::<f32>(gpu)?;
    random_bins::<f64>(gpu)
}

/// Bad bins or a short output: an error before any launch, the output untouched; no samples
/// clears the counters.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let x = ok(gpu.upload(&[1.0f32, 2.0, 3.0]))?;
    let mut out = ok(gpu.upload(&[7u32; 4]))?;
    let invalid = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::InvalidBins { .. }));
    let short = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    let cases: [(&str, bool); 9] = [
        (
            "no bins",
            invalid(device::histogram_even::<f32, u32>(gpu, &x, 0, 0.0, 1.0, &mut out)),
        ),
        (
            "lower == upper",
            invalid(device::histogram_even::<f32, u32>(gpu, &x, 4, 1.0, 1.0, &mut out)),
        ),
        (
            "lower > upper",
            invalid(device::histogram_even::<f32, u32>(gpu, &x, 4, 2.0, 1.0, &mut out)),
        ),
        (
            "NaN level",
            invalid(device::histogram_even::<f32, u32>(
                gpu,
                &x,
                4,
                f32::NAN,
                1.0,
                &mut out,
            )),
        ),
        (
            "infinite width",
            invalid(device::histogram_even::<f32, u32>(
                gpu,
                &x,
                4,
                -f32::MAX,
                f32::MAX,
                &mut out,
            )),
        ),
        (
            "5 bins into 4 counters",
            short(device::histogram_even::<f32, u32>(gpu, &x, 5, 0.0, 1.0, &mut out)),
        ),
        (
            "unsorted levels",
            invalid(device::histogram_range::<f32, u32>(
                gpu,
                &x,
                &[0.0, 2.0, 1.0],
                &mut out,
                ws,
            )),
        ),
        (
            "one level",
            invalid(device::histogram_range::<f32, u32>(gpu, &x, &[0.0], &mut out, ws)),
        ),
        (
            "infinite level",
            invalid(device::histogram_range::<f32, u32>(
                gpu,
                &x,
                &[0.0, f32::INFINITY],
                &mut out,
                ws,
            )),
        ),
    ];
    for (what, rejected) in cases {
        if !rejected {
            return Err(format!("{what}: not rejected").into());
        }
    }
    let bytes = ok(gpu.upload(&[1u8, 2, 3]))?;
    if !invalid(device::histogram_even::<u8, u32>(
        gpu, &bytes, 4, -1, 256, &mut out,
    )) {
        return Err("u8 levels below 0: not rejected".into());
    }
    if !invalid(device::histogram_even::<u8, u32>(
        gpu, &bytes, 4, 0, 257, &mut out,
    )) {
        return Err("u8 levels past 256: not rejected".into());
    }
    check_eq("output untouched", ok(gpu.download(&out))?, vec![7u32; 4])?;
    // The whole u8 domain is allowed: 256 bins of one value each.
    let mut counts = ok(gpu.alloc_zeroed::<u32>(256))?;
    ok(device::histogram_even::<u8, u32>(
        gpu,
        &bytes,
        256,
        0,
        256,
        &mut counts,
    ))?;
    check_eq(
        "u8 [0, 256) bins 1..=3",
        ok(gpu.download(&counts))?[1..4].to_vec(),
        vec![1u32, 1, 1],
    )?;
    let empty = ok(gpu.upload::<f32>(&[]))?;
    ok(device::histogram_even::<f32, u32>(
        gpu, &empty, 4, 0.0, 1.0, &mut out,
    ))?;
    check_eq(
        "no samples: counters cleared",
        ok(gpu.download(&out))?,
        vec![0u32; 4],
    )?;
    check_eq(
        "histogram_range_slice",
        ok(device::histogram_range_slice(
            gpu,
            &[0.5f32, 1.5, 1.7, 9.0],
            &[0.0, 1.0, 2.0],
        ))?,
        vec![1, 2],
    )?;
    Ok(())
}

/// 2^31 + 5 `u8` samples `i % 251` into 256 even bins, counted in u64 and u32.
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 31) + 5;
    let x: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let d_x = ok(gpu.upload(&x))?;
    drop(x);
    let mut expected = vec![(n / 251) as u64; 256];
    for count in &mut expected[..n % 251] {
        *count += 1;
    }
    for count in &mut expected[251..] {
        *count = 0;
    }
    let mut counts = ok(gpu.alloc_zeroed::<u64>(256))?;
    ok(device::histogram_even::<u8, u64>(
        gpu,
        &d_x,
        256,
        0,
        256,
        &mut counts,
    ))?;
    check_eq("u64 counts", ok(gpu.download(&counts))?, expected.clone())?;
    let mut counts32 = ok(gpu.alloc_zeroed::<u32>(256))?;
    let levels: Vec<i64> = (0..=256).collect();
    ok(device::histogram_range::<u8, u32>(
        gpu,
        &d_x,
        &levels,
        &mut counts32,
        &mut DeviceWorkspace::new(),
    ))?;
    let found: Vec<u64> = ok(gpu.download(&counts32))?.into_iter().map(u64::from).collect();
    check_eq("u32 counts (range)", found, expected)
}
