//! Where another process's threads run and how much CPU they used, from
//! `/proc/PID/stat` and `/proc/PID/task/TID/stat`: the cheapest way for a
//! watcher to follow tasks it does not control (one small read per task).

use std::io;

/// The fields of a `stat` line a placement watcher needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskStat {
    /// The CPU the task last ran on (field 39, `processor`).
    pub cpu: usize,
    /// User and system time in clock ticks (fields 14 and 15).
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    /// One-letter state (field 3): `R`, `S`, `Z`, ...
    pub state: char,
}

/// Parses one `stat` line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub(crate) fn parse_stat(line: &str) -> Option<TaskStat> {
    let rest = &line[line.rfind(')')? + 1..];
    // After ')': field 3 is index 0.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).copied();
    Some(TaskStat {
        state: field(3)?.chars().next()?,
        utime_ticks: field(14)?.parse().ok()?,
        stime_ticks: field(15)?.parse().ok()?,
        cpu: field(39)?.parse().ok()?,
    })
}

fn read(path: &str) -> io::Result<TaskStat> {
    let text = std::fs::read_to_string(path)?;
    parse_stat(&text).ok_or_else(|| io::Error::other(format!("{path}: unexpected format")))
}

/// The process as a whole: CPU time summed over its threads, `cpu` of its
/// main thread.
pub(crate) fn process_stat(pid: i32) -> io::Result<TaskStat> {
    read(&format!("/proc/{pid}/stat"))
}

/// A process's `stat` file held open for repeated looks: each look is then
/// one `pread` from offset 0 (procfs builds the line afresh on every read),
/// which costs about a third of opening the path anew each time.
pub(crate) struct StatFile {
    file: std::fs::File,
    buf: Vec<u8>,
}

impl StatFile {
    pub(crate) fn open(pid: i32) -> io::Result<StatFile> {
        Ok(StatFile {
            file: std::fs::File::open(format!("/proc/{pid}/stat"))?,
            buf: vec![0; 1024],
        })
    }

    /// The process's current `stat` line, parsed.
    pub(crate) fn read(&mut self) -> io::Result<TaskStat> {
        use std::os::unix::fs::FileExt;
        let n = loop {
            let n = self.file.read_at(&mut self.buf, 0)?;
            if n < self.buf.len() {
                break n;
            }
            // A line longer than the buffer: read it whole next time.
            self.buf.resize(self.buf.len() * 2, 0);
        };
        std::str::from_utf8(&self.buf[..n])
            .ok()
            .and_then(parse_stat)
            .ok_or_else(|| io::Error::other("stat: unexpected format"))
    }
}

/// One thread of a process.
pub(crate) fn thread_stat(pid: i32, tid: i32) -> io::Result<TaskStat> {
    read(&format!("/proc/{pid}/task/{tid}/stat"))
}

/// The thread ids of a process, sorted.
pub(crate) fn thread_ids(pid: i32) -> io::Result<Vec<i32>> {
    let mut ids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Clock ticks per second (`USER_HZ`), for the tick counts above.
pub(crate) fn ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_after_the_last_parenthesis() {
        // A command name with a space and a ')' inside, as a task may set.
        let line = "4242 (my (odd) name) R 1 4242 4242 0 -1 4194304 100 0 0 0 \
                    1234 56 0 0 20 0 3 0 999 1000000 200 18446744073709551615 \
                    1 1 0 0 0 0 0 0 0 0 0 0 17 7 0 0 0 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.state, 'R');
        assert_eq!(s.utime_ticks, 1234);
        assert_eq!(s.stime_ticks, 56);
        assert_eq!(s.cpu, 7);
    }

    #[test]
    fn a_truncated_line_is_refused() {
        assert_eq!(parse_stat("1 (x) R 1 2 3"), None);
        assert_eq!(parse_stat("no parenthesis at all"), None);
    }

    #[test]
    fn a_held_stat_file_reads_fresh_figures() {
        let pid = std::process::id() as i32;
        let mut f = StatFile::open(pid).unwrap();
        let a = f.read().unwrap();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        // Burn CPU until the kernel's tick-based figure moves.
        while t.elapsed() < std::time::Duration::from_secs(2) {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
            if f.read().unwrap().utime_ticks + f.read().unwrap().stime_ticks
                > a.utime_ticks + a.stime_ticks
            {
                return;
            }
        }
        panic!("stat figures did not change over 2 s of work");
    }

    #[test]
    fn this_process_runs_on_an_allowed_cpu() {
        let pid = std::process::id() as i32;
        let tids = thread_ids(pid).unwrap();
        assert!(tids.contains(&pid));
        // The thread first: the process total read later can only be larger.
        let t = thread_stat(pid, tids[0]).unwrap();
        let me = process_stat(pid).unwrap();
        assert!(t.utime_ticks <= me.utime_ticks);
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap();
        let allowed = crate::ids::CpuSet::parse_list(list).unwrap();
        assert!(allowed.contains(me.cpu), "cpu {} not allowed", me.cpu);
    }
}
