//! Interruption: SIGINT/SIGTERM and killed workers keep what was measured,
//! marked incomplete, and leave no process, shared memory or temp file behind.
