//! NCCL's collectives on the library's device views: all-reduce and all-gather. Each call
//! returns when the collective has run on this rank (or with an error: see [`Communicator`]).

use crate::communicator::Communicator;
use crate::error::{Error, Result};
use crate::nccl::NcclType;
use cudarc::nccl::sys;
use gpu_primitives::CallOn;
use gpu_primitives::device::{DeviceView, DeviceViewMut};

/// The element-wise reduction of an all-reduce (NCCL's `ncclRedOp_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `a + b` (in NCCL's order, which is not fixed: floats may differ in the last bits from
    /// run to run and from a sequential sum).
    Sum,
    /// The smaller (NCCL's: how a NaN compares is NCCL's, not the library's `Min`).
    Min,
    /// The larger (as `Min`).
    Max,
}

impl ReduceOp {
    fn nccl(self) -> sys::ncclRedOp_t {
        match self {
            Self::Sum => sys::ncclRedOp_t::ncclSum,
            Self::Min => sys::ncclRedOp_t::ncclMin,
            Self::Max => sys::ncclRedOp_t::ncclMax,
        }
    }
}

/// Replace `data` on every rank by the element-wise reduction of every rank's `data` (NCCL's
/// `ncclAllReduce`, in place): every rank's view has the same length.
///
/// # Errors
/// [`Error::InvalidArgument`] for a stream of another GPU; [`Error::Gpu`] for a view of another
/// GPU's memory (or a cudarc view borrowed for another stream); as [`Communicator`] says.
pub fn all_reduce<'a, 'g, T: NcclType>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    data: impl Into<DeviceViewMut<'a, T>>,
    op: ReduceOp,
) -> Result<()> {
    let (on, data) = (on.into(), data.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "all_reduce")?;
        data.check_usable_on(on, "all_reduce: data")?;
        if comm.world_size() == 1 || data.is_empty() {
            // Nothing to exchange: the call still returns once earlier work on the stream (which
            // wrote `data`) has run, as it does where NCCL runs.
            return Ok(on.stream().synchronize()?);
        }
        let address = data.address();
        comm.collective(&on, "ncclAllReduce", |raw, stream| {
            // SAFETY: `data` holds `len` elements of T on the communicator's GPU (its view's borrow
            // keeps it alive and unaliased until the call has waited for the collective).
            unsafe {
                sys::ncclAllReduce(
                    address as *const _,
                    address as *mut _,
                    data.len(),
                    T::DATA_TYPE,
                    op.nccl(),
                    raw,
                    stream,
                )
            }
        })
    })
}

/// Gather every rank's `send` into `recv` on every rank, in rank order: `recv` holds
/// `world_size * send.len()` elements, rank `r`'s at `r * send.len()` (NCCL's `ncclAllGather`).
///
/// # Errors
/// [`Error::InvalidArgument`] for a `recv` of another length or a stream of another GPU;
/// [`Error::Gpu`] for a view of another GPU's memory; as [`Communicator`] says.
pub fn all_gather<'a, 'b, 'g, T: NcclType>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    send: impl Into<DeviceView<'a, T>>,
    recv: impl Into<DeviceViewMut<'b, T>>,
) -> Result<()> {
    let (on, send, recv) = (on.into(), send.into(), recv.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "all_gather")?;
        send.check_usable_on(on, "all_gather: send")?;
        recv.check_usable_on(on, "all_gather: recv")?;
        let expected = send.len().checked_mul(comm.world_size());
        if expected != Some(recv.len()) {
            return Err(Error::InvalidArgument(format!(
                "all_gather: recv holds {} elements, not world size {} x send's {}",
                recv.len(),
                comm.world_size(),
                send.len()
            )));
        }
        if send.is_empty() {
            return Ok(());
        }
        if comm.world_size() == 1 {
            // SAFETY: both views hold `send.len()` elements of T (checked), on this GPU; the stream
            // orders the copy after earlier work.
            unsafe {
                on.stream()
                    .copy_address(send.address(), recv.address(), send.len() * size_of::<T>())?;
            }
            return Ok(on.stream().synchronize()?);
        }
        gather_raw::<T>(comm, &on, send.address(), recv.address(), send.len())
    })
}

/// `ncclAllGather` of `count` elements of T from device address `send` into `recv` (which holds
/// `world_size * count`; the two may overlap as NCCL allows: `send` at rank's place in `recv`).
pub(crate) fn gather_raw<T: NcclType>(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    send: u64,
    recv: u64,
    count: usize,
) -> Result<()> {
    comm.collective(on, "ncclAllGather", |raw, stream| {
        // SAFETY: the callers give `count` elements at `send` and `world_size * count` at `recv`,
        // on the communicator's GPU, alive until the call has waited for the collective.
        unsafe { sys::ncclAllGather(send as *const _, recv as *mut _, count, T::DATA_TYPE, raw, stream) }
    })
}

/// Every rank's verdict on its own arguments, gathered with its `words` (as many on every rank)
/// in one all-gather: `Ok(Ok((value, words)))`, every rank's words in rank order, where every rank
/// accepted its arguments (`mine` is `Ok(value)` here); otherwise the same refusal on every rank,
/// at once: this rank's own error where it refused, else [`Error::InvalidArgument`] naming the
/// first rank that did. Returned as the inner error inside [`Communicator::guarded`], such a
/// refusal leaves the communicator usable; the outer error is the all-gather's.
pub(crate) fn gather_verdicts<T>(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    what: &str,
    mine: Result<T>,
    words: &[u64],
) -> Result<Result<(T, Vec<Vec<u64>>)>> {
    let mut sent = words.to_vec();
    sent.push(mine.is_ok() as u64);
    let all = gather_words(comm, on, &sent)?;
    let value = match mine {
        Ok(value) => value,
        Err(e) => return Ok(Err(e)),
    };
    let rows: Vec<Vec<u64>> = all.chunks(sent.len()).map(|row| row.to_vec()).collect();
    if let Some(r) = rows.iter().position(|row| row[words.len()] == 0) {
        return Ok(Err(Error::InvalidArgument(format!(
            "{what}: rank {r} refused its arguments"
        ))));
    }
    Ok(Ok((
        value,
        rows.into_iter()
            .map(|mut row| {
                row.truncate(words.len());
                row
            })
            .collect(),
    )))
}

/// Every rank's `mine` (of the same length on every rank), in rank order: rank `r`'s words at
/// `r * mine.len()`. An all-gather through the communicator's kept device memory on `on`'s
/// stream; returns once the words are on the host. A world of one returns `mine`.
pub(crate) fn gather_words(comm: &mut Communicator, on: &CallOn<'_>, mine: &[u64]) -> Result<Vec<u64>> {
    let (rank, world, len) = (comm.rank(), comm.world_size(), mine.len());
    if world == 1 || len == 0 {
        return Ok(mine.to_vec());
    }
    let base = comm.words(on, world * len * size_of::<u64>())?;
    let slot = base + (rank * len * size_of::<u64>()) as u64;
    // SAFETY: `slot` starts `len` words of the kept buffer (it holds `world * len`), of this GPU;
    // nothing else uses it during the call.
    unsafe { on.stream().copy_from_host(slot, mine)? };
    gather_raw::<u64>(comm, on, slot, base, len)?;
    let mut all = vec![0u64; world * len];
    // SAFETY: the gather wrote the buffer's first `world * len` words, and has run.
    unsafe { on.stream().copy_to_host(base, &mut all)? };
    Ok(all)
}
