//! The processes one process forked, each reaped exactly once, so that no
//! pid is signalled after it was reaped (and possibly reused).

use crate::sys::{self, ChildEnd};
use std::io::ErrorKind;

#[derive(Debug, Default)]
pub(crate) struct Children {
    pids: Vec<libc::pid_t>,
    ends: Vec<Option<ChildEnd>>,
}

impl Children {
    pub(crate) fn add(&mut self, pid: libc::pid_t) -> usize {
        self.pids.push(pid);
        self.ends.push(None);
        self.pids.len() - 1
    }

    pub(crate) fn len(&self) -> usize {
        self.pids.len()
    }

    pub(crate) fn pid(&self, i: usize) -> libc::pid_t {
        self.pids[i]
    }

    pub(crate) fn end(&self, i: usize) -> Option<ChildEnd> {
        self.ends[i]
    }

    /// Reaps child `i` if it ended.
    pub(crate) fn poll(&mut self, i: usize) -> Option<ChildEnd> {
        if self.ends[i].is_none() {
            match sys::wait_child(self.pids[i], true) {
                Ok(Some(end)) => self.ends[i] = Some(end),
                Ok(None) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // ECHILD: nothing left to wait for.
                Err(_) => self.ends[i] = Some(ChildEnd::Exited(-1)),
            }
        }
        self.ends[i]
    }

    /// Reaps every child that ended; returns the first that ended other
    /// than by a clean exit, among those reaped now.
    pub(crate) fn poll_all(&mut self) -> Option<(usize, ChildEnd)> {
        let mut bad = None;
        for i in 0..self.pids.len() {
            if self.ends[i].is_some() {
                continue;
            }
            if let Some(end) = self.poll(i)
                && end != ChildEnd::Exited(0)
                && bad.is_none()
            {
                bad = Some((i, end));
            }
        }
        bad
    }

    /// Children not reaped yet.
    pub(crate) fn running(&self) -> usize {
        self.ends.iter().filter(|e| e.is_none()).count()
    }

    /// Sends `sig` to every child not reaped yet.
    pub(crate) fn signal(&self, sig: i32) {
        for (pid, end) in self.pids.iter().zip(&self.ends) {
            if end.is_none() {
                let _ = sys::kill(*pid, sig);
            }
        }
    }

    /// Waits for every child in turn; when a signal interrupts the wait,
    /// `on_signal` decides whether to kill the rest (true) first.
    pub(crate) fn reap_all(&mut self, mut on_signal: impl FnMut() -> bool) {
        for i in 0..self.pids.len() {
            while self.ends[i].is_none() {
                match sys::wait_child(self.pids[i], false) {
                    Ok(Some(end)) => self.ends[i] = Some(end),
                    Ok(None) => {}
                    Err(e) if e.kind() == ErrorKind::Interrupted => {
                        if on_signal() {
                            self.signal(libc::SIGKILL);
                        }
                    }
                    Err(_) => self.ends[i] = Some(ChildEnd::Exited(-1)),
                }
            }
        }
    }

    /// Children that ended other than by a clean exit.
    pub(crate) fn failed(&self) -> usize {
        self.ends
            .iter()
            .filter(|e| e.is_some_and(|e| e != ChildEnd::Exited(0)))
            .count()
    }
}
