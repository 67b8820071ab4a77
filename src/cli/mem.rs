//! `numabench mem`: perf's `perf bench numa mem` (2012), option for
//! option, with real processes and threads; plus where the memory went,
//! NUMA-balancing work and CPU time, and the suite (`-a`) mapped onto this
//! machine.

use super::output::{FormatArgs, SaveArgs, emit};
use crate::console::{Sink, command_line};
use crate::error::usage;
use crate::output::render::Format;
use crate::probes::mem::session;
use crate::probes::mem::suite::SuiteOptions;
use crate::probes::workload::params::RawOptions;
use crate::results::names::probe;
use crate::topology::{SysfsRoot, read_topology};
use anyhow::Result;
use clap::{ArgAction, Parser};

fn int(s: &str) -> Result<i64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number"))
}

fn uint(s: &str) -> Result<u32, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number from 0 to {}", u32::MAX))
}

/// Run perf's NUMA workload (perf bench numa mem) with its options.
///
/// Run perf's NUMA workload: P processes x T threads working on global
/// (-G, shared by all), process (-P, shared by a process's threads) and
/// thread (-T, private) memory, and print perf's metrics.
///
/// Options, long
/// names (with underscores) and defaults are perf's; each boolean also has
/// a `--no-<name>` form, as in perf. Sizes are MB of 2^20 bytes; GB in the
/// results are 10^9 bytes.
///
/// numabench adds one check perf does not make: before mapping anything it
/// adds up -G + -P x processes + -T x threads and refuses the run (exit 2)
/// when that is more than 90% of the free memory of the nodes the tasks are
/// bound to (of every usable node when some task is not bound); --all skips
/// such a suite entry with a note.
///
/// Where the figures differ from perf's: the suite's tests move the same
/// bytes at the same speed (scripts/bench-peers --peer perf --all runs
/// them side by side). With many threads on few CPUs and a short -s, one
/// loop of a thread can take most of the run (2 GiB per thread per loop in
/// 1x32-bw-thread, about 4 s on 2 CPUs): a run then does one loop per
/// thread or two, on either tool, and total-speed jumps between two levels,
/// so compare such tests at the suite's 20 s. The one known difference is
/// outside the suite: a
/// forward read-write walk without a memset (--no-data_rand_walk without
/// -Z) runs about twice as fast as perf's (15.2-15.6 vs 7.9-8.1 GB/s on -p
/// 1 -t 1 -P 512 on a 2-CPU AMD EPYC guest), because perf's loop tests for the end of the area
/// and for wrap-around at every word while numabench walks the two runs
/// of words on either side of the starting offset without a test.
#[derive(clap::Args, Debug, Default)]
#[command(args_override_self = true, infer_long_args = true)]
pub struct MemArgs {
    /// Number of processes (required).
    #[arg(short = 'p', long = "nr_proc", value_name = "N", value_parser = int, allow_negative_numbers = true)]
    pub nr_proc: Option<i64>,
    #[arg(long = "no-nr_proc", hide = true, overrides_with = "nr_proc")]
    pub no_nr_proc: bool,
    /// Number of threads per process (required).
    #[arg(short = 't', long = "nr_threads", value_name = "N", value_parser = int, allow_negative_numbers = true)]
    pub nr_threads: Option<i64>,
    #[arg(long = "no-nr_threads", hide = true, overrides_with = "nr_threads")]
    pub no_nr_threads: bool,
    /// Global memory in MB, one MAP_SHARED area used by every task [default: none].
    #[arg(short = 'G', long = "mb_global", value_name = "MB")]
    pub mb_global: Option<String>,
    #[arg(long = "no-mb_global", hide = true, overrides_with = "mb_global")]
    pub no_mb_global: bool,
    /// Process memory in MB, one private area per process shared by its
    /// threads [default: none].
    #[arg(short = 'P', long = "mb_proc", value_name = "MB")]
    pub mb_proc: Option<String>,
    #[arg(long = "no-mb_proc", hide = true, overrides_with = "mb_proc")]
    pub no_mb_proc: bool,
    /// Process memory in MB worked on under the process lock.
    ///
    /// Process memory in MB worked on under the process lock, the first
    /// part of -P, at most -P [default: none].
    #[arg(short = 'L', long = "mb_proc_locked", value_name = "MB")]
    pub mb_proc_locked: Option<String>,
    #[arg(
        long = "no-mb_proc_locked",
        hide = true,
        overrides_with = "mb_proc_locked"
    )]
    pub no_mb_proc_locked: bool,
    /// Thread memory in MB, one private area per thread [default: none].
    #[arg(short = 'T', long = "mb_thread", value_name = "MB")]
    pub mb_thread: Option<String>,
    #[arg(long = "no-mb_thread", hide = true, overrides_with = "mb_thread")]
    pub no_mb_thread: bool,
    /// Most loops each task runs [default: unlimited].
    #[arg(short = 'l', long = "nr_loops", value_name = "N", value_parser = uint)]
    pub nr_loops: Option<u32>,
    #[arg(long = "no-nr_loops", hide = true, overrides_with = "nr_loops")]
    pub no_nr_loops: bool,
    /// Most seconds to run; the first task past it stops all [default: 0 = no limit].
    #[arg(short = 's', long = "nr_secs", value_name = "SECS", value_parser = uint)]
    pub nr_secs: Option<u32>,
    #[arg(long = "no-nr_secs", hide = true, overrides_with = "nr_secs")]
    pub no_nr_secs: bool,
    /// Microseconds each loop sleeps holding the process lock [default: 0].
    #[arg(short = 'u', long = "usleep", value_name = "USECS", value_parser = uint)]
    pub usleep: Option<u32>,
    #[arg(long = "no-usleep", hide = true, overrides_with = "usleep")]
    pub no_usleep: bool,
    /// Read the data: each word is added into a running value [default: on].
    #[arg(short = 'R', long = "data_reads", overrides_with = "no_data_reads")]
    pub data_reads: bool,
    #[arg(long = "no-data_reads", hide = true)]
    pub no_data_reads: bool,
    /// Write the data: each word gets the running value + 1 [default: on].
    #[arg(short = 'W', long = "data_writes", overrides_with = "no_data_writes")]
    pub data_writes: bool,
    #[arg(long = "no-data_writes", hide = true)]
    pub no_data_writes: bool,
    /// Alternate forward and backward passes by task and loop parity
    /// [default: on].
    #[arg(
        short = 'B',
        long = "data_backwards",
        overrides_with = "no_data_backwards"
    )]
    pub data_backwards: bool,
    #[arg(long = "no-data_backwards", hide = true)]
    pub no_data_backwards: bool,
    /// Clear the data with glibc memset (bzero) instead of reading and
    /// writing it [default: off].
    #[arg(
        short = 'Z',
        long = "data_zero_memset",
        overrides_with = "no_data_zero_memset"
    )]
    pub data_zero_memset: bool,
    #[arg(long = "no-data_zero_memset", hide = true)]
    pub no_data_zero_memset: bool,
    /// Random walk: 8 KiB chunks at offsets from a 32-bit LFSR (taps 1, 5,
    /// 6, 31) [default: on].
    #[arg(
        short = 'r',
        long = "data_rand_walk",
        overrides_with = "no_data_rand_walk"
    )]
    pub data_rand_walk: bool,
    #[arg(long = "no-data_rand_walk", hide = true)]
    pub no_data_rand_walk: bool,
    /// bzero the initial allocations [default: off].
    ///
    /// bzero the initial allocations; as in perf this reaches only the
    /// shared task table, the data areas are initialised by -I [default: off].
    #[arg(short = 'z', long = "init_zero", overrides_with = "no_init_zero")]
    pub init_zero: bool,
    #[arg(long = "no-init_zero", hide = true)]
    pub no_init_zero: bool,
    /// Fill each data area with distinct words when allocated [default: on].
    ///
    /// Fill each data area with distinct words when it is allocated, which
    /// also places its pages from the allocating task [default: on].
    #[arg(short = 'I', long = "init_random", overrides_with = "no_init_random")]
    pub init_random: bool,
    #[arg(long = "no-init_random", hide = true)]
    pub no_init_random: bool,
    /// Allocate and initialise all data from node 0's CPUs with memory
    /// bound to node 0 [default: off].
    #[arg(short = '0', long = "init_cpu0", overrides_with = "no_init_cpu0")]
    pub init_cpu0: bool,
    #[arg(long = "no-init_cpu0", hide = true)]
    pub no_init_cpu0: bool,
    /// Every SECS seconds move task 0/0 to the other half and back.
    ///
    /// Every SECS seconds move task 0/0 to a CPU in the other half of the
    /// machine and back, to test convergence stability [default: 0 = off].
    #[arg(short = 'x', long = "perturb_secs", value_name = "SECS", value_parser = int, allow_negative_numbers = true)]
    pub perturb_secs: Option<i64>,
    #[arg(long = "no-perturb_secs", hide = true, overrides_with = "perturb_secs")]
    pub no_perturb_secs: bool,
    /// More detail (repeatable): PIDs, addresses, per-thread speed.
    #[arg(short = 'd', long = "show_details", action = ArgAction::Count, overrides_with = "no_show_details")]
    pub show_details: u8,
    #[arg(long = "no-show_details", hide = true)]
    pub no_show_details: bool,
    /// Run perf's test suite, mapped onto this machine (see --secs, --rw).
    #[arg(short = 'a', long = "all", action = ArgAction::Count, overrides_with = "no_all")]
    pub all: u8,
    #[arg(long = "no-all", hide = true)]
    pub no_all: bool,
    /// THP for process and thread memory: < 0 off, > 0 on, 0 default.
    ///
    /// THP for process and thread memory: < 0 MADV_NOHUGEPAGE, > 0
    /// MADV_HUGEPAGE, 0 the system default [default: 0].
    #[arg(short = 'H', long = "thp", value_name = "N", value_parser = int, allow_negative_numbers = true)]
    pub thp: Option<i64>,
    #[arg(long = "no-thp", hide = true, overrides_with = "thp")]
    pub no_thp: bool,
    /// Show per-node details once a second [default: off].
    ///
    /// Show once a second per node tasks/processes, the load distance, loop
    /// spread, process compression and convergence events [default: off].
    #[arg(
        short = 'c',
        long = "show_convergence",
        overrides_with = "no_show_convergence"
    )]
    pub show_convergence: bool,
    #[arg(long = "no-show_convergence", hide = true)]
    pub no_show_convergence: bool,
    /// Stop at NUMA convergence and report its latency [default: off].
    ///
    /// Stop at NUMA convergence (every process on one node) and report the
    /// convergence latency [default: off].
    #[arg(
        short = 'm',
        long = "measure_convergence",
        // perf reads --ma as this; the shared --markdown would make it
        // ambiguous.
        alias = "ma",
        overrides_with = "no_measure_convergence"
    )]
    pub measure_convergence: bool,
    #[arg(long = "no-measure_convergence", hide = true)]
    pub no_measure_convergence: bool,
    /// Quiet: only perf's 'name, value, unit, metric' lines (and '#' notes).
    #[arg(short = 'q', long = "quiet", overrides_with = "no_quiet")]
    pub quiet: bool,
    #[arg(long = "no-quiet", hide = true)]
    pub no_quiet: bool,
    /// Release all tasks together after they allocated their memory
    /// [default: on].
    #[arg(
        short = 'S',
        long = "serialize-startup",
        overrides_with = "no_serialize_startup"
    )]
    pub serialize_startup: bool,
    #[arg(long = "no-serialize-startup", hide = true)]
    pub no_serialize_startup: bool,
    /// Bind the first tasks to CPUs: N, N-END, #STEP, _LEN (LEN CPUs from
    /// N), xMUL (repeat), comma-separated, e.g. 0,8 or 0-6#2 or 0x4; the
    /// other tasks may use every CPU.
    // perf reads --c as --cpus; the shared --csv would make it ambiguous.
    #[arg(short = 'C', long = "cpus", alias = "c", value_name = "LIST")]
    pub cpus: Option<String>,
    /// Bind the first tasks' memory to nodes, same syntax without _LEN,
    /// e.g. 0 or 1x2 or 1,0.
    #[arg(short = 'M', long = "memnodes", value_name = "LIST")]
    pub memnodes: Option<String>,
    /// With --all: run every test for SECS seconds.
    ///
    /// With --all: run every test for SECS seconds instead of the seed's 20
    /// (bandwidth) and 100 (convergence).
    #[arg(long, value_name = "SECS", value_parser = uint)]
    pub secs: Option<u32>,
    /// With --all: real reads and writes (-R -W) instead of the seed's -Z
    /// memset; test names get '-rw'.
    #[arg(long)]
    pub rw: bool,
    /// With --all: the percent of free memory a test may map.
    ///
    /// With --all: the share of free memory a test may map, percent; larger
    /// tests are scaled down, and say so.
    #[arg(long, value_name = "PCT", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub memory_pct: u32,
    /// Begin the text with perf's own first line, for perf's parsers.
    ///
    /// Begin the text with perf's own first line, "# Running 'numa/mem'
    /// benchmark:", so scripts that read `perf bench numa mem` output read
    /// this too (STYLE: perf) [default: none].
    #[arg(long, value_name = "STYLE", value_parser = ["perf"])]
    pub banner: Option<String>,
    /// Watch where the tasks' memory is, once a second, per node.
    ///
    /// Look once a second at where the tasks' memory is, per node (as
    /// `autonuma` does: move_pages on a sample of its pages), print it after
    /// the run and keep it in the results as a series; with -c or -m also
    /// when the memory followed the tasks (each node's share of the memory
    /// within 10 points of its share of the tasks, to the end), beside the
    /// CPU side's time.
    ///
    /// With -m the run then stops once both sides
    /// converged (or at -s, or 30 s after the CPU side); the latency stays
    /// the CPU side's. -G memory is shared and not counted.
    #[arg(long)]
    pub memory_per_node: bool,
    /// With --all: print each test's arguments; run nothing.
    ///
    /// With --all: run nothing; print each test's name, a tab and the
    /// arguments it would run with here (or 'skipped: WHY'), one per line
    #[arg(long)]
    pub list: bool,
    /// The results document in another format on stdout; perf's text
    /// then goes to stderr.
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

fn pick(on: bool, off: bool, default: bool) -> bool {
    if off {
        false
    } else if on {
        true
    } else {
        default
    }
}

impl MemArgs {
    /// The options with perf's defaults and `--no-` forms applied.
    pub fn raw(&self) -> RawOptions {
        let d = RawOptions::seed_defaults();
        let s = |v: &Option<String>, no: bool| if no { None } else { v.clone() };
        RawOptions {
            nr_proc: if self.no_nr_proc {
                Some(0)
            } else {
                self.nr_proc
            },
            nr_threads: if self.no_nr_threads {
                Some(0)
            } else {
                self.nr_threads
            },
            mb_global: s(&self.mb_global, self.no_mb_global),
            mb_proc: s(&self.mb_proc, self.no_mb_proc),
            mb_proc_locked: s(&self.mb_proc_locked, self.no_mb_proc_locked),
            mb_thread: s(&self.mb_thread, self.no_mb_thread),
            nr_loops: if self.no_nr_loops {
                Some(0)
            } else {
                self.nr_loops
            },
            nr_secs: if self.no_nr_secs {
                0
            } else {
                self.nr_secs.unwrap_or(d.nr_secs)
            },
            sleep_usecs: if self.no_usleep {
                0
            } else {
                self.usleep.unwrap_or(0)
            },
            data_reads: pick(self.data_reads, self.no_data_reads, d.data_reads),
            data_writes: pick(self.data_writes, self.no_data_writes, d.data_writes),
            data_backwards: pick(
                self.data_backwards,
                self.no_data_backwards,
                d.data_backwards,
            ),
            data_zero_memset: pick(
                self.data_zero_memset,
                self.no_data_zero_memset,
                d.data_zero_memset,
            ),
            data_rand_walk: pick(
                self.data_rand_walk,
                self.no_data_rand_walk,
                d.data_rand_walk,
            ),
            init_zero: pick(self.init_zero, self.no_init_zero, d.init_zero),
            init_random: pick(self.init_random, self.no_init_random, d.init_random),
            init_cpu0: pick(self.init_cpu0, self.no_init_cpu0, d.init_cpu0),
            perturb_secs: if self.no_perturb_secs {
                0
            } else {
                self.perturb_secs.unwrap_or(0)
            },
            show_details: if self.no_show_details {
                0
            } else {
                i32::from(self.show_details)
            },
            thp: if self.no_thp {
                0
            } else {
                self.thp.unwrap_or(0)
            },
            show_convergence: pick(self.show_convergence, self.no_show_convergence, false),
            measure_convergence: pick(self.measure_convergence, self.no_measure_convergence, false),
            quiet: pick(self.quiet, self.no_quiet, false),
            serialize_startup: pick(
                self.serialize_startup,
                self.no_serialize_startup,
                d.serialize_startup,
            ),
            cpus: self.cpus.clone(),
            memnodes: self.memnodes.clone(),
        }
    }

    fn suite(&self) -> bool {
        self.all > 0 && !self.no_all
    }

    /// Workload options given alongside --all, which the suite ignores.
    fn workload_given(&self) -> bool {
        let defaults = MemArgs {
            memory_pct: self.memory_pct,
            all: self.all,
            no_all: self.no_all,
            secs: self.secs,
            rw: self.rw,
            format: self.format.clone(),
            save: self.save.clone(),
            show_details: self.show_details,
            quiet: self.quiet,
            ..MemArgs::default()
        };
        format!("{:?}", self.raw()) != format!("{:?}", defaults.raw())
    }
}

/// Parses one suite entry's arguments with the same options.
#[derive(Parser, Debug)]
#[command(name = crate::results::names::probe::MEM, args_override_self = true)]
struct SuiteEntry {
    #[command(flatten)]
    args: MemArgs,
}

/// The first line `perf bench numa mem` prints (perf 6.1), then its blank
/// line.
const PERF_BANNER: &str = "# Running 'numa/mem' benchmark:\n";

/// perf's text live on stdout, or on stderr when stdout carries the
/// document in another format; then the document saved and emitted.
pub(super) fn run(args: MemArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    args.save.check()?;
    // perf's text is mem's own format, on a terminal or not.
    let format = args.format.chosen().unwrap_or(Format::Text);
    let sink = Sink {
        to_stderr: format != Format::Text,
    };
    let command = command_line(probe::MEM);
    if args.banner.is_some() {
        sink.put(PERF_BANNER);
    }
    let outcome = if args.suite() {
        if args.workload_given() {
            return Err(usage(
                "--all runs perf's test table with its own options; of the workload options only -q and -d combine with it (use --secs, --rw, --memory-pct to adapt the suite)",
            ));
        }
        let options = SuiteOptions {
            secs: args.secs,
            rw: args.rw,
            memory_pct: args.memory_pct,
        };
        if args.list {
            crate::console::out(&crate::probes::mem::suite::listing(&topo, &options));
            return Ok(());
        }
        let parse = |argv: &[String]| {
            let argv = std::iter::once(probe::MEM).chain(argv.iter().map(String::as_str));
            SuiteEntry::try_parse_from(argv)
                .map(|e| e.args.raw())
                .map_err(|e| e.kind().to_string())
        };
        let suite = session::Suite {
            options,
            details: args.show_details,
            parse: &parse,
            memory_per_node: args.memory_per_node,
        };
        session::suite(&suite, &topo, &command, sink)?
    } else {
        if args.secs.is_some() || args.rw || args.list {
            return Err(usage(
                "--secs, --rw and --list adapt or list the suite: use them with --all",
            ));
        }
        session::single(&args.raw(), &topo, &command, sink, args.memory_per_node)?
    };
    finish(outcome, format, &args.save)
}

/// Saves and emits the document; a stopped run exits 128 + the signal, a
/// failed one with its error, after what was measured is kept.
fn finish(mut out: session::Outcome, format: Format, save: &SaveArgs) -> Result<()> {
    if out.interrupted.is_none() && out.failed.is_none() {
        out.doc.finish();
    }
    save.save(&out.doc)?;
    if format != Format::Text {
        emit(&out.doc, format)?;
    }
    if let Some(sig) = out.interrupted {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        std::process::exit(128 + sig);
    }
    match out.failed {
        Some(why) => Err(anyhow::anyhow!(
            "{why}{}",
            if save.save.is_some() {
                "; what was measured before is saved, marked incomplete"
            } else {
                ""
            }
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::mem::suite;

    #[derive(Parser, Debug)]
    #[command(args_override_self = true)]
    struct T {
        #[command(flatten)]
        a: MemArgs,
    }

    fn parse(args: &[&str]) -> RawOptions {
        let mut v = vec!["mem"];
        v.extend_from_slice(args);
        T::try_parse_from(v).unwrap().a.raw()
    }

    #[test]
    fn perf_defaults_without_options() {
        assert_eq!(parse(&[]), RawOptions::seed_defaults());
    }

    #[test]
    fn perf_style_clusters_and_no_forms() {
        let r = parse(&[
            "-p", "2", "-t", "3", "-P", " 512", "-zZ0qcm", "--thp", " 1", "--thp", "-1",
        ]);
        assert_eq!((r.nr_proc, r.nr_threads), (Some(2), Some(3)));
        assert_eq!(r.mb_proc.as_deref(), Some(" 512"));
        assert!(r.init_zero && r.data_zero_memset && r.init_cpu0 && r.quiet);
        assert!(r.show_convergence && r.measure_convergence);
        assert_eq!(r.thp, -1);
        let r = parse(&[
            "--no-data_rand_walk",
            "--no-serialize-startup",
            "--no-init_random",
        ]);
        assert!(!r.data_rand_walk && !r.serialize_startup && !r.init_random);
        let r = parse(&["--no-data_rand_walk", "-r"]);
        assert!(r.data_rand_walk);
        let r = parse(&["-r", "--no-data_rand_walk"]);
        assert!(!r.data_rand_walk);
        let r = parse(&["-dd", "-s", "20", "-l", "3", "-x", "2", "-u", "10"]);
        assert_eq!(r.show_details, 2);
        assert_eq!(
            (r.nr_secs, r.nr_loops, r.perturb_secs, r.sleep_usecs),
            (20, Some(3), 2, 10)
        );
        let r = parse(&[
            "--nr_proc",
            "4",
            "--mb_proc",
            "1",
            "--nr_sec",
            "3",
            "--no-nr_proc",
        ]);
        assert_eq!(r.nr_proc, Some(0));
        assert_eq!(r.nr_secs, 3);
    }

    #[test]
    fn every_suite_entry_parses() {
        for t in suite::tests() {
            let mut argv = vec!["mem".to_string()];
            argv.extend(t.args());
            let parsed = SuiteEntry::try_parse_from(&argv);
            assert!(parsed.is_ok(), "{}: {:?}", t.name, parsed.err());
            let raw = parsed.unwrap().args.raw();
            assert!(raw.quiet, "{}", t.name);
            assert!(raw.nr_secs == 20 || raw.nr_secs == 100, "{}", t.name);
        }
    }
}
