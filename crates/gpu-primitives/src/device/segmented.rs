//! Segmented reduce: one value per segment, the segments equal-length rows or given by CSR
//! offsets.

use super::DEVICE_SHARED_BYTES;
use super::element::{Bound, DeviceView, DeviceViewMut, Element, Operator, check_bound};
use super::segmented_scan::{Family, Heads, SegmentOffsets, check_fit, launch};
use super::workspace::DeviceWorkspace;
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families;
use gpu_primitives_abi::params::SegmentedReduceParams;

/// The segments of a [`segmented_reduce`]: equal-length rows (`From<usize>`, the row length)
/// or CSR offsets (`From<&SegmentOffsets>`).
#[derive(Clone, Copy)]
pub enum Segments<'s> {
    /// Consecutive rows of this many elements (row-major: the shape of softmax and LayerNorm
    /// statistics).
    Rows(usize),
    /// Segment `s` is `offsets[s] .. offsets[s + 1]`.
    Offsets(SegmentOffsets<'s>),
}

impl Segments<'_> {
    /// The bound of the offsets' view (none for rows).
    pub(super) fn bound(&self) -> Bound {
        match self {
            Segments::Rows(_) => Bound::default(),
            Segments::Offsets(offsets) => offsets.offsets().bound,
        }
    }
}

impl From<usize> for Segments<'_> {
    fn from(row_len: usize) -> Self {
        Segments::Rows(row_len)
    }
}

impl<'s> From<&SegmentOffsets<'s>> for Segments<'s> {
    fn from(offsets: &SegmentOffsets<'s>) -> Self {
        Segments::Offsets(*offsets)
    }
}

/// `output[s]` = `Op` over segment `s` of `input`. Stream-ordered (no synchronisation).
/// `output` may be longer than the number of segments; the rest is left alone.
///
/// - **Rows** (`segments` a row length): `input.len() / row_len` rows; one block per row, blocks
///   striding over rows past 8 per multiprocessor. Deterministic.
/// - **Offsets** ([`SegmentOffsets`]): any lengths, empty segments giving the identity (`0`,
///   `+inf` / the largest integer for [`Min`](super::Min), `-inf` / the smallest for
///   [`Max`](super::Max)). One pass over the items, balanced whatever the lengths (the
///   segmented scan of [`segmented_inclusive_scan`](super::segmented_inclusive_scan), each
///   segment's total written at its last item); a `workspace` is needed for its tile status.
///   Float sums can differ in the last bits from run to run (where the look-back stops).
///
/// # Errors
/// Rows: [`Error::NotWholeRows`] for `row_len == 0` with a non-empty input, or a length that is
/// not a whole number of rows. Offsets: [`Error::InvalidOffsets`] when the last offset is past the
/// input. Both: [`Error::LengthMismatch`] for an output shorter than the number of segments. All
/// before any launch. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Max, SegmentOffsets, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let mut workspace = DeviceWorkspace::new();
/// let x = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 10.0, 20.0, 30.0])?; // 2 rows of 3
/// let mut sums = gpu.alloc_zeroed::<f32>(2)?;
/// device::segmented_reduce::<f32, Sum>(&gpu, &x, 3, &mut sums, &mut workspace)?;
/// assert_eq!(gpu.download(&sums)?, [6.0, 60.0]);
///
/// let offsets = DeviceVec::from_slice(&gpu, &[0u64, 1, 1, 6])?; // [0, 1), [1, 1), [1, 6)
/// let segments = SegmentOffsets::new(&gpu, &offsets)?;
/// let mut maxima = gpu.alloc_zeroed::<f32>(3)?;
/// device::segmented_reduce::<f32, Max>(&gpu, &x, &segments, &mut maxima, &mut workspace)?;
/// assert_eq!(gpu.download(&maxima)?, [1.0, f32::NEG_INFINITY, 30.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_reduce<'a, 'o, 'g, 's, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    segments: impl Into<Segments<'s>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, input, output, segments) = (on.into(), input.into(), output.into(), segments.into());
    check_bound(
        &on,
        "segmented_reduce",
        &[input.bound, output.bound, segments.bound()],
    )?;
    match segments {
        Segments::Rows(row_len) => reduce_rows::<T, Op>(on, input, row_len, output),
        Segments::Offsets(offsets) => {
            check_fit("segmented_reduce", &offsets, input.len)?;
            let segments = offsets.segments();
            check_output(output.len(), segments)?;
            if segments == 0 {
                return Ok(());
            }
            let heads = Heads::Offsets { segments: &offsets };
            launch::<T, Op>(on, Family::Reduce, input, heads, output.address, workspace)
        }
    }
}

fn check_output(found: usize, segments: usize) -> Result<()> {
    if found < segments {
        return Err(Error::LengthMismatch {
            what: "segmented_reduce: output",
            expected: segments,
            found,
        });
    }
    Ok(())
}

/// One block per row of `row_len` elements.
fn reduce_rows<T: Element, Op: Operator>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    row_len: usize,
    output: DeviceViewMut<'_, T::Acc>,
) -> Result<()> {
    if input.len == 0 {
        return Ok(());
    }
    if row_len == 0 || !input.len.is_multiple_of(row_len) {
        return Err(Error::NotWholeRows {
            what: "segmented_reduce",
            len: input.len,
            row_len,
        });
    }
    let rows = input.len / row_len;
    check_output(output.len(), rows)?;
    let kernel = crate::module(on.gpu())?.kernel::<SegmentedReduceParams<T::Raw, T::Acc>>(
        crate::registered(
            const { families::family("device_segmented_reduce") },
            &[T::NAME, Op::NAME],
        )?
        .name,
    )?;
    let grid = rows.min(8 * on.gpu().info().multiprocessors as usize) as u32;
    let config = LaunchConfig::new(grid, crate::tuning::reduce(&on).block_threads)
        .with_shared_mem(DEVICE_SHARED_BYTES);
    let params = SegmentedReduceParams {
        input: input.address as *const T::Raw,
        row_len,
        rows,
        output: output.address as *mut T::Acc,
    };
    // SAFETY: `input` holds rows * row_len elements, `output` at least `rows` values (checked
    // above), as `SegmentedReduceParams` requires.
    unsafe { on.stream().launch(&kernel, config, &params) }
}
