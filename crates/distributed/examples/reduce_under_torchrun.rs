//! One process a GPU: the sum and the largest item of an array sharded across the ranks.
//!
//! `NCCL_NVLS_ENABLE=0 torchrun --no-python --nproc-per-node 2 ./target/release/examples/reduce_under_torchrun`
//! (alone, it is a world of one rank). docs/user-guide.md, "4. Past one GPU".

use gpu_primitives::device::{DeviceVec, DeviceWorkspace, Sum};
use gpu_primitives_distributed::{self as dist, Communicator, World};

fn main() -> Result<(), dist::Error> {
    // torchrun's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (or Slurm's), read from
    // this process's environment; none set: a world of one rank, which needs no NCCL.
    let world = World::from_vars(|name| std::env::var(name).ok())?;
    let gpu = gpu_primitives::open_gpu(world.local_rank as u32)?;
    // Rank 0 gives NCCL's unique id to the others over TCP; then every rank joins NCCL's
    // communicator, each wait giving up after the timeout.
    let mut comm = Communicator::from_world(&gpu, &world, dist::DEFAULT_TIMEOUT)?;

    // This rank's shard, on its own GPU: rank r holds 1000 * (r + 1) items.
    let shard: Vec<f32> = (0..1000 * (world.rank + 1)).map(|i| (i % 97) as f32).collect();
    let d_shard = DeviceVec::from_slice(&gpu, &shard)?;
    let mut ws = DeviceWorkspace::new();

    // The whole array's sum, and its largest item with its global index: the same on every rank.
    let total = dist::reduce::<f32, Sum>(&mut comm, &gpu, &d_shard, &mut ws)?;
    let (largest, at) = dist::argmax::<f32>(&mut comm, &gpu, &d_shard, &mut ws)?.expect("not empty");
    if comm.rank() == 0 {
        println!("{} ranks: sum {total}, max {largest} at {at}", comm.world_size());
    }
    Ok(())
}
