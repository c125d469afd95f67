//! The driver calls of this crate, one thin function each (the layer cudarc calls
//! `driver::result`): the call, its status as a [`Result`] saying what was being done, and the
//! fault injection of the calls the fault tests fail ([`crate::fault`]). Nothing more: the types
//! above ([`Context`](crate::context), [`Event`](crate::Event), [`Stream`](crate::Stream),
//! [`DeviceBuffer`](crate::DeviceBuffer), [`Module`](crate::Module), [`Gpu`](crate::Gpu)) own the
//! handles, keep them valid and make their context current; these functions take raw handles.
//! Outside this file only [`crate::error`] (a status's name, the free memory behind an
//! out-of-memory error) and [`crate::sys`] (the back end's bindings) call the driver.
//!
//! Calls made from `drop` return nothing: a failure there has no one to report to.
//!
//! # Safety
//! Each `unsafe` function needs the handles it takes to be live, of the context current on the
//! calling thread (the driver API's own rules); each says what more.

use crate::Result;
use crate::error::{check, out_of_memory};
use crate::fault::{Fault, or_inject};
use crate::sys;
use std::ffi::{CStr, c_char, c_void};

// The driver and its devices.

/// `cuInit`: may be called any number of times.
pub(crate) fn init() -> Result<()> {
    // SAFETY: no pointers.
    let status = unsafe { sys::cuInit(0) };
    check(status, "initialising the driver")
}

/// `cuDeviceGetCount`.
pub(crate) fn device_count() -> Result<u32> {
    let mut count = 0i32;
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuDeviceGetCount(&mut count) };
    check(status, "initialising the driver")?;
    Ok(count.max(0) as u32)
}

/// `cuDeviceGet` of `ordinal` (below [`device_count`]).
pub(crate) fn device(ordinal: u32) -> Result<sys::CUdevice> {
    let mut device: sys::CUdevice = 0;
    // SAFETY: a valid out-pointer; the driver checks the ordinal.
    let status = unsafe { sys::cuDeviceGet(&mut device, ordinal as i32) };
    check(status, "opening the device")?;
    Ok(device)
}

/// `cuDeviceGetName`.
pub(crate) fn device_name(device: sys::CUdevice) -> Result<String> {
    let mut name = [0 as c_char; 256];
    // SAFETY: the buffer's length is passed; the driver NUL-terminates it.
    let status = unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, device) };
    check(status, "reading the device name")?;
    // SAFETY: NUL-terminated by the driver within the buffer.
    Ok(unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// `cuDeviceGetAttribute`, as `u32`.
pub(crate) fn device_attribute(device: sys::CUdevice, attribute: sys::CUdevice_attribute) -> Result<u32> {
    let mut value = 0i32;
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuDeviceGetAttribute(&mut value, attribute, device) };
    check(status, "reading a device attribute")?;
    Ok(value as u32)
}

/// `cuDeviceTotalMem`, in bytes.
pub(crate) fn device_total_memory(device: sys::CUdevice) -> Result<usize> {
    let mut bytes = 0usize;
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuDeviceTotalMem_v2(&mut bytes, device) };
    check(status, "reading the memory size")?;
    Ok(bytes)
}

/// `cuDriverGetVersion` (1000 * major + 10 * minor).
pub(crate) fn driver_version() -> Result<u32> {
    let mut version = 0i32;
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuDriverGetVersion(&mut version) };
    check(status, "reading the driver version")?;
    Ok(version as u32)
}

// Contexts.

/// `cuDevicePrimaryCtxRetain`: the device's primary context, retained once more.
pub(crate) fn primary_context_retain(device: sys::CUdevice) -> Result<sys::CUcontext> {
    let mut context: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuDevicePrimaryCtxRetain(&mut context, device) };
    check(status, "retaining the primary context")?;
    Ok(context)
}

/// `cuDevicePrimaryCtxRelease`.
///
/// # Safety
/// Balances one [`primary_context_retain`]; nothing uses the context after its last release.
pub(crate) unsafe fn primary_context_release(device: sys::CUdevice) {
    // SAFETY: the caller's.
    unsafe { sys::cuDevicePrimaryCtxRelease_v2(device) };
}

/// `cuCtxPushCurrent`.
///
/// # Safety
/// `context` is live; the push is balanced by a [`context_pop`] on this thread.
pub(crate) unsafe fn context_push(context: sys::CUcontext) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuCtxPushCurrent_v2(context) };
    check(status, "making the context current")
}

/// `cuCtxPopCurrent`.
///
/// # Safety
/// Pops the context this thread's matching [`context_push`] pushed.
pub(crate) unsafe fn context_pop() {
    let mut popped: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the caller's; a valid out-pointer.
    unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
}

/// `cuCtxSetCurrent`.
///
/// # Safety
/// `context` is live (retained for as long as it may stay current).
pub(crate) unsafe fn context_set_current(context: sys::CUcontext) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuCtxSetCurrent(context) };
    check(status, "making the context current")
}

/// `cuCtxSynchronize` of the current context (its status dropped: for `drop`).
pub(crate) fn context_synchronize() {
    // SAFETY: no pointers.
    unsafe { sys::cuCtxSynchronize() };
}

// Events.

/// `cuEventCreate` in the current context.
pub(crate) fn event_create(flags: u32) -> Result<sys::CUevent> {
    let mut event: sys::CUevent = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuEventCreate(&mut event, flags) };
    check(status, "creating an event")?;
    Ok(event)
}

/// `cuEventDestroy`.
///
/// # Safety
/// A live event of the current context, destroyed once.
pub(crate) unsafe fn event_destroy(event: sys::CUevent) {
    // SAFETY: the caller's.
    unsafe { sys::cuEventDestroy_v2(event) };
}

/// `cuEventRecord` on `stream`.
///
/// # Safety
/// A live event and stream of the current context.
pub(crate) unsafe fn event_record(event: sys::CUevent, stream: sys::CUstream) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuEventRecord(event, stream) };
    check(status, "recording an event")
}

/// `cuEventSynchronize`.
///
/// # Safety
/// A live event.
pub(crate) unsafe fn event_synchronize(event: sys::CUevent) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuEventSynchronize(event) };
    check(status, "waiting for an event")
}

/// `cuEventQuery`: whether the work before the event's last record has run
/// (`CUDA_ERROR_NOT_READY` is `false`).
///
/// # Safety
/// A live event.
pub(crate) unsafe fn event_query(event: sys::CUevent) -> Result<bool> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuEventQuery(event) };
    if status == sys::cudaError_enum::CUDA_ERROR_NOT_READY {
        return Ok(false);
    }
    check(status, "querying an event").map(|()| true)
}

/// `cuEventElapsedTime` from `start` to `end`, in milliseconds.
///
/// # Safety
/// Two live events.
pub(crate) unsafe fn event_elapsed_ms(start: sys::CUevent, end: sys::CUevent) -> Result<f32> {
    let mut ms = 0f32;
    // SAFETY: the caller's; a valid out-pointer.
    let status = unsafe { sys::cuEventElapsedTime(&mut ms, start, end) };
    check(status, "reading an event")?;
    Ok(ms)
}

// Streams.

/// `cuStreamCreate` of a non-blocking stream in the current context.
pub(crate) fn stream_create() -> Result<sys::CUstream> {
    let mut stream: sys::CUstream = std::ptr::null_mut();
    let flags = sys::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32;
    // SAFETY: a valid out-pointer.
    let status = unsafe { sys::cuStreamCreate(&mut stream, flags) };
    check(status, "creating a stream")?;
    Ok(stream)
}

/// `cuStreamDestroy` (queued work finishes first).
///
/// # Safety
/// A live stream of the current context, created here and destroyed once.
pub(crate) unsafe fn stream_destroy(stream: sys::CUstream) {
    // SAFETY: the caller's.
    unsafe { sys::cuStreamDestroy_v2(stream) };
}

/// `cuStreamWaitEvent`: work queued on `stream` from now on waits for `event`.
///
/// # Safety
/// A live stream and event (the event may be of another context).
pub(crate) unsafe fn stream_wait_event(stream: sys::CUstream, event: sys::CUevent) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuStreamWaitEvent(stream, event, 0) };
    check(status, "ordering a stream after an event")
}

/// `cuStreamSynchronize`: the first error of the stream's work.
///
/// # Safety
/// A live stream (or null, the legacy default stream).
pub(crate) unsafe fn stream_synchronize(stream: sys::CUstream) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuStreamSynchronize(stream) };
    check(status, "waiting for the stream (a kernel failed)")
}

// Memory.

/// `cuMemAllocAsync` on `stream` (from the device's default pool) where given, else
/// `cuMemAlloc`: `bytes` (more than 0) in the current context; [`crate::Error::OutOfMemory`]
/// where the driver lacks them. Fault injection: [`Fault::Alloc`].
///
/// # Safety
/// `stream`, where given, is live and of the current context.
pub(crate) unsafe fn mem_alloc(bytes: usize, stream: Option<sys::CUstream>) -> Result<sys::CUdeviceptr> {
    let mut address: sys::CUdeviceptr = 0;
    let status = or_inject(Fault::Alloc, || match stream {
        // SAFETY: a valid out-pointer; the caller's stream.
        Some(stream) => unsafe { sys::cuMemAllocAsync(&mut address, bytes, stream) },
        // SAFETY: a valid out-pointer.
        None => unsafe { sys::cuMemAlloc_v2(&mut address, bytes) },
    });
    check(status, "allocating device memory").map_err(|e| out_of_memory(e, bytes))?;
    Ok(address)
}

/// `cuMemFree` (which waits for the device's use of memory from `cuMemAlloc`, not of pooled
/// memory).
///
/// # Safety
/// An allocation of the current context, freed once, no work using it pending (pooled memory).
pub(crate) unsafe fn mem_free(address: sys::CUdeviceptr) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuMemFree_v2(address) };
    check(status, "freeing device memory")
}

/// `cuMemFreeAsync` on `stream`: the memory returns to its pool once the work queued there
/// before has run.
///
/// # Safety
/// Pooled memory of the current context, freed once; its other uses are ordered before the
/// stream's current end.
pub(crate) unsafe fn mem_free_async(address: sys::CUdeviceptr, stream: sys::CUstream) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuMemFreeAsync(address, stream) };
    check(status, "freeing device memory")
}

/// `cuMemsetD8Async` of `bytes` bytes at `address` to zero. Fault injection: [`Fault::Copy`].
///
/// # Safety
/// The range is device memory of the current context that stays allocated until the memset
/// has run, used by nothing else meanwhile; `stream` is live.
pub(crate) unsafe fn memset_zero_async(
    address: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: the caller's.
    let status = or_inject(Fault::Copy, || unsafe {
        sys::cuMemsetD8Async(address, 0, bytes, stream)
    });
    check(status, "clearing device memory")
}

/// `cuMemcpyHtoDAsync` of `bytes` from `src` to `dst`. Fault injection: [`Fault::Copy`].
///
/// # Safety
/// Both ranges are `bytes` long; `src` stays readable until the copy has run (the caller
/// synchronises); `dst` is device memory of the current context; `stream` is live.
pub(crate) unsafe fn memcpy_to_device_async(
    dst: sys::CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: the caller's.
    let status = or_inject(Fault::Copy, || unsafe {
        sys::cuMemcpyHtoDAsync_v2(dst, src, bytes, stream)
    });
    check(status, "copying to the device")
}

/// `cuMemcpyDtoHAsync` of `bytes` from `src` to `dst`. Fault injection: [`Fault::Copy`].
///
/// # Safety
/// Both ranges are `bytes` long; `dst` stays writable and unread until the copy has run (the
/// caller synchronises, also on error); `src` is device memory of the current context.
pub(crate) unsafe fn memcpy_to_host_async(
    dst: *mut c_void,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: the caller's.
    let status = or_inject(Fault::Copy, || unsafe {
        sys::cuMemcpyDtoHAsync_v2(dst, src, bytes, stream)
    });
    check(status, "copying from the device")
}

/// `cuMemcpyDtoDAsync` of `bytes` from `src` to `dst`. Fault injection: [`Fault::Copy`].
///
/// # Safety
/// Both ranges are `bytes` of live device memory of the current context, not overlapping,
/// allocated until the copy has run and not written by anything else meanwhile.
pub(crate) unsafe fn memcpy_device_async(
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: the caller's.
    let status = or_inject(Fault::Copy, || unsafe {
        sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream)
    });
    check(status, "queueing a device-to-device copy")
}

/// `cuMemcpy2DAsync` of `copy`. Fault injection: [`Fault::Copy`].
///
/// # Safety
/// `copy` describes ranges of live memory that stay allocated until the copy has run.
pub(crate) unsafe fn memcpy_2d_async(copy: &sys::CUDA_MEMCPY2D, stream: sys::CUstream) -> Result<()> {
    // SAFETY: the caller's; the driver reads the struct as it queues the copy.
    let status = or_inject(Fault::Copy, || unsafe { sys::cuMemcpy2DAsync_v2(copy, stream) });
    check(status, "queueing a strided device-to-device copy")
}

// Modules and launches.

/// `cuModuleLoadDataEx` of the NUL-terminated PTX `image`, the JIT compiler's error log written
/// to `log`: the module, or the failing status (the caller reports it with the log). Fault
/// injection: [`Fault::ModuleLoad`].
pub(crate) fn module_load_ptx(
    image: &CStr,
    log: &mut [u8],
) -> std::result::Result<sys::CUmodule, sys::CUresult> {
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is NUL-terminated; `options` and `values` have equal length and the log
    // buffer outlives the call with its size given in bytes, as cuModuleLoadDataEx needs.
    let status = or_inject(Fault::ModuleLoad, || unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    });
    if status == sys::cudaError_enum::CUDA_SUCCESS {
        Ok(module)
    } else {
        Err(status)
    }
}

/// `cuModuleUnload`.
///
/// # Safety
/// A module of the current context, unloaded once, whose functions nothing uses any more.
pub(crate) unsafe fn module_unload(module: sys::CUmodule) {
    // SAFETY: the caller's.
    unsafe { sys::cuModuleUnload(module) };
}

/// `cuModuleGetFunction` of `name`.
///
/// # Safety
/// A loaded module.
pub(crate) unsafe fn module_function(module: sys::CUmodule, name: &CStr) -> Result<sys::CUfunction> {
    let mut function: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: the caller's module, a NUL-terminated name, a valid out-pointer.
    let status = unsafe { sys::cuModuleGetFunction(&mut function, module, name.as_ptr()) };
    check(status, "looking up a kernel")?;
    Ok(function)
}

/// `cuFuncGetAttribute`.
///
/// # Safety
/// A function of a loaded module.
pub(crate) unsafe fn function_attribute(
    function: sys::CUfunction,
    attribute: sys::CUfunction_attribute,
    what: &'static str,
) -> Result<i32> {
    let mut value = 0i32;
    // SAFETY: the caller's; a valid out-pointer.
    let status = unsafe { sys::cuFuncGetAttribute(&mut value, attribute, function) };
    check(status, what)?;
    Ok(value)
}

/// `cuFuncSetAttribute`.
///
/// # Safety
/// A function of a loaded module; a value the driver accepts for `attribute`.
pub(crate) unsafe fn function_set_attribute(
    function: sys::CUfunction,
    attribute: sys::CUfunction_attribute,
    value: i32,
    what: &'static str,
) -> Result<()> {
    // SAFETY: the caller's.
    let status = unsafe { sys::cuFuncSetAttribute(function, attribute, value) };
    check(status, what)
}

/// `cuLaunchKernel` of `function` on `stream`: `grid` blocks of `block` threads (1-D),
/// `shared_bytes` of dynamic shared memory, the parameters at `parameters`. Fault injection:
/// [`Fault::Launch`].
///
/// # Safety
/// A function of a loaded module of the current context and a live stream of it; `parameters`
/// points at one pointer a kernel parameter, each to a value of its type (the driver copies
/// them before it returns); the launch shape within the device's and the function's limits.
pub(crate) unsafe fn launch_kernel(
    function: sys::CUfunction,
    (grid, block, shared_bytes): (u32, u32, u32),
    stream: sys::CUstream,
    parameters: *mut *mut c_void,
) -> Result<()> {
    // SAFETY: the caller's.
    let status = or_inject(Fault::Launch, || unsafe {
        sys::cuLaunchKernel(
            function,
            grid,
            1,
            1,
            block,
            1,
            1,
            shared_bytes,
            stream,
            parameters,
            std::ptr::null_mut(),
        )
    });
    check(status, "launching a kernel")
}

/// `cuOccupancyMaxActiveClusters` ([`sys::occupancy_max_active_clusters`]): how many clusters
/// of `function` (its PTX declares their size) fit at once, launched as `grid` blocks of
/// `block` threads with `shared_bytes` of dynamic shared memory.
///
/// # Safety
/// A function of a loaded module of the current context.
pub(crate) unsafe fn occupancy_max_active_clusters(
    function: sys::CUfunction,
    grid: u32,
    block: u32,
    shared_bytes: u32,
) -> Result<u32> {
    // SAFETY: the caller's.
    let (status, clusters) =
        unsafe { sys::occupancy_max_active_clusters(function, grid, block, shared_bytes) };
    check(status, "counting a kernel's active clusters")?;
    Ok(clusters.max(0) as u32)
}
