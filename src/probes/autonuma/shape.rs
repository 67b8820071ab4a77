//! The shape of one AutoNUMA test: its processes, their threads and their
//! memory, which the test's plan and its baselines' placement both follow.

/// Processes, threads and memory of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub processes: usize,
    /// Threads per process.
    pub threads: usize,
    /// Memory per process (M).
    pub mem_bytes: u64,
    /// M split into one part per thread, else shared by the process's
    /// threads.
    pub per_thread: bool,
}

impl Shape {
    /// Memory of the whole test.
    pub fn total_bytes(&self) -> u64 {
        self.mem_bytes * self.processes as u64
    }

    /// Bytes one thread clears per loop: its own part, or the whole shared
    /// memory of its process.
    pub fn bytes_per_thread_pass(&self) -> u64 {
        if self.per_thread {
            self.mem_bytes / self.threads as u64
        } else {
            self.mem_bytes
        }
    }
}
