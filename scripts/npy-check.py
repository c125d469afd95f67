#!/usr/bin/env python3
"""Runs on the GPU machine (NumPy there): makes 1-D .npy files with NumPy, reduces, scans, selects
and uniques them with `gpu-primitives reduce/scan/select/unique`, and compares with NumPy's own
answers.

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

print(f"npy-check: {'all agree' if failures == 0 else f'{failures} MISMATCHES'}")
sys.exit(1 if failures else 0)
