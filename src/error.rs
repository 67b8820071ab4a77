//! Errors and exit codes.
//!
//! Bad input (a value the user typed, a path that does not exist) is a
//! [`UsageError`]: one line, exit code 2. Anything that fails at run time (a
//! syscall refused, a file that cannot be written) exits with code 1 and the
//! whole context chain. A layer above whose own error type is bad input
//! too says so with [`count_as_input`]: this file names no other layer.

use std::any::TypeId;
use std::error::Error;
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// Exit code for bad input.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a failure while running.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code of `fleet report` when it flags machines (outliers, rare
/// kinds, drift), so a check after maintenance can gate on it.
pub const EXIT_FLAGGED: i32 = 3;

/// Input the user can correct; the message names the bad value and what is
/// allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Builds a usage error as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// Whether one cause of an error is of a given type.
type IsA = fn(&(dyn Error + 'static)) -> bool;

/// The error types besides [`UsageError`] that are bad input, as their
/// layers declared them.
static INPUT_TYPES: Mutex<Vec<(TypeId, IsA)>> = Mutex::new(Vec::new());

/// Declares every `E` in an error's chain bad input, as a [`UsageError`]
/// is: exit code 2. The layer that raises `E` calls it before its first
/// `E` can reach [`exit_code`]; a second call changes nothing.
pub fn count_as_input<E: Error + 'static>() {
    let mut types = INPUT_TYPES.lock().unwrap_or_else(PoisonError::into_inner);
    if !types.iter().any(|(t, _)| *t == TypeId::of::<E>()) {
        types.push((TypeId::of::<E>(), |cause| cause.is::<E>()));
    }
}

/// The exit code for an error: 2 when any cause is bad input.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    let input = INPUT_TYPES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let is_usage = err
        .chain()
        .any(|cause| cause.is::<UsageError>() || input.iter().any(|(_, is_a)| is_a(cause)));
    if is_usage { EXIT_USAGE } else { EXIT_FAILURE }
}

/// One line: the context chain joined with ": ", without line breaks, and
/// with any other control character from an input (a path, a file's value)
/// made visible rather than sent to the terminal.
pub fn one_line(err: &anyhow::Error) -> String {
    let text = format!("{err:#}").replace('\n', " ");
    crate::text::escape(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn usage_errors_exit_2_even_under_context() {
        let e: anyhow::Error = Err::<(), _>(usage("node 3 does not exist"))
            .context("while reading --node")
            .unwrap_err();
        assert_eq!(exit_code(&e), EXIT_USAGE);
        assert_eq!(one_line(&e), "while reading --node: node 3 does not exist");
        assert_eq!(exit_code(&anyhow::anyhow!("mbind failed")), EXIT_FAILURE);
    }

    #[derive(Debug)]
    struct Declared;

    impl fmt::Display for Declared {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a capture that is no capture")
        }
    }

    impl Error for Declared {}

    #[test]
    fn a_declared_type_is_input_once_declared() {
        let e = || anyhow::Error::new(Declared).context("while reading the topology");
        assert_eq!(exit_code(&e()), EXIT_FAILURE);
        count_as_input::<Declared>();
        count_as_input::<Declared>();
        assert_eq!(exit_code(&e()), EXIT_USAGE);
        let declared = INPUT_TYPES.lock().unwrap();
        let declared = declared
            .iter()
            .filter(|(t, _)| *t == TypeId::of::<Declared>());
        assert_eq!(declared.count(), 1);
    }
}
