//! [`DeviceWorkspace`]: the device memory the device-wide algorithms need between calls.

use crate::{DeviceBuffer, Gpu, Result};

/// Largest epoch a scan's status word can carry (its high half is `epoch << 2 | state`).
const MAX_EPOCH: u32 = (1 << 30) - 1;

/// Temporary device storage for [`reduce`](super::reduce) and the scans, reused across calls and
/// grown on demand (never shrunk). Create one per [`Gpu`] and drop it before the `Gpu`.
///
/// Holds: the reduce's per-block partials, block counter and result (8 bytes per block + 12),
/// and the scan's
/// per-tile status (16 bytes per tile) and tile counter. The
/// scan's status needs no clearing between calls: each call has its own epoch number (see
/// kernels-gpu `device::tile_status`).
#[derive(Default)]
pub struct DeviceWorkspace {
    partials: Option<DeviceBuffer<u64>>,
    blocks_done: Option<DeviceBuffer<u32>>,
    result: Option<DeviceBuffer<u64>>,
    status_slots: Option<DeviceBuffer<u64>>,
    counter: Option<DeviceBuffer<u64>>,
    tile_base: u64,
    epoch: u32,
}

/// Device addresses and per-call numbers for one scan launch.
pub(crate) struct ScanStatus {
    pub slots: u64,
    pub counter: u64,
    pub tile_base: u64,
    pub epoch: u32,
}

fn address<T: gpu_host::DeviceCopy>(buffer: &Option<DeviceBuffer<T>>) -> u64 {
    buffer.as_ref().map_or(0, |b| b.as_device_ptr().as_raw())
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
            + self.blocks_done.as_ref().map_or(0, |b| 4 * b.len())
    }

    /// Addresses of `count` partial slots (8 bytes each) and of the single-launch reduce's
    /// block counter (a u32, 0 between launches).
    pub(crate) fn partials(&mut self, gpu: &Gpu, count: usize) -> Result<(u64, u64)> {
        if self.partials.as_ref().is_none_or(|b| b.len() < count) {
            self.partials = Some(gpu.alloc_zeroed(count)?);
        }
        if self.blocks_done.is_none() {
            self.blocks_done = Some(gpu.alloc_zeroed(1)?);
        }
        Ok((address(&self.partials), address(&self.blocks_done)))
    }

    /// Address of the 16-byte slot the host-returning reductions return their result through.
    pub(crate) fn result_slot(&mut self, gpu: &Gpu) -> Result<u64> {
        if self.result.is_none() {
            self.result = Some(gpu.alloc_zeroed(2)?);
        }
        Ok(address(&self.result))
    }

    /// The result slot as a `V` (its first `size_of::<V>()` bytes, at most 16), after the stream
    /// has finished.
    pub(crate) fn read_result<V: bytemuck::Pod>(&self, gpu: &Gpu) -> Result<V> {
        let result = self.result.as_ref().expect("result_slot is called first");
        let words = gpu.download(result)?;
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        Ok(bytemuck::pod_read_unaligned(&bytes[..size_of::<V>()]))
    }

    /// Status storage for a scan of `tiles` tiles, with this call's epoch and tile base.
    pub(crate) fn scan_status(&mut self, gpu: &Gpu, tiles: usize) -> Result<ScanStatus> {
        // 16 bytes per tile; cuMemAlloc aligns far past the 16 bytes the kernels need.
        let grow = self.status_slots.as_ref().is_none_or(|b| b.len() < 2 * tiles);
        if grow || self.epoch >= MAX_EPOCH {
            // Fresh, zeroed slots belong to epoch 0, which no call uses.
            self.status_slots = Some(gpu.alloc_zeroed(2 * tiles.max(1))?);
            self.epoch = 0;
        }
        if self.counter.is_none() {
            self.counter = Some(gpu.alloc_zeroed(1)?);
            self.tile_base = 0;
        }
        self.epoch += 1;
        let status = ScanStatus {
            slots: address(&self.status_slots),
            counter: address(&self.counter),
            tile_base: self.tile_base,
            epoch: self.epoch,
        };
        self.tile_base += tiles as u64;
        Ok(status)
    }
}
