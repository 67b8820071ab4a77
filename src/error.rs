//! Errors and exit codes.
