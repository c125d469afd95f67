//! [`Stream`]: an ordered queue of GPU work, and the copies, memsets and timing queued on it.

use crate::context::Context;
use crate::sys as raw;
use crate::{DeviceBuffer, DeviceCopy, Error, Event, Gpu, Result, result};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// A CUDA stream of one [`Gpu`]'s context: work queued on it runs in order.
///
/// Either owned (the `Gpu`'s default stream, or one from [`Gpu::create_stream`]: destroyed on
/// drop) or borrowed from its creator through [`Stream::from_raw`] (cudarc's `CudaStream`, the
/// CUDA runtime's, the legacy default stream `null`): then never destroyed here.
///
/// `Send` and `Sync`: CUDA streams may be used from any thread, and every call makes the
/// stream's context current on the calling thread for its duration (restoring the caller's
/// after). Holds its context: it may outlive the [`Gpu`] it was made with.
pub struct Stream {
    raw: raw::CUstream,
    context: Arc<Context>,
    owned: bool,
}

// SAFETY: a CUstream and a CUcontext are handles the driver API lets any thread use (the driver
// is thread-safe); every method binds the context to the calling thread before using them.
unsafe impl Send for Stream {}
// SAFETY: as for Send; no method mutates the handles.
unsafe impl Sync for Stream {}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned
            && let Ok(_current) = self.context.push()
        {
            // SAFETY: an owned stream was created by `create` and is destroyed once, here, its
            // context current; cuStreamDestroy lets queued work finish first.
            unsafe { result::stream_destroy(self.raw) };
        }
    }
}

impl Stream {
    /// A new non-blocking stream in `context`.
    pub(crate) fn create(context: &Arc<Context>) -> Result<Self> {
        let _current = context.push()?;
        let stream = result::stream_create()?;
        Ok(Self {
            raw: stream,
            context: Arc::clone(context),
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
            context: Arc::clone(gpu.stream().context()),
            owned: false,
        }
    }

    /// The driver handle, for the driver API or another runtime (cudarc's
    /// `CudaContext::..._stream` wrappers take it).
    pub fn as_raw(&self) -> raw::CUstream {
        self.raw
    }

    /// The context the stream belongs to.
    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.context
    }

    /// The driver handle of the stream's context.
    pub fn context_raw(&self) -> raw::CUcontext {
        self.context.raw()
    }

    /// [`Error::WrongContext`] unless the stream belongs to `context`.
    pub(crate) fn check_context(&self, context: &Context, what: &'static str) -> Result<()> {
        if self.context.raw() == context.raw() {
            Ok(())
        } else {
            Err(Error::WrongContext(what))
        }
    }

    /// Make work queued on this stream from now on wait until `event` has completed (its last
    /// record), without the host waiting (`cuStreamWaitEvent`).
    ///
    /// # Errors
    /// Driver errors.
    pub fn wait(&self, event: &Event) -> Result<()> {
        let _current = self.context.push()?;
        // SAFETY: a live stream and event (the event may belong to another context: the driver
        // orders the stream after it all the same).
        unsafe { result::stream_wait_event(self.raw, event.as_raw()) }
    }

    /// A device buffer of `len` elements allocated in stream order (`cuMemAllocAsync`, from the
    /// device's default memory pool): usable by work queued on this stream from now on, and by
    /// other streams once ordered after it. Contents unset. Free it with
    /// [`Stream::free_async`], which never synchronises; dropping it instead synchronises the
    /// context first.
    ///
    /// # Safety
    /// Nothing may read an element before something queued in order after the allocation wrote
    /// it.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the pool lacks the bytes; driver errors (a device without
    /// memory pools: `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`).
    pub unsafe fn alloc_async<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::allocate(len, &self.context, Some(self))
    }

    /// Free `buffer` in stream order (`cuMemFreeAsync` for a buffer of
    /// [`Stream::alloc_async`], whose memory returns to the pool once the work queued here
    /// before has run; a buffer of [`Stream::alloc`] is freed after this stream's work is done).
    ///
    /// # Safety
    /// Every use of `buffer` queued on other streams is ordered before this stream's current
    /// end (for instance by an [`Event`] this stream waits for).
    ///
    /// # Errors
    /// [`Error::WrongContext`] for a buffer of another context (it is then freed by drop);
    /// driver errors (the memory is then leaked, never freed twice).
    pub unsafe fn free_async<T: DeviceCopy>(&self, buffer: DeviceBuffer<T>) -> Result<()> {
        self.check_context(buffer.context(), "freeing a buffer on a stream")?;
        let _current = self.context.push()?;
        let (address, pooled) = buffer.into_raw();
        if address == 0 {
            return Ok(());
        }
        if pooled {
            // SAFETY: pooled memory of this context, given up by its buffer; the caller orders
            // its other uses before this stream's end.
            unsafe { result::mem_free_async(address as raw::CUdeviceptr, self.raw) }
        } else {
            // SAFETY: as above; cuMemFree waits for the device's work on memory from cuMemAlloc,
            // after this stream's (its error, if any, is the stream's to report later).
            unsafe {
                let _ = result::stream_synchronize(self.raw);
                result::mem_free(address as raw::CUdeviceptr)
            }
        }
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
        DeviceBuffer::allocate(len, &self.context, None)
    }

    /// A device buffer of `len` zeroed elements, cleared by a memset queued on this stream.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks the bytes; driver errors.
    pub fn alloc_zeroed<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the memset below is queued before anything else can use the buffer.
        let buffer = unsafe { self.alloc::<T>(len)? };
        // SAFETY: the buffer's bytes, of a live allocation.
        unsafe { self.clear(buffer.as_device_ptr().as_raw(), buffer.bytes())? };
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
        let _current = self.context.push()?;
        // SAFETY: the caller's range, cleared in stream order.
        unsafe { result::memset_zero_async(address as raw::CUdeviceptr, bytes, self.raw) }
    }

    /// Copy `data` into a new device buffer: the copy is queued on this stream, which is then
    /// synchronised (so `data` may be dropped and the buffer is ready for work on any stream).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks `size_of_val(data)` free bytes.
    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        // SAFETY: every element is written by the copy below before anything reads it.
        let buffer = unsafe { self.alloc::<T>(data.len())? };
        // SAFETY: the new buffer holds `data.len()` elements of this stream's context.
        unsafe { self.copy_from_host(buffer.as_device_ptr().as_raw(), data)? };
        Ok(buffer)
    }

    /// Copy `data` to the device address `address`, in order on this stream (after the work
    /// queued before on it), then synchronise the stream (so `data` may be dropped at once).
    ///
    /// # Safety
    /// `address` starts `size_of_val(data)` bytes of live device memory of this stream's
    /// context, which no work queued on another stream uses meanwhile.
    ///
    /// # Errors
    /// Errors of the copy and of earlier work on the stream.
    pub unsafe fn copy_from_host<T: DeviceCopy>(&self, address: u64, data: &[T]) -> Result<()> {
        let bytes = size_of_val(data);
        if bytes == 0 {
            return Ok(());
        }
        let _current = self.context.push()?;
        // SAFETY: both ranges are `bytes` long (the caller's word for `address`); the stream is
        // synchronised before `data`'s borrow ends.
        unsafe {
            result::memcpy_to_device_async(
                address as raw::CUdeviceptr,
                data.as_ptr().cast::<c_void>(),
                bytes,
                self.raw,
            )?
        };
        self.synchronize()
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
        let bytes = size_of_val(dst);
        if bytes > 0 {
            let _current = self.context.push()?;
            // SAFETY: both ranges are `bytes` long (the caller's contract for the device one);
            // the stream is synchronised before `dst`'s borrow ends, also on error (the copy
            // may have been queued).
            let queued = unsafe {
                result::memcpy_to_host_async(
                    dst.as_mut_ptr().cast::<c_void>(),
                    address as raw::CUdeviceptr,
                    bytes,
                    self.raw,
                )
            };
            let done = self.synchronize();
            queued?;
            return done;
        }
        self.synchronize()
    }

    /// Queue a copy of every `stride`-th element of `T` from device address `src` into `count`
    /// consecutive elements at device address `dst`: element `i` from `src + i * stride *
    /// size_of::<T>()` (one `cuMemcpy2DAsync`, device to device: a sample of sorted data,
    /// gathered on the device to be downloaded in one piece).
    ///
    /// # Safety
    /// The `count` elements named above are initialised elements of `T` of live device memory
    /// of this stream's context, and `dst` starts `count` elements of it that do not overlap
    /// them; both stay allocated until the copy has run, and nothing else writes them meanwhile.
    ///
    /// # Errors
    /// [`Error::ZeroArgument`] for `stride` 0; driver errors (a pitch past the device's
    /// `MAX_PITCH`, 2^31 - 1 bytes on the GPUs we run).
    pub unsafe fn copy_strided<T: DeviceCopy>(
        &self,
        src: u64,
        stride: usize,
        dst: u64,
        count: usize,
    ) -> Result<()> {
        if stride == 0 {
            return Err(Error::ZeroArgument {
                what: "copy_strided",
                argument: "stride (elements)",
            });
        }
        if count == 0 {
            return Ok(());
        }
        let width = size_of::<T>();
        let copy = raw::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: raw::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src as raw::CUdeviceptr,
            srcArray: std::ptr::null_mut(),
            srcPitch: stride * width,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: raw::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst as raw::CUdeviceptr,
            dstArray: std::ptr::null_mut(),
            dstPitch: width,
            WidthInBytes: width,
            Height: count,
        };
        let _current = self.context.push()?;
        // SAFETY: `count` rows of `width` bytes, the caller's elements on both sides; the copy
        // is ordered on this stream, and the struct is read when the call queues it.
        unsafe { result::memcpy_2d_async(&copy, self.raw) }
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
        self.check_context(src.context(), "copying a buffer of another context")?;
        self.check_context(dst.context(), "copying into a buffer of another context")?;
        let _current = self.context.push()?;
        // SAFETY: both ranges are n elements (checked above) of live device allocations of this
        // context, distinct (a `&mut` and a `&` borrow); freeing either one waits for the copy.
        unsafe {
            result::memcpy_device_async(
                dst.as_device_ptr().as_raw(),
                src.as_device_ptr().as_raw(),
                n * size_of::<T>(),
                self.raw,
            )
        }
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
        let _current = self.context.push()?;
        // SAFETY: the caller's contract.
        unsafe { result::memcpy_device_async(dst, src, bytes, self.raw) }
    }

    /// Wait until all work queued on the stream has finished; reports errors of earlier launches
    /// (illegal address, trap).
    ///
    /// # Errors
    /// The first error of the stream's work.
    pub fn synchronize(&self) -> Result<()> {
        let _current = self.context.push()?;
        // SAFETY: a live stream (or null, the legacy default stream).
        unsafe { result::stream_synchronize(self.raw) }
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
        // Dropped (destroyed) on every path out, a panic of `work` included.
        let start = Event::create(&self.context, true)?;
        let stop = Event::create(&self.context, true)?;
        start.record(self)?;
        let value = work()?;
        stop.record(self)?;
        stop.synchronize()?;
        Ok((value, stop.elapsed_since(&start)?))
    }
}
