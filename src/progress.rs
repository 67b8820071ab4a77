//! Progress of a long measurement on stderr, in one place: a spinner with
//! what is being measured where stderr is a terminal, one line per step
//! with `--verbose`, nothing otherwise (a log or a pipe gets no escape
//! codes). Never on stdout, which carries the results.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

/// Shows what is being measured; cleared when dropped.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    verbose: bool,
    ticker: Option<(Sender<()>, JoinHandle<()>)>,
}

/// Moves the spinner every `interval` until the sender is dropped. Not
/// indicatif's steady tick, which panics where the system refuses its
/// thread (a task limit): here the spinner then moves only at each step.
fn ticker(bar: &ProgressBar, interval: Duration) -> Option<(Sender<()>, JoinHandle<()>)> {
    let (tx, rx) = channel::<()>();
    let bar = bar.clone();
    let handle = crate::sys::threads::spawn((0, 1), move || {
        while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(interval) {
            bar.tick();
        }
    })
    .ok()?;
    Some((tx, handle))
}

impl Progress {
    /// A spinner on a terminal's stderr (hidden elsewhere), or with
    /// `verbose` a line per step on any stderr.
    pub(crate) fn new(verbose: bool) -> Self {
        let bar = (!verbose).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar
        });
        // A hidden spinner (stderr no terminal) needs no ticking.
        let ticker = bar
            .as_ref()
            .filter(|_| std::io::stderr().is_terminal())
            .and_then(|b| ticker(b, Duration::from_millis(200)));
        Progress {
            bar,
            verbose,
            ticker,
        }
    }

    /// A spinner on a terminal's stderr that moves only when told: no
    /// ticker thread, for a process that forks its workers (fork refuses a
    /// process with more than one thread).
    pub(crate) fn unticked() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Progress {
            bar: Some(bar),
            verbose: false,
            ticker: None,
        }
    }

    /// Says that `what` is being measured now.
    pub(crate) fn step(&self, what: &str) {
        if self.verbose {
            eprintln!("numabench: measuring {what}");
        } else if let Some(bar) = &self.bar {
            bar.set_message(what.to_string());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            drop(stop);
            let _ = handle.join();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
