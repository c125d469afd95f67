//! The CLI's file handling and error messages, and the benchmark plot: no GPU needed. The
//! commands' runs on a GPU are the `gpu` test target.

mod common;

use common::{binary, f32_bytes, refused, run, temp, write_npy};
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
fn a_bad_tuning_override_is_refused_by_name_before_the_gpu() {
    let keys = temp("tuning-keys.npy");
    write_npy(&keys, "<f4", "(2,)", &f32_bytes(&[1.0, 2.0]));
    for (variable, value, named) in [
        ("GPU_PRIMITIVES_SORT_TILES", "3", "sort_tiles = 3: outside 1..=2"),
        ("GPU_PRIMITIVES_ROW_MAX_GROUP", "96", "row_max_group = 96"),
        (
            "GPU_PRIMITIVES_REDUCE_BLOCKS_PER_SM",
            "lots",
            "GPU_PRIMITIVES_REDUCE_BLOCKS_PER_SM=\"lots\"",
        ),
    ] {
        let out = Command::new(binary())
            .args(["sort", keys.to_str().unwrap()])
            .env(variable, value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{variable}={value}: {stderr}");
        assert!(
            stderr.contains(named) && !stderr.contains("panicked"),
            "{variable}={value}: {stderr}"
        );
    }
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
        "--top-k: k = 4 is past the 3 keys",
    );
    refused(
        &["sort", matrix, "--top-k", "2", "--end-bit", "8"],
        "cannot be used with",
    );
}

#[test]
fn reduce_by_key_refuses_mismatched_files_before_the_gpu() {
    let keys = temp("by-key-keys.npy");
    write_npy(&keys, "<u4", "(3,)", &common::le_bytes(&[1u32, 1, 2]));
    let values = temp("by-key-values.npy");
    write_npy(&values, "<f4", "(2,)", &f32_bytes(&[1.0, 2.0]));
    let float_keys = temp("by-key-float-keys.npy");
    write_npy(&float_keys, "<f4", "(2,)", &f32_bytes(&[1.0, 2.0]));
    let (keys, values, float_keys) = (
        keys.to_str().unwrap(),
        values.to_str().unwrap(),
        float_keys.to_str().unwrap(),
    );
    refused(&["reduce-by-key", keys, values], "holds 3 keys but");
    refused(
        &["reduce-by-key", float_keys, values],
        "reduce-by-key (keys) does not take f32 elements (it takes u32, i32, u64, i64)",
    );
    // An output over an input (keys as values too: the lengths agree).
    refused(&["reduce-by-key", keys, keys, "--output", keys], "--output");
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

/// A `.npy` file of `descr` whose header claims `shape` (a Python tuple) over `data`.
fn lying_file(name: &str, descr: &str, shape: &str, data: &[u8]) -> String {
    let path = temp(name);
    write_npy(&path, descr, shape, data);
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_shape_the_file_does_not_hold_is_refused_before_any_allocation() {
    // 2^62 elements (their bytes overflow u64), 2^40 (4 TiB), dimensions whose product
    // overflows (once wrapped to 0: "empty"), a truncated file, bytes past the data.
    let huge = lying_file("huge.npy", "<f4", "(4611686018427387904,)", &f32_bytes(&[1.0; 4]));
    let tera = lying_file("tera.npy", "<f4", "(1099511627776,)", &f32_bytes(&[1.0; 4]));
    let bytes = lying_file("bytes-huge.npy", "|u1", "(4611686018427387904,)", &[1; 4]);
    let wrapped = lying_file("wrapped.npy", "|u1", "(8589934592, 8589934592)", &[]);
    let short = lying_file("short.npy", "<f4", "(10,)", &f32_bytes(&[1.0; 7]));
    let long = lying_file("long.npy", "<f4", "(3,)", &f32_bytes(&[1.0; 4]));
    for (file, message) in [
        (&huge, "needs more than 2^64 bytes of data"),
        (&tera, "needs 4398046511104 bytes of data"),
        (&short, "needs 40 bytes of data"),
        (&long, "needs 12 bytes of data"),
    ] {
        for command in [
            &["sort"][..],
            &["select", "--keep", "gt"],
            &["unique"],
            &["rle"],
            &["histogram"],
            &["reduce"],
            &["scan"],
        ] {
            let args = [&command[..1], &[file.as_str()], &command[1..]].concat();
            refused(&args, message);
            refused(&args, file);
        }
    }
    refused(&["histogram", &bytes], "needs 4611686018427387904 bytes of data");
    refused(
        &["sort", &wrapped],
        "shape [8589934592, 8589934592] of u8 elements needs more than 2^64 bytes",
    );
    let matrix = lying_file(
        "rows-huge.npy",
        "<f4",
        "(1073741824, 1073741824)",
        &f32_bytes(&[0.0; 4]),
    );
    refused(
        &["rows", &matrix, "--op", "softmax"],
        "needs 4611686018427387904 bytes",
    );
}

#[test]
fn dist_bench_checks_its_arguments_before_any_gpu() {
    refused(&["dist-bench", "--gpus", "0"], "--gpus: at least 1");
    refused(&["dist-bench", "--runs", "0"], "--runs: at least 1");
    refused(&["dist-bench", "--log2", "40"], "--log2 40: from 10 to 36");
    refused(
        &["dist-bench", "--all-reduce-log2", "20,1"],
        "--all-reduce-log2 1: from 2 (one f32) to 34",
    );
}

#[test]
fn arguments_are_checked_before_the_gpu() {
    let x = lying_file("args-x.npy", "<f4", "(4,)", &f32_bytes(&[0.1, 0.5, 0.7, 2.0]));
    let ints = lying_file("args-ints.npy", "<i4", "(2,)", &common::le_bytes(&[1i32, 3]));
    let m = lying_file("args-m.npy", "<f4", "(2, 3)", &f32_bytes(&[0.0; 6]));
    let empty_rows = lying_file("args-empty-rows.npy", "<f4", "(3, 0)", &[]);
    let targets = lying_file("args-targets.npy", "<i8", "(2,)", &common::le_bytes(&[0i64, 1]));
    let three = lying_file(
        "args-targets3.npy",
        "<i8",
        "(3,)",
        &common::le_bytes(&[0i64, 1, 2]),
    );
    refused(&["histogram", &x, "--bins", "0"], "--bins 0");
    refused(&["histogram", &x, "--levels", "0,1,0.5"], "levels not sorted");
    refused(&["histogram", &x, "--levels", "1"], "1 levels make no bin");
    refused(
        &["histogram", &x, "--levels", "0,nan"],
        "level 1 (NaN) is not finite",
    );
    refused(
        &["histogram", &x, "--lower", "1", "--upper", "0"],
        "--lower 1 --upper 0",
    );
    refused(
        &["histogram", &ints, "--lower", "0.2", "--upper", "0.7"],
        "not finite and increasing",
    );
    refused(
        &[
            "rows",
            &m,
            "--op",
            "cross-entropy",
            "--targets",
            &targets,
            "--label-smoothing",
            "2",
        ],
        "--label-smoothing 2: must be within [0, 1]",
    );
    refused(&["rows", &m, "--op", "layer-norm", "--eps=-1"], "--eps -1");
    refused(
        &["rows", &m, "--op", "softmax", "--targets", &targets],
        "--targets are cross-entropy's",
    );
    refused(&["rows", &empty_rows, "--op", "softmax"], "a 3 x 0 matrix");
    refused(
        &["rows", &m, "--op", "cross-entropy", "--targets", &three],
        "3 targets for 2 rows",
    );
    refused(
        &["select", &ints, "--keep", "lt", "--value", "2.5"],
        "select --value 2.5: not a i32 value",
    );
    refused(
        &["select", &ints, "--keep", "range", "--value", "0", "--hi", "1e10"],
        "select --hi 10000000000",
    );
    refused(&["bench", "--max-log2", "70"], "size 2^70 is past the largest");
    refused(
        &["bench", "--min-log2", "20", "--max-log2", "10"],
        "--min-log2 20 is past --max-log2 10",
    );
    refused(&["bench", "--sort-types", "u7"], "unknown sort key type \"u7\"");
}

#[test]
fn cross_entropy_targets_out_of_range_are_refused() {
    let m = lying_file("ce-m.npy", "<f4", "(3, 4)", &f32_bytes(&[0.0; 12]));
    for (values, message) in [
        ([0i64, 4, 1], "row 1's target 4 is not a class of 0..4"),
        ([-1, 0, 1], "row 0's target -1 is not a class of 0..4"),
        ([0, 3, i64::MIN], "row 2's target -9223372036854775808"),
    ] {
        let targets = lying_file("ce-bad-targets.npy", "<i8", "(3,)", &common::le_bytes(&values));
        refused(
            &["rows", &m, "--op", "cross-entropy", "--targets", &targets],
            message,
        );
    }
    // The ignore index (-100) and every class are taken: what stops this run is the GPU alone.
    let targets = lying_file(
        "ce-good-targets.npy",
        "<i8",
        "(3,)",
        &common::le_bytes(&[-100i64, 0, 3]),
    );
    let (_, stderr, status) = run(&["rows", &m, "--op", "cross-entropy", "--targets", &targets]);
    assert!(
        status == Some(0) || stderr.contains("CUDA"),
        "{status:?}: {stderr}"
    );
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let x = lying_file("same-x.npy", "<f4", "(2,)", &f32_bytes(&[2.0, 1.0]));
    let before = std::fs::read(&x).unwrap();
    let link = temp("same-x-link.npy");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&x, &link).unwrap();
    let link = link.to_str().unwrap();
    let dotted = format!("{}/./same-x.npy", temp("").display());
    for output in [x.as_str(), link, &dotted] {
        for command in [
            &["sort"][..],
            &["scan"],
            &["select", "--keep", "gt"],
            &["unique"],
            &["rle"],
            &["histogram"],
        ] {
            let args = [&command[..1], &[x.as_str()], &command[1..], &["--output", output]].concat();
            refused(&args, "which the command also uses");
        }
    }
    // rle's lengths beside its output; rows's two outputs, and its other inputs.
    let input = lying_file("same.lengths.npy", "<u4", "(1,)", &common::le_bytes(&[1u32]));
    let output = temp("same.npy");
    refused(
        &["rle", &input, "--output", output.to_str().unwrap()],
        "--output's lengths",
    );
    let m = lying_file("same-m.npy", "<f4", "(1, 2)", &f32_bytes(&[0.0; 2]));
    let t = lying_file("same-t.npy", "<i8", "(1,)", &common::le_bytes(&[0i64]));
    let out = temp("same-out.npy");
    let out = out.to_str().unwrap();
    let ce = ["rows", &m, "--op", "cross-entropy", "--targets", &t];
    refused(&[&ce[..], &["--output", &t]].concat(), "--output");
    refused(
        &[&ce[..], &["--output", out, "--logits-grad", out]].concat(),
        "--logits-grad",
    );
    refused(&["plot", &x, &x], "which the command also uses");
    assert_eq!(std::fs::read(&x).unwrap(), before);
}

#[test]
fn writes_replace_the_target_whole_or_not_at_all() {
    use gpu_primitives_cli::npy;
    let dir = temp("atomic");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out.npy");
    std::fs::write(&path, b"old").unwrap();
    npy::write(&path, &[1u32, 2, 3]).unwrap();
    let again = npy::open(&path).unwrap();
    assert_eq!(
        again.read::<u32>(&indicatif::ProgressBar::hidden()).unwrap(),
        [1, 2, 3]
    );
    // A target that cannot be replaced (a folder): an error, the folder as it was, no
    // temporary file left beside it.
    let folder = dir.join("folder.npy");
    std::fs::create_dir_all(&folder).unwrap();
    assert!(npy::write_matrix(&folder, 1, 2, &[1.0f32, 2.0]).is_err());
    assert!(folder.is_dir());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["folder.npy", "out.npy"]);
}

/// Fuzzing the `.npy` reader: arbitrary bytes, and valid files with their headers mutated.
mod npy_fuzz {
    use gpu_primitives_cli::npy::{self, NpyDtype, NpyError, NpyInput};
    use proptest::prelude::*;
    use std::io::Cursor;
    use std::path::Path;

    /// Read every element of an opened file as its dtype: the bytes read.
    fn read_all(input: NpyInput<Cursor<&[u8]>>) -> Result<usize, NpyError> {
        let bar = indicatif::ProgressBar::hidden();
        macro_rules! bytes {
            ($t:ty) => {
                input.read::<$t>(&bar).map(|v| v.len() * size_of::<$t>())
            };
        }
        match input.dtype {
            NpyDtype::F32 => bytes!(f32),
            NpyDtype::F64 => bytes!(f64),
            NpyDtype::I32 => bytes!(i32),
            NpyDtype::U32 => bytes!(u32),
            NpyDtype::I64 => bytes!(i64),
            NpyDtype::U64 => bytes!(u64),
            NpyDtype::F16 => bytes!(half::f16),
            NpyDtype::U8 => bytes!(u8),
            NpyDtype::U16 => bytes!(u16),
        }
    }

    /// Open and read `bytes` as a `.npy` file (of `claimed` bytes, the file system's word):
    /// `Some(elements)` when both succeed. Panics (failing the property) where an accepted file
    /// would make an allocation past its length.
    fn accept(bytes: &[u8], claimed: u64) -> Option<usize> {
        let input = npy::from_reader(Path::new("fuzz.npy"), Cursor::new(bytes), claimed).ok()?;
        let (len, size) = (input.len, input.dtype.size());
        assert!(
            (len as u128) * (size as u128) <= claimed as u128,
            "{len} elements of {size} bytes accepted from a file of {claimed}"
        );
        assert_eq!(input.shape.iter().product::<usize>(), len);
        let read = read_all(input).ok()?;
        assert!(read as u64 <= claimed && read == len * size);
        Some(len)
    }

    const DESCRS: &[&str] = &[
        "<f4", "<f8", "<i4", "<u4", "<i8", "<u8", "<f2", "|u1", "<u2", "<i2", ">f4", "|i1", "<f4 ", "", "'",
        "\\", "<c8", "O",
    ];

    fn dimension() -> impl Strategy<Value = u64> {
        prop_oneof![
            4 => 0u64..6,
            1 => Just(1u64 << 31),
            1 => Just(1u64 << 40),
            1 => Just(1u64 << 62),
            1 => Just(i64::MAX as u64),
            1 => Just(1u64 << 63),
            1 => Just(u64::MAX),
            1 => any::<u64>(),
        ]
    }

    /// A file: its version, dtype, Fortran order and shape, a lie told by its header-length
    /// field (0: none), and the bytes added to (or, negative, cut from) its data.
    #[derive(Debug, Clone)]
    struct Case {
        version: u8,
        descr: String,
        fortran: bool,
        shape: Vec<u64>,
        header_lie: i32,
        data_delta: i64,
        fill: u8,
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            prop_oneof![6 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8), 1 => any::<u8>()],
            prop_oneof![
                8 => prop::sample::select(DESCRS).prop_map(str::to_owned),
                1 => "[<>|a-z0-9']{0,4}",
            ],
            prop::bool::weighted(0.1),
            prop::collection::vec(dimension(), 0..4),
            prop_oneof![6 => Just(0i32), 1 => -70i32..70],
            prop_oneof![6 => Just(0i64), 1 => -9i64..9],
            any::<u8>(),
        )
            .prop_map(
                |(version, descr, fortran, shape, header_lie, data_delta, fill)| Case {
                    version,
                    descr,
                    fortran,
                    shape,
                    header_lie,
                    data_delta,
                    fill,
                },
            )
    }

    /// The file of `case`, and whether it is one the reader must accept.
    fn file(case: &Case) -> (Vec<u8>, bool) {
        let dims: Vec<String> = case.shape.iter().map(u64::to_string).collect();
        let shape = match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        };
        let fortran = if case.fortran { "True" } else { "False" };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': {fortran}, 'shape': {shape}, }}",
            case.descr
        );
        let prefix = if case.version == 1 { 10 } else { 12 };
        while (prefix + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let dtype = NpyDtype::from_descr(&case.descr);
        let data_bytes = dtype.and_then(|d| {
            case.shape
                .iter()
                .try_fold(d.size() as u64, |b, &n| b.checked_mul(n))
                .filter(|_| case.shape.iter().all(|&n| n <= i64::MAX as u64))
        });
        // Data for a shape that fits in 4 KiB, else a few bytes.
        let base = data_bytes.filter(|&b| b <= 4096).unwrap_or(16) as i64;
        let data_len = (base + case.data_delta).max(0) as u64;
        let header_field = (header.len() as i64 + case.header_lie as i64).max(0) as u64;
        let mut bytes = b"\x93NUMPY".to_vec();
        bytes.extend([case.version, 0]);
        match case.version {
            1 => bytes.extend((header_field.min(u16::MAX as u64) as u16).to_le_bytes()),
            _ => bytes.extend((header_field as u32).to_le_bytes()),
        }
        bytes.extend(header.as_bytes());
        bytes.extend(std::iter::repeat_n(case.fill, data_len as usize));
        // A header-length field that lies by +k where the data has k bytes too many of
        // newlines still makes a valid file: a header padded with newlines after the dictionary
        // and the right data. (A lie by -k cuts the header's final newline and is refused.)
        let newlines_taken =
            case.header_lie > 0 && i64::from(case.header_lie) == case.data_delta && case.fill == b'\n';
        let data_read = data_len as i64 - i64::from(case.header_lie);
        let consistent = matches!(case.version, 1..=3)
            && (case.header_lie == 0 || newlines_taken)
            && !case.fortran
            && data_bytes.is_some_and(|b| b as i64 == data_read);
        (bytes, consistent)
    }

    /// The case proptest found (CI, session 55): a header-length field one short and one data
    /// byte short. The reader saw a header without its newline and the right data length, and
    /// took the file; the format's final newline is now required.
    #[test]
    fn a_header_length_one_short_is_refused_though_the_data_makes_up_for_it() {
        let case = Case {
            version: 1,
            descr: "<f4".into(),
            fortran: false,
            shape: vec![],
            header_lie: -1,
            data_delta: -1,
            fill: 0,
        };
        let (bytes, consistent) = file(&case);
        assert!(!consistent);
        assert_eq!(accept(&bytes, bytes.len() as u64), None);
        let honest = Case {
            header_lie: 0,
            data_delta: 0,
            ..case
        };
        let (bytes, consistent) = file(&honest);
        assert!(consistent);
        assert_eq!(accept(&bytes, bytes.len() as u64), Some(1));
    }

    /// A header lengthened into data that are newlines is a valid file (NumPy reads it too).
    #[test]
    fn a_header_padded_with_newlines_from_the_data_is_read() {
        let case = Case {
            version: 1,
            descr: "<f4".into(),
            fortran: false,
            shape: vec![2],
            header_lie: 3,
            data_delta: 3,
            fill: b'\n',
        };
        let (bytes, consistent) = file(&case);
        assert!(consistent);
        assert_eq!(accept(&bytes, bytes.len() as u64), Some(2));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in prop::collection::vec(any::<u8>(), 0..300),
            magic in any::<bool>(),
            claimed_delta in prop_oneof![4 => Just(0i64), 1 => -8i64..1 << 20],
        ) {
            let mut bytes = bytes;
            if magic {
                let mut with = b"\x93NUMPY\x01\x00".to_vec();
                with.append(&mut bytes);
                bytes = with;
            }
            let claimed = (bytes.len() as i64 + claimed_delta).max(0) as u64;
            accept(&bytes, claimed);
        }

        #[test]
        fn mutated_headers_are_accepted_only_when_consistent(case in case()) {
            let (bytes, consistent) = file(&case);
            let accepted = accept(&bytes, bytes.len() as u64);
            prop_assert_eq!(accepted.is_some(), consistent, "{:?}", String::from_utf8_lossy(&bytes[..bytes.len().min(140)]));
            if let Some(len) = accepted {
                prop_assert_eq!(len as u64, case.shape.iter().product::<u64>());
            }
        }

        #[test]
        fn a_file_shorter_or_longer_than_its_length_says_is_an_error(
            case in case(),
            claimed_delta in -64i64..64,
        ) {
            let (bytes, _) = file(&case);
            let claimed = (bytes.len() as i64 + claimed_delta).max(0) as u64;
            // Never a panic; a file that is not the claimed length is never read whole.
            if claimed_delta != 0 {
                prop_assert!(accept(&bytes, claimed).is_none());
            }
        }

        #[test]
        fn valid_files_with_bytes_overwritten_never_panic(
            case in case(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        ) {
            let (mut bytes, _) = file(&case);
            for (at, value) in edits {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            accept(&bytes, bytes.len() as u64);
        }
    }
}
