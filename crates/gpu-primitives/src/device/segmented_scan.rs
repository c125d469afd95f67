//! Segmented scans in one pass with decoupled look-back (kernels `device::segmented_scan`): by
//! CSR offsets ([`segmented_inclusive_scan`], [`segmented_exclusive_scan`], and the segmented
//! reduce by offsets of [`segmented_reduce`](super::segmented_reduce)) and by key
//! ([`inclusive_scan_by_key`], [`exclusive_scan_by_key`], as CUB's `DeviceScan::*ScanByKey`).
//!
//! The tiles split the items, not the segments: the time depends on the number of items, not on
//! how they are split into segments (one segment of 2^28 items beside a million of one item
//! costs what a plain scan of the same items costs).

use super::element::{DeviceView, DeviceViewMut, Element, Operator, check_bound};
use super::temp_storage::{Region, TempStorage};
use super::workspace::{DeviceWorkspace, InUse, StatusLayout};
use super::{DEVICE_SHARED_BYTES, ScanKind, look_back_delay};
use crate::{CallOn, Error, LaunchConfig, OffsetRule, Result};
use gpu_primitives_abi::families;
use gpu_primitives_abi::layout::WARP_SIZE;
use gpu_primitives_abi::layout::segmented_shared_bytes;
use gpu_primitives_abi::params::{SegmentTileStartsParams, SegmentedScanParams};
use gpu_primitives_abi::tuning::SegmentedPolicy;

/// The segmented family's tile shapes and tile-starts threshold, which a workspace size asked
/// without a GPU needs: the same on every architecture (`crate::tuning::SHAPES_ARCH`).
const SHAPES: SegmentedPolicy = SegmentedPolicy::for_arch(crate::tuning::SHAPES_ARCH);

/// The scans by key (`device_scan_by_<key>_key_<element>_<op>`).
const SCAN_BY_KEY: &families::Family = families::family("device_scan_by");
/// The search for each tile's first segment (`device_segment_tile_starts`).
const TILE_STARTS: &families::Family = families::family("device_segment_tile_starts");

/// CSR segment offsets in device memory, checked: `segments + 1` non-decreasing `u64` offsets,
/// segment `s` being items `offsets[s] .. offsets[s + 1]` of the input (empty when they are
/// equal). Items before `offsets[0]` and from `offsets[segments]` on belong to no segment.
///
/// Made once and passed to any number of calls: [`SegmentOffsets::new`] reads the offsets back
/// to check them (it synchronises the stream); [`SegmentOffsets::new_unchecked`] trusts the
/// caller. Each call then checks only that the offsets fit its input.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, SegmentOffsets};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let offsets = DeviceVec::from_slice(&gpu, &[0u64, 2, 2, 5])?; // segments [0, 2), [2, 2), [2, 5)
/// let segments = SegmentOffsets::new(&gpu, &offsets)?;
/// assert_eq!((segments.segments(), segments.end()), (3, 5));
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct SegmentOffsets<'a> {
    offsets: DeviceView<'a, u64>,
    end: u64,
    /// The longest segment's length, when read ([`new`](Self::new)).
    longest: Option<u64>,
}

impl<'a> SegmentOffsets<'a> {
    /// Check `offsets` (copied to the host, after the work queued before on the stream, which
    /// is synchronised): at least one offset, non-decreasing, fewer than `u32::MAX` segments.
    ///
    /// # Errors
    /// [`Error::InvalidOffsets`] naming the first offset that decreases;
    /// [`Error::LengthMismatch`] for no offset at all;
    /// [`Error::WrongContext`] / [`Error::InvalidArgument`] for offsets of another context or
    /// borrowed for another stream (as every call, [module docs](crate::device)); device errors.
    pub fn new<'g>(on: impl Into<CallOn<'g>>, offsets: impl Into<DeviceView<'a, u64>>) -> Result<Self> {
        let (on, offsets) = (on.into(), offsets.into());
        check_bound(&on, "segment offsets", &[offsets.bound])?;
        let mut host = vec![0u64; offsets.len];
        // SAFETY: a view holds `len` initialised u64 in the GPU's context.
        unsafe { on.stream().copy_to_host(offsets.address, &mut host)? };
        check_offsets(&host)?;
        Ok(Self {
            offsets,
            end: host[host.len() - 1],
            longest: Some(host.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)),
        })
    }

    /// Offsets the caller vouches for, without reading them.
    ///
    /// # Safety
    /// `offsets` holds at least one offset, is non-decreasing, has fewer than `u32::MAX`
    /// segments, and its last offset is `end`: the kernels search and index with them unchecked.
    pub unsafe fn new_unchecked(offsets: impl Into<DeviceView<'a, u64>>, end: u64) -> Self {
        Self {
            offsets: offsets.into(),
            end,
            longest: None,
        }
    }

    /// Number of segments (one less than the offsets).
    pub fn segments(&self) -> usize {
        self.offsets.len - 1
    }

    /// The last offset: one past the last segment's last item. Inputs must be at least this
    /// long.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The longest segment's length (from [`new`](Self::new); [`new_unchecked`](Self::new_unchecked)
    /// assumes the last offset).
    pub fn longest(&self) -> u64 {
        self.longest.unwrap_or(self.end)
    }

    /// Whether the offsets were read and checked ([`new`](Self::new)): only then may a call
    /// read them back on the host to plan its launches (the segmented sort's longest segments).
    pub(crate) fn checked(&self) -> bool {
        self.longest.is_some()
    }

    /// The offsets.
    pub fn offsets(&self) -> DeviceView<'a, u64> {
        self.offsets
    }
}

/// The rules of [`SegmentOffsets::new`] on a host copy of the offsets.
pub(crate) fn check_offsets(offsets: &[u64]) -> Result<()> {
    if offsets.is_empty() {
        return Err(Error::LengthMismatch {
            what: "segment offsets: n segments need n + 1 offsets",
            expected: 1,
            found: 0,
        });
    }
    if offsets.len() > u32::MAX as usize {
        return Err(Error::PastLimit {
            what: "segment offsets",
            count: offsets.len() - 1,
            unit: "segments",
            max: u32::MAX as usize - 1,
        });
    }
    if let Some(s) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::InvalidOffsets {
            what: "segment offsets",
            at: s + 1,
            offset: offsets[s + 1],
            rule: OffsetRule::Decreasing { before: offsets[s] },
        });
    }
    Ok(())
}

/// A key type of the scans by key: keys compare by their bits, so `i32` keys use the `u32`
/// kernels and `i64` keys the `u64` ones (the key table, `gpu_primitives_abi::scan_key_table!`).
pub trait ScanKey: gpu_primitives_runtime::DeviceCopy + bytemuck::Pod + Send + Sync + 'static {
    /// The kernel-name part of the kernels that compare keys of this width.
    const KERNEL_KEY: &'static str;
    /// Keys per 16-byte load.
    const VECTOR: u32;
}

macro_rules! scan_keys {
    ([] $($key:ident => $ty:ty, $vec:literal;)*) => {
        $(impl ScanKey for $ty {
            const KERNEL_KEY: &'static str = stringify!($key);
            const VECTOR: u32 = $vec;
        })*
    };
}
gpu_primitives_abi::scan_key_table!(scan_keys);

impl ScanKey for i32 {
    const KERNEL_KEY: &'static str = <u32 as ScanKey>::KERNEL_KEY;
    const VECTOR: u32 = <u32 as ScanKey>::VECTOR;
}

impl ScanKey for i64 {
    const KERNEL_KEY: &'static str = <u64 as ScanKey>::KERNEL_KEY;
    const VECTOR: u32 = <u64 as ScanKey>::VECTOR;
}

/// Where the heads come from, as the kernel's parameters say.
pub(crate) enum Heads<'s, 'o> {
    /// Key changes: the kernel for keys of `kernel_key` bits at `address`, with the wider of
    /// the key's and the value's vector widths.
    Keys {
        kernel_key: &'static str,
        address: u64,
        vector: u32,
    },
    /// CSR offsets.
    Offsets { segments: &'s SegmentOffsets<'o> },
}

/// What a segmented kernel computes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// The inclusive or exclusive scan of each segment.
    Scan(ScanKind),
    /// Each segment's total (by offsets only).
    Reduce,
}

/// Queue one segmented kernel over `input` into the device address `output`.
pub(crate) fn launch<T: Element, Op: Operator>(
    on: CallOn<'_>,
    family: Family,
    input: DeviceView<'_, T>,
    heads: Heads<'_, '_>,
    output: u64,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let n = input.len;
    let key_vector = match &heads {
        Heads::Keys { vector, .. } => Some(*vector),
        Heads::Offsets { .. } => None,
    };
    let tile = segmented_tile::<T>(family, key_vector);
    // The segmented scans' look-back delay, or the segmented reduce's (sums by offsets).
    let policy = crate::tuning::segmented(&on);
    let (kind, delay) = match family {
        Family::Scan(kind) => (kind, policy.scan_look_back_delay_ns),
        Family::Reduce => (ScanKind::Inclusive, policy.reduce_look_back_delay_ns),
    };
    let (family, kernels) = match family {
        Family::Scan(_) => (
            "segmented_scan",
            const { families::family("device_segmented_scan") },
        ),
        Family::Reduce => (
            "segmented_reduce_by_offsets",
            const { families::family("device_segmented_reduce_by_offsets") },
        ),
    };
    let tiles = tiles_for(family, n, tile)?;
    let by_offsets = matches!(heads, Heads::Offsets { .. });
    let (need, starts) = segmented_need(tiles, by_offsets);
    let mut workspace = workspace.begin(on.stream(), &need)?;
    let starts = match heads {
        Heads::Offsets { segments, .. } => tile_starts(on, segments, tile, tiles, &workspace, starts)?,
        Heads::Keys { .. } => 0,
    };
    let (name, keys, offsets, segments, shared) = match heads {
        Heads::Keys {
            kernel_key, address, ..
        } => (
            crate::registered(SCAN_BY_KEY, &[kernel_key, "key", T::NAME, Op::NAME])?.name,
            address,
            0,
            0,
            DEVICE_SHARED_BYTES,
        ),
        Heads::Offsets { segments } => (
            crate::registered(kernels, &[T::NAME, Op::NAME])?.name,
            0,
            segments.offsets.address,
            segments.segments(),
            segmented_shared_bytes(tile as u32),
        ),
    };
    // The key type of the parameters is a pointer's: any 8-byte stand-in has the same layout.
    let kernel = crate::module(on.gpu())?.kernel::<SegmentedScanParams<T::Raw, T::Acc, u64>>(name)?;
    let status = workspace.look_back_tiles(StatusLayout::Pair, tiles)?;
    let config = LaunchConfig::new(tiles as u32, policy.block_threads).with_shared_mem(shared);
    let params = SegmentedScanParams {
        input: input.address as *const T::Raw,
        output: output as *mut T::Acc,
        n,
        keys: keys as *const u64,
        offsets: offsets as *const u64,
        segments,
        tile_starts: starts as *const u32,
        status,
        exclusive: (kind == ScanKind::Exclusive) as u32,
        look_back_delay_ns: look_back_delay(tiles, policy.look_back_delay_min_tiles, delay),
    };
    // SAFETY: the callers check that `input` (and the keys) address n elements, the output n
    // values (scans) or one per segment (reduce), and that the offsets are checked ones that
    // fit n; their tile starts (tiles + 1) are queued before on the stream; the workspace
    // gives 16 bytes of status per tile (16-byte aligned), a counter, the tile base and an
    // epoch newer than every slot's; the grid has exactly max(1, ceil(n / tile)) blocks of
    // `block_threads` threads and the shared memory the family needs.
    unsafe { on.stream().launch(&kernel, config, &params)? };
    workspace.look_back_launched();
    Ok(())
}

/// The items a tile of a segmented kernel of `family` over `T` holds: by key (`key_vector`,
/// the wider of the key's and the value's vector widths) or by offsets (`None`).
fn segmented_tile<T: Element>(family: Family, key_vector: Option<u32>) -> usize {
    let acc = size_of::<T::Acc>();
    let items = match (family, key_vector) {
        (Family::Reduce, _) => SHAPES.reduce_items(acc),
        (Family::Scan(_), Some(vector)) => SHAPES.scan_items(vector as usize, acc),
        (Family::Scan(_), None) => SHAPES.scan_items(T::VECTOR as usize, acc),
    };
    SHAPES.block_threads as usize * items
}

/// What a segmented kernel over `n` items in tiles of `tile` needs of the workspace: the
/// look-back status of its tiles and, by offsets, their starts (from
/// the segmented policy's `tile_starts_min_tiles` tiles on, see [`tile_starts`]).
pub(crate) fn segmented_storage(
    family: &'static str,
    n: usize,
    tile: usize,
    by_offsets: bool,
) -> Result<TempStorage> {
    Ok(segmented_need(tiles_for(family, n, tile)?, by_offsets).0)
}

/// [`segmented_storage`] of `tiles` tiles, and the scratch region of their starts (empty where
/// the kernel reads none).
pub(crate) fn segmented_need(tiles: usize, by_offsets: bool) -> (TempStorage, Region) {
    let starts = if by_offsets && reads_tile_starts(tiles) {
        tiles + 1
    } else {
        0
    };
    let (starts, region) = TempStorage::region(starts * size_of::<u32>());
    let need = TempStorage {
        scratch: starts.scratch,
        ..TempStorage::look_back(StatusLayout::Pair, tiles)
    };
    (need, region)
}

impl TempStorage {
    /// [`segmented_inclusive_scan`] and [`segmented_exclusive_scan`] of `n` items of `T` (by
    /// offsets): 16 bytes of look-back status a tile and, from
    /// the segmented policy's `tile_starts_min_tiles` tiles on, 4 bytes a tile for where each
    /// starts.
    ///
    /// # Errors
    /// [`Error::PastGridLimit`] where the call would fail: tiles past the grid limit.
    pub fn segmented_scan<T: Element>(n: usize) -> Result<Self> {
        let family = Family::Scan(ScanKind::Inclusive);
        segmented_storage("segmented_scan", n, segmented_tile::<T>(family, None), true)
    }

    /// [`inclusive_scan_by_key`] and [`exclusive_scan_by_key`] of `n` items of `T` keyed by
    /// `K`: 16 bytes of look-back status a tile.
    ///
    /// # Errors
    /// [`Error::PastGridLimit`] where the call would fail: tiles past the grid limit.
    pub fn scan_by_key<K: ScanKey, T: Element>(n: usize) -> Result<Self> {
        let tile = segmented_tile::<T>(Family::Scan(ScanKind::Inclusive), Some(key_vector::<K, T>()));
        segmented_storage("scan by key", n, tile, false)
    }

    /// [`segmented_reduce`](super::segmented_reduce) by offsets of `n` items of `T`: as
    /// [`segmented_scan`](Self::segmented_scan), in tiles of the reduce's length (by rows it
    /// needs nothing).
    ///
    /// # Errors
    /// [`Error::PastGridLimit`] where the call would fail: tiles past the grid limit.
    pub fn segmented_reduce<T: Element>(n: usize) -> Result<Self> {
        segmented_storage(
            "segmented_reduce_by_offsets",
            n,
            segmented_tile::<T>(Family::Reduce, None),
            true,
        )
    }
}

/// Whether a grid of `tiles` tiles by offsets reads its tiles' starts (found by a kernel
/// first) rather than each tile searching the offsets.
fn reads_tile_starts(tiles: usize) -> bool {
    tiles >= SHAPES.tile_starts_min_tiles
}

/// The vector width of a scan by key: the wider of the key's and the value's.
fn key_vector<K: ScanKey, T: Element>() -> u32 {
    K::VECTOR.max(T::VECTOR)
}

/// The tiles of a segmented grid over `n` items (at least one, so that a reduce of empty input
/// still gives every segment its identity), or an error past the grid limit.
pub(crate) fn tiles_for(family: &'static str, n: usize, tile: usize) -> Result<usize> {
    let tiles = n.div_ceil(tile).max(1);
    if tiles > LaunchConfig::MAX_GRID as usize {
        return Err(Error::PastGridLimit {
            what: family,
            items: n,
            tiles,
            max_tiles: LaunchConfig::MAX_GRID as usize,
        });
    }
    Ok(tiles)
}

/// From the segmented policy's `tile_starts_min_tiles` tiles on, queue the kernel that finds where each of
/// `tiles` tiles of `tile` items starts among the segments of `segments` (the kernels by
/// offsets read it instead of searching) and return the device address of the `tiles + 1`
/// starts, carved from `region` of the call's arena ([`segmented_need`]); below, 0 (each
/// tile searches).
pub(crate) fn tile_starts(
    on: CallOn<'_>,
    segments: &SegmentOffsets<'_>,
    tile: usize,
    tiles: usize,
    workspace: &InUse<'_, '_>,
    region: Region,
) -> Result<u64> {
    if !reads_tile_starts(tiles) {
        return Ok(0);
    }
    let starts = workspace.arena().carve(region, (tiles + 1) * size_of::<u32>())?;
    let kernel = crate::module(on.gpu())?
        .kernel::<SegmentTileStartsParams>(crate::registered(TILE_STARTS, &[])?.name)?;
    // One warp per start.
    let block = crate::tuning::segmented(&on).block_threads;
    let blocks = ((tiles + 1) * WARP_SIZE as usize).div_ceil(block as usize) as u32;
    let params = SegmentTileStartsParams {
        offsets: segments.offsets.address as *const u64,
        segments: segments.segments(),
        tile_items: tile,
        tiles,
        starts: starts as *mut u32,
    };
    // SAFETY: the offsets are checked ones (`segments + 1`, non-decreasing); `starts` holds
    // `tiles + 1` u32 of the workspace; the blocks are whole warps, one per start.
    unsafe {
        on.stream()
            .launch(&kernel, LaunchConfig::new(blocks, block), &params)?
    };
    Ok(starts)
}

/// The checks every call by offsets makes: the offsets fit the input.
pub(crate) fn check_fit(what: &'static str, segments: &SegmentOffsets<'_>, n: usize) -> Result<()> {
    if segments.end() > n as u64 {
        return Err(Error::InvalidOffsets {
            what,
            at: segments.segments(),
            offset: segments.end(),
            rule: OffsetRule::PastInput { items: n },
        });
    }
    Ok(())
}

fn scan_by_offsets<T: Element, Op: Operator>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    segments: &SegmentOffsets<'_>,
    output: DeviceViewMut<'_, T::Acc>,
    kind: ScanKind,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    check_bound(
        &on,
        "segmented scan",
        &[input.bound, segments.offsets.bound, output.bound],
    )?;
    check_fit("segmented scan", segments, input.len)?;
    if output.len < input.len {
        return Err(Error::LengthMismatch {
            what: "segmented scan: output too short",
            expected: input.len,
            found: output.len,
        });
    }
    if input.len == 0 {
        return Ok(());
    }
    let heads = Heads::Offsets { segments };
    launch::<T, Op>(on, Family::Scan(kind), input, heads, output.address, workspace)
}

/// The inclusive scan of each segment: `output[i] = input[b] ⊕ ... ⊕ input[i]` for `i` in
/// segment `offsets[s] .. offsets[s + 1]` starting at `b`; items outside every segment are left
/// alone, as is the rest of a longer output. Stream-ordered. f16 / bf16 scan into f32. Float
/// results can differ in the last bits from run to run (as [`inclusive_scan`](super::inclusive_scan)).
///
/// # Errors
/// [`Error::InvalidOffsets`] when the last offset is past the input; [`Error::LengthMismatch`]
/// when `output` is shorter than `input`; both before any launch. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SegmentOffsets, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1u32, 2, 3, 4, 5])?;
/// let offsets = DeviceVec::from_slice(&gpu, &[0u64, 2, 5])?;
/// let segments = SegmentOffsets::new(&gpu, &offsets)?;
/// let mut y = gpu.alloc_zeroed::<u32>(5)?;
/// device::segmented_inclusive_scan::<u32, Sum>(&gpu, &x, &segments, &mut y, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [1, 3, 3, 7, 12]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_inclusive_scan<'a, 'o, 'g, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    segments: &SegmentOffsets<'_>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    scan_by_offsets::<T, Op>(
        on.into(),
        input.into(),
        segments,
        output.into(),
        ScanKind::Inclusive,
        workspace,
    )
}

/// The exclusive scan of each segment: `output[i] = input[b] ⊕ ... ⊕ input[i - 1]`, the
/// identity at each segment's first item. As [`segmented_inclusive_scan`].
///
/// # Errors
/// As [`segmented_inclusive_scan`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SegmentOffsets, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1u32, 2, 3, 4, 5])?;
/// let offsets = DeviceVec::from_slice(&gpu, &[0u64, 2, 5])?;
/// let segments = SegmentOffsets::new(&gpu, &offsets)?;
/// let mut y = gpu.alloc_zeroed::<u32>(5)?;
/// device::segmented_exclusive_scan::<u32, Sum>(&gpu, &x, &segments, &mut y, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [0, 1, 0, 3, 7]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn segmented_exclusive_scan<'a, 'o, 'g, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    segments: &SegmentOffsets<'_>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    scan_by_offsets::<T, Op>(
        on.into(),
        input.into(),
        segments,
        output.into(),
        ScanKind::Exclusive,
        workspace,
    )
}

fn scan_by_key<K: ScanKey, T: Element, Op: Operator>(
    on: CallOn<'_>,
    keys: DeviceView<'_, K>,
    input: DeviceView<'_, T>,
    output: DeviceViewMut<'_, T::Acc>,
    kind: ScanKind,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    check_bound(&on, "scan by key", &[keys.bound, input.bound, output.bound])?;
    if keys.len != input.len {
        return Err(Error::LengthMismatch {
            what: "scan by key: keys and values differ in length",
            expected: input.len,
            found: keys.len,
        });
    }
    if output.len < input.len {
        return Err(Error::LengthMismatch {
            what: "scan by key: output too short",
            expected: input.len,
            found: output.len,
        });
    }
    if input.len == 0 {
        return Ok(());
    }
    let heads = Heads::Keys {
        kernel_key: K::KERNEL_KEY,
        address: keys.address,
        // The kernel's rows: the wider of the key's and the value's vectors.
        vector: key_vector::<K, T>(),
    };
    launch::<T, Op>(on, Family::Scan(kind), input, heads, output.address, workspace)
}

/// The inclusive scan of each run of equal keys: `output[i] = values[b] ⊕ ... ⊕ values[i]`,
/// `b` the first item of the run of `keys[i]` that holds `i` (a new segment wherever the key
/// changes; keys compare by bits). Stream-ordered; the rest of a longer output is left alone.
/// f16 / bf16 values scan into f32. Float results can differ in the last bits from run to run.
///
/// # Errors
/// [`Error::LengthMismatch`] when keys and values differ in length or the output is shorter,
/// before any launch. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let keys = DeviceVec::from_slice(&gpu, &[7u32, 7, 3, 3, 3, 7])?;
/// let x = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let mut y = gpu.alloc_zeroed::<f32>(6)?;
/// device::inclusive_scan_by_key::<u32, f32, Sum>(&gpu, &keys, &x, &mut y, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [1.0, 3.0, 3.0, 7.0, 12.0, 6.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn inclusive_scan_by_key<'k, 'a, 'o, 'g, K: ScanKey, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceView<'k, K>>,
    values: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    scan_by_key::<K, T, Op>(
        on.into(),
        keys.into(),
        values.into(),
        output.into(),
        ScanKind::Inclusive,
        workspace,
    )
}

/// The exclusive scan of each run of equal keys: the identity at each run's first item. As
/// [`inclusive_scan_by_key`].
///
/// # Errors
/// As [`inclusive_scan_by_key`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Max};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let keys = DeviceVec::from_slice(&gpu, &[1i64, 1, 1, 2])?;
/// let x = DeviceVec::from_slice(&gpu, &[5i32, 9, 2, 4])?;
/// let mut y = gpu.alloc_zeroed::<i32>(4)?;
/// device::exclusive_scan_by_key::<i64, i32, Max>(&gpu, &keys, &x, &mut y, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&y)?, [i32::MIN, 5, 9, i32::MIN]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn exclusive_scan_by_key<'k, 'a, 'o, 'g, K: ScanKey, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceView<'k, K>>,
    values: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    scan_by_key::<K, T, Op>(
        on.into(),
        keys.into(),
        values.into(),
        output.into(),
        ScanKind::Exclusive,
        workspace,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_that_decrease_are_named_by_index_and_rule() {
        match check_offsets(&[0, 3, 2, 4]) {
            Err(Error::InvalidOffsets {
                what,
                at,
                offset,
                rule,
            }) => {
                assert_eq!((what, at, offset), ("segment offsets", 2, 2));
                assert_eq!(rule, OffsetRule::Decreasing { before: 3 });
            }
            other => panic!("{other:?}"),
        }
        let message = check_offsets(&[5, 4]).unwrap_err().to_string();
        assert_eq!(
            message,
            "segment offsets: offsets[1] = 4 is below the offset before it (5): offsets must not decrease"
        );
        assert!(matches!(
            check_offsets(&[]),
            Err(Error::LengthMismatch {
                expected: 1,
                found: 0,
                ..
            })
        ));
        assert!(check_offsets(&[0, 0, 7]).is_ok());
    }

    #[test]
    fn a_last_offset_past_the_input_is_named() {
        // SAFETY: the offsets are never read: only their count and end are.
        let segments = unsafe { SegmentOffsets::new_unchecked(DeviceView::<u64>::from_raw_parts(0, 3), 9) };
        match check_fit("segmented scan", &segments, 8) {
            Err(Error::InvalidOffsets { at, offset, rule, .. }) => {
                assert_eq!((at, offset), (2, 9));
                assert_eq!(rule, OffsetRule::PastInput { items: 8 });
            }
            other => panic!("{other:?}"),
        }
        assert!(check_fit("segmented scan", &segments, 9).is_ok());
    }
}
