#!/usr/bin/env python3
"""PyTorch's sort and topk on the segmented sort benchmark's shape (issue 13).

Times `torch.sort(x, dim=1)` (values and indices), `torch.sort(x, dim=1, stable=True)` and
`torch.topk(x, 8, dim=1)` of a 65536 x 4096 f32 matrix (`bench::sort::SEGMENTED_SHAPE`),
`torch.topk(x.view(-1), k)` of it as one array for k = 2^10 and 2^20, and
`torch.sort` of the same keys as rows of 32, 256, 384, 512, 768, 1024, 1536 and 2048 (`bench::sort::SEGMENTED_ROWS`:
the first whole rows where the length does not divide the keys), beside a
copy of it (`out.copy_(x)`) in the same run: CUDA events, one warm-up, the median of --runs
calls. `gpu-primitives bench` prints this library's segmented rows (segmented_sort_keys,
segmented_argsort, top_k) in the same layout. Run on the GPU machine:

    python3 scripts/torch-sort.py [--runs 21] [--csv out.csv]
"""
import argparse
import csv
import statistics
import sys

import torch

ROWS, COLS, K = 65536, 4096, 8
SHORT_COLS = 32


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


def whole_rows(x, cols):
    """The first whole rows of `cols` of x's elements, as a (rows, cols) view."""
    flat = x.view(-1)
    return flat[: flat.numel() // cols * cols].view(-1, cols)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    gpu = torch.cuda.get_device_name()
    x = torch.rand(ROWS, COLS, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    copy = median_us(lambda: out.copy_(x), args.runs)
    rows = []
    # The same keys as rows of 32 (bench::sort::SEGMENTED_ROWS).
    short = x.view(-1, SHORT_COLS)
    for name, fn in [
        ("torch.sort dim=1", lambda: torch.sort(x, dim=1)),
        (f"torch.sort dim=1 rows of {SHORT_COLS}", lambda: torch.sort(short, dim=1)),
        ("torch.sort dim=1 rows of 256", lambda: torch.sort(x.view(-1, 256), dim=1)),
        ("torch.sort dim=1 rows of 384", lambda: torch.sort(whole_rows(x, 384), dim=1)),
        ("torch.sort dim=1 rows of 512", lambda: torch.sort(x.view(-1, 512), dim=1)),
        ("torch.sort dim=1 rows of 768", lambda: torch.sort(whole_rows(x, 768), dim=1)),
        ("torch.sort dim=1 rows of 1024", lambda: torch.sort(x.view(-1, 1024), dim=1)),
        ("torch.sort dim=1 rows of 1536", lambda: torch.sort(whole_rows(x, 1536), dim=1)),
        ("torch.sort dim=1 rows of 2048", lambda: torch.sort(x.view(-1, 2048), dim=1)),
        ("torch.sort dim=1 stable", lambda: torch.sort(x, dim=1, stable=True)),
        (f"torch.topk k={K} dim=1", lambda: torch.topk(x, K, dim=1)),
        # The whole array's top-k (bench::sort::TOP_K_OF_ALL: top_k_of_all of the same 2^28).
        ("torch.topk k=1024 of 2^28", lambda: torch.topk(x.view(-1), 1 << 10)),
        ("torch.topk k=2^20 of 2^28", lambda: torch.topk(x.view(-1), 1 << 20)),
    ]:
        rows.append((name, median_us(fn, args.runs)))
    # The answers are what the library computes: each row sorted, the top k its last k reversed.
    values, indices = torch.sort(x, dim=1, stable=True)
    top_values, _ = torch.topk(x, K, dim=1)
    if not torch.equal(torch.gather(x, 1, indices), values) or not torch.equal(
        top_values, values[:, -K:].flip(1)
    ):
        sys.exit("torch's sort and topk disagree")
    print(f"GPU: {gpu} (PyTorch {torch.__version__}), {ROWS} x {COLS} f32")
    print(f"{'algorithm':<28} {'time (µs)':>12} {'copy (µs)':>12} {'time/copy':>10}")
    for name, time in rows:
        print(f"{name:<28} {time:>12.2f} {copy:>12.2f} {time / copy:>10.3f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["gpu", "algorithm", "dtype", "rows", "cols", "time_us", "copy_us", "time_over_copy"])
            for name, time in rows:
                w.writerow([gpu, name, "f32", ROWS, COLS, time, copy, time / copy])


if __name__ == "__main__":
    main()
