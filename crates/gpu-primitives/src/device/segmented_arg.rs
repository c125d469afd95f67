//! Segmented argmin / argmax by CSR offsets: per segment, the first smallest (largest) item's
//! value and its index within the segment, in one pass over the items (kernels
//! `device::segmented_scan::segmented_reduce_tile` over (value, index) pairs), as CUB's
//! `DeviceSegmentedReduce::ArgMin` / `ArgMax`.

use super::element::{DeviceView, DeviceViewMut, Element, check_bound};
use super::look_back_delay;
use super::segmented_scan::{
    SegmentOffsets, check_fit, segmented_need, segmented_storage, tile_starts, tiles_for,
};
use super::temp_storage::TempStorage;
use super::workspace::{DeviceWorkspace, StatusLayout};
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::segmented_shared_bytes;
use gpu_primitives_abi::params::SegmentedArgParams;
use gpu_primitives_abi::tuning::SegmentedPolicy;

mod sealed {
    pub trait Sealed {}
}

/// An element type of the segmented argmin / argmax: one accumulated in 4 bytes (`f32`, `i32`,
/// `u32`, `half::f16`, `half::bf16`; the table `gpu_primitives_abi::segment_arg_table!`), whose
/// (value, index) pair fits the single pass's tile status.
pub trait SegmentArgElement: Element + sealed::Sealed {}

macro_rules! arg_elements {
    ([] $($name:ident => $device:ty, $vec:literal;)*) => {
        $(
            impl sealed::Sealed for crate::host_type!($name) {}
            impl SegmentArgElement for crate::host_type!($name) {}
        )*
    };
}
gpu_primitives_abi::segment_arg_table!(arg_elements);

/// The items a tile of the segmented argmin / argmax over `T` holds (the segmented reduce's;
/// the same on every architecture).
fn segmented_arg_tile<T: Element>() -> usize {
    let policy = SegmentedPolicy::for_arch(crate::tuning::SHAPES_ARCH);
    policy.block_threads as usize * policy.reduce_items(size_of::<T::Acc>())
}

impl TempStorage {
    /// [`segmented_argmin`] and [`segmented_argmax`] of `n` items of `T`: 16 bytes of
    /// look-back status a tile and, from the segmented policy's `tile_starts_min_tiles` tiles on, 4 bytes a
    /// tile for where each starts.
    ///
    /// # Errors
    /// [`Error::PastGridLimit`] where the call would fail: tiles past the grid limit.
    pub fn segmented_arg<T: SegmentArgElement>(n: usize) -> Result<Self> {
        segmented_storage("segmented_argmin / argmax", n, segmented_arg_tile::<T>(), true)
    }
}

fn segmented_arg<T: SegmentArgElement>(
    on: CallOn<'_>,
    kernels: &'static Family,
    input: DeviceView<'_, T>,
    segments: &SegmentOffsets<'_>,
    values: DeviceViewMut<'_, T::Acc>,
    indices: DeviceViewMut<'_, u32>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    // The algorithm's name in errors: the family's without `device_`.
    let family = kernels.name.trim_start_matches("device_");
    let offsets = segments.offsets().bound;
    check_bound(&on, family, &[input.bound, offsets, values.bound, indices.bound])?;
    let n = input.len();
    check_fit(family, segments, n)?;
    if n > u32::MAX as usize {
        return Err(Error::TooManyKeys {
            what: family,
            keys: n,
            max: u32::MAX as usize,
        });
    }
    let count = segments.segments();
    for (what, found) in [
        ("segmented arg: values output too short", values.len()),
        ("segmented arg: indices output too short", indices.len()),
    ] {
        if found < count {
            return Err(Error::LengthMismatch {
                what,
                expected: count,
                found,
            });
        }
    }
    if count == 0 {
        return Ok(());
    }
    let tile = segmented_arg_tile::<T>();
    let tiles = tiles_for(family, n, tile)?;
    let kernel = crate::module(on.gpu())?
        .kernel::<SegmentedArgParams<T::Raw, T::Acc>>(crate::registered(kernels, &[T::NAME])?.name)?;
    let (need, starts) = segmented_need(tiles, true);
    let mut workspace = workspace.begin(on.stream(), &need)?;
    let starts = tile_starts(on, segments, tile, tiles, &workspace, starts)?;
    let status = workspace.look_back_tiles(StatusLayout::Pair, tiles)?;
    let policy = crate::tuning::segmented(&on);
    let config = LaunchConfig::new(tiles as u32, policy.block_threads)
        .with_shared_mem(segmented_shared_bytes(tile as u32));
    let params = SegmentedArgParams {
        input: input.address() as *const T::Raw,
        values: values.address() as *mut T::Acc,
        indices: indices.address() as *mut u32,
        n,
        offsets: segments.offsets().address() as *const u64,
        segments: count,
        tile_starts: starts as *const u32,
        status,
        look_back_delay_ns: look_back_delay(
            tiles,
            policy.look_back_delay_min_tiles,
            policy.reduce_look_back_delay_ns,
        ),
    };
    // SAFETY: `input` addresses n < 2^32 elements, the outputs one value and one index per
    // segment (checked above), the offsets are checked ones that fit n, the tile starts are
    // queued before on the stream (tiles + 1 of them); the workspace gives 16
    // bytes of status per tile (16-byte aligned), a counter, the tile base and an epoch newer
    // than every slot's; the grid has exactly max(1, ceil(n / tile)) blocks of `block_threads`
    // threads and the shared memory of the tile's heads.
    unsafe { on.stream().launch(&kernel, config, &params)? };
    workspace.look_back_launched();
    Ok(())
}

/// Per segment `s` of `input` (by [`SegmentOffsets`]), the first smallest item: its value to
/// `values[s]` and its index within the segment to `indices[s]` (a NaN wins, the first one;
/// an empty segment gets `+inf` or the largest integer and `u32::MAX`). f16 / bf16 values are
/// returned in f32. One pass over the items, balanced whatever the segment lengths;
/// stream-ordered; deterministic (the first index on ties, whatever the grouping).
///
/// # Errors
/// [`Error::InvalidOffsets`] when the last offset is past the input; [`Error::TooManyKeys`] when
/// the input has 2^32 items or more (the indices are `u32`); [`Error::LengthMismatch`] when an
/// output is shorter than the number of segments; all before any launch. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SegmentOffsets};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[3.0f32, 1.0, 2.0, 7.0, 5.0])?;
/// let offsets = DeviceVec::from_slice(&gpu, &[0u64, 3, 3, 5])?; // [0, 3), [3, 3), [3, 5)
/// let segments = SegmentOffsets::new(&gpu, &offsets)?;
/// let (mut values, mut indices) = (gpu.alloc_zeroed::<f32>(3)?, gpu.alloc_zeroed::<u32>(3)?);
/// device::segmented_argmin(&gpu, &x, &segments, &mut values, &mut indices, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&values)?, [1.0, f32::INFINITY, 5.0]);
/// assert_eq!(gpu.download(&indices)?, [1, u32::MAX, 1]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_argmin<'a, 'v, 'i, 'g, T: SegmentArgElement>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    segments: &SegmentOffsets<'_>,
    values: impl Into<DeviceViewMut<'v, T::Acc>>,
    indices: impl Into<DeviceViewMut<'i, u32>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    segmented_arg(
        on.into(),
        const { families::family("device_segmented_argmin") },
        input.into(),
        segments,
        values.into(),
        indices.into(),
        workspace,
    )
}

/// Per segment, the first largest item's value and index within the segment (an empty segment
/// gets `-inf` or the smallest integer and `u32::MAX`). As [`segmented_argmin`].
///
/// # Errors
/// As [`segmented_argmin`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SegmentOffsets};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[4i32, 9, 9, -1])?;
/// let offsets = DeviceVec::from_slice(&gpu, &[0u64, 3, 4])?;
/// let segments = SegmentOffsets::new(&gpu, &offsets)?;
/// let (mut values, mut indices) = (gpu.alloc_zeroed::<i32>(2)?, gpu.alloc_zeroed::<u32>(2)?);
/// device::segmented_argmax(&gpu, &x, &segments, &mut values, &mut indices, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&values)?, [9, -1]);
/// assert_eq!(gpu.download(&indices)?, [1, 0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_argmax<'a, 'v, 'i, 'g, T: SegmentArgElement>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    segments: &SegmentOffsets<'_>,
    values: impl Into<DeviceViewMut<'v, T::Acc>>,
    indices: impl Into<DeviceViewMut<'i, u32>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    segmented_arg(
        on.into(),
        const { families::family("device_segmented_argmax") },
        input.into(),
        segments,
        values.into(),
        indices.into(),
        workspace,
    )
}
