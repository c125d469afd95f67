//! The radix sort's benchmark: `sort_keys` of uniformly random keys (every bit pattern equally
//! likely, from the benchmark's [`hash`]; NaNs included for floats), and `sort_pairs` of them
//! with `u32` (or `u64`) values, beside a device-to-device copy of the keys (and the values) of the same
//! run. Both sort out of place from the unchanged input, so every timed call sorts the same
//! random keys; the median of `runs` timed calls after one untimed call that reserves the
//! workspace ([`median_micros`]). The bytes are those a sort must move at least, each key (and
//! value) read once and written once: `2 n (key bytes + value bytes)`, the copy's; the time over
//! the copy's is then the sort's cost in copies (onesweep reads and writes the keys once per
//! 8-bit digit, and reads them once more for the histogram). [`print_rates`] gives the rows'
//! rate in keys per second.

use super::row::{BenchRow, hash};
use super::timer::median_micros;
use crate::sort_ops::{key_view, key_view_mut};
use gpu_primitives::device::{
    self, DeviceView, DeviceViewMut, DeviceWorkspace, SegmentOffsets, SortKey, SortOptions,
};
use gpu_primitives::runtime::DeviceCopy;
use gpu_primitives::{DeviceBuffer, Gpu, Result};

/// Rows and columns of the segmented sort rows (the shape, torch's `sort(dim=1)`).
pub const SEGMENTED_SHAPE: (usize, usize) = (65_536, 4096);
/// The `k` of the top-k row.
pub const TOP_K: usize = 8;
/// The algorithm of the segmented rows: keys alone.
pub const SEGMENTED_KEYS: &str = "segmented_sort_keys 65536 rows";
/// The segmented rows with each key's column (torch's `sort` returns both).
pub const SEGMENTED_ARGSORT: &str = "segmented_argsort 65536 rows";
/// The short rows (2^28 keys in rows of 32: the warp sort's one row), keys alone.
pub const SEGMENTED_SHORT_KEYS: &str = "segmented_sort_keys 8388608 rows of 32";
/// The short rows with each key's column.
pub const SEGMENTED_SHORT_ARGSORT: &str = "segmented_argsort 8388608 rows of 32";
/// The rows of 256 (the warp sort's longest segments), keys alone.
pub const SEGMENTED_256_KEYS: &str = "segmented_sort_keys 1048576 rows of 256";
/// The rows of 256 with each key's column.
pub const SEGMENTED_256_ARGSORT: &str = "segmented_argsort 1048576 rows of 256";
/// The rows of 512 (past the warp sort: a block's tile each), keys alone.
pub const SEGMENTED_512_KEYS: &str = "segmented_sort_keys 524288 rows of 512";
/// The rows of 512 with each key's column.
pub const SEGMENTED_512_ARGSORT: &str = "segmented_argsort 524288 rows of 512";
/// Rows of 384 (a tile of 512 three quarters full), keys alone: the first whole rows of the
/// keys.
pub const SEGMENTED_384_KEYS: &str = "segmented_sort_keys 699050 rows of 384";
/// The rows of 384 with each key's column.
pub const SEGMENTED_384_ARGSORT: &str = "segmented_argsort 699050 rows of 384";
/// Rows of 768, keys alone: the first whole rows of the keys.
pub const SEGMENTED_768_KEYS: &str = "segmented_sort_keys 349525 rows of 768";
/// The rows of 768 with each key's column.
pub const SEGMENTED_768_ARGSORT: &str = "segmented_argsort 349525 rows of 768";
/// Rows of 1024, keys alone.
pub const SEGMENTED_1024_KEYS: &str = "segmented_sort_keys 262144 rows of 1024";
/// The rows of 1024 with each key's column.
pub const SEGMENTED_1024_ARGSORT: &str = "segmented_argsort 262144 rows of 1024";
/// Rows of 1536, keys alone: the first whole rows of the keys.
pub const SEGMENTED_1536_KEYS: &str = "segmented_sort_keys 174762 rows of 1536";
/// The rows of 1536 with each key's column.
pub const SEGMENTED_1536_ARGSORT: &str = "segmented_argsort 174762 rows of 1536";
/// Rows of 2048, keys alone.
pub const SEGMENTED_2048_KEYS: &str = "segmented_sort_keys 131072 rows of 2048";
/// The rows of 2048 with each key's column.
pub const SEGMENTED_2048_ARGSORT: &str = "segmented_argsort 131072 rows of 2048";
/// The segmented sort's rows of the [`SEGMENTED_SHAPE`] keys: row length, then the rows of
/// keys alone and of the argsort. A row length that does not divide the keys sorts their
/// first whole rows (the row's `n` says how many keys).
pub const SEGMENTED_ROWS: [(usize, &str, &str); 9] = [
    (SEGMENTED_SHAPE.1, SEGMENTED_KEYS, SEGMENTED_ARGSORT),
    (32, SEGMENTED_SHORT_KEYS, SEGMENTED_SHORT_ARGSORT),
    (256, SEGMENTED_256_KEYS, SEGMENTED_256_ARGSORT),
    (384, SEGMENTED_384_KEYS, SEGMENTED_384_ARGSORT),
    (512, SEGMENTED_512_KEYS, SEGMENTED_512_ARGSORT),
    (768, SEGMENTED_768_KEYS, SEGMENTED_768_ARGSORT),
    (1024, SEGMENTED_1024_KEYS, SEGMENTED_1024_ARGSORT),
    (1536, SEGMENTED_1536_KEYS, SEGMENTED_1536_ARGSORT),
    (2048, SEGMENTED_2048_KEYS, SEGMENTED_2048_ARGSORT),
];
/// The segmented sort by offsets of the [`SEGMENTED_SHAPE`] keys as one segment of
/// [`LARGE_SEGMENT`] keys, then segments of the shape's row length: the large one goes through
/// the device-wide sort, the others a block each.
pub const SEGMENTED_LARGE_KEYS: &str = "segmented_sort_keys by offsets, 2^24 then 61440 of 4096";
/// The large segment's keys in [`SEGMENTED_LARGE_KEYS`].
pub const LARGE_SEGMENT: usize = 1 << 24;
/// The top-k rows (values and columns of the 8 largest per row), keys of uniform bits.
pub const TOP_K_ROWS: &str = "top_k k=8 65536 rows";
/// As [`TOP_K_ROWS`], keys uniform in [0, 1) (torch's `rand`, the input of
/// `scripts/torch-sort.py`): most keys share their top digits.
pub const TOP_K_ROWS_UNIT: &str = "top_k k=8 65536 rows [0,1)";
/// The whole array's top-k (`top_k_of_all`, largest) of the [`SEGMENTED_SHAPE`] keys uniform in
/// [0, 1) as one array of 2^28, for k = 2^10 and 2^20 (torch's `topk(x.flatten(), k)` in
/// `scripts/torch-sort.py`).
pub const TOP_K_OF_ALL: &[(&str, usize)] = &[
    ("top_k_of_all k=1024 of 2^28 [0,1)", 1 << 10),
    ("top_k_of_all k=2^20 of 2^28 [0,1)", 1 << 20),
];

/// The key types the benchmark knows (the library's sort key table).
pub const SORT_TYPES: &[&str] = device::SORT_KEY_NAMES;

/// The algorithm of the `sort_keys` rows.
pub const SORT_KEYS: &str = "sort_keys";
/// The algorithm of the `sort_pairs` rows with `u32` values (the key type is the row's type).
pub const SORT_PAIRS: &str = "sort_pairs u32 values";
/// The algorithm of the `sort_pairs` rows with `u64` values.
pub const SORT_PAIRS_U64: &str = "sort_pairs u64 values";
/// The value types of the `sort_pairs` rows: `u32` (the sort's 4-byte values) and `u64` (its
/// 8-byte values), each key's index.
pub const SORT_VALUE_TYPES: &[&str] = &["u32", "u64"];

/// 64 uniform bits for key `i`: `hash(i)` above `hash(i | 2^31)` (distinct indices for
/// `i < 2^31`).
fn uniform_bits(i: usize) -> u64 {
    (hash(i) as u64) << 32 | hash(i | 1 << 31) as u64
}

/// Key `i` of the benchmark's input, as stored: the top bits of [`uniform_bits`] (`hash(i)`
/// itself for 32-bit keys).
fn uniform_key<K: SortKey>(i: usize) -> K::Raw {
    let size = size_of::<K::Raw>();
    let top = uniform_bits(i) >> (64 - 8 * size);
    bytemuck::pod_read_unaligned(&top.to_le_bytes()[..size])
}

/// `sort_keys` of keys of `K` at every n in `sizes`, over one input of the largest size, and
/// `sort_pairs` of them with values of each type in `values` ([`SORT_VALUE_TYPES`]).
fn run<K: SortKey>(gpu: &Gpu, sizes: &[usize], values: &[String], runs: usize) -> Result<Vec<BenchRow>> {
    let max = *sizes.iter().max().unwrap_or(&0);
    let keys: Vec<K::Raw> = (0..max).map(uniform_key::<K>).collect();
    let d_keys = gpu.upload(&keys)?;
    drop(keys);
    let mut d_sorted = gpu.alloc_zeroed::<K::Raw>(max)?;
    let mut copy_keys = gpu.alloc_zeroed::<K::Raw>(max)?;
    let mut workspace = DeviceWorkspace::new();
    let key_bytes = size_of::<K::Raw>();
    let mut out = Vec::new();
    for &n in sizes {
        let keys = key_view::<K>(&d_keys, n);
        let copy = median_micros(gpu, runs, || {
            gpu.copy_device_to_device(&d_keys, &mut copy_keys, n)
        })?;
        let time = median_micros(gpu, runs, || {
            device::sort_keys(
                gpu,
                keys,
                key_view_mut::<K>(&mut d_sorted, n),
                SortOptions::ascending(),
                &mut workspace,
            )
        })?;
        let bytes = (2 * n * key_bytes) as f64;
        out.push(BenchRow::new(
            gpu,
            K::NAME,
            key_bytes,
            SORT_KEYS.into(),
            n,
            time,
            bytes,
            copy,
        ));
    }
    let mut sorted = Sorted {
        keys: &d_keys,
        keys_out: &mut d_sorted,
        copy_keys: &mut copy_keys,
        workspace: &mut workspace,
    };
    for value in values {
        out.extend(match value.as_str() {
            "u32" => sorted.pairs::<K, u32>(gpu, sizes, SORT_PAIRS, runs)?,
            "u64" => sorted.pairs::<K, u64>(gpu, sizes, SORT_PAIRS_U64, runs)?,
            other => {
                let known = SORT_VALUE_TYPES.join(", ");
                let message = format!("bench: unknown sort value type {other}; known: {known}");
                return Err(gpu_primitives::Error::InvalidArgument(message));
            }
        });
    }
    Ok(out)
}

/// The buffers [`run`]'s pairs rows share with its keys rows: the keys (of the largest size),
/// their sorted order, their copy, the workspace.
struct Sorted<'a, R: DeviceCopy> {
    keys: &'a DeviceBuffer<R>,
    keys_out: &'a mut DeviceBuffer<R>,
    copy_keys: &'a mut DeviceBuffer<R>,
    workspace: &'a mut DeviceWorkspace,
}

impl<R: DeviceCopy> Sorted<'_, R> {
    /// `sort_pairs` rows (named `algorithm`) of the keys with values of `V` (each key's index) at
    /// every n in `sizes`, beside a copy of the keys and the values.
    fn pairs<K: SortKey<Raw = R>, V: DeviceCopy + TryFrom<usize>>(
        &mut self,
        gpu: &Gpu,
        sizes: &[usize],
        algorithm: &str,
        runs: usize,
    ) -> Result<Vec<BenchRow>> {
        let max = *sizes.iter().max().unwrap_or(&0);
        let values: Vec<V> = (0..max)
            .map(V::try_from)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| {
                gpu_primitives::Error::InvalidArgument(format!("bench: {max} indices past the value type"))
            })?;
        let d_values = gpu.upload(&values)?;
        drop(values);
        let mut d_values_out = gpu.alloc_zeroed::<V>(max)?;
        let mut copy_values = gpu.alloc_zeroed::<V>(max)?;
        let mut out = Vec::new();
        for &n in sizes {
            let copy = median_micros(gpu, runs, || {
                gpu.copy_device_to_device(self.keys, self.copy_keys, n)?;
                gpu.copy_device_to_device(&d_values, &mut copy_values, n)
            })?;
            let keys = key_view::<K>(self.keys, n);
            let values = DeviceView::from(&d_values).slice(0..n);
            let time = median_micros(gpu, runs, || {
                let keys_out = key_view_mut::<K>(self.keys_out, n);
                let values_out = DeviceViewMut::from(&mut d_values_out);
                device::sort_pairs(
                    gpu,
                    keys,
                    values,
                    keys_out,
                    values_out,
                    SortOptions::ascending(),
                    self.workspace,
                )
            })?;
            let size = size_of::<K::Raw>() + size_of::<V>();
            out.push(BenchRow::new(
                gpu,
                K::NAME,
                size,
                algorithm.into(),
                n,
                time,
                (2 * n * size) as f64,
                copy,
            ));
        }
        Ok(out)
    }
}

/// The sort rows of the key type named `name` (one of [`SORT_TYPES`]) at every n in `sizes`:
/// `sort_keys`, and `sort_pairs` with values of each type in `values` ([`SORT_VALUE_TYPES`]).
///
/// # Errors
/// An unknown name; device errors (out of memory: the pairs hold four arrays of keys and
/// three of values, the sort's alternate buffers included).
pub fn run_named(
    gpu: &Gpu,
    name: &str,
    sizes: &[usize],
    values: &[String],
    runs: usize,
) -> Result<Vec<BenchRow>> {
    macro_rules! by_name {
        ([$gpu:ident, $name_value:ident, $sizes:ident, $values:ident, $runs:ident]
         $($name:ident => $device:ty, $stored:ty, $bits:ty, $items:literal, $keys_items:literal,
           $v4_items:literal, $v8_items:literal, $small:tt;)*) => {
            match $name_value {
                $(stringify!($name) => run::<gpu_primitives::host_type!($name)>($gpu, $sizes, $values, $runs),)*
                other => Err(gpu_primitives::Error::InvalidArgument(format!("bench: unknown sort key type {other}"))),
            }
        };
    }
    gpu_primitives_abi::sort_key_table!(by_name, gpu, name, sizes, values, runs)
}

/// The segmented rows, f32 keys in [`SEGMENTED_SHAPE`] and in the other [`SEGMENTED_ROWS`]:
/// `segmented_sort_keys`, `segmented_argsort` (keys and columns); in the first shape also
/// [`SEGMENTED_LARGE_KEYS`] and `top_k` of [`TOP_K`] (largest; of the keys and of
/// keys uniform in [0, 1), [`TOP_K_ROWS_UNIT`]), and [`TOP_K_OF_ALL`], beside the copy
/// of the keys. Bytes: the keys read and written (and the `u32` columns written); top-k reads
/// the keys and writes `k` values and columns per row.
///
/// # Errors
/// Device errors.
pub fn run_segmented(gpu: &Gpu, runs: usize) -> Result<Vec<BenchRow>> {
    let (rows, cols) = SEGMENTED_SHAPE;
    let n = rows * cols;
    let keys: Vec<f32> = (0..n).map(uniform_key::<f32>).collect();
    let d_keys = gpu.upload(&keys)?;
    drop(keys);
    let mut d_sorted = gpu.alloc_zeroed::<f32>(n)?;
    let mut d_indices = gpu.alloc_zeroed::<u32>(n)?;
    let mut copy_keys = gpu.alloc_zeroed::<f32>(n)?;
    let mut workspace = DeviceWorkspace::new();
    let options = SortOptions::ascending();
    let keys = key_view::<f32>(&d_keys, n);
    let copy = median_micros(gpu, runs, || {
        gpu.copy_device_to_device(&d_keys, &mut copy_keys, n)
    })?;
    let mut out = Vec::new();
    // Every row of this function: f32 keys beside the copy of all n (the rows of lengths that do
    // not divide n sort at most 1024 keys fewer: 4 millionths of it).
    let mut row_of = |algorithm: &str, keys: usize, time: f64, bytes: usize| {
        out.push(BenchRow::new(
            gpu,
            "f32",
            4,
            algorithm.into(),
            keys,
            time,
            bytes as f64,
            copy,
        ))
    };
    for (row_len, keys_row, argsort_row) in SEGMENTED_ROWS {
        let whole = n / row_len * row_len;
        let keys = key_view::<f32>(&d_keys, whole);
        let time = median_micros(gpu, runs, || {
            device::segmented_sort_keys(
                gpu,
                keys,
                key_view_mut::<f32>(&mut d_sorted, whole),
                row_len,
                options,
                &mut workspace,
            )
        })?;
        row_of(keys_row, whole, time, 8 * whole);
        let time = median_micros(gpu, runs, || {
            let sorted = key_view_mut::<f32>(&mut d_sorted, whole);
            let indices = key_view_mut::<u32>(&mut d_indices, whole);
            device::segmented_argsort(gpu, keys, sorted, indices, row_len, options, &mut workspace)
        })?;
        row_of(argsort_row, whole, time, 12 * whole);
    }
    let mut row = |algorithm: &str, time: f64, bytes: usize| row_of(algorithm, n, time, bytes);
    let offsets: Vec<u64> = std::iter::once(0)
        .chain((LARGE_SEGMENT..=n).step_by(cols))
        .map(|o| o as u64)
        .collect();
    let d_offsets = gpu.upload(&offsets)?;
    let segments = SegmentOffsets::new(gpu, &d_offsets)?;
    let time = median_micros(gpu, runs, || {
        let sorted = key_view_mut::<f32>(&mut d_sorted, n);
        device::segmented_sort_keys(gpu, keys, sorted, &segments, options, &mut workspace)
    })?;
    row(SEGMENTED_LARGE_KEYS, time, 8 * n);
    let time = median_micros(gpu, runs, || {
        let values = key_view_mut::<f32>(&mut d_sorted, rows * TOP_K);
        let indices = key_view_mut::<u32>(&mut d_indices, rows * TOP_K);
        device::top_k(gpu, keys, cols, TOP_K, true, values, indices, &mut workspace)
    })?;
    let bytes = 4 * n + 8 * rows * TOP_K;
    row(TOP_K_ROWS, time, bytes);
    // The same keys' top 24 bits as a fraction: uniform in [0, 1), 2^-24 apart.
    let unit: Vec<f32> = (0..n)
        .map(|i| (uniform_bits(i) >> 40) as f32 / (1u32 << 24) as f32)
        .collect();
    let d_unit = gpu.upload(&unit)?;
    drop(unit);
    let time = median_micros(gpu, runs, || {
        let values = key_view_mut::<f32>(&mut d_sorted, rows * TOP_K);
        let indices = key_view_mut::<u32>(&mut d_indices, rows * TOP_K);
        let keys = key_view::<f32>(&d_unit, n);
        device::top_k(gpu, keys, cols, TOP_K, true, values, indices, &mut workspace)
    })?;
    row(TOP_K_ROWS_UNIT, time, bytes);
    let most = TOP_K_OF_ALL.iter().map(|&(_, k)| k).max().unwrap_or(0);
    let mut d_top_indices = gpu.alloc_zeroed::<u64>(most)?;
    for &(name, k) in TOP_K_OF_ALL {
        let time = median_micros(gpu, runs, || {
            let values = key_view_mut::<f32>(&mut d_sorted, k);
            let keys = key_view::<f32>(&d_unit, n);
            device::top_k_of_all(gpu, keys, k, true, 0, values, &mut d_top_indices, &mut workspace)
        })?;
        // Bytes: one read of the keys and the k values and indices written (each pass of the
        // radix select reads the keys again).
        row(name, time, 4 * n + 12 * k);
    }
    Ok(out)
}

/// The rate of a sort row, in 10^9 keys per second (`None` for the other rows).
pub fn gkeys_per_s(row: &BenchRow) -> Option<f64> {
    [
        SORT_KEYS,
        SORT_PAIRS,
        SORT_PAIRS_U64,
        SEGMENTED_KEYS,
        SEGMENTED_ARGSORT,
        SEGMENTED_SHORT_KEYS,
        SEGMENTED_SHORT_ARGSORT,
        SEGMENTED_256_KEYS,
        SEGMENTED_256_ARGSORT,
        TOP_K_ROWS,
        TOP_K_ROWS_UNIT,
    ]
    .into_iter()
    .chain(TOP_K_OF_ALL.iter().map(|&(name, _)| name))
    .any(|name| name == row.algorithm)
    .then(|| row.n as f64 / row.time_us / 1e3)
}

/// Print the sort rows' rates (Gkeys/s) under the table, if there are sort rows.
pub fn print_rates(rows: &[BenchRow]) {
    let rates: Vec<(&BenchRow, f64)> = rows.iter().filter_map(|r| Some((r, gkeys_per_s(r)?))).collect();
    if rates.is_empty() {
        return;
    }
    println!();
    println!("{:<42} {:>5} {:>12} {:>12}", "sort", "keys", "n", "Gkeys/s");
    for (r, rate) in rates {
        println!("{:<42} {:>5} {:>12} {:>12.3}", r.algorithm, r.dtype, r.n, rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_hash_bits() {
        assert_eq!(uniform_key::<u32>(5), hash(5));
        assert_eq!(uniform_key::<f32>(5).to_bits(), hash(5));
        assert_eq!(
            uniform_key::<u64>(5),
            (hash(5) as u64) << 32 | hash(5 | 1 << 31) as u64
        );
        assert_eq!(uniform_key::<half::f16>(5), (hash(5) >> 16) as u16);
        assert_eq!(uniform_key::<u8>(5), (hash(5) >> 24) as u8);
    }

    #[test]
    fn rates_are_keys_per_nanosecond() {
        let row = |algorithm: &str| BenchRow {
            gpu: "test GPU".into(),
            algorithm: algorithm.into(),
            dtype: "u32".into(),
            n: 1 << 20,
            time_us: 1000.0,
            gb_per_s: 0.0,
            copy_us: 0.0,
            copy_gb_per_s: 0.0,
            time_over_copy: 0.0,
        };
        assert_eq!(gkeys_per_s(&row(SORT_KEYS)), Some(1048576.0 / 1000.0 / 1e3));
        assert!(gkeys_per_s(&row(SORT_PAIRS)).is_some());
        assert_eq!(gkeys_per_s(&row("reduce sum")), None);
    }
}
