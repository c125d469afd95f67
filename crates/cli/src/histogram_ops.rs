//! The CLI's `histogram` command on `.npy` files: read, count on the GPU (even bins over
//! `[lower, upper)`, or bins between given levels), report, optionally write the counts, and
//! (`--check`) compare them with the CPU reference.

use crate::cli_ops::{CliError, time_warm};
use crate::npy::{self, NpyElement};
use gpu_primitives::device::{self, HistogramSample};
use gpu_primitives::{Gpu, reference};
use std::path::PathBuf;

/// What `histogram` should do.
#[derive(Clone, Debug)]
pub struct HistogramJob {
    /// The input `.npy` (1-D; u8, u16, i32, u32, f16, f32 or f64).
    pub input: PathBuf,
    /// Even bins: their number and `[lower, upper)`; ignored when `levels` is given.
    pub even: (u32, f64, f64),
    /// Bin levels, sorted (`bins + 1` of them): `histogram_range`.
    pub levels: Option<Vec<f64>>,
    /// Where to write the counts (u64).
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// A sample type the command reads, with levels given on the command line as f64.
trait CliSample: HistogramSample + NpyElement {
    /// `v` as a level (integers: rounded down).
    fn level_from_f64(v: f64) -> Self::Level;
}
macro_rules! cli_sample {
    ($($t:ty => $level:expr),* $(,)?) => {$(impl CliSample for $t { fn level_from_f64(v: f64) -> Self::Level { $level(v) } })*};
}
cli_sample!(
    f32 => |v| v as f32,
    f64 => |v| v,
    u8 => |v: f64| v.floor() as i64,
    u16 => |v: f64| v.floor() as i64,
    i32 => |v: f64| v.floor() as i64,
    u32 => |v: f64| v.floor() as i64,
    half::f16 => |v| v as f32,
);

/// The bins of a histogram of samples of `S`: the levels between bins (`None`: even bins), and
/// the even bins' lower and upper levels.
type Bins<S> = (
    Option<Vec<<S as HistogramSample>::Level>>,
    <S as HistogramSample>::Level,
    <S as HistogramSample>::Level,
);

/// The bins of `job` for samples of `S`: the levels (`None`: even bins) and the even bins'
/// bounds, as the sample's level type, checked as the library checks them (so that a bad
/// argument is refused before the GPU is opened, by the option's name).
///
/// # Errors
/// [`CliError::Usage`]: no bins; bounds that are not finite and increasing once levels of `S`
/// (integer samples round them down), or outside its domain; fewer than two levels, one that is
/// not finite, or levels out of order.
fn bins<S: CliSample>(job: &HistogramJob) -> Result<Bins<S>, CliError> {
    let usage = |what: String| CliError::Usage(format!("histogram {what}"));
    let (bins, lower, upper) = job.even;
    let (low, high) = (S::level_from_f64(lower), S::level_from_f64(upper));
    let Some(given) = &job.levels else {
        if !(lower.is_finite() && upper.is_finite()) {
            return Err(usage(format!("--lower {lower} --upper {upper}: not finite")));
        }
        // The library's own rules, as its call would apply them on the GPU.
        device::check_even_bins::<S>(bins, low, high)
            .map_err(|e| usage(format!("--bins {bins} --lower {lower} --upper {upper}: {e}")))?;
        return Ok((None, low, high));
    };
    if let Some(i) = given.iter().position(|v| !v.is_finite()) {
        return Err(usage(format!("--levels: level {i} ({}) is not finite", given[i])));
    }
    let levels: Vec<S::Level> = given.iter().map(|&v| S::level_from_f64(v)).collect();
    device::check_range_levels::<S>(&levels).map_err(|e| usage(format!("--levels: {e}")))?;
    Ok((Some(levels), low, high))
}

fn run_typed<S: CliSample>(
    gpu: &Gpu,
    host: &[S],
    (levels, lower, upper): Bins<S>,
    job: &HistogramJob,
) -> Result<bool, CliError> {
    let bins = job.even.0;
    let (counts, elapsed) = time_warm(gpu, || match &levels {
        Some(levels) => device::histogram_range_slice(gpu, host, levels),
        None => device::histogram_even_slice(gpu, host, bins, lower, upper),
    })?;
    let what = if levels.is_some() {
        "histogram_range"
    } else {
        "histogram_even"
    };
    let total: u64 = counts.iter().sum();
    println!(
        "{what} of {} {} samples on {}: {} bins, {total} samples counted ({:.1} µs, copies both ways included)",
        host.len(),
        S::NAME,
        gpu.info().name,
        counts.len(),
        elapsed.as_secs_f64() * 1e6
    );
    if let Some(path) = &job.output {
        npy::write(path, &counts)?;
        println!("wrote {} ({} counts, u64)", path.display(), counts.len());
    }
    if !job.check {
        return Ok(true);
    }
    let expected = match &levels {
        Some(levels) => reference::histogram_range(host, levels),
        None => reference::histogram_even(host, bins, lower, upper),
    };
    let same = counts == expected;
    println!("CPU reference: {}", if same { "identical" } else { "DIFFERENT" });
    Ok(same)
}

/// Run `histogram` on the file of `job` (the arguments checked and the file read before the GPU
/// is opened). Returns whether `--check` found the GPU's counts equal to the CPU's (true without
/// `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: the file, a sample type the histograms do not take
/// (i64, u64), bad bins, an `--output` that is the input.
pub fn run(job: &HistogramJob) -> Result<bool, CliError> {
    if let Some(output) = &job.output {
        npy::check_outputs(&[("--output", output)], &[&job.input])?;
    }
    let input = npy::open(&job.input)?;
    let bar = indicatif::ProgressBar::hidden();
    crate::with_npy_type!(input, "histogram", [u8, u16, i32, u32, f16, f32, f64], S => {
        let bins = bins::<S>(job)?;
        let host = input.read::<S>(&bar)?;
        let gpu = gpu_primitives::open_gpu(job.device)?;
        run_typed::<S>(&gpu, &host, bins, job)
    })
}
