//! Stream compaction: select, partition, unique (one pass with decoupled look-back, kernels
//! `device::select`).

use super::element::{DeviceVec, DeviceView, DeviceViewMut, Element, check_bound, check_room};
use super::look_back_delay;
use super::temp_storage::TempStorage;
use super::workspace::{DeviceWorkspace, StatusLayout};
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::select_shared_bytes;
use gpu_primitives_abi::params::{CompareKind, Comparison, ReverseTailParams, SelectParams};
use gpu_primitives_abi::tuning::SelectPolicy;

/// A stable partition's second pass (`device_reverse_tail_<element>`).
const REVERSE_TAIL: &Family = families::family("device_reverse_tail");

/// A prebuilt test of [`select_if`] / [`partition_if`]: compare each item with a threshold, test
/// it against a range, or reject NaN. Compared in the accumulator type (f32 for f16 / bf16),
/// IEEE 754 semantics: a comparison with NaN is false except `not_equal`; -0.0 equals +0.0.
///
/// ```
/// use gpu_primitives::device::Predicate;
/// assert!(Predicate::less(2.0f32).keep(1.0));
/// assert!(!Predicate::less(2.0f32).keep(f32::NAN));
/// assert!(Predicate::in_range(0u32, 10).keep(9));
/// assert!(!Predicate::<f64>::not_nan().keep(f64::NAN));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Predicate<T: Element> {
    kind: CompareKind,
    lo: Option<T>,
    hi: Option<T>,
}

impl<T: Element> Predicate<T> {
    fn compare(kind: CompareKind, threshold: T) -> Self {
        Self {
            kind,
            lo: Some(threshold),
            hi: None,
        }
    }

    /// Keep `x < threshold`.
    pub fn less(threshold: T) -> Self {
        Self::compare(CompareKind::Less, threshold)
    }

    /// Keep `x <= threshold`.
    pub fn less_equal(threshold: T) -> Self {
        Self::compare(CompareKind::LessEqual, threshold)
    }

    /// Keep `x > threshold`.
    pub fn greater(threshold: T) -> Self {
        Self::compare(CompareKind::Greater, threshold)
    }

    /// Keep `x >= threshold`.
    pub fn greater_equal(threshold: T) -> Self {
        Self::compare(CompareKind::GreaterEqual, threshold)
    }

    /// Keep `x == value`.
    pub fn equal(value: T) -> Self {
        Self::compare(CompareKind::Equal, value)
    }

    /// Keep `x != value` (NaN included).
    pub fn not_equal(value: T) -> Self {
        Self::compare(CompareKind::NotEqual, value)
    }

    /// Keep `lo <= x < hi`.
    pub fn in_range(lo: T, hi: T) -> Self {
        Self {
            kind: CompareKind::InRange,
            lo: Some(lo),
            hi: Some(hi),
        }
    }

    /// Keep every value but NaN (every integer).
    pub fn not_nan() -> Self {
        Self {
            kind: CompareKind::NotNan,
            lo: None,
            hi: None,
        }
    }

    /// The test.
    pub fn kind(&self) -> CompareKind {
        self.kind
    }

    /// Whether `x` passes, computed on the host as the GPU does (the CPU reference).
    pub fn keep(&self, x: T) -> bool {
        let x = x.to_acc();
        let lo = self.lo.map(T::to_acc);
        let hi = self.hi.map(T::to_acc);
        match (self.kind, lo, hi) {
            (CompareKind::Less, Some(t), _) => x < t,
            (CompareKind::LessEqual, Some(t), _) => x <= t,
            (CompareKind::Greater, Some(t), _) => x > t,
            (CompareKind::GreaterEqual, Some(t), _) => x >= t,
            (CompareKind::Equal, Some(t), _) => x == t,
            (CompareKind::NotEqual, Some(t), _) => x != t,
            (CompareKind::InRange, Some(lo), Some(hi)) => lo <= x && x < hi,
            #[allow(clippy::eq_op)] // NaN is the one value not equal to itself.
            (CompareKind::NotNan, _, _) => x == x,
            _ => unreachable!("every constructor sets the operands its kind reads"),
        }
    }

    /// The parameter the kernel reads.
    fn to_params(self) -> Comparison<T::Raw> {
        let raw = |v: Option<T>| v.map_or_else(T::Raw::default, |v| T::as_raw(&[v])[0]);
        Comparison {
            kind: self.kind as u32,
            lo: raw(self.lo),
            hi: raw(self.hi),
        }
    }
}

/// Which items a compaction keeps; `F` is where the flags are (a device address when
/// launching, a host slice for the `*_slice` helpers).
#[derive(Clone, Copy)]
enum Keep<T: Element, F = u64> {
    If(Predicate<T>),
    Flagged(F),
    Unique,
}

/// The items a compaction's tile of `T` holds and the tiles of `n` items (one block each), or
/// an error past the grid limit (the select policy's tile: the same on every architecture).
fn select_tiles<T: Element>(n: usize) -> Result<(usize, usize)> {
    let policy = SelectPolicy::for_arch(crate::tuning::SHAPES_ARCH);
    let tile = policy.block_threads as usize * T::VECTOR as usize * policy.rows;
    let tiles = n.div_ceil(tile);
    if tiles > LaunchConfig::MAX_GRID as usize {
        return Err(Error::PastGridLimit {
            what: "select",
            items: n,
            tiles,
            max_tiles: LaunchConfig::MAX_GRID as usize,
        });
    }
    Ok((tile, tiles))
}

impl TempStorage {
    /// [`select_if`], [`select_flagged`], [`unique`], [`partition_if`] and
    /// [`partition_flagged`] of `n` elements of `T`: 16 bytes of look-back status a tile of
    /// `block_threads * T::VECTOR * rows` elements (the select policy's), and the tile counter;
    /// nothing for `n = 0`.
    ///
    /// # Errors
    /// [`Error::PastGridLimit`] where the call would fail: tiles past the grid limit.
    pub fn select<T: Element>(n: usize) -> Result<Self> {
        if n == 0 {
            return Ok(Self::default());
        }
        let (_, tiles) = select_tiles::<T>(n)?;
        Ok(Self::look_back(StatusLayout::Pair, tiles))
    }
}

/// Check the views' bounds and the lengths, then queue the compaction of `input` into `output`
/// and its count into `num_selected` (and, when `partition`, the rejected items behind the kept
/// ones, in order). The flags' view is checked by [`flag_address`].
fn launch<T: Element>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    keep: Keep<T>,
    output: DeviceViewMut<'_, T>,
    num_selected: DeviceViewMut<'_, u64>,
    partition: bool,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    check_bound(&on, "select", &[input.bound, output.bound, num_selected.bound])?;
    let n = input.len;
    check_room(
        ("select: num_selected", num_selected.len()),
        &[("select: output too short", output.len())],
        n,
    )?;
    if n == 0 {
        // SAFETY: one u64 of the caller's count, cleared in stream order.
        return unsafe { on.stream().clear(num_selected.address, size_of::<u64>()) };
    }
    let (tile, tiles) = select_tiles::<T>(n)?;
    let (family, flags, predicate) = match keep {
        Keep::If(p) => (const { families::family("device_select_if") }, 0, p.to_params()),
        Keep::Flagged(flags) => (
            const { families::family("device_select_flagged") },
            flags,
            Predicate::<T>::not_nan().to_params(),
        ),
        Keep::Unique => (
            const { families::family("device_unique") },
            0,
            Predicate::<T>::not_nan().to_params(),
        ),
    };
    let module = crate::module(on.gpu())?;
    let kernel = module.kernel::<SelectParams<T::Raw>>(crate::registered(family, &[T::NAME])?.name)?;
    let mut workspace = workspace.begin(on.stream(), &TempStorage::look_back(StatusLayout::Pair, tiles))?;
    let status = workspace.look_back_tiles(StatusLayout::Pair, tiles)?;
    let shared = select_shared_bytes(tile as u32, size_of::<T::Raw>() as u32);
    let policy = crate::tuning::select(&on);
    let config = LaunchConfig::new(tiles as u32, policy.block_threads).with_shared_mem(shared);
    let params = SelectParams {
        input: input.address as *const T::Raw,
        flags: flags as *const u8,
        output: output.address as *mut T::Raw,
        num_selected: num_selected.address as *mut u64,
        n,
        predicate,
        status,
        partition: partition as u32,
        look_back_delay_ns: look_back_delay(
            tiles,
            policy.look_back_delay_min_tiles,
            policy.look_back_delay_ns,
        ),
    };
    // SAFETY: `input` holds n elements, the flags (when flagged) n bytes, `output` room for n
    // (checked above) and `num_selected` one u64, all distinct memory by the views' borrows;
    // the workspace gives 16 bytes of status per tile (16-byte aligned), a counter, the tile
    // base and an epoch newer than every slot's; one block per tile, with the shared memory
    // `SelectParams` asks for.
    unsafe { on.stream().launch(&kernel, config, &params)? };
    workspace.look_back_launched();
    if partition {
        let reverse =
            module.kernel::<ReverseTailParams<T::Raw>>(crate::registered(REVERSE_TAIL, &[T::NAME])?.name)?;
        // Enough threads for the most pairs there can be (the count is on the device).
        let pairs = n.div_ceil(2);
        let blocks = pairs
            .div_ceil(policy.block_threads as usize * policy.reverse_tail_items)
            .min(LaunchConfig::MAX_GRID as usize);
        let params = ReverseTailParams {
            data: output.address as *mut T::Raw,
            n,
            begin: num_selected.address as *const u64,
        };
        // SAFETY: `output` holds n elements; the count, written by the launch before on this
        // stream, is at most n.
        unsafe {
            on.stream().launch(
                &reverse,
                LaunchConfig::new(blocks as u32, policy.block_threads),
                &params,
            )?
        };
    }
    Ok(())
}

/// The flag array's view, checked against the call's stream and the input's length.
fn flag_address(on: &CallOn<'_>, flags: DeviceView<'_, u8>, n: usize) -> Result<u64> {
    check_bound(on, "select_flagged: flags", &[flags.bound])?;
    if flags.len() < n {
        return Err(Error::LengthMismatch {
            what: "select_flagged: flags shorter than the input",
            expected: n,
            found: flags.len(),
        });
    }
    Ok(flags.address)
}

/// Keep the items of `input` that pass `predicate`, in input order, at the front of `output`;
/// write their number to `num_selected[0]` (a `u64` in device memory). Stream-ordered: returns
/// once queued. Single pass, decoupled look-back (CUB's `DeviceSelect::If`); stable.
///
/// `output` must hold `input.len()` elements (every item may pass); past the number kept it is
/// left alone. `output` must not overlap `input`.
///
/// # Errors
/// [`Error::LengthMismatch`] when `output` is shorter than the input or `num_selected` empty;
/// device errors. Nothing is launched on an error.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Predicate};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[3.0f32, -1.0, 4.0, -1.5])?;
/// let mut kept = DeviceVec::<f32>::zeroed(&gpu, 4)?;
/// let mut count = gpu.alloc_zeroed::<u64>(1)?;
/// let mut workspace = DeviceWorkspace::new();
/// device::select_if(&gpu, &x, Predicate::greater(0.0), &mut kept, &mut count, &mut workspace)?;
/// assert_eq!(gpu.download(&count)?, [2]);
/// assert_eq!(&kept.to_vec(&gpu)?[..2], [3.0, 4.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn select_if<'a, 'o, 'c, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    predicate: Predicate<T>,
    output: impl Into<DeviceViewMut<'o, T>>,
    num_selected: impl Into<DeviceViewMut<'c, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let keep = Keep::If(predicate);
    launch(
        on.into(),
        input.into(),
        keep,
        output.into(),
        num_selected.into(),
        false,
        workspace,
    )
}

/// Keep `input[i]` where `flags[i] != 0`, in input order; as [`select_if`] (CUB's
/// `DeviceSelect::Flagged`). `flags` is one byte per item (a `bool` array's bytes serve).
///
/// # Errors
/// As [`select_if`], and [`Error::LengthMismatch`] when `flags` is shorter than the input.
pub fn select_flagged<'a, 'f, 'o, 'c, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    flags: impl Into<DeviceView<'f, u8>>,
    output: impl Into<DeviceViewMut<'o, T>>,
    num_selected: impl Into<DeviceViewMut<'c, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, input) = (on.into(), input.into());
    let keep = Keep::Flagged(flag_address(&on, flags.into(), input.len)?);
    launch(
        on,
        input,
        keep,
        output.into(),
        num_selected.into(),
        false,
        workspace,
    )
}

/// Drop consecutive duplicates: keep `input[i]` where `i == 0` or `input[i] != input[i - 1]`;
/// as [`select_if`] (CUB's `DeviceSelect::Unique`). Compared with `!=` in the accumulator type:
/// -0.0 and +0.0 are duplicates, and every NaN is kept.
///
/// # Errors
/// As [`select_if`].
pub fn unique<'a, 'o, 'c, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T>>,
    num_selected: impl Into<DeviceViewMut<'c, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    launch(
        on.into(),
        input.into(),
        Keep::Unique,
        output.into(),
        num_selected.into(),
        false,
        workspace,
    )
}

/// Stable partition: the items that pass `predicate` first, then the others, each group in
/// input order; the number that pass in `num_selected[0]`. Two launches on the stream: the
/// compaction (rejected items from the back, reversed) and a pass that reverses the rejected
/// ones back into input order (CUB's `DevicePartition::If` leaves them reversed).
///
/// # Errors
/// As [`select_if`].
pub fn partition_if<'a, 'o, 'c, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    predicate: Predicate<T>,
    output: impl Into<DeviceViewMut<'o, T>>,
    num_selected: impl Into<DeviceViewMut<'c, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let keep = Keep::If(predicate);
    launch(
        on.into(),
        input.into(),
        keep,
        output.into(),
        num_selected.into(),
        true,
        workspace,
    )
}

/// Stable partition by a flag array: flagged items first, then the others; as
/// [`partition_if`] and [`select_flagged`].
///
/// # Errors
/// As [`select_flagged`].
pub fn partition_flagged<'a, 'f, 'o, 'c, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    flags: impl Into<DeviceView<'f, u8>>,
    output: impl Into<DeviceViewMut<'o, T>>,
    num_selected: impl Into<DeviceViewMut<'c, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, input) = (on.into(), input.into());
    let keep = Keep::Flagged(flag_address(&on, flags.into(), input.len)?);
    launch(
        on,
        input,
        keep,
        output.into(),
        num_selected.into(),
        true,
        workspace,
    )
}

/// Run a compaction of a host slice (and its host flags) as the call `on`: the output (all `n`
/// items for a partition) and the number kept. The copies, the clears, the launch and the
/// copies back are queued in that order on the call's stream, which is synchronised.
fn on_host<T: Element>(
    on: CallOn<'_>,
    input: &[T],
    keep: Keep<T, &[u8]>,
    partition: bool,
) -> Result<(Vec<T>, usize)> {
    let stream = on.stream();
    let d_in = DeviceVec::from_slice_on(stream, input)?;
    // The uploaded flags stay alive until the launch below has been waited for.
    let (keep, _d_flags) = match keep {
        Keep::If(p) => (Keep::If(p), None),
        Keep::Unique => (Keep::Unique, None),
        Keep::Flagged(flags) => {
            let d_flags = stream.upload(flags)?;
            let address = flag_address(&on, (&d_flags).into(), input.len())?;
            (Keep::Flagged(address), Some(d_flags))
        }
    };
    let mut d_out = DeviceVec::<T>::zeroed_on(stream, input.len())?;
    let mut count = stream.alloc_zeroed::<u64>(1)?;
    let mut workspace = DeviceWorkspace::new();
    launch(
        on,
        d_in.view(),
        keep,
        d_out.view_mut(),
        (&mut count).into(),
        partition,
        &mut workspace,
    )?;
    let selected = stream.download(&count)?[0] as usize;
    let out = d_out.to_vec_on(stream)?;
    let len = if partition { input.len() } else { selected };
    Ok((T::from_raw(&out[..len]).to_vec(), selected))
}

/// [`select_if`] of a host slice: the kept items.
///
/// Takes any call, as [`select_if`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the compaction (with the call's tuning) and
/// the copies back are queued in that order on the call's stream, which is synchronised.
///
/// # Errors
/// Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, Predicate};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::select_if_slice(&gpu, &[5u32, 1, 7, 2], Predicate::greater_equal(5))?, [5, 7]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn select_if_slice<'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
    predicate: Predicate<T>,
) -> Result<Vec<T>> {
    Ok(on_host(on.into(), input, Keep::If(predicate), false)?.0)
}

/// [`select_flagged`] of host slices: the flagged items.
///
/// Takes any call, as [`select_flagged`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)); its stream is synchronised, as
/// [`select_if_slice`]'s.
///
/// # Errors
/// [`Error::LengthMismatch`] when `flags` is shorter than `input`; device errors.
pub fn select_flagged_slice<'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
    flags: &[u8],
) -> Result<Vec<T>> {
    Ok(on_host(on.into(), input, Keep::Flagged(flags), false)?.0)
}

/// [`unique`] of a host slice.
///
/// Takes any call, as [`unique`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)); its stream is synchronised, as
/// [`select_if_slice`]'s.
///
/// # Errors
/// Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device;
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::unique_slice(&gpu, &[1i64, 1, 2, 2, 2, 1])?, [1, 2, 1]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn unique_slice<'g, T: Element>(on: impl Into<CallOn<'g>>, input: &[T]) -> Result<Vec<T>> {
    Ok(on_host(on.into(), input, Keep::Unique, false)?.0)
}

/// [`partition_if`] of a host slice: all items, those that pass first, and how many pass.
///
/// Takes any call, as [`partition_if`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)); its stream is synchronised, as
/// [`select_if_slice`]'s.
///
/// # Errors
/// Device errors.
pub fn partition_if_slice<'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
    predicate: Predicate<T>,
) -> Result<(Vec<T>, usize)> {
    on_host(on.into(), input, Keep::If(predicate), true)
}

/// [`partition_flagged`] of host slices: all items, the flagged ones first, and how many are
/// flagged.
///
/// Takes any call, as [`partition_flagged`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)); its stream is synchronised, as
/// [`select_if_slice`]'s.
///
/// # Errors
/// As [`select_flagged_slice`].
pub fn partition_flagged_slice<'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
    flags: &[u8],
) -> Result<(Vec<T>, usize)> {
    on_host(on.into(), input, Keep::Flagged(flags), true)
}
