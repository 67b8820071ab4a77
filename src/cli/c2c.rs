//! `numabench c2c`: core-to-core latency, a cache line handed between two
//! pinned threads for every pair of CPUs.

use super::args::{LimitArgs, VerboseArgs};
use super::output::{FormatArgs, SaveArgs, emit_or_stop};
use crate::error::usage;
use crate::ids::CpuSet;
use crate::output::render::Format;
use crate::probes::c2c::{self, C2cConfig, LineHome, Variant, records};
use crate::results::Document;
use crate::results::names::probe;
use crate::topology::Topology;
use anyhow::Result;

/// Measure core-to-core latency: a cache line's one-way trip between two CPUs.
///
/// Measure core-to-core latency: how long a cache line takes to travel
/// from one CPU to another, one way, for every pair of the CPUs this
/// process may use, shown as a CPU x CPU table, a node x node summary and
/// classes (SMT sibling, same L3, same node, same package, remote) from the
/// topology.
///
/// Two threads are pinned to the two CPUs of a pair, and checked on them
/// before and after the timed loops. Variants:
/// cas (one line, each side compare-and-swaps the other's value to its
/// own; core-to-core-latency's default test), store (two lines, each side
/// waits for the other's value, then stores its own; its -b 2),
/// clean-read (the reader chases 256 lines that the other CPU read last
/// after flushing them: clean in its cache), modified-read (the same
/// chase through lines the other CPU wrote last). A ping-pong sample is
/// ITERATIONS round trips, one way = round trip / 2; a read sample is one
/// chase, time / 256 lines, and a read variant measures each pair both ways.
/// A pair's figure is the median of its samples, with the interquartile
/// range as its spread.
///
/// Above 64 CPUs (--sample-above; unless --all-pairs) the pairs are sampled: up to
/// --per-group pairs from each (class, node pair) group, spread over the
/// group's CPUs, the same on every run; the node and class summaries weight
/// each by the pairs of its group; the output and every record say so.
/// The pairs come one of each group first, so a run the time limit cut
/// still covers every group it reached.
#[derive(clap::Args, Debug)]
pub struct C2cArgs {
    /// Variant: cas, store, clean-read, modified-read or all; repeatable
    /// [default: cas and clean-read]
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Only these CPUs, e.g. 0-3,8 (at least two).
    ///
    /// Only these CPUs (e.g. 0-3,8), at least two, all online and allowed
    /// [default: every CPU this process may use]
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Round trips per sample, cas and store (1 to 10000000)
    #[arg(short = 'i', long, value_name = "N", default_value_t = 1000)]
    pub iterations: u64,
    /// Samples per pair and variant after one warm-up sample (1 to 100000)
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub samples: usize,
    /// Sample the pairs above N CPUs (2 to 100000)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 64,
        conflicts_with = "all_pairs"
    )]
    pub sample_above: usize,
    /// Measure every pair however many CPUs there are (no sampling)
    #[arg(long)]
    pub all_pairs: bool,
    /// Pairs per (class, node pair) group where pairs are sampled (1 to 1000)
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub per_group: usize,
    #[command(flatten)]
    pub limit: LimitArgs,
    /// Where the lines' memory is: cpu, peer or a node.
    ///
    /// Where the lines' memory is, for each pair: cpu (the node of the
    /// pair's first CPU, the reader in the read variants), peer (the
    /// other CPU's node, the writer) or a node number for every pair
    #[arg(long, value_name = "HOME", default_value = "cpu")]
    pub line_home: String,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
}

fn variants(names: &[String]) -> Result<Vec<Variant>> {
    let allowed = "cas, store, clean-read, modified-read or all";
    if names.is_empty() {
        return Ok([Variant::Cas, Variant::CleanRead]
            .into_iter()
            .filter(|v| v.available())
            .collect());
    }
    let mut out = Vec::new();
    for n in names {
        let vs: Vec<Variant> = if n == "all" {
            Variant::ALL.into_iter().filter(|v| v.available()).collect()
        } else {
            let v = Variant::parse(n)
                .ok_or_else(|| usage(format!("--variant {n}: no such variant; use {allowed}")))?;
            if !v.available() {
                return Err(usage(format!(
                    "--variant {n}: this CPU architecture cannot flush a cache line from user space"
                )));
            }
            vec![v]
        };
        for v in vs {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    Ok(out)
}

/// The CPUs whose pairs are measured: `--cpus` checked against the
/// topology, else every allowed online CPU.
fn cpus(topo: &Topology, given: Option<&str>) -> Result<Vec<usize>> {
    let set = match given {
        Some(text) => {
            let set = CpuSet::parse_list(text)
                .map_err(|e| usage(format!("--cpus {text}: {e} (write e.g. 0-3,8)")))?;
            for c in set.iter() {
                super::select::cpu(topo, c, "--cpus")?;
            }
            set
        }
        None => topo.allowed.cpus.intersection(&topo.cpus_online),
    };
    let list: Vec<usize> = set.iter().collect();
    if list.len() < 2 {
        return Err(usage(format!(
            "{}: core-to-core latency needs at least two CPUs, and {} {} (allowed CPUs: {})",
            given.map_or("this process".into(), |t| format!("--cpus {t}")),
            if list.len() == 1 { "names" } else { "has" },
            if list.len() == 1 { "one" } else { "none" },
            topo.allowed.cpus
        )));
    }
    Ok(list)
}

fn line_home(topo: &Topology, text: &str) -> Result<LineHome> {
    Ok(match text {
        "cpu" => LineHome::Cpu,
        "peer" => LineHome::Peer,
        _ => {
            let n = text.parse::<usize>().map_err(|_| {
                usage(format!(
                    "--line-home {text}: use cpu, peer or a node number (nodes with memory: {})",
                    topo.usable_memory_nodes()
                ))
            })?;
            super::select::memory_node(topo, n, "--line-home")?;
            LineHome::Node(n)
        }
    })
}

fn config(args: &C2cArgs, topo: &Topology) -> Result<C2cConfig> {
    let in_range = |v: u64, hi: u64, flag: &str| {
        if (1..=hi).contains(&v) {
            Ok(())
        } else {
            Err(usage(format!("{flag} {v}: use 1 to {hi}")))
        }
    };
    in_range(args.iterations, 10_000_000, "--iterations")?;
    in_range(args.samples as u64, 100_000, "--samples")?;
    in_range(args.per_group as u64, 1000, "--per-group")?;
    if !(2..=100_000).contains(&args.sample_above) {
        return Err(usage(format!(
            "--sample-above {}: use 2 to 100000",
            args.sample_above
        )));
    }
    let cfg = C2cConfig {
        variants: variants(&args.variants)?,
        cpus: cpus(topo, args.cpus.as_deref())?,
        iterations: args.iterations,
        samples: args.samples,
        full_up_to: if args.all_pairs {
            usize::MAX
        } else {
            args.sample_above
        },
        per_group: args.per_group,
        time_limit: args.limit.limit(),
        line_home: line_home(topo, &args.line_home)?,
    };
    fits_time_limit(&cfg)?;
    Ok(cfg)
}

/// Refuses a plan whose one pair cannot end within the time limit even at
/// the fastest hand-off any machine makes: the limit is looked at between
/// pairs and stops a pair still running, so that pair's figures would all
/// be lost.
fn fits_time_limit(cfg: &C2cConfig) -> Result<()> {
    let Some(limit) = cfg.time_limit else {
        return Ok(());
    };
    let least = c2c::least_pair_time(cfg);
    if least <= limit {
        return Ok(());
    }
    Err(usage(format!(
        "one pair takes at least {:.1} s ({} samples of {} round trips, every variant), \
         over the time limit of {:.1} s; lower --iterations or --samples, or raise --time-limit",
        least.as_secs_f64(),
        cfg.samples + 1,
        cfg.iterations,
        limit.as_secs_f64()
    )))
}

/// The nodes the lines may be bound to: the asked node, or the nodes of
/// the CPUs measured whose memory this process may use.
fn home_nodes(topo: &Topology, cfg: &C2cConfig) -> Vec<usize> {
    let usable = topo.usable_memory_nodes();
    let mut nodes: Vec<usize> = match cfg.line_home {
        LineHome::Node(n) => vec![n],
        _ => cfg
            .cpus
            .iter()
            .filter_map(|&c| topo.cpu(c)?.node)
            .filter(|&n| usable.contains(n))
            .collect(),
    };
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

pub(super) fn run(args: C2cArgs) -> Result<()> {
    let topo = args.planning.topology()?;
    let cfg = config(&args, &topo)?;
    let pairs = c2c::plan::plan(&topo, &cfg.cpus, cfg.full_up_to, cfg.per_group);
    let estimate = c2c::estimate(
        pairs.pairs.len(),
        cfg.iterations,
        cfg.samples,
        cfg.variants.len(),
        cfg.time_limit.map(|t| t.as_secs_f64()),
    );
    if args
        .planning
        .print(crate::results::names::probe::C2C, &topo, &estimate)
    {
        return Ok(());
    }
    // One pair's lines are mapped at a time.
    crate::memory::admission::admit_each(
        &topo,
        c2c::pingpong::BYTES as u64,
        &home_nodes(&topo, &cfg),
        "c2c's cache lines",
        "free some memory on that node, or give another --line-home",
    )?;
    args.save.check()?;
    let format = args.format.or_default(Format::Text);
    let mut doc = Document::new(&topo);
    let out = {
        let progress = crate::progress::Progress::new(args.verbose.verbose);
        c2c::run(&topo, &cfg, &mut |what| progress.step(what))
    };
    if let Some(why) = &out.failed
        && out.results.is_empty()
    {
        return Err(anyhow::anyhow!("{why}"));
    }
    doc.records = records::records(&out);
    let interrupted = crate::interrupt::requested();
    let failed = out.failed.as_deref();
    super::output::mark_end(
        &mut doc,
        probe::C2C,
        interrupted,
        failed,
        out.notes.is_empty(),
    );
    args.save.save(&doc)?;
    let kept = format!("{} pair(s) measured before the stop", out.results.len());
    emit_or_stop(&doc, format, interrupted, &kept)?;
    match failed {
        None => Ok(()),
        Some(why) => Err(anyhow::anyhow!(
            "{why}; the {} pair(s) measured before it are {}, marked incomplete",
            out.results.len(),
            if args.save.save.is_some() {
                "saved"
            } else {
                "printed above"
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_default_dedup_and_refuse_unknown_names() {
        let v = variants(&[]).unwrap();
        assert_eq!(v[0], Variant::Cas);
        let all = variants(&["all".into(), "cas".into()]).unwrap();
        assert_eq!(
            all.len(),
            Variant::ALL.iter().filter(|v| v.available()).count()
        );
        let e = variants(&["pingpong".into()]).unwrap_err().to_string();
        assert!(e.starts_with("--variant pingpong: no such variant"), "{e}");
    }

    #[test]
    fn a_pair_that_cannot_fit_the_time_limit_is_refused() {
        let topo = crate::topology::fixture("two-node");
        let mut cfg = C2cConfig {
            variants: vec![Variant::Cas],
            cpus: cpus(&topo, None).unwrap(),
            iterations: 10_000_000,
            samples: 100_000,
            full_up_to: 64,
            per_group: 1,
            time_limit: Some(std::time::Duration::from_secs(1)),
            line_home: LineHome::Cpu,
        };
        let e = fits_time_limit(&cfg).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        let text = e.to_string();
        for part in ["at least 20000", "time limit of 1.0 s", "--iterations"] {
            assert!(text.contains(part), "{text}");
        }
        cfg.iterations = 1000;
        cfg.samples = 300;
        assert!(fits_time_limit(&cfg).is_ok());
        cfg.time_limit = None;
        cfg.iterations = 10_000_000;
        assert!(fits_time_limit(&cfg).is_ok());
    }

    #[test]
    fn the_line_home_is_a_word_or_a_node_with_memory() {
        let topo = crate::topology::fixture("two-node");
        assert_eq!(line_home(&topo, "cpu").unwrap(), LineHome::Cpu);
        assert_eq!(line_home(&topo, "peer").unwrap(), LineHome::Peer);
        assert_eq!(line_home(&topo, "1").unwrap(), LineHome::Node(1));
        for bad in ["9", "owner", "-1", ""] {
            let e = line_home(&topo, bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
            assert!(e.to_string().starts_with("--line-home"), "{e}");
        }
    }

    #[test]
    fn the_home_nodes_are_those_the_lines_may_go_to() {
        let topo = crate::topology::fixture("two-node");
        let mut cfg = C2cConfig {
            variants: vec![Variant::Cas],
            cpus: cpus(&topo, None).unwrap(),
            iterations: 1,
            samples: 1,
            full_up_to: 64,
            per_group: 1,
            time_limit: None,
            line_home: LineHome::Cpu,
        };
        assert_eq!(
            home_nodes(&topo, &cfg),
            topo.usable_memory_nodes().iter().collect::<Vec<_>>()
        );
        cfg.line_home = LineHome::Node(1);
        assert_eq!(home_nodes(&topo, &cfg), [1]);
    }

    #[test]
    fn fewer_than_two_cpus_is_bad_input() {
        let topo = crate::topology::fixture("two-node");
        let e = cpus(&topo, Some("0")).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert!(e.to_string().contains("at least two CPUs"), "{e}");
        let e = cpus(&topo, Some("0,999")).unwrap_err().to_string();
        assert!(e.contains("CPU 999"), "{e}");
        assert!(cpus(&topo, Some("x")).is_err());
    }
}
