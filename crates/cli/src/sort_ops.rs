//! The CLI's `sort` command on `.npy` files: read the keys, radix sort them on the GPU
//! (`device::sort_keys`, or `device::argsort` for the permutation), ascending or descending,
//! over all bits or a bit range, report, optionally write the sorted keys (or the `u32`
//! indices), and (`--check`) compare them bit for bit with the CPU reference
//! (`reference::sort`, a stable comparison sort).

use crate::cli_ops::CliError;
use crate::npy;
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
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

impl SortJob {
    /// The sort's options for keys of `K`, and the compared bits, checked.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] for a bit range that is reversed or past the key's width. An
    /// empty range is valid: the keys keep their order (argsort gives the identity).
    pub fn options<K: SortKey>(&self) -> Result<(SortOptions, Range<u32>), Error> {
        let order = if self.descending {
            SortOptions::descending()
        } else {
            SortOptions::ascending()
        };
        let options = match (self.begin_bit, self.end_bit) {
            (None, None) => order,
            (begin, end) => order.bits(begin.unwrap_or(0)..end.unwrap_or(K::BITS)),
        };
        let bits = options.compared_bits::<K>()?;
        Ok((options, bits))
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

/// A key type the command reads and writes.
trait CliKey: SortKey + npyz::Deserialize + npyz::Serialize + npyz::AutoSerialize {}
impl<K: SortKey + npyz::Deserialize + npyz::Serialize + npyz::AutoSerialize> CliKey for K {}

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

fn run_typed<K: CliKey>(gpu: &Gpu, host: &[K], job: &SortJob) -> Result<bool, CliError> {
    let (options, bits) = job.options::<K>()?;
    let n = host.len();
    let d_keys = gpu.upload(K::as_raw(host))?;
    let mut d_sorted = gpu.alloc_zeroed::<K::Raw>(n)?;
    let mut d_indices = if job.argsort {
        Some(gpu.alloc_zeroed::<u32>(n)?)
    } else {
        None
    };
    let workspace = &mut DeviceWorkspace::new();
    let mut sort = || {
        let (keys_in, keys_out) = (key_view::<K>(&d_keys, n), key_view_mut::<K>(&mut d_sorted, n));
        match &mut d_indices {
            Some(indices) => device::argsort(gpu, keys_in, keys_out, indices, options, workspace),
            None => device::sort_keys(gpu, keys_in, keys_out, options, workspace),
        }
    };
    // An untimed call reserves the workspace (the alternate keys, the tiles' status); the
    // timed one sorts the unchanged input again (out of place).
    sort()?;
    let ((), elapsed) = gpu.time(&mut sort)?;
    let sorted: Vec<K> = K::from_raw(&gpu.download(&d_sorted)?).to_vec();
    let indices = d_indices.as_ref().map(|d| gpu.download(d)).transpose()?;
    let what = if job.argsort { "argsort" } else { "sort_keys" };
    let order = if job.descending { "descending" } else { "ascending" };
    let range = if bits == (0..K::BITS) {
        String::new()
    } else {
        format!(", bits {}..{}", bits.start, bits.end)
    };
    println!(
        "{what} {order}{range} of {n} {} keys on {}: {} ({:.1} µs, after an untimed call that reserved the workspace)",
        K::NAME,
        gpu.info().name,
        ends(&sorted),
        elapsed.as_secs_f64() * 1e6
    );
    if let Some(indices) = &indices {
        println!("indices: {}", ends(indices));
    }
    if let Some(path) = &job.output {
        match &indices {
            Some(indices) => {
                npy::write(path, indices)?;
                println!("wrote {} ({} indices, u32)", path.display(), indices.len());
            }
            None => {
                npy::write(path, &sorted)?;
                println!("wrote {} ({} keys, {})", path.display(), sorted.len(), K::NAME);
            }
        }
    }
    if !job.check {
        return Ok(true);
    }
    let expected_indices = reference::sort::argsort(host, options);
    let expected: Vec<K> = expected_indices.iter().map(|&i| host[i as usize]).collect();
    let difference = first_difference(K::as_raw(&sorted), K::as_raw(&expected)).or(indices
        .as_ref()
        .and_then(|indices| first_difference(indices, &expected_indices)));
    match difference {
        None => println!("CPU reference (stable sort): identical"),
        Some(at) => println!("CPU reference (stable sort): DIFFERENT (first at position {at} of {n})"),
    }
    Ok(difference.is_none())
}

/// Run `sort` on the file of `job` (read, and the bit range checked, before the GPU is
/// opened). Returns whether `--check` found the GPU's keys (and indices) equal to the CPU's
/// (true without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: the file, a bad bit range, GPU errors.
pub fn run(job: &SortJob) -> Result<bool, CliError> {
    let input = npy::open(&job.input)?;
    let bar = indicatif::ProgressBar::hidden();
    crate::with_npy_type!(input.dtype, T => {
        let host = input.read::<T>(&bar)?;
        job.options::<T>()?;
        let gpu = gpu_primitives::open_gpu(job.device)?;
        run_typed::<T>(&gpu, &host, job)
    })
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
