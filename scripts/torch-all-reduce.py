"""torch.distributed.all_reduce (NCCL through PyTorch) of f32, in place, timed as
`gpu-primitives dist-bench` times its all-reduce: every rank starts each call together, the call
then a synchronisation timed on the host, the median over calls of the slowest rank's time; bus
bandwidth = bytes / time x 2 (N - 1) / N (NVIDIA's nccl-tests convention).

Run on the GPU machine, one process a GPU:
    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 scripts/torch-all-reduce.py [runs] [log2 ...]
(the bytes a rank as log2; default 21 calls of 2^20, 2^24, 2^26, 2^28, 2^30 bytes). Rank 0 prints
one line a size, in dist-bench's columns, and the NCCL version PyTorch uses.
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    sizes = [int(a) for a in sys.argv[2:]] or [20, 24, 26, 28, 30]
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    # A CPU group for the start barrier, so that it adds nothing to the NCCL stream.
    start = dist.new_group(backend="gloo")
    if rank == 0:
        print(f"{world} x {torch.cuda.get_device_name(local)}; torch {torch.__version__}, "
              f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}; median of {runs} calls, slowest rank")
        print(f"{'what':<42} {'ranks':>5} {'bytes a rank':>14} {'µs':>12} {'GB/s':>10} {'bus GB/s':>10}")
    buffer = torch.zeros((1 << max(sizes)) // 4, dtype=torch.float32, device="cuda")
    for log2 in sizes:
        x = buffer[: (1 << log2) // 4]
        times = []
        for i in range(runs + 1):
            dist.barrier(group=start)
            t = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            if i > 0:
                times.append((time.perf_counter() - t) * 1e6)
        every = [None] * world
        dist.all_gather_object(every, times)
        if rank == 0:
            slowest = sorted(max(r[c] for r in every) for c in range(runs))
            micros = slowest[runs // 2]
            bytes_ = 1 << log2
            algbw = bytes_ / micros / 1e3
            bus = algbw * 2 * (world - 1) / world
            print(f"{'torch all_reduce ' + str(log2):<42} {world:>5} {bytes_:>14} {micros:>12.1f} {algbw:>10.1f} {bus:>10.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
