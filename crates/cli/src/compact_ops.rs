//! The CLI's `select` and `unique` commands on `.npy` files: read, compact on the GPU, report,
//! optionally write the kept items, and (`--check`) compare them bit for bit with the CPU
//! reference.

use crate::cli_ops::{CliError, time_warm};
use crate::npy;
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
trait CompactElement: Element + npyz::Deserialize + npyz::Serialize + npyz::AutoSerialize {
    /// An operand given on the command line, as this type (`as` conversion for integers).
    fn from_f64(v: f64) -> Self;
}
macro_rules! compact_element {
    ($($t:ty => $from:expr),* $(,)?) => {$(impl CompactElement for $t { fn from_f64(v: f64) -> Self { $from(v) } })*};
}
compact_element!(
    f32 => |v| v as f32,
    f64 => |v| v,
    i32 => |v| v as i32,
    u32 => |v| v as u32,
    i64 => |v| v as i64,
    u64 => |v| v as u64,
    half::f16 => half::f16::from_f64,
);

fn predicate<T: CompactElement>(keep: KeepArg, value: f64, hi: f64) -> Predicate<T> {
    let v = T::from_f64(value);
    match keep.kind() {
        CompareKind::Less => Predicate::less(v),
        CompareKind::LessEqual => Predicate::less_equal(v),
        CompareKind::Greater => Predicate::greater(v),
        CompareKind::GreaterEqual => Predicate::greater_equal(v),
        CompareKind::Equal => Predicate::equal(v),
        CompareKind::NotEqual => Predicate::not_equal(v),
        CompareKind::InRange => Predicate::in_range(v, T::from_f64(hi)),
        CompareKind::NotNan => Predicate::not_nan(),
    }
}

fn run_typed<T: CompactElement>(gpu: &Gpu, host: &[T], job: &CompactJob) -> Result<bool, CliError> {
    let predicate = job.keep.map(|(keep, value, hi)| predicate::<T>(keep, value, hi));
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

/// Run `select` or `unique` on the file of `job` (read before the GPU is opened). Returns
/// whether `--check` found the GPU's result equal to the CPU's (true without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message.
pub fn run(job: &CompactJob) -> Result<bool, CliError> {
    let input = npy::open(&job.input)?;
    let bar = indicatif::ProgressBar::hidden();
    let command = if job.keep.is_some() { "select" } else { "unique" };
    crate::with_npy_element!(input, command, T => {
        let host = input.read::<T>(&bar)?;
        let gpu = gpu_primitives::open_gpu(job.device)?;
        run_typed::<T>(&gpu, &host, job)
    })
}
