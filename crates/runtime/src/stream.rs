//! [`Stream`]: an ordered queue of GPU work, and the copies, memsets and timing queued on it.

use crate::error::check;
use crate::sys as raw;
use crate::{DeviceBuffer, DeviceCopy, Error, Gpu, Result};
use std::ffi::c_void;
use std::time::Duration;

/// A CUDA stream of one [`Gpu`]'s context: work queued on it runs in order.
///
/// Either owned (the `Gpu`'s default stream, or one from [`Gpu::create_stream`]: destroyed on
/// drop) or borrowed from its creator through [`Stream::from_raw`] (cudarc's `CudaStream`, the
/// CUDA runtime's, the legacy default stream `null`): then never destroyed here.
///
/// `Send` and `Sync`: CUDA streams may be used from any thread, and every call makes the
/// stream's context current on the calling thread first.
pub struct Stream {
    raw: raw::CUstream,
    context: raw::CUcontext,
    owned: bool,
}

// SAFETY: a CUstream and a CUcontext are handles the driver API lets any thread use (the driver
// is thread-safe); every method binds the context to the calling thread before using them.
unsafe impl Send for Stream {}
// SAFETY: as for Send; no method mutates the handles.
unsafe impl Sync for Stream {}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned stream was created by `create` and is destroyed once, here;
            // cuStreamDestroy lets queued work finish first.
            unsafe {
                raw::cuCtxSetCurrent(self.context);
                raw::cuStreamDestroy_v2(self.raw);
            }
        }
    }
}

impl Stream {
    /// A new non-blocking stream in `context`.
    pub(crate) fn create(context: raw::CUcontext) -> Result<Self> {
        let mut stream: raw::CUstream = std::ptr::null_mut();
        // SAFETY: `context` is a live context; the out-pointer is valid.
        let status = unsafe {
            raw::cuCtxSetCurrent(context);
            raw::cuStreamCreate(
                &mut stream,
                raw::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32,
            )
        };
        check(status, "creating a stream")?;
        Ok(Self {
            raw: stream,
            context,
            owned: true,
        })
    }

    /// Wrap a stream made elsewhere in `gpu`'s context (cudarc's `CudaStream::cu_stream()`, the
    /// CUDA runtime's `cudaStream_t`, or null for the legacy default stream). It is not
    /// destroyed when this is dropped.
    ///
    /// # Safety
    /// `stream` is null or a live stream of `gpu`'s context (the device's primary context), and
    /// stays alive as long as this `Stream` and any work queued through it.
    pub unsafe fn from_raw(gpu: &Gpu, stream: raw::CUstream) -> Self {
        Self {
            raw: stream,
            context: gpu.stream().context,
            owned: false,
        }
    }

    /// The driver handle, for the driver API or another runtime (cudarc's
    /// `CudaContext::..._stream` wrappers take it).
    pub fn as_raw(&self) -> raw::CUstream {
        self.raw
    }

    pub(crate) fn bind_context(&self) -> Result<()> {
        self.bind()
    }

    fn bind(&self) -> Result<()> {
        // SAFETY: the context outlives every stream made in it (a `Gpu` holds it).
        let status = unsafe { raw::cuCtxSetCurrent(self.context) };
        check(status, "making the context current")
    }

    /// A device buffer of `len` elements whose contents are not yet set (allocation is not a
    /// stream operation: the memory is usable at once).
    ///
    /// # Safety
    /// Nothing may read an element before something queued on a stream wrote it.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks the bytes.
    pub unsafe fn alloc<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.bind()?;
        DeviceBuffer::allocate(len, self.context)
    }

    /// A device buffer of `len` zeroed elements, cleared by a memset queued on this stream.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks the bytes; driver errors.
    pub fn alloc_zeroed<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the memset below is queued before anything else can use the buffer.
        let buffer = unsafe { self.alloc::<T>(len)? };
        // SAFETY: the buffer's bytes, of a live allocation.
        unsafe { self.clear(buffer.as_device_ptr().as_raw(), len * size_of::<T>())? };
        Ok(buffer)
    }

    /// Queue a memset of `bytes` bytes at device address `address` to zero on this stream.
    ///
    /// # Safety
    /// `address .. address + bytes` is device memory of this context that stays allocated until
    /// the memset has run, and nothing else uses it meanwhile.
    ///
    /// # Errors
    /// Driver errors.
    pub unsafe fn clear(&self, address: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: the caller's range, cleared in stream order.
        let status = unsafe { raw::cuMemsetD8Async(address as raw::CUdeviceptr, 0, bytes, self.raw) };
        check(status, "clearing device memory")
    }

    /// Copy `data` into a new device buffer: the copy is queued on this stream, which is then
    /// synchronised (so `data` may be dropped and the buffer is ready for work on any stream).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks `size_of_val(data)` free bytes.
    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        // SAFETY: every element is written by the copy below before anything reads it.
        let buffer = unsafe { self.alloc::<T>(data.len())? };
        let bytes = size_of_val(data);
        if bytes > 0 {
            // SAFETY: both ranges are `bytes` long; the stream is synchronised before `data`'s
            // borrow ends.
            let status = unsafe {
                raw::cuMemcpyHtoDAsync_v2(
                    buffer.as_device_ptr().as_raw() as raw::CUdeviceptr,
                    data.as_ptr().cast::<c_void>(),
                    bytes,
                    self.raw,
                )
            };
            check(status, "copying to the device")?;
            self.synchronize()?;
        }
        Ok(buffer)
    }

    /// Copy `src` (device memory, after the work queued before on this stream) into `dst`, then
    /// wait for it.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the lengths differ; errors of earlier work on the stream.
    pub fn download_into<T: DeviceCopy>(&self, src: &DeviceBuffer<T>, dst: &mut [T]) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::LengthMismatch {
                what: "download: host buffer",
                expected: src.len(),
                found: dst.len(),
            });
        }
        // SAFETY: the buffer holds `dst.len()` elements of T.
        unsafe { self.copy_to_host(src.as_device_ptr().as_raw(), dst) }
    }

    /// Copy `dst.len()` elements of `T` at device address `address` (after the work queued
    /// before on this stream) into `dst`, then wait for it: a download of memory this runtime
    /// did not allocate.
    ///
    /// # Safety
    /// `address` holds `dst.len()` initialised elements of `T` in this stream's context.
    ///
    /// # Errors
    /// Errors of earlier work on the stream, driver errors.
    pub unsafe fn copy_to_host<T: DeviceCopy>(&self, address: u64, dst: &mut [T]) -> Result<()> {
        self.bind()?;
        let bytes = size_of_val(dst);
        if bytes > 0 {
            // SAFETY: both ranges are `bytes` long (the caller's contract for the device one);
            // the stream is synchronised before `dst`'s borrow ends.
            let status = unsafe {
                raw::cuMemcpyDtoHAsync_v2(
                    dst.as_mut_ptr().cast::<c_void>(),
                    address as raw::CUdeviceptr,
                    bytes,
                    self.raw,
                )
            };
            check(status, "copying from the device")?;
        }
        self.synchronize()
    }

    /// Copy `buffer` to a new `Vec`, after the work queued before on this stream (synchronises).
    ///
    /// # Errors
    /// Errors of earlier work on the stream (a failed kernel), driver errors.
    pub fn download<T: DeviceCopy + Default + Clone>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); buffer.len()];
        self.download_into(buffer, &mut host)?;
        Ok(host)
    }

    /// Queue a device-to-device copy of the first `n` elements of `src` into `dst` (the
    /// reference point for memory bandwidth: it reads and writes `n * size_of::<T>()` bytes
    /// each).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when either is shorter than `n`.
    pub fn copy_device_to_device<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<()> {
        for (what, len) in [
            ("copy_device_to_device: src", src.len()),
            ("copy_device_to_device: dst", dst.len()),
        ] {
            if len < n {
                return Err(Error::LengthMismatch {
                    what,
                    expected: n,
                    found: len,
                });
            }
        }
        self.bind()?;
        // SAFETY: both ranges are n elements of live device allocations, distinct (a `&mut` and
        // a `&` borrow); freeing either one (cuMemFree) waits for the copy.
        let status = unsafe {
            raw::cuMemcpyDtoDAsync_v2(
                dst.as_device_ptr().as_raw(),
                src.as_device_ptr().as_raw(),
                n * size_of::<T>(),
                self.raw,
            )
        };
        check(status, "queueing a device-to-device copy")
    }

    /// Queue a device-to-device copy of `bytes` bytes from device address `src` to `dst`.
    ///
    /// # Safety
    /// Both ranges are `bytes` bytes of live device memory of this context that do not
    /// overlap, and stay allocated until the copy has run; nothing else writes `dst` or `src`
    /// meanwhile.
    ///
    /// # Errors
    /// Driver errors.
    pub unsafe fn copy_address(&self, src: u64, dst: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: the caller's contract.
        let status = unsafe { raw::cuMemcpyDtoDAsync_v2(dst, src, bytes, self.raw) };
        check(status, "queueing a device-to-device copy")
    }

    /// Wait until all work queued on the stream has finished; reports errors of earlier launches
    /// (illegal address, trap).
    ///
    /// # Errors
    /// The first error of the stream's work.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: a live stream (or null, the legacy default stream).
        let status = unsafe { raw::cuStreamSynchronize(self.raw) };
        check(status, "waiting for the stream (a kernel failed)")
    }

    /// Time the stream work `work` queues, with CUDA events recorded on this stream before and
    /// after it. Waits for the work to finish.
    ///
    /// # Errors
    /// Errors of `work` and of the stream.
    ///
    /// # Example
    /// ```no_run
    /// # fn demo(gpu: &gpu_primitives_runtime::Gpu, src: &gpu_primitives_runtime::DeviceBuffer<f32>, dst: &mut gpu_primitives_runtime::DeviceBuffer<f32>) -> gpu_primitives_runtime::Result<()> {
    /// let stream = gpu.stream();
    /// let ((), elapsed) = stream.time(|| stream.copy_device_to_device(src, dst, src.len()))?;
    /// println!("copy: {:.1} µs", elapsed.as_secs_f64() * 1e6);
    /// # Ok(()) }
    /// ```
    pub fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        self.bind()?;
        let event = || -> Result<raw::CUevent> {
            let mut e: raw::CUevent = std::ptr::null_mut();
            // SAFETY: the out-pointer is valid; the context is current.
            check(unsafe { raw::cuEventCreate(&mut e, 0) }, "creating an event")?;
            Ok(e)
        };
        let (start, stop) = (event()?, event()?);
        let timed = (|| {
            // SAFETY: live events and stream of this context.
            let status = unsafe { raw::cuEventRecord(start, self.raw) };
            check(status, "recording an event")?;
            let value = work()?;
            self.bind()?;
            // SAFETY: as above.
            let status = unsafe { raw::cuEventRecord(stop, self.raw) };
            check(status, "recording an event")?;
            // SAFETY: as above.
            let status = unsafe { raw::cuEventSynchronize(stop) };
            check(status, "waiting for timed work (a kernel failed)")?;
            let mut ms = 0f32;
            // SAFETY: both events were recorded and `stop` has completed.
            let status = unsafe { raw::cuEventElapsedTime(&mut ms, start, stop) };
            check(status, "reading an event")?;
            Ok((value, Duration::from_secs_f64(ms as f64 / 1e3)))
        })();
        // SAFETY: the events were created above and are destroyed once.
        unsafe {
            raw::cuEventDestroy_v2(start);
            raw::cuEventDestroy_v2(stop);
        }
        timed
    }
}
