//! No panic on any input: overflowing durations, extreme values in results
//! files, conflicting or ignored options.
