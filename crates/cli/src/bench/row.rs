//! A benchmark's measurement ([`BenchRow`]): the row of the table the benchmark prints, and
//! its CSV and JSON files; the benchmark's [`hash`] of an index, the inputs' source.

use gpu_primitives::Gpu;
use serde::{Deserialize, Serialize};

/// One measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchRow {
    /// GPU name.
    pub gpu: String,
    /// `"reduce OP"`, `"inclusive scan OP"` or `"exclusive scan OP"`, OP one of `sum`, `min`,
    /// `max`; or a compaction, `"select_if half"`, `"select_flagged half"`, `"unique half"`,
    /// `"partition_if half"`, `"partition_flagged half"`, `"run_length_encode"`,
    /// `"non_trivial_runs"`; or `"histogram_even 256 bins"`, `"histogram_range 256 bins"`; or
    /// the segmented rows, `"segmented_reduce sum, <layout>"`, `"segmented_reduce max,
    /// <layout>"`, `"segmented_scan sum, <layout>"`, `"segmented_exclusive_scan sum, <layout>"`
    /// (layouts `1000-item segments`, `uneven segments`), `"inclusive_scan_by_key sum"`,
    /// `"exclusive_scan_by_key sum"`, `"segmented_argmin, 1000-item segments"`,
    /// `"segmented_argmax, 1000-item segments"`; or the row operations ([`rows`](super::rows)),
    /// `"<op> <rows>x<cols>"`, op one of `softmax`, `log_softmax`, `layer_norm`, `rms_norm`,
    /// `softmax_backward`, `log_softmax_backward`; or the radix sort ([`sort`](super::sort), the key type
    /// as `dtype`), `"sort_keys"`, `"sort_pairs u32 values"`.
    pub algorithm: String,
    /// Element type.
    pub dtype: String,
    /// Elements.
    pub n: usize,
    /// Median time of one call, µs.
    pub time_us: f64,
    /// Bytes moved / time, GB/s (10^9 bytes per second).
    pub gb_per_s: f64,
    /// Median time of a device-to-device copy of n elements, µs.
    pub copy_us: f64,
    /// Copy's read + write bytes / time, GB/s.
    pub copy_gb_per_s: f64,
    /// `time_us / copy_us`.
    pub time_over_copy: f64,
}

impl BenchRow {
    /// A measurement on `gpu` of `algorithm` over `n` elements of `dtype` (`size` bytes each):
    /// `time` µs moving `bytes`, beside a copy of the `n` elements taking `copy` µs.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        dtype: &str,
        size: usize,
        algorithm: String,
        n: usize,
        time: f64,
        bytes: f64,
        copy: f64,
    ) -> Self {
        BenchRow {
            gpu: gpu.info().name.clone(),
            algorithm,
            dtype: dtype.to_owned(),
            n,
            time_us: time,
            gb_per_s: bytes / time / 1e3,
            copy_us: copy,
            copy_gb_per_s: 2.0 * (n * size) as f64 / copy / 1e3,
            time_over_copy: time / copy,
        }
    }
}

/// The benchmark's hash of an index (also in `scripts/cub-baseline/cub_baseline.cu`): uniform
/// 32-bit values for the compaction inputs.
pub fn hash(i: usize) -> u32 {
    let mut h = (i as u32).wrapping_mul(0x9E37_79B1);
    h ^= h >> 15;
    h = h.wrapping_mul(0x85EB_CA77);
    h ^ (h >> 13)
}

/// Print the rows as a table, with the GPU's name first.
pub fn print_table(rows: &[BenchRow]) {
    if let Some(first) = rows.first() {
        println!("GPU: {}", first.gpu);
    }
    println!(
        "{:<42} {:>5} {:>12} {:>12} {:>10} {:>12} {:>10} {:>10}",
        "algorithm", "type", "n", "time (µs)", "GB/s", "copy (µs)", "copy GB/s", "time/copy"
    );
    for r in rows {
        println!(
            "{:<42} {:>5} {:>12} {:>12.2} {:>10.1} {:>12.2} {:>10.1} {:>10.3}",
            r.algorithm, r.dtype, r.n, r.time_us, r.gb_per_s, r.copy_us, r.copy_gb_per_s, r.time_over_copy
        );
    }
}

/// Write the rows as CSV (header line first), atomically
/// ([`crate::output::replace_atomically`]: a failure leaves `path` as it was).
///
/// # Errors
/// I/O errors, as text.
pub fn write_csv(path: &std::path::Path, rows: &[BenchRow]) -> std::result::Result<(), String> {
    crate::output::replace_atomically(path, |temporary| {
        let mut w = csv::Writer::from_path(temporary)?;
        for r in rows {
            w.serialize(r)?;
        }
        w.flush()
    })
    .map_err(|e| format!("{}: {e}", path.display()))
}

/// Read rows written by [`write_csv`].
///
/// # Errors
/// I/O and format errors, as text.
pub fn read_csv(path: &std::path::Path) -> std::result::Result<Vec<BenchRow>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    r.deserialize()
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Write the rows as a JSON array, atomically (as [`write_csv`]).
///
/// # Errors
/// I/O errors, as text.
pub fn write_json(path: &std::path::Path, rows: &[BenchRow]) -> std::result::Result<(), String> {
    let text = serde_json::to_string_pretty(rows).map_err(|e| e.to_string())?;
    crate::output::replace_atomically(path, |temporary| std::fs::write(temporary, text))
        .map_err(|e| format!("{}: {e}", path.display()))
}
