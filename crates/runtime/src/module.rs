//! [`Module`]: one PTX module of a [`Gpu`](crate::Gpu)'s context, each of its kernels compiled
//! on first use; [`Kernel`]: one of its functions with a typed parameter struct.

use crate::context::Context;
use crate::launch::{KernelArgs, LaunchConfig};
use crate::packed::{PackedFamily, PackedModule};
use crate::ptx::{
    KernelTexts, cuda_version_for_ptx_isa, entry_param_bytes, format_cuda_version, ptx_isa_version,
    select_variant,
};
use crate::sys as raw;
use crate::{DeviceInfo, Error, Result, Stream, result};
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

/// A PTX module of a [`Gpu`](crate::Gpu): the variant for its device, whose kernels are each
/// compiled alone the first time they are looked up ([`KernelTexts`]: the module less its other
/// entries), and cached. A program pays for the kernels it uses: compiling all of a library's
/// hundreds of kernels at once took about 100 s on an H100. Its PTX is one text, or families of
/// compressed text ([`PackedModule`]) of which only those whose kernels are looked up are
/// decompressed.
pub struct Module {
    key: &'static str,
    arch: u32,
    /// The variant's PTX.
    source: Source,
    /// The kernels loaded so far, shared with every [`Kernel`] handed out, so that a kernel
    /// keeps its driver module (and the context) alive.
    loaded: Arc<Loaded>,
    /// The device's opt-in shared memory per block (`DeviceInfo::max_shared_per_block`).
    max_shared_per_block: u32,
}

/// Where a [`Module`]'s kernels' PTX comes from.
enum Source {
    /// One text, cut at its kernels, with each kernel's parameter sizes (read at load).
    Text {
        texts: KernelTexts<'static>,
        params: HashMap<String, Vec<usize>>,
    },
    /// Families of compressed text, each decompressed on the first lookup of one of its kernels.
    Packed {
        families: &'static [PackedFamily],
        /// Each kernel's family (its index in `families`).
        family_of: HashMap<&'static str, usize>,
        /// The families decompressed so far, by index.
        texts: Vec<OnceLock<FamilyText>>,
    },
}

/// A decompressed family: its PTX text and each of its kernels' parameter sizes.
struct FamilyText {
    text: String,
    params: HashMap<String, Vec<usize>>,
}

impl FamilyText {
    fn new(text: String) -> Self {
        let params = kernel_params(&KernelTexts::new(&text));
        Self { text, params }
    }
}

impl Source {
    /// The decompressed family of kernel `name` (decompressed on its first use; of two threads
    /// racing, the first to finish is kept); `None` for a text module.
    fn family(&self, name: &str) -> Result<Option<&FamilyText>> {
        let Source::Packed {
            families,
            family_of,
            texts,
        } = self
        else {
            return Ok(None);
        };
        let index = *family_of
            .get(name)
            .ok_or_else(|| Error::MissingKernel(name.to_owned()))?;
        if let Some(family) = texts[index].get() {
            return Ok(Some(family));
        }
        let family = FamilyText::new(families[index].decompress()?);
        let _ = texts[index].set(family);
        Ok(texts[index].get())
    }

    /// The module of kernel `name` alone.
    fn module_of(&self, name: &str) -> Result<String> {
        let module = match self {
            Source::Text { texts, .. } => texts.module_of(name),
            Source::Packed { .. } => self
                .family(name)?
                .and_then(|family| KernelTexts::new(&family.text).module_of(name)),
        };
        module.ok_or_else(|| Error::MissingKernel(name.to_owned()))
    }

    /// Kernel `name`'s parameter sizes in bytes.
    fn params(&self, name: &str) -> Result<&[usize]> {
        let params = match self {
            Source::Text { params, .. } => params.get(name),
            Source::Packed { .. } => self.family(name)?.and_then(|family| family.params.get(name)),
        };
        params
            .map(Vec::as_slice)
            .ok_or_else(|| Error::MissingKernel(name.to_owned()))
    }

    /// Whether the module has kernel `name`.
    fn has(&self, name: &str) -> bool {
        match self {
            Source::Text { params, .. } => params.contains_key(name),
            Source::Packed { family_of, .. } => family_of.contains_key(name),
        }
    }

    /// Every kernel's name, in no particular order.
    fn names(&self) -> Vec<&str> {
        match self {
            Source::Text { params, .. } => params.keys().map(String::as_str).collect(),
            Source::Packed { family_of, .. } => family_of.keys().copied().collect(),
        }
    }
}

/// Each kernel of `texts` with its parameter sizes, read from its own entry's text (so that a
/// kernel the module has is one it can compile).
fn kernel_params(texts: &KernelTexts<'_>) -> HashMap<String, Vec<usize>> {
    texts
        .names()
        .map(|name| {
            let params = texts
                .entry(name)
                .map(entry_param_bytes)
                .and_then(|mut p| p.remove(name));
            (name.to_owned(), params.unwrap_or_default())
        })
        .collect()
}

/// A module's PTX for each architecture it was built for.
#[derive(Clone, Copy)]
pub(crate) enum Variants<'a> {
    /// (compute capability x 10, PTX text).
    Text(&'a [(u32, &'static str)]),
    /// Families of compressed PTX per architecture.
    Packed(&'static [PackedModule]),
}

/// The driver modules of a [`Module`]'s kernels looked up so far, in their context; unloaded
/// when the `Module` and every [`Kernel`] of it are dropped.
struct Loaded {
    /// Each kernel looked up so far: the driver's module holding it alone, and its function.
    functions: Mutex<HashMap<String, (raw::CUmodule, raw::CUfunction)>>,
    /// [`Kernel::max_active_clusters`]'s answers, asked once per function and shape.
    active_clusters: ActiveClusters,
    /// The context the kernels are loaded into (dropped after the unloads).
    context: Arc<Context>,
}

/// Active clusters by (function, cluster blocks, block threads, dynamic shared bytes).
type ActiveClusters = Mutex<HashMap<(usize, u32, u32, u32), u32>>;

// SAFETY: CUmodules and their CUfunctions are driver handles usable from any thread; the maps
// are behind mutexes; loads, launches and unloads push the context first.
unsafe impl Send for Loaded {}
// SAFETY: as for Send.
unsafe impl Sync for Loaded {}

impl Drop for Loaded {
    fn drop(&mut self) {
        let Ok(_current) = self.context.push() else {
            return;
        };
        let functions = self.functions.get_mut().unwrap_or_else(|e| e.into_inner());
        for &(module, _) in functions.values() {
            // SAFETY: each loaded once by `Module::function` in this context (current), unloaded
            // once here, when no `Module` or `Kernel` holding its functions is left.
            unsafe { result::module_unload(module) };
        }
    }
}

/// A kernel whose one parameter is the `#[repr(C)]` struct `P` (by value), found in a [`Module`]
/// by [`Module::kernel`], which checked the PTX entry takes `size_of::<P>()` bytes of
/// parameters. Launch it with [`Stream::launch`].
///
/// Holds its module's loaded kernels (and so the context): it may outlive the [`Module`] and
/// the [`Gpu`](crate::Gpu).
pub struct Kernel<P> {
    function: raw::CUfunction,
    name: String,
    /// The device's opt-in shared memory per block (`DeviceInfo::max_shared_per_block`).
    max_shared_per_block: u32,
    /// The module's loaded kernels: keeps `function` loaded.
    loaded: Arc<Loaded>,
    _params: PhantomData<fn(P)>,
}

// SAFETY: a CUfunction is a driver handle usable from any thread; `Loaded` is Send and Sync.
unsafe impl<P> Send for Kernel<P> {}
// SAFETY: as for Send.
unsafe impl<P> Sync for Kernel<P> {}

impl<P> Clone for Kernel<P> {
    fn clone(&self) -> Self {
        Self {
            function: self.function,
            name: self.name.clone(),
            max_shared_per_block: self.max_shared_per_block,
            loaded: Arc::clone(&self.loaded),
            _params: PhantomData,
        }
    }
}

impl<P> Kernel<P> {
    /// The kernel's PTX name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many thread-block clusters of this kernel (of `cluster_blocks` blocks, the size its
    /// PTX declares) the device runs at once with blocks of `block` threads and `shared_bytes`
    /// of dynamic shared memory (`cuOccupancyMaxActiveClusters`): on an H100, 30 clusters of 4
    /// blocks that each fill a multiprocessor, not 132 / 4. 0 where the kernel has no clusters
    /// or the shape cannot run. The driver is asked once per kernel and shape (the module
    /// keeps the answer).
    ///
    /// # Errors
    /// Driver errors (among them a driver older than CUDA 11.8).
    pub fn max_active_clusters(&self, cluster_blocks: u32, block: u32, shared_bytes: u32) -> Result<u32> {
        let key = (self.function as usize, cluster_blocks, block, shared_bytes);
        let mut known = self
            .loaded
            .active_clusters
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(&clusters) = known.get(&key) {
            return Ok(clusters);
        }
        let _current = self.loaded.context.push()?;
        if shared_bytes > LaunchConfig::DEFAULT_DYNAMIC_SHARED_BYTES {
            allow_all_shared_memory(self.function, self.max_shared_per_block)?;
        }
        // SAFETY: a function of a loaded module (held by `self.loaded`); its context is current.
        let clusters = unsafe {
            result::occupancy_max_active_clusters(self.function, cluster_blocks, block, shared_bytes)?
        };
        known.insert(key, clusters);
        Ok(clusters)
    }
}

impl Module {
    /// Choose the newest of `variants` the device runs, in `context`, after checking the driver
    /// loads its PTX ISA version; nothing is compiled (or decompressed) yet.
    pub(crate) fn load(
        key: &'static str,
        variants: Variants<'_>,
        context: &Arc<Context>,
        device: &DeviceInfo,
    ) -> Result<Self> {
        let archs: Vec<(u32, &'static str)> = match variants {
            Variants::Text(texts) => texts.to_vec(),
            Variants::Packed(modules) => modules.iter().map(|m| (m.arch, "")).collect(),
        };
        if archs.is_empty() {
            return Err(Error::NoPtx(key.to_owned()));
        }
        let (arch, ptx) = select_variant(&archs, device.arch, &device.name)?;
        let (isa, source) = match variants {
            Variants::Text(_) => {
                let texts = KernelTexts::new(ptx);
                let params = kernel_params(&texts);
                (ptx_isa_version(ptx), Source::Text { texts, params })
            }
            Variants::Packed(modules) => {
                let module = modules
                    .iter()
                    .find(|m| m.arch == arch)
                    .ok_or_else(|| Error::NoPtx(key.to_owned()))?;
                let family_of = module
                    .families
                    .iter()
                    .enumerate()
                    .flat_map(|(i, f)| f.kernels.iter().map(move |&k| (k, i)))
                    .collect();
                let texts = module.families.iter().map(|_| OnceLock::new()).collect();
                let source = Source::Packed {
                    families: module.families,
                    family_of,
                    texts,
                };
                (Some(module.ptx_isa), source)
            }
        };
        if let Some(isa) = isa {
            let required = cuda_version_for_ptx_isa(isa);
            if device.driver_version < required {
                return Err(Error::DriverTooOld {
                    found: format_cuda_version(device.driver_version),
                    required: format_cuda_version(required),
                    ptx_isa: format!("{}.{}", isa.0, isa.1),
                });
            }
        }
        Ok(Self {
            key,
            arch,
            source,
            loaded: Arc::new(Loaded {
                functions: Mutex::new(HashMap::new()),
                active_clusters: Mutex::default(),
                context: Arc::clone(context),
            }),
            max_shared_per_block: device.max_shared_per_block,
        })
    }

    /// The key the module was loaded under.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// Architecture of the PTX variant that was loaded (compute capability x 10).
    pub fn ptx_arch(&self) -> u32 {
        self.arch
    }

    /// Whether the module has an entry point `name`.
    pub fn has_kernel(&self, name: &str) -> bool {
        self.source.has(name)
    }

    fn functions(&self) -> std::sync::MutexGuard<'_, HashMap<String, (raw::CUmodule, raw::CUfunction)>> {
        self.loaded.functions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The driver's handle of function `name`: on first use, its module of one kernel is
    /// compiled and loaded into the context. Threads compile different kernels at once (the
    /// cache is not held during the JIT); two compiling the same one keep the first.
    fn function(&self, name: &str) -> Result<raw::CUfunction> {
        if let Some(&(_, f)) = self.functions().get(name) {
            return Ok(f);
        }
        let text = self.source.module_of(name)?;
        let c_name = CString::new(name).map_err(|_| Error::MissingKernel(name.to_owned()))?;
        let _current = self.loaded.context.push()?;
        let module = load_ptx(&text, name, self.arch)?;
        // SAFETY: a module loaded just above.
        let function = match unsafe { result::module_function(module, &c_name) } {
            Ok(function) => function,
            Err(e) => {
                // SAFETY: loaded just above, not kept.
                unsafe { result::module_unload(module) };
                return Err(e);
            }
        };
        let mut functions = self.functions();
        if let Some(&(_, first)) = functions.get(name) {
            // SAFETY: loaded just above, not kept: another thread's copy is.
            unsafe { result::module_unload(module) };
            return Ok(first);
        }
        functions.insert(name.to_owned(), (module, function));
        Ok(function)
    }

    /// Compile and load kernel `name` if it is not yet, as its first use would (its family's
    /// text decompressed where it is stored compressed, its module of one kernel JIT-compiled by
    /// the driver or taken from the driver's cache): to pay that ahead of a call, or to time it.
    ///
    /// # Errors
    /// [`Error::MissingKernel`], [`Error::BadFrame`], [`Error::PtxLoad`], driver errors.
    pub fn compile(&self, name: &str) -> Result<()> {
        self.function(name).map(|_| ())
    }

    /// Compile every kernel not compiled yet, one after another, so that no later call waits
    /// for its kernels' JIT (at start-up, say, or to check that every kernel compiles for this
    /// GPU); the number compiled. All 713 of the library's kernels took 102-118 s on an H100
    /// where the driver's JIT cache did not hold them, and 0.3 s where it did; compiling them
    /// from 16 threads at once measured no faster (104-107 s).
    ///
    /// # Errors
    /// The first [`Error::PtxLoad`] or driver error met; the kernels compiled before it stay.
    pub fn compile_all(&self) -> Result<usize> {
        let names: Vec<&str> = {
            let compiled = self.functions();
            self.source
                .names()
                .into_iter()
                .filter(|n| !compiled.contains_key(*n))
                .collect()
        };
        for name in &names {
            self.function(name)?;
        }
        Ok(names.len())
    }

    /// Kernel `name`, which takes one parameter of type `P` by value.
    ///
    /// # Errors
    /// [`Error::MissingKernel`]; [`Error::ParamMismatch`] when its PTX entry does not take
    /// exactly one parameter of `size_of::<P>()` bytes; [`Error::PtxLoad`] when the driver
    /// cannot compile it (on its first lookup).
    pub fn kernel<P: Copy>(&self, name: &str) -> Result<Kernel<P>> {
        let function = self.function(name)?;
        let params = self.source.params(name)?;
        if params != [size_of::<P>()] {
            return Err(Error::ParamMismatch {
                kernel: name.to_owned(),
                ptx_bytes: format!("{params:?}"),
                host_bytes: format!("[{}]", size_of::<P>()),
            });
        }
        Ok(Kernel {
            function,
            name: name.to_owned(),
            max_shared_per_block: self.max_shared_per_block,
            loaded: Arc::clone(&self.loaded),
            _params: PhantomData,
        })
    }

    /// Queue kernel `name` with positional arguments on `stream` (kernels written with separate
    /// parameters; the number of arguments and each one's size are checked against the PTX
    /// entry).
    ///
    /// # Safety
    /// As [`Gpu::launch`](crate::Gpu::launch).
    ///
    /// # Errors
    /// [`Error::MissingKernel`], [`Error::ParamMismatch`] for a wrong number or size of arguments,
    /// [`Error::PtxLoad`] (the kernel's first use), [`Error::InvalidLaunch`], driver errors.
    pub unsafe fn launch_args<A: KernelArgs>(
        &self,
        stream: &Stream,
        name: &str,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        let function = self.function(name)?;
        let expected = self.source.params(name)?;
        if expected != A::SIZES {
            return Err(Error::ParamMismatch {
                kernel: name.to_owned(),
                ptx_bytes: format!("{expected:?}"),
                host_bytes: format!("{:?}", A::SIZES),
            });
        }
        stream.check_context(&self.loaded.context, "launching a kernel of another context")?;
        args.with_pointers(|pointers| {
            // SAFETY: the caller guarantees the arguments match the kernel; the pointers point at
            // `args`, alive for this call (cuLaunchKernel copies the values).
            unsafe { stream.launch_raw(function, config, self.max_shared_per_block, pointers) }
        })
    }
}

impl Stream {
    /// Queue `kernel` with `params` (copied at the call: they may be dropped after it). A launch
    /// may ask for more than [`LaunchConfig::DEFAULT_DYNAMIC_SHARED_BYTES`] of dynamic shared
    /// memory, up to the device's limit less the kernel's static shared memory (such a launch
    /// first allows its kernel that much, `cuFuncSetAttribute`).
    ///
    /// # Safety
    /// The pointers in `params` must address device memory that is large enough for what the
    /// kernel reads and writes with this launch shape, and stays allocated until the kernel has
    /// run (each parameter struct's docs say what that is).
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] for a shape past the hardware's limits; [`Error::WrongContext`]
    /// for a kernel of another context; driver errors.
    pub unsafe fn launch<P: Copy>(&self, kernel: &Kernel<P>, config: LaunchConfig, params: &P) -> Result<()> {
        self.check_context(&kernel.loaded.context, "launching a kernel of another context")?;
        let pointer = params as *const P as *mut c_void;
        // SAFETY: forwarded; the one pointer addresses a `P`, the kernel's one parameter (its
        // size was checked against the PTX by `Module::kernel`).
        unsafe { self.launch_raw(kernel.function, config, kernel.max_shared_per_block, &[pointer]) }
    }

    /// # Safety
    /// `pointers` match `function`'s parameters; as [`Stream::launch`] otherwise.
    /// `max_shared_per_block` is the device's (`DeviceInfo::max_shared_per_block`).
    pub(crate) unsafe fn launch_raw(
        &self,
        function: raw::CUfunction,
        config: LaunchConfig,
        max_shared_per_block: u32,
        pointers: &[*mut c_void],
    ) -> Result<()> {
        config.validate()?;
        let _current = self.context().push()?;
        if config.shared_mem_bytes > LaunchConfig::DEFAULT_DYNAMIC_SHARED_BYTES {
            allow_all_shared_memory(function, max_shared_per_block)?;
        }
        // SAFETY: forwarded from the caller; the parameter array outlives the call
        // (cuLaunchKernel copies the values before it returns).
        unsafe {
            result::launch_kernel(
                function,
                (config.grid, config.block, config.shared_mem_bytes),
                self.as_raw(),
                pointers.as_ptr() as *mut *mut c_void,
            )
        }
    }
}

/// Let `function` take as much dynamic shared memory as the device allows a block
/// (`max_shared_per_block`) beside its static shared memory, where that is more than
/// [`LaunchConfig::DEFAULT_DYNAMIC_SHARED_BYTES`]: always that same value, whatever the launch
/// asks for, so that concurrent launches asking for different sizes cannot lower it under one
/// another. It is a limit only: each launch uses what it asks for.
fn allow_all_shared_memory(function: raw::CUfunction, max_shared_per_block: u32) -> Result<()> {
    use raw::CUfunction_attribute_enum as A;
    // SAFETY: a function of a loaded module.
    let static_bytes = unsafe {
        result::function_attribute(
            function,
            A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "reading a kernel's static shared memory",
        )?
    };
    let dynamic = i64::from(max_shared_per_block) - i64::from(static_bytes);
    if dynamic > i64::from(LaunchConfig::DEFAULT_DYNAMIC_SHARED_BYTES) {
        // SAFETY: as above; a value within the device's opt-in limit less the static bytes.
        unsafe {
            result::function_set_attribute(
                function,
                A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                dynamic as i32,
                "allowing a kernel the device's shared memory",
            )?
        };
    }
    Ok(())
}

/// Load the PTX module of kernel `kernel`, with an error-log buffer, so that the JIT compiler's
/// message reaches the user.
fn load_ptx(ptx: &str, kernel: &str, arch: u32) -> Result<raw::CUmodule> {
    let image = CString::new(ptx).map_err(|_| Error::PtxLoad {
        kernel: kernel.to_owned(),
        arch,
        code: "invalid PTX".into(),
        log: "the PTX text contains a NUL byte".into(),
    })?;
    let mut log = vec![0u8; 16 * 1024];
    let status = match result::module_load_ptx(&image, &mut log) {
        Ok(module) => return Ok(module),
        Err(status) => status,
    };
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    Err(Error::PtxLoad {
        kernel: kernel.to_owned(),
        arch,
        code: format!("{status:?}"),
        log: String::from_utf8_lossy(&log[..end]).trim().to_owned(),
    })
}
