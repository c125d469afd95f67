//! [`DeviceWorkspace`]: the device memory the device-wide algorithms need, kept between calls:
//! a few persistent buffers, and one scratch arena carved per call.

use super::temp_storage::{CONTROL_BYTES, Region, TempStorage};
use crate::{CallOn, DeviceBuffer, Error, Result, Stream};
use gpu_primitives_abi::layout::{MAX_EPOCH, TILE_STATUS_BYTES};
use gpu_primitives_abi::params::LookBackStatus;
use gpu_primitives_runtime::{DeviceCopy, Event};

/// Temporary device storage for the device-wide algorithms, reused across calls and grown on
/// demand (never shrunk); size it ahead of the calls with [`TempStorage`] and
/// [`DeviceWorkspace::reserve_for`] (CUB's `temp_storage_bytes`).
///
/// **Layout.** Persistent parts, kept from call to call because the kernels rely on what the
/// last call left there: a 32-byte control block (the look-back tile counter, the single-launch
/// reduce's block counter, 0 between launches, and the 16-byte result slot of the reductions
/// that return to the host) and the look-back status slots, a buffer for each layout of status
/// (16 bytes per tile; 8 bytes per digit per tile for the radix sort). The
/// slots need no clearing between calls: each call has its own epoch number, newer than every
/// slot's (see kernels `device::tile_status`). That is why they are not carved from the
/// scratch: a region reused for other data between two look-back calls could hold bits that
/// pass for a current epoch's flag. Everything else is one **scratch arena**, carved per call
/// into regions aligned to [`SCRATCH_ALIGN`](super::SCRATCH_ALIGN) bytes (CUB's
/// `AliasTemporaries`): the reductions' per-block partials, a range histogram's levels, where
/// each tile of a segmented call by offsets starts, cross-entropy's count and per-row losses,
/// the radix sort's digit counts and alternate keys and values. What a call reads of its
/// regions it wrote first, or cleared on its stream (the sort's digit counts, the
/// cross-entropy count).
///
/// **Growth once a call.** A call states its whole need first (its [`TempStorage`], computed
/// by the functions its launches plan with); the workspace grows then, before anything of the
/// call is queued, and the call carves its regions from that arena without allocating: no
/// call ever frees memory that a queued operation of its own was handed.
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
    /// Persistent: the tile counter at [`TILE_COUNTER`], the reduce's block counter at
    /// [`BLOCKS_DONE`], the result slot at [`RESULT`] ([`CONTROL_BYTES`] in all).
    control: Option<DeviceBuffer<u64>>,
    /// Persistent: look-back status slots, one buffer a [`StatusLayout`].
    word_slots: Option<DeviceBuffer<u64>>,
    pair_slots: Option<DeviceBuffer<u64>>,
    /// The pair slots may hold words of a layout not the library's (a caller's kernel through
    /// [`DeviceWorkspace::look_back_status`]): cleared before the next use.
    pair_slots_foreign: bool,
    /// The scratch arena, carved per call ([`Arena`]).
    arena: Option<DeviceBuffer<u64>>,
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

/// Offsets in the control block, in bytes: the look-back tile counter (a `u64`), the
/// single-launch reduce's block counter (a `u32`, 0 between launches), the 16-byte result slot.
const TILE_COUNTER: u64 = 0;
const BLOCKS_DONE: u64 = 8;
const RESULT: u64 = 16;
const _: () = assert!(RESULT as usize + 16 == CONTROL_BYTES);

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
        for buffer in [
            &mut self.control,
            &mut self.word_slots,
            &mut self.pair_slots,
            &mut self.arena,
        ] {
            if let Some(buffer) = buffer.take() {
                // SAFETY: the event recorded after the workspace's last use has completed, so
                // no work using the buffer is pending.
                unsafe { buffer.free_idle() };
            }
        }
    }
}

/// A [`DeviceWorkspace`] in use by one call on one stream ([`DeviceWorkspace::begin`]): made
/// after the stream waits for the workspace's previous use, then grown to the call's need; on
/// drop, after the call's work is queued, it records where this use ends.
///
/// It borrows the workspace exclusively and has no method that allocates or frees: while it
/// lives, the arena and the buffers it hands out stay where they are.
pub(crate) struct InUse<'w, 's> {
    workspace: &'w mut DeviceWorkspace,
    stream: &'s Stream,
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

/// The scratch a call (or a part of one) carves its regions from: `len` bytes at the device
/// address `base` (a multiple of [`SCRATCH_ALIGN`](super::SCRATCH_ALIGN)), the workspace's arena as its call's
/// [`DeviceWorkspace::begin`] grew it, or a region of it ([`Arena::part`]). Valid while that
/// call's [`InUse`] lives, on its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arena {
    base: u64,
    len: usize,
}

impl Arena {
    /// The device address of the first `bytes` bytes of `region` (aligned to
    /// [`SCRATCH_ALIGN`](super::SCRATCH_ALIGN) where the arena holds anything). Allocates nothing.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] where `bytes` is past the region or the region past the arena:
    /// the call's [`TempStorage`] and its carving disagree (a defect of the library's planning).
    pub(crate) fn carve(&self, region: Region, bytes: usize) -> Result<u64> {
        if bytes > region.bytes || region.end() > self.len {
            return Err(Error::InvalidLaunch(format!(
                "{bytes} bytes of a scratch region of {} at {} past an arena of {} bytes: more \
                 than the call's TempStorage reserved (a defect of the library's planning)",
                region.bytes, region.offset, self.len
            )));
        }
        Ok(self.base + region.offset as u64)
    }

    /// The arena of a part of the call that carves its own regions from `region`
    /// ([`TempStorage::nest`]).
    ///
    /// # Errors
    /// As [`carve`](Self::carve).
    pub(crate) fn part(&self, region: Region) -> Result<Arena> {
        Ok(Arena {
            base: self.carve(region, region.bytes)?,
            len: region.bytes,
        })
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
        let (word_slots, pair_slots) = match layout {
            StatusLayout::Word => (words, 0),
            StatusLayout::Pair => (0, words),
        };
        Self {
            control: true,
            word_slots,
            pair_slots,
            ..Self::default()
        }
    }

    /// The look-back status of `tiles` tiles of [`TILE_STATUS_BYTES`] each in `layout`, as
    /// [`InUse::look_back_tiles`] takes it.
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

/// Clear the whole of a status buffer (where there is one) on `stream`, the stream of the call
/// that takes a status next: every slot back to epoch 0.
fn clear_status(stream: &Stream, buffer: &Option<DeviceBuffer<u64>>) -> Result<()> {
    if let Some(buffer) = buffer {
        // SAFETY: the whole buffer, of the stream's context, cleared on the stream of the calls
        // that use it, after every earlier use of it, a caller's kernel included (`begin`).
        unsafe { stream.clear(buffer.as_device_ptr().as_raw(), buffer.bytes())? };
    }
    Ok(())
}

/// The error of a call that uses a persistent part its [`TempStorage`] did not ask for.
fn unplanned(what: &str) -> Error {
    Error::InvalidLaunch(format!(
        "{what}: more than the call's TempStorage reserved (a defect of the library's planning)"
    ))
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

/// `buffer`, grown to at least `len` zeroed elements on `stream` (the old one freed in stream
/// order) where `len` is not 0 (a need of nothing allocates nothing); whether it was replaced.
/// On error it is left as it was.
fn grow<T: DeviceCopy>(buffer: &mut Option<DeviceBuffer<T>>, len: usize, stream: &Stream) -> Result<bool> {
    if len == 0 || buffer.as_ref().is_some_and(|b| b.len() >= len) {
        return Ok(false);
    }
    let new = alloc_zeroed(stream, len)?;
    if let Some(old) = buffer.replace(new) {
        // SAFETY: every earlier use of a workspace buffer is ordered before this stream's end:
        // the stream waited for the workspace's last use when the call began (`begin`), and
        // nothing of this call has been queued yet (growth comes first).
        unsafe { stream.free_async(old)? };
    }
    Ok(true)
}

impl InUse<'_, '_> {
    /// Grow every part of the workspace to `need` (what it holds already is kept: it never
    /// shrinks). On error each part is as it was or grown.
    fn grow(&mut self, need: &TempStorage) -> Result<()> {
        let (ws, stream) = (&mut *self.workspace, self.stream);
        if need.control && grow(&mut ws.control, CONTROL_BYTES / 8, stream)? {
            // A fresh counter is 0: no launch has taken a tile from it.
            ws.tile_base = 0;
            ws.counter_unknown = false;
        }
        // Fresh, zeroed slots belong to epoch 0, which no call uses; slots of the other layout
        // keep their (older) epochs.
        grow(&mut ws.word_slots, need.word_slots, stream)?;
        if grow(&mut ws.pair_slots, need.pair_slots, stream)? {
            ws.pair_slots_foreign = false;
        }
        grow(&mut ws.arena, need.scratch.bytes() / 8, stream)?;
        Ok(())
    }

    /// The call's scratch arena, as [`DeviceWorkspace::begin`] grew it.
    pub(crate) fn arena(&self) -> Arena {
        Arena {
            base: address(&self.workspace.arena),
            len: self.workspace.arena.as_ref().map_or(0, |b| b.bytes()),
        }
    }

    /// The device address `offset` bytes into the control block.
    fn control(&self, offset: u64, what: &str) -> Result<u64> {
        match &self.workspace.control {
            Some(control) => Ok(control.as_device_ptr().as_raw() + offset),
            None => Err(unplanned(what)),
        }
    }

    /// Address of the single-launch reduce's block counter (a `u32`, 0 between launches).
    pub(crate) fn blocks_done(&self) -> Result<u64> {
        self.control(BLOCKS_DONE, "the reduce's block counter")
    }

    /// Address of the 16-byte slot the host-returning reductions return their result through.
    pub(crate) fn result_slot(&self) -> Result<u64> {
        self.control(RESULT, "the result slot")
    }

    /// The result slot as a `V` (its first `size_of::<V>()` bytes, at most 16), after the work
    /// queued on the call's stream (synchronises it).
    pub(crate) fn read_result<V: bytemuck::Pod>(&self) -> Result<V> {
        let mut words = [0u64; 2];
        // SAFETY: the 16 bytes of the result slot, in the control block of the stream's
        // context; the copy is ordered after the work queued before it on the stream.
        unsafe { self.stream.copy_to_host(self.result_slot()?, &mut words)? };
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        Ok(bytemuck::pod_read_unaligned(&bytes[..size_of::<V>()]))
    }

    /// The address of `bytes` bytes of `region` of `arena`, zeroed on the call's stream (the
    /// radix sort's digit counts, the cross-entropy count: counters a kernel adds to).
    ///
    /// # Errors
    /// As [`Arena::carve`]; the clear's.
    pub(crate) fn carve_zeroed(&self, arena: Arena, region: Region, bytes: usize) -> Result<u64> {
        let address = arena.carve(region, bytes)?;
        // SAFETY: `bytes` bytes of the arena (checked by the carve), cleared on the stream of
        // the call that uses them, after the workspace's earlier uses (`begin`).
        unsafe { self.stream.clear(address, bytes)? };
        Ok(address)
    }

    /// The address of a copy of `bytes` in `region` of `arena` (a range histogram's levels),
    /// copied on the call's stream (after the workspace's earlier uses, which may have read
    /// the region), which is then synchronised.
    ///
    /// # Errors
    /// As [`Arena::carve`]; the copy's.
    pub(crate) fn carve_copy(&self, arena: Arena, region: Region, bytes: &[u8]) -> Result<u64> {
        let address = arena.carve(region, bytes.len())?;
        // SAFETY: `bytes.len()` bytes of the arena (checked by the carve); every earlier use of
        // them is ordered before this copy on the stream (`begin`).
        unsafe { self.stream.copy_from_host(address, bytes)? };
        Ok(address)
    }

    /// Status storage of `words` 8-byte slots in `layout` for a single-pass launch of `tiles`
    /// tiles (the radix sort's onesweep pass: one word per digit per tile), with the call's
    /// epoch and tile base. Call [`look_back_launched`](Self::look_back_launched) once the
    /// launch is queued; until then (a launch that failed, or never came) the counter counts as
    /// unknown and is cleared before the next status is taken. Allocates nothing: the slots
    /// are the call's [`TempStorage`]'s.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] for more slots than the call's [`TempStorage`] asked for (a
    /// defect of the library's planning); a clear's errors.
    pub(crate) fn look_back_words(
        &mut self,
        layout: StatusLayout,
        words: usize,
        tiles: usize,
    ) -> Result<LookBackStatus> {
        let counter = self.control(TILE_COUNTER, "the look-back tile counter")?;
        let (ws, stream) = (&mut *self.workspace, self.stream);
        let slots = match layout {
            StatusLayout::Word => &ws.word_slots,
            StatusLayout::Pair => &ws.pair_slots,
        };
        if slots.as_ref().map_or(0, |s| s.len()) < words {
            return Err(unplanned(&format!("{words} look-back status words ({layout:?})")));
        }
        let slots = address(slots);
        if ws.epoch >= MAX_EPOCH {
            // Every slot belongs to an older epoch than the next: start again from zeroed ones
            // (epoch 0), in the same buffers.
            for buffer in [&ws.word_slots, &ws.pair_slots] {
                clear_status(stream, buffer)?;
            }
            ws.pair_slots_foreign = false;
            ws.epoch = 0;
        }
        if layout == StatusLayout::Pair && ws.pair_slots_foreign {
            // The whole buffer, not only this call's `words`: a caller's kernel may have used
            // more tiles than this call, and a slot it left past them, read in this layout by a
            // later, longer call, could pass for that call's epoch (a bogus prefix is an output
            // offset in the compaction).
            clear_status(stream, &ws.pair_slots)?;
            ws.pair_slots_foreign = false;
        }
        if ws.counter_unknown {
            // SAFETY: the counter's 8 bytes in the control block, cleared on the stream of the
            // calls that use it (after any launch that may have taken tiles from it).
            unsafe { stream.clear(counter, 8)? };
            ws.tile_base = 0;
            ws.counter_unknown = false;
        }
        ws.epoch += 1;
        let status = LookBackStatus {
            slots: slots as *mut u64,
            tile_counter: counter as *mut u64,
            tile_base: ws.tile_base,
            epoch: ws.epoch,
        };
        ws.tile_base += tiles as u64;
        ws.counter_unknown = true;
        Ok(status)
    }

    /// The launch that took the last [`look_back_words`](Self::look_back_words) status is
    /// queued: the counter will be at the tile base once it has run.
    pub(crate) fn look_back_launched(&mut self) {
        self.workspace.counter_unknown = false;
    }

    /// [`look_back_words`](Self::look_back_words) for a launch of `tiles` tiles of
    /// [`TILE_STATUS_BYTES`] each (the scans, compaction, run-length encoding) in `layout`.
    pub(crate) fn look_back_tiles(&mut self, layout: StatusLayout, tiles: usize) -> Result<LookBackStatus> {
        let words = status_words_for(tiles)?;
        self.look_back_words(layout, words, tiles)
    }
}

impl DeviceWorkspace {
    /// An empty workspace; nothing is allocated until a call needs it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Use the workspace for one call on `stream` that needs `need`: refused for a stream of
    /// another context than its last use's; otherwise `stream` first waits for that use (an
    /// event, no host wait), then each part grows to `need` (the only place the workspace
    /// allocates). The returned guard records this use's end when dropped (also when growth
    /// failed: what was allocated is queued on `stream`): keep it until the call's last launch
    /// is queued, and use nothing carved from it after.
    pub(crate) fn begin<'w, 's>(
        &'w mut self,
        stream: &'s Stream,
        need: &TempStorage,
    ) -> Result<InUse<'w, 's>> {
        if let Some(event) = &self.last_use {
            if event.context_raw() != stream.context_raw() {
                return Err(Error::WrongContext(
                    "a workspace used with another GPU's context: make one workspace a GPU",
                ));
            }
            stream.wait(event)?;
        }
        let mut in_use = InUse {
            workspace: self,
            stream,
        };
        in_use.grow(need)?;
        Ok(in_use)
    }

    /// Device memory held, in bytes.
    pub fn bytes(&self) -> usize {
        [&self.control, &self.word_slots, &self.pair_slots, &self.arena]
            .into_iter()
            .map(|b| b.as_ref().map_or(0, |b| b.bytes()))
            .sum()
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
    pub fn reserve_for<'g>(&mut self, on: impl Into<CallOn<'g>>, need: &TempStorage) -> Result<()> {
        self.begin(on.into().stream(), need).map(drop)
    }

    /// Allocate now what a reduction (reduce, argmin / argmax, dot) over up to `max_blocks`
    /// first-pass blocks and a scan of up to `max_tiles` tiles need, on `on`'s stream, so that
    /// later calls allocate nothing. `max_blocks` is at most the reduce policy's `blocks_per_sm`
    /// times the multiprocessors; a scan of n elements has
    /// `ceil(n / (block_threads * T::SCAN_ITEMS))` tiles (the scan policy's `block_threads`).
    /// [`reserve_for`](Self::reserve_for) with each call's [`TempStorage`] says the same
    /// without the arithmetic, for every algorithm.
    ///
    /// # Errors
    /// Out of device memory; [`Error::WrongContext`]; [`Error::InvalidArgument`] for a number
    /// of tiles whose status is past the address space.
    pub fn reserve<'g>(
        &mut self,
        on: impl Into<CallOn<'g>>,
        max_blocks: usize,
        max_tiles: usize,
    ) -> Result<()> {
        let words = status_words_for(max_tiles)?;
        // 16 bytes of partials a block (argmin / argmax's (value, index) pairs).
        let (partials, _) = TempStorage::region(max_blocks.saturating_mul(16));
        let need = TempStorage {
            control: true,
            word_slots: words,
            pair_slots: words,
            ..partials
        };
        self.reserve_for(on, &need)
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
    /// call and drop without a launch: the next call clears the tile counter first. The
    /// ticket's slots are cleared on the stream before your kernel, and the whole status buffer
    /// again before the library's next use of it; slots are persistent, never part of the
    /// scratch arena.
    ///
    /// # Errors
    /// Out of device memory; [`Error::WrongContext`]; [`Error::InvalidArgument`] for a number
    /// of tiles whose status is past the address space.
    pub fn look_back_status<'w, 's>(
        &'w mut self,
        on: impl Into<CallOn<'s>>,
        tiles: usize,
    ) -> Result<LookBackTicket<'w, 's>> {
        let stream = on.into().stream();
        let words = status_words_for(tiles)?;
        let mut in_use = self.begin(stream, &TempStorage::look_back_words(StatusLayout::Pair, words))?;
        // The caller's launch is never confirmed: the counter stays unknown, and the next
        // status taken clears it first. Its kernel may write the slots in either layout: they
        // are cleared before it, and again before the library's next use.
        let status = in_use.look_back_words(StatusLayout::Pair, words, tiles)?;
        // SAFETY: the ticket's slots (the first `words` of the pair buffer, checked by
        // look_back_words), cleared on its stream before the caller's launch.
        unsafe { stream.clear(status.slots as u64, 8 * words)? };
        in_use.workspace.pair_slots_foreign = true;
        Ok(LookBackTicket {
            _in_use: in_use,
            status,
        })
    }
}
