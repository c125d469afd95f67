//! Device-wide scan, one pass with decoupled look-back.

use super::element::{DeviceVec, DeviceView, DeviceViewMut, Element, ScanOperator, check_bound};
use super::temp_storage::TempStorage;
use super::workspace::{DeviceWorkspace, StatusLayout};
use super::{DEVICE_SHARED_BYTES, ScanKind, look_back_delay};
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families;
use gpu_primitives_abi::params::ScanParams;
use gpu_primitives_abi::tuning::ScanPolicy;

/// The tiles of a scan of `n` elements of `T` (one block each, of the scan policy's threads:
/// the same on every architecture), or an error past the grid limit.
fn scan_tiles<T: Element>(n: usize) -> Result<usize> {
    let block = ScanPolicy::for_arch(crate::tuning::SHAPES_ARCH).block_threads;
    let tile = block as usize * T::SCAN_ITEMS as usize;
    let tiles = n.div_ceil(tile);
    if tiles > LaunchConfig::MAX_GRID as usize {
        return Err(Error::PastGridLimit {
            what: "scan",
            items: n,
            tiles,
            max_tiles: LaunchConfig::MAX_GRID as usize,
        });
    }
    Ok(tiles)
}

/// The look-back status layout of `T`'s scans (by the size of its accumulator).
fn scan_layout<T: Element>() -> StatusLayout {
    StatusLayout::of_value_bytes(size_of::<T::Acc>())
}

impl TempStorage {
    /// [`inclusive_scan`], [`exclusive_scan`] and [`scan_in_place`] of `n` elements of `T`:
    /// 16 bytes of look-back status a tile of `block_threads * T::SCAN_ITEMS` elements, and the
    /// tile counter; nothing for `n = 0`.
    ///
    /// # Errors
    /// [`Error::PastGridLimit`] where the call would fail: tiles past the grid limit.
    pub fn scan<T: Element>(n: usize) -> Result<Self> {
        if n == 0 {
            return Ok(Self::default());
        }
        Ok(Self::look_back(scan_layout::<T>(), scan_tiles::<T>(n)?))
    }
}

/// Queue the scan of `n` elements at `input` into `output`, from the value at `initial` where it
/// is not 0 (device addresses).
fn launch<T: Element, Op: ScanOperator<T>>(
    on: CallOn<'_>,
    input: u64,
    output: u64,
    initial: u64,
    n: usize,
    kind: ScanKind,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let tiles = scan_tiles::<T>(n)?;
    let kernel = crate::module(on.gpu())?.kernel::<ScanParams<T::Raw, T::Acc>>(
        crate::registered(const { families::family("device_scan") }, &[T::NAME, Op::NAME])?.name,
    )?;
    let mut workspace = workspace.begin(on.stream(), &TempStorage::look_back(scan_layout::<T>(), tiles))?;
    let status = workspace.look_back_tiles(scan_layout::<T>(), tiles)?;
    let policy = crate::tuning::scan(&on);
    let config = LaunchConfig::new(tiles as u32, policy.block_threads).with_shared_mem(DEVICE_SHARED_BYTES);
    let params = ScanParams {
        input: input as *const T::Raw,
        output: output as *mut T::Acc,
        initial: initial as *const T::Acc,
        n,
        status,
        exclusive: (kind == ScanKind::Exclusive) as u32,
        look_back_delay_ns: look_back_delay(
            tiles,
            policy.look_back_delay_min_tiles,
            if size_of::<T::Acc>() == 8 {
                policy.wide_look_back_delay_ns
            } else {
                policy.look_back_delay_ns
            },
        ),
    };
    // SAFETY: `input` and `output` address n elements, `initial` is 0 or one value (the callers
    // check); the workspace gives
    // 16 bytes of status per tile (16-byte aligned), a counter, the tile base and an epoch newer
    // than every slot's; the grid has exactly one block per tile, as `ScanParams` requires.
    unsafe { on.stream().launch(&kernel, config, &params)? };
    workspace.look_back_launched();
    Ok(())
}

/// The out-of-place scans: check the views' bounds and lengths (`initial`, where given, holds a
/// value), then queue.
fn out_of_place<T: Element, Op: ScanOperator<T>>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    output: DeviceViewMut<'_, T::Acc>,
    initial: Option<DeviceView<'_, T::Acc>>,
    kind: ScanKind,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    check_bound(&on, "scan", &[input.bound, output.bound])?;
    if output.len() < input.len {
        return Err(Error::LengthMismatch {
            what: "scan: output too short",
            expected: input.len,
            found: output.len(),
        });
    }
    let initial = match initial {
        None => 0,
        Some(initial) => {
            check_bound(&on, "scan", &[initial.bound])?;
            if initial.len == 0 {
                return Err(Error::LengthMismatch {
                    what: "scan: initial holds no value",
                    expected: 1,
                    found: 0,
                });
            }
            initial.address
        }
    };
    launch::<T, Op>(
        on,
        input.address,
        output.address,
        initial,
        input.len,
        kind,
        workspace,
    )
}

/// `output[i] = input[0] ⊕ ... ⊕ input[i]` for `i < n` (output may be longer; the rest is left
/// alone). Stream-ordered: returns once queued. f16 / bf16 inputs scan into f32.
///
/// # Errors
/// [`Error::LengthMismatch`] when `output` is shorter than `input`; device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1i64, 2, 3, 4])?;
/// let mut y = gpu.alloc_zeroed::<i64>(4)?;
/// device::inclusive_scan::<i64, Sum>(&gpu, &x, &mut y, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [1, 3, 6, 10]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn inclusive_scan<'a, 'o, 'g, T: Element, Op: ScanOperator<T>>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    out_of_place::<T, Op>(
        on.into(),
        input.into(),
        output.into(),
        None,
        ScanKind::Inclusive,
        workspace,
    )
}

/// `output[i] = input[0] ⊕ ... ⊕ input[i-1]`, `output[0]` = the identity. As [`inclusive_scan`].
///
/// # Errors
/// As [`inclusive_scan`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1u32, 2, 3, 4])?;
/// let mut y = gpu.alloc_zeroed::<u32>(4)?;
/// device::exclusive_scan::<u32, Sum>(&gpu, &x, &mut y, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [0, 1, 3, 6]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn exclusive_scan<'a, 'o, 'g, T: Element, Op: ScanOperator<T>>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    out_of_place::<T, Op>(
        on.into(),
        input.into(),
        output.into(),
        None,
        ScanKind::Exclusive,
        workspace,
    )
}

/// `output[i] = initial ⊕ input[0] ⊕ ... ⊕ input[i]` for `i < n`, `initial` being the first
/// value of a device view, read when the scan runs (so an earlier kernel on the stream may
/// compute it: CUB's `DeviceScan::InclusiveScanInit` with a `FutureValue`). As
/// [`inclusive_scan`] otherwise; the scan of an empty input reads nothing.
///
/// # Errors
/// [`Error::LengthMismatch`] when `output` is shorter than `input` or `initial` is empty;
/// device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1i64, 2, 3, 4])?;
/// let initial = DeviceVec::from_slice(&gpu, &[100i64])?;
/// let mut y = gpu.alloc_zeroed::<i64>(4)?;
/// device::inclusive_scan_init::<i64, Sum>(&gpu, &x, &mut y, &initial, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [101, 103, 106, 110]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn inclusive_scan_init<'a, 'o, 'i, 'g, T: Element, Op: ScanOperator<T>>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    initial: impl Into<DeviceView<'i, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    out_of_place::<T, Op>(
        on.into(),
        input.into(),
        output.into(),
        Some(initial.into()),
        ScanKind::Inclusive,
        workspace,
    )
}

/// `output[0] = initial`, `output[i] = initial ⊕ input[0] ⊕ ... ⊕ input[i-1]` (CUB's
/// `DeviceScan::ExclusiveScan` with a `FutureValue` initial value). As [`inclusive_scan_init`].
///
/// # Errors
/// As [`inclusive_scan_init`].
pub fn exclusive_scan_init<'a, 'o, 'i, 'g, T: Element, Op: ScanOperator<T>>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    initial: impl Into<DeviceView<'i, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    out_of_place::<T, Op>(
        on.into(),
        input.into(),
        output.into(),
        Some(initial.into()),
        ScanKind::Exclusive,
        workspace,
    )
}

/// Scan `data` in place (the one call that modifies its input). Only for types combined in
/// themselves (not f16 / bf16, whose scan is f32): the bound rejects those at compile time.
///
/// # Errors
/// Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, ScanKind, Max};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let mut x = DeviceVec::from_slice(&gpu, &[2.0f64, 1.0, 5.0, 3.0])?;
/// device::scan_in_place::<f64, Max>(&gpu, &mut x, ScanKind::Inclusive, &mut DeviceWorkspace::new())?;
/// assert_eq!(x.to_vec(&gpu)?, [2.0, 2.0, 5.0, 5.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn scan_in_place<'d, 'g, T: Element<Acc = T>, Op: ScanOperator<T>>(
    on: impl Into<CallOn<'g>>,
    data: impl Into<DeviceViewMut<'d, T>>,
    kind: ScanKind,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, data) = (on.into(), data.into());
    check_bound(&on, "scan_in_place", &[data.bound])?;
    launch::<T, Op>(on, data.address, data.address, 0, data.len, kind, workspace)
}

/// Scan a host slice on the GPU and return the result.
///
/// Takes any call, as [`inclusive_scan`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the clear of the output, the scan (with the
/// call's tuning) and the copy back are queued in that order on the call's stream, which is
/// synchronised.
///
/// # Errors
/// Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, ScanKind, Sum};
/// use gpu_primitives::{TuningOverrides, WithTuning};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let half_input = [half::f16::from_f32(0.5); 4];
/// assert_eq!(device::scan_slice::<half::f16, Sum>(&gpu, &half_input, ScanKind::Inclusive)?, [0.5, 1.0, 1.5, 2.0]);
/// // On another stream, with this call's own look-back delay:
/// let stream = gpu.create_stream()?;
/// let mut tuning = TuningOverrides::default();
/// tuning.scan_look_back_delay_ns = Some(0);
/// let on = gpu.on(&stream)?.with_tuning(tuning)?;
/// assert_eq!(device::scan_slice::<u32, Sum>(on, &[1, 2, 3], ScanKind::Exclusive)?, [0, 1, 3]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn scan_slice<'g, T: Element, Op: ScanOperator<T>>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
    kind: ScanKind,
) -> Result<Vec<T::Acc>> {
    let on = on.into();
    let stream = on.stream();
    let d_in = DeviceVec::from_slice_on(stream, input)?;
    let d_out = stream.alloc_zeroed::<T::Acc>(input.len())?;
    let mut workspace = DeviceWorkspace::new();
    launch::<T, Op>(
        on,
        d_in.view().address,
        d_out.as_device_ptr().as_raw(),
        0,
        input.len(),
        kind,
        &mut workspace,
    )?;
    stream.download(&d_out)
}
