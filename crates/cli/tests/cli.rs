//! The CLI's file handling and error messages, and the benchmark plot: no GPU needed. The
//! commands' runs on a GPU are the `gpu` test target.

mod common;

use common::{f32_bytes, refused, run, temp, write_npy};
use gpu_primitives_cli::bench::BenchRow;
use gpu_primitives_cli::cli_ops::{self, CliError};
use gpu_primitives_cli::npy::NpyError;
use std::path::Path;
use std::process::Command;

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
}

#[test]
fn help_lists_sort_and_its_options() {
    let exe = common::binary();
    let help = |args: &[&str]| {
        let out = Command::new(&exe).args(args).output().unwrap();
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
    // bf16 keys come as their bits: an f32 file with --bf16-bits is refused by name.
    refused(
        &["sort", keys, "--bf16-bits"],
        "sort --bf16-bits does not take f32 elements (it takes u16)",
    );
}

#[test]
fn sort_takes_rows_and_top_k_of_a_matrix() {
    let matrix = common::sort_matrix("sort-matrix.npy");
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
}

#[test]
fn each_command_names_the_element_types_it_takes() {
    // u8 and u16 files are read; the commands over the element table refuse them by name,
    // before the GPU is opened.
    let bytes = temp("bytes.npy");
    write_npy(&bytes, "|u1", "(4,)", &[1, 2, 2, 7]);
    let shorts = temp("shorts.npy");
    write_npy(&shorts, "<u2", "(2,)", &common::le_bytes(&[1u16, 9]));
    let (bytes, shorts) = (bytes.to_str().unwrap(), shorts.to_str().unwrap());
    let elements = "it takes f32, f64, i32, u32, i64, u64, f16)";
    refused(
        &["reduce", bytes],
        &format!("reduce does not take u8 elements ({elements}"),
    );
    refused(
        &["scan", shorts],
        &format!("scan does not take u16 elements ({elements}"),
    );
    refused(&["unique", bytes], "unique does not take u8 elements");
    refused(
        &["select", shorts, "--keep", "gt"],
        "select does not take u16 elements",
    );
    refused(&["rle", bytes], "rle does not take u8 elements");
    let i64s = temp("i64s.npy");
    write_npy(&i64s, "<i8", "(1,)", &common::le_bytes(&[5i64]));
    refused(
        &["histogram", i64s.to_str().unwrap()],
        "histogram does not take i64 elements (it takes u8, u16, i32, u32, f16, f32, f64)",
    );
    let matrix = temp("u8-matrix.npy");
    write_npy(&matrix, "|u1", "(2, 2)", &[0, 1, 2, 3]);
    refused(
        &["rows", matrix.to_str().unwrap(), "--op", "softmax"],
        "rows does not take u8 elements (it takes f32, f16)",
    );
    // A one-byte type of another kind stays unsupported at the file.
    let signed = temp("signed-bytes.npy");
    write_npy(&signed, "|i1", "(1,)", &[3]);
    refused(&["sort", signed.to_str().unwrap()], "dtype |i1 is not supported");
}

#[test]
fn rows_backward_checks_dy_before_the_gpu() {
    let x = temp("rows-x.npy");
    write_npy(&x, "<f4", "(2, 3)", &f32_bytes(&[0.0; 6]));
    let wide = temp("rows-dy-wide.npy");
    write_npy(&wide, "<f4", "(2, 4)", &f32_bytes(&[0.0; 8]));
    let halves = temp("rows-dy-f16.npy");
    write_npy(&halves, "<f2", "(2, 3)", &[0; 12]);
    let x = x.to_str().unwrap();
    refused(
        &["rows", x, "--op", "softmax", "--grad", wide.to_str().unwrap()],
        "dy is a [2, 4] f32 matrix; the input is [2, 3] f32",
    );
    refused(
        &[
            "rows",
            x,
            "--op",
            "layer-norm",
            "--grad",
            halves.to_str().unwrap(),
        ],
        "dy is a [2, 3] f16 matrix; the input is [2, 3] f32",
    );
    refused(
        &[
            "rows",
            x,
            "--op",
            "cross-entropy",
            "--grad",
            halves.to_str().unwrap(),
        ],
        "cross-entropy's gradient is not a backward of dy",
    );
    refused(
        &["rows", x, "--op", "softmax", "--logits-grad", "g.npy"],
        "--logits-grad is cross-entropy's gradient",
    );
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
