//! Reading and writing NumPy `.npy` arrays for the CLI's file commands: 1-D arrays, and 2-D
//! (row-major) matrices for `rows`.
//!
//! Supported dtypes (little-endian): `<f4` f32, `<f8` f64, `<i4` i32, `<u4` u32, `<i8` i64,
//! `<u8` u64, `<f2` f16, `<u2` u16, `|u1` u8 (bf16 has no NumPy type string). Large files are read with a progress bar (updated every [`CHUNK`]
//! elements); a truncated file is an error, found before any GPU work.

use indicatif::ProgressBar;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Elements read between progress-bar updates (16 Mi).
pub const CHUNK: usize = 1 << 24;

/// What can go wrong with a `.npy` file. Each message names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be opened or read (missing, unreadable, truncated).
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

/// An opened `.npy` file, header checked, data not yet read.
pub struct NpyInput {
    path: PathBuf,
    file: npyz::NpyFile<BufReader<File>>,
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

/// Open `path` and check its header: 1-D, C order, a supported dtype.
///
/// # Errors
/// [`NpyError`] for a missing file, a bad header, another dtype, more than one dimension.
pub fn open(path: &Path) -> Result<NpyInput, NpyError> {
    open_with(path, &[1], "1-D")
}

/// Open `path` as a row-major matrix (2-D, C order, a supported dtype): `shape` is
/// `[rows, cols]`.
///
/// # Errors
/// As [`open`], for an array that is not 2-D.
pub fn open_matrix(path: &Path) -> Result<NpyInput, NpyError> {
    open_with(path, &[2], "2-D")
}

/// Open `path` as a 1-D array or a row-major matrix (`shape` says which).
///
/// # Errors
/// As [`open`], for an array of another number of dimensions.
pub fn open_vector_or_matrix(path: &Path) -> Result<NpyInput, NpyError> {
    open_with(path, &[1, 2], "1-D or 2-D")
}

/// Open `path`, an array of one of `dimensions` dimensions (`expected` names them).
///
/// # Example
/// ```no_run
/// let input = gpu_primitives_cli::npy::open(std::path::Path::new("data.npy"))?;
/// println!("{:?}, {} elements", input.dtype, input.len);
/// # Ok::<(), gpu_primitives_cli::npy::NpyError>(())
/// ```
fn open_with(path: &Path, dimensions: &[usize], expected: &'static str) -> Result<NpyInput, NpyError> {
    let reader = BufReader::new(File::open(path).map_err(io_error(path))?);
    let file = npyz::NpyFile::new(reader).map_err(io_error(path))?;
    let shape = file.shape().to_vec();
    if !dimensions.contains(&shape.len()) {
        return Err(NpyError::WrongDimensions {
            expected,
            path: path.to_owned(),
            shape,
        });
    }
    if file.order() == npyz::Order::Fortran {
        return Err(NpyError::FortranOrder {
            path: path.to_owned(),
        });
    }
    let descr = match file.dtype() {
        npyz::DType::Plain(ty) => ty.to_string(),
        other => other.descr(),
    };
    let dtype = NpyDtype::from_descr(&descr).ok_or_else(|| NpyError::UnsupportedDtype {
        path: path.to_owned(),
        dtype: descr.clone(),
    })?;
    Ok(NpyInput {
        path: path.to_owned(),
        len: shape.iter().product::<u64>() as usize,
        shape: shape.iter().map(|&d| d as usize).collect(),
        file,
        dtype,
    })
}

impl NpyInput {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read every element, advancing `progress`; a truncated file is an error.
    ///
    /// # Errors
    /// [`NpyError::Io`] for a truncated or unreadable file, or a dtype that is not `T`'s.
    pub fn read<T: npyz::Deserialize>(self, progress: &ProgressBar) -> Result<Vec<T>, NpyError> {
        let path = self.path;
        let invalid = |e: &dyn std::fmt::Display| NpyError::Io {
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        };
        let reader = self.file.data::<T>().map_err(|e| invalid(&e))?;
        let mut host = Vec::with_capacity(self.len);
        progress.set_length(self.len as u64);
        for value in reader {
            host.push(value.map_err(|e| NpyError::Io {
                path: path.clone(),
                source: e,
            })?);
            if host.len() % CHUNK == 0 {
                progress.set_position(host.len() as u64);
            }
        }
        progress.finish_and_clear();
        if host.len() != self.len {
            return Err(invalid(&format!(
                "truncated: {} of {} elements present",
                host.len(),
                self.len
            )));
        }
        Ok(host)
    }
}

/// An element type as a `.npy` file stores it: itself, or for bf16 (which NumPy lacks) its
/// bits as `u16` (`--bf16-bits`). The commands read files through [`from_stored`] and write
/// them through [`to_stored`].
///
/// [`from_stored`]: Self::from_stored
/// [`to_stored`]: Self::to_stored
pub trait NpyStored: bytemuck::Pod {
    /// The `.npy` element that holds one value.
    type Stored: npyz::Deserialize + npyz::Serialize + npyz::AutoSerialize + bytemuck::Pod;
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

/// Write `values` as a 1-D `.npy` file.
///
/// # Errors
/// [`NpyError::Io`].
pub fn write<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    path: &Path,
    values: &[T],
) -> Result<(), NpyError> {
    npyz::to_file_1d(path, values.iter().copied()).map_err(io_error(path))
}

/// Write `values` as a row-major `rows x cols` `.npy` matrix.
///
/// # Errors
/// [`NpyError::Io`].
pub fn write_matrix<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    path: &Path,
    rows: usize,
    cols: usize,
    values: &[T],
) -> Result<(), NpyError> {
    let file = std::io::BufWriter::new(File::create(path).map_err(io_error(path))?);
    use npyz::WriterBuilder;
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[rows as u64, cols as u64])
        .writer(file)
        .begin_nd()
        .map_err(io_error(path))?;
    writer.extend(values.iter().copied()).map_err(io_error(path))?;
    writer.finish().map_err(io_error(path))
}
