#!/usr/bin/env python3
"""Runs on the GPU machine (NumPy there): makes 1-D .npy files with NumPy, reduces, scans, selects,
uniques, run-length encodes and histograms them with
`gpu-primitives reduce/scan/select/unique/rle/histogram`, and compares with NumPy's own answers.

Usage: python3 scripts/npy-check.py PATH/TO/gpu-primitives [N]   (N defaults to 100_000_000)
Exits non-zero on a mismatch beyond the stated tolerance.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

exe = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000_000
tmp = tempfile.mkdtemp()
rng = np.random.default_rng(2026)
failures = 0


def run(*args):
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    print("$ gpu-primitives " + " ".join(args))
    print(r.stdout.strip())
    if r.returncode != 0:
        print(r.stderr.strip())
        raise SystemExit(f"exit {r.returncode}")
    return r.stdout


def gpu_value(stdout):
    return float(re.search(r"elements on [^:]*: (\S+) \(", stdout).group(1))


def report(what, found, expected, tolerance):
    global failures
    error = abs(found - expected)
    ok = error <= tolerance
    failures += not ok
    print(f"  {what}: gpu {found!r} numpy {expected!r} |error| {error:.3e} (tolerance {tolerance:.3e}) {'OK' if ok else 'MISMATCH'}")


def gpu_runs(stdout):
    return float(re.search(r"elements on [^:]*: (\d+) runs \(", stdout).group(1))


def bit_mismatches(found, expected):
    """Elements of `found` that differ bit for bit from `expected` (all of them when the lengths or
    types differ): floats compared as their bits, so NaN matches NaN and -0.0 does not match +0.0."""
    if len(found) != len(expected) or found.dtype != expected.dtype:
        return float(max(len(found), len(expected)))
    bits = np.dtype(f"u{found.dtype.itemsize}")
    return float(np.count_nonzero(found.view(bits) != expected.view(bits)))


def numpy_runs(x):
    """The runs of x as NumPy finds them: (starts, lengths). A run starts where an item differs
    from the one before (the np.flatnonzero(np.diff(x) != 0) rule, written as x[1:] != x[:-1] so
    that neither wrapping integers nor infinities change it): NaN never equals the item before,
    -0.0 equals +0.0, as in the CPU reference."""
    starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1)).astype(np.int64)
    lengths = np.diff(np.append(starts, len(x)))
    return starts, lengths


def check_rle(what, x, name):
    """`rle` and `rle --non-trivial` of x (saved as x_NAME.npy), their written .npy files compared
    with numpy_runs: the items bit for bit, the offsets and lengths (u32) exactly."""
    path = os.path.join(tmp, f"x_{name}.npy")
    np.save(path, x)
    starts, lengths = numpy_runs(x)
    out = os.path.join(tmp, f"y_{name}.npy")
    stdout = run("rle", path, "--output", out, "--check")
    report(f"{what} rle: runs (printed)", gpu_runs(stdout), float(len(starts)), 0.0)
    items, found = np.load(out), np.load(os.path.join(tmp, f"y_{name}.lengths.npy"))
    report(f"{what} rle: mismatching items", bit_mismatches(items, x[starts]), 0.0, 0.0)
    report(f"{what} rle: mismatching lengths", bit_mismatches(found, lengths.astype(np.uint32)), 0.0, 0.0)
    long = lengths > 1
    out = os.path.join(tmp, f"y_{name}_non_trivial.npy")
    stdout = run("rle", path, "--non-trivial", "--output", out, "--check")
    report(f"{what} rle --non-trivial: runs (printed)", gpu_runs(stdout), float(np.count_nonzero(long)), 0.0)
    offsets, found = np.load(out), np.load(os.path.join(tmp, f"y_{name}_non_trivial.lengths.npy"))
    report(f"{what} rle --non-trivial: mismatching offsets",
           bit_mismatches(offsets, starts[long].astype(np.uint32)), 0.0, 0.0)
    report(f"{what} rle --non-trivial: mismatching lengths",
           bit_mismatches(found, lengths[long].astype(np.uint32)), 0.0, 0.0)


# f32 on a grid: values k/4 with |k| <= 8, 10^8 of them. Every partial sum the GPU forms (per
# thread, per block, per tile) is a multiple of 1/4 far below 2^22, so it is exact in f32 in any
# grouping: the GPU's sum and scan must equal NumPy's float64 answers exactly.
x = (rng.integers(-8, 9, size=n).astype(np.float32) * np.float32(0.25))
path = os.path.join(tmp, "x_f32_grid.npy")
np.save(path, x)
report("f32 grid sum (exact)", gpu_value(run("reduce", path, "--check")), float(np.sum(x, dtype=np.float64)), 0.0)
out = os.path.join(tmp, "y_f32_grid.npy")
run("scan", path, "--output", out, "--check")
y = np.load(out)
ref = np.cumsum(x, dtype=np.float64)
report("f32 grid inclusive scan: mismatching elements", float(np.count_nonzero(y != ref)), 0.0, 0.0)
report("f32 scan length", float(len(y)), float(n), 0.0)

# f32 standard normal values: min and max are exact; the sum differs from NumPy's by rounding
# (both group the additions differently), printed for information.
x = rng.standard_normal(n, dtype=np.float32)
path = os.path.join(tmp, "x_f32_normal.npy")
np.save(path, x)
# The binary prints the shortest decimal that round-trips an f32: compare as float32, exactly.
report("f32 max", float(np.float32(gpu_value(run("reduce", path, "--op", "max")))), float(np.max(x)), 0.0)
report("f32 min", float(np.float32(gpu_value(run("reduce", path, "--op", "min")))), float(np.min(x)), 0.0)
gpu_sum = gpu_value(run("reduce", path))
exact = float(np.sum(x, dtype=np.float64))
print(f"  f32 normal sum (information): gpu {gpu_sum!r}, numpy float64 {exact!r}, numpy float32 "
      f"{float(np.sum(x))!r}; gpu relative to sum|x|: {abs(gpu_sum - exact) / float(np.sum(np.abs(x), dtype=np.float64)):.2e}")

# i64: exact.
xi = rng.integers(-10**6, 10**6, size=n, dtype=np.int64)
path = os.path.join(tmp, "x_i64.npy")
np.save(path, xi)
report("i64 sum (exact)", gpu_value(run("reduce", path)), float(np.sum(xi)), 0.0)
out = os.path.join(tmp, "y_i64.npy")
run("scan", path, "--exclusive", "--output", out)
yi = np.load(out)
expected = np.concatenate(([0], np.cumsum(xi)[:-1]))
mismatches = int(np.count_nonzero(yi != expected))
report("i64 exclusive scan mismatching elements", float(mismatches), 0.0, 0.0)

# f16 on the same grid (exact in f16), summed in f32 on the GPU: exact.
xh = (rng.integers(-8, 9, size=1_000_003) * 0.25).astype(np.float16)
path = os.path.join(tmp, "x_f16.npy")
np.save(path, xh)
report("f16 grid sum (f32 accumulation, exact)", gpu_value(run("reduce", path, "--check")),
       float(np.sum(xh, dtype=np.float64)), 0.0)

# select and unique: NumPy's boolean mask and its run heads, compared element for element.
xs = rng.standard_normal(n, dtype=np.float32)
xs[rng.integers(0, n, size=1000)] = np.nan
path = os.path.join(tmp, "x_select.npy")
np.save(path, xs)
out = os.path.join(tmp, "y_select.npy")
run("select", path, "--keep", "lt", "--value", "0.5", "--output", out, "--check")
ys = np.load(out)
expected = xs[xs < np.float32(0.5)]
report("f32 select x < 0.5: length", float(len(ys)), float(len(expected)), 0.0)
report("f32 select x < 0.5: mismatching elements", float(np.count_nonzero(ys != expected)), 0.0, 0.0)
xu = np.sort(rng.integers(0, n // 4, size=n, dtype=np.int64))
path = os.path.join(tmp, "x_unique.npy")
np.save(path, xu)
out = os.path.join(tmp, "y_unique.npy")
run("unique", path, "--output", out, "--check")
yu = np.load(out)
expected = np.unique(xu)
report("i64 unique of sorted keys: length", float(len(yu)), float(len(expected)), 0.0)
report("i64 unique of sorted keys: mismatching elements",
       float(np.count_nonzero(yu != expected)) if len(yu) == len(expected) else float(n), 0.0, 0.0)

# rle: every run's item and length, and the offsets and lengths of the runs longer than one item,
# against NumPy's runs. Sorted i32 keys with repeats (about 4 per key), then f32 runs of random
# lengths whose values repeat from run to run (neighbouring runs with equal values merge), with
# NaNs (each its own run) and zeros of both signs (one run; its item is the first zero's bits).
check_rle("i32 sorted keys", np.sort(rng.integers(0, n // 4, size=n, dtype=np.int32)), "rle_i32")
xr = np.repeat((rng.integers(-20, 21, size=n // 2) * 0.5).astype(np.float32),
               rng.geometric(0.3, size=n // 2))[:n]
xr[rng.integers(0, len(xr), size=1000)] = np.nan
zeros = np.flatnonzero(xr == 0)
xr[zeros[rng.random(len(zeros)) < 0.5]] = np.float32(-0.0)
check_rle("f32 runs", xr, "rle_f32")

# histogram: the counts (u64) against np.histogram's. NumPy's last bin includes its upper edge
# and ours excludes it, so every sample is strictly below the highest level. Even bins: f32
# uniform in [0, 1) in 256 bins over [0, 1), where x * 256 is exact, so our
# floor((x - lower) * scale) rule and NumPy's edges k / 256 put every sample in the same bin.
xh = rng.random(n, dtype=np.float32)
path = os.path.join(tmp, "x_histogram_f32.npy")
np.save(path, xh)
out = os.path.join(tmp, "y_histogram_f32.npy")
run("histogram", path, "--bins", "256", "--lower", "0", "--upper", "1", "--output", out, "--check")
counts = np.load(out)
expected, _ = np.histogram(xh, bins=256, range=(0.0, 1.0))
report("f32 histogram 256 even bins over [0, 1): bins", float(len(counts)), 256.0, 0.0)
report("f32 histogram 256 even bins over [0, 1): mismatching counts",
       bit_mismatches(counts, expected.astype(np.uint64)), 0.0, 0.0)
# Bins between levels: integer levels on i32 samples (exact comparisons on both sides); samples
# below the lowest level are counted by neither, none reaches the highest.
levels = [-1000, -300, -100, -30, -10, -3, 0, 1, 3, 10, 30, 100, 300, 1000]
xh = rng.integers(-1500, 1000, size=n, dtype=np.int32)
path = os.path.join(tmp, "x_histogram_i32.npy")
np.save(path, xh)
out = os.path.join(tmp, "y_histogram_i32.npy")
# --levels=...: a value that starts with a minus sign and holds commas needs the = form.
run("histogram", path, "--levels=" + ",".join(map(str, levels)), "--output", out, "--check")
counts = np.load(out)
expected, _ = np.histogram(xh, bins=np.array(levels))
report(f"i32 histogram {len(levels) - 1} bins between levels: bins", float(len(counts)), float(len(levels) - 1), 0.0)
report(f"i32 histogram {len(levels) - 1} bins between levels: mismatching counts",
       bit_mismatches(counts, expected.astype(np.uint64)), 0.0, 0.0)

print(f"npy-check: {'all agree' if failures == 0 else f'{failures} MISMATCHES'}")
sys.exit(1 if failures else 0)
