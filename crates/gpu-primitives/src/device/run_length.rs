//! Run-length encoding: [`run_length_encode`] (every run's item and length) and
//! [`non_trivial_runs`] (offset and length of every run longer than one item), one pass with
//! decoupled look-back (kernels `device::run_length`), as CUB's `DeviceRunLengthEncode`.

use super::element::{DeviceVec, DeviceView, DeviceViewMut, Element, check_bound, check_room};
use super::look_back_delay;
use super::temp_storage::TempStorage;
use super::workspace::{DeviceWorkspace, StatusLayout};
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::run_layout;
use gpu_primitives_abi::params::RunParams;
use gpu_primitives_abi::tuning::SelectPolicy;

/// The run-length encodings (`device_run_length_encode_<element>`).
const RUN_LENGTH_ENCODE: &Family = families::family("device_run_length_encode");
/// The non-trivial runs (`device_non_trivial_runs_<element>`).
const NON_TRIVIAL_RUNS: &Family = families::family("device_non_trivial_runs");

/// Where a run-length call writes: each run's item (encode) or offset (non-trivial runs), its
/// length, and the number of runs.
struct RunTargets<'o, T> {
    unique: Option<DeviceViewMut<'o, T>>,
    offsets: Option<DeviceViewMut<'o, u32>>,
    lengths: DeviceViewMut<'o, u32>,
    num_runs: DeviceViewMut<'o, u64>,
}

/// The items a run-length tile of `T` holds and the tiles of `n` items (one block each; the
/// select policy's tile, the same on every architecture).
fn run_tiles<T: Element>(n: usize) -> (usize, usize) {
    let policy = SelectPolicy::for_arch(crate::tuning::SHAPES_ARCH);
    let tile = policy.block_threads as usize * policy.run_items(T::VECTOR as usize);
    (tile, n.div_ceil(tile))
}

/// The error of `n` items past the u32 offsets and lengths.
fn too_long(family: &'static str, n: usize) -> Error {
    Error::TooManyKeys {
        what: family,
        keys: n,
        max: u32::MAX as usize,
    }
}

impl TempStorage {
    /// [`run_length_encode`] and [`non_trivial_runs`] of `n` elements of `T`: 16 bytes of
    /// look-back status a tile of `block_threads * run_items(T::VECTOR)` elements (the select
    /// policy's), and the tile counter; nothing for `n = 0`.
    ///
    /// # Errors
    /// [`Error::TooManyKeys`] where the call would fail: `n` of 2^32 or more.
    pub fn run_length_encode<T: Element>(n: usize) -> Result<Self> {
        if n > u32::MAX as usize {
            return Err(too_long("run-length", n));
        }
        if n == 0 {
            return Ok(Self::default());
        }
        Ok(Self::look_back(StatusLayout::Pair, run_tiles::<T>(n).1))
    }
}

/// Check the views' bounds and the lengths, then queue the kernel.
fn launch<T: Element>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    out: RunTargets<'_, T>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let unique = out.unique.as_ref().map(|u| u.bound);
    let offsets = out.offsets.as_ref().map(|o| o.bound);
    check_bound(
        &on,
        "run-length",
        &[
            input.bound,
            out.lengths.bound,
            out.num_runs.bound,
            unique.unwrap_or_default(),
            offsets.unwrap_or_default(),
        ],
    )?;
    let n = input.len;
    // The encoding's look-back delay is the compaction's, the non-trivial runs' their own.
    let policy = crate::tuning::select(&on);
    let (family, kernels, most_runs, delay) = if out.unique.is_some() {
        (
            "run_length_encode",
            RUN_LENGTH_ENCODE,
            n,
            policy.look_back_delay_ns,
        )
    } else {
        (
            "non_trivial_runs",
            NON_TRIVIAL_RUNS,
            n / 2,
            policy.non_trivial_runs_look_back_delay_ns,
        )
    };
    if n > u32::MAX as usize {
        return Err(too_long(family, n));
    }
    // Every item may start a run (every pair, for runs longer than one).
    let outputs: Vec<_> = [
        out.unique
            .as_ref()
            .map(|u| ("run_length_encode: unique output too short", u.len())),
        out.offsets
            .as_ref()
            .map(|o| ("non_trivial_runs: offsets output too short", o.len())),
        Some(("run-length: lengths output too short", out.lengths.len())),
    ]
    .into_iter()
    .flatten()
    .collect();
    check_room(("run-length: num_runs", out.num_runs.len()), &outputs, most_runs)?;
    if n == 0 {
        // SAFETY: one u64 of the caller's count, cleared in stream order.
        return unsafe { on.stream().clear(out.num_runs.address, size_of::<u64>()) };
    }
    let (tile, tiles) = run_tiles::<T>(n);
    let kernel =
        crate::module(on.gpu())?.kernel::<RunParams<T::Raw>>(crate::registered(kernels, &[T::NAME])?.name)?;
    let mut workspace = workspace.begin(on.stream(), &TempStorage::look_back(StatusLayout::Pair, tiles))?;
    let status = workspace.look_back_tiles(StatusLayout::Pair, tiles)?;
    let shared = run_layout(tile as u32, size_of::<T::Raw>() as u32).total;
    let config = LaunchConfig::new(tiles as u32, policy.block_threads).with_shared_mem(shared);
    let params = RunParams {
        input: input.address as *const T::Raw,
        unique: out.unique.map_or(0, |u| u.address) as *mut T::Raw,
        offsets: out.offsets.map_or(0, |o| o.address) as *mut u32,
        lengths: out.lengths.address as *mut u32,
        num_runs: out.num_runs.address as *mut u64,
        n,
        status,
        look_back_delay_ns: look_back_delay(tiles, policy.look_back_delay_min_tiles, delay),
    };
    // SAFETY: `input` holds n < 2^32 elements; the outputs have room for every run (checked
    // above) and `num_runs` one u64, all distinct memory by the views' borrows; the workspace
    // gives 16 bytes of status per tile (16-byte aligned), a counter, the tile base and an epoch
    // newer than every slot's; one block per tile, with the shared memory `RunParams` asks for.
    unsafe { on.stream().launch(&kernel, config, &params)? };
    workspace.look_back_launched();
    Ok(())
}

/// Run-length encode `input`: for each run (a maximal stretch of equal items), its item in
/// `unique[r]` and its length in `lengths[r]`, in input order; the number of runs in
/// `num_runs[0]` (a `u64` in device memory). Stream-ordered: returns once queued. Single pass,
/// decoupled look-back (CUB's `DeviceRunLengthEncode::Encode`).
///
/// Items compare with `==` in the accumulator type: -0.0 and +0.0 are one run, every NaN is a
/// run of its own (as [`unique`](super::unique)). `unique` and `lengths` must hold
/// `input.len()` entries (every item may start a run); past the number of runs they are left
/// alone.
///
/// # Errors
/// [`Error::TooManyKeys`] for 2^32 items or more (lengths are `u32`);
/// [`Error::LengthMismatch`] for an output shorter than the input or an empty `num_runs`; all
/// before anything is queued. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[7u32, 7, 7, 2, 9, 9])?;
/// let mut unique = DeviceVec::<u32>::zeroed(&gpu, 6)?;
/// let mut lengths = gpu.alloc_zeroed::<u32>(6)?;
/// let mut runs = gpu.alloc_zeroed::<u64>(1)?;
/// device::run_length_encode(&gpu, &x, &mut unique, &mut lengths, &mut runs, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&runs)?, [3]);
/// assert_eq!(&unique.to_vec(&gpu)?[..3], [7, 2, 9]);
/// assert_eq!(&gpu.download(&lengths)?[..3], [3, 1, 2]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn run_length_encode<'a, 'o, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    unique: impl Into<DeviceViewMut<'o, T>>,
    lengths: impl Into<DeviceViewMut<'o, u32>>,
    num_runs: impl Into<DeviceViewMut<'o, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let out = RunTargets {
        unique: Some(unique.into()),
        offsets: None,
        lengths: lengths.into(),
        num_runs: num_runs.into(),
    };
    launch(on.into(), input.into(), out, workspace)
}

/// The runs of `input` longer than one item: where each starts (`offsets[r]`) and its length
/// (`lengths[r]`), in input order; their number in `num_runs[0]`. As [`run_length_encode`]
/// (CUB's `DeviceRunLengthEncode::NonTrivialRuns`); `offsets` and `lengths` must hold
/// `input.len() / 2` entries.
///
/// # Errors
/// As [`run_length_encode`].
pub fn non_trivial_runs<'a, 'o, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    offsets: impl Into<DeviceViewMut<'o, u32>>,
    lengths: impl Into<DeviceViewMut<'o, u32>>,
    num_runs: impl Into<DeviceViewMut<'o, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let out = RunTargets {
        unique: None,
        offsets: Some(offsets.into()),
        lengths: lengths.into(),
        num_runs: num_runs.into(),
    };
    launch(on.into(), input.into(), out, workspace)
}

/// [`run_length_encode`] of a host slice: each run's item and length.
///
/// Takes any call, as [`run_length_encode`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the clears of the outputs, the encoding (with
/// the call's tuning) and the copies back are queued in that order on the call's stream, which
/// is synchronised.
///
/// # Errors
/// As [`run_length_encode`].
///
/// # Example
/// ```no_run
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let (items, lengths) = gpu_primitives::device::run_length_encode_slice(&gpu, &[1.5f32, 1.5, -2.0])?;
/// assert_eq!((items, lengths), (vec![1.5, -2.0], vec![2, 1]));
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn run_length_encode_slice<'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
) -> Result<(Vec<T>, Vec<u32>)> {
    let on = on.into();
    let stream = on.stream();
    let d_in = DeviceVec::from_slice_on(stream, input)?;
    let mut unique = DeviceVec::<T>::zeroed_on(stream, input.len())?;
    let mut lengths = stream.alloc_zeroed::<u32>(input.len())?;
    let mut runs = stream.alloc_zeroed::<u64>(1)?;
    let ws = &mut DeviceWorkspace::new();
    run_length_encode(on, &d_in, &mut unique, &mut lengths, &mut runs, ws)?;
    let runs = stream.download(&runs)?[0] as usize;
    let items = T::from_raw(&unique.to_vec_on(stream)?[..runs]).to_vec();
    let mut lengths = stream.download(&lengths)?;
    lengths.truncate(runs);
    Ok((items, lengths))
}

/// [`non_trivial_runs`] of a host slice: the offset and length of each run longer than one
/// item.
///
/// Takes any call, as [`non_trivial_runs`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)); its stream is synchronised, as
/// [`run_length_encode_slice`]'s.
///
/// # Errors
/// As [`non_trivial_runs`].
pub fn non_trivial_runs_slice<'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: &[T],
) -> Result<(Vec<u32>, Vec<u32>)> {
    let on = on.into();
    let stream = on.stream();
    let d_in = DeviceVec::from_slice_on(stream, input)?;
    let room = (input.len() / 2).max(1);
    let mut offsets = stream.alloc_zeroed::<u32>(room)?;
    let mut lengths = stream.alloc_zeroed::<u32>(room)?;
    let mut runs = stream.alloc_zeroed::<u64>(1)?;
    let ws = &mut DeviceWorkspace::new();
    non_trivial_runs(on, &d_in, &mut offsets, &mut lengths, &mut runs, ws)?;
    let runs = stream.download(&runs)?[0] as usize;
    let mut offsets = stream.download(&offsets)?;
    let mut lengths = stream.download(&lengths)?;
    offsets.truncate(runs);
    lengths.truncate(runs);
    Ok((offsets, lengths))
}
