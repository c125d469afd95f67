//! The CLI's file handling and error messages, and the benchmark plot: no GPU needed.

use gpu_primitives_cli::bench::BenchRow;
use gpu_primitives_cli::cli_ops::{self, CliError};
use gpu_primitives_cli::npy::NpyError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Write a version-1.0 `.npy` file by hand: magic, header dict padded to 64 bytes, data.
fn write_npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
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

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpu-primitives-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Run the binary with `args`: its stdout, stderr and exit status.
fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-primitives"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// The binary refuses `args` without a GPU: exit status 2 and `message` on stderr, no panic.
fn refused(args: &[&str], message: &str) {
    let (_, stderr, status) = run(args);
    assert_eq!(status, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(message) && !stderr.contains("panicked"),
        "{args:?}: {stderr}"
    );
}

/// Run `args`, good arguments for a GPU: its stdout where it succeeded, or `None` where there
/// is no GPU (checked: the missing device is the one-line error, exit status 2).
fn on_gpu(args: &[&str]) -> Option<String> {
    let (stdout, stderr, status) = run(args);
    if status == Some(0) {
        return Some(stdout);
    }
    assert_eq!(status, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.starts_with("error: no CUDA device") && stderr.trim().lines().count() == 1,
        "{args:?}: {stderr}"
    );
    None
}

#[test]
fn reads_a_good_file() {
    let path = temp("good.npy");
    write_npy(&path, "<f4", "(5,)", &f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0]));
    assert_eq!(cli_ops::check_file(&path).unwrap(), 5);
}

#[test]
fn missing_file_is_a_clear_error() {
    let err = cli_ops::check_file(Path::new("/nonexistent/x.npy")).unwrap_err();
    assert!(matches!(err, CliError::Npy(NpyError::Io { .. })));
    assert!(
        err.to_string().contains("/nonexistent/x.npy") && err.to_string().contains("No such file"),
        "{err}"
    );
}

#[test]
fn unsupported_dtype_is_named() {
    let path = temp("int16.npy");
    write_npy(&path, "<i2", "(2,)", &[1, 0, 2, 0]);
    let err = cli_ops::check_file(&path).unwrap_err().to_string();
    assert!(err.contains("dtype <i2 is not supported"), "{err}");
}

#[test]
fn two_dimensional_arrays_are_refused() {
    let path = temp("matrix.npy");
    write_npy(&path, "<f4", "(2, 3)", &f32_bytes(&[0.0; 6]));
    let err = cli_ops::check_file(&path).unwrap_err().to_string();
    assert!(
        err.contains("shape [2, 3]") && err.contains("1-D arrays are read here"),
        "{err}"
    );
}

#[test]
fn matrices_are_read_and_written_with_their_shape() {
    use gpu_primitives_cli::npy;
    let path = temp("rows.npy");
    write_npy(
        &path,
        "<f4",
        "(2, 3)",
        &f32_bytes(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
    );
    let input = npy::open_matrix(&path).unwrap();
    assert_eq!((input.shape.clone(), input.len), (vec![2, 3], 6));
    let values = input.read::<f32>(&indicatif::ProgressBar::hidden()).unwrap();
    let out = temp("rows-out.npy");
    npy::write_matrix(&out, 2, 3, &values).unwrap();
    let again = npy::open_matrix(&out).unwrap();
    assert_eq!(again.shape, [2, 3]);
    assert_eq!(
        again.read::<f32>(&indicatif::ProgressBar::hidden()).unwrap(),
        values
    );
    // A 1-D file is not a matrix.
    let vector = temp("vector.npy");
    write_npy(&vector, "<f4", "(3,)", &f32_bytes(&[0.0; 3]));
    let err = npy::open_matrix(&vector).err().unwrap().to_string();
    assert!(err.contains("2-D arrays are read here"), "{err}");
}

#[test]
fn truncated_file_is_detected() {
    let path = temp("truncated.npy");
    write_npy(&path, "<f4", "(10,)", &f32_bytes(&[1.0; 7]));
    let err = cli_ops::check_file(&path).unwrap_err().to_string();
    assert!(err.contains("truncated.npy"), "{err}");
}

#[test]
fn the_binary_reports_errors_in_one_line_with_a_nonzero_exit() {
    let bad = temp("bad.npy");
    write_npy(&bad, "<f4", "(2, 2)", &f32_bytes(&[0.0; 4]));
    let cube = temp("cube.npy");
    write_npy(&cube, "<f4", "(2, 2, 2)", &f32_bytes(&[0.0; 8]));
    for args in [
        vec!["reduce", "/nonexistent/x.npy"],
        vec!["scan", bad.to_str().unwrap()],
        vec!["select", bad.to_str().unwrap(), "--keep", "lt", "--value", "-1.5"],
        vec!["unique", "/nonexistent/x.npy"],
        vec!["sort", cube.to_str().unwrap(), "--descending"],
        vec!["sort", "/nonexistent/x.npy", "--argsort"],
        // Cross-entropy without targets, and with targets that are not i64.
        vec!["rows", bad.to_str().unwrap(), "--op", "cross-entropy"],
        vec![
            "rows",
            bad.to_str().unwrap(),
            "--op",
            "cross-entropy",
            "--targets",
            bad.to_str().unwrap(),
        ],
    ] {
        let (_, stderr, status) = run(&args);
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ")
                && stderr.trim().lines().count() == 1
                && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
    // A good file: on a machine without a GPU, the missing device is the one-line error.
    let good = temp("good-for-binary.npy");
    write_npy(&good, "<f4", "(3,)", &f32_bytes(&[1.0, 2.0, 3.0]));
    if let Some(stdout) = on_gpu(&["reduce", good.to_str().unwrap(), "--check"]) {
        assert!(stdout.contains("6"), "a GPU summed 1 + 2 + 3");
    }
}

#[test]
fn help_lists_sort_and_its_options() {
    let exe = env!("CARGO_BIN_EXE_gpu-primitives");
    let help = |args: &[&str]| {
        let out = Command::new(exe).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = help(&["--help"]);
    assert!(top.lines().any(|l| l.trim_start().starts_with("sort ")), "{top}");
    let sort = help(&["sort", "--help"]);
    for option in [
        "--descending",
        "--argsort",
        "--begin-bit <BIT>",
        "--end-bit <BIT>",
        "--top-k <K>",
        "--output",
        "--check",
    ] {
        assert!(sort.contains(option), "{option}: {sort}");
    }
    let bench = help(&["bench", "--help"]);
    assert!(
        bench.contains("--sort-types") && bench.contains("--sort-log2"),
        "{bench}"
    );
}

#[test]
fn sort_checks_its_arguments_before_the_gpu() {
    let keys = temp("sort-keys.npy");
    write_npy(&keys, "<f4", "(4,)", &f32_bytes(&[3.0, -1.0, f32::NAN, -0.0]));
    let keys = keys.to_str().unwrap();
    // A bit range past the key's width, a reversed one, a bit that is not a number: one-line
    // errors (exit status 2) without a GPU.
    refused(
        &["sort", keys, "--end-bit", "40"],
        "bit range 0..40 is not within the 32 bits of f32",
    );
    refused(
        &["sort", keys, "--begin-bit", "9", "--end-bit", "8"],
        "bit range 9..8",
    );
    refused(&["sort", keys, "--begin-bit", "x"], "--begin-bit");
    // Good arguments: sorted and checked on a GPU, or the missing device as the one-line error.
    let out_path = temp("sort-out.npy");
    let out = out_path.to_str().unwrap();
    if let Some(stdout) = on_gpu(&[
        "sort",
        keys,
        "--descending",
        "--argsort",
        "--check",
        "--output",
        out,
    ]) {
        // Descending: the NaN first, then 3.0, -0.0, -1.0.
        assert!(
            stdout.contains("indices: [2, 0, 3, 1]") && stdout.contains("identical"),
            "{stdout}"
        );
        let indices = gpu_primitives_cli::npy::open(&out_path).unwrap();
        assert_eq!(indices.dtype, gpu_primitives_cli::npy::NpyDtype::U32);
    }
}

#[test]
fn sort_takes_rows_and_top_k_of_a_matrix() {
    let matrix = temp("sort-matrix.npy");
    // Two rows of 3.
    write_npy(
        &matrix,
        "<f4",
        "(2, 3)",
        &f32_bytes(&[3.0, 1.0, 2.0, 0.5, -1.0, 9.0]),
    );
    let matrix = matrix.to_str().unwrap();
    // --top-k past the rows, or beside a bit range: refused without a GPU.
    refused(
        &["sort", matrix, "--top-k", "4"],
        "--top-k 4 is past the rows' 3 keys",
    );
    refused(
        &["sort", matrix, "--top-k", "2", "--end-bit", "8"],
        "cannot be used with",
    );
    // Each row sorted, and each row's 2 largest with their columns, checked on a GPU.
    for (args, printed) in [
        (vec!["sort", matrix, "--check"], "[1.0, 2.0, 3.0, -1.0, 0.5, 9.0]"),
        (
            vec!["sort", matrix, "--top-k", "2", "--descending", "--check"],
            "indices: [0, 2, 2, 0]",
        ),
    ] {
        if let Some(stdout) = on_gpu(&args) {
            assert!(
                stdout.contains(printed) && stdout.contains("identical"),
                "{stdout}"
            );
        }
    }
}

#[test]
fn plot_draws_a_png() {
    let rows: Vec<BenchRow> = [10u32, 12, 14]
        .iter()
        .flat_map(|&k| {
            ["reduce sum", "inclusive scan sum"].map(|algorithm| BenchRow {
                gpu: "test GPU".into(),
                algorithm: algorithm.into(),
                dtype: "f32".into(),
                n: 1 << k,
                time_us: 10.0,
                gb_per_s: 100.0 * k as f64,
                copy_us: 8.0,
                copy_gb_per_s: 150.0 * k as f64,
                time_over_copy: 1.25,
            })
        })
        .collect();
    let csv = temp("rows.csv");
    gpu_primitives_cli::bench::write_csv(&csv, &rows).unwrap();
    let rows = gpu_primitives_cli::bench::read_csv(&csv).unwrap();
    assert_eq!(rows.len(), 6);
    let path = temp("plot.png");
    gpu_primitives_cli::plot::plot(&path, &rows).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} bytes",
        bytes.len()
    );
}
