//! Integration tests: run the binary.
