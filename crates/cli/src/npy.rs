//! Reading and writing NumPy `.npy` arrays for the CLI's file commands: 1-D arrays, and 2-D
//! (row-major) matrices for `rows`.
//!
//! Supported dtypes (little-endian): `<f4` f32, `<f8` f64, `<i4` i32, `<u4` u32, `<i8` i64,
//! `<u8` u64, `<f2` f16, `<u2` u16, `|u1` u8 (bf16 has no NumPy type string). Large files are
//! read with a progress bar (updated every [`CHUNK`] elements).
//!
//! The reader trusts nothing in a file: its header is parsed here (a bounded, non-recursive
//! parser), and the shape's elements (checked products) times the element's size plus the
//! header's length must be the file's length before anything is allocated, so that a truncated
//! file, trailing bytes or a shape no file holds are errors found before any GPU work, and no
//! allocation is larger than the file. Writes go to a temporary file in the target's folder,
//! renamed over the target once complete ([`write()`], [`write_matrix`]; [`crate::output`]).

use indicatif::ProgressBar;
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Elements read between progress-bar updates (16 Mi).
pub const CHUNK: usize = 1 << 24;

/// What can go wrong with a `.npy` file. Each message names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be opened or read (missing, unreadable, changed while read).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS or parser error.
        source: std::io::Error,
    },
    /// The dtype is not one of those supported.
    #[error(
        "{path}: dtype {dtype} is not supported (use f32, f64, i32, u32, i64, u64, f16, u16 or u8, little-endian)"
    )]
    UnsupportedDtype {
        /// The file.
        path: PathBuf,
        /// Its dtype descriptor.
        dtype: String,
    },
    /// The dtype is one the file format takes but the command does not.
    #[error("{path}: {command} does not take {dtype} elements (it takes {supported})")]
    UnsupportedByCommand {
        /// The file.
        path: PathBuf,
        /// The file's element type.
        dtype: &'static str,
        /// The command.
        command: &'static str,
        /// The element types it takes, comma-separated.
        supported: String,
    },
    /// The array does not have the dimensions the command reads.
    #[error("{path}: the array has shape {shape:?}; {expected} arrays are read here")]
    WrongDimensions {
        /// What the command reads: "1-D", "2-D" or "1-D or 2-D".
        expected: &'static str,
        /// The file.
        path: PathBuf,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// Fortran order is not supported.
    #[error("{path}: Fortran-ordered arrays are not supported")]
    FortranOrder {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a `.npy` file, or its header does not parse.
    #[error("{path}: not a valid .npy file: {why}")]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The header's shape and dtype do not account for the file's length: a truncated file,
    /// bytes after the data, or a shape whose data no file holds.
    #[error(
        "{path}: the header's shape {shape:?} of {dtype} elements needs {} of data after its {header_bytes}-byte header, but the file has {file_bytes} bytes ({} after the header): truncated, or not the array its header says",
        needed_bytes(*.data_bytes),
        file_bytes.saturating_sub(*header_bytes)
    )]
    SizeMismatch {
        /// The file.
        path: PathBuf,
        /// The header's shape.
        shape: Vec<u64>,
        /// The element type.
        dtype: &'static str,
        /// The length of the magic string, version and header, bytes.
        header_bytes: u64,
        /// The bytes the shape needs (`None`: more than 2^64).
        data_bytes: Option<u64>,
        /// The file's length, bytes.
        file_bytes: u64,
    },
    /// The file is read as elements of another type (a bug of the caller).
    #[error("{path}: {dtype} elements read as {read_as}")]
    WrongType {
        /// The file.
        path: PathBuf,
        /// The file's element type.
        dtype: &'static str,
        /// The type asked for.
        read_as: &'static str,
    },
    /// A file to write is one the command reads (or another file it writes).
    #[error(
        "{option} {output}: that is {other} (the same file), which the command also uses; write to another file"
    )]
    OutputIsInput {
        /// The option naming the output.
        option: &'static str,
        /// The output.
        output: PathBuf,
        /// The input (or other output) it is.
        other: PathBuf,
    },
}

/// `bytes` bytes, or more than 2^64 for `None` (a shape whose product overflows).
fn needed_bytes(bytes: Option<u64>) -> String {
    match bytes {
        Some(bytes) => format!("{bytes} bytes"),
        None => "more than 2^64 bytes".into(),
    }
}

/// The element types the CLI reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NpyDtype {
    /// `<f4`
    F32,
    /// `<f8`
    F64,
    /// `<i4`
    I32,
    /// `<u4`
    U32,
    /// `<i8`
    I64,
    /// `<u8`
    U64,
    /// `<f2`
    F16,
    /// `|u1` (one byte: no byte order)
    U8,
    /// `<u2`
    U16,
}

impl NpyDtype {
    /// From a NumPy type string such as `<f4` (`|u1` for bytes, which have no byte order).
    /// bf16 has no NumPy type string (ml_dtypes writes it as a 2-byte void), so it is not read.
    pub fn from_descr(descr: &str) -> Option<Self> {
        Some(match descr {
            "<f4" => Self::F32,
            "<f8" => Self::F64,
            "<i4" => Self::I32,
            "<u4" => Self::U32,
            "<i8" => Self::I64,
            "<u8" => Self::U64,
            "<f2" => Self::F16,
            "|u1" => Self::U8,
            "<u2" => Self::U16,
            _ => return None,
        })
    }

    /// The element type's name as the library writes it (`f32`, `u8`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::I64 => "i64",
            Self::U64 => "u64",
            Self::F16 => "f16",
            Self::U8 => "u8",
            Self::U16 => "u16",
        }
    }
}

/// The [`NpyDtype`] of an element type's name (one arm of [`with_npy_type!`](crate::with_npy_type)).
#[doc(hidden)]
#[macro_export]
macro_rules! npy_dtype {
    (f32) => {
        $crate::npy::NpyDtype::F32
    };
    (f64) => {
        $crate::npy::NpyDtype::F64
    };
    (i32) => {
        $crate::npy::NpyDtype::I32
    };
    (u32) => {
        $crate::npy::NpyDtype::U32
    };
    (i64) => {
        $crate::npy::NpyDtype::I64
    };
    (u64) => {
        $crate::npy::NpyDtype::U64
    };
    (f16) => {
        $crate::npy::NpyDtype::F16
    };
    (u8) => {
        $crate::npy::NpyDtype::U8
    };
    (u16) => {
        $crate::npy::NpyDtype::U16
    };
}

/// `$body` with the type named `$t` bound to the Rust type of the file's dtype, for the element
/// types named in the list; a file of another dtype gives
/// `Err(NpyError::UnsupportedByCommand { .. }.into())` naming the list. The one place that maps
/// a file's type to an element type. `$input` is an [`NpyInput`], borrowed for the dtype and
/// path and free to be consumed by `$body`; `$command` names the command in the error.
///
/// ```no_run
/// use gpu_primitives_cli::npy::{self, NpyError};
/// let input = npy::open(std::path::Path::new("data.npy"))?;
/// let len = gpu_primitives_cli::with_npy_type!(input, "sum", [f32, u8], T => {
///     let values: Vec<T> = input.read(&indicatif::ProgressBar::hidden())?;
///     Ok::<usize, NpyError>(values.len())
/// })?;
/// # Ok::<(), NpyError>(())
/// ```
#[macro_export]
macro_rules! with_npy_type {
    ($input:expr, $command:expr, [$($name:ident),+ $(,)?], $t:ident => $body:expr) => {
        match $input.dtype {
            $($crate::npy_dtype!($name) => {
                type $t = gpu_primitives::host_type!($name);
                $body
            })+
            #[allow(unreachable_patterns)]
            other => Err($crate::npy::NpyError::UnsupportedByCommand {
                path: $input.path().to_owned(),
                dtype: other.name(),
                command: $command,
                supported: [$(stringify!($name)),+].join(", "),
            }
            .into()),
        }
    };
}

/// The element types of the library's table ([`gpu_primitives::device::Element`]) that a
/// `.npy` file can hold: the list for [`with_npy_type!`](crate::with_npy_type) in the commands over elements.
#[macro_export]
macro_rules! with_npy_element {
    ($input:expr, $command:expr, $t:ident => $body:expr) => {
        $crate::with_npy_type!($input, $command, [f32, f64, i32, u32, i64, u64, f16], $t => $body)
    };
}

/// An element type that a `.npy` file holds as its little-endian bytes: what
/// [`NpyInput::read`] reads.
pub trait NpyElement: bytemuck::Pod {
    /// The file's dtype for this type.
    const DTYPE: NpyDtype;
}
macro_rules! npy_element {
    ($($t:ty => $dtype:ident),* $(,)?) => {$(
        impl NpyElement for $t {
            const DTYPE: NpyDtype = NpyDtype::$dtype;
        }
    )*};
}
npy_element!(
    f32 => F32, f64 => F64, i32 => I32, u32 => U32, i64 => I64, u64 => U64, half::f16 => F16,
    u8 => U8, u16 => U16,
);

/// An opened `.npy` file, header checked against the file's length, data not yet read.
///
/// Every field comes from a header that [`open`] (or [`from_reader`]) checked: the shape's
/// elements times the dtype's size plus the header's length is the file's length, so that
/// [`read`](Self::read) allocates no more than the file holds.
pub struct NpyInput<R = BufReader<File>> {
    path: PathBuf,
    /// The file, positioned at its data.
    reader: R,
    /// Its element type.
    pub dtype: NpyDtype,
    /// Number of elements.
    pub len: usize,
    /// Its shape (one entry for a 1-D array, rows and columns for a matrix).
    pub shape: Vec<usize>,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> NpyError + '_ {
    move |source| NpyError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Open `path` and check its header: 1-D, C order, a supported dtype, the file's length.
///
/// # Errors
/// [`NpyError`] for a missing file, a bad header, another dtype, more than one dimension, a
/// shape that does not match the file's length.
pub fn open(path: &Path) -> Result<NpyInput, NpyError> {
    open_with(path, Some((&[1], "1-D")))
}

/// Open `path` as a row-major matrix (2-D, C order, a supported dtype): `shape` is
/// `[rows, cols]`.
///
/// # Errors
/// As [`open`], for an array that is not 2-D.
pub fn open_matrix(path: &Path) -> Result<NpyInput, NpyError> {
    open_with(path, Some((&[2], "2-D")))
}

/// Open `path` as a 1-D array or a row-major matrix (`shape` says which).
///
/// # Errors
/// As [`open`], for an array of another number of dimensions.
pub fn open_vector_or_matrix(path: &Path) -> Result<NpyInput, NpyError> {
    open_with(path, Some((&[1, 2], "1-D or 2-D")))
}

/// Open `path`, an array of one of `dimensions` dimensions (the second part names them; `None`:
/// any number).
///
/// # Example
/// ```no_run
/// let input = gpu_primitives_cli::npy::open(std::path::Path::new("data.npy"))?;
/// println!("{:?}, {} elements", input.dtype, input.len);
/// # Ok::<(), gpu_primitives_cli::npy::NpyError>(())
/// ```
fn open_with(path: &Path, dimensions: Option<(&[usize], &'static str)>) -> Result<NpyInput, NpyError> {
    let file = File::open(path).map_err(io_error(path))?;
    let file_len = file.metadata().map_err(io_error(path))?.len();
    let input = from_reader(path, BufReader::new(file), file_len)?;
    if let Some((dimensions, expected)) = dimensions
        && !dimensions.contains(&input.shape.len())
    {
        return Err(NpyError::WrongDimensions {
            expected,
            path: path.to_owned(),
            shape: input.shape.iter().map(|&d| d as u64).collect(),
        });
    }
    Ok(input)
}

/// The most bytes before a header: the magic string, the version and a 4-byte header length.
const PREFIX: usize = 12;

/// Check the `.npy` file of `file_len` bytes that `reader` reads from its start (`path` names
/// it in errors): its magic string, its header, and the header's shape and dtype against
/// `file_len`, before anything is allocated but the header itself (no longer than the file).
/// Any number of dimensions; C order; a supported dtype. The reader is left at the data.
///
/// # Errors
/// [`NpyError::BadHeader`] for a file that is not a `.npy` one (or a header that does not
/// parse, does not end in a newline, or lies about its length), [`NpyError::UnsupportedDtype`],
/// [`NpyError::FortranOrder`], [`NpyError::SizeMismatch`] for a shape whose data is not the
/// rest of the file (truncated, trailing bytes, or a shape no file holds), [`NpyError::Io`].
pub fn from_reader<R: Read>(path: &Path, mut reader: R, file_len: u64) -> Result<NpyInput<R>, NpyError> {
    let bad = |why: String| NpyError::BadHeader {
        path: path.to_owned(),
        why,
    };
    let mut prefix = [0u8; PREFIX];
    let short = file_len.min(PREFIX as u64) as usize;
    reader.read_exact(&mut prefix[..short]).map_err(io_error(path))?;
    if short < 10 || &prefix[..6] != b"\x93NUMPY" {
        return Err(bad(format!(
            "no .npy magic string and version ({file_len} bytes)"
        )));
    }
    let (major, minor) = (prefix[6], prefix[7]);
    let (start, header_len) = match (major, minor) {
        (1, 0) => (10u64, u64::from(u16::from_le_bytes([prefix[8], prefix[9]]))),
        (2 | 3, 0) if short == PREFIX => (
            12,
            u64::from(u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]])),
        ),
        (2 | 3, 0) => return Err(bad(format!("{file_len} bytes: no header length"))),
        _ => {
            return Err(bad(format!(
                "format version {major}.{minor} (1.0, 2.0 and 3.0 are read)"
            )));
        }
    };
    // The header is read only once it is known to be within the file.
    let header_end = start + header_len;
    if header_end > file_len {
        return Err(bad(format!(
            "a header of {header_len} bytes is past the end of the file ({file_len} bytes)"
        )));
    }
    // Bytes of the prefix past a version 1 header's start are the header's first.
    let mut header = Vec::with_capacity(header_len as usize);
    header.extend_from_slice(&prefix[start as usize..short]);
    header.truncate(header_len as usize);
    let rest = header_len as usize - header.len();
    let mut taken = (&mut reader).take(rest as u64);
    taken.read_to_end(&mut header).map_err(io_error(path))?;
    if header.len() != header_len as usize {
        return Err(bad(format!(
            "the header ends early ({} of {header_len} bytes)",
            header.len()
        )));
    }
    // The format ends the header with a newline: a header-length field that is off by a few
    // bytes ends it elsewhere (a padding space, a data byte) and is refused here, even where
    // the data's length would make up for it.
    if header.last() != Some(&b'\n') {
        return Err(bad(format!(
            "the {header_len}-byte header does not end in a newline, as the format requires: its length field is wrong"
        )));
    }
    let fields = parse_header(&header).map_err(bad)?;
    let dtype = match fields.descr {
        Descr::Plain(descr) => NpyDtype::from_descr(descr).ok_or_else(|| descr.to_owned()),
        Descr::Other(raw) => Err(raw.to_owned()),
    }
    .map_err(|dtype| NpyError::UnsupportedDtype {
        path: path.to_owned(),
        dtype,
    })?;
    // The data: the shape's elements (checked products) times the element's size, exactly the
    // rest of the file.
    let data_bytes = fields
        .shape
        .iter()
        .try_fold(dtype.size() as u64, |bytes, &d| bytes.checked_mul(d));
    if data_bytes != Some(file_len - header_end) {
        return Err(NpyError::SizeMismatch {
            path: path.to_owned(),
            shape: fields.shape,
            dtype: dtype.name(),
            header_bytes: header_end,
            data_bytes,
            file_bytes: file_len,
        });
    }
    if fields.fortran_order {
        return Err(NpyError::FortranOrder {
            path: path.to_owned(),
        });
    }
    // Within the file's length (checked above); past usize only on a 32-bit machine.
    let elements = data_bytes.unwrap_or(0) / dtype.size() as u64;
    let past_memory = || bad(format!("shape {:?} is past this machine's memory", fields.shape));
    let shape = fields
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| past_memory())?;
    Ok(NpyInput {
        path: path.to_owned(),
        reader,
        dtype,
        len: usize::try_from(elements).map_err(|_| past_memory())?,
        shape,
    })
}

impl NpyDtype {
    /// The size of one element, bytes.
    pub fn size(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::F16 | Self::U16 => 2,
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F64 | Self::I64 | Self::U64 => 8,
        }
    }
}

/// A header's dtype: a type string, or something else (a structured dtype's list), as written.
enum Descr<'a> {
    Plain(&'a str),
    Other(&'a str),
}

/// The three entries of a header's dictionary.
struct HeaderFields<'a> {
    descr: Descr<'a>,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// A value of the header's dictionary.
enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    Tuple(Vec<u64>),
    Other(&'a str),
}

/// A parser of the Python literal a `.npy` header holds: `{'descr': '<f4', 'fortran_order':
/// False, 'shape': (3, 4), }` and trailing spaces; no recursion (nested brackets in a structured
/// dtype are skipped by counting).
struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        self.at += found as usize;
        found
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "expected {:?} at byte {} of the header",
                c as char, self.at
            ))
        }
    }

    fn string(&mut self) -> Result<&'a str, String> {
        let quote = self.peek().filter(|q| matches!(q, b'\'' | b'"'));
        let Some(quote) = quote else {
            return Err(format!("expected a string at byte {} of the header", self.at));
        };
        let start = self.at + 1;
        let len = self.text.as_bytes()[start..]
            .iter()
            .position(|&c| c == quote || c == b'\\')
            .filter(|&len| self.text.as_bytes()[start + len] == quote)
            .ok_or_else(|| format!("a string from byte {} of the header does not end", self.at))?;
        self.at = start + len + 1;
        Ok(&self.text[start..start + len])
    }

    fn word(&mut self, word: &str) -> bool {
        let found = self.text[self.at..].starts_with(word);
        if found {
            self.at += word.len();
        }
        found
    }

    /// The dimensions of a shape, `(a, b, ...)`, each at most 2^63 - 1 (NumPy's limit).
    fn tuple(&mut self) -> Result<Vec<u64>, String> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            self.space();
            if self.eat(b')') {
                return Ok(dims);
            }
            let start = self.at;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
            let digits = &self.text[start..self.at];
            let dim = digits
                .parse::<u64>()
                .ok()
                .filter(|&d| d <= i64::MAX as u64)
                .ok_or_else(|| {
                    if digits.is_empty() {
                        format!("expected a dimension at byte {start} of the header")
                    } else {
                        format!("dimension {digits} is past 2^63 - 1")
                    }
                })?;
            dims.push(dim);
            self.space();
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }

    /// A bracketed value skipped whole (its brackets counted, its strings passed over).
    fn skip_nested(&mut self) -> Result<&'a str, String> {
        let start = self.at;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'\'' | b'"' => {
                    self.string()?;
                    continue;
                }
                b'[' | b'(' | b'{' => depth += 1,
                b']' | b')' | b'}' => depth -= 1,
                _ => {}
            }
            self.at += 1;
            if depth == 0 {
                return Ok(&self.text[start..self.at]);
            }
        }
        Err(format!("brackets from byte {start} of the header do not close"))
    }

    fn value(&mut self, key: &str) -> Result<Value<'a>, String> {
        match self.peek() {
            Some(b'\'' | b'"') => self.string().map(Value::Str),
            Some(b'(') if key == "shape" => self.tuple().map(Value::Tuple),
            Some(b'[' | b'(' | b'{') => self.skip_nested().map(Value::Other),
            _ if self.word("True") => Ok(Value::Bool(true)),
            _ if self.word("False") => Ok(Value::Bool(false)),
            _ => Err(format!(
                "{key:?}: unexpected value at byte {} of the header",
                self.at
            )),
        }
    }
}

/// The header's dictionary: exactly `descr`, `fortran_order` and `shape`.
fn parse_header(header: &[u8]) -> Result<HeaderFields<'_>, String> {
    let text = std::str::from_utf8(header).map_err(|_| "the header is not text".to_owned())?;
    let mut p = Parser { text, at: 0 };
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    p.space();
    p.expect(b'{')?;
    loop {
        p.space();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.space();
        p.expect(b':')?;
        p.space();
        let value = p.value(key)?;
        let duplicate = match (key, value) {
            ("descr", Value::Str(s)) => descr.replace(Descr::Plain(s)).is_some(),
            ("descr", Value::Other(s)) => descr.replace(Descr::Other(s)).is_some(),
            ("fortran_order", Value::Bool(b)) => fortran_order.replace(b).is_some(),
            ("shape", Value::Tuple(dims)) => shape.replace(dims).is_some(),
            ("descr" | "fortran_order" | "shape", _) => return Err(format!("{key:?} has the wrong type")),
            _ => return Err(format!("unknown key {key:?}")),
        };
        if duplicate {
            return Err(format!("{key:?} is given twice"));
        }
        p.space();
        if !p.eat(b',') {
            p.space();
            p.expect(b'}')?;
            break;
        }
    }
    p.space();
    if p.at != text.len() {
        return Err(format!("bytes after the dictionary, from byte {}", p.at));
    }
    match (descr, fortran_order, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(HeaderFields {
            descr,
            fortran_order,
            shape,
        }),
        _ => Err("the header lacks one of 'descr', 'fortran_order' and 'shape'".into()),
    }
}

impl<R: Read> NpyInput<R> {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read every element, advancing `progress`. The one allocation is `len` elements, which
    /// the header's check bounds by the file's length; data past them is an error.
    ///
    /// # Errors
    /// [`NpyError::Io`] for a file that is unreadable, or shorter or longer than when it was
    /// opened; [`NpyError::WrongType`] for a dtype that is not `T`'s.
    pub fn read<T: NpyElement>(mut self, progress: &ProgressBar) -> Result<Vec<T>, NpyError> {
        let path = self.path;
        if T::DTYPE != self.dtype {
            return Err(NpyError::WrongType {
                path,
                dtype: self.dtype.name(),
                read_as: T::DTYPE.name(),
            });
        }
        let mut host = vec![<T as bytemuck::Zeroable>::zeroed(); self.len];
        progress.set_length(self.len as u64);
        let mut done = 0;
        for chunk in host.chunks_mut(CHUNK) {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(chunk);
            self.reader.read_exact(bytes).map_err(io_error(&path))?;
            if cfg!(target_endian = "big") {
                bytes
                    .chunks_mut(size_of::<T>())
                    .for_each(|element| element.reverse());
            }
            done += chunk.len();
            progress.set_position(done as u64);
        }
        progress.finish_and_clear();
        let mut more = [0u8; 1];
        if self.reader.read(&mut more).map_err(io_error(&path))? != 0 {
            return Err(NpyError::Io {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the file grew after it was opened",
                ),
            });
        }
        Ok(host)
    }
}

/// Whether `a` and `b` are the same file: the same device and inode (a hard link included)
/// where both exist, else the same path once symbolic links and `..` are resolved (for a path
/// that does not exist yet, its folder's).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (a.dev(), a.ino()) == (b.dev(), b.ino());
        }
    }
    resolved(a) == resolved(b)
}

/// `path` with its symbolic links and `..` resolved, or its folder's where it does not exist,
/// or as it is.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match (std::fs::canonicalize(folder), path.file_name()) {
            (Ok(folder), Some(name)) => folder.join(name),
            _ => path.to_owned(),
        }
    })
}

/// The file a command writes beside its `--output path`: `path` with `.<part>.npy` in place of
/// its `.npy` suffix, or appended when it has none.
///
/// ```
/// use gpu_primitives_cli::npy::beside;
/// use std::path::Path;
/// assert_eq!(beside(Path::new("dir/out.npy"), "lengths"), Path::new("dir/out.lengths.npy"));
/// assert_eq!(beside(Path::new("out"), "values"), Path::new("out.values.npy"));
/// ```
pub fn beside(path: &Path, part: &str) -> PathBuf {
    if path.extension().is_some_and(|e| e == "npy") {
        path.with_extension(format!("{part}.npy"))
    } else {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{part}.npy"));
        PathBuf::from(name)
    }
}

/// Check, before anything runs, that the files a command writes (`outputs`, the option
/// naming each) are neither one of the files it reads (`inputs`) nor one another, and that
/// their folders exist.
///
/// # Errors
/// [`NpyError::OutputIsInput`], [`NpyError::Io`] for a missing folder.
pub fn check_outputs(outputs: &[(&'static str, &Path)], inputs: &[&Path]) -> Result<(), NpyError> {
    for (i, &(option, output)) in outputs.iter().enumerate() {
        let others = outputs[..i].iter().map(|&(_, p)| p);
        if let Some(input) = inputs
            .iter()
            .copied()
            .chain(others)
            .find(|p| same_file(output, p))
        {
            return Err(NpyError::OutputIsInput {
                option,
                output: output.to_owned(),
                other: input.to_owned(),
            });
        }
        let folder = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !folder.is_dir() {
            return Err(NpyError::Io {
                path: output.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{option}: the folder {} does not exist", folder.display()),
                ),
            });
        }
    }
    Ok(())
}

/// An element type as a `.npy` file stores it: itself, or for bf16 (which NumPy lacks) its
/// bits as `u16` (`--bf16-bits`). The commands read files through [`from_stored`] and write
/// them through [`to_stored`].
///
/// [`from_stored`]: Self::from_stored
/// [`to_stored`]: Self::to_stored
pub trait NpyStored: bytemuck::Pod {
    /// The `.npy` element that holds one value.
    type Stored: NpyElement + npyz::Serialize + npyz::AutoSerialize;
    /// Values read from a file.
    fn from_stored(values: Vec<Self::Stored>) -> Vec<Self> {
        bytemuck::cast_vec(values)
    }
    /// Values as a file stores them.
    fn to_stored(values: &[Self]) -> &[Self::Stored] {
        bytemuck::cast_slice(values)
    }
}
macro_rules! npy_stored {
    ($($t:ty => $stored:ty),* $(,)?) => {$(
        impl NpyStored for $t {
            type Stored = $stored;
        }
    )*};
}
npy_stored!(
    f32 => f32, f64 => f64, i32 => i32, u32 => u32, i64 => i64, u64 => u64, u8 => u8, u16 => u16,
    half::f16 => half::f16, half::bf16 => u16,
);

/// Write a `.npy` file of `shape` holding `values` (C order) to `path`, atomically
/// ([`crate::output::replace_atomically`]): a failure leaves `path` as it was.
fn write_nd<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    path: &Path,
    shape: &[u64],
    values: &[T],
) -> Result<(), NpyError> {
    let written = crate::output::replace_atomically(path, |temporary| {
        use npyz::WriterBuilder;
        let file = File::options().write(true).truncate(true).open(temporary)?;
        let mut out = std::io::BufWriter::new(&file);
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .writer(&mut out)
            .begin_nd()?;
        writer.extend(values.iter().copied())?;
        writer.finish()?;
        out.flush()
    });
    written.map_err(io_error(path))
}

/// Write `values` as a 1-D `.npy` file, atomically (`path` is replaced only once the file is
/// complete).
///
/// # Errors
/// [`NpyError::Io`].
pub fn write<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    path: &Path,
    values: &[T],
) -> Result<(), NpyError> {
    write_nd(path, &[values.len() as u64], values)
}

/// Write `values` as a row-major `rows x cols` `.npy` matrix, atomically (as [`write()`]).
///
/// # Errors
/// [`NpyError::Io`].
pub fn write_matrix<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    path: &Path,
    rows: usize,
    cols: usize,
    values: &[T],
) -> Result<(), NpyError> {
    write_nd(path, &[rows as u64, cols as u64], values)
}
