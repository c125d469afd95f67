//! [`Gpu`]: one device, its primary context, a default stream, and the PTX modules loaded into it.

use crate::context::Context;
use crate::launch::{KernelArgs, LaunchConfig};
use crate::module::{Module, Variants};
use crate::result::device_attribute as attribute;
use crate::stream::Stream;
use crate::{DeviceBuffer, DeviceCopy, Error, Result, result, sys};
use std::sync::{Arc, Mutex, MutexGuard};
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
    /// Most shared memory one block may use, static and dynamic together, in bytes, where the
    /// kernel opts in (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: 227 KiB on sm_90,
    /// 163 KiB on sm_80). A launch may ask for more than 48 KiB of dynamic shared memory, up
    /// to this less the kernel's static shared memory ([`Stream::launch`](crate::Stream::launch)).
    pub max_shared_per_block: u32,
    /// Shared memory the driver reserves for each resident block, in bytes
    /// (`CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK`: 1 KiB on sm_80 and sm_90): a
    /// multiprocessor holds `max_shared_per_block + reserved_shared_per_block` bytes, and each
    /// block resident on it takes its own shared memory plus this.
    pub reserved_shared_per_block: u32,
    /// Threads per warp, as the device reports it.
    pub warp_size: u32,
    /// Total device memory, bytes.
    pub total_memory: usize,
    /// Driver's CUDA version, "major.minor".
    pub driver_cuda_version: String,
    /// Driver's CUDA version as the driver API encodes it (1000 * major + 10 * minor).
    pub driver_version: u32,
}

/// An open GPU: the device, its primary context (the one cudarc and the CUDA runtime use too),
/// a default non-blocking [`Stream`], and the PTX [`Module`]s loaded into the context.
///
/// Cheap to clone (a reference count); every clone is the same GPU. `Send` and `Sync`: each call
/// makes the context current on the calling thread first.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<Inner>,
}

struct Inner {
    info: DeviceInfo,
    modules: Mutex<Vec<(&'static str, Arc<Module>)>>,
    stream: Stream,
    /// The primary context; every handle made in it holds it too, so it is released only after
    /// the last of them, whatever the order of drops.
    context: Arc<Context>,
}

/// A failure of the first driver calls (no driver, no device: the driver cannot start or count
/// its devices) as [`Error::NoDevice`].
fn no_device(error: Error) -> Error {
    Error::NoDevice(error.to_string())
}

impl Gpu {
    /// Open device `ordinal`: retain its primary context (and make it current on the calling
    /// thread, as cudarc's `CudaContext::new` does), check its warp size against the kernels'
    /// `warp_size`, and create the default stream. No module is loaded yet: load them
    /// with [`Gpu::module`] (libraries built on this crate load theirs on first use).
    ///
    /// # Errors
    /// [`Error::NoDevice`], [`Error::NoSuchDevice`], [`Error::WarpSize`].
    ///
    /// # Example
    /// ```no_run
    /// let gpu = gpu_primitives_runtime::Gpu::open(0, 32)?;
    /// println!("{} (sm_{})", gpu.info().name, gpu.info().arch);
    /// # Ok::<(), gpu_primitives_runtime::Error>(())
    /// ```
    pub fn open(ordinal: u32, warp_size: u32) -> Result<Self> {
        use sys::CUdevice_attribute_enum as A;
        if !sys::driver_present() {
            return Err(Error::NoDevice(
                "the CUDA driver library (libcuda) was not found".into(),
            ));
        }
        result::init().map_err(no_device)?;
        let count = result::device_count().map_err(no_device)?;
        if count == 0 {
            return Err(Error::NoDevice("the driver reports 0 devices".into()));
        }
        if ordinal >= count {
            return Err(Error::NoSuchDevice { ordinal, count });
        }
        let device = result::device(ordinal)?;
        let name = result::device_name(device)?;
        let arch = 10 * attribute(device, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?
            + attribute(device, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let driver_version = result::driver_version()?;
        let device_warp = attribute(device, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?;
        if device_warp != warp_size {
            return Err(Error::WarpSize {
                expected: warp_size,
                found: device_warp,
            });
        }
        let total_memory = result::device_total_memory(device)?;
        // The primary context (the one cudarc and the CUDA runtime use), made current on this
        // thread, as cudarc's `CudaContext::new` does (later calls restore whatever context is
        // current when they are made).
        let context = Context::retain(device)?;
        // SAFETY: the context was just retained, and stays so while any handle holds it.
        unsafe { result::context_set_current(context.raw())? };
        let stream = Stream::create(&context)?;
        let info = DeviceInfo {
            ordinal,
            name,
            arch,
            multiprocessors: attribute(device, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_shared_per_block: attribute(
                device,
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            reserved_shared_per_block: attribute(
                device,
                A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
            )?,
            warp_size: device_warp,
            total_memory,
            driver_cuda_version: crate::ptx::format_cuda_version(driver_version),
            driver_version,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                info,
                modules: Mutex::new(Vec::new()),
                stream,
                context,
            }),
        })
    }

    /// The device this opened.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// The `Gpu`'s default stream (non-blocking: it does not wait for the legacy default stream).
    pub fn stream(&self) -> &Stream {
        &self.inner.stream
    }

    /// A new non-blocking stream in this `Gpu`'s context.
    ///
    /// # Errors
    /// Driver errors.
    pub fn create_stream(&self) -> Result<Stream> {
        Stream::create(&self.inner.context)
    }

    /// Make this `Gpu`'s context current on the calling thread, and leave it current (every call
    /// of this crate pushes it for its own duration and restores the caller's after; call this
    /// before using the driver API directly on a new thread).
    ///
    /// # Errors
    /// Driver errors.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for as long as this `Gpu`.
        unsafe { result::context_set_current(self.inner.context.raw()) }
    }

    /// The primary context's driver handle (for the driver API, or to check that another
    /// library's memory and streams live in the same context).
    pub fn context_raw(&self) -> sys::CUcontext {
        self.inner.context.raw()
    }

    fn modules(&self) -> MutexGuard<'_, Vec<(&'static str, Arc<Module>)>> {
        self.inner.modules.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The module `key`, made on first use from the newest of `ptx_variants` (compute
    /// capability x 10, PTX text) that the device can run, after checking the driver can load
    /// its PTX ISA version. Later calls with the same `key` return the same module. Its kernels
    /// are compiled one by one as they are first looked up ([`Module`]), so a JIT error of a
    /// kernel ([`Error::PtxLoad`], with the compiler's log) comes from that lookup.
    ///
    /// # Errors
    /// [`Error::NoPtx`], [`Error::GpuTooOld`], [`Error::DriverTooOld`].
    pub fn module(&self, key: &'static str, ptx_variants: &[(u32, &'static str)]) -> Result<Arc<Module>> {
        self.module_from(key, Variants::Text(ptx_variants))
    }

    /// As [`Gpu::module`], from kernels stored as families of compressed PTX
    /// ([`PackedModule`](crate::packed::PackedModule), one per architecture): a family is
    /// decompressed the first time one of its kernels is looked up, so a program decompresses
    /// only the families it launches.
    ///
    /// # Errors
    /// As [`Gpu::module`]; a lookup may also fail with [`Error::BadFrame`].
    pub fn packed_module(
        &self,
        key: &'static str,
        modules: &'static [crate::packed::PackedModule],
    ) -> Result<Arc<Module>> {
        self.module_from(key, Variants::Packed(modules))
    }

    fn module_from(&self, key: &'static str, variants: Variants<'_>) -> Result<Arc<Module>> {
        let mut modules = self.modules();
        if let Some((_, module)) = modules.iter().find(|(k, _)| *k == key) {
            return Ok(module.clone());
        }
        let module = Arc::new(Module::load(key, variants, &self.inner.context, self.info())?);
        modules.push((key, module.clone()));
        Ok(module)
    }

    /// Queue kernel `kernel`, looked up in the loaded modules in the order they were loaded, on
    /// the default stream with positional arguments (for kernels written with separate
    /// parameters, as the lessons' are; the library's kernels take a parameter struct through
    /// [`Module::kernel`] and [`Stream::launch`]).
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in number, order and type, and the pointers
    /// among them must address device memory large enough for what the kernel reads and writes
    /// with this launch shape (each kernel's docs say what that is).
    ///
    /// # Errors
    /// [`Error::MissingKernel`], [`Error::InvalidLaunch`], driver errors.
    pub unsafe fn launch<A: KernelArgs>(&self, kernel: &str, config: LaunchConfig, args: A) -> Result<()> {
        let module = self
            .modules()
            .iter()
            .find(|(_, m)| m.has_kernel(kernel))
            .map(|(_, m)| m.clone())
            .ok_or_else(|| Error::MissingKernel(kernel.to_owned()))?;
        // SAFETY: forwarded from this function's contract.
        unsafe { module.launch_args(self.stream(), kernel, config, args) }
    }

    /// [`Stream::upload`] on the default stream.
    ///
    /// # Errors
    /// As [`Stream::upload`].
    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.stream().upload(data)
    }

    /// [`Stream::alloc_zeroed`] on the default stream.
    ///
    /// # Errors
    /// As [`Stream::alloc_zeroed`].
    pub fn alloc_zeroed<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.stream().alloc_zeroed(len)
    }

    /// [`Stream::download`] on the default stream.
    ///
    /// # Errors
    /// As [`Stream::download`].
    pub fn download<T: DeviceCopy + Default>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.stream().download(buffer)
    }

    /// [`Stream::copy_device_to_device`] on the default stream.
    ///
    /// # Errors
    /// As [`Stream::copy_device_to_device`].
    pub fn copy_device_to_device<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<()> {
        self.stream().copy_device_to_device(src, dst, n)
    }

    /// Wait for the default stream ([`Stream::synchronize`]).
    ///
    /// # Errors
    /// Errors of earlier launches (illegal address, trap).
    pub fn synchronize(&self) -> Result<()> {
        self.stream().synchronize()
    }

    /// [`Stream::time`] on the default stream.
    ///
    /// # Errors
    /// As [`Stream::time`].
    pub fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        self.stream().time(work)
    }
}

/// A [`Gpu`] and one of its streams: where a library call queues its work. `&gpu` converts to
/// its default stream; [`Gpu::on`] names another, after checking it belongs to the `Gpu`'s
/// context.
#[derive(Clone, Copy)]
pub struct OnStream<'a> {
    gpu: &'a Gpu,
    stream: &'a Stream,
}

impl<'a> From<&'a Gpu> for OnStream<'a> {
    fn from(gpu: &'a Gpu) -> Self {
        Self {
            gpu,
            stream: gpu.stream(),
        }
    }
}

impl<'a> OnStream<'a> {
    /// The GPU (its context and modules).
    pub fn gpu(&self) -> &'a Gpu {
        self.gpu
    }

    /// The stream the work is queued on, of the GPU's context.
    pub fn stream(&self) -> &'a Stream {
        self.stream
    }
}

impl Gpu {
    /// This GPU with `stream` (one of its own, or the caller's wrapped by [`Stream::from_raw`]),
    /// for calls that queue work.
    ///
    /// # Errors
    /// [`Error::WrongContext`] for a stream of another context (another device's `Gpu`).
    pub fn on<'a>(&'a self, stream: &'a Stream) -> Result<OnStream<'a>> {
        stream.check_context(&self.inner.context, "a stream of another GPU's context")?;
        Ok(OnStream { gpu: self, stream })
    }
}
