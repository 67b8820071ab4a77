//! The disturbance: a short, sharp load of many processes passing small
//! messages, as Rusty Russell's hackbench. Groups of senders and receivers
//! connected by Unix stream socket pairs (hackbench's default) or by pipes
//! (its `-pipe`); every sender writes `loops` messages to each receiver of
//! its group; all processes are released together and the burst's time is
//! from the release until the last of them is reaped.
//!
//! One leader process, forked by the parent at the burst time, forks and
//! reaps the burst's processes, so the parent's sampling goes on meanwhile.
//! The leader keeps the parent's SIGINT/SIGTERM handlers and their counters
//! (inherited through fork), so a stop request that arrives at any moment
//! after the fork is seen: it then kills and reaps its processes before it
//! exits. Every burst process dies with the leader (PR_SET_PDEATHSIG).

use super::children::Children;
use super::shared::{Burst, Shared};
use crate::sys::threads::CannotStart;
use crate::sys::{self, Whose};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// The burst's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurstSpec {
    pub groups: usize,
    /// Senders per group, and as many receivers.
    pub group_size: usize,
    /// Messages each sender writes to each receiver of its group.
    pub loops: usize,
    pub message_bytes: usize,
    /// What carries the messages.
    pub transport: Transport,
}

/// What connects a sender to a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A Unix stream socket pair (hackbench's default).
    Socket,
    /// A pipe (hackbench's `-pipe`).
    Pipe,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Socket => "socket",
            Transport::Pipe => "pipe",
        }
    }

    /// A connected (read end, write end).
    pub fn channel(self) -> io::Result<(File, File)> {
        match self {
            Transport::Socket => {
                let (r, w) = UnixStream::pair()?;
                Ok((File::from(OwnedFd::from(r)), File::from(OwnedFd::from(w))))
            }
            Transport::Pipe => {
                let (r, w) = io::pipe()?;
                Ok((File::from(OwnedFd::from(r)), File::from(OwnedFd::from(w))))
            }
        }
    }
}

impl BurstSpec {
    /// hackbench's shape: 20 senders and 20 receivers per group, 100
    /// messages of 100 bytes from each sender to each receiver, over socket
    /// pairs.
    pub fn hackbench(groups: usize) -> BurstSpec {
        BurstSpec {
            groups,
            group_size: 20,
            loops: 100,
            message_bytes: 100,
            transport: Transport::Socket,
        }
    }

    /// The same shape over pipes, as `hackbench -pipe`.
    pub fn hackbench_pipe(groups: usize) -> BurstSpec {
        BurstSpec {
            transport: Transport::Pipe,
            ..BurstSpec::hackbench(groups)
        }
    }

    pub fn processes(&self) -> usize {
        self.groups * 2 * self.group_size
    }

    /// Messages the whole burst moves.
    pub fn messages(&self) -> u64 {
        (self.groups * self.group_size * self.group_size * self.loops) as u64
    }
}

/// Writes `loops` rounds of `msg`, one to each of `outs` per round.
/// Returns the messages written completely, and the first error.
pub(crate) fn send<W: Write>(outs: &mut [W], loops: usize, msg: &[u8]) -> (u64, io::Result<()>) {
    let mut sent = 0;
    for _ in 0..loops {
        for w in outs.iter_mut() {
            if let Err(e) = w.write_all(msg) {
                return (sent, Err(e));
            }
            sent += 1;
        }
    }
    (sent, Ok(()))
}

/// Reads `messages` messages of `size` bytes, however the stream splits
/// them. Returns the messages read completely, and the first error (an
/// early end of stream included).
pub(crate) fn receive<R: Read>(input: &mut R, messages: u64, size: usize) -> (u64, io::Result<()>) {
    let mut buf = vec![0u8; size];
    for got in 0..messages {
        if let Err(e) = input.read_exact(&mut buf) {
            return (got, Err(e));
        }
    }
    (messages, Ok(()))
}

/// Where the burst runs.
pub(crate) struct LeaderSpec<'a> {
    pub burst: BurstSpec,
    pub shared: &'a Shared,
    /// The run's start (see `task::TaskSpec::start`).
    pub start: Instant,
    pub parent: libc::pid_t,
}

/// The body of the forked leader; never returns.
pub(crate) fn leader_main(spec: &LeaderSpec<'_>) -> ! {
    let code =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| leader(spec))).unwrap_or(101);
    sys::exit_now(code)
}

fn stop_requested() -> bool {
    crate::interrupt::stop_signals().1 > 0
}

fn leader(spec: &LeaderSpec<'_>) -> i32 {
    if sys::die_with_parent().is_err() || sys::parent_pid() != spec.parent {
        return 1;
    }
    sys::set_task_name("sched burst");
    let shared = spec.shared;
    let me = sys::own_pid();
    let mut kids = Children::default();
    let mut ok = true;
    for _ in 0..spec.burst.groups {
        if stop_requested() {
            ok = false;
            break;
        }
        if let Err(e) = group(&spec.burst, shared, me, &mut kids) {
            // The parent prints it, as its run's one error line.
            shared.note().set(&format!("burst: {e}"));
            ok = false;
            break;
        }
    }
    shared
        .burst(Burst::Forked)
        .store(kids.len() as u64, Relaxed);
    let total = kids.len() as u32;
    while ok && shared.burst_ready_count(total, Duration::from_millis(50)) < total {
        if stop_requested() || kids.poll_all().is_some() {
            ok = false;
        }
    }
    let mut wall = None;
    if ok {
        let go = Instant::now();
        shared
            .burst(Burst::GoNs)
            .store(spec.start.elapsed().as_nanos() as u64, Relaxed);
        shared.burst_go();
        kids.reap_all(stop_requested);
        wall = Some(go.elapsed());
    } else {
        kids.signal(libc::SIGKILL);
        kids.reap_all(|| false);
    }
    let complete = ok && !stop_requested() && kids.failed() == 0;
    let (own, children) = (
        sys::cpu_times_of(Whose::Own),
        sys::cpu_times_of(Whose::Children),
    );
    let us = |s: f64| (s * 1e6) as u64;
    shared
        .burst(Burst::Failed)
        .store(kids.failed() as u64, Relaxed);
    shared
        .burst(Burst::UserUs)
        .store(us(own.user_s + children.user_s), Relaxed);
    shared
        .burst(Burst::SystemUs)
        .store(us(own.system_s + children.system_s), Relaxed);
    if let Some(w) = wall {
        shared
            .burst(Burst::WallNs)
            .store(w.as_nanos() as u64, Relaxed);
    }
    shared
        .burst(Burst::Complete)
        .store(u64::from(complete), Relaxed);
    i32::from(!complete)
}

/// Forks one group: its receivers, each holding only its own channel's
/// read end, then its senders, each holding every write end.
fn group(
    spec: &BurstSpec,
    shared: &Shared,
    leader: libc::pid_t,
    kids: &mut Children,
) -> io::Result<()> {
    let n = spec.group_size;
    let total = spec.groups * n * 2;
    let fork = |kids: &Children| {
        sys::fork_single_threaded().map_err(|e| {
            let kind = e.kind();
            io::Error::new(kind, CannotStart::process(kids.len(), total, e).to_string())
        })
    };
    let mut readers = Vec::with_capacity(n);
    let mut writers = Vec::with_capacity(n);
    for _ in 0..n {
        let (r, w) = spec.transport.channel()?;
        readers.push(r);
        writers.push(w);
    }
    for i in 0..n {
        match fork(kids)? {
            None => {
                let mut input = readers.swap_remove(i);
                // This process's copies of the other ends: a receiver whose
                // senders all died then reads an end of stream, not forever.
                drop(readers);
                drop(writers);
                let messages = (n * spec.loops) as u64;
                member(
                    shared,
                    leader,
                    "sched receiver",
                    Burst::MessagesReceived,
                    || receive(&mut input, messages, spec.message_bytes),
                );
            }
            Some(pid) => {
                kids.add(pid);
            }
        }
    }
    drop(readers);
    let msg = vec![0x5a_u8; spec.message_bytes];
    for _ in 0..n {
        match fork(kids)? {
            None => member(shared, leader, "sched sender", Burst::MessagesSent, || {
                send(&mut writers, spec.loops, &msg)
            }),
            Some(pid) => {
                kids.add(pid);
            }
        }
    }
    Ok(())
}

/// A burst process: ready, wait for the release, work, count, exit.
fn member(
    shared: &Shared,
    leader: libc::pid_t,
    name: &str,
    counter: Burst,
    work: impl FnOnce() -> (u64, io::Result<()>),
) -> ! {
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::interrupt::child_signal_setup();
        if sys::die_with_parent().is_err() || sys::parent_pid() != leader {
            return 1;
        }
        sys::set_task_name(name);
        shared.burst_ready();
        shared.wait_burst_go();
        let (count, result) = work();
        shared.burst(counter).fetch_add(count, Relaxed);
        i32::from(result.is_err())
    }))
    .unwrap_or(101);
    sys::exit_now(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hackbench_shape() {
        let b = BurstSpec::hackbench(20);
        assert_eq!(b.processes(), 800);
        assert_eq!(b.messages(), 20 * 20 * 20 * 100);
    }

    /// A tiny burst on threads instead of processes: every message
    /// arrives, counted on both sides, over sockets and over pipes.
    #[test]
    fn a_tiny_group_moves_every_message() {
        for transport in [Transport::Socket, Transport::Pipe] {
            let spec = BurstSpec {
                groups: 1,
                group_size: 3,
                loops: 50,
                message_bytes: 100,
                transport,
            };
            let (sent, received) = tiny_group(&spec);
            assert_eq!(sent, spec.messages(), "{transport:?}");
            assert_eq!(received, spec.messages(), "{transport:?}");
        }
        assert_eq!(BurstSpec::hackbench_pipe(3).transport, Transport::Pipe);
        assert_eq!(BurstSpec::hackbench_pipe(3).processes(), 120);
    }

    /// Messages (sent, received) of one group run on threads.
    fn tiny_group(spec: &BurstSpec) -> (u64, u64) {
        let spec = *spec;
        let mut readers = Vec::new();
        let mut writers = Vec::new();
        for _ in 0..spec.group_size {
            let (r, w) = spec.transport.channel().unwrap();
            readers.push(r);
            writers.push(w);
        }
        std::thread::scope(|s| {
            let recv: Vec<_> = readers
                .iter_mut()
                .map(|r| {
                    s.spawn(move || {
                        receive(r, (spec.group_size * spec.loops) as u64, spec.message_bytes)
                    })
                })
                .collect();
            let send: Vec<_> = (0..spec.group_size)
                .map(|_| {
                    let mut outs: Vec<File> =
                        writers.iter().map(|w| w.try_clone().unwrap()).collect();
                    s.spawn(move || send(&mut outs, spec.loops, &[7u8; 100]))
                })
                .collect();
            let sent: u64 = send
                .into_iter()
                .map(|h| {
                    let (n, r) = h.join().unwrap();
                    r.unwrap();
                    n
                })
                .sum();
            let received: u64 = recv
                .into_iter()
                .map(|h| {
                    let (n, r) = h.join().unwrap();
                    r.unwrap();
                    n
                })
                .sum();
            (sent, received)
        })
    }

    #[test]
    fn split_messages_are_reassembled_and_a_short_stream_is_an_error() {
        // 2.5 messages of 4 bytes, arriving in odd pieces.
        let data: Vec<u8> = (0..10).collect();
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(3);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let (n, r) = receive(&mut Dribble(&data[..8]), 2, 4);
        assert_eq!(n, 2);
        assert!(r.is_ok());
        let (n, r) = receive(&mut Dribble(&data), 3, 4);
        assert_eq!(n, 2);
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_closed_receiver_stops_the_sender_with_its_count() {
        let (r, w) = Transport::Socket.channel().unwrap();
        drop(r);
        let (n, res) = send(&mut [w], 10, &[1u8; 100]);
        assert_eq!(n, 0);
        assert!(res.is_err());
    }
}
