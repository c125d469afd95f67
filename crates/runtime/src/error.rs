//! The one error type of the host runtime.

use crate::sys;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong on the host side of a GPU call. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA device, or no driver.
    #[error("no CUDA device found ({0}): a machine with an NVIDIA GPU and its driver is needed")]
    NoDevice(String),
    /// The requested ordinal is past the device count.
    #[error("CUDA device {ordinal} requested, but only {count} present")]
    NoSuchDevice {
        /// The requested ordinal.
        ordinal: u32,
        /// Devices present.
        count: u32,
    },
    /// The driver cannot load PTX of the ISA version this build produced.
    #[error(
        "the CUDA driver is too old: it supports CUDA {found}, the PTX (ISA {ptx_isa}) needs CUDA {required} or newer; update the NVIDIA driver"
    )]
    DriverTooOld {
        /// Driver's CUDA version, as "major.minor".
        found: String,
        /// Needed CUDA version, as "major.minor".
        required: String,
        /// The PTX ISA version of the module.
        ptx_isa: String,
    },
    /// The GPU is older than every PTX variant of a module.
    #[error(
        "the GPU ({name}, sm_{device_arch}) is older than the oldest PTX built (sm_{oldest_arch}); rebuild with nvptx-builder's .arch({device_arch})"
    )]
    GpuTooOld {
        /// Device name.
        name: String,
        /// Device compute capability x 10.
        device_arch: u32,
        /// Oldest variant.
        oldest_arch: u32,
    },
    /// A module was given no PTX at all.
    #[error("no PTX variant was given for module `{0}`")]
    NoPtx(String),
    /// The driver refused a kernel's PTX (each kernel is compiled alone, on first use); `log` is
    /// the JIT compiler's error log.
    #[error("compiling kernel `{kernel}` of the sm_{arch} PTX failed ({code}): {log}")]
    PtxLoad {
        /// The kernel.
        kernel: String,
        /// Variant that was loaded.
        arch: u32,
        /// The driver's error.
        code: String,
        /// The JIT error log (may be empty).
        log: String,
    },
    /// A family of compressed kernels ([`PackedFamily`](crate::packed::PackedFamily)) could not
    /// be decompressed: the library's files are damaged.
    #[error(
        "the compressed kernels of family `{family}` cannot be read ({reason}): the files they were built into are damaged; rebuild or reinstall the crate"
    )]
    BadFrame {
        /// The family.
        family: String,
        /// What the decoder found.
        reason: String,
    },
    /// A kernel named by the host is in none of the loaded modules.
    #[error("kernel `{0}` is not in the loaded PTX modules")]
    MissingKernel(String),
    /// A kernel's parameters in the PTX differ in number or size from what the host passes:
    /// host and kernels were built from different definitions, or a launch names the wrong
    /// arguments.
    #[error(
        "kernel `{kernel}` takes parameters of {ptx_bytes} bytes in the PTX, the host passes {host_bytes}: rebuild the PTX from the same sources, or fix the launch"
    )]
    ParamMismatch {
        /// The kernel.
        kernel: String,
        /// The sizes of its PTX entry's parameters, in bytes, as `[a, b, ...]`.
        ptx_bytes: String,
        /// The sizes the host passes (its parameter struct, or each argument), as `[a, b, ...]`.
        host_bytes: String,
    },
    /// The device's warp size differs from the kernels' compile-time `WARP_SIZE`.
    #[error("the device reports a warp size of {found}, the kernels were built for {expected}")]
    WarpSize {
        /// The kernels' constant.
        expected: u32,
        /// The device's value.
        found: u32,
    },
    /// Two inputs that must have equal lengths do not, or an output is too short.
    #[error("length mismatch: {what}: expected {expected} elements, got {found}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// Expected length, in elements.
        expected: usize,
        /// Given length, in elements.
        found: usize,
    },
    /// An input that must not be empty is.
    #[error("{0}: empty input")]
    EmptyInput(&'static str),
    /// An argument no call can take (a NaN `eps`, a size past the address space, ...); the
    /// message names it and the valid range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A stream, buffer, kernel or workspace of one context used with another's (another
    /// device's `Gpu`); nothing was queued.
    #[error("wrong context: {0}: use handles made from the same Gpu")]
    WrongContext(&'static str),
    /// A bit range of a key that is reversed or past the key's width (a sort's or a top-k's
    /// `SortOptions::bits`); nothing was queued.
    #[error("{what}: bit range {begin}..{end} is not within the {bits} bits of {key}")]
    InvalidBitRange {
        /// Which call.
        what: &'static str,
        /// The key type's name ("u32", "f16", ...).
        key: &'static str,
        /// First bit of the range.
        begin: u32,
        /// One past its last bit.
        end: u32,
        /// The key's width in bits.
        bits: u32,
    },
    /// More keys (or one segment longer) than one call takes; nothing was queued.
    #[error("{what}: {keys} keys, past the most one call takes ({max})")]
    TooManyKeys {
        /// Which call, and which part of its input ("a segment").
        what: &'static str,
        /// The keys given.
        keys: usize,
        /// The most it takes.
        max: usize,
    },
    /// An input that is not a whole number of rows of the length given (or rows of no element
    /// for a non-empty input); nothing was queued.
    #[error("{what}: {len} elements are not a whole number of rows of {row_len}")]
    NotWholeRows {
        /// Which call.
        what: &'static str,
        /// The input's length, in elements.
        len: usize,
        /// The row length given.
        row_len: usize,
    },
    /// A top-k's `k` past the keys it chooses from (a row's, or the input's); nothing was queued.
    #[error("{what}: k = {k} is past the {most} keys it chooses from")]
    KPastInput {
        /// Which call.
        what: &'static str,
        /// The `k` given.
        k: usize,
        /// The keys it chooses from.
        most: usize,
    },
    /// CSR segment offsets that break a rule (one non-decreasing offset after another, the last
    /// within the input); nothing was queued.
    #[error("{what}: offsets[{at}] = {offset} {rule}")]
    InvalidOffsets {
        /// Which call ("segment offsets" where they are checked on their own).
        what: &'static str,
        /// The index of the first offset that breaks the rule.
        at: usize,
        /// Its value.
        offset: u64,
        /// The rule it breaks.
        rule: OffsetRule,
    },
    /// A launch shape or argument the kernel cannot take.
    #[error("invalid launch: {0}")]
    InvalidLaunch(String),
    /// Allocation failed: the device has too little free memory.
    #[error("out of device memory allocating {bytes} bytes ({free} bytes free of {total})")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: usize,
        /// Free device memory at the time, bytes.
        free: usize,
        /// Total device memory, bytes.
        total: usize,
    },
    /// A CUDA driver call failed, with what was being done.
    #[error("CUDA error while {context}: {name} ({code})")]
    Driver {
        /// What the call was doing.
        context: &'static str,
        /// The driver's status code (`CUresult`).
        code: u32,
        /// Its name, as `cuGetErrorName` gives it (`CUDA_ERROR_ILLEGAL_ADDRESS`).
        name: String,
    },
}

/// A driver status as a [`Result`]: [`Error::Driver`] with `context` unless it is success.
pub(crate) fn check(status: sys::CUresult, context: &'static str) -> Result<()> {
    if status == sys::cudaError_enum::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: a valid out-pointer; the driver gives a static string or an error.
    let named = unsafe { sys::cuGetErrorName(status, &mut name) };
    let name = if named == sys::cudaError_enum::CUDA_SUCCESS && !name.is_null() {
        // SAFETY: a NUL-terminated static string from the driver.
        unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    } else {
        format!("{status:?}")
    };
    Err(Error::Driver {
        context,
        code: status as u32,
        name,
    })
}

/// `CUDA_ERROR_OUT_OF_MEMORY` from an allocation of `bytes` as [`Error::OutOfMemory`] (with the
/// device's free memory); any other error as it is.
pub(crate) fn out_of_memory(error: Error, bytes: usize) -> Error {
    match error {
        Error::Driver { code, .. } if code == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY as u32 => {
            let (mut free, mut total) = (0usize, 0usize);
            // SAFETY: valid out-pointers; the context is current.
            unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
            Error::OutOfMemory { bytes, free, total }
        }
        other => other,
    }
}

/// The rule an offset of [`Error::InvalidOffsets`] breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OffsetRule {
    /// It is below the offset before it.
    #[error("is below the offset before it ({before}): offsets must not decrease")]
    Decreasing {
        /// The offset before it.
        before: u64,
    },
    /// It is past the end of the input (the last offset, one past the last segment's last item).
    #[error("is past the input's {items} items")]
    PastInput {
        /// The input's length, in items.
        items: usize,
    },
}
