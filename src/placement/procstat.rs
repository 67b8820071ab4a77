//! Where another process's threads run and how much CPU they used, from
//! `/proc/PID/stat` and `/proc/PID/task/TID/stat`: the cheapest way for a
//! watcher to follow tasks it does not control (one small read per task).

use std::io;

/// The fields of a `stat` line a placement watcher needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskStat {
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
pub fn parse_stat(line: &str) -> Option<TaskStat> {
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
pub fn process_stat(pid: i32) -> io::Result<TaskStat> {
    read(&format!("/proc/{pid}/stat"))
}

/// One thread of a process.
pub fn thread_stat(pid: i32, tid: i32) -> io::Result<TaskStat> {
    read(&format!("/proc/{pid}/task/{tid}/stat"))
}

/// The thread ids of a process, sorted.
pub fn thread_ids(pid: i32) -> io::Result<Vec<i32>> {
    let mut ids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Clock ticks per second (`USER_HZ`), for the tick counts above.
pub fn ticks_per_second() -> f64 {
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
    fn this_process_runs_on_an_allowed_cpu() {
        let pid = std::process::id() as i32;
        let tids = thread_ids(pid).unwrap();
        assert!(tids.contains(&pid));
        // The thread first: the process total read later can only be larger.
        let t = thread_stat(pid, tids[0]).unwrap();
        let me = process_stat(pid).unwrap();
        assert!(t.utime_ticks <= me.utime_ticks);
        let allowed = crate::placement::current_affinity().unwrap();
        assert!(allowed.contains(me.cpu), "cpu {} not allowed", me.cpu);
    }
}
