//! [`Gpu`]: one device, its context and stream, and the kernels' PTX module loaded for it.

use crate::error::CudaContext;
use crate::launch::{KernelParams, LaunchConfig};
use crate::ptx::{cuda_version_for_ptx_isa, format_cuda_version, ptx_isa_version, select_variant};
use crate::{Error, Result};
use cust::context::Context;
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use std::ffi::CString;
use std::time::Duration;

/// What the host knows about the device it opened.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Device ordinal (0 = the first GPU).
    pub ordinal: u32,
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability x 10 (90 for sm_90).
    pub arch: u32,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Threads per warp, as the device reports it.
    pub warp_size: u32,
    /// Total device memory, bytes.
    pub total_memory: usize,
    /// Driver's CUDA version, "major.minor".
    pub driver_cuda_version: String,
    /// Architecture of the PTX variant that was loaded (compute capability x 10).
    pub ptx_arch: u32,
}

/// An open GPU: device, context, one non-blocking stream, and the kernels' module.
///
/// The context is made current on the thread that calls [`Gpu::open`]; use a `Gpu` from that
/// thread (it is deliberately neither `Send` nor `Sync`).
pub struct Gpu {
    info: DeviceInfo,
    // Field order is drop order: module and stream before the context they live in.
    module: Module,
    stream: Stream,
    _context: Context,
}

fn no_device(e: CudaError) -> Error {
    Error::NoDevice(e.to_string().trim_matches('"').to_owned())
}

fn attribute(device: Device, attr: DeviceAttribute) -> Result<u32> {
    Ok(device.get_attribute(attr).context("reading a device attribute")? as u32)
}

impl Gpu {
    /// Open device `ordinal`, check the driver's version and the warp size, and load the newest
    /// of `ptx_variants` (compute capability x 10, PTX text) that the device can run.
    ///
    /// `warp_size` is the kernels' compile-time `WARP_SIZE`.
    ///
    /// # Errors
    /// [`Error::NoDevice`], [`Error::NoSuchDevice`], [`Error::GpuTooOld`],
    /// [`Error::DriverTooOld`], [`Error::WarpSize`], [`Error::PtxLoad`] (with the JIT log).
    ///
    /// # Example
    /// ```no_run
    /// // Your kernels' PTX, usually `PTX_VARIANTS` from ptx-builder's generated module.
    /// let ptx = std::fs::read_to_string("my_kernels_sm_80.ptx").expect("PTX file");
    /// let gpu = gpu_host::Gpu::open(0, &[(80, ptx.as_str())], 32)?;
    /// println!("{} (sm_{})", gpu.info().name, gpu.info().arch);
    /// # Ok::<(), gpu_host::Error>(())
    /// ```
    pub fn open(ordinal: u32, ptx_variants: &[(u32, &str)], warp_size: u32) -> Result<Self> {
        cust::init(cust::CudaFlags::empty()).map_err(no_device)?;
        let count = Device::num_devices().map_err(no_device)?;
        if count == 0 {
            return Err(Error::NoDevice("the driver reports 0 devices".into()));
        }
        if ordinal >= count {
            return Err(Error::NoSuchDevice { ordinal, count });
        }
        let device = Device::get_device(ordinal).context("opening the device")?;
        let name = device.name().context("reading the device name")?;
        let arch = 10 * attribute(device, DeviceAttribute::ComputeCapabilityMajor)?
            + attribute(device, DeviceAttribute::ComputeCapabilityMinor)?;
        let (ptx_arch, ptx) = select_variant(ptx_variants, arch, &name)?;

        let driver = cust::CudaApiVersion::get().context("reading the driver version")?;
        let driver_version = (1000 * driver.major() + 10 * driver.minor()) as u32;
        if let Some(isa) = ptx_isa_version(ptx) {
            let required = cuda_version_for_ptx_isa(isa);
            if driver_version < required {
                return Err(Error::DriverTooOld {
                    found: format_cuda_version(driver_version),
                    required: format_cuda_version(required),
                    ptx_isa: format!("{}.{}", isa.0, isa.1),
                });
            }
        }
        let device_warp = attribute(device, DeviceAttribute::WarpSize)?;
        if device_warp != warp_size {
            return Err(Error::WarpSize {
                expected: warp_size,
                found: device_warp,
            });
        }

        let context = Context::new(device).context("creating a context")?;
        let module = load_module(ptx, ptx_arch)?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).context("creating a stream")?;
        let info = DeviceInfo {
            ordinal,
            name,
            arch,
            multiprocessors: attribute(device, DeviceAttribute::MultiprocessorCount)?,
            warp_size: device_warp,
            total_memory: device.total_memory().context("reading the memory size")?,
            driver_cuda_version: format_cuda_version(driver_version),
            ptx_arch,
        };
        Ok(Self {
            info,
            module,
            stream,
            _context: context,
        })
    }

    /// The device this opened.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The stream all work of this `Gpu` is queued on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Copy `data` to a new device buffer (synchronous).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks `size_of_val(data)` free bytes.
    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let bytes = std::mem::size_of_val(data);
        DeviceBuffer::from_slice(data).map_err(|e| self.allocation_error(e, bytes))
    }

    /// A device buffer of `len` zeroed elements.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device lacks the bytes.
    pub fn alloc_zeroed<T: DeviceCopy + bytemuck::Zeroable>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        DeviceBuffer::zeroed(len).map_err(|e| self.allocation_error(e, bytes))
    }

    /// Wait for the stream, then copy `buffer` to a new `Vec`.
    pub fn download<T: DeviceCopy + Default + Clone>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.synchronize()?;
        let mut host = vec![T::default(); buffer.len()];
        buffer.copy_to(&mut host[..]).context("copying from the device")?;
        Ok(host)
    }

    /// Queue a device-to-device copy of the first `n` elements of `src` into `dst` on the stream
    /// (the reference point for memory bandwidth: it reads and writes `n * size_of::<T>()` bytes
    /// each).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when either buffer is shorter than `n`.
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
        let mut target = dst.index(..n);
        // SAFETY: both ranges are n elements of live device allocations, distinct buffers (a
        // `&mut` and a `&` borrow); freeing either one (cuMemFree) waits for the copy.
        unsafe { target.async_copy_from(&src.index(..n), &self.stream) }
            .context("queueing a device-to-device copy")
    }

    /// Wait until all work queued on the stream has finished; reports errors of earlier launches
    /// (illegal address, trap).
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .context("waiting for the stream (a kernel failed)")
    }

    /// Queue kernel `kernel` of the loaded module on the stream.
    ///
    /// # Safety
    /// `params` must match the kernel's parameter list in number, order and type, and the
    /// pointers among them must address device memory large enough for what the kernel reads and
    /// writes with this launch shape (each kernel's docs say what that is).
    ///
    /// # Example
    /// ```no_run
    /// # fn demo(gpu: &gpu_host::Gpu) -> gpu_host::Result<()> {
    /// let d_x = gpu.upload(&[1.0f32, 2.0, 3.0])?;
    /// let d_out = gpu.alloc_zeroed::<f32>(1)?;
    /// // SAFETY: the module's `sum_naive` takes (input: *const f32, out: *mut f32, n: usize).
    /// unsafe { gpu.launch("sum_naive", gpu_host::LaunchConfig::new(1, 1), (d_x.as_device_ptr(), d_out.as_device_ptr(), 3usize))? };
    /// assert_eq!(gpu.download(&d_out)?, [6.0]);
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch<P: KernelParams>(
        &self,
        kernel: &str,
        config: LaunchConfig,
        params: P,
    ) -> Result<()> {
        config.validate()?;
        let function = self
            .module
            .get_function(kernel)
            .map_err(|_| Error::MissingKernel(kernel.to_owned()))?;
        params
            .with_pointers(|pointers| {
                // SAFETY: the caller guarantees the parameters match the kernel; the pointers point at
                // `params`, which outlives this call (cuLaunchKernel copies the values).
                unsafe {
                    self.stream.launch(
                        &function,
                        config.grid,
                        config.block,
                        config.shared_mem_bytes,
                        pointers,
                    )
                }
            })
            .context("launching a kernel")
    }

    /// Time the stream work `work` queues, with CUDA events recorded before and after it.
    /// Waits for the work to finish.
    ///
    /// # Example
    /// ```no_run
    /// # fn demo(gpu: &gpu_host::Gpu, src: &gpu_host::DeviceBuffer<f32>, dst: &mut gpu_host::DeviceBuffer<f32>) -> gpu_host::Result<()> {
    /// let ((), elapsed) = gpu.time(|| gpu.copy_device_to_device(src, dst, src.len()))?;
    /// println!("copy: {:.1} µs", elapsed.as_secs_f64() * 1e6);
    /// # Ok(()) }
    /// ```
    pub fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        let start = Event::new(EventFlags::DEFAULT).context("creating an event")?;
        let stop = Event::new(EventFlags::DEFAULT).context("creating an event")?;
        start.record(&self.stream).context("recording an event")?;
        let value = work()?;
        stop.record(&self.stream).context("recording an event")?;
        stop.synchronize()
            .context("waiting for timed work (a kernel failed)")?;
        let elapsed = stop.elapsed(&start).context("reading an event")?;
        Ok((value, elapsed))
    }

    fn allocation_error(&self, e: CudaError, bytes: usize) -> Error {
        if e == CudaError::OutOfMemory {
            let (free, total) = cust::memory::mem_get_info().unwrap_or((0, self.info.total_memory));
            Error::OutOfMemory { bytes, free, total }
        } else {
            Error::Cuda {
                context: "allocating device memory",
                source: e,
            }
        }
    }
}

/// Load a PTX module; on failure, load it again through the raw driver call with an error-log
/// buffer, so that the JIT compiler's message reaches the user.
fn load_module(ptx: &str, arch: u32) -> Result<Module> {
    match Module::from_ptx(ptx, &[]) {
        Ok(module) => Ok(module),
        Err(e) => Err(Error::PtxLoad {
            arch,
            code: e.to_string(),
            log: jit_error_log(ptx),
        }),
    }
}

fn jit_error_log(ptx: &str) -> String {
    use cust::sys as raw;
    let Ok(image) = CString::new(ptx) else {
        return "the PTX text contains a NUL byte".into();
    };
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [
        raw::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        raw::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr().cast(), log.len() as *mut std::ffi::c_void];
    let mut module: raw::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a NUL-terminated PTX string; `options` and `values` have equal length and
    // the log buffer outlives the call with its size given in bytes, as cuModuleLoadDataEx needs.
    let status = unsafe {
        raw::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if status == raw::cudaError_enum::CUDA_SUCCESS && !module.is_null() {
        // SAFETY: the module was just loaded by us and is used by nothing else.
        unsafe { raw::cuModuleUnload(module) };
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    String::from_utf8_lossy(&log[..end]).trim().to_owned()
}
