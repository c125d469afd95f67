//! [`DeviceWorkspace`]: the device memory the device-wide algorithms need between calls.

use super::temp_storage::TempStorage;
use crate::{DeviceBuffer, Error, OnStream, Result, Stream};
use gpu_primitives_abi::layout::{MAX_EPOCH, TILE_STATUS_BYTES};
use gpu_primitives_abi::params::LookBackStatus;
use gpu_primitives_runtime::{DeviceCopy, Event};

/// Temporary device storage for the reductions and the scans, reused across calls and grown on
/// demand (never shrunk); size it ahead of the calls with [`TempStorage`] and
/// [`DeviceWorkspace::reserve_for`] (CUB's `temp_storage_bytes`).
///
/// Holds: the reduce's per-block partials, block counter and result (8 bytes per block + 28),
/// the scan's per-tile status (16 bytes per tile) and tile counter, a range histogram's
/// levels, where each tile of a segmented call by offsets starts (4 bytes per tile), and
/// cross-entropy's per-row losses and count (4 bytes per row + 4), and the radix sort's digit
/// counts (1 KiB per pass), per-digit tile status (2 KiB per tile) and alternate keys and
/// values (as many bytes as the keys and values sorted). The scan's status needs
/// no clearing between calls: each call has its own epoch number (see kernels
/// `device::tile_status`).
///
/// **Stream order.** What a call adds is allocated and cleared in stream order on that call's
/// stream (`cuMemAllocAsync` from the device's memory pool; a buffer it outgrows is freed with
/// `cuMemFreeAsync`), so a stream-ordered call stays stream-ordered and never synchronises the
/// device; to keep allocation out of a hot loop entirely, size it first with
/// [`DeviceWorkspace::reserve_for`].
///
/// **Several streams.** The workspace remembers where it was last used (an event recorded on
/// that call's stream after its work): a call on another stream first makes its stream wait for
/// that event, so calls sharing a workspace on different streams run one after the other,
/// never over each other's temporary storage. A call on a stream of another context (another
/// device's `Gpu`) is refused with [`Error::WrongContext`].
///
/// **Failures.** A call that fails at any step (an allocation, a kernel's compilation, a launch)
/// leaves the workspace usable: the next call is right. The look-back tile counter is cleared in
/// stream order before the next launch whenever a launch that took a status may not have run.
///
/// Dropping it waits for its last use (that event, not the device), then frees its memory.
#[derive(Default)]
pub struct DeviceWorkspace {
    partials: Option<DeviceBuffer<u64>>,
    blocks_done: Option<DeviceBuffer<u32>>,
    result: Option<DeviceBuffer<u64>>,
    /// Look-back status slots, one buffer a [`StatusLayout`].
    word_slots: Option<DeviceBuffer<u64>>,
    pair_slots: Option<DeviceBuffer<u64>>,
    /// The pair slots may hold words of a layout not the library's (a caller's kernel through
    /// [`DeviceWorkspace::look_back_status`]): cleared before the next use.
    pair_slots_foreign: bool,
    counter: Option<DeviceBuffer<u64>>,
    levels: Option<DeviceBuffer<u64>>,
    tile_starts: Option<DeviceBuffer<u32>>,
    row_values: Option<DeviceBuffer<u32>>,
    sort_counts: Option<DeviceBuffer<u32>>,
    sort_scratch: Option<DeviceBuffer<u64>>,
    /// The first ticket of the next look-back launch: the tile counter's value once every
    /// launch that took a status has run.
    tile_base: u64,
    epoch: u32,
    /// A look-back status was handed out for a launch that may not have been queued (it failed,
    /// or it is the caller's own through [`DeviceWorkspace::look_back_status`]): the counter's
    /// value is unknown, so it is cleared before the next launch takes a status.
    counter_unknown: bool,
    /// Recorded on the stream of the last call, after its work.
    last_use: Option<Event>,
}

impl Drop for DeviceWorkspace {
    fn drop(&mut self) {
        // Wait for the last call's work (not the device's), then free without waiting again.
        let idle = self
            .last_use
            .as_ref()
            .is_none_or(|event| event.synchronize().is_ok());
        if !idle {
            return; // the buffers' own drops synchronise their context first
        }
        fn free<T: DeviceCopy>(buffer: &mut Option<DeviceBuffer<T>>) {
            if let Some(buffer) = buffer.take() {
                // SAFETY: the event recorded after the workspace's last use has completed, so
                // no work using the buffer is pending.
                unsafe { buffer.free_idle() };
            }
        }
        free(&mut self.partials);
        free(&mut self.blocks_done);
        free(&mut self.result);
        free(&mut self.word_slots);
        free(&mut self.pair_slots);
        free(&mut self.counter);
        free(&mut self.levels);
        free(&mut self.tile_starts);
        free(&mut self.row_values);
        free(&mut self.sort_counts);
        free(&mut self.sort_scratch);
    }
}

/// A [`DeviceWorkspace`] in use by one call on one stream ([`DeviceWorkspace::begin`]): made
/// after the stream waits for the workspace's previous use; on drop, after the call's work is
/// queued, it records where this use ends.
pub(crate) struct InUse<'w, 's> {
    workspace: &'w mut DeviceWorkspace,
    stream: &'s Stream,
}

impl std::ops::Deref for InUse<'_, '_> {
    type Target = DeviceWorkspace;
    fn deref(&self) -> &DeviceWorkspace {
        self.workspace
    }
}

impl std::ops::DerefMut for InUse<'_, '_> {
    fn deref_mut(&mut self) -> &mut DeviceWorkspace {
        self.workspace
    }
}

impl Drop for InUse<'_, '_> {
    fn drop(&mut self) {
        let recorded = match &self.workspace.last_use {
            Some(event) => event.record(self.stream),
            None => Event::new(self.stream, false).and_then(|event| {
                event.record(self.stream)?;
                self.workspace.last_use = Some(event);
                Ok(())
            }),
        };
        if recorded.is_err() {
            // No event marks this use's end: wait for it here instead (a driver this broken
            // reports its error at the next call).
            let _ = self.stream.synchronize();
        }
    }
}

/// A look-back status for a kernel of the caller's own ([`DeviceWorkspace::look_back_status`]).
/// Keep it until that kernel is queued on the stream it was asked for: dropping it records the
/// end of the workspace's use there.
pub struct LookBackTicket<'w, 's> {
    _in_use: InUse<'w, 's>,
    status: LookBackStatus,
}

impl LookBackTicket<'_, '_> {
    /// The status to put in the kernel's parameters (`TileStatus::from(status)` on the device).
    pub fn status(&self) -> LookBackStatus {
        self.status
    }
}

/// How a kernel family lays out a tile's status (kernels `device::tile_status`): a *word*
/// (8 bytes a tile, or a digit of a tile: the flag in the high half, a 4-byte value in the low)
/// or a *pair* (16 bytes a tile: the flag in the low half of the first word, an 8-byte value in
/// the second). The flag sits in different places, so each layout has slots of its own: read
/// in the other's layout, a stale slot's value bits could pass for a current flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatusLayout {
    /// 4-byte values: the `f32`, `u32`, `i32` (and half-precision) scans, the radix sort's
    /// digit counts.
    Word,
    /// 8-byte values: the 8-byte scans, compaction and run-length counts (`u64`), the segmented
    /// scans' (value, segment) pairs.
    Pair,
}

impl StatusLayout {
    /// The layout of a status carrying `bytes`-byte values (`TileStatus<A>` with
    /// `size_of::<A>() == bytes`).
    pub(crate) fn of_value_bytes(bytes: usize) -> Self {
        if bytes <= 4 { Self::Word } else { Self::Pair }
    }
}

impl TempStorage {
    /// `words` 8-byte look-back status words in `layout` (and the tile counter).
    pub(crate) fn look_back_words(layout: StatusLayout, words: usize) -> Self {
        match layout {
            StatusLayout::Word => Self {
                word_slots: words,
                ..Self::default()
            },
            StatusLayout::Pair => Self {
                pair_slots: words,
                ..Self::default()
            },
        }
    }

    /// The look-back status of `tiles` tiles of [`TILE_STATUS_BYTES`] each in `layout`, as
    /// [`DeviceWorkspace::look_back_tiles`] takes it.
    pub(crate) fn look_back(layout: StatusLayout, tiles: usize) -> Self {
        Self::look_back_words(layout, tiles.saturating_mul(TILE_STATUS_BYTES / 8))
    }
}

/// The 8-byte status words of `tiles` tiles.
fn status_words_for(tiles: usize) -> Result<usize> {
    tiles.checked_mul(TILE_STATUS_BYTES / 8).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{tiles} tiles of look-back status is past the address space"
        ))
    })
}

fn address<T: DeviceCopy>(buffer: &Option<DeviceBuffer<T>>) -> u64 {
    buffer.as_ref().map_or(0, |b| b.as_device_ptr().as_raw())
}

/// `len` zeroed elements allocated in order on `stream`: from the device's memory pool, or
/// with `cuMemAlloc` where the device has no pools.
fn alloc_zeroed<T: DeviceCopy>(stream: &Stream, len: usize) -> Result<DeviceBuffer<T>> {
    // SAFETY: cleared below, on the stream, before anything queued after it reads the buffer.
    let buffer = match unsafe { stream.alloc_async::<T>(len) } {
        Err(Error::Driver { name, .. }) if name == "CUDA_ERROR_NOT_SUPPORTED" => {
            // SAFETY: as above.
            unsafe { stream.alloc::<T>(len)? }
        }
        other => other?,
    };
    // SAFETY: the buffer's bytes, of a live allocation of the stream's context.
    if let Err(e) = unsafe { stream.clear(buffer.as_device_ptr().as_raw(), buffer.bytes()) } {
        // SAFETY: nothing uses the new buffer.
        let _ = unsafe { stream.free_async(buffer) };
        return Err(e);
    }
    Ok(buffer)
}

/// Free `buffer` in order on `stream`.
fn release<T: DeviceCopy>(stream: &Stream, buffer: DeviceBuffer<T>) -> Result<()> {
    // SAFETY: every earlier use of a workspace buffer is ordered before this stream's end: the
    // stream waited for the workspace's last use when the call began (`begin`).
    unsafe { stream.free_async(buffer) }
}

/// [`grow`] where `len` is not 0 (a need of nothing allocates nothing).
fn grow_to<T: DeviceCopy>(buffer: &mut Option<DeviceBuffer<T>>, len: usize, stream: &Stream) -> Result<()> {
    if len > 0 {
        grow(buffer, len, stream)?;
    }
    Ok(())
}

/// `buffer`, grown to at least `len` zeroed elements on `stream` (the old one freed in stream
/// order); whether it was replaced. On error it is left as it was.
fn grow<T: DeviceCopy>(buffer: &mut Option<DeviceBuffer<T>>, len: usize, stream: &Stream) -> Result<bool> {
    if buffer.as_ref().is_some_and(|b| b.len() >= len) {
        return Ok(false);
    }
    let new = alloc_zeroed(stream, len.max(1))?;
    if let Some(old) = buffer.replace(new) {
        release(stream, old)?;
    }
    Ok(true)
}

impl DeviceWorkspace {
    /// An empty workspace; nothing is allocated until a call needs it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Use the workspace for one call on `stream`: refused for a stream of another context
    /// than its last use's; otherwise `stream` first waits for that use (an event, no host
    /// wait). The returned guard records this use's end when dropped: keep it until the call's
    /// last launch is queued.
    pub(crate) fn begin<'w, 's>(&'w mut self, stream: &'s Stream) -> Result<InUse<'w, 's>> {
        if let Some(event) = &self.last_use {
            if event.context_raw() != stream.context_raw() {
                return Err(Error::WrongContext(
                    "a workspace used with another GPU's context: make one workspace a GPU",
                ));
            }
            stream.wait(event)?;
        }
        Ok(InUse {
            workspace: self,
            stream,
        })
    }

    /// Device memory held, in bytes.
    pub fn bytes(&self) -> usize {
        fn bytes<T: DeviceCopy>(b: &Option<DeviceBuffer<T>>) -> usize {
            b.as_ref().map_or(0, |b| b.bytes())
        }
        bytes(&self.partials)
            + bytes(&self.result)
            + bytes(&self.word_slots)
            + bytes(&self.pair_slots)
            + bytes(&self.counter)
            + bytes(&self.levels)
            + bytes(&self.blocks_done)
            + bytes(&self.tile_starts)
            + bytes(&self.row_values)
            + bytes(&self.sort_counts)
            + bytes(&self.sort_scratch)
    }

    /// Allocate now, on `on`'s stream, what the calls `need` describes (a [`TempStorage`] of
    /// each algorithm, combined with [`TempStorage::max`]), so that those calls allocate
    /// nothing. What the workspace holds already is kept: it never shrinks.
    ///
    /// # Errors
    /// Out of device memory (what was allocated before the failure is kept);
    /// [`Error::WrongContext`].
    ///
    /// # Example
    /// ```no_run
    /// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum, TempStorage};
    /// let gpu = gpu_primitives::open_gpu(0)?;
    /// let n = 1 << 20;
    /// let need = TempStorage::scan::<f32>(n)?.max(TempStorage::reduce::<f32>(&gpu, n));
    /// let mut workspace = DeviceWorkspace::new();
    /// workspace.reserve_for(&gpu, &need)?; // the scans and reduces of n floats allocate nothing
    /// assert_eq!(workspace.bytes(), need.bytes());
    /// # Ok::<(), gpu_primitives::Error>(())
    /// ```
    pub fn reserve_for<'g>(&mut self, on: impl Into<OnStream<'g>>, need: &TempStorage) -> Result<()> {
        let stream = on.into().stream();
        let mut ws = self.begin(stream)?;
        if need.partials > 0 {
            ws.partials(stream, need.partials)?;
        }
        if need.result {
            ws.result_slot(stream)?;
        }
        for (layout, words) in [
            (StatusLayout::Word, need.word_slots),
            (StatusLayout::Pair, need.pair_slots),
        ] {
            if words > 0 {
                ws.status_words(stream, layout, words)?;
            }
        }
        let ws = &mut *ws;
        grow_to(&mut ws.tile_starts, need.tile_starts, stream)?;
        grow_to(&mut ws.row_values, need.row_values, stream)?;
        grow_to(&mut ws.sort_counts, need.sort_counts, stream)?;
        grow_to(&mut ws.sort_scratch, need.sort_scratch.div_ceil(8), stream)?;
        grow_to(&mut ws.levels, need.levels.div_ceil(8), stream)?;
        Ok(())
    }

    /// Allocate now what a reduction (reduce, argmin / argmax, dot) over up to `max_blocks`
    /// first-pass blocks and a scan of up to `max_tiles` tiles need, on `on`'s stream, so that
    /// later calls allocate nothing. `max_blocks` is at most `REDUCE_BLOCKS_PER_SM` times the
    /// multiprocessors; a scan of n elements has `ceil(n / (SCAN_BLOCK * T::SCAN_ITEMS))` tiles.
    /// [`reserve_for`](Self::reserve_for) with each call's [`TempStorage`] says the same
    /// without the arithmetic, for every algorithm.
    ///
    /// # Errors
    /// Out of device memory; [`Error::WrongContext`]; [`Error::InvalidArgument`] for a number
    /// of tiles whose status is past the address space.
    pub fn reserve<'g>(
        &mut self,
        on: impl Into<OnStream<'g>>,
        max_blocks: usize,
        max_tiles: usize,
    ) -> Result<()> {
        let words = status_words_for(max_tiles)?;
        let need = TempStorage {
            partials: max_blocks.saturating_mul(2),
            result: true,
            word_slots: max_tiles,
            pair_slots: words,
            ..TempStorage::default()
        };
        self.reserve_for(on, &need)
    }

    /// Addresses of `count` partial slots (8 bytes each) and of the single-launch reduce's
    /// block counter (a u32, 0 between launches).
    pub(crate) fn partials(&mut self, stream: &Stream, count: usize) -> Result<(u64, u64)> {
        grow(&mut self.partials, count, stream)?;
        grow(&mut self.blocks_done, 1, stream)?;
        Ok((address(&self.partials), address(&self.blocks_done)))
    }

    /// Address of the 16-byte slot the host-returning reductions return their result through.
    pub(crate) fn result_slot(&mut self, stream: &Stream) -> Result<u64> {
        grow(&mut self.result, 2, stream)?;
        Ok(address(&self.result))
    }

    /// The result slot as a `V` (its first `size_of::<V>()` bytes, at most 16), after the work
    /// queued on `stream` (synchronises it).
    pub(crate) fn read_result<V: bytemuck::Pod>(&self, stream: &Stream) -> Result<V> {
        let result = self.result.as_ref().expect("result_slot is called first");
        let words = stream.download(result)?;
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        Ok(bytemuck::pod_read_unaligned(&bytes[..size_of::<V>()]))
    }

    /// Device address of a copy of `bytes` (a range histogram's levels), 8-byte aligned: copied
    /// in order on `stream` (after the previous call, which read the last copy), which is then
    /// synchronised.
    pub(crate) fn levels(&mut self, stream: &Stream, bytes: &[u8]) -> Result<u64> {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        grow(&mut self.levels, words.len(), stream)?;
        let address = address(&self.levels);
        // SAFETY: the buffer holds at least `words.len()` u64 of the stream's context; every
        // earlier use of it is ordered before this copy on the stream (`begin`).
        unsafe { stream.copy_from_host(address, &words)? };
        Ok(address)
    }

    /// Address of `count` u32 (a segmented call's tile starts), written by a kernel on the
    /// call's stream before the kernel that reads them.
    pub(crate) fn tile_starts(&mut self, stream: &Stream, count: usize) -> Result<u64> {
        grow(&mut self.tile_starts, count, stream)?;
        Ok(address(&self.tile_starts))
    }

    /// Addresses of a `u32` count, zeroed on `stream`, and of `need.row_values - 1` `f32` after
    /// it (cross-entropy's valid targets and per-row losses).
    pub(crate) fn count_and_rows(&mut self, stream: &Stream, need: TempStorage) -> Result<(u64, u64)> {
        grow(&mut self.row_values, need.row_values, stream)?;
        let count = address(&self.row_values);
        // SAFETY: the first of the buffer's u32, on the stream of the calls that use it.
        unsafe { stream.clear(count, 4)? };
        Ok((count, count + 4))
    }

    /// Address of `words` `u32` counters (the radix sort's digit counts), zeroed on `stream`.
    pub(crate) fn sort_counts(&mut self, stream: &Stream, words: usize) -> Result<u64> {
        grow(&mut self.sort_counts, words, stream)?;
        let address = address(&self.sort_counts);
        // SAFETY: the first `words` u32 of the buffer, on the stream of the calls that use them.
        unsafe { stream.clear(address, 4 * words)? };
        Ok(address)
    }

    /// Address of `bytes` bytes of scratch memory (the radix sort's alternate keys and values),
    /// 16-byte aligned, contents undefined.
    pub(crate) fn sort_scratch(&mut self, stream: &Stream, bytes: usize) -> Result<u64> {
        grow(&mut self.sort_scratch, bytes.div_ceil(8), stream)?;
        Ok(address(&self.sort_scratch))
    }

    /// Status storage of `words` 8-byte slots in `layout` for a single-pass launch of `tiles`
    /// tiles (the radix sort's onesweep pass: one word per digit per tile), with the call's
    /// epoch and tile base. Call [`look_back_launched`](Self::look_back_launched) once the
    /// launch is queued; until then (a launch that failed, or never came) the counter counts as
    /// unknown and is cleared before the next status is taken.
    pub(crate) fn look_back_words(
        &mut self,
        stream: &Stream,
        layout: StatusLayout,
        words: usize,
        tiles: usize,
    ) -> Result<LookBackStatus> {
        self.status_words(stream, layout, words)?;
        if self.epoch >= MAX_EPOCH {
            // Every slot belongs to an older epoch than the next: start again from fresh ones.
            for slots in [&mut self.word_slots, &mut self.pair_slots] {
                if let Some(old) = slots.take() {
                    release(stream, old)?;
                }
            }
            self.epoch = 0;
            self.status_words(stream, layout, words)?;
        }
        if layout == StatusLayout::Pair && self.pair_slots_foreign {
            // SAFETY: the first `words` slots of the pair buffer, cleared on the stream of the
            // calls that use them, after the caller's kernel that wrote them.
            unsafe { stream.clear(address(&self.pair_slots), 8 * words)? };
            self.pair_slots_foreign = false;
        }
        if self.counter_unknown {
            // SAFETY: the counter's 8 bytes, cleared on the stream of the calls that use it
            // (after any launch that may have taken tiles from it).
            unsafe { stream.clear(address(&self.counter), 8)? };
            self.tile_base = 0;
            self.counter_unknown = false;
        }
        self.epoch += 1;
        let slots = match layout {
            StatusLayout::Word => &self.word_slots,
            StatusLayout::Pair => &self.pair_slots,
        };
        let status = LookBackStatus {
            slots: address(slots) as *mut u64,
            tile_counter: address(&self.counter) as *mut u64,
            tile_base: self.tile_base,
            epoch: self.epoch,
        };
        self.tile_base += tiles as u64;
        self.counter_unknown = true;
        Ok(status)
    }

    /// The launch that took the last [`look_back_words`](Self::look_back_words) status is
    /// queued: the counter will be at the tile base once it has run.
    pub(crate) fn look_back_launched(&mut self) {
        self.counter_unknown = false;
    }

    /// `words` 8-byte status slots of `layout` and the tile counter.
    fn status_words(&mut self, stream: &Stream, layout: StatusLayout, words: usize) -> Result<()> {
        // Fresh, zeroed slots belong to epoch 0, which no call uses; slots of the other layout
        // keep their (older) epochs.
        let slots = match layout {
            StatusLayout::Word => &mut self.word_slots,
            StatusLayout::Pair => &mut self.pair_slots,
        };
        if grow(slots, words, stream)? && layout == StatusLayout::Pair {
            self.pair_slots_foreign = false;
        }
        if grow(&mut self.counter, 1, stream)? {
            self.tile_base = 0;
            self.counter_unknown = false;
        }
        Ok(())
    }

    /// [`look_back_words`](Self::look_back_words) for a launch of `tiles` tiles of
    /// [`TILE_STATUS_BYTES`] each (the scans, compaction, run-length encoding) in `layout`.
    pub(crate) fn look_back_tiles(
        &mut self,
        stream: &Stream,
        layout: StatusLayout,
        tiles: usize,
    ) -> Result<LookBackStatus> {
        let words = status_words_for(tiles)?;
        self.look_back_words(stream, layout, words, tiles)
    }

    /// The look-back status of one single-pass launch of `tiles` tiles on `on`'s stream
    /// ([`TILE_STATUS_BYTES`] a tile, 16-byte aligned), as the library's scans, compaction and
    /// run-length encoding take it: pass `ticket.status()` in your kernel's parameters to a
    /// library agent run from your own kernel (`select_tile`; on the device,
    /// `TileStatus::from(status)`).
    ///
    /// Valid for one launch of exactly `tiles` blocks on `on`'s stream, each taking one tile
    /// from the counter, queued while the ticket is held (dropping it records the end of this
    /// use, so that the workspace's next call, on any stream, comes after your kernel). Safe to
    /// call and drop without a launch: the next call clears the tile counter first. No other
    /// clearing is queued: slots left by earlier calls belong to older epochs, and fresh ones
    /// are zeroed (epoch 0) on the stream when the workspace grows.
    ///
    /// # Errors
    /// Out of device memory; [`Error::WrongContext`]; [`Error::InvalidArgument`] for a number
    /// of tiles whose status is past the address space.
    pub fn look_back_status<'w, 's>(
        &'w mut self,
        on: impl Into<OnStream<'s>>,
        tiles: usize,
    ) -> Result<LookBackTicket<'w, 's>> {
        let stream = on.into().stream();
        let words = status_words_for(tiles)?;
        let mut in_use = self.begin(stream)?;
        // The caller's launch is never confirmed: the counter stays unknown, and the next
        // status taken clears it first. Its kernel may write the slots in either layout: they
        // are cleared before it, and again before the library's next use.
        let status = in_use.look_back_words(stream, StatusLayout::Pair, words, tiles)?;
        // SAFETY: the ticket's slots, cleared on its stream before the caller's launch.
        unsafe { stream.clear(status.slots as u64, 8 * words)? };
        in_use.pair_slots_foreign = true;
        Ok(LookBackTicket {
            _in_use: in_use,
            status,
        })
    }
}
