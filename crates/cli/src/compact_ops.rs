//! The CLI's `select` and `unique` commands on `.npy` files: read, compact on the GPU, report,
//! optionally write the kept items, and (`--check`) compare them bit for bit with the CPU
//! reference.

use crate::cli_ops::{CliError, time_warm};
use crate::npy::{self, NpyElement};
use gpu_primitives::device::{self, CompareKind, Element, Predicate};
use gpu_primitives::{Gpu, reference};
use std::path::PathBuf;

/// The test `select` applies, named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeepArg {
    /// `x < value`.
    Lt,
    /// `x <= value`.
    Le,
    /// `x > value`.
    Gt,
    /// `x >= value`.
    Ge,
    /// `x == value`.
    Eq,
    /// `x != value`.
    Ne,
    /// `value <= x < hi`.
    Range,
    /// Not NaN.
    NotNan,
}

impl KeepArg {
    fn kind(self) -> CompareKind {
        match self {
            KeepArg::Lt => CompareKind::Less,
            KeepArg::Le => CompareKind::LessEqual,
            KeepArg::Gt => CompareKind::Greater,
            KeepArg::Ge => CompareKind::GreaterEqual,
            KeepArg::Eq => CompareKind::Equal,
            KeepArg::Ne => CompareKind::NotEqual,
            KeepArg::Range => CompareKind::InRange,
            KeepArg::NotNan => CompareKind::NotNan,
        }
    }
}

/// What `select` / `unique` should do.
#[derive(Clone, Debug)]
pub struct CompactJob {
    /// The input `.npy` (1-D).
    pub input: PathBuf,
    /// `select`: the test and its operands (`None`: unique).
    pub keep: Option<(KeepArg, f64, f64)>,
    /// Where to write the kept items.
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// An element type the compaction commands read and write.
trait CompactElement: Element + NpyElement + npyz::Serialize + npyz::AutoSerialize {
    /// An operand given on the command line, as this type (rounded to the nearest for floats);
    /// `None` for an integer type when `v` is not one of its values (a fraction, out of range,
    /// NaN), which a conversion would change and so change the test.
    fn from_f64(v: f64) -> Option<Self>;
}
macro_rules! compact_float {
    ($($t:ty => $from:expr),* $(,)?) => {$(impl CompactElement for $t { fn from_f64(v: f64) -> Option<Self> { Some($from(v)) } })*};
}
compact_float!(f32 => |v| v as f32, f64 => |v| v, half::f16 => half::f16::from_f64);
macro_rules! compact_int {
    ($($t:ty),* $(,)?) => {$(impl CompactElement for $t {
        fn from_f64(v: f64) -> Option<Self> {
            // `MAX as f64 + 1.0` is a power of two, exact: the range is [MIN, MAX] exactly.
            (v.fract() == 0.0 && v >= <$t>::MIN as f64 && v < <$t>::MAX as f64 + 1.0).then_some(v as $t)
        }
    })*};
}
compact_int!(i32, u32, i64, u64);

/// The operands of `select --keep keep --value value --hi hi` for items of `T`, checked.
///
/// # Errors
/// [`CliError::Usage`] for an operand that items of `T` cannot hold (`--value 2.5` for integers
/// would compare with 2 instead).
fn operands<T: CompactElement>(keep: KeepArg, value: f64, hi: f64) -> Result<(T, T), CliError> {
    // An operand the test does not use is 0, which every type holds.
    let operand = |option: &str, v: f64, used: bool| {
        T::from_f64(if used { v } else { 0.0 }).ok_or_else(|| {
            CliError::Usage(format!(
                "select {option} {v}: not a {} value (the file's items are {})",
                T::NAME,
                T::NAME
            ))
        })
    };
    Ok((
        operand("--value", value, keep != KeepArg::NotNan)?,
        operand("--hi", hi, keep == KeepArg::Range)?,
    ))
}

fn predicate<T: CompactElement>(keep: KeepArg, v: T, hi: T) -> Predicate<T> {
    match keep.kind() {
        CompareKind::Less => Predicate::less(v),
        CompareKind::LessEqual => Predicate::less_equal(v),
        CompareKind::Greater => Predicate::greater(v),
        CompareKind::GreaterEqual => Predicate::greater_equal(v),
        CompareKind::Equal => Predicate::equal(v),
        CompareKind::NotEqual => Predicate::not_equal(v),
        CompareKind::InRange => Predicate::in_range(v, hi),
        CompareKind::NotNan => Predicate::not_nan(),
    }
}

fn run_typed<T: CompactElement>(
    gpu: &Gpu,
    host: &[T],
    predicate: Option<Predicate<T>>,
    job: &CompactJob,
) -> Result<bool, CliError> {
    let (kept, elapsed) = time_warm(gpu, || match predicate {
        Some(p) => device::select_if_slice(gpu, host, p),
        None => device::unique_slice(gpu, host),
    })?;
    // The CPU reference after the timed call, so that the time is the GPU's (and the copies').
    let expected = job.check.then(|| match predicate {
        Some(p) => reference::select_if(host, p),
        None => reference::unique(host),
    });
    let what = if job.keep.is_some() { "select" } else { "unique" };
    println!(
        "{what} of {} {} elements on {}: kept {} ({:.1} µs, copies both ways included)",
        host.len(),
        T::NAME,
        gpu.info().name,
        kept.len(),
        elapsed.as_secs_f64() * 1e6
    );
    if let Some(path) = &job.output {
        npy::write(path, &kept)?;
        println!("wrote {} ({} elements)", path.display(), kept.len());
    }
    Ok(match expected {
        Some(expected) => {
            let same = crate::cli_ops::same_bits::<T>(&kept, &expected);
            println!(
                "CPU reference: kept {}; {}",
                expected.len(),
                if same { "identical" } else { "DIFFERENT" }
            );
            same
        }
        None => true,
    })
}

/// Run `select` or `unique` on the file of `job` (the arguments checked and the file read before
/// the GPU is opened). Returns whether `--check` found the GPU's result equal to the CPU's (true
/// without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: the file, an `--output` that is the input, an operand
/// the items cannot hold.
pub fn run(job: &CompactJob) -> Result<bool, CliError> {
    if let Some(output) = &job.output {
        npy::check_outputs(&[("--output", output)], &[&job.input])?;
    }
    let input = npy::open(&job.input)?;
    let bar = indicatif::ProgressBar::hidden();
    let command = if job.keep.is_some() { "select" } else { "unique" };
    crate::with_npy_element!(input, command, T => {
        let predicate = match job.keep {
            Some((keep, value, hi)) => {
                let (v, hi) = operands::<T>(keep, value, hi)?;
                Some(predicate::<T>(keep, v, hi))
            }
            None => None,
        };
        let host = input.read::<T>(&bar)?;
        let gpu = gpu_primitives::open_gpu(job.device)?;
        run_typed::<T>(&gpu, &host, predicate, job)
    })
}
