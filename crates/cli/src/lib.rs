//! The `gpu-primitives` command's parts: the benchmark ([`mod@bench`], its [`bench::rows`] for
//! the row operations and [`bench::sort`] for the sorts), the `.npy` file commands ([`npy`],
//! [`cli_ops`] for reduce and scan, [`compact_ops`] for select and unique, [`histogram_ops`] for
//! histogram, [`run_ops`] for rle, [`rows_ops`] for rows, [`sort_ops`] for sort) and the
//! benchmark plot ([`plot`]), the multi-GPU benchmark ([`dist_bench`]). The command itself is
//! `main.rs`.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod bench;
pub mod by_key_ops;
pub mod cli_ops;
pub mod compact_ops;
pub mod dist_bench;
pub mod first_use;
pub mod histogram_ops;
pub mod npy;
pub mod output;
pub mod plot;
pub mod rows_ops;
pub mod run_ops;
pub mod sort_ops;
