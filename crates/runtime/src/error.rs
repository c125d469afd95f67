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
    /// An input of more tiles (one block each) than a grid holds ([`LaunchConfig::MAX_GRID`]
    /// blocks); nothing was queued.
    ///
    /// [`LaunchConfig::MAX_GRID`]: crate::LaunchConfig::MAX_GRID
    #[error("{what}: {items} elements need {tiles} tiles, past the grid limit ({max_tiles})")]
    PastGridLimit {
        /// Which call.
        what: &'static str,
        /// The input's length, in elements.
        items: usize,
        /// The tiles it needs.
        tiles: usize,
        /// The most tiles (blocks) a grid holds.
        max_tiles: usize,
    },
    /// A count past the most one call takes: the elements of a row, the segments of an input,
    /// a histogram's levels or bins, the rows a mean counts; nothing was queued.
    #[error("{what}: {count} {unit}, past the most it takes ({max})")]
    PastLimit {
        /// Which call.
        what: &'static str,
        /// The count given, in `unit`s.
        count: usize,
        /// What is counted ("elements a row", "segments", ...), and why the limit where it is
        /// not the call's own.
        unit: &'static str,
        /// The most it takes, in `unit`s.
        max: usize,
    },
    /// A number argument outside its valid range (a norm's `eps` NaN, infinite or negative, a
    /// label smoothing outside `[0, 1]`); nothing was queued.
    #[error("{what}: {argument} {value} is not {valid}")]
    ScalarOutOfRange {
        /// Which call.
        what: &'static str,
        /// Which argument ("eps", "label smoothing").
        argument: &'static str,
        /// The value given.
        value: f32,
        /// The valid range, in words ("a finite number >= 0").
        valid: &'static str,
    },
    /// A size or stride that must be at least 1 is 0; nothing was queued.
    #[error("{what}: {argument} is 0; it must be at least 1")]
    ZeroArgument {
        /// Which call.
        what: &'static str,
        /// Which argument, with its unit ("stride (elements)").
        argument: &'static str,
    },
    /// An output that shares bytes with an input of the same call; nothing was queued.
    #[error("{what}: {output} overlaps an input")]
    OutputOverlapsInput {
        /// Which call (kernel).
        what: &'static str,
        /// Which output ("the output", "rows: dweight").
        output: &'static str,
    },
    /// An argument (or a combination of arguments) the call does not take: a bias for RMSNorm,
    /// a bit range for a top-k; nothing was queued.
    #[error("{what} takes no {argument}")]
    UnsupportedArgument {
        /// Which call (kernel, or command-line option).
        what: &'static str,
        /// The argument it does not take, and why.
        argument: &'static str,
    },
    /// A buffer whose bytes pass the end of the 64-bit address space (its length times its
    /// element size past `usize`, or its start plus its bytes past `u64`); nothing was queued.
    #[error(
        "{what}: {buffer} of {items} elements of {item_bytes} bytes from {start:#x} passes the end of the address space"
    )]
    PastAddressSpace {
        /// Which call.
        what: &'static str,
        /// Which buffer ("a view", "scratch").
        buffer: &'static str,
        /// Its length, in elements.
        items: usize,
        /// The bytes of one element.
        item_bytes: usize,
        /// Its device address (0 for a buffer not yet allocated).
        start: u64,
    },
    /// Indices numbered from `first_index` that pass `u64::MAX` before the last key (a
    /// top-k's); nothing was queued.
    #[error("{what}: indices from {first_index} for {keys} keys pass u64::MAX")]
    IndicesPastU64 {
        /// Which call.
        what: &'static str,
        /// The first key's index.
        first_index: u64,
        /// The keys numbered.
        keys: usize,
    },
    /// Histogram bins (even bins' count and bounds, or a range's levels) that break a rule;
    /// nothing was queued.
    #[error("{what}: {rule}")]
    InvalidBins {
        /// Which call ("histogram_even", "histogram_range").
        what: &'static str,
        /// The rule they break.
        rule: BinRule,
    },
    /// A launch the library planned that the kernels cannot take, or a kernel's result the
    /// host cannot go on from: a defect of the library (or a launch shape given to the
    /// runtime's [`LaunchConfig`](crate::LaunchConfig) past the hardware's limits), not of a
    /// call's arguments.
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

/// A histogram level as the call was given it, in its level type (`i64` for integer samples,
/// `f32` for `f32`, `f16` and `bf16` samples, `f64` for `f64`), for [`BinRule`]'s messages.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum LevelValue {
    /// A level of integer samples.
    I64(i64),
    /// A level of `f32`, `f16` or `bf16` samples.
    F32(f32),
    /// A level of `f64` samples.
    F64(f64),
}

impl std::fmt::Display for LevelValue {
    /// As the level type's `Debug` (`1.0`, `NaN`, `-3`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LevelValue::I64(v) => write!(f, "{v:?}"),
            LevelValue::F32(v) => write!(f, "{v:?}"),
            LevelValue::F64(v) => write!(f, "{v:?}"),
        }
    }
}

/// The rule the bins of [`Error::InvalidBins`] break.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BinRule {
    /// Even bins: their count is 0.
    #[error("no bins")]
    NoBins,
    /// Even bins: a bound is NaN or infinite, or `lower >= upper`.
    #[error("levels [{lower}, {upper}) are not finite and increasing")]
    NotIncreasing {
        /// The lower bound.
        lower: LevelValue,
        /// The upper bound.
        upper: LevelValue,
    },
    /// Even bins: `upper - lower` overflows the level type.
    #[error("the width of [{lower}, {upper}) overflows")]
    WidthOverflows {
        /// The lower bound.
        lower: LevelValue,
        /// The upper bound.
        upper: LevelValue,
    },
    /// Even bins: `bins / (upper - lower)`, what the kernel multiplies by, is not finite in the
    /// level type: the range is too narrow for the bins.
    #[error(
        "the bin scale {bins} / ({upper} - {lower}) = {scale} is not finite: the range is too narrow for {bins} bins"
    )]
    ScaleNotFinite {
        /// The bins.
        bins: u32,
        /// The lower bound.
        lower: LevelValue,
        /// The upper bound.
        upper: LevelValue,
        /// The scale as computed, widened to f64.
        scale: f64,
    },
    /// Even bins of integer samples: a bound outside the sample type's domain (`[T::MIN,
    /// T::MAX + 1]`).
    #[error("levels [{lower}, {upper}) outside the {sample} domain [{min}, {max}]")]
    OutsideDomain {
        /// The lower bound.
        lower: LevelValue,
        /// The upper bound.
        upper: LevelValue,
        /// The sample type's name ("u8", ...).
        sample: &'static str,
        /// The lowest level it takes.
        min: LevelValue,
        /// The highest level it takes (one past its largest value).
        max: LevelValue,
    },
    /// Range bins: fewer than two levels (`bins + 1` levels make `bins` bins).
    #[error("{levels} levels make no bin (bins + 1 levels are needed)")]
    TooFewLevels {
        /// The levels given.
        levels: usize,
    },
    /// Range bins: a level is NaN or infinite.
    #[error("level {at} ({level}) is not finite")]
    LevelNotFinite {
        /// Its index among the levels.
        at: usize,
        /// Its value.
        level: LevelValue,
    },
    /// Range bins: a level below the one before it.
    #[error("levels not sorted: level {at} ({level}) is below level {} ({before})", .at - 1)]
    Decreasing {
        /// Its index among the levels (at least 1).
        at: usize,
        /// Its value.
        level: LevelValue,
        /// The level before it.
        before: LevelValue,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The argument variants' messages keep what the strings they replaced said: the call, the
    /// numbers, the rule.
    #[test]
    fn argument_errors_name_the_call_and_the_numbers() {
        let cases: [(Error, &str); 9] = [
            (
                Error::PastGridLimit {
                    what: "scan",
                    items: 10,
                    tiles: 5,
                    max_tiles: 4,
                },
                "scan: 10 elements need 5 tiles, past the grid limit (4)",
            ),
            (
                Error::PastLimit {
                    what: "softmax",
                    count: 1 << 31,
                    unit: "elements a row",
                    max: (1 << 31) - 1,
                },
                "softmax: 2147483648 elements a row, past the most it takes (2147483647)",
            ),
            (
                Error::ScalarOutOfRange {
                    what: "layer_norm",
                    argument: "eps",
                    value: f32::NAN,
                    valid: "a finite number >= 0",
                },
                "layer_norm: eps NaN is not a finite number >= 0",
            ),
            (
                Error::ZeroArgument {
                    what: "copy_strided",
                    argument: "stride (elements)",
                },
                "copy_strided: stride (elements) is 0; it must be at least 1",
            ),
            (
                Error::OutputOverlapsInput {
                    what: "softmax",
                    output: "the output",
                },
                "softmax: the output overlaps an input",
            ),
            (
                Error::UnsupportedArgument {
                    what: "rms_norm",
                    argument: "bias (RMSNorm has none)",
                },
                "rms_norm takes no bias (RMSNorm has none)",
            ),
            (
                Error::PastAddressSpace {
                    what: "softmax",
                    buffer: "a view",
                    items: 4,
                    item_bytes: 4,
                    start: 0xfff0,
                },
                "softmax: a view of 4 elements of 4 bytes from 0xfff0 passes the end of the address space",
            ),
            (
                Error::IndicesPastU64 {
                    what: "top_k_of_all",
                    first_index: u64::MAX,
                    keys: 2,
                },
                "top_k_of_all: indices from 18446744073709551615 for 2 keys pass u64::MAX",
            ),
            (
                Error::InvalidBins {
                    what: "histogram_range",
                    rule: BinRule::LevelNotFinite {
                        at: 1,
                        level: LevelValue::F64(f64::INFINITY),
                    },
                },
                "histogram_range: level 1 (inf) is not finite",
            ),
        ];
        for (error, message) in cases {
            assert_eq!(error.to_string(), message);
        }
        let rule = BinRule::NotIncreasing {
            lower: LevelValue::I64(-3),
            upper: LevelValue::F32(1.0),
        };
        assert_eq!(rule.to_string(), "levels [-3, 1.0) are not finite and increasing");
    }
}
