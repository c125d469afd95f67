//! The device-wide radix sort's entry points: [`sort_keys`], [`sort_pairs`], [`argsort`], their
//! in-place, double-buffered and slice forms, and their workspace sizes: each checks its
//! arguments, then sends one tile to the block radix sort (the segmented sort's block tier, one
//! segment) and more to onesweep (CUB's `DeviceRadixSort` and its `DispatchRadixSort`).

use super::common::{
    SortBuffers, SortOptions, SortedIn, ValueBytes, Values, check_len, check_sort_len, fits_one_tile,
    raw_view, raw_view_mut,
};
use super::key::SortKey;
use super::onesweep::{self, Alternate, OnesweepPlan};
use super::segmented::{self, SegmentedCall};
use crate::device::element::{Bound, DeviceView, DeviceViewMut, check_bound};
use crate::device::segmented::Segments;
use crate::device::temp_storage::TempStorage;
use crate::device::workspace::DeviceWorkspace;
use crate::{CallOn, Result};
use gpu_primitives_runtime::DeviceCopy;

/// Queue the sort `buffers` describes: nothing for no keys, one block's sort in shared memory
/// for one tile ([`segmented::launch`] of one segment), onesweep past it ([`onesweep::launch`]).
pub(in crate::device) fn launch<K: SortKey>(
    on: CallOn<'_>,
    buffers: SortBuffers,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    launch_with::<K>(on, buffers, None, options, workspace).map(|_| ())
}

/// [`launch`], with the caller's `alternate` buffers where given ([`onesweep::launch`]): the
/// arguments checked, then one tile to the block radix sort, more to onesweep.
fn launch_with<K: SortKey>(
    on: CallOn<'_>,
    buffers: SortBuffers,
    alternate: Option<Alternate>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    check_bound(&on, "sort", &buffers.bounds)?;
    if let Some(alternate) = &alternate {
        check_bound(&on, "sort: alternate buffers", &alternate.bounds)?;
    }
    options.bit_range::<K>()?;
    let n = buffers.n;
    check_sort_len("sort", n)?;
    if n == 0 {
        return Ok(SortedIn::Current);
    }
    if fits_one_tile::<K>(n) {
        // One tile: one block sorts it in shared memory (the segmented sort's tile path, one
        // segment: one launch, each key read and written once, in place too) instead of the
        // upfront count and a onesweep pass per digit (CUB's single-tile sort).
        let call = SegmentedCall {
            buffers,
            segments: Segments::Rows(n),
            keep: None,
        };
        segmented::launch::<K>(on, "sort", call, options, workspace)?;
        return Ok(SortedIn::Current);
    }
    let plan = OnesweepPlan::new::<K>(on.gpu().info(), n, buffers.value_bytes(), options, &on.tuning())?;
    let need = plan.scratch(alternate.is_none()).need;
    let mut workspace = workspace.begin(on.stream(), &need)?;
    let arena = workspace.arena();
    onesweep::launch::<K>(on, &plan, buffers, alternate, &mut workspace, arena)
}

impl TempStorage {
    /// [`sort_keys`] and [`sort_keys_in_place`] of `n` keys of `K` on `on` (`&gpu`, or a call
    /// with its tuning: the onesweep tiles it takes): alternate keys
    /// (`n * size_of::<K>()` bytes), 1 KiB of digit counts a pass, and 2 KiB of look-back status
    /// a onesweep tile; nothing up to one tile (`SORT_BLOCK * K::ITEMS` keys), which one block
    /// sorts. At most what [`sort_keys_double_buffer`] needs (it takes no scratch).
    ///
    /// # Errors
    /// As the sort: a bit range outside the key, more than [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys.
    pub fn sort_keys<'g, K: SortKey>(
        on: impl Into<CallOn<'g>>,
        n: usize,
        options: SortOptions,
    ) -> Result<Self> {
        onesweep::storage::<K>(&on.into(), n, 0, options, false)
    }

    /// [`sort_pairs`] and [`sort_pairs_in_place`] of `n` keys of `K` and values of `V` (4 or 8
    /// bytes): as [`sort_keys`](Self::sort_keys), the scratch holding the alternate values
    /// too. At most what [`sort_pairs_double_buffer`] needs. [`argsort`] is a sort of pairs
    /// with `u32` values.
    ///
    /// # Errors
    /// As [`sort_keys`](Self::sort_keys).
    pub fn sort_pairs<'g, K: SortKey, V: DeviceCopy>(
        on: impl Into<CallOn<'g>>,
        n: usize,
        options: SortOptions,
    ) -> Result<Self> {
        onesweep::storage::<K>(&on.into(), n, ValueBytes::<V>::BYTES, options, false)
    }
}

/// Sort `keys_in` into `keys_out` (CUB's `DeviceRadixSort::SortKeys`): stable, in the order of
/// [`SortKey`] and `options`. Stream-ordered: returns once queued. `keys_in` is not modified.
///
/// Onesweep (Adinets and Merrill, 2022): one launch counts every pass's digits, then one launch
/// per 8-bit digit of the compared bits (4 for 32-bit keys) moves the keys, each tile finding
/// its place by decoupled look-back. Deterministic: the output depends only on the input.
/// Device memory: the workspace grows by one copy of the keys (the passes' alternate buffer),
/// 2 KiB of status per tile of `SORT_BLOCK * K::ONESWEEP_KEYS_ITEMS` keys (of the small tiles
/// for inputs of a few tiles per multiprocessor, [`SortKey::ONESWEEP_SMALL`]) and 1 KiB per pass.
/// Up to one tile of the block radix sort (`SORT_BLOCK * K::ITEMS` keys: 4096 of 4 bytes or
/// less, 3072 of 8) one block sorts the keys in shared memory in one launch, with no workspace
/// (CUB's single-tile sort); the result is the same.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) when `keys_out` is shorter than `keys_in`;
/// [`Error::InvalidBitRange`](crate::Error::InvalidBitRange) for a bit range past the key's width;
/// [`Error::TooManyKeys`](crate::Error::TooManyKeys) for more than
/// [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys; device errors (out of memory). Nothing is launched on an error.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let keys = DeviceVec::from_slice(&gpu, &[3.0f32, -1.0, f32::NAN, -0.0, 0.0])?;
/// let mut sorted = DeviceVec::<f32>::zeroed(&gpu, 5)?;
/// let mut workspace = DeviceWorkspace::new();
/// device::sort_keys(&gpu, &keys, &mut sorted, SortOptions::ascending(), &mut workspace)?;
/// let out = sorted.to_vec(&gpu)?;
/// assert_eq!(&out[..4], [-1.0, -0.0, 0.0, 3.0]);
/// assert!(out[4].is_nan());
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn sort_keys<'a, 'o, 'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (keys_in, keys_out) = (keys_in.into(), keys_out.into());
    check_len("sort_keys: keys_out", keys_in.len, keys_out.len)?;
    let buffers = SortBuffers {
        n: keys_in.len,
        keys_in: keys_in.address,
        keys_out: keys_out.address,
        values: Values::None,
        bounds: [keys_in.bound, keys_out.bound, Bound::default(), Bound::default()],
    };
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `keys` in place (through the workspace's alternate buffer); as [`sort_keys`].
///
/// # Errors
/// As [`sort_keys`].
pub fn sort_keys_in_place<'k, 'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let keys = keys.into();
    let buffers = SortBuffers::in_place(keys.len, keys.address, None, [keys.bound, Bound::default()]);
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `(key, value)` pairs by key into `keys_out` / `values_out` (CUB's
/// `DeviceRadixSort::SortPairs`): as [`sort_keys`], each value moving with its key. Values
/// are any type of 4 or 8 bytes (a compile-time check), moved as their bits.
///
/// # Errors
/// As [`sort_keys`], and [`Error::LengthMismatch`](crate::Error::LengthMismatch) when `values_in` or `values_out` is
/// shorter than `keys_in`.
pub fn sort_pairs<'a, 'b, 'o, 'p, 'g, K: SortKey, V: DeviceCopy>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    values_in: impl Into<DeviceView<'b, V>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    values_out: impl Into<DeviceViewMut<'p, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys_in, keys_out) = (keys_in.into(), keys_out.into());
    let (values_in, values_out) = (values_in.into(), values_out.into());
    let n = keys_in.len;
    check_len("sort_pairs: keys_out", n, keys_out.len)?;
    check_len("sort_pairs: values_in", n, values_in.len)?;
    check_len("sort_pairs: values_out", n, values_out.len)?;
    let buffers = SortBuffers {
        n,
        keys_in: keys_in.address,
        keys_out: keys_out.address,
        values: Values::Pairs {
            input: Some(values_in.address),
            output: values_out.address,
            bytes,
        },
        bounds: [keys_in.bound, keys_out.bound, values_in.bound, values_out.bound],
    };
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `(key, value)` pairs in place; as [`sort_pairs`].
///
/// # Errors
/// As [`sort_pairs`].
pub fn sort_pairs_in_place<'k, 'v, 'g, K: SortKey, V: DeviceCopy>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    values: impl Into<DeviceViewMut<'v, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys, values) = (keys.into(), values.into());
    check_len("sort_pairs_in_place: values", keys.len, values.len)?;
    let buffers = SortBuffers::in_place(
        keys.len,
        keys.address,
        Some((values.address, bytes)),
        [keys.bound, values.bound],
    );
    launch::<K>(on.into(), buffers, options, workspace)
}

/// Sort `keys` with the caller's `alternate` buffer instead of workspace memory (CUB's
/// `DeviceRadixSort::SortKeys` on a `DoubleBuffer`): the passes alternate between the two, so
/// nothing is copied and the workspace holds only the counts and the look-back status (no copy
/// of the keys). Returns which buffer holds the sorted keys: [`SortedIn::Current`] after an
/// even number of 8-bit passes over the compared bits, and for inputs of one tile (sorted in
/// place by one block); [`SortedIn::Alternate`] after an odd number. Both buffers' contents are
/// overwritten (the one not returned holds a partly sorted copy); otherwise as [`sort_keys`].
///
/// # Errors
/// As [`sort_keys`], and [`Error::LengthMismatch`](crate::Error::LengthMismatch) when `alternate` is shorter than `keys`.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SortOptions, SortedIn};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let host: Vec<u32> = (0..1_000_000u32).map(|i| i.wrapping_mul(2654435761)).collect();
/// let mut keys = DeviceVec::from_slice(&gpu, &host)?;
/// let mut alternate = DeviceVec::<u32>::zeroed(&gpu, host.len())?;
/// let mut workspace = DeviceWorkspace::new();
/// let options = SortOptions::ascending().bits(0..24); // 3 passes: an odd number
/// let sorted = device::sort_keys_double_buffer(&gpu, &mut keys, &mut alternate, options, &mut workspace)?;
/// assert_eq!(sorted, SortedIn::Alternate);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn sort_keys_double_buffer<'k, 'a, 'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceViewMut<'k, K>>,
    alternate: impl Into<DeviceViewMut<'a, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    let (keys, alternate) = (keys.into(), alternate.into());
    check_len("sort_keys_double_buffer: alternate", keys.len, alternate.len)?;
    let buffers = SortBuffers::in_place(keys.len, keys.address, None, [keys.bound, Bound::default()]);
    let alternate = Alternate {
        keys: alternate.address,
        values: None,
        bounds: [alternate.bound, Bound::default()],
    };
    launch_with::<K>(on.into(), buffers, Some(alternate), options, workspace)
}

/// Sort `(key, value)` pairs with the caller's alternate buffers (CUB's
/// `DeviceRadixSort::SortPairs` on two `DoubleBuffer`s); as [`sort_keys_double_buffer`], the
/// keys and values always ending in the same side.
///
/// # Errors
/// As [`sort_pairs`], and [`Error::LengthMismatch`](crate::Error::LengthMismatch) when a buffer is shorter than `keys`.
pub fn sort_pairs_double_buffer<'k, 'a, 'v, 'b, 'g, K: SortKey, V: DeviceCopy>(
    on: impl Into<CallOn<'g>>,
    (keys, keys_alternate): (impl Into<DeviceViewMut<'k, K>>, impl Into<DeviceViewMut<'a, K>>),
    (values, values_alternate): (impl Into<DeviceViewMut<'v, V>>, impl Into<DeviceViewMut<'b, V>>),
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<SortedIn> {
    let bytes = ValueBytes::<V>::BYTES;
    let (keys, keys_alternate) = (keys.into(), keys_alternate.into());
    let (values, values_alternate) = (values.into(), values_alternate.into());
    let n = keys.len;
    check_len("sort_pairs_double_buffer: keys alternate", n, keys_alternate.len)?;
    check_len("sort_pairs_double_buffer: values", n, values.len)?;
    check_len(
        "sort_pairs_double_buffer: values alternate",
        n,
        values_alternate.len,
    )?;
    let buffers = SortBuffers::in_place(
        n,
        keys.address,
        Some((values.address, bytes)),
        [keys.bound, values.bound],
    );
    let alternate = Alternate {
        keys: keys_alternate.address,
        values: Some(values_alternate.address),
        bounds: [keys_alternate.bound, values_alternate.bound],
    };
    launch_with::<K>(on.into(), buffers, Some(alternate), options, workspace)
}

/// The permutation that sorts `keys_in` (as `torch.argsort(stable=True)`): `indices_out[i]` is
/// the input index of the `i`-th key in order, and the sorted keys go to `keys_out`. The
/// indices are made by the first pass (nothing to upload); `u32`, as one call sorts fewer than
/// 2^32 keys. Otherwise as [`sort_pairs`].
///
/// # Errors
/// As [`sort_keys`], and [`Error::LengthMismatch`](crate::Error::LengthMismatch) when `indices_out` is short.
pub fn argsort<'a, 'o, 'i, 'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    indices_out: impl Into<DeviceViewMut<'i, u32>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (keys_in, keys_out, indices) = (keys_in.into(), keys_out.into(), indices_out.into());
    let n = keys_in.len;
    check_len("argsort: keys_out", n, keys_out.len)?;
    check_len("argsort: indices_out", n, indices.len)?;
    let buffers = SortBuffers {
        n,
        keys_in: keys_in.address,
        keys_out: keys_out.address,
        values: Values::Pairs {
            input: None,
            output: indices.address,
            bytes: 4,
        },
        bounds: [keys_in.bound, keys_out.bound, Bound::default(), indices.bound],
    };
    launch::<K>(on.into(), buffers, options, workspace)
}

/// [`sort_keys`] of a host slice.
///
/// Takes any call, as [`sort_keys`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the sort (with the call's tuning) and the
/// copy back are queued in that order on the call's stream, which is synchronised.
///
/// # Errors
/// As [`sort_keys`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::sort_keys_slice(&gpu, &[5i64, -1, 7, 2], SortOptions::descending())?, [7, 5, 2, -1]);
/// let stream = gpu.create_stream()?;
/// let sorted = device::sort_keys_slice(gpu.on(&stream)?, &[5i64, -1, 7, 2], SortOptions::ascending())?;
/// assert_eq!(sorted, [-1, 2, 5, 7]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn sort_keys_slice<'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys: &[K],
    options: SortOptions,
) -> Result<Vec<K>> {
    let on = on.into();
    let stream = on.stream();
    let mut d_keys = stream.upload(K::as_raw(keys))?;
    let mut workspace = DeviceWorkspace::new();
    sort_keys_in_place::<K>(on, raw_view_mut::<K>(&mut d_keys), options, &mut workspace)?;
    Ok(K::from_raw(&stream.download(&d_keys)?).to_vec())
}

/// [`sort_pairs`] of host slices: the sorted keys and their values.
///
/// Takes any call, as [`sort_pairs`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copies, the sort (with the call's tuning) and the
/// copies back are queued in that order on the call's stream, which is synchronised.
///
/// # Errors
/// As [`sort_pairs`].
pub fn sort_pairs_slice<'g, K: SortKey, V: DeviceCopy + Default + Clone>(
    on: impl Into<CallOn<'g>>,
    keys: &[K],
    values: &[V],
    options: SortOptions,
) -> Result<(Vec<K>, Vec<V>)> {
    let on = on.into();
    let stream = on.stream();
    let mut d_keys = stream.upload(K::as_raw(keys))?;
    let mut d_values = stream.upload(values)?;
    let mut workspace = DeviceWorkspace::new();
    sort_pairs_in_place::<K, V>(
        on,
        raw_view_mut::<K>(&mut d_keys),
        &mut d_values,
        options,
        &mut workspace,
    )?;
    Ok((
        K::from_raw(&stream.download(&d_keys)?).to_vec(),
        stream.download(&d_values)?,
    ))
}

/// [`argsort`] of a host slice: the permutation that sorts it.
///
/// Takes any call, as [`argsort`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the clears of the outputs, the sort (with
/// the call's tuning) and the copy back are queued in that order on the call's stream, which
/// is synchronised.
///
/// # Errors
/// As [`argsort`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, SortOptions};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::argsort_slice(&gpu, &[0.5f32, -2.0, 0.5, 1.0], SortOptions::ascending())?, [1, 0, 2, 3]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn argsort_slice<'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys: &[K],
    options: SortOptions,
) -> Result<Vec<u32>> {
    let on = on.into();
    let stream = on.stream();
    let d_keys = stream.upload(K::as_raw(keys))?;
    let mut d_sorted = stream.alloc_zeroed::<K::Raw>(keys.len())?;
    let mut d_indices = stream.alloc_zeroed::<u32>(keys.len())?;
    let mut workspace = DeviceWorkspace::new();
    argsort::<K>(
        on,
        raw_view::<K>(&d_keys),
        raw_view_mut::<K>(&mut d_sorted),
        &mut d_indices,
        options,
        &mut workspace,
    )?;
    stream.download(&d_indices)
}
