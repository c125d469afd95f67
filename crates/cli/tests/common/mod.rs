//! What both CLI test targets use: `.npy` files written by hand, temporary paths, running the
//! binary.

#![allow(dead_code)] // Each test target uses its own part.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Write a version-1.0 `.npy` file by hand: magic, header dict padded to 64 bytes, data.
pub fn write_npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

/// A path in this process's temporary folder.
pub fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpu-primitives-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The little-endian bytes of `values`.
pub fn le_bytes<T: bytemuck::Pod>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// The little-endian bytes of f32 `values`.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    le_bytes(values)
}

/// The binary under test: `$GPU_PRIMITIVES_CLI` where set (a test binary carried to another
/// machine, where cargo's path does not exist), else the one cargo built.
pub fn binary() -> PathBuf {
    std::env::var_os("GPU_PRIMITIVES_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gpu-primitives")))
}

/// Run the binary with `args`: its stdout, stderr and exit status.
pub fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = Command::new(binary()).args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// The binary refuses `args` without a GPU: exit status 2 and `message` on stderr, no panic.
pub fn refused(args: &[&str], message: &str) {
    let (_, stderr, status) = run(args);
    assert_eq!(status, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(message) && !stderr.contains("panicked"),
        "{args:?}: {stderr}"
    );
}

/// Two rows of 3 f32 keys, `[3, 1, 2]` and `[0.5, -1, 9]`, written to `name`: the sort tests'
/// matrix.
pub fn sort_matrix(name: &str) -> PathBuf {
    let path = temp(name);
    write_npy(
        &path,
        "<f4",
        "(2, 3)",
        &f32_bytes(&[3.0, 1.0, 2.0, 0.5, -1.0, 9.0]),
    );
    path
}
