//! The device-wide benchmark: reduce and inclusive and exclusive scan (sum) timed with CUDA
//! events, the compactions (select_if, select_flagged, unique, partition_if, partition_flagged,
//! each keeping half of a pseudo-random input), the run-length encodings (of sorted keys with
//! the runs of sorted uniform 32-bit values) and the histograms (256 even bins, and 256 bins
//! between levels, of uniform samples), the segmented reduce (sum, max) and inclusive and
//! exclusive scans (by offsets: segments of 1000 items, and one huge segment after n / 256 of
//! one item; by `u32` key) and the segmented argmin and argmax (1000-item segments), the row operations ([`rows`]) and the radix sort
//! ([`sort`]), beside a device-to-device copy of the same number of
//! elements measured in the same run.
//!
//! For each size: one untimed warm-up, then the median of `runs` timed calls. Times are of the
//! device work, queued on the stream between two events (`reduce_into`, not the `reduce` that
//! also waits and copies the result to the host). GB/s counts the
//! bytes the algorithm must move: reduce reads `n x size_of::<T>()`; scan reads that and writes
//! `n x size_of::<T::Acc>()`; a select reads the input (and `n` flag bytes) and writes the kept
//! half; a partition writes all `n` and moves the rejected half again (its reversal); a
//! run-length encoding reads the sorted keys and writes each run's key (or offset) and length;
//! a
//! histogram reads the samples (its 256 counters are not counted); a segmented reduce reads the
//! input and the offsets and writes one value per segment, a segmented scan reads the input
//! (and the offsets, or the keys) and writes n values; the copy
//! reads and writes `n x size_of::<T>()` each. `scripts/cub-baseline` measures CUB on the same
//! inputs (the same hash).

use gpu_primitives::device::{
    self, DeviceVec, DeviceWorkspace, Element, HistogramSample, Max, Min, Predicate, Sum,
};
use gpu_primitives::{DeviceBuffer, Gpu, Result};
use indicatif::{ProgressBar, ProgressStyle};

mod row;
pub mod rows;
pub mod sort;
pub mod timer;

pub use row::{BenchRow, hash, print_table, read_csv, write_csv, write_json};
use timer::median_micros;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Smallest n, as log2.
    pub min_log2: u32,
    /// Largest n, as log2.
    pub max_log2: u32,
    /// Step between sizes, as log2 (2: x4).
    pub step_log2: u32,
    /// Timed runs per measurement (the median is reported); at least 20 for reported figures.
    pub runs: usize,
    /// Also measure every other element type at this n (log2); `None` to skip.
    pub other_types_log2: Option<u32>,
    /// Element type of the size sweep (`f32`, `f64`, `i32`, `u32`, `i64`, `u64`, `f16`, `bf16`).
    pub sweep_type: String,
    /// Types measured at `other_types_log2` (empty: every type but `sweep_type`).
    pub types: Vec<String>,
    /// Operators of the reduce and the scan: `sum`, `min`, `max`.
    pub ops: Vec<String>,
    /// Measure reduce and scan.
    pub reduce_scan: bool,
    /// Types of the compaction rows (empty: none).
    pub compaction_types: Vec<String>,
    /// Sizes of the compaction and histogram rows, as log2.
    pub compaction_log2: Vec<u32>,
    /// Sample types of the histogram rows (empty: none).
    pub histogram_types: Vec<String>,
    /// Element types of the row operations (`f32`, `f16`, `bf16`; empty: none), measured at the
    /// shapes of [`ROW_SHAPES`](rows::ROW_SHAPES).
    pub row_types: Vec<String>,
    /// Key types of the sort rows ([`SORT_TYPES`](sort::SORT_TYPES); empty:
    /// none): the first at every n of `sort_log2`, `sort_keys` and `sort_pairs` with values of
    /// each of `sort_values`; the others `sort_keys` at the largest.
    pub sort_types: Vec<String>,
    /// Value types of the first key type's `sort_pairs` rows
    /// ([`SORT_VALUE_TYPES`](sort::SORT_VALUE_TYPES)).
    pub sort_values: Vec<String>,
    /// Sizes of the sort rows, as log2 (at most 31).
    pub sort_log2: Vec<u32>,
}

/// The largest size the benchmark takes, as log2 (2^40 elements: past any GPU's memory).
pub const MAX_LOG2: u32 = 40;

/// The element types the benchmark knows, by name (the library's table).
pub const TYPES: &[&str] = gpu_primitives::device::ELEMENT_NAMES;
/// The histogram sample types the benchmark knows, by name (the library's table).
pub const HISTOGRAM_TYPES: &[&str] = gpu_primitives::device::HISTOGRAM_SAMPLE_NAMES;
/// The operators the benchmark knows, by name (the library's table).
pub const OPS: &[&str] = gpu_primitives::device::OPERATOR_NAMES;

impl BenchConfig {
    /// Check the type and operator names and the sizes (the CLI does before it opens the GPU).
    ///
    /// # Errors
    /// The first unknown name, with the known ones; a size past 2^[`MAX_LOG2`], or a sweep whose
    /// smallest size is past its largest.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let sizes = [self.min_log2, self.max_log2]
            .into_iter()
            .chain(self.other_types_log2)
            .chain(self.compaction_log2.iter().copied());
        if let Some(k) = sizes.into_iter().find(|&k| k > MAX_LOG2) {
            return Err(format!("size 2^{k} is past the largest, 2^{MAX_LOG2}"));
        }
        if self.min_log2 > self.max_log2 {
            return Err(format!(
                "--min-log2 {} is past --max-log2 {}: no size to measure",
                self.min_log2, self.max_log2
            ));
        }
        let types = std::iter::once(&self.sweep_type)
            .chain(&self.types)
            .chain(&self.compaction_types);
        known("type", types, TYPES)?;
        use self::{rows::ROW_TYPES, sort::SORT_TYPES, sort::SORT_VALUE_TYPES};
        known("histogram sample type", &self.histogram_types, HISTOGRAM_TYPES)?;
        known("row type", &self.row_types, ROW_TYPES)?;
        known("sort key type", &self.sort_types, SORT_TYPES)?;
        known("sort value type", &self.sort_values, SORT_VALUE_TYPES)?;
        if let Some(k) = self.sort_log2.iter().find(|&&k| k > 31) {
            return Err(format!("sort size 2^{k} is past the largest, 2^31"));
        }
        if self.ops.is_empty() {
            return Err(format!("no operator; known: {}", OPS.join(", ")));
        }
        known("operator", &self.ops, OPS)
    }
}

/// `Err` naming the first of `names` that is not one of `known` (a `what`), with the known ones.
fn known<'a>(
    what: &str,
    names: impl IntoIterator<Item = &'a String>,
    known: &[&str],
) -> std::result::Result<(), String> {
    match names.into_iter().find(|n| !known.contains(&n.as_str())) {
        Some(n) => Err(format!("unknown {what} {n:?}; known: {}", known.join(", "))),
        None => Ok(()),
    }
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            min_log2: 10,
            max_log2: 30,
            step_log2: 2,
            runs: 21,
            other_types_log2: Some(28),
            sweep_type: "f32".into(),
            types: Vec::new(),
            ops: vec!["sum".into()],
            reduce_scan: true,
            compaction_types: vec!["f32".into(), "u32".into()],
            compaction_log2: vec![20, 24, 28],
            histogram_types: vec!["f32".into(), "u32".into()],
            row_types: vec!["f32".into(), "bf16".into()],
            sort_types: vec!["u32".into(), "f32".into(), "u64".into()],
            sort_values: vec!["u32".into()],
            sort_log2: vec![20, 24, 28],
        }
    }
}

/// A type the benchmark can fill with non-trivial values.
trait BenchElement: Element {
    /// Values whose sums stay exact (reduce and scan).
    fn pattern(i: usize) -> Self;
    /// A value from 32 uniform bits (the compaction inputs).
    fn uniform(bits: u32) -> Self;
    /// About half the uniform values are below it.
    fn median() -> Self;
    /// Key number `k` of an increasing sequence (distinct for 4- and 8-byte types; the run
    /// inputs).
    fn key(k: u32) -> Self;
}
macro_rules! bench_element {
    ($($t:ty => $f:expr, $u:expr, $m:expr, $k:expr;)*) => {$(
        impl BenchElement for $t {
            fn pattern(i: usize) -> Self { $f(i) }
            fn uniform(bits: u32) -> Self { $u(bits) }
            fn median() -> Self { $m }
            fn key(k: u32) -> Self { $k(k) }
        }
    )*};
}
/// A uniform value of [0, 1) from the top 24 bits.
fn unit(bits: u32) -> f32 {
    (bits >> 8) as f32 / (1 << 24) as f32
}
bench_element!(
    f32 => |i: usize| ((i % 17) as f32 - 8.0) * 0.25, unit, 0.5, |k| f32::from_bits(0x3F80_0000 + k);
    f64 => |i: usize| ((i % 17) as f64 - 8.0) * 0.25, |b| unit(b) as f64, 0.5, |k| f64::from_bits(0x3FF0_0000_0000_0000 + k as u64);
    i32 => |i: usize| (i % 1001) as i32 - 500, |b| b as i32, 0, |k| k as i32;
    u32 => |i: usize| (i % 1001) as u32, |b| b, 1 << 31, |k| k;
    i64 => |i: usize| (i % 1001) as i64 - 500, |b| (b as i32) as i64, 0, |k| k as i64;
    u64 => |i: usize| (i % 1001) as u64, |b| b as u64, 1 << 31, |k| k as u64;
    half::f16 => |i: usize| half::f16::from_f32(((i % 17) as f32 - 8.0) * 0.25), |b| half::f16::from_f32(unit(b)), half::f16::from_f32(0.5), |k| half::f16::from_f32(k as f32);
    half::bf16 => |i: usize| half::bf16::from_f32(((i % 17) as f32 - 8.0) * 0.25), |b| half::bf16::from_f32(unit(b)), half::bf16::from_f32(0.5), |k| half::bf16::from_f32(k as f32);
);

/// A histogram sample type the benchmark can fill: uniform samples over the levels of 256
/// bins (CUB's baseline reads the same).
trait BenchSample: HistogramSample {
    /// A sample from 32 uniform bits: `[0, 1)` for floats, the type's range for integers.
    fn uniform(bits: u32) -> Self;
    /// Level `k` of `bins` even levels over `[0, 1)` (floats) or the type's domain (integers).
    fn bench_level(k: u32, bins: u32) -> Self::Level;
}
macro_rules! bench_samples {
    ([] $($name:ident => $device:ty, $stored:ty, $level:ty, $vec:literal;)*) => {$(
        impl BenchSample for gpu_primitives::host_type!($name) {
            fn uniform(bits: u32) -> Self {
                bench_sample_value!($name, bits)
            }
            fn bench_level(k: u32, bins: u32) -> $level {
                bench_level!($level, <Self as HistogramSample>::LEVEL_DOMAIN, k, bins)
            }
        }
    )*};
}
/// A sample of type `$name` from 32 uniform bits.
macro_rules! bench_sample_value {
    (f16, $b:expr) => {
        half::f16::from_f32(unit($b))
    };
    (bf16, $b:expr) => {
        half::bf16::from_f32(unit($b))
    };
    (f32, $b:expr) => {
        unit($b)
    };
    (f64, $b:expr) => {
        unit($b) as f64
    };
    (u8, $b:expr) => {
        ($b >> 24) as u8
    };
    (u16, $b:expr) => {
        ($b >> 16) as u16
    };
    ($name:ident, $b:expr) => {
        $b as $name
    };
}
/// Level `k` of `bins`: over the integer domain, or over `[0, 1)`.
macro_rules! bench_level {
    (i64, $domain:expr, $k:expr, $bins:expr) => {{
        let (lo, hi) = $domain.expect("integer samples have a level domain");
        lo + ((hi - lo) as i128 * $k as i128 / $bins as i128) as i64
    }};
    ($level:ty, $domain:expr, $k:expr, $bins:expr) => {
        $k as $level / $bins as $level
    };
}
gpu_primitives_abi::histogram_sample_table!(bench_samples);

/// One timed compaction call, given the workspace, the count and the output.
type CompactionRun<'r, T> =
    dyn FnMut(&mut DeviceWorkspace, &mut DeviceBuffer<u64>, &mut DeviceVec<T>) -> Result<()> + 'r;

struct Bench<'g> {
    gpu: &'g Gpu,
    runs: usize,
    ops: Vec<String>,
    progress: ProgressBar,
    rows: Vec<BenchRow>,
}

impl Bench<'_> {
    /// Median times (µs) of `reduce_into` and `inclusive_scan` with `Op` over `view`.
    fn time_op<T: BenchElement, Op: gpu_primitives::device::Operator>(
        &self,
        view: gpu_primitives::device::DeviceView<'_, T>,
        output: &mut gpu_primitives::DeviceBuffer<T::Acc>,
        workspace: &mut DeviceWorkspace,
    ) -> Result<(f64, f64, f64)> {
        let reduce = median_micros(self.gpu, self.runs, || {
            device::reduce_into::<T, Op>(self.gpu, view, &mut *output, workspace)
        })?;
        let scan = median_micros(self.gpu, self.runs, || {
            device::inclusive_scan::<T, Op>(self.gpu, view, &mut *output, workspace)
        })?;
        let exclusive = median_micros(self.gpu, self.runs, || {
            device::exclusive_scan::<T, Op>(self.gpu, view, &mut *output, workspace)
        })?;
        Ok((reduce, scan, exclusive))
    }

    /// [`Bench::measure`] (or, with `compaction`, [`Bench::measure_compaction`]) for the type
    /// named `name` (checked by [`BenchConfig::validate`]); the arms are generated from the
    /// element table.
    fn measure_named(&mut self, name: &str, sizes: &[usize], compaction: bool) -> Result<()> {
        macro_rules! by_name {
            ([$bench:ident, $name_value:ident, $sizes:ident, $compaction:ident]
             $($name:ident => $device:ty, $stored:ty, $acc:ty, $vec:literal, $items:literal, $kind:ident;)*) => {
                match $name_value {
                    $(stringify!($name) if $compaction => $bench.measure_compaction::<gpu_primitives::host_type!($name)>($sizes),)*
                    $(stringify!($name) => $bench.measure::<gpu_primitives::host_type!($name)>($sizes),)*
                    other => Err(gpu_primitives::Error::InvalidArgument(format!("bench: unknown type {other}"))),
                }
            };
        }
        gpu_primitives_abi::element_table!(by_name, self, name, sizes, compaction)
    }

    /// One row.
    fn push<T: Element>(&mut self, algorithm: String, n: usize, time: f64, bytes: f64, copy: f64) {
        self.push_named(T::NAME, size_of::<T>(), algorithm, n, time, bytes, copy);
    }

    /// One row of type `dtype`, `size` bytes per element.
    #[allow(clippy::too_many_arguments)]
    fn push_named(
        &mut self,
        dtype: &str,
        size: usize,
        algorithm: String,
        n: usize,
        time: f64,
        bytes: f64,
        copy: f64,
    ) {
        let row = BenchRow::new(self.gpu, dtype, size, algorithm, n, time, bytes, copy);
        self.rows.push(row);
    }

    /// [`Bench::measure_segment_arg`] for the type named `name` when the segmented argmin has
    /// it (`segment_arg_table!`); nothing for the others.
    fn measure_segment_arg_named(&mut self, name: &str, sizes: &[usize]) -> Result<()> {
        macro_rules! by_name {
            ([$bench:ident, $name_value:ident, $sizes:ident] $($name:ident => $device:ty, $vec:literal;)*) => {
                match $name_value {
                    $(stringify!($name) => $bench.measure_segment_arg::<gpu_primitives::host_type!($name)>($sizes),)*
                    _ => Ok(()),
                }
            };
        }
        gpu_primitives_abi::segment_arg_table!(by_name, self, name, sizes)
    }

    /// Measure the segmented argmin over segments of 1000 items (the segment rows' values) and
    /// the copy at every n in `sizes`; the bytes are the input and offsets read and a value and
    /// `u32` index written per segment.
    fn measure_segment_arg<T: BenchElement + device::SegmentArgElement>(
        &mut self,
        sizes: &[usize],
    ) -> Result<()> {
        let max = *sizes.iter().max().unwrap_or(&0);
        let gpu = self.gpu;
        let values: Vec<T> = (0..max).map(T::pattern).collect();
        let input = DeviceVec::from_slice(gpu, &values)?;
        drop(values);
        let mut copy_target = gpu.alloc_zeroed::<T::Raw>(max)?;
        let mut best = gpu.alloc_zeroed::<T::Acc>(max.div_ceil(1000))?;
        let mut at = gpu.alloc_zeroed::<u32>(max.div_ceil(1000))?;
        let mut workspace = DeviceWorkspace::new();
        for &n in sizes {
            let copy = median_micros(gpu, self.runs, || {
                gpu.copy_device_to_device(input.raw(), &mut copy_target, n)
            })?;
            let offsets: Vec<u64> = (0..n.div_ceil(1000) as u64)
                .map(|s| s * 1000)
                .chain([n as u64])
                .collect();
            let d_offsets = gpu.upload(&offsets)?;
            let segments = device::SegmentOffsets::new(gpu, &d_offsets)?;
            let x = input.prefix(..n);
            let argmin = median_micros(gpu, self.runs, || {
                device::segmented_argmin(gpu, x, &segments, &mut best, &mut at, &mut workspace)
            })?;
            let argmax = median_micros(gpu, self.runs, || {
                device::segmented_argmax(gpu, x, &segments, &mut best, &mut at, &mut workspace)
            })?;
            let bytes = (n * size_of::<T>() + 8 * offsets.len()) as f64
                + segments.segments() as f64 * (size_of::<T::Acc>() + 4) as f64;
            for (name, time) in [
                ("segmented_argmin, 1000-item segments", argmin),
                ("segmented_argmax, 1000-item segments", argmax),
            ] {
                self.push::<T>(name.into(), n, time, bytes, copy);
            }
        }
        Ok(())
    }

    /// [`Bench::measure_histogram`] for the sample type named `name` (checked by
    /// [`BenchConfig::validate`]); the arms are generated from the sample table.
    fn measure_histogram_named(&mut self, name: &str, sizes: &[usize]) -> Result<()> {
        macro_rules! by_name {
            ([$bench:ident, $name_value:ident, $sizes:ident]
             $($name:ident => $device:ty, $stored:ty, $level:ty, $vec:literal;)*) => {
                match $name_value {
                    $(stringify!($name) => $bench.measure_histogram::<gpu_primitives::host_type!($name)>($sizes),)*
                    other => Err(gpu_primitives::Error::InvalidArgument(format!("bench: unknown sample type {other}"))),
                }
            };
        }
        gpu_primitives_abi::histogram_sample_table!(by_name, self, name, sizes)
    }

    /// Measure 256-bin even and range histograms of uniform samples, and the copy, at every n
    /// in `sizes` (u32 counters, as CUB's baseline).
    fn measure_histogram<S: BenchSample>(&mut self, sizes: &[usize]) -> Result<()> {
        const BINS: u32 = 256;
        let max = *sizes.iter().max().unwrap_or(&0);
        let gpu = self.gpu;
        let values: Vec<S> = (0..max).map(|i| S::uniform(hash(i))).collect();
        let input = gpu.upload(S::as_raw(&values))?;
        drop(values);
        let mut copy_target = gpu.alloc_zeroed::<S::Raw>(max)?;
        let mut counts = gpu.alloc_zeroed::<u32>(BINS as usize)?;
        let levels: Vec<S::Level> = (0..=BINS).map(|k| S::bench_level(k, BINS)).collect();
        let mut workspace = DeviceWorkspace::new();
        for &n in sizes {
            self.progress
                .set_message(format!("histogram {} n = 2^{}", S::NAME, n.trailing_zeros()));
            let copy = median_micros(gpu, self.runs, || {
                gpu.copy_device_to_device(&input, &mut copy_target, n)
            })?;
            let x = S::view(&input).slice(0..n);
            let even = median_micros(gpu, self.runs, || {
                device::histogram_even::<S, u32>(gpu, x, BINS, levels[0], levels[BINS as usize], &mut counts)
            })?;
            let range = median_micros(gpu, self.runs, || {
                device::histogram_range::<S, u32>(gpu, x, &levels, &mut counts, &mut workspace)
            })?;
            let size = size_of::<S::Raw>();
            for (name, time) in [
                ("histogram_even 256 bins", even),
                ("histogram_range 256 bins", range),
            ] {
                self.push_named(S::NAME, size, name.to_owned(), n, time, (n * size) as f64, copy);
            }
            self.progress.inc(1);
        }
        Ok(())
    }

    /// Measure the compactions and the copy at every n in `sizes`, each keeping about half.
    fn measure_compaction<T: BenchElement>(&mut self, sizes: &[usize]) -> Result<()> {
        let max = *sizes.iter().max().unwrap_or(&0);
        let gpu = self.gpu;
        let values: Vec<T> = (0..max).map(|i| T::uniform(hash(i))).collect();
        let input = DeviceVec::from_slice(gpu, &values)?;
        let pairs: Vec<T> = (0..max).map(|i| T::uniform(hash(i / 2))).collect();
        let runs_of_two = DeviceVec::from_slice(gpu, &pairs)?;
        drop((values, pairs));
        // Sorted keys with the runs of 2^28 sorted uniform 32-bit values: a repeat where
        // hash & 15 is 0 (one in 16).
        let mut k = 0u32;
        let keys: Vec<T> = (0..max)
            .map(|i| {
                k += (i > 0 && hash(i) & 15 != 0) as u32;
                T::key(k)
            })
            .collect();
        let sorted_keys = DeviceVec::from_slice(gpu, &keys)?;
        drop(keys);
        let mut lengths = gpu.alloc_zeroed::<u32>(max)?;
        let mut offsets = gpu.alloc_zeroed::<u32>(max / 2)?;
        let flag_bytes: Vec<u8> = (0..max).map(|i| ((hash(i) >> 7) & 1) as u8).collect();
        let flags = gpu.upload(&flag_bytes)?;
        drop(flag_bytes);
        let mut output = DeviceVec::<T>::zeroed(gpu, max)?;
        let mut copy_target = gpu.alloc_zeroed::<T::Raw>(max)?;
        let mut count = gpu.alloc_zeroed::<u64>(1)?;
        let mut workspace = DeviceWorkspace::new();
        let half = Predicate::less(T::median());
        for &n in sizes {
            self.progress
                .set_message(format!("compaction {} n = 2^{}", T::NAME, n.trailing_zeros()));
            let copy = median_micros(gpu, self.runs, || {
                gpu.copy_device_to_device(input.raw(), &mut copy_target, n)
            })?;
            let (x, pairs) = (input.prefix(..n), runs_of_two.prefix(..n));
            let f = gpu_primitives::device::DeviceView::from(&flags).slice(0..n);
            let runs = self.runs;
            let mut timed = |run: &mut CompactionRun<'_, T>| {
                let time = median_micros(gpu, runs, || run(&mut workspace, &mut count, &mut output))?;
                Ok::<_, gpu_primitives::Error>((time, gpu.download(&count)?[0] as usize))
            };
            let size = size_of::<T>() as f64;
            let (t, kept) = timed(&mut |ws, c, out| device::select_if(gpu, x, half, out, c, ws))?;
            let select_if = (t, (n + kept) as f64 * size);
            let (t, kept) = timed(&mut |ws, c, out| device::select_flagged(gpu, x, f, out, c, ws))?;
            let select_flagged = (t, (n + kept) as f64 * size + n as f64);
            let (t, kept) = timed(&mut |ws, c, out| device::unique(gpu, pairs, out, c, ws))?;
            let unique = (t, (n + kept) as f64 * size);
            let (t, kept) = timed(&mut |ws, c, out| device::partition_if(gpu, x, half, out, c, ws))?;
            let partition_if = (t, (2 * n + 2 * (n - kept)) as f64 * size);
            let (t, kept) = timed(&mut |ws, c, out| device::partition_flagged(gpu, x, f, out, c, ws))?;
            let partition_flagged = (t, (2 * n + 2 * (n - kept)) as f64 * size + n as f64);
            let sorted = sorted_keys.prefix(..n);
            let (t, runs) =
                timed(&mut |ws, c, out| device::run_length_encode(gpu, sorted, out, &mut lengths, c, ws))?;
            let encode = (t, n as f64 * size + runs as f64 * (size + 4.0));
            let (t, runs) = timed(&mut |ws, c, _| {
                device::non_trivial_runs(gpu, sorted, &mut offsets, &mut lengths, c, ws)
            })?;
            let non_trivial = (t, n as f64 * size + runs as f64 * 8.0);
            for (name, (time, bytes)) in [
                ("select_if half", select_if),
                ("select_flagged half", select_flagged),
                ("unique half", unique),
                ("partition_if half", partition_if),
                ("partition_flagged half", partition_flagged),
                ("run_length_encode", encode),
                ("non_trivial_runs", non_trivial),
            ] {
                self.push::<T>(name.to_owned(), n, time, bytes, copy);
            }
            self.progress.inc(1);
        }
        drop((input, runs_of_two, sorted_keys, flags, output, copy_target));
        self.measure_segments::<T>(sizes)
    }

    /// Measure the segmented reduce and scans (sum) and the copy at every n in `sizes`: by
    /// offsets over segments of 1000 items and over one huge segment after n / 256 segments of
    /// one item; by key over `u32` keys whose runs are those of sorted uniform 32-bit values (a
    /// repeat where the hash & 15 is 0, as the run-length rows).
    fn measure_segments<T: BenchElement>(&mut self, sizes: &[usize]) -> Result<()> {
        let max = *sizes.iter().max().unwrap_or(&0);
        let gpu = self.gpu;
        let values: Vec<T> = (0..max).map(T::pattern).collect();
        let input = DeviceVec::from_slice(gpu, &values)?;
        drop(values);
        let mut k = 0u32;
        let keys: Vec<u32> = (0..max)
            .map(|i| {
                k += (i > 0 && hash(i) & 15 != 0) as u32;
                k
            })
            .collect();
        let keys = gpu.upload(&keys)?;
        // Runs of 1 to 15 equal keys (8 on average), a key its run's number: the reduce and
        // unique by key rows, as scripts/cub-baseline's `by-key` mode.
        let mut runs_of_8 = Vec::with_capacity(max);
        for run in 0u32.. {
            if runs_of_8.len() >= max {
                break;
            }
            let len = (1 + hash(run as usize) as usize % 15).min(max - runs_of_8.len());
            runs_of_8.extend(std::iter::repeat_n(run, len));
        }
        let runs_of_8 = gpu.upload(&runs_of_8)?;
        let mut unique_keys = gpu.alloc_zeroed::<u32>(max)?;
        let mut firsts = DeviceVec::<T>::zeroed(gpu, max)?;
        let mut count = gpu.alloc_zeroed::<u64>(1)?;
        let mut output = gpu.alloc_zeroed::<T::Acc>(max)?;
        let mut copy_target = gpu.alloc_zeroed::<T::Raw>(max)?;
        let mut workspace = DeviceWorkspace::new();
        let size = size_of::<T>() as f64;
        let acc = size_of::<T::Acc>() as f64;
        for &n in sizes {
            self.progress
                .set_message(format!("segments {} n = 2^{}", T::NAME, n.trailing_zeros()));
            let copy = median_micros(gpu, self.runs, || {
                gpu.copy_device_to_device(input.raw(), &mut copy_target, n)
            })?;
            let x = input.prefix(..n);
            let tiny = n / 256;
            let layouts: [(&str, Vec<u64>); 2] = [
                (
                    "1000-item segments",
                    (0..n.div_ceil(1000) as u64)
                        .map(|s| s * 1000)
                        .chain([n as u64])
                        .collect(),
                ),
                ("uneven segments", (0..=tiny as u64).chain([n as u64]).collect()),
            ];
            for (layout, offsets) in layouts {
                let d_offsets = gpu.upload(&offsets)?;
                let segments = device::SegmentOffsets::new(gpu, &d_offsets)?;
                let offset_bytes = 8.0 * offsets.len() as f64;
                let reduce = median_micros(gpu, self.runs, || {
                    device::segmented_reduce::<T, Sum>(gpu, x, &segments, &mut output, &mut workspace)
                })?;
                let max = median_micros(gpu, self.runs, || {
                    device::segmented_reduce::<T, Max>(gpu, x, &segments, &mut output, &mut workspace)
                })?;
                let scan = median_micros(gpu, self.runs, || {
                    device::segmented_inclusive_scan::<T, Sum>(gpu, x, &segments, &mut output, &mut workspace)
                })?;
                let exclusive = median_micros(gpu, self.runs, || {
                    device::segmented_exclusive_scan::<T, Sum>(gpu, x, &segments, &mut output, &mut workspace)
                })?;
                let reduced = n as f64 * size + offset_bytes + segments.segments() as f64 * acc;
                self.push::<T>(
                    format!("segmented_reduce sum, {layout}"),
                    n,
                    reduce,
                    reduced,
                    copy,
                );
                self.push::<T>(format!("segmented_reduce max, {layout}"), n, max, reduced, copy);
                let scanned = n as f64 * (size + acc) + offset_bytes;
                self.push::<T>(format!("segmented_scan sum, {layout}"), n, scan, scanned, copy);
                self.push::<T>(
                    format!("segmented_exclusive_scan sum, {layout}"),
                    n,
                    exclusive,
                    scanned,
                    copy,
                );
            }
            let k = gpu_primitives::device::DeviceView::from(&keys).slice(0..n);
            let by_key = median_micros(gpu, self.runs, || {
                device::inclusive_scan_by_key::<u32, T, Sum>(gpu, k, x, &mut output, &mut workspace)
            })?;
            let exclusive_by_key = median_micros(gpu, self.runs, || {
                device::exclusive_scan_by_key::<u32, T, Sum>(gpu, k, x, &mut output, &mut workspace)
            })?;
            for (name, time) in [
                ("inclusive_scan_by_key sum", by_key),
                ("exclusive_scan_by_key sum", exclusive_by_key),
            ] {
                self.push::<T>(name.into(), n, time, n as f64 * (4.0 + size + acc), copy);
            }
            let k = gpu_primitives::device::DeviceView::from(&runs_of_8).slice(0..n);
            type ByKeyRun<'r> =
                dyn FnMut(&mut DeviceWorkspace, &mut DeviceBuffer<u64>) -> gpu_primitives::Result<()> + 'r;
            let mut timed = |run: &mut ByKeyRun<'_>| {
                let time = median_micros(gpu, self.runs, || run(&mut workspace, &mut count))?;
                Ok::<_, gpu_primitives::Error>((time, gpu.download(&count)?[0] as f64))
            };
            let (sum, runs) = timed(&mut |ws, c| {
                device::reduce_by_key::<u32, T, Sum>(gpu, k, x, &mut unique_keys, &mut output, c, ws)
            })?;
            let (max_time, _) = timed(&mut |ws, c| {
                device::reduce_by_key::<u32, T, Max>(gpu, k, x, &mut unique_keys, &mut output, c, ws)
            })?;
            let (unique, _) = timed(&mut |ws, c| {
                device::unique_by_key::<u32, T>(gpu, k, x, &mut unique_keys, &mut firsts, c, ws)
            })?;
            for (name, time, value_bytes) in [
                ("reduce_by_key sum, runs of 8", sum, acc),
                ("reduce_by_key max, runs of 8", max_time, acc),
                ("unique_by_key, runs of 8", unique, size),
            ] {
                let bytes = n as f64 * (4.0 + size) + runs * (4.0 + value_bytes) + 8.0;
                self.push::<T>(name.into(), n, time, bytes, copy);
            }
            self.progress.inc(1);
        }
        Ok(())
    }

    /// Measure reduce, scan and copy of every n in `sizes` over one input of the largest size.
    fn measure<T: BenchElement>(&mut self, sizes: &[usize]) -> Result<()> {
        let max = *sizes.iter().max().unwrap_or(&0);
        let host: Vec<T> = (0..max).map(T::pattern).collect();
        let input = DeviceVec::from_slice(self.gpu, &host)?;
        drop(host);
        let mut output = self.gpu.alloc_zeroed::<T::Acc>(max.max(1))?;
        let mut copy_target = self.gpu.alloc_zeroed::<T::Raw>(max)?;
        let mut workspace = DeviceWorkspace::new();
        for &n in sizes {
            self.progress
                .set_message(format!("{} n = 2^{}", T::NAME, n.trailing_zeros()));
            let view = input.prefix(..n);
            let bytes_in = (n * size_of::<T>()) as f64;
            let bytes_out = (n * size_of::<T::Acc>()) as f64;
            let copy = median_micros(self.gpu, self.runs, || {
                self.gpu.copy_device_to_device(input.raw(), &mut copy_target, n)
            })?;
            for op in &self.ops.clone() {
                let (reduce, scan, exclusive) = match op.as_str() {
                    "min" => self.time_op::<T, Min>(view, &mut output, &mut workspace)?,
                    "max" => self.time_op::<T, Max>(view, &mut output, &mut workspace)?,
                    _ => self.time_op::<T, Sum>(view, &mut output, &mut workspace)?,
                };
                for (algorithm, time, bytes) in [
                    (format!("reduce {op}"), reduce, bytes_in),
                    (format!("inclusive scan {op}"), scan, bytes_in + bytes_out),
                    (format!("exclusive scan {op}"), exclusive, bytes_in + bytes_out),
                ] {
                    self.push::<T>(algorithm, n, time, bytes, copy);
                }
            }
            self.progress.inc(1);
        }
        Ok(())
    }
}

/// Run the benchmark; shows a progress bar on a terminal.
///
/// # Errors
/// [`Error::InvalidArgument`](gpu_primitives::Error::InvalidArgument) for an unknown type or operator name;
/// device errors (out of memory for the largest size, among others).
///
/// # Example
/// ```no_run
/// use gpu_primitives_cli::bench::{self, BenchConfig};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let rows = bench::run(&gpu, &BenchConfig { max_log2: 20, other_types_log2: None, ..BenchConfig::default() })?;
/// bench::print_table(&rows);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn run(gpu: &Gpu, config: &BenchConfig) -> Result<Vec<BenchRow>> {
    config
        .validate()
        .map_err(gpu_primitives::Error::InvalidArgument)?;
    let sizes: Vec<usize> = (config.min_log2..=config.max_log2)
        .step_by(config.step_log2.max(1) as usize)
        .map(|k| 1usize << k)
        .collect();
    let others = config
        .other_types_log2
        .map(|k| vec![1usize << k])
        .unwrap_or_default();
    let other_types: Vec<&str> = if config.types.is_empty() {
        TYPES
            .iter()
            .copied()
            .filter(|t| *t != config.sweep_type)
            .collect()
    } else {
        config.types.iter().map(String::as_str).collect()
    };
    let compaction_sizes: Vec<usize> = config.compaction_log2.iter().map(|k| 1usize << k).collect();
    let steps = if config.reduce_scan {
        sizes.len() + other_types.len() * others.len()
    } else {
        0
    } + (2 * config.compaction_types.len() + config.histogram_types.len())
        * compaction_sizes.len();
    let progress = ProgressBar::new(steps as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut bench = Bench {
        gpu,
        runs: config.runs,
        ops: config.ops.clone(),
        progress,
        rows: Vec::new(),
    };
    if config.reduce_scan {
        bench.measure_named(&config.sweep_type, &sizes, false)?;
        if !others.is_empty() {
            for t in other_types {
                bench.measure_named(t, &others, false)?;
            }
        }
    }
    for t in &config.compaction_types {
        bench.measure_named(t, &compaction_sizes, true)?;
        bench.measure_segment_arg_named(t, &compaction_sizes)?;
    }
    for t in &config.histogram_types {
        bench.measure_histogram_named(t, &compaction_sizes)?;
    }
    for t in &config.row_types {
        bench.progress.set_message(format!("rows {t}"));
        bench.rows.extend(rows::run_named(gpu, t, config.runs)?);
    }
    let sort_sizes: Vec<usize> = config.sort_log2.iter().map(|k| 1usize << k).collect();
    let largest = sort_sizes.iter().max().map(|&n| vec![n]).unwrap_or_default();
    for (i, t) in config.sort_types.iter().enumerate() {
        bench.progress.set_message(format!("sort {t}"));
        let (sizes, values) = if i == 0 {
            (&sort_sizes, &config.sort_values[..])
        } else {
            (&largest, &[][..])
        };
        bench
            .rows
            .extend(sort::run_named(gpu, t, sizes, values, config.runs)?);
    }
    if !config.sort_types.is_empty() {
        bench.progress.set_message("segmented sort");
        bench.rows.extend(sort::run_segmented(gpu, config.runs)?);
    }
    bench.progress.finish_and_clear();
    Ok(bench.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_checks_the_sort_types_and_sizes() {
        assert_eq!(BenchConfig::default().validate(), Ok(()));
        let config = |types: &[&str], log2: &[u32]| BenchConfig {
            sort_types: types.iter().map(|t| t.to_string()).collect(),
            sort_log2: log2.to_vec(),
            ..BenchConfig::default()
        };
        assert_eq!(config(&["u8", "bf16", "i64"], &[31]).validate(), Ok(()));
        let err = config(&["u128"], &[20]).validate().unwrap_err();
        assert!(
            err.contains("unknown sort key type \"u128\"") && err.contains("bf16"),
            "{err}"
        );
        assert!(config(&["u32"], &[32]).validate().is_err());
    }
}
