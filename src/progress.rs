//! Progress of a long measurement on stderr, in one place: a spinner with
//! what is being measured where stderr is a terminal, one line per step
//! with `--verbose`, nothing otherwise (a log or a pipe gets no escape
//! codes). Never on stdout, which carries the results.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// Shows what is being measured; cleared when dropped.
pub struct Progress {
    bar: Option<ProgressBar>,
    verbose: bool,
}

impl Progress {
    /// A spinner on a terminal's stderr (hidden elsewhere), or with
    /// `verbose` a line per step on any stderr.
    pub fn new(verbose: bool) -> Self {
        let bar = (!verbose).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress { bar, verbose }
    }

    /// A spinner on a terminal's stderr that moves only when told: no
    /// ticker thread, for a process that forks its workers (fork refuses a
    /// process with more than one thread).
    pub fn unticked() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Progress {
            bar: Some(bar),
            verbose: false,
        }
    }

    /// Says that `what` is being measured now.
    pub fn step(&self, what: &str) {
        if self.verbose {
            eprintln!("numabench: measuring {what}");
        } else if let Some(bar) = &self.bar {
            bar.set_message(what.to_string());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
