//! The CLI's `sort` command on `.npy` files: read the keys (a 1-D array, or a 2-D one whose rows
//! are sorted each on its own, torch's `sort(dim=-1)`), radix sort them on the GPU
//! (`device::sort_keys` / `device::argsort`; per row `device::segmented_sort_keys` /
//! `device::segmented_argsort`), ascending or descending, over all bits or a bit range, or take
//! each row's first `k` of that order (`device::top_k`, torch's `topk`), report, optionally write
//! the sorted keys (or the `u32` indices), and (`--check`) compare them bit for bit with the CPU
//! reference (`reference::sort`, a stable comparison sort).

use crate::cli_ops::{CliError, time_warm};
use crate::npy::{self, NpyStored};
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, SortKey, SortOptions};
use gpu_primitives::{DeviceBuffer, Error, Gpu, reference};
use std::ops::Range;
use std::path::PathBuf;

/// What `sort` should do.
#[derive(Clone, Debug)]
pub struct SortJob {
    /// The keys' `.npy` (1-D).
    pub input: PathBuf,
    /// Largest key first (NaNs first for floats).
    pub descending: bool,
    /// The permutation that sorts the keys (`u32` indices) instead of the sorted keys.
    pub argsort: bool,
    /// The first compared bit of the keys' ordered bits (CUB's `begin_bit`; `None`: 0).
    pub begin_bit: Option<u32>,
    /// The bit after the last compared one (CUB's `end_bit`; `None`: the key's width).
    pub end_bit: Option<u32>,
    /// Where to write the sorted keys (or, with `argsort`, the indices).
    pub output: Option<PathBuf>,
    /// Each row's first `k` keys of the sort (the `k` largest with `descending`, torch's
    /// `topk`; else the `k` smallest) instead of the whole sort; over whole keys (no bit range).
    pub top_k: Option<usize>,
    /// The keys are bf16, read and written as their bits (`u16` `.npy` files).
    pub bf16_bits: bool,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// What the command sorts: `rows` of `cols` keys each (a 1-D array is one row of its length),
/// and how many of each row it keeps (`cols`, or `k` for `--top-k`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortShape {
    /// Rows sorted each on its own (1 for a 1-D array).
    pub rows: usize,
    /// Keys per row.
    pub cols: usize,
    /// Keys written per row.
    pub keep: usize,
    /// Whether the input was 2-D (the output is then `rows x keep`, else 1-D).
    pub matrix: bool,
}

impl SortJob {
    /// The sort's options for keys of `K`, and the compared bits, checked.
    ///
    /// # Errors
    /// [`Error::InvalidBitRange`] for a bit range that is reversed or past the key's width. An
    /// empty range is valid: the keys keep their order (argsort gives the identity).
    pub fn options<K: SortKey>(&self) -> Result<(SortOptions, Range<u32>), Error> {
        let order = SortOptions::descending_if(self.descending);
        let options = match (self.begin_bit, self.end_bit) {
            (None, None) => order,
            (begin, end) => order.bits(begin.unwrap_or(0)..end.unwrap_or(K::BITS)),
        };
        let bits = options.compared_bits::<K>()?;
        Ok((options, bits))
    }

    /// The rows of an array of `shape` (1-D or 2-D), and the keys kept per row, checked.
    ///
    /// # Errors
    /// [`Error::KPastInput`] for `--top-k` past the row's length; [`Error::UnsupportedArgument`]
    /// for `--top-k` with a bit range (the top-k compares whole keys); [`Error::TooManyKeys`] for
    /// rows past the most keys one sort takes.
    pub fn shape(&self, shape: &[usize]) -> Result<SortShape, Error> {
        let (rows, cols) = match *shape {
            [rows, cols] => (rows, cols),
            _ => (1, shape.iter().product()),
        };
        let most = gpu_primitives_abi::layout::SORT_MAX_KEYS;
        if cols > most {
            return Err(Error::TooManyKeys {
                what: "a row of the sort",
                keys: cols,
                max: most,
            });
        }
        let keep = match self.top_k {
            None => cols,
            Some(_) if self.begin_bit.is_some() || self.end_bit.is_some() => {
                return Err(Error::UnsupportedArgument {
                    what: "--top-k",
                    argument: "--begin-bit or --end-bit (the top-k compares whole keys; they are for the sort alone)",
                });
            }
            Some(k) if k > cols => {
                return Err(Error::KPastInput {
                    what: "--top-k",
                    k,
                    most: cols,
                });
            }
            Some(k) => k,
        };
        Ok(SortShape {
            rows,
            cols,
            keep,
            matrix: shape.len() == 2,
        })
    }
}

/// `n` stored keys of `buffer` (`n` at most its length) as a view of keys of `K`.
///
/// # Panics
/// When `n` is past the buffer's end.
pub fn key_view<K: SortKey>(buffer: &DeviceBuffer<K::Raw>, n: usize) -> DeviceView<'_, K> {
    assert!(n <= buffer.len(), "{n} keys of a buffer of {}", buffer.len());
    // SAFETY: the first `n` (checked) elements of a live buffer of keys as the device stores
    // them (`K::Raw`, which the sort reads as `K`), borrowed for the view's lifetime.
    unsafe { DeviceView::from_raw_parts(buffer.as_device_ptr().as_raw(), n) }
}

/// `n` stored keys of `buffer` as a writable view of keys of `K`.
///
/// # Panics
/// When `n` is past the buffer's end.
pub fn key_view_mut<K: SortKey>(buffer: &mut DeviceBuffer<K::Raw>, n: usize) -> DeviceViewMut<'_, K> {
    assert!(n <= buffer.len(), "{n} keys of a buffer of {}", buffer.len());
    // SAFETY: as `key_view`, borrowed mutably: nothing else uses the range while the view lives.
    unsafe { DeviceViewMut::from_raw_parts(buffer.as_device_ptr().as_raw(), n) }
}

/// A key type the command reads and writes (as a file stores it: [`NpyStored`]).
trait CliKey: SortKey + NpyStored {}
impl<K: SortKey + NpyStored> CliKey for K {}

/// The first four and the last two of `values`, as `[a, b, c, d, ..., y, z]`.
fn ends<T: std::fmt::Debug>(values: &[T]) -> String {
    let show = |v: &[T]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
    if values.len() <= 6 {
        format!("[{}]", show(values))
    } else {
        format!(
            "[{}, ..., {}]",
            show(&values[..4]),
            show(&values[values.len() - 2..])
        )
    }
}

/// The first position where `found` and `expected` differ bit for bit (not by `==`, under
/// which a NaN differs from itself), if any.
fn first_difference<T: bytemuck::Pod>(found: &[T], expected: &[T]) -> Option<usize> {
    (found.len() != expected.len())
        .then_some(found.len().min(expected.len()))
        .or_else(|| {
            found
                .iter()
                .zip(expected)
                .position(|(f, e)| bytemuck::bytes_of(f) != bytemuck::bytes_of(e))
        })
}

/// The keys and indices the GPU produced for `job` on `host` (shaped by `shape`), and the time
/// of the timed call, µs.
struct Sorted<K> {
    keys: Vec<K>,
    indices: Option<Vec<u32>>,
    micros: f64,
}

fn sort_on_gpu<K: CliKey>(
    gpu: &Gpu,
    host: &[K],
    shape: SortShape,
    options: SortOptions,
    job: &SortJob,
) -> Result<Sorted<K>, CliError> {
    let (n, kept) = (host.len(), shape.rows * shape.keep);
    let d_keys = gpu.upload(K::as_raw(host))?;
    let mut d_sorted = gpu.alloc_zeroed::<K::Raw>(kept)?;
    let mut d_indices = if job.argsort || job.top_k.is_some() {
        Some(gpu.alloc_zeroed::<u32>(kept)?)
    } else {
        None
    };
    let workspace = &mut DeviceWorkspace::new();
    let mut sort = || {
        let (keys_in, keys_out) = (key_view::<K>(&d_keys, n), key_view_mut::<K>(&mut d_sorted, kept));
        let cols = shape.cols;
        match (&mut d_indices, job.top_k) {
            (Some(indices), Some(k)) => device::top_k(
                gpu,
                keys_in,
                cols,
                k,
                job.descending,
                keys_out,
                indices,
                workspace,
            ),
            (Some(indices), None) if shape.matrix => {
                device::segmented_argsort(gpu, keys_in, keys_out, indices, cols, options, workspace)
            }
            (Some(indices), None) => device::argsort(gpu, keys_in, keys_out, indices, options, workspace),
            (None, _) if shape.matrix => {
                device::segmented_sort_keys(gpu, keys_in, keys_out, cols, options, workspace)
            }
            (None, _) => device::sort_keys(gpu, keys_in, keys_out, options, workspace),
        }
    };
    // The untimed call also reserves the workspace (the alternate keys, the tiles' status); the
    // timed one sorts the unchanged input again (out of place).
    let ((), elapsed) = time_warm(gpu, &mut sort)?;
    Ok(Sorted {
        keys: K::from_raw(&gpu.download(&d_sorted)?).to_vec(),
        indices: d_indices.as_ref().map(|d| gpu.download(d)).transpose()?,
        micros: elapsed.as_secs_f64() * 1e6,
    })
}

/// What the CPU reference gives for `job` (sorting by `options`) on `host`: the kept keys and,
/// per kept key, its index within its row.
fn sort_on_cpu<K: CliKey>(
    host: &[K],
    shape: SortShape,
    options: SortOptions,
    job: &SortJob,
) -> (Vec<K>, Vec<u32>) {
    if let Some(k) = job.top_k {
        return reference::sort::top_k(host, shape.cols, k, job.descending);
    }
    let offsets: Vec<u64> = (0..=shape.rows).map(|r| (r * shape.cols) as u64).collect();
    let indices = reference::sort::segmented_argsort(host, &offsets, options);
    let keys = indices
        .iter()
        .enumerate()
        .map(|(i, &j)| host[i / shape.cols.max(1) * shape.cols + j as usize])
        .collect();
    (keys, indices)
}

fn run_typed<K: CliKey>(gpu: &Gpu, host: &[K], shape: SortShape, job: &SortJob) -> Result<bool, CliError> {
    let (options, bits) = job.options::<K>()?;
    let found = sort_on_gpu(gpu, host, shape, options, job)?;
    let what = match (job.top_k, shape.matrix, job.argsort) {
        (Some(k), ..) => format!(
            "top_k (k = {k}, {})",
            if job.descending { "largest" } else { "smallest" }
        ),
        (None, true, true) => "segmented_argsort".into(),
        (None, true, false) => "segmented_sort_keys".into(),
        (None, false, true) => "argsort".into(),
        (None, false, false) => "sort_keys".into(),
    };
    let order = match (job.top_k, job.descending) {
        (Some(_), _) => "",
        (None, true) => " descending",
        (None, false) => " ascending",
    };
    let range = if bits == (0..K::BITS) {
        String::new()
    } else {
        format!(", bits {}..{}", bits.start, bits.end)
    };
    let of = if shape.matrix {
        format!("{} rows x {}", shape.rows, shape.cols)
    } else {
        shape.cols.to_string()
    };
    println!(
        "{what}{order}{range} of {of} {} keys on {}: {} ({:.1} µs, after an untimed call that reserved the workspace)",
        K::NAME,
        gpu.info().name,
        ends(&found.keys),
        found.micros
    );
    if let Some(indices) = &found.indices {
        println!("indices: {}", ends(indices));
    }
    if let Some(path) = &job.output {
        let write =
            |what: &str, count: usize, ty: &str| println!("wrote {} ({count} {what}, {ty})", path.display());
        let (rows, cols) = (shape.rows, shape.keep);
        match (&found.indices, job.argsort) {
            (Some(indices), true) if shape.matrix => npy::write_matrix(path, rows, cols, indices)?,
            (Some(indices), true) => npy::write(path, indices)?,
            _ if shape.matrix => npy::write_matrix(path, rows, cols, K::to_stored(&found.keys))?,
            _ => npy::write(path, K::to_stored(&found.keys))?,
        }
        if job.argsort {
            write("indices", rows * cols, "u32");
        } else if job.bf16_bits {
            write("keys", rows * cols, "bf16 as u16 bits");
        } else {
            write("keys", rows * cols, K::NAME);
        }
    }
    if !job.check {
        return Ok(true);
    }
    let (expected, expected_indices) = sort_on_cpu(host, shape, options, job);
    let difference = first_difference(K::as_raw(&found.keys), K::as_raw(&expected)).or(found
        .indices
        .as_ref()
        .and_then(|indices| first_difference(indices, &expected_indices)));
    let kept = shape.rows * shape.keep;
    match difference {
        None => println!("CPU reference (stable sort): identical"),
        Some(at) => println!("CPU reference (stable sort): DIFFERENT (first at position {at} of {kept})"),
    }
    Ok(difference.is_none())
}

/// Run `sort` on the file of `job` (read, and the bit range, `--top-k` and `--output` checked,
/// before the GPU is opened). Returns whether `--check` found the GPU's keys (and indices) equal to the
/// CPU's (true without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: the file (1-D or 2-D), a bad bit range or `--top-k`,
/// GPU errors.
pub fn run(job: &SortJob) -> Result<bool, CliError> {
    if let Some(output) = &job.output {
        npy::check_outputs(&[("--output", output)], &[&job.input])?;
    }
    let input = npy::open_vector_or_matrix(&job.input)?;
    let shape = job.shape(&input.shape)?;
    let bar = indicatif::ProgressBar::hidden();
    macro_rules! read_and_run {
        ($t:ty) => {{
            job.options::<$t>()?;
            let host = <$t>::from_stored(input.read(&bar)?);
            let gpu = gpu_primitives::open_gpu(job.device)?;
            run_typed::<$t>(&gpu, &host, shape, job)
        }};
    }
    if job.bf16_bits {
        crate::with_npy_type!(input, "sort --bf16-bits", [u16], _T => read_and_run!(half::bf16))
    } else {
        crate::with_npy_type!(input, "sort", [f32, f64, i32, u32, i64, u64, f16, u8, u16], T => read_and_run!(T))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(begin_bit: Option<u32>, end_bit: Option<u32>, argsort: bool) -> SortJob {
        SortJob {
            input: PathBuf::new(),
            descending: true,
            argsort,
            begin_bit,
            end_bit,
            output: None,
            top_k: None,
            bf16_bits: false,
            check: false,
            device: 0,
        }
    }

    #[test]
    fn the_bit_range_defaults_to_the_whole_key_and_is_checked() {
        let (options, bits) = job(None, None, false).options::<f32>().unwrap();
        assert_eq!((options.is_descending(), bits), (true, 0..32));
        assert_eq!(job(Some(8), None, false).options::<u64>().unwrap().1, 8..64);
        assert_eq!(job(None, Some(4), false).options::<half::f16>().unwrap().1, 0..4);
        let err = job(None, Some(40), false)
            .options::<i32>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("0..40") && err.contains("32 bits of i32"), "{err}");
        assert!(job(Some(9), Some(8), false).options::<u32>().is_err());
        // An empty range sorts nothing: the keys keep their order, argsort gives the identity.
        assert_eq!(job(Some(8), Some(8), true).options::<u32>().unwrap().1, 8..8);
    }

    #[test]
    fn shapes_and_top_k_are_checked_before_the_gpu() {
        let plain = job(None, None, false);
        let shape = |rows, cols, keep, matrix| SortShape {
            rows,
            cols,
            keep,
            matrix,
        };
        assert_eq!(plain.shape(&[7]).unwrap(), shape(1, 7, 7, false));
        assert_eq!(plain.shape(&[3, 5]).unwrap(), shape(3, 5, 5, true));
        let top = |k| SortJob {
            top_k: Some(k),
            ..job(None, None, false)
        };
        assert_eq!(top(2).shape(&[3, 5]).unwrap(), shape(3, 5, 2, true));
        assert_eq!(top(0).shape(&[4]).unwrap(), shape(1, 4, 0, false));
        let err = top(6).shape(&[3, 5]).unwrap_err();
        assert!(matches!(err, Error::KPastInput { k: 6, most: 5, .. }), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("--top-k: k = 6 is past the 5 keys"), "{err}");
        let with_bits = SortJob {
            top_k: Some(1),
            ..job(Some(4), None, false)
        };
        let err = with_bits.shape(&[8]).unwrap_err();
        assert!(
            matches!(err, Error::UnsupportedArgument { what: "--top-k", .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("whole keys"), "{err}");
        let most = gpu_primitives_abi::layout::SORT_MAX_KEYS;
        let err = plain.shape(&[2, most + 1]).unwrap_err();
        assert!(
            matches!(err, Error::TooManyKeys { keys, max, .. } if keys == most + 1 && max == most),
            "{err:?}"
        );
    }

    #[test]
    fn the_cpu_side_sorts_each_row_and_keeps_the_first_k() {
        // Two rows of 4; equal keys keep their column order (stable).
        let host = [3.0f32, -1.0, 3.0, 0.5, 2.0, 2.0, f32::NAN, -0.0];
        let rows = job(None, None, true); // descending
        let shape = rows.shape(&[2, 4]).unwrap();
        let (keys, indices) = sort_on_cpu(&host, shape, rows.options::<f32>().unwrap().0, &rows);
        assert_eq!(indices, [0, 2, 3, 1, 2, 0, 1, 3]);
        assert_eq!(
            first_difference(&keys, &[3.0, 3.0, 0.5, -1.0, f32::NAN, 2.0, 2.0, -0.0]),
            None
        );
        let top = SortJob {
            top_k: Some(2),
            descending: false,
            ..job(None, None, true)
        };
        let (keys, indices) = sort_on_cpu(
            &host,
            top.shape(&[2, 4]).unwrap(),
            top.options::<f32>().unwrap().0,
            &top,
        );
        assert_eq!((keys, indices), (vec![-1.0, 0.5, -0.0, 2.0], vec![1, 3, 3, 0]));
        // A 1-D array is one row: the whole sort.
        let flat = job(None, None, false);
        let (_, indices) = sort_on_cpu(
            &host[..4],
            flat.shape(&[4]).unwrap(),
            flat.options::<f32>().unwrap().0,
            &flat,
        );
        assert_eq!(indices, [0, 2, 3, 1]);
    }

    #[test]
    fn ends_and_differences() {
        assert_eq!(ends(&[1u32, 2, 3]), "[1, 2, 3]");
        assert_eq!(ends(&(0u32..10).collect::<Vec<_>>()), "[0, 1, 2, 3, ..., 8, 9]");
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 2, 3], &[1, 5, 3]), Some(1));
        assert_eq!(first_difference(&[1, 2], &[1, 2, 3]), Some(2));
        // Bit for bit: a NaN is its own match, -0.0 is not +0.0's.
        assert_eq!(first_difference(&[f32::NAN, 1.0], &[f32::NAN, 1.0]), None);
        assert_eq!(first_difference(&[-0.0f32], &[0.0]), Some(0));
    }
}
