#!/usr/bin/env python3
"""PyTorch on the row benchmark's shapes: the lesson's framework comparison (issue 14).

Times PyTorch's sum, cumsum, softmax, log_softmax, layer_norm, rms_norm and cross_entropy over
the last dimension, and their backward, on the matrices of `bench::rows::ROW_SHAPES` (2^28
elements each) in f32 and bf16, beside a copy of the same matrix (`out.copy_(x)`) in the same
run: CUDA events, one warm-up, the median of --runs calls. `gpu-primitives bench` prints this
library's rows in the same layout (time / copy). Run on the GPU machine:

    python3 scripts/torch-rows.py [--runs 21] [--csv out.csv] [--types f32,bf16]
    python3 scripts/torch-rows.py --check path/to/gpu-primitives   # the answers agree

`--check` writes random matrices (f32 and f16; short, long, odd and prime rows) as .npy, runs
`gpu-primitives rows FILE --op OP --output OUT` on each, and compares OUT with PyTorch's answer
on the GPU: each element within `atol + rtol |torch|` (f32: 1e-6 + 1e-4, f16: 1e-4 + 2^-9); then
each op's backward (`--grad DY`, dx) against torch.autograd's at the same random dy, within
`atol max|dx| + rtol |torch|` (f32: 1e-5, 1e-4; f16: 1e-3, 2^-9; bf16: 1e-2, 2^-7). bf16 has
no NumPy type: its matrices go as their bits in u16 files (`rows --bf16-bits`); its forward
tolerance is 1e-3 + 2^-7 |torch| (two of bf16's half-ulps).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

import torch
import torch.nn.functional as F

SHAPES = [(262144, 1024), (65536, 4096), (16384, 16384), (4096, 65536), (1024, 262144)]
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def median_us(fn, runs):
    """Median time of fn() in µs over `runs` calls, each between two CUDA events, after a warm-up."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def measure(dtype_name, rows, cols, runs):
    dtype = DTYPES[dtype_name]
    gen = torch.Generator(device="cuda").manual_seed(rows)
    x = (torch.rand(rows, cols, device="cuda", generator=gen) * 16 - 8).to(dtype)
    dy = ((torch.rand(rows, cols, device="cuda", generator=gen) * 2 - 1) / 8).to(dtype)
    w = (1 + (torch.rand(cols, device="cuda", generator=gen) - 0.5) / 8).to(dtype)
    b = ((torch.rand(cols, device="cuda", generator=gen) - 0.5) / 8).to(dtype)
    target = torch.randint(0, cols, (rows,), device="cuda", generator=gen)
    out = torch.empty_like(x)
    copy = median_us(lambda: out.copy_(x), runs)
    y_soft = torch.softmax(x, -1)
    y_log = torch.log_softmax(x, -1)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [cols], w, b, 1e-5)
    xr = x.detach().requires_grad_()
    wr = w.detach().requires_grad_()
    y_rms = F.rms_norm(xr, (cols,), wr, 1e-5)
    logits = x.detach().requires_grad_()
    loss = F.cross_entropy(logits.float() if dtype != torch.float32 else logits, target)
    ops = [
        # (name, function, elements moved as multiples of the matrix)
        ("sum", lambda: x.sum(-1), 1),
        ("cumsum", lambda: torch.cumsum(x, -1), 2),
        ("softmax", lambda: torch.softmax(x, -1), 2),
        ("log_softmax", lambda: torch.log_softmax(x, -1), 2),
        ("layer_norm", lambda: F.layer_norm(x, (cols,), w, b, 1e-5), 2),
        ("rms_norm", lambda: F.rms_norm(x, (cols,), w, 1e-5), 2),
        ("cross_entropy", lambda: F.cross_entropy(x, target), 1),
        ("softmax_backward", lambda: torch.ops.aten._softmax_backward_data(dy, y_soft, -1, dtype), 3),
        ("log_softmax_backward", lambda: torch.ops.aten._log_softmax_backward_data(dy, y_log, -1, dtype), 3),
        (
            "layer_norm_backward",
            lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [cols], mean, rstd, w, b, [True, True, True]),
            3,
        ),
        ("rms_norm_backward", lambda: torch.autograd.grad(y_rms, (xr, wr), dy, retain_graph=True), 3),
        ("cross_entropy_backward", lambda: torch.autograd.grad(loss, logits, retain_graph=True), 2),
    ]
    size = x.element_size()
    n = rows * cols
    for name, fn, moved in ops:
        try:
            t = median_us(fn, runs)
        except (RuntimeError, TypeError) as e:  # an op this PyTorch lacks
            print(f"# {name} {dtype_name} {rows}x{cols}: {e}", file=sys.stderr)
            continue
        yield {
            "gpu": torch.cuda.get_device_name(),
            "framework": f"torch {torch.__version__}",
            "algorithm": f"{name} {rows}x{cols}",
            "dtype": dtype_name,
            "n": n,
            "time_us": t,
            "gb_per_s": moved * n * size / t / 1e3,
            "copy_us": copy,
            "copy_gb_per_s": 2 * n * size / copy / 1e3,
            "time_over_copy": t / copy,
        }
    del x, dy, out, y_soft, y_log, xr, y_rms, logits, loss
    torch.cuda.empty_cache()


CHECK_SHAPES = [(4096, 1000), (64, 100003), (1000, 4096), (3, 262144), (5000, 7)]
CHECK_OPS = {
    "softmax": lambda x: torch.softmax(x, -1),
    "log-softmax": lambda x: torch.log_softmax(x, -1),
    "layer-norm": lambda x: F.layer_norm(x, (x.shape[-1],), eps=1e-5),
    "rms-norm": lambda x: F.rms_norm(x, (x.shape[-1],), eps=1e-5),
}
CHECK_TOLERANCE = {"f32": (1e-6, 1e-4), "f16": (1e-4, 2.0**-9), "bf16": (1e-3, 2.0**-7)}
# Cross-entropy's loss per row (f32 whatever the logits; label smoothing 0.1, some rows ignored).
CROSS_ENTROPY_TOLERANCE = (1e-4, 1e-5)
# The backward's dx (`rows --grad`; the norms without weight): the absolute part is relative to
# the largest |dx| of the matrix, as a dx item can cancel to near 0 (LayerNorm's centred terms).
BACKWARD_TOLERANCE = {"f32": (1e-5, 1e-4), "f16": (1e-3, 2.0**-9), "bf16": (1e-2, 2.0**-7)}


def save(path, x):
    """x as .npy: bf16 as its bits in a u16 array (NumPy has no bf16; `rows --bf16-bits`)."""
    if x.dtype == torch.bfloat16:
        np.save(path, x.view(torch.int16).cpu().numpy().view(np.uint16))
    else:
        np.save(path, x.cpu().numpy())


def load(path, dtype):
    """A matrix written by `rows` (bf16: from its bits), on the GPU, as float64."""
    array = np.load(path)
    if dtype == torch.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16).cuda().double()
    return torch.from_numpy(array).cuda().double()


def type_flags(dtype):
    return ["--bf16-bits"] if dtype == torch.bfloat16 else []


def backward_check(binary, tmp, x, path, dtype_name):
    """Each op's dx at a random dy by `binary rows --grad` beside torch.autograd's; yields
    (op, largest difference, worst ratio to the tolerance)."""
    dy = (torch.rand_like(x, dtype=torch.float32) * 2 - 1).to(x.dtype)
    dy_path = os.path.join(tmp, "dy.npy")
    save(dy_path, dy)
    atol, rtol = BACKWARD_TOLERANCE[dtype_name]
    for op, torch_op in CHECK_OPS.items():
        out = os.path.join(tmp, "dx.npy")
        command = [binary, "rows", path, "--op", op, "--grad", dy_path, "--output", out] + type_flags(x.dtype)
        subprocess.run(command, check=True, capture_output=True)
        ours = load(out, x.dtype)
        xr = x.detach().requires_grad_()
        (theirs,) = torch.autograd.grad(torch_op(xr), xr, dy)
        theirs = theirs.double()
        diff = (ours - theirs).abs()
        scale = theirs.abs().max().item()
        ratio = (diff / (atol * scale + rtol * theirs.abs())).max().item()
        yield f"{op} dx", diff.max().item(), ratio


def check(binary):
    """Run `binary rows` on random matrices and compare with PyTorch (the forward operations,
    cross-entropy's loss per row, and the backward's dx of the others); returns whether all
    agree."""
    agree = True
    print(f"{'op':<12} {'type':>5} {'shape':>14} {'max |ours - torch|':>20} {'worst / tolerance':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for dtype_name, dtype in [("f32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)]:
            atol, rtol = CHECK_TOLERANCE[dtype_name]
            for rows, cols in CHECK_SHAPES:
                x = (torch.randn(rows, cols, device="cuda") * 4).to(dtype)
                path = os.path.join(tmp, "x.npy")
                save(path, x)
                for op, torch_op in CHECK_OPS.items():
                    out = os.path.join(tmp, "y.npy")
                    command = [binary, "rows", path, "--op", op, "--output", out] + type_flags(dtype)
                    subprocess.run(command, check=True, capture_output=True)
                    ours = load(out, dtype)
                    theirs = torch_op(x).double()
                    diff = (ours - theirs).abs()
                    ratio = (diff / (atol + rtol * theirs.abs())).max().item()
                    agree &= ratio <= 1.0
                    print(f"{op:<12} {dtype_name:>5} {f'{rows}x{cols}':>14} {diff.max().item():>20.3g} {ratio:>18.3f}")
                targets = torch.randint(0, cols, (rows,), device="cuda")
                targets[torch.rand(rows, device="cuda") < 0.05] = -100
                target_path = os.path.join(tmp, "t.npy")
                np.save(target_path, targets.cpu().numpy().astype(np.int64))
                out = os.path.join(tmp, "loss.npy")
                command = [binary, "rows", path, "--op", "cross-entropy", "--targets", target_path] + type_flags(dtype)
                subprocess.run(command + ["--label-smoothing", "0.1", "--output", out], check=True, capture_output=True)
                ours = torch.from_numpy(np.load(out)).cuda().double().flatten()
                theirs = F.cross_entropy(x.float(), targets, reduction="none", label_smoothing=0.1).double()
                loss_atol, loss_rtol = CROSS_ENTROPY_TOLERANCE
                diff = (ours - theirs).abs()
                ratio = (diff / (loss_atol + loss_rtol * theirs.abs())).max().item()
                agree &= ratio <= 1.0
                op = "cross-entropy"
                print(f"{op:<12} {dtype_name:>5} {f'{rows}x{cols}':>14} {diff.max().item():>20.3g} {ratio:>18.3f}")
                for op, largest, ratio in backward_check(binary, tmp, x, path, dtype_name):
                    agree &= ratio <= 1.0
                    print(f"{op:<15} {dtype_name:>5} {f'{rows}x{cols}':>14} {largest:>17.3g} {ratio:>18.3f}")
    print("the answers agree" if agree else "the answers DIFFER")
    return agree


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--types", default="f32,bf16")
    parser.add_argument("--csv")
    parser.add_argument("--check", metavar="GPU_PRIMITIVES", help="compare `GPU_PRIMITIVES rows` with PyTorch")
    args = parser.parse_args()
    if args.check:
        sys.exit(0 if check(args.check) else 1)
    rows = []
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'algorithm':<36} {'type':>5} {'time (µs)':>12} {'GB/s':>8} {'copy (µs)':>12} {'time/copy':>10}")
    for dtype_name in args.types.split(","):
        for r, c in SHAPES:
            for row in measure(dtype_name, r, c, args.runs):
                rows.append(row)
                print(
                    f"{row['algorithm']:<36} {row['dtype']:>5} {row['time_us']:>12.1f} {row['gb_per_s']:>8.0f}"
                    f" {row['copy_us']:>12.1f} {row['time_over_copy']:>10.3f}",
                    flush=True,
                )
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
