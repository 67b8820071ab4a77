//! The examples and guide line closing each command's `--help`: real
//! command lines, each under a one-line comment. The man pages take their
//! EXAMPLES section from the same text, and a test parses every line.

/// One example: what it does, and the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Example<'a> {
    pub comment: &'a str,
    pub line: &'a str,
}

/// The examples of a command's `after_long_help` text, in order.
pub(super) fn of(text: &str) -> Vec<Example<'_>> {
    let mut out = Vec::new();
    let mut comment = "";
    for l in text
        .lines()
        .skip_while(|l| *l != "Examples:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
    {
        match l.trim().strip_prefix("# ") {
            Some(c) => comment = c,
            None => out.push(Example {
                comment,
                line: l.trim(),
            }),
        }
    }
    out
}

/// The words of an example as the shell would pass them to numabench:
/// up to a redirection, without the program name.
#[cfg(test)]
pub(super) fn words(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .skip(1)
        .take_while(|w| !w.starts_with(['>', '|', '<']))
        .collect()
}

pub(super) const NUMABENCH: &str = "Examples:
  # Characterise this machine: results folder, report.html and a summary
  numabench run
  # What the run would measure here and for how long
  numabench run --plan
  # The NUMA topology
  numabench topo
  # Bandwidth and latency between every pair of nodes
  numabench matrix

Each command's --help shows its own examples; numabench-COMMAND(1) pages come from 'numabench generate man COMMAND'.
Guides, in the numabench source: each command's --help names its own under docs/; docs/measuring.md (how figures are measured), docs/results.md (the results document), docs/faq.md.";

pub(super) const RUN: &str = "Examples:
  # The default set on this machine, results and report.html in a new folder
  numabench run
  # What it would measure here, with the time each step takes; measures nothing
  numabench run --plan
  # Topology and the matrix only, in seconds
  numabench run --profile quick --dir results
  # Fit the run in five minutes, dropping what does not fit
  numabench run --budget 5m

Guide: docs/run.md in the numabench source.";

pub(super) const TOPO: &str = "Examples:
  # This machine's nodes, CPUs, memory, distances and caches
  numabench topo
  # The same as JSON
  numabench topo --json
  # A machine captured with 'numabench gather', unpacked in ./box
  numabench topo --sysfs-root box

Guide: docs/topo.md in the numabench source.";

pub(super) const GATHER: &str = "Examples:
  # Capture this machine's topology files for a bug report
  numabench gather -o topo.tar.gz
  # Replay them elsewhere: unpack, then read the tree
  numabench topo --sysfs-root topo

Guide: docs/gather.md in the numabench source.";

pub(super) const PLACE: &str = "Examples:
  # Where 64 MiB of THP land when bound to node 0
  numabench place -m bind:0
  # Interleaved over every memory node, as numactl --interleave=all
  numabench place -m interleave:all -s 1G
  # Allocated from a CPU of node 0 with base pages, as JSON
  numabench place -N 0 --pages base --json

Guide: docs/place.md in the numabench source.";

pub(super) const SWEEP: &str = "Examples:
  # Bandwidth and latency at sizes around the caches, as a table
  numabench sweep -R
  # Read bandwidth at 1 MiB per thread with 2 threads, CSV
  numabench sweep --op read -s 1M --threads 2 --csv
  # sc-membench's -s 1024 (KiB), under its own name
  numabench sweep --buffer-kib 1024
  # Try 1, 2, 4, ... threads and keep the best
  numabench sweep -a --op triad

Guide: docs/sweep.md in the numabench source.";

pub(super) const MATRIX: &str = "Examples:
  # Bandwidth and latency from every CPU node to every memory node
  numabench matrix
  # What it would measure and how long, measuring nothing
  numabench matrix --plan
  # Read bandwidth only, saved for 'numabench model'
  numabench matrix -k read --no-latency --save m.json

Guide: docs/matrix.md in the numabench source.";

pub(super) const MODEL: &str = "Examples:
  # Bandwidth classes and alpha values of a saved matrix
  numabench model m.json
  # The expected bandwidth of half local, half remote accesses
  numabench model m.json --theta 0.5,0.5
  # Measure an even split over nodes 0 and 1 against the prediction
  numabench model --validate --mem-nodes 0,1

Guide: docs/matrix.md in the numabench source.";

pub(super) const LATENCY: &str = "Examples:
  # Idle latency per node pair: full-random and page-local, base and THP
  numabench latency
  # Page-local with THP only, the figure MLC and multichase quote
  numabench latency --pattern page-local --pages thp
  # A 2 GiB chase, as CSV
  numabench latency -s 2G --csv

Guide: docs/latency.md in the numabench source.";

pub(super) const MLP: &str = "Examples:
  # 1 to 16 parallel chases per node pair
  numabench mlp
  # Only each node's own and its farthest memory, 1, 4 and 8 chases
  numabench mlp --pairs near-far -n 1,4,8
  # What it would measure and how long
  numabench mlp --plan

Guide: docs/mlp.md in the numabench source.";

pub(super) const LOADED: &str = "Examples:
  # Latency against injected read bandwidth, every node pair
  numabench loaded
  # Copy traffic from two injectors, nearest and farthest node only
  numabench loaded --traffic copy --injectors 2 --pairs near-far
  # What it would measure and how long
  numabench loaded --plan

Guide: docs/loaded.md in the numabench source.";

pub(super) const PEAK: &str = "Examples:
  # Peak injection bandwidth of every CPU node, every mix
  numabench peak
  # Read-only and triad, all cores only
  numabench peak --mix read,triad --threads all
  # What it would measure and how long
  numabench peak --plan

Guide: docs/peak.md in the numabench source.";

pub(super) const C2C: &str = "Examples:
  # Core-to-core latency of every CPU pair
  numabench c2c
  # CPUs 0 and 1 only, compare-and-swap, CSV
  numabench c2c --cpus 0,1 --variant cas --csv
  # What it would measure and how long
  numabench c2c --plan

Guide: docs/c2c.md in the numabench source.";

pub(super) const PCIE: &str = "Examples:
  # Host-GPU copy bandwidth from every memory node to every GPU
  numabench pcie
  # GPU 0 only, three sizes, with the per-size table
  numabench pcie --gpu 0 --sizes 64K,1M,64M --per-size

Guide: docs/pcie.md in the numabench source.";

pub(super) const MEM: &str = "Examples:
  # perf's 2 processes x 4 threads on 512 MB each, 5 seconds
  numabench mem -p 2 -t 4 -P 512 -s 5
  # perf's test suite, mapped onto this machine
  numabench mem -a
  # The suite's command lines here, running nothing
  numabench mem -a --list

Guide: docs/mem.md in the numabench source.";

pub(super) const AUTONUMA: &str = "Examples:
  # Every AutoNUMA test, with baselines
  numabench autonuma
  # numa01 for 20 seconds, three runs
  numabench autonuma numa01 --secs 20 --runs 3

Guide: docs/autonuma.md in the numabench source.";

pub(super) const SCHED: &str = "Examples:
  # numa_test with 8 tasks and the disturbance burst
  numabench sched 8
  # The original's series of 4 to 64 tasks, without the burst
  numabench sched --series --no-burst

Guide: docs/sched.md in the numabench source.";

pub(super) const TIER: &str = "Examples:
  # Promotion, demotion and oversize on a tiered machine
  numabench tier
  # Promotion only, 60 seconds
  numabench tier promotion --secs 60

Guide: docs/tier.md in the numabench source.";

pub(super) const FLEET: &str = "Examples:
  # Run the quick profile on every node of partition 'batch'
  numabench fleet submit -p batch --dir fleet-runs --wait
  # The machines unlike the others
  numabench fleet report fleet-runs
  # What changed after an update
  numabench fleet compare before after

Guide: docs/fleet.md in the numabench source.";

pub(super) const COMPARE: &str = "Examples:
  # Every metric of a.json against b.json
  numabench compare a.json b.json
  # Named columns, Markdown
  numabench compare old.json new.json --labels before,after --markdown

Guide: docs/report-and-compare.md in the numabench source.";

pub(super) const REPORT: &str = "Examples:
  # One HTML page from a run's results
  numabench report numabench-results/host-2026-01-01-1200/results.json -o report.html
  # Several saved results in one report
  numabench report m.json l.json -o report.html
  # The findings as Markdown
  numabench report results.json --markdown

Guide: docs/report-and-compare.md in the numabench source.";

pub(super) const GENERATE: &str = "Examples:
  # The man page of numabench
  numabench generate man > numabench.1
  # The page of one command
  numabench generate man sweep > numabench-sweep.1
  # Bash completion
  numabench generate bash > /etc/bash_completion.d/numabench

Guide: docs/report-and-compare.md (output formats, completions and man pages) in the numabench source.";

pub(super) const FLEET_SUBMIT: &str = "Examples:
  # One job per node of partition 'batch', followed until all are done
  numabench fleet submit -p batch --dir fleet-runs --wait
  # Nodes n1 to n16, the sbatch lines and job script only
  numabench fleet submit -w n[1-16] --dir fleet-runs --dry-run

Guide: docs/fleet.md in the numabench source.";

pub(super) const FLEET_REPORT: &str = "Examples:
  # The machines unlike the others, and how they differ
  numabench fleet report fleet-runs
  # The same as one HTML page
  numabench fleet report fleet-runs --html -o fleet.html

Guide: docs/fleet.md in the numabench source.";

pub(super) const FLEET_COMPARE: &str = "Examples:
  # What changed between two fleet runs, before and after an update
  numabench fleet compare fleet-before fleet-after

Guide: docs/fleet.md in the numabench source.";
