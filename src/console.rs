//! Text for the user on stdout and stderr. A failed write to stdout (a full
//! disk behind a redirect, `> /dev/full`) is remembered so the command ends
//! with exit code 1 instead of reporting success for output nobody got;
//! stderr failures are ignored, as there is nowhere left to say so.

use std::io::Write;
use std::sync::Mutex;

static STDOUT_FAILURE: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes `text` to stdout and flushes it; a failure is remembered.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        note_stdout_failure(e);
    }
}

/// Writes `text` to stderr and flushes it.
pub fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}

/// Remembers the first failed write to stdout.
pub fn note_stdout_failure(e: std::io::Error) {
    let mut slot = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(e);
    }
}

/// Flushes stdout and returns the first write failure seen, if any.
pub fn stdout_failure() -> Option<std::io::Error> {
    if let Err(e) = std::io::stdout().lock().flush() {
        note_stdout_failure(e);
    }
    STDOUT_FAILURE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}

/// Where live text goes: stdout, or stderr when stdout carries a document
/// (JSON, CSV, ...) that the text must not corrupt.
#[derive(Debug, Clone, Copy)]
pub struct Sink {
    pub to_stderr: bool,
}

impl Sink {
    pub fn put(self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.to_stderr {
            err(text);
        } else {
            out(text);
        }
    }
}

/// `numabench COMMAND ARGS...` as this process was started, from the
/// subcommand on (what perf and numa_test print as their command line).
pub fn command_line(command: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    let rest = args
        .iter()
        .position(|a| a == command)
        .map_or(&args[..0], |i| &args[i + 1..]);
    std::iter::once(format!("numabench {command}"))
        .chain(rest.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}
