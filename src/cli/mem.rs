//! `numabench mem`: perf's `perf bench numa mem` (2012), option for
//! option, with real processes and threads; plus where the memory went,
//! NUMA-balancing work and CPU time, and the suite (`-a`) mapped onto this
//! machine.

use crate::error::usage;
use crate::probes::mem::suite::{self, SuiteOptions};
use crate::probes::mem::{self, Event, Params, RawOptions, Summary};
use crate::probes::mem::{records, text as out};
use crate::results::{Document, Record};
use crate::topology::{SysfsRoot, Topology, read_topology};
use anyhow::Result;
use clap::{ArgAction, Parser};
use std::path::PathBuf;

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

/// Run perf's NUMA workload: P processes x T threads working on global
/// (-G, shared by all), process (-P, shared by a process's threads) and
/// thread (-T, private) memory, and print perf's metrics. Options, long
/// names (with underscores) and defaults are perf's; each boolean also has
/// a --no-<name> form, as in perf. Sizes are MB of 2^20 bytes; GB in the
/// results are 10^9 bytes.
///
/// numabench adds one check perf does not make: before mapping anything it
/// adds up -G + -P x processes + -T x threads and refuses the run (exit 2)
/// when that is more than 90% of the free memory of the nodes the tasks are
/// bound to (of every usable node when some task is not bound); --all skips
/// such a suite entry with a note.
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
    /// bzero the initial allocations; as in perf this reaches only the
    /// shared task table, the data areas are initialised by -I [default: off].
    #[arg(short = 'z', long = "init_zero", overrides_with = "no_init_zero")]
    pub init_zero: bool,
    #[arg(long = "no-init_zero", hide = true)]
    pub no_init_zero: bool,
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
    /// THP for process and thread memory: < 0 MADV_NOHUGEPAGE, > 0
    /// MADV_HUGEPAGE, 0 the system default [default: 0].
    #[arg(short = 'H', long = "thp", value_name = "N", value_parser = int, allow_negative_numbers = true)]
    pub thp: Option<i64>,
    #[arg(long = "no-thp", hide = true, overrides_with = "thp")]
    pub no_thp: bool,
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
    /// Stop at NUMA convergence (every process on one node) and report the
    /// convergence latency [default: off].
    #[arg(
        short = 'm',
        long = "measure_convergence",
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
    #[arg(short = 'C', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// Bind the first tasks' memory to nodes, same syntax without _LEN,
    /// e.g. 0 or 1x2 or 1,0.
    #[arg(short = 'M', long = "memnodes", value_name = "LIST")]
    pub memnodes: Option<String>,
    /// With --all: run every test for SECS seconds instead of the seed's 20
    /// (bandwidth) and 100 (convergence).
    #[arg(long, value_name = "SECS", value_parser = uint)]
    pub secs: Option<u32>,
    /// With --all: real reads and writes (-R -W) instead of the seed's -Z
    /// memset; test names get '-rw'.
    #[arg(long)]
    pub rw: bool,
    /// With --all: the share of free memory a test may map, percent; larger
    /// tests are scaled down, and say so.
    #[arg(long, value_name = "PCT", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub memory_pct: u32,
    /// The results document (JSON) on stdout; perf's text goes to stderr.
    #[arg(long)]
    pub json: bool,
    /// Also write the results document to FILE.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
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
            json: self.json,
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
#[command(name = "mem", args_override_self = true)]
struct SuiteEntry {
    #[command(flatten)]
    args: MemArgs,
}

/// Where perf's text goes: stdout, or stderr when stdout carries JSON.
#[derive(Clone, Copy)]
struct Sink {
    to_stderr: bool,
}

impl Sink {
    fn put(self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.to_stderr {
            crate::console::err(text);
        } else {
            crate::console::out(text);
        }
    }
}

/// The arguments after `mem` on this command line.
fn command_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    let rest = args
        .iter()
        .position(|a| a == "mem")
        .map_or(&args[..0], |i| &args[i + 1..]);
    let mut s = String::from("numabench mem");
    for a in rest {
        s.push(' ');
        s.push_str(a);
    }
    s
}

/// One run: perf's text as it goes, then its metrics; the record and the
/// stop signal (if any) come back.
fn run_one(
    name: &str,
    record_name: &str,
    command: &str,
    p: &Params,
    topo: &Topology,
    sink: Sink,
) -> Result<(Record, Option<i32>, Option<String>)> {
    sink.put(&out::header(p, topo, p.show_details < 0));
    let mut on_event = |ev: Event| match ev {
        Event::StartupBegin if p.show_details >= 0 => sink.put(out::startup_begin()),
        Event::StartupDone { secs } if p.show_details >= 0 => sink.put(&out::startup_done(secs)),
        Event::Forked { process, pid } if p.show_details >= 1 => {
            sink.put(&format!(" # process {process:2}: PID {pid}\n"));
        }
        Event::Tick(t) => sink.put(&out::tick(t)),
        Event::Signal { signal, .. } => {
            eprintln!("\nnumabench: signal {signal}: stopping the tasks (again to kill them)");
        }
        _ => {}
    };
    let run = mem::run(p, topo, &mut on_event)?;
    let summary = Summary::of(p, &run);
    if p.show_details >= 0 {
        sink.put(out::footer());
    }
    sink.put(&out::extras(p, &run, p.show_details < 0));
    sink.put(&out::results(name, &summary, p.quiet));
    let rec = records::record(record_name, command, p, &run, &summary);
    Ok((rec, run.interrupted, run.failed))
}

fn finish(
    doc: &mut Document,
    args: &MemArgs,
    interrupted: Option<i32>,
    failed: Option<String>,
) -> Result<()> {
    super::finish_document(doc, args.save.as_deref(), args.json, interrupted, failed)
}

pub fn run(args: MemArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    if let Some(path) = &args.save {
        super::check_output_path(path, "--save")?;
    }
    let sink = Sink {
        to_stderr: args.json,
    };
    let command = command_line();
    if args.suite() {
        if args.workload_given() {
            return Err(usage(
                "--all runs perf's test table with its own options; of the workload options only -q and -d combine with it (use --secs, --rw, --memory-pct to adapt the suite)",
            ));
        }
        return run_suite(&args, &topo, sink, &command);
    }
    if args.secs.is_some() || args.rw {
        return Err(usage(
            "--secs and --rw adapt the suite: use them with --all",
        ));
    }
    let p = mem::resolve(&args.raw(), &topo)?;
    admit(&p, &topo)?;
    let mut doc = Document::new(&topo);
    sink.put(&out::running("main,", &command));
    let (rec, interrupted, failed) = run_one("main,", "main", &command, &p, &topo, sink)?;
    doc.records.push(rec);
    finish(&mut doc, &args, interrupted, failed)
}

/// perf maps whatever it is asked for; numabench first checks that the
/// global, process and thread memory together fit in the free memory of
/// the nodes the tasks are bound to (all usable nodes when any task is not).
fn admit(p: &mem::Params, topo: &Topology) -> Result<()> {
    let bound: Option<Vec<usize>> = p
        .node_bind
        .iter()
        .copied()
        .collect::<Option<Vec<usize>>>()
        .map(|mut ids| {
            ids.sort_unstable();
            ids.dedup();
            ids
        });
    crate::memory::admission::admit(
        topo,
        &crate::memory::admission::Footprint {
            bytes: p.total_bytes(),
            nodes: bound.as_deref(),
            what: footprint_terms(p),
            remedy: "give fewer processes or threads, or smaller -G/-P/-T",
        },
    )
}

/// "-P 15000 MB x 2 processes + -T 10 MB x 4 threads", zero terms left out.
fn footprint_terms(p: &mem::Params) -> String {
    let mut terms = Vec::new();
    if p.bytes_global > 0 {
        terms.push(format!("-G {} MB", p.mb_global));
    }
    if p.bytes_process > 0 {
        terms.push(format!("-P {} MB x {} processes", p.mb_proc, p.nr_proc));
    }
    if p.bytes_thread > 0 {
        terms.push(format!("-T {} MB x {} threads", p.mb_thread, p.nr_tasks));
    }
    terms.join(" + ")
}

fn uname() -> String {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let line = format!(
        "{} {} {} {} {}",
        read("ostype"),
        read("hostname"),
        read("osrelease"),
        read("version"),
        std::env::consts::ARCH
    );
    // The host name is anyone's choice: no control character reaches the
    // terminal.
    crate::output::escape(&line).into_owned()
}

fn run_suite(args: &MemArgs, topo: &Topology, sink: Sink, command: &str) -> Result<()> {
    let opts = SuiteOptions {
        secs: args.secs,
        rw: args.rw,
        memory_pct: args.memory_pct,
    };
    let mut doc = Document::new(topo);
    sink.put(&format!(" #\n # Running test on: {}\n #\n", uname()));
    sink.put(&out::running("main,", command));
    let mut interrupted = None;
    let mut first_failure = None;
    for test in suite::tests() {
        let planned = suite::plan(&test, topo, &opts);
        let cmd = format!("numabench mem {}", planned.args.join(" "));
        sink.put(&out::running(&planned.name, &cmd));
        for n in &planned.notes {
            sink.put(&format!(" # {n}\n"));
        }
        if let Some(why) = &planned.skip {
            sink.put(&format!(" # skipped: {why}\n"));
            let mut rec = Record::new("mem", &planned.short_name)
                .param("skipped", true)
                .param("command", cmd.clone());
            rec.notes.push(format!("skipped: {why}"));
            rec.notes.extend(planned.notes.clone());
            doc.records.push(rec);
            continue;
        }
        let mut argv = vec!["mem".to_string()];
        argv.extend(planned.args.iter().cloned());
        if args.show_details > 0 {
            argv.extend(std::iter::repeat_n(
                "-d".to_string(),
                args.show_details.into(),
            ));
        }
        let entry = SuiteEntry::try_parse_from(&argv)
            .map_err(|e| anyhow::anyhow!("suite entry {}: {}", planned.short_name, e.kind()))?;
        let p = mem::resolve(&entry.args.raw(), topo)?;
        if let Err(e) = admit(&p, topo) {
            let why = e.to_string();
            sink.put(&format!(" # skipped: {why}\n"));
            let mut rec = Record::new("mem", &planned.short_name)
                .param("skipped", true)
                .param("command", cmd.clone());
            rec.notes.push(format!("skipped: {why}"));
            doc.records.push(rec);
            continue;
        }
        match run_one(&planned.name, &planned.short_name, &cmd, &p, topo, sink) {
            Ok((mut rec, sig, failed)) => {
                rec = rec.param("test", planned.short_name.clone());
                rec.notes.extend(planned.notes.clone());
                doc.records.push(rec);
                // The suite goes on; the run as a whole failed.
                if let Some(why) = failed {
                    sink.put(&format!(" # failed: {why}\n"));
                    first_failure.get_or_insert(format!("{}: {why}", planned.short_name));
                }
                if sig.is_some() {
                    interrupted = sig;
                    break;
                }
            }
            Err(e) => {
                sink.put(&format!(" # failed: {e:#}\n"));
                let mut rec = Record::new("mem", &planned.short_name).param("command", cmd);
                rec.notes.push(format!("failed: {e:#}"));
                doc.records.push(rec);
            }
        }
    }
    sink.put("\n");
    finish(&mut doc, args, interrupted, first_failure)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let mut argv = vec!["mem"];
            argv.extend(t.args.iter().copied());
            let parsed = SuiteEntry::try_parse_from(&argv);
            assert!(parsed.is_ok(), "{}: {:?}", t.name, parsed.err());
            let raw = parsed.unwrap().args.raw();
            assert!(raw.quiet, "{}", t.name);
            assert!(raw.nr_secs == 20 || raw.nr_secs == 100, "{}", t.name);
        }
    }
}
