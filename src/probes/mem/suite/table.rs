//! perf's `-a` table, as data: each test's name, processes, threads,
//! memory and binding as the seed machine had them, and its option group.

/// Shared option groups of the seed's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opts {
    BwRam,
    BwRamNothp,
    Conv,
    ConvNothp,
    Bw,
    BwNothp,
}

impl Opts {
    /// The run time the seed gives the group.
    pub(crate) fn secs(self) -> u32 {
        match self {
            Opts::Conv | Opts::ConvNothp => 100,
            _ => 20,
        }
    }

    /// The group's clustered short flags: `-z` and `-Z` always, `-0` but
    /// for RAM bandwidth, `-q`, and `-c -m` for convergence.
    pub(crate) fn flags(self) -> &'static str {
        match self {
            Opts::BwRam | Opts::BwRamNothp => "-zZq",
            Opts::Conv | Opts::ConvNothp => "-zZ0qcm",
            Opts::Bw | Opts::BwNothp => "-zZ0q",
        }
    }

    /// RAM bandwidth walks its memory in order.
    pub(crate) fn no_rand_walk(self) -> bool {
        matches!(self, Opts::BwRam | Opts::BwRamNothp)
    }

    /// The `-NOTHP` variants end with `--thp -1`.
    pub(crate) fn nothp(self) -> bool {
        matches!(self, Opts::BwRamNothp | Opts::ConvNothp | Opts::BwNothp)
    }
}

/// Which memory a test works on: `-P` (per process) or `-T` (per thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Memory {
    Process,
    Thread,
}

impl Memory {
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Memory::Process => "-P",
            Memory::Thread => "-T",
        }
    }
}

/// One test of the table: its name as perf prints it (with perf's
/// alignment space and trailing comma), its shape on the seed machine and
/// its option group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Test {
    pub name: &'static str,
    pub procs: usize,
    pub threads: usize,
    pub memory: Memory,
    /// MB as the seed writes them (`" 512"` included).
    pub mb: &'static str,
    /// `-C` and `-M` on the seed machine.
    pub binding: Option<(&'static str, &'static str)>,
    pub opts: Opts,
}

impl Test {
    /// The name without alignment and comma, e.g. `1x3-convergence`.
    pub(crate) fn short_name(&self) -> &'static str {
        self.name.trim().trim_end_matches(',')
    }

    /// The seed's arguments after `mem`, in its order.
    #[cfg(test)]
    pub(crate) fn args(&self) -> Vec<String> {
        let mut v: Vec<String> = vec![
            "-p".into(),
            self.procs.to_string(),
            "-t".into(),
            self.threads.to_string(),
            self.memory.flag().into(),
            self.mb.into(),
        ];
        if let Some((c, m)) = self.binding {
            v.extend(["-C", c, "-M", m].map(String::from));
        }
        v.extend(["-s".into(), self.opts.secs().to_string()]);
        v.extend([self.opts.flags(), "--thp", " 1"].map(String::from));
        if self.opts.no_rand_walk() {
            v.push("--no-data_rand_walk".into());
        }
        if self.opts.nothp() {
            v.extend(["--thp", "-1"].map(String::from));
        }
        v
    }
}

/// The seed's table, in order.
pub(crate) fn tests() -> Vec<Test> {
    use Memory::{Process as P, Thread as T};
    use Opts::*;
    let t = |name, procs, threads, memory, mb, binding, opts| Test {
        name,
        procs,
        threads,
        memory,
        mb,
        binding,
        opts,
    };
    vec![
        t("RAM-bw-local,", 1, 1, P, "1024", Some(("0", "0")), BwRam),
        t(
            "RAM-bw-local-NOTHP,",
            1,
            1,
            P,
            "1024",
            Some(("0", "0")),
            BwRamNothp,
        ),
        t("RAM-bw-remote,", 1, 1, P, "1024", Some(("0", "1")), BwRam),
        t(
            "RAM-bw-local-2x,",
            2,
            1,
            P,
            "1024",
            Some(("0,2", "0x2")),
            BwRam,
        ),
        t(
            "RAM-bw-remote-2x,",
            2,
            1,
            P,
            "1024",
            Some(("0,2", "1x2")),
            BwRam,
        ),
        t(
            "RAM-bw-cross,",
            2,
            1,
            P,
            "1024",
            Some(("0,8", "1,0")),
            BwRam,
        ),
        t(" 1x3-convergence,", 1, 3, P, "512", None, Conv),
        t(" 1x4-convergence,", 1, 4, P, "512", None, Conv),
        t(" 1x6-convergence,", 1, 6, P, "1020", None, Conv),
        t(" 2x3-convergence,", 3, 3, P, "1020", None, Conv),
        t(" 3x3-convergence,", 3, 3, P, "1020", None, Conv),
        t(" 4x4-convergence,", 4, 4, P, "512", None, Conv),
        t(" 4x4-convergence-NOTHP,", 4, 4, P, "512", None, ConvNothp),
        t(" 4x6-convergence,", 4, 6, P, "1020", None, Conv),
        t(" 4x8-convergence,", 4, 8, P, "512", None, Conv),
        t(" 8x4-convergence,", 8, 4, P, "512", None, Conv),
        t(" 8x4-convergence-NOTHP,", 8, 4, P, "512", None, ConvNothp),
        t(" 3x1-convergence,", 3, 1, P, "512", None, Conv),
        t(" 4x1-convergence,", 4, 1, P, "512", None, Conv),
        t(" 8x1-convergence,", 8, 1, P, "512", None, Conv),
        t("16x1-convergence,", 16, 1, P, "256", None, Conv),
        t("32x1-convergence,", 32, 1, P, "128", None, Conv),
        t(" 2x1-bw-process,", 2, 1, P, "1024", None, Bw),
        t(" 3x1-bw-process,", 3, 1, P, "1024", None, Bw),
        t(" 4x1-bw-process,", 4, 1, P, "1024", None, Bw),
        t(" 8x1-bw-process,", 8, 1, P, " 512", None, Bw),
        t(" 8x1-bw-process-NOTHP,", 8, 1, P, " 512", None, BwNothp),
        t("16x1-bw-process,", 16, 1, P, "256", None, Bw),
        t(" 4x1-bw-thread,", 1, 4, T, "256", None, Bw),
        t(" 8x1-bw-thread,", 1, 8, T, "256", None, Bw),
        t("16x1-bw-thread,", 1, 16, T, "128", None, Bw),
        t("32x1-bw-thread,", 1, 32, T, "64", None, Bw),
        t(" 2x3-bw-thread,", 2, 3, P, "512", None, Bw),
        t(" 4x4-bw-thread,", 4, 4, P, "512", None, Bw),
        t(" 4x6-bw-thread,", 4, 6, P, "512", None, Bw),
        t(" 4x8-bw-thread,", 4, 8, P, "512", None, Bw),
        t(" 4x8-bw-thread-NOTHP,", 4, 8, P, "512", None, BwNothp),
        t(" 3x3-bw-thread,", 3, 3, P, "512", None, Bw),
        t(" 5x5-bw-thread,", 5, 5, P, "512", None, Bw),
        t("2x16-bw-thread,", 2, 16, P, "512", None, Bw),
        t("1x32-bw-thread,", 1, 32, P, "2048", None, Bw),
        t("numa02-bw,", 1, 32, T, "32", None, Bw),
        t("numa02-bw-NOTHP,", 1, 32, T, "32", None, BwNothp),
        t("numa01-bw-thread,", 2, 16, T, "192", None, Bw),
        t("numa01-bw-thread-NOTHP,", 2, 16, T, "192", None, BwNothp),
    ]
}
