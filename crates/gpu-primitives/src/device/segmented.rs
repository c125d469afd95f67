//! Segmented reduce over a batch of equal-length rows.

use super::element::{DeviceView, DeviceViewMut, Element, Operator};
use super::{DEVICE_SHARED_BYTES, REDUCE_BLOCK};
use crate::{Error, LaunchConfig, OnStream, Result};
use gpu_primitives_abi::params::SegmentedReduceParams;

/// `output[r]` = `Op` over row `r` of `input`, seen as `input.len() / row_len` rows of `row_len`
/// elements (row-major; the shape of softmax and LayerNorm statistics). One block per row,
/// blocks striding over rows past 8 per multiprocessor. Stream-ordered (no synchronisation).
/// `output` may be longer than the number of rows; the rest is left alone.
///
/// # Errors
/// [`Error::InvalidLaunch`] for `row_len == 0` with a non-empty input, or a length that is not a
/// whole number of rows; [`Error::LengthMismatch`] for an output shorter than the number of rows;
/// all before any launch. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 10.0, 20.0, 30.0])?; // 2 rows of 3
/// let mut sums = gpu.alloc_zeroed::<f32>(2)?;
/// device::segmented_reduce::<f32, Sum>(&gpu, &x, 3, &mut sums)?;
/// assert_eq!(gpu.download(&sums)?, [6.0, 60.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_reduce<'a, 'o, 'g, T: Element, Op: Operator>(
    on: impl Into<OnStream<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    row_len: usize,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
) -> Result<()> {
    let (on, input, output) = (on.into(), input.into(), output.into());
    if input.len == 0 {
        return Ok(());
    }
    if row_len == 0 || input.len % row_len != 0 {
        return Err(Error::InvalidLaunch(format!(
            "segmented_reduce: {} elements are not a whole number of rows of {row_len}",
            input.len
        )));
    }
    let rows = input.len / row_len;
    if output.len() < rows {
        return Err(Error::LengthMismatch {
            what: "segmented_reduce: output",
            expected: rows,
            found: output.len(),
        });
    }
    let kernel = crate::module(on.gpu)?.kernel::<SegmentedReduceParams<T::Raw, T::Acc>>(&format!(
        "device_segmented_reduce_{}_{}",
        T::NAME,
        Op::NAME
    ))?;
    let grid = rows.min(8 * on.gpu.info().multiprocessors as usize) as u32;
    let config = LaunchConfig::new(grid, REDUCE_BLOCK).with_shared_mem(DEVICE_SHARED_BYTES);
    let params = SegmentedReduceParams {
        input: input.address as *const T::Raw,
        row_len,
        rows,
        output: output.address as *mut T::Acc,
    };
    // SAFETY: `input` holds rows * row_len elements, `output` at least `rows` values (checked
    // above), as `SegmentedReduceParams` requires.
    unsafe { on.stream.launch(&kernel, config, &params) }
}
