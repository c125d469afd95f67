//! The file commands run on a GPU with `--check`: each writes its result, which is read back and
//! compared with values worked out by hand (and, for the larger inputs, the command's own CPU
//! reference must agree). Without a CUDA device each test is reported *ignored*, by name, with
//! the binary's one-line reason (checked to be that one line and exit status 2), instead of
//! passing.
//!
//! Run: `cargo test -p gpu-primitives-cli --test gpu`.

mod common;

use common::{f32_bytes, le_bytes, run, temp, write_npy};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::path::Path;

/// Why a test stopped before its end.
enum Stop {
    /// The binary found no CUDA device (its one-line message).
    NoGpu(String),
    /// A check failed.
    Failed(Failed),
}

impl<E: Into<Failed>> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Failed(e.into())
    }
}

type CliTest = fn() -> Result<(), Stop>;

/// Run `args` (good arguments for a GPU): its stdout. No CUDA device stops the test (the
/// message checked to be one line); a failure or a `DIFFERENT` from `--check` fails it.
fn on_gpu(args: &[&str]) -> Result<String, Stop> {
    let (stdout, stderr, status) = run(args);
    if status == Some(2) && stderr.starts_with("error: no CUDA device") {
        if stderr.trim().lines().count() != 1 {
            return Err(format!("{args:?}: the missing device in more than one line: {stderr}").into());
        }
        return Err(Stop::NoGpu(
            stderr.trim().trim_start_matches("error: ").to_owned(),
        ));
    }
    if status != Some(0) || stdout.contains("DIFFERENT") {
        return Err(format!("{args:?}: exit {status:?}\n{stdout}\n{stderr}").into());
    }
    if args.contains(&"--check") && !stdout.contains("CPU reference") {
        return Err(format!("{args:?}: --check printed no comparison\n{stdout}").into());
    }
    Ok(stdout)
}

/// The 1-D `.npy` at `path`, as `T`.
fn read<T: gpu_primitives_cli::npy::NpyElement>(path: &Path) -> Vec<T> {
    let input = gpu_primitives_cli::npy::open(path).unwrap();
    input.read(&indicatif::ProgressBar::hidden()).unwrap()
}

/// The 2-D `.npy` at `path`, as `T`, row after row.
fn read_matrix<T: gpu_primitives_cli::npy::NpyElement>(path: &Path) -> Vec<T> {
    let input = gpu_primitives_cli::npy::open_matrix(path).unwrap();
    input.read(&indicatif::ProgressBar::hidden()).unwrap()
}

/// `Err` naming `what` unless `found == expected`.
fn expect_eq<T: PartialEq + std::fmt::Debug>(what: &str, found: T, expected: T) -> Result<(), Stop> {
    if found == expected {
        Ok(())
    } else {
        Err(format!("{what}: {found:?}, expected {expected:?}").into())
    }
}

/// `n` pseudo-random words (a 64-bit linear congruential generator's high halves), the same on
/// every run.
fn words(n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 32) as u32
        })
        .collect()
}

/// Files of a million and three items: past many tiles of every kernel, with a partial last one.
const LARGE: usize = 1_000_003;

fn reduce_and_scan() -> Result<(), Stop> {
    let x = temp("gpu-reduce.npy");
    write_npy(&x, "<f4", "(4,)", &f32_bytes(&[1.0, 2.0, 3.0, 4.5]));
    let x = x.to_str().unwrap();
    let stdout = on_gpu(&["reduce", x, "--check"])?;
    if !stdout.contains("10.5") {
        return Err(format!("1 + 2 + 3 + 4.5 is 10.5: {stdout}").into());
    }
    let out = temp("gpu-scan-out.npy");
    on_gpu(&[
        "scan",
        x,
        "--exclusive",
        "--check",
        "--output",
        out.to_str().unwrap(),
    ])?;
    expect_eq("exclusive sums", read::<f32>(&out), vec![0.0, 1.0, 3.0, 6.0])?;
    Ok(())
}

fn select_and_unique() -> Result<(), Stop> {
    let x = temp("gpu-select.npy");
    write_npy(
        &x,
        "<f4",
        "(7,)",
        &f32_bytes(&[3.0, f32::NAN, -1.0, 5.0, 2.5, -0.0, 2.0]),
    );
    let x = x.to_str().unwrap();
    let out = temp("gpu-select-out.npy");
    let out_s = out.to_str().unwrap();
    on_gpu(&[
        "select", x, "--keep", "gt", "--value", "2", "--check", "--output", out_s,
    ])?;
    expect_eq("x > 2, in input order", read::<f32>(&out), vec![3.0, 5.0, 2.5])?;
    on_gpu(&["select", x, "--keep", "not-nan", "--check", "--output", out_s])?;
    let kept: Vec<u32> = read::<f32>(&out).iter().map(|v| v.to_bits()).collect();
    let expected: Vec<u32> = [3.0f32, -1.0, 5.0, 2.5, -0.0, 2.0]
        .iter()
        .map(|v| v.to_bits())
        .collect();
    expect_eq("not NaN (bits: -0.0 kept as it is)", kept, expected)?;
    on_gpu(&[
        "select", x, "--keep", "range", "--value", "-1", "--hi", "2.5", "--check", "--output", out_s,
    ])?;
    expect_eq("-1 <= x < 2.5", read::<f32>(&out), vec![-1.0, -0.0, 2.0])?;
    // unique: consecutive duplicates dropped, later repeats kept.
    let ints = temp("gpu-unique.npy");
    write_npy(&ints, "<i4", "(8,)", &le_bytes(&[1i32, 1, 2, 2, 2, 3, 1, 1]));
    on_gpu(&["unique", ints.to_str().unwrap(), "--check", "--output", out_s])?;
    expect_eq("unique", read::<i32>(&out), vec![1, 2, 3, 1])?;
    // Many tiles: the command's own reference must agree, and half the words are below 2^31.
    let large = temp("gpu-select-large.npy");
    write_npy(&large, "<u4", &format!("({LARGE},)"), &le_bytes(&words(LARGE, 1)));
    let large = large.to_str().unwrap();
    on_gpu(&[
        "select",
        large,
        "--keep",
        "lt",
        "--value",
        "2147483648",
        "--check",
        "--output",
        out_s,
    ])?;
    let kept = read::<u32>(&out);
    let expected: Vec<u32> = words(LARGE, 1).into_iter().filter(|&w| w < 1 << 31).collect();
    expect_eq("words below 2^31 (count)", kept.len(), expected.len())?;
    expect_eq("words below 2^31", kept == expected, true)?;
    on_gpu(&["unique", large, "--check"])?;
    Ok(())
}

fn run_length_encode() -> Result<(), Stop> {
    let x = temp("gpu-rle.npy");
    write_npy(&x, "<u4", "(6,)", &le_bytes(&[7u32, 7, 7, 2, 5, 5]));
    let x = x.to_str().unwrap();
    let out = temp("gpu-rle-out.npy");
    let lengths = temp("gpu-rle-out.lengths.npy");
    on_gpu(&["rle", x, "--check", "--output", out.to_str().unwrap()])?;
    expect_eq("run items", read::<u32>(&out), vec![7, 2, 5])?;
    expect_eq("run lengths", read::<u32>(&lengths), vec![3, 1, 2])?;
    on_gpu(&[
        "rle",
        x,
        "--non-trivial",
        "--check",
        "--output",
        out.to_str().unwrap(),
    ])?;
    expect_eq("non-trivial run offsets", read::<u32>(&out), vec![0, 4])?;
    expect_eq("non-trivial run lengths", read::<u32>(&lengths), vec![3, 2])?;
    // Runs of 1 to 8 items across many tiles.
    let items: Vec<u32> = words(LARGE / 4, 2)
        .iter()
        .enumerate()
        .flat_map(|(i, w)| std::iter::repeat_n(i as u32 / 3, 1 + (w % 8) as usize))
        .collect();
    let large = temp("gpu-rle-large.npy");
    write_npy(&large, "<u4", &format!("({},)", items.len()), &le_bytes(&items));
    let large = large.to_str().unwrap();
    on_gpu(&["rle", large, "--check"])?;
    on_gpu(&["rle", large, "--non-trivial", "--check"])?;
    Ok(())
}

fn reduce_by_key() -> Result<(), Stop> {
    let keys = temp("gpu-by-key-keys.npy");
    write_npy(&keys, "<i8", "(6,)", &le_bytes(&[7i64, 7, 3, 3, 3, 7]));
    let values = temp("gpu-by-key-values.npy");
    write_npy(&values, "<i4", "(6,)", &le_bytes(&[1i32, 2, 3, 4, 5, 6]));
    let (keys, values) = (keys.to_str().unwrap(), values.to_str().unwrap());
    let out = temp("gpu-by-key-out.npy");
    let out_values = temp("gpu-by-key-out.values.npy");
    on_gpu(&[
        "reduce-by-key",
        keys,
        values,
        "--check",
        "--output",
        out.to_str().unwrap(),
    ])?;
    expect_eq("run keys", read::<i64>(&out), vec![7, 3, 7])?;
    expect_eq("run sums", read::<i32>(&out_values), vec![3, 12, 6])?;
    on_gpu(&[
        "reduce-by-key",
        keys,
        values,
        "--op",
        "max",
        "--check",
        "--output",
        out.to_str().unwrap(),
    ])?;
    expect_eq("run maxima", read::<i32>(&out_values), vec![2, 5, 6])?;
    on_gpu(&[
        "reduce-by-key",
        keys,
        values,
        "--unique",
        "--check",
        "--output",
        out.to_str().unwrap(),
    ])?;
    expect_eq("runs' first values", read::<i32>(&out_values), vec![1, 3, 6])?;
    // Runs of 1 to 8 keys across many tiles, f32 values.
    let run_keys: Vec<u32> = words(LARGE / 4, 2)
        .iter()
        .enumerate()
        .flat_map(|(i, w)| std::iter::repeat_n(i as u32 / 3, 1 + (w % 8) as usize))
        .collect();
    let n = run_keys.len();
    let large_keys = temp("gpu-by-key-large-keys.npy");
    write_npy(&large_keys, "<u4", &format!("({n},)"), &le_bytes(&run_keys));
    let large_values = temp("gpu-by-key-large-values.npy");
    let floats: Vec<f32> = (0..n).map(|i| (i % 9) as f32 - 4.0).collect();
    write_npy(&large_values, "<f4", &format!("({n},)"), &le_bytes(&floats));
    let (large_keys, large_values) = (large_keys.to_str().unwrap(), large_values.to_str().unwrap());
    on_gpu(&["reduce-by-key", large_keys, large_values, "--check"])?;
    on_gpu(&[
        "reduce-by-key",
        large_keys,
        large_values,
        "--op",
        "min",
        "--check",
    ])?;
    on_gpu(&["reduce-by-key", large_keys, large_values, "--unique", "--check"])?;
    // Sums that round: a run across threads or tiles adds in another order than the CPU's
    // (compared bit for bit, these were DIFFERENT; within their bound they agree).
    let inexact = temp("gpu-by-key-inexact-values.npy");
    let floats: Vec<f32> = (0..n).map(|i| 1.0e3 + (i % 97) as f32 / 7.0).collect();
    write_npy(&inexact, "<f4", &format!("({n},)"), &le_bytes(&floats));
    on_gpu(&["reduce-by-key", large_keys, inexact.to_str().unwrap(), "--check"])?;
    Ok(())
}

fn histogram() -> Result<(), Stop> {
    let out = temp("gpu-histogram-out.npy");
    let out_s = out.to_str().unwrap();
    let bytes = temp("gpu-histogram-u8.npy");
    write_npy(&bytes, "|u1", "(5,)", &[0, 1, 2, 200, 255]);
    let bytes = bytes.to_str().unwrap();
    let even = ["--bins", "4", "--lower", "0", "--upper", "256"];
    on_gpu(&[&["histogram", bytes, "--check", "--output", out_s][..], &even].concat())?;
    expect_eq("u8 in 4 even bins of 64", read::<u64>(&out), vec![3, 0, 0, 2])?;
    let shorts = temp("gpu-histogram-u16.npy");
    write_npy(
        &shorts,
        "<u2",
        "(7,)",
        &le_bytes(&[5u16, 10, 99, 100, 999, 1000, 65535]),
    );
    on_gpu(&[
        "histogram",
        shorts.to_str().unwrap(),
        "--levels",
        "0,10,100,1000",
        "--check",
        "--output",
        out_s,
    ])?;
    expect_eq(
        "u16 between levels 0, 10, 100, 1000",
        read::<u64>(&out),
        vec![1, 2, 2],
    )?;
    let floats = temp("gpu-histogram-f32.npy");
    let samples = [0.1f32, 0.5, f32::NAN, -0.2, 0.99, 1.0, f32::INFINITY];
    write_npy(&floats, "<f4", "(7,)", &f32_bytes(&samples));
    on_gpu(&[
        "histogram",
        floats.to_str().unwrap(),
        "--bins",
        "2",
        "--check",
        "--output",
        out_s,
    ])?;
    expect_eq(
        "f32 in [0, 0.5), [0.5, 1); NaN and outside not counted",
        read::<u64>(&out),
        vec![1, 2],
    )?;
    // Many tiles of bytes, 256 bins: the command's own reference must agree, every byte counted.
    let large: Vec<u8> = words(LARGE, 3).iter().map(|w| (w >> 24) as u8).collect();
    let path = temp("gpu-histogram-large.npy");
    write_npy(&path, "|u1", &format!("({LARGE},)"), &large);
    on_gpu(&[
        "histogram",
        path.to_str().unwrap(),
        "--bins",
        "256",
        "--lower",
        "0",
        "--upper",
        "256",
        "--check",
        "--output",
        out_s,
    ])?;
    let mut expected = vec![0u64; 256];
    large.iter().for_each(|&b| expected[b as usize] += 1);
    expect_eq("bytes in 256 bins", read::<u64>(&out), expected)?;
    Ok(())
}

fn sort() -> Result<(), Stop> {
    let keys = temp("gpu-sort-keys.npy");
    write_npy(&keys, "<f4", "(4,)", &f32_bytes(&[3.0, -1.0, f32::NAN, -0.0]));
    let out = temp("gpu-sort-out.npy");
    let out_s = out.to_str().unwrap();
    let args = [
        "sort",
        keys.to_str().unwrap(),
        "--descending",
        "--argsort",
        "--check",
        "--output",
        out_s,
    ];
    let stdout = on_gpu(&args)?;
    // Descending: the NaN first, then 3.0, -0.0, -1.0.
    expect_eq("printed indices", stdout.contains("indices: [2, 0, 3, 1]"), true)?;
    expect_eq("indices", read::<u32>(&out), vec![2, 0, 3, 1])?;
    // Two rows of 3: each row sorted, and each row's 2 largest with their columns.
    let matrix = common::sort_matrix("gpu-sort-matrix.npy");
    let matrix = matrix.to_str().unwrap();
    let stdout = on_gpu(&["sort", matrix, "--check"])?;
    expect_eq(
        "rows sorted",
        stdout.contains("[1.0, 2.0, 3.0, -1.0, 0.5, 9.0]"),
        true,
    )?;
    let stdout = on_gpu(&["sort", matrix, "--top-k", "2", "--descending", "--check"])?;
    expect_eq("top-2 columns", stdout.contains("indices: [0, 2, 2, 0]"), true)?;
    // u8 and u16 keys: stable argsort, and descending keys.
    let bytes = temp("gpu-sort-u8.npy");
    write_npy(&bytes, "|u1", "(5,)", &[3, 1, 2, 1, 0]);
    on_gpu(&[
        "sort",
        bytes.to_str().unwrap(),
        "--argsort",
        "--check",
        "--output",
        out_s,
    ])?;
    expect_eq(
        "u8 argsort (equal keys in input order)",
        read::<u32>(&out),
        vec![4, 1, 3, 2, 0],
    )?;
    let shorts = temp("gpu-sort-u16.npy");
    write_npy(&shorts, "<u2", "(4,)", &le_bytes(&[300u16, 65535, 0, 301]));
    on_gpu(&[
        "sort",
        shorts.to_str().unwrap(),
        "--descending",
        "--check",
        "--output",
        out_s,
    ])?;
    expect_eq("u16 descending", read::<u16>(&out), vec![65535, 301, 300, 0])?;
    // bf16 keys as their bits (--bf16-bits): 1.0, a NaN, +0.0, -1.0, a NaN with the sign bit
    // set, -0.0. Ascending: -1, -0, +0, 1, then the NaNs (after +inf whatever their sign; the
    // sign bit's last).
    let bits = [0x3f80u16, 0x7f81, 0, 0xbf80, 0xff81, 0x8000];
    write_npy(&shorts, "<u2", "(6,)", &le_bytes(&bits));
    on_gpu(&[
        "sort",
        shorts.to_str().unwrap(),
        "--bf16-bits",
        "--check",
        "--output",
        out_s,
    ])?;
    expect_eq(
        "bf16 keys as bits: -1, -0, +0, 1, the NaNs in input order",
        read::<u16>(&out),
        vec![0xbf80, 0x8000, 0, 0x3f80, 0x7f81, 0xff81],
    )?;
    Ok(())
}

fn rows() -> Result<(), Stop> {
    let x = temp("gpu-rows.npy");
    write_npy(&x, "<f4", "(2, 2)", &f32_bytes(&[0.0, 3f32.ln(), 5.0, 5.0]));
    let out = temp("gpu-rows-out.npy");
    let args = [
        "rows",
        x.to_str().unwrap(),
        "--op",
        "softmax",
        "--check",
        "--output",
        out.to_str().unwrap(),
    ];
    on_gpu(&args)?;
    let y = gpu_primitives_cli::npy::open_matrix(&out).unwrap();
    expect_eq("shape", y.shape.clone(), vec![2, 2])?;
    let y: Vec<f32> = y.read(&indicatif::ProgressBar::hidden()).unwrap();
    let expected = [0.25f32, 0.75, 0.5, 0.5];
    let close = y.iter().zip(&expected).all(|(a, b)| (a - b).abs() <= 1e-6);
    expect_eq(&format!("softmax rows {y:?}"), close, true)?;
    // The backward at dy = the identity rows: y (e - y . e), worked out by hand.
    let dy = temp("gpu-rows-dy.npy");
    write_npy(&dy, "<f4", "(2, 2)", &f32_bytes(&[1.0, 0.0, 0.0, 1.0]));
    let dy = dy.to_str().unwrap();
    let out_s = out.to_str().unwrap();
    on_gpu(&[
        "rows",
        x.to_str().unwrap(),
        "--op",
        "softmax",
        "--grad",
        dy,
        "--check",
        "--output",
        out_s,
    ])?;
    let dx: Vec<f32> = read_matrix(&out);
    let expected = [0.1875f32, -0.1875, -0.25, 0.25];
    let close = dx.iter().zip(&expected).all(|(a, b)| (a - b).abs() <= 1e-6);
    expect_eq(&format!("softmax backward {dx:?}"), close, true)?;
    // Cross-entropy of `x` with the targets' file, its gradient written to `grad`, checked.
    let cross_entropy = |x: &Path, targets: &Path, grad: &Path, extra: &[&str]| {
        let mut args = vec![
            "rows",
            x.to_str().unwrap(),
            "--op",
            "cross-entropy",
            "--targets",
            targets.to_str().unwrap(),
            "--logits-grad",
            grad.to_str().unwrap(),
            "--check",
        ];
        args.extend(extra);
        on_gpu(&args)
    };
    // Every op's backward on 64 rows of 1000 (f32) and of 33 (f16), against the command's
    // reference.
    for (descr, rows, cols, kind) in [
        ("<f4", 64, 1000, "f32"),
        ("<f2", 64, 33, "f16"),
        ("<u2", 16, 4099, "bf16"),
    ] {
        let n = rows * cols;
        let values = |seed: u64, scale: f32| -> Vec<f32> {
            words(n, seed)
                .iter()
                .map(|&w| (w as f32 / 4294967296.0 - 0.5) * scale)
                .collect()
        };
        let encode = |v: Vec<f32>| -> Vec<u8> {
            match kind {
                "f32" => le_bytes(&v),
                "f16" => le_bytes(&v.iter().map(|&f| half::f16::from_f32(f)).collect::<Vec<_>>()),
                _ => le_bytes(
                    &v.iter()
                        .map(|&f| half::bf16::from_f32(f).to_bits())
                        .collect::<Vec<_>>(),
                ),
            }
        };
        let (x, dy) = (
            temp(&format!("gpu-rows-x-{kind}.npy")),
            temp(&format!("gpu-rows-dy-{kind}.npy")),
        );
        let shape = format!("({rows}, {cols})");
        write_npy(&x, descr, &shape, &encode(values(5, 16.0)));
        write_npy(&dy, descr, &shape, &encode(values(6, 2.0)));
        for op in ["softmax", "log-softmax", "layer-norm", "rms-norm"] {
            // Every element within its bound.
            let within = |args: &[&str]| -> Result<(), Stop> {
                let stdout = on_gpu(args)?;
                expect_eq(
                    &format!("{op}: {stdout}"),
                    stdout.contains(&format!("0 of {n} outside")),
                    true,
                )
            };
            let mut args = vec!["rows", x.to_str().unwrap(), "--op", op, "--check"];
            if kind == "bf16" {
                args.push("--bf16-bits");
                // The forward too: the bits read and written as bf16.
                within(&args)?;
            }
            args.extend(["--grad", dy.to_str().unwrap()]);
            within(&args)?;
        }
        // Cross-entropy's losses and its fused gradient (every fifth row ignored), each within
        // its bound.
        let targets = temp(&format!("gpu-rows-targets-{kind}.npy"));
        let classes: Vec<i64> = (0..rows as i64)
            .map(|r| if r % 5 == 4 { -100 } else { r * 7 % cols as i64 })
            .collect();
        write_npy(&targets, "<i8", &format!("({rows},)"), &le_bytes(&classes));
        let grad = temp(&format!("gpu-rows-ce-grad-{kind}.npy"));
        let bits: &[&str] = if kind == "bf16" { &["--bf16-bits"] } else { &[] };
        let stdout = cross_entropy(&x, &targets, &grad, bits)?;
        let all = stdout.contains(&format!("0 of {rows} outside"))
            && stdout.contains("gradient: CPU reference")
            && stdout.contains(&format!("0 of {n} outside"));
        expect_eq(&format!("cross-entropy {kind}: {stdout}"), all, true)?;
    }
    // Cross-entropy's gradient worked out by hand: row 0's softmax (1/4, 3/4) less the one-hot
    // of its target 1; row 1 ignored (-100): zeros.
    let targets = temp("gpu-rows-targets.npy");
    write_npy(&targets, "<i8", "(2,)", &le_bytes(&[1i64, -100]));
    cross_entropy(&x, &targets, &out, &[])?;
    let grad: Vec<f32> = read_matrix(&out);
    let expected = [0.25f32, -0.25, 0.0, 0.0];
    let close = grad.iter().zip(&expected).all(|(a, b)| (a - b).abs() <= 1e-6);
    expect_eq(&format!("cross-entropy gradient {grad:?}"), close, true)?;
    // bf16 bits in and out: rows of equal items give 0.5 (0x3f00) everywhere.
    let bits = temp("gpu-rows-bf16.npy");
    let row = |v: f32| half::bf16::from_f32(v).to_bits();
    write_npy(
        &bits,
        "<u2",
        "(2, 2)",
        &le_bytes(&[row(0.0), row(0.0), row(5.0), row(5.0)]),
    );
    let args = [
        "rows",
        bits.to_str().unwrap(),
        "--op",
        "softmax",
        "--bf16-bits",
        "--output",
        out_s,
    ];
    on_gpu(&args)?;
    expect_eq("bf16 softmax bits", read_matrix::<u16>(&out), vec![0x3f00; 4])?;
    Ok(())
}

const TESTS: &[(&str, CliTest)] = &[
    ("cli::reduce_and_scan", reduce_and_scan),
    ("cli::select_and_unique", select_and_unique),
    ("cli::run_length_encode", run_length_encode),
    ("cli::reduce_by_key", reduce_by_key),
    ("cli::histogram", histogram),
    ("cli::sort", sort),
    ("cli::rows", rows),
    ("cli::first_use", first_use),
];

/// `first-use` times every family of the registry, each by a kernel of its own, and their sum.
fn first_use() -> Result<(), Stop> {
    let stdout = on_gpu(&["first-use"])?;
    let lines: Vec<&str> = stdout.lines().collect();
    let families = gpu_primitives_abi::families::families().count();
    expect_eq("rows", lines.len(), families + 2)?;
    for family in gpu_primitives_abi::families::families() {
        let row = lines[1..=families]
            .iter()
            .find(|l| l.split_whitespace().next() == Some(family.name))
            .ok_or(format!("no row of {}:\n{stdout}", family.name))?;
        let fields: Vec<&str> = row.split_whitespace().collect();
        let kernel = fields[1];
        if !family.kernels().any(|k| k.name == kernel) {
            return Err(format!("{}: {kernel} is not its kernel", family.name).into());
        }
        for us in &fields[2..] {
            let us: f64 = us.parse().map_err(|_| format!("{row}: not a time"))?;
            if !(us > 0.0 && us < 60e6) {
                return Err(format!("{row}: {us} µs").into());
            }
        }
    }
    if !lines[families + 1].starts_with(&format!("all {families} families")) {
        return Err(format!("no total line:\n{stdout}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let trials = TESTS
        .iter()
        .map(|&(name, test)| {
            Trial::ignorable_test(name, move || match test() {
                Ok(()) => Ok(Completion::Completed),
                Err(Stop::NoGpu(why)) => Ok(Completion::ignored_with(format!("needs a CUDA GPU: {why}"))),
                Err(Stop::Failed(failed)) => Err(failed),
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
