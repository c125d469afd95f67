//! One process per GPU: the process's place in the world from the variables launchers set, and
//! the exchange of NCCL's unique id from rank 0 to the others over TCP.
//!
//! torchrun (`torchrun --no-python --nproc-per-node 4 ./program`) sets `RANK`, `WORLD_SIZE`,
//! `LOCAL_RANK`, `MASTER_ADDR` and `MASTER_PORT`; Slurm's `srun` sets `SLURM_PROCID`,
//! `SLURM_NTASKS` and `SLURM_LOCALID`, and the job script exports `MASTER_ADDR` and
//! `MASTER_PORT`. torchrun's own store listens on `MASTER_PORT`, so rank 0 listens on the port
//! after it, or on `GPU_PRIMITIVES_RENDEZVOUS_PORT` where that is set.

use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// This process's place among the ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// Its rank, `0..world_size`.
    pub rank: usize,
    /// How many ranks there are.
    pub world_size: usize,
    /// Its rank on its node: the GPU it takes (device ordinal).
    pub local_rank: usize,
    /// Where rank 0 listens for the others (host, port); `None` where the world is one rank.
    pub rendezvous: Option<(String, u16)>,
}

impl World {
    /// The world that the launcher's variables describe (torchrun's, else Slurm's), `var(name)`
    /// giving each variable's value; a world of one rank where neither launcher's are set.
    ///
    /// The library does not read the process's environment itself: a program passes
    /// `|name| std::env::var(name).ok()`, a test a map of its own.
    ///
    /// # Errors
    /// [`Error::Environment`] for a variable that is not a number, a rank outside the world, or
    /// a world of several ranks without `MASTER_ADDR` / `MASTER_PORT`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let number = |name: &'static str| parsed::<usize>(&var, name, "a whole number");
        let (rank, world_size, local_rank) = match (number("RANK")?, number("WORLD_SIZE")?) {
            (Some(rank), Some(world)) => (rank, world, number("LOCAL_RANK")?.unwrap_or(rank)),
            (None, None) => match (number("SLURM_PROCID")?, number("SLURM_NTASKS")?) {
                (Some(rank), Some(world)) => (rank, world, number("SLURM_LOCALID")?.unwrap_or(rank)),
                _ => (0, 1, 0),
            },
            (Some(_), None) => {
                return Err(Error::Environment {
                    variable: "WORLD_SIZE",
                    problem: "not set, but RANK is".to_owned(),
                });
            }
            (None, Some(_)) => {
                return Err(Error::Environment {
                    variable: "RANK",
                    problem: "not set, but WORLD_SIZE is".to_owned(),
                });
            }
        };
        if world_size == 0 || rank >= world_size {
            return Err(Error::Environment {
                variable: "RANK",
                problem: format!("rank {rank} is not within a world of {world_size}"),
            });
        }
        if world_size == 1 {
            return Ok(Self {
                rank,
                world_size,
                local_rank,
                rendezvous: None,
            });
        }
        let missing = |variable: &'static str| Error::Environment {
            variable,
            problem: format!("not set, and the world has {world_size} ranks"),
        };
        let host = var("MASTER_ADDR").ok_or_else(|| missing("MASTER_ADDR"))?;
        let port = |name: &'static str| parsed::<u16>(&var, name, "a port");
        let port = match port("GPU_PRIMITIVES_RENDEZVOUS_PORT")? {
            Some(p) => p,
            None => {
                let master = port("MASTER_PORT")?.ok_or_else(|| missing("MASTER_PORT"))?;
                master.checked_add(1).ok_or(Error::Environment {
                    variable: "MASTER_PORT",
                    problem: "65535 leaves no port after it for the rendezvous".to_owned(),
                })?
            }
        };
        Ok(Self {
            rank,
            world_size,
            local_rank,
            rendezvous: Some((host, port)),
        })
    }
}

/// Variable `name` as a `T`, `None` where it is not set, or an error saying it is not `what`.
fn parsed<T: std::str::FromStr>(
    var: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    what: &str,
) -> Result<Option<T>> {
    var(name)
        .map(|v| {
            v.trim().parse::<T>().map_err(|_| Error::Environment {
                variable: name,
                problem: format!("{v:?} is not {what}"),
            })
        })
        .transpose()
}

/// The first bytes of each message: the crate, and its protocol's version.
const MAGIC: &[u8; 8] = b"gpuprim1";

/// Rank 0: listen on `(host, port)`, take one connection from each other rank (each says its
/// rank and the world's size, which must agree) and send each `id`; all before `deadline`.
///
/// # Errors
/// [`Error::Rendezvous`] for a bind that fails, a peer that sends something else, a rank twice;
/// [`Error::Timeout`] where a rank never connects.
pub fn serve(
    host: &str,
    port: u16,
    world_size: usize,
    id: &[u8; 128],
    deadline: Instant,
    timeout: Duration,
) -> Result<()> {
    let peer = format!("{host}:{port}");
    let failed = |problem: String| Error::Rendezvous {
        peer: peer.clone(),
        problem,
    };
    let listener = TcpListener::bind((host, port)).map_err(|e| failed(format!("binding: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| failed(e.to_string()))?;
    let mut joined = vec![false; world_size];
    joined[0] = true;
    while joined.iter().any(|j| !j) {
        match listener.accept() {
            Ok((mut stream, from)) => {
                stream
                    .set_nonblocking(false)
                    .and_then(|()| stream.set_read_timeout(Some(remaining(deadline))))
                    .map_err(|e| failed(e.to_string()))?;
                let mut hello = [0u8; 24];
                stream
                    .read_exact(&mut hello)
                    .map_err(|e| failed(format!("reading {from}'s hello: {e}")))?;
                let (rank, world) =
                    parse_hello(&hello).ok_or_else(|| failed(format!("{from} is not a rank")))?;
                if world != world_size || rank == 0 || rank >= world_size || joined[rank] {
                    return Err(failed(format!(
                        "{from} says it is rank {rank} of {world}; this is rank 0 of {world_size}{}",
                        if rank < world_size && joined[rank] {
                            ", and that rank has joined"
                        } else {
                            ""
                        }
                    )));
                }
                let mut reply = MAGIC.to_vec();
                reply.extend_from_slice(id);
                stream
                    .write_all(&reply)
                    .map_err(|e| failed(format!("sending rank {rank} the id: {e}")))?;
                joined[rank] = true;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(Error::Timeout {
                        what: "the rendezvous (rank 0 waiting for the other ranks)",
                        after: timeout,
                    });
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(failed(format!("accepting: {e}"))),
        }
    }
    Ok(())
}

/// Any rank but 0: connect to rank 0 at `(host, port)` (again until `deadline`: it may not
/// listen yet), say `rank` and `world_size`, and read the id.
///
/// # Errors
/// [`Error::Rendezvous`] for an answer that is not rank 0's; [`Error::Timeout`] where rank 0
/// never answers.
pub fn join(
    host: &str,
    port: u16,
    rank: usize,
    world_size: usize,
    deadline: Instant,
    timeout: Duration,
) -> Result<[u8; 128]> {
    let peer = format!("{host}:{port}");
    let failed = |problem: String| Error::Rendezvous {
        peer: peer.clone(),
        problem,
    };
    let timed_out = || Error::Timeout {
        what: "the rendezvous (waiting for rank 0)",
        after: timeout,
    };
    let address = (host, port)
        .to_socket_addrs()
        .map_err(|e| failed(format!("resolving: {e}")))?
        .next()
        .ok_or_else(|| failed("no address".to_owned()))?;
    let mut stream = loop {
        match TcpStream::connect_timeout(&address, remaining(deadline).min(Duration::from_secs(1))) {
            Ok(stream) => break stream,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return Err(timed_out()),
        }
    };
    stream
        .set_read_timeout(Some(remaining(deadline)))
        .map_err(|e| failed(e.to_string()))?;
    stream
        .write_all(&hello(rank, world_size))
        .map_err(|e| failed(format!("sending the hello: {e}")))?;
    let mut reply = [0u8; 8 + 128];
    stream.read_exact(&mut reply).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => timed_out(),
        _ => failed(format!("reading the id: {e}")),
    })?;
    if &reply[..8] != MAGIC {
        return Err(failed("the answer is not rank 0's".to_owned()));
    }
    let mut id = [0u8; 128];
    id.copy_from_slice(&reply[8..]);
    Ok(id)
}

/// Time left until `deadline` (at least a millisecond: a zero timeout means none to sockets).
fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

fn hello(rank: usize, world_size: usize) -> [u8; 24] {
    let mut m = [0u8; 24];
    m[..8].copy_from_slice(MAGIC);
    m[8..16].copy_from_slice(&(rank as u64).to_le_bytes());
    m[16..].copy_from_slice(&(world_size as u64).to_le_bytes());
    m
}

fn parse_hello(m: &[u8; 24]) -> Option<(usize, usize)> {
    if &m[..8] != MAGIC {
        return None;
    }
    let rank = u64::from_le_bytes(m[8..16].try_into().ok()?);
    let world = u64::from_le_bytes(m[16..].try_into().ok()?);
    Some((usize::try_from(rank).ok()?, usize::try_from(world).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn world(vars: &[(&str, &str)]) -> Result<World> {
        let vars: HashMap<String, String> =
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        World::from_vars(|k| vars.get(k).cloned())
    }

    #[test]
    fn torchrun_variables_give_the_rank_and_the_port_after_its_store() {
        let w = world(&[
            ("RANK", "3"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "node0"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap();
        assert_eq!((w.rank, w.world_size, w.local_rank), (3, 4, 1));
        assert_eq!(w.rendezvous, Some(("node0".to_owned(), 29501)));
        let w = world(&[
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "h"),
            ("MASTER_PORT", "1"),
            ("GPU_PRIMITIVES_RENDEZVOUS_PORT", "4000"),
        ])
        .unwrap();
        assert_eq!(w.rendezvous, Some(("h".to_owned(), 4000)));
    }

    #[test]
    fn slurm_variables_serve_without_torchrun_and_nothing_is_one_rank() {
        let w = world(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_LOCALID", "1"),
            ("MASTER_ADDR", "n"),
            ("MASTER_PORT", "7000"),
        ])
        .unwrap();
        assert_eq!((w.rank, w.world_size, w.local_rank), (5, 8, 1));
        let alone = world(&[]).unwrap();
        assert_eq!((alone.rank, alone.world_size, alone.rendezvous), (0, 1, None));
    }

    #[test]
    fn bad_variables_are_errors_that_name_them() {
        for (vars, variable) in [
            (vec![("RANK", "x"), ("WORLD_SIZE", "2")], "RANK"),
            (vec![("RANK", "2"), ("WORLD_SIZE", "2")], "RANK"),
            (vec![("RANK", "0")], "WORLD_SIZE"),
            (vec![("RANK", "0"), ("WORLD_SIZE", "2")], "MASTER_ADDR"),
            (
                vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h")],
                "MASTER_PORT",
            ),
            (
                vec![
                    ("RANK", "0"),
                    ("WORLD_SIZE", "2"),
                    ("MASTER_ADDR", "h"),
                    ("MASTER_PORT", "65535"),
                ],
                "MASTER_PORT",
            ),
        ] {
            match world(&vars) {
                Err(Error::Environment { variable: v, .. }) => assert_eq!(v, variable, "{vars:?}"),
                other => panic!("{vars:?}: {other:?}"),
            }
        }
    }

    /// A free port on the loopback interface.
    fn free_port() -> u16 {
        TcpListener::bind(("127.0.0.1", 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn every_rank_receives_rank_zeros_id() {
        let port = free_port();
        let id: [u8; 128] = std::array::from_fn(|i| i as u8 ^ 0x5a);
        let timeout = Duration::from_secs(20);
        let deadline = Instant::now() + timeout;
        let got: Vec<[u8; 128]> = std::thread::scope(|s| {
            let joiners: Vec<_> = (1..4)
                .map(|rank| s.spawn(move || join("127.0.0.1", port, rank, 4, deadline, timeout)))
                .collect();
            serve("127.0.0.1", port, 4, &id, deadline, timeout).unwrap();
            joiners.into_iter().map(|j| j.join().unwrap().unwrap()).collect()
        });
        assert_eq!(got, vec![id; 3]);
    }

    #[test]
    fn a_rank_that_never_comes_is_a_timeout_on_both_sides() {
        let port = free_port();
        let timeout = Duration::from_millis(300);
        let deadline = Instant::now() + timeout;
        // Rank 0 waits for ranks 1 and 2; only 1 comes.
        let served = std::thread::scope(|s| {
            let one = s.spawn(move || join("127.0.0.1", port, 1, 3, deadline, timeout));
            let served = serve("127.0.0.1", port, 3, &[7; 128], deadline, timeout);
            assert_eq!(one.join().unwrap().unwrap(), [7; 128]);
            served
        });
        assert!(matches!(served, Err(Error::Timeout { .. })), "{served:?}");
        // A rank whose rank 0 never listens.
        let port = free_port();
        let joined = join("127.0.0.1", port, 1, 2, Instant::now() + timeout, timeout);
        assert!(matches!(joined, Err(Error::Timeout { .. })), "{joined:?}");
    }

    #[test]
    fn a_rank_of_another_world_is_refused() {
        let port = free_port();
        let timeout = Duration::from_secs(10);
        let deadline = Instant::now() + timeout;
        let served = std::thread::scope(|s| {
            let stranger = s.spawn(move || join("127.0.0.1", port, 1, 3, deadline, timeout));
            let served = serve("127.0.0.1", port, 2, &[1; 128], deadline, timeout);
            let _ = stranger.join();
            served
        });
        assert!(matches!(served, Err(Error::Rendezvous { .. })), "{served:?}");
    }
}
