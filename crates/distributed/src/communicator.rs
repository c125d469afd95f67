//! The communicator: which rank this is of how many, and its NCCL communicator (none in a world
//! of one rank, which needs no NCCL at all).

use crate::error::{Error, Result};
use crate::nccl::{Comm, UniqueId, progress};
use crate::rendezvous::{self, World};
use cudarc::nccl::sys;
use gpu_primitives::{CallOn, DeviceBuffer, Gpu};
use std::time::{Duration, Instant};

/// How long a collective or the rendezvous waits for every rank by default before it gives up
/// and aborts the communicator (PyTorch's default is 10 minutes; NCCL's is none).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// One rank's membership of a group of ranks, each on its own GPU: made for every GPU of one
/// process ([`Communicator::local`], one thread a rank afterwards), or by each process of a
/// launcher ([`Communicator::from_world`]: torchrun, Slurm), or alone ([`Communicator::single`]).
///
/// Its calls are collective: every rank makes the same calls in the same order, each on its own
/// shard. A call waits for the others at most [`timeout`](Self::timeout). Any error a call
/// returns on a rank of a world of several (an argument it refused, the device, NCCL, the
/// timeout) aborts that rank's communicator: every later call on it returns
/// [`Error::Aborted`], and the other ranks' calls fail or time out. Dropping it aborts it too
/// (it never blocks on a rank that is gone).
pub struct Communicator {
    rank: usize,
    world_size: usize,
    /// The GPU's context (a driver handle, as an address): calls on another GPU are refused.
    context: usize,
    comm: Option<Comm>,
    timeout: Duration,
    /// The phases of the last call that has phases, where recording (see `record_phases`).
    phases: Option<Vec<(&'static str, Duration)>>,
    /// When the phase being timed began.
    phase_began: Instant,
    /// Device memory kept between calls (see `scratch`, `words` and `samples`).
    memory: Memory,
}

/// The device memory a communicator keeps between its calls, so that a call does not allocate
/// and free it each time (an allocation of gigabytes takes milliseconds): the sort's scratch,
/// the small exchanges' words and the sort's samples. Freed with the communicator or by
/// [`Communicator::release_memory`].
#[derive(Default)]
struct Memory {
    scratch: Option<DeviceBuffer<u64>>,
    words: Option<DeviceBuffer<u64>>,
    samples: Option<DeviceBuffer<u64>>,
}

/// `slot`'s buffer, at least `bytes` long (a larger one replaces it), and its address.
fn kept(slot: &mut Option<DeviceBuffer<u64>>, on: &CallOn<'_>, bytes: usize) -> Result<u64> {
    let len = bytes.div_ceil(size_of::<u64>()).max(1);
    if slot.as_ref().is_none_or(|b| b.len() < len) {
        // The old buffer first (freeing waits for the work that used it).
        *slot = None;
        // SAFETY: the callers write what they read of it (the sort's scratch is written by the
        // local sort, the words by a copy from the host) before reading it.
        *slot = Some(unsafe { on.stream().alloc::<u64>(len)? });
    }
    Ok(slot.as_ref().expect("just set").as_device_ptr().as_raw())
}

impl Communicator {
    /// A world of one rank on `gpu`: every call is the single-GPU library's; NCCL is not loaded.
    pub fn single(gpu: &Gpu) -> Self {
        Self {
            rank: 0,
            world_size: 1,
            context: gpu.context_raw() as usize,
            comm: None,
            timeout: DEFAULT_TIMEOUT,
            phases: None,
            phase_began: Instant::now(),
            memory: Memory::default(),
        }
    }

    /// One communicator a GPU of this process, rank `r` on `gpus[r]`. Use each from a thread
    /// of its own (`std::thread::scope`): a collective returns only when every rank has made
    /// it. One GPU gives [`single`](Self::single)'s world.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no GPU or one GPU twice; [`Error::NcclUnavailable`];
    /// [`Error::Nccl`], [`Error::Timeout`] from NCCL's initialisation.
    pub fn local(gpus: &[&Gpu], timeout: Duration) -> Result<Vec<Self>> {
        let contexts: Vec<usize> = gpus.iter().map(|g| g.context_raw() as usize).collect();
        if gpus.is_empty() || (1..contexts.len()).any(|i| contexts[..i].contains(&contexts[i])) {
            return Err(Error::InvalidArgument(format!(
                "Communicator::local takes distinct GPUs, one a rank ({} given)",
                gpus.len()
            )));
        }
        if gpus.len() == 1 {
            return Ok(vec![Self::single(gpus[0]).with_timeout(timeout)]);
        }
        let deadline = Instant::now() + timeout;
        let id = UniqueId::new()?;
        let n = gpus.len();
        // One thread initialises every rank: inside one group, or each init would wait for the
        // others.
        group(|| {
            gpus.iter()
                .enumerate()
                .map(|(rank, gpu)| Comm::start(gpu, &id, rank, n))
                .collect::<Result<Vec<Comm>>>()
        })
        .and_then(|comms| {
            comms
                .into_iter()
                .zip(gpus)
                .enumerate()
                .map(|(rank, (mut comm, gpu))| {
                    comm.wait_ready("NCCL's initialisation", deadline, timeout)?;
                    Ok(Self {
                        rank,
                        world_size: n,
                        context: gpu.context_raw() as usize,
                        comm: Some(comm),
                        timeout,
                        phases: None,
                        phase_began: Instant::now(),
                        memory: Memory::default(),
                    })
                })
                .collect()
        })
    }

    /// This process's communicator on `gpu` as rank `world.rank` of `world.world_size`
    /// (usually [`World::from_vars`] over the environment torchrun or Slurm set), rank 0 giving
    /// NCCL's unique id to the others over TCP; a world of one rank needs no NCCL. The GPU is
    /// the caller's: usually the one of ordinal `world.local_rank`. Each wait gives up after
    /// `timeout` ([`DEFAULT_TIMEOUT`] is 5 minutes).
    ///
    /// # Errors
    /// [`Error::Rendezvous`], [`Error::NcclUnavailable`], [`Error::Nccl`], [`Error::Timeout`]
    /// (a rank that never joins).
    pub fn from_world(gpu: &Gpu, world: &World, timeout: Duration) -> Result<Self> {
        let Some((host, port)) = &world.rendezvous else {
            return Ok(Self::single(gpu).with_timeout(timeout));
        };
        let deadline = Instant::now() + timeout;
        let id = if world.rank == 0 {
            let id = UniqueId::new()?;
            rendezvous::serve(host, *port, world.world_size, &id.to_bytes(), deadline, timeout)?;
            id
        } else {
            UniqueId::from_bytes(rendezvous::join(
                host,
                *port,
                world.rank,
                world.world_size,
                deadline,
                timeout,
            )?)
        };
        let mut comm = Comm::start(gpu, &id, world.rank, world.world_size)?;
        comm.wait_ready("NCCL's initialisation", deadline, timeout)?;
        Ok(Self {
            rank: world.rank,
            world_size: world.world_size,
            context: gpu.context_raw() as usize,
            comm: Some(comm),
            timeout,
            phases: None,
            phase_began: Instant::now(),
            memory: Memory::default(),
        })
    }

    /// The same communicator, its calls waiting at most `timeout` for the other ranks.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether to time the phases of the calls that have them (the sorts: `counts`, `digit
    /// sort`, `splitters`, `exchange`, `final sort`), for measurements: each phase ends
    /// with a synchronisation of the call's stream (the phases run one after the other on it
    /// anyway), and [`phases`](Self::phases) gives the last call's.
    pub fn record_phases(&mut self, record: bool) {
        self.phases = record.then(Vec::new);
    }

    /// The phases of the last call that has phases and their times on this rank (the host's
    /// wall time of each, the stream synchronised at its end), where
    /// [`record_phases`](Self::record_phases) is on; empty otherwise, and after a sort in a
    /// world of one rank (the single-GPU sort: no phases).
    pub fn phases(&self) -> &[(&'static str, Duration)] {
        self.phases.as_deref().unwrap_or(&[])
    }

    /// A call with phases begins (recording: the last call's phases are cleared).
    pub(crate) fn phases_begin(&mut self) {
        if let Some(phases) = &mut self.phases {
            phases.clear();
            self.phase_began = Instant::now();
        }
    }

    /// Phase `name` of the call ends (recording: once `on`'s stream has run it).
    pub(crate) fn phase_end(&mut self, on: &CallOn<'_>, name: &'static str) -> Result<()> {
        if self.phases.is_some() {
            on.stream().synchronize()?;
            let now = Instant::now();
            let began = std::mem::replace(&mut self.phase_began, now);
            if let Some(phases) = &mut self.phases {
                phases.push((name, now - began));
            }
        }
        Ok(())
    }

    /// Free the device memory the communicator keeps between calls: the sort's scratch (a copy
    /// of the largest shard it sorted, with its values), the small exchanges' buffer and the
    /// sort's sample buffer. The next call that needs it allocates it again.
    pub fn release_memory(&mut self) {
        self.memory = Memory::default();
    }

    /// The device address of at least `bytes` bytes of scratch memory on this rank's GPU (256-byte
    /// aligned), kept for later calls; its contents are unset. Valid until the next call of
    /// `scratch` or [`release_memory`](Self::release_memory).
    pub(crate) fn scratch(&mut self, on: &CallOn<'_>, bytes: usize) -> Result<u64> {
        kept(&mut self.memory.scratch, on, bytes)
    }

    /// As [`scratch`](Self::scratch), a second buffer, for the small exchanges' words.
    pub(crate) fn words(&mut self, on: &CallOn<'_>, bytes: usize) -> Result<u64> {
        kept(&mut self.memory.words, on, bytes)
    }

    /// As [`scratch`](Self::scratch), a third buffer, for samples gathered on the device.
    pub(crate) fn samples(&mut self, on: &CallOn<'_>, bytes: usize) -> Result<u64> {
        kept(&mut self.memory.samples, on, bytes)
    }

    /// This rank, `0..world_size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the communicator has.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// How long a call waits for the other ranks.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Abort the communicator now (`ncclCommAbort`): the other ranks' calls then fail or time
    /// out, and this one's return [`Error::Aborted`]. For a rank that gives up (an error of its
    /// own between collectives).
    pub fn abort(&mut self) {
        if let Some(comm) = &mut self.comm {
            comm.abort();
        }
    }

    /// Run one of the crate's calls on this rank. An error it returns aborts the communicator
    /// (where it has one): this rank's later calls then return [`Error::Aborted`] instead of
    /// meeting the other ranks' pending collective (which would pair a call with another), and
    /// the other ranks' collectives fail or time out.
    pub(crate) fn guarded<R>(&mut self, call: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let result = call(self);
        if result.is_err() {
            self.abort();
        }
        result
    }

    /// Refuse a stream of another GPU than the communicator's.
    pub(crate) fn check_stream(&self, on: &CallOn<'_>, what: &str) -> Result<()> {
        if on.stream().context_raw() as usize != self.context {
            return Err(Error::InvalidArgument(format!(
                "{what}: the stream is of another GPU than rank {}'s communicator",
                self.rank
            )));
        }
        Ok(())
    }

    /// Queue one NCCL collective on `on`'s stream (`enqueue` makes the call), then wait for it
    /// as [`Communicator`] says. A world of one rank has no NCCL communicator: the callers do
    /// not call this there.
    pub(crate) fn collective(
        &mut self,
        on: &CallOn<'_>,
        what: &'static str,
        enqueue: impl FnOnce(sys::ncclComm_t, sys::cudaStream_t) -> sys::ncclResult_t,
    ) -> Result<()> {
        let timeout = self.timeout;
        let comm = self.comm.as_mut().ok_or_else(|| {
            Error::InvalidArgument(format!("{what}: a world of one rank has no NCCL communicator"))
        })?;
        let raw = comm.raw()?;
        on.gpu().bind()?;
        let deadline = Instant::now() + timeout;
        let code = enqueue(raw, on.stream().as_raw() as sys::cudaStream_t);
        if let Err(e) = progress(what, code, Some(raw)) {
            comm.abort();
            return Err(e);
        }
        comm.wait_stream(on.stream(), what, deadline, timeout)
    }
}

/// `calls` between `ncclGroupStart` and `ncclGroupEnd` (the end's in-progress state is waited
/// for by each communicator's [`Comm::wait_ready`]).
fn group<R>(calls: impl FnOnce() -> Result<R>) -> Result<R> {
    crate::nccl::available()?;
    // SAFETY: no arguments; paired with the end below.
    progress("ncclGroupStart", unsafe { sys::ncclGroupStart() }, None)?;
    let made = calls();
    // SAFETY: ends the group started above, whatever the calls did.
    let ended = progress("ncclGroupEnd", unsafe { sys::ncclGroupEnd() }, None);
    let made = made?;
    ended?;
    Ok(made)
}
