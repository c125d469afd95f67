//! [`DeviceWorkspace`]: the device memory the device-wide algorithms need between calls.

use crate::{DeviceBuffer, OnStream, Result, Stream};
use gpu_primitives_abi::layout::{MAX_EPOCH, TILE_STATUS_BYTES};
use gpu_primitives_abi::params::LookBackStatus;

/// Temporary device storage for the reductions and the scans, reused across calls and grown on
/// demand (never shrunk). Drop it before the `Gpu` it was used with.
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
/// **Stream order.** What a call adds is allocated and cleared on that call's stream, so a
/// stream-ordered call stays stream-ordered; to keep allocation out of a hot loop entirely,
/// size it first with [`DeviceWorkspace::reserve`]. A workspace serves one stream at a time: two
/// calls on different streams that share one must be ordered by the caller (an event), as with
/// CUB's temporary storage.
#[derive(Default)]
pub struct DeviceWorkspace {
    partials: Option<DeviceBuffer<u64>>,
    blocks_done: Option<DeviceBuffer<u32>>,
    result: Option<DeviceBuffer<u64>>,
    status_slots: Option<DeviceBuffer<u64>>,
    counter: Option<DeviceBuffer<u64>>,
    levels: Option<DeviceBuffer<u64>>,
    tile_starts: Option<DeviceBuffer<u32>>,
    row_values: Option<DeviceBuffer<u32>>,
    sort_counts: Option<DeviceBuffer<u32>>,
    sort_scratch: Option<DeviceBuffer<u64>>,
    tile_base: u64,
    epoch: u32,
}

fn address<T: gpu_primitives_runtime::DeviceCopy>(buffer: &Option<DeviceBuffer<T>>) -> u64 {
    buffer.as_ref().map_or(0, |b| b.as_device_ptr().as_raw())
}

/// `buffer`, grown to at least `len` zeroed elements on `stream`.
fn grow<T: gpu_primitives_runtime::DeviceCopy>(
    buffer: &mut Option<DeviceBuffer<T>>,
    len: usize,
    stream: &Stream,
) -> Result<bool> {
    if buffer.as_ref().is_none_or(|b| b.len() < len) {
        *buffer = Some(stream.alloc_zeroed(len.max(1))?);
        return Ok(true);
    }
    Ok(false)
}

impl DeviceWorkspace {
    /// An empty workspace; nothing is allocated until a call needs it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Device memory held, in bytes.
    pub fn bytes(&self) -> usize {
        let len = |b: &Option<DeviceBuffer<u64>>| b.as_ref().map_or(0, |b| 8 * b.len());
        len(&self.partials)
            + len(&self.result)
            + len(&self.status_slots)
            + len(&self.counter)
            + len(&self.levels)
            + self.blocks_done.as_ref().map_or(0, |b| 4 * b.len())
            + self.tile_starts.as_ref().map_or(0, |b| 4 * b.len())
            + self.row_values.as_ref().map_or(0, |b| 4 * b.len())
            + self.sort_counts.as_ref().map_or(0, |b| 4 * b.len())
            + len(&self.sort_scratch)
    }

    /// Allocate now what a reduction (reduce, argmin / argmax, dot) over up to `max_blocks`
    /// first-pass blocks and a scan of up to `max_tiles` tiles need, on `on`'s stream, so that
    /// later calls allocate nothing. `max_blocks` is at most `REDUCE_BLOCKS_PER_SM` times the
    /// multiprocessors; a scan of n elements has `ceil(n / (SCAN_BLOCK * T::SCAN_ITEMS))` tiles.
    ///
    /// # Errors
    /// Out of device memory.
    pub fn reserve<'g>(
        &mut self,
        on: impl Into<OnStream<'g>>,
        max_blocks: usize,
        max_tiles: usize,
    ) -> Result<()> {
        let on = on.into();
        self.partials(on.stream, 2 * max_blocks)?;
        self.result_slot(on.stream)?;
        self.status_for(on.stream, max_tiles)?;
        Ok(())
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
    /// on `stream`, which is then synchronised, so the copy of the previous call (which that
    /// call's kernel read) is released only after its work is done.
    pub(crate) fn levels(&mut self, stream: &Stream, bytes: &[u8]) -> Result<u64> {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        self.levels = Some(stream.upload(&words)?);
        Ok(address(&self.levels))
    }

    /// Address of `count` u32 (a segmented call's tile starts), written by a kernel on the
    /// call's stream before the kernel that reads them.
    pub(crate) fn tile_starts(&mut self, stream: &Stream, count: usize) -> Result<u64> {
        grow(&mut self.tile_starts, count, stream)?;
        Ok(address(&self.tile_starts))
    }

    /// Addresses of a `u32` count, zeroed on `stream`, and of `rows` `f32` after it
    /// (cross-entropy's valid targets and per-row losses).
    pub(crate) fn count_and_rows(&mut self, stream: &Stream, rows: usize) -> Result<(u64, u64)> {
        grow(&mut self.row_values, rows + 1, stream)?;
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

    /// Status storage of `words` 8-byte slots for a single-pass launch of `tiles` tiles (the
    /// radix sort's onesweep pass: one slot per digit per tile), with the call's epoch and
    /// tile base.
    pub(crate) fn look_back_words(
        &mut self,
        stream: &Stream,
        words: usize,
        tiles: usize,
    ) -> Result<LookBackStatus> {
        self.status_words(stream, words)?;
        if self.epoch >= MAX_EPOCH {
            self.status_slots = None;
            self.status_words(stream, words)?;
        }
        self.epoch += 1;
        let status = LookBackStatus {
            slots: address(&self.status_slots) as *mut u64,
            tile_counter: address(&self.counter) as *mut u64,
            tile_base: self.tile_base,
            epoch: self.epoch,
        };
        self.tile_base += tiles as u64;
        Ok(status)
    }

    /// Status slots for `tiles` tiles and the tile counter.
    fn status_for(&mut self, stream: &Stream, tiles: usize) -> Result<()> {
        self.status_words(stream, tiles * TILE_STATUS_BYTES / 8)
    }

    /// `words` 8-byte status slots and the tile counter.
    fn status_words(&mut self, stream: &Stream, words: usize) -> Result<()> {
        // Fresh, zeroed slots belong to epoch 0, which no call uses.
        if grow(&mut self.status_slots, words, stream)? {
            self.epoch = 0;
        }
        if grow(&mut self.counter, 1, stream)? {
            self.tile_base = 0;
        }
        Ok(())
    }

    /// The look-back status of one single-pass launch of `tiles` tiles on `on`'s stream
    /// ([`TILE_STATUS_BYTES`] a tile, 16-byte aligned), as the library's scans, compaction and
    /// run-length encoding take it: pass it in your kernel's parameters to a library agent run
    /// from your own kernel (`select_tile`; on the device, `TileStatus::from(status)`).
    ///
    /// Valid for one launch of exactly `tiles` blocks, each taking one tile from the counter:
    /// ask again for every launch. No clearing is queued: slots left by earlier calls belong to
    /// older epochs, and fresh ones are zeroed (epoch 0) on the stream when the workspace grows.
    /// The workspace must not be used on another stream before that launch is queued (see the
    /// type's stream order).
    ///
    /// # Errors
    /// Out of device memory.
    pub fn look_back_status<'g>(
        &mut self,
        on: impl Into<OnStream<'g>>,
        tiles: usize,
    ) -> Result<LookBackStatus> {
        self.look_back_words(on.into().stream, tiles * TILE_STATUS_BYTES / 8, tiles)
    }
}
