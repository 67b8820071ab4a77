//! The parent's side of a run: its children, and what it does when a task
//! fails, a child dies or a stop signal comes.

use super::layout::{Control, Word};
use super::outcome::{Event, GRACE};
use crate::sys::{self, ChildEnd};
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::time::{Duration, Instant};

/// The forked children.
pub(super) struct Kids {
    pub(super) pids: Vec<libc::pid_t>,
    ends: Vec<Option<ChildEnd>>,
}

impl Kids {
    pub(super) fn add(&mut self, pid: libc::pid_t) {
        self.pids.push(pid);
        self.ends.push(None);
    }

    /// Reaps children that ended; returns the first that ended badly.
    pub(super) fn poll(&mut self) -> Option<(usize, ChildEnd)> {
        let mut bad = None;
        for (i, pid) in self.pids.iter().enumerate() {
            if self.ends[i].is_some() {
                continue;
            }
            if let Ok(Some(end)) = sys::wait_child(*pid, true) {
                self.ends[i] = Some(end);
                if end != ChildEnd::Exited(0) && bad.is_none() {
                    bad = Some((i, end));
                }
            }
        }
        bad
    }

    pub(super) fn running(&self) -> bool {
        self.ends.iter().any(Option::is_none)
    }

    pub(super) fn kill_all(&self) {
        for (pid, end) in self.pids.iter().zip(&self.ends) {
            if end.is_none() {
                let _ = sys::kill(*pid, libc::SIGKILL);
            }
        }
    }

    /// Waits for every child; a second stop signal meanwhile kills them.
    pub(super) fn reap_all(&mut self) -> bool {
        let mut killed = false;
        for i in 0..self.pids.len() {
            while self.ends[i].is_none() {
                match sys::wait_child(self.pids[i], false) {
                    Ok(Some(end)) => self.ends[i] = Some(end),
                    Ok(None) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                        if crate::interrupt::stop_signals().1 >= 2 && !killed {
                            self.kill_all();
                            killed = true;
                        }
                    }
                    // ECHILD: nothing left to wait for.
                    Err(_) => self.ends[i] = Some(ChildEnd::Exited(-1)),
                }
            }
        }
        killed
    }
}

/// Why the parent stopped waiting early.
pub(super) enum Abort {
    Failed(String),
    Signal,
}

/// The parent's view of a run in progress.
pub(super) struct Parent<'a> {
    control: &'a Control,
    pub(super) kids: Kids,
    pub(super) interrupted: Option<i32>,
    pub(super) failure: Option<String>,
    grace_until: Option<Instant>,
    pub(super) killed: bool,
}

impl<'a> Parent<'a> {
    /// Before the first fork.
    pub(super) fn new(control: &'a Control) -> Self {
        Parent {
            control,
            kids: Kids {
                pids: Vec::new(),
                ends: Vec::new(),
            },
            interrupted: None,
            failure: None,
            grace_until: None,
            killed: false,
        }
    }

    /// The control block the tasks share.
    pub(super) fn control(&self) -> &'a Control {
        self.control
    }

    /// Stops every task: the stop flag, and the start gate opened so that
    /// tasks still waiting at it see the flag.
    pub(super) fn stop_all(&mut self) {
        self.control.request_stop();
        self.control.word(Word::Go).store(1, Relaxed);
        sys::futex_wake_all(self.control.word(Word::Go));
        if self.grace_until.is_none() {
            self.grace_until = Some(Instant::now() + GRACE);
        }
    }

    /// Looks for failed tasks, dead children and stop signals.
    pub(super) fn check(&mut self, on_event: &mut dyn FnMut(Event)) -> Option<Abort> {
        let (sig, count) = crate::interrupt::stop_signals();
        if count > 0 && self.interrupted.is_none() {
            self.interrupted = Some(sig);
            on_event(Event::Signal { signal: sig });
            self.stop_all();
        }
        if count >= 2 && !self.killed {
            self.kids.kill_all();
            self.killed = true;
        }
        if self.failure.is_none() && self.control.word(Word::Failed).load(Acquire) > 0 {
            let note = self.control.note().get();
            self.failure = Some(note.unwrap_or_else(|| "a task failed".into()));
            self.stop_all();
        }
        if let Some((i, end)) = self.kids.poll()
            && self.failure.is_none()
            && self.interrupted.is_none()
        {
            self.failure = Some(format!(
                "process {i} (pid {}) ended before its tasks finished: {end}",
                self.kids.pids[i]
            ));
            self.stop_all();
        }
        if self.grace_until.is_some_and(|g| Instant::now() >= g) && !self.killed {
            self.kids.kill_all();
            self.killed = true;
        }
        if let Some(f) = &self.failure {
            return Some(Abort::Failed(f.clone()));
        }
        self.interrupted.map(|_| Abort::Signal)
    }

    /// Waits until control word `w` reaches `target`.
    pub(super) fn wait_for(
        &mut self,
        w: Word,
        target: usize,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<Abort> {
        loop {
            let v = self.control.word(w).load(Relaxed);
            if v as usize >= target {
                return None;
            }
            if let Some(a) = self.check(on_event) {
                return Some(a);
            }
            if !self.kids.running() {
                return Some(Abort::Failed(
                    "every process ended before the tasks started".into(),
                ));
            }
            sys::futex_wait(self.control.word(w), v, Some(Duration::from_millis(50)));
        }
    }
}
