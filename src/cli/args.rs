//! The options several commands share, each declared here once with its
//! help text: a command takes a group with `#[command(flatten)]`. Where a
//! command's default differs, the command sets it with
//! `#[command(mut_arg(ID, ...))]`; the option and its help stay these.

use super::{chase, select, units};
use crate::error::usage;
use crate::ids::NodeSet;
use crate::kernels::pattern::Pattern;
use crate::memory::PageKind;
use crate::topology::Topology;
use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser};
use std::path::PathBuf;
use std::time::Duration;

/// `--time-limit`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LimitArgs {
    /// Start no new measurement after SECONDS (0 = no limit).
    ///
    /// Start no new measurement after SECONDS (0 = no limit, at most
    /// 604800, a week); one begun is finished, and a run the limit cut
    /// short is marked incomplete.
    #[arg(
        short = 't',
        long = "time-limit",
        value_name = "SECONDS",
        default_value_t = 0.0,
        value_parser = units::time_limit,
        allow_negative_numbers = true
    )]
    pub time_limit: f64,
}

impl LimitArgs {
    /// The limit, `None` for none.
    pub fn limit(&self) -> Option<Duration> {
        units::limit(self.time_limit)
    }
}

/// `--verbose`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct VerboseArgs {
    /// Show progress on stderr: each measurement as it starts.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

/// `--cpu-nodes` and `--mem-nodes`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NodeArgs {
    /// Only these CPU nodes, e.g. 0,2-3 [default: every node with CPUs
    /// this process may use].
    #[arg(long, value_name = "NODES")]
    pub cpu_nodes: Option<String>,
    #[command(flatten)]
    pub mem: MemNodeArgs,
}

/// `--mem-nodes` alone.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MemNodeArgs {
    /// Only these memory nodes, e.g. 0,2-3 [default: every node with
    /// memory this process may use].
    #[arg(long, value_name = "NODES")]
    pub mem_nodes: Option<String>,
}

impl NodeArgs {
    /// The CPU nodes given, not yet checked against the topology.
    pub fn cpu(&self) -> Result<Option<NodeSet>> {
        select::optional_node_list(&self.cpu_nodes, "--cpu-nodes")
    }

    /// The memory nodes given, not yet checked against the topology.
    pub fn mem(&self) -> Result<Option<NodeSet>> {
        self.mem.nodes()
    }
}

impl MemNodeArgs {
    /// The memory nodes given, not yet checked against the topology.
    pub fn nodes(&self) -> Result<Option<NodeSet>> {
        select::optional_node_list(&self.mem_nodes, "--mem-nodes")
    }
}

/// The nodes of `--cpu-nodes` and `--mem-nodes` exist and may be used.
pub(crate) fn check_nodes(
    topo: &Topology,
    cpu: &Option<NodeSet>,
    mem: &Option<NodeSet>,
) -> Result<()> {
    for n in cpu.iter().flat_map(|s| s.iter()) {
        select::cpu_node(topo, n, "--cpu-nodes")?;
    }
    for n in mem.iter().flat_map(|s| s.iter()) {
        select::memory_node(topo, n, "--mem-nodes")?;
    }
    Ok(())
}

/// `--size`: bytes of memory.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SizeArgs {
    /// Memory a measurement works on, with a unit, e.g. 512M or 1G.
    ///
    /// The chase buffer, or the arrays of all threads together [default:
    /// sized as the command's --help says]. A bare number is refused (as
    /// in every command's -s): sc-membench's -s 1024 is KiB, write 1024K.
    #[arg(short = 's', long, value_name = "SIZE", value_parser = units::size_with_unit)]
    pub size: Option<String>,
}

impl SizeArgs {
    /// The size given, at least `min` bytes.
    pub fn at_least(&self, min: usize) -> Result<Option<usize>> {
        self.size
            .as_deref()
            .map(|t| units::size_at_least(t, min).map_err(|e| usage(format!("--size {t}: {e}"))))
            .transpose()
    }
}

/// `--pattern`, `--window` and `--stride`: the pointer chase's access
/// pattern.
#[derive(clap::Args, Debug, Clone)]
pub struct ChaseArgs {
    /// Chase pattern: full-random, page-local or stride.
    ///
    /// Chase pattern: full-random (one random cycle through the whole
    /// buffer, page walks included), page-local (random within --window,
    /// each window done before the next, in random order, as multichase's
    /// default: latency without page walks) or stride (--stride bytes
    /// apart, lat_mem_rd style); latency takes several, comma-separated.
    #[arg(
        long,
        value_name = "PATTERN",
        value_delimiter = ',',
        default_value = "full-random"
    )]
    pub pattern: Vec<String>,
    /// The page-local window (multichase -T).
    #[arg(long, value_name = "SIZE", default_value = "256K")]
    pub window: String,
    /// Bytes between loads for --pattern stride, e.g. 64 or 4K.
    ///
    /// Bytes from one load to the next for --pattern stride, e.g. 64 or 4K;
    /// latency takes several, comma-separated [default: 64, a line; mlp:
    /// 256, its element; latency: 64,128,...,4096].
    #[arg(long, value_name = "BYTES", value_delimiter = ',')]
    pub stride: Vec<String>,
}

impl ChaseArgs {
    /// Every pattern given, strides expanded.
    pub fn all(&self) -> Result<Vec<Pattern>> {
        chase::patterns(&self.pattern, &self.window, &self.stride)
    }

    /// The one pattern of a command that measures one; a stride pattern
    /// without `--stride` takes `default_stride`.
    pub fn one(&self, default_stride: usize) -> Result<Pattern> {
        let [kind] = &self.pattern[..] else {
            return Err(usage(format!(
                "--pattern {}: this command measures one pattern; give one",
                self.pattern.join(",")
            )));
        };
        let stride = match &self.stride[..] {
            [] => None,
            [one] => Some(one.as_str()),
            more => {
                return Err(usage(format!(
                    "--stride {}: this command measures one stride; give one",
                    more.join(",")
                )));
            }
        };
        chase::one_pattern(kind, &self.window, stride, default_stride)
    }
}

/// `--pages`: page kinds.
#[derive(clap::Args, Debug, Clone)]
pub struct PagesArgs {
    /// Page kinds: base, thp, auto, hugetlb or hugetlb:SIZE.
    ///
    /// Page kinds: base, thp, auto (hugetlb, else THP, else base), hugetlb
    /// (the default huge page size) or hugetlb:SIZE, e.g. hugetlb:1G; a
    /// size the kernel lacks is refused, an empty pool falls back to THP
    /// and the results say so; latency takes several, comma-separated.
    #[arg(
        long,
        value_name = "KIND",
        value_delimiter = ',',
        default_value = "thp"
    )]
    pub pages: Vec<String>,
}

impl PagesArgs {
    /// Every kind given, each once.
    pub fn all(&self) -> Result<Vec<PageKind>> {
        chase::pages(&self.pages)
    }

    /// The one kind of a command that uses one, as typed and parsed.
    pub fn one(&self) -> Result<(&str, PageKind)> {
        match &self.pages[..] {
            [one] => Ok((one, chase::page_kind(one, "--pages")?)),
            more => Err(usage(format!(
                "--pages {}: this command uses one page kind; give one",
                more.join(",")
            ))),
        }
    }
}

/// `--tries`.
#[derive(clap::Args, Debug, Clone)]
pub struct TriesArgs {
    /// Timed runs of each measurement after one warm-up; the best is
    /// reported (1 to 1000).
    #[arg(short = 'r', long, value_name = "N", default_value_t = 3)]
    pub tries: usize,
}

/// `--huge`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct HugeArgs {
    /// Huge pages for the bandwidth arrays (hugetlb, else THP).
    ///
    /// Huge pages for the bandwidth arrays: hugetlb where a pool has room,
    /// else THP [default: base pages, as a program that does not ask for
    /// them gets].
    #[arg(short = 'H', long)]
    pub huge: bool,
}

/// `--kernel-variant`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KernelVariantArgs {
    /// Force a kernel by name, e.g. copy_nt_avx512.
    ///
    /// Force a kernel by name, e.g. copy_nt_avx512, in place of the fastest
    /// of its operation ('numabench sweep --list-kernels' lists them);
    /// repeatable, one per operation.
    #[arg(long = "kernel-variant", value_name = "NAME")]
    pub kernel_variant: Vec<String>,
}

/// `--runs`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunsArgs {
    /// Repeat each measurement N times for mean and standard deviation.
    ///
    /// Measurements of each test (or core), each made afresh, for the
    /// mean and standard deviation of their figures (1 to 1000) [default:
    /// one].
    #[arg(long, value_name = "N", value_parser = runs)]
    pub runs: Option<usize>,
}

/// `--peak`: Gamma.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GammaArgs {
    /// Theoretical peak bandwidth Gamma of one node's memory, MB/s.
    ///
    /// Theoretical peak bandwidth Gamma of one node's memory, MB/s, for
    /// the model's alpha values [default: from the DMI memory speed when
    /// readable, as recorded with the matrix, else the best measured
    /// bandwidth].
    #[arg(long, value_name = "MB/S")]
    pub peak: Option<f64>,
}

/// `--gpu` and `--phi`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GpuArgs {
    /// GPUs by CUDA device ordinal, e.g. 0 or 0,2 [default: every GPU].
    ///
    /// GPUs by CUDA device ordinal (as CUDA_VISIBLE_DEVICES leaves them),
    /// e.g. 0 or 0,2; repeatable [default: every GPU].
    #[arg(long = "gpu", value_name = "N", value_delimiter = ',')]
    pub gpu: Vec<usize>,
    /// Phi, a GPU link's theoretical one-direction bandwidth, MB/s.
    ///
    /// Phi, the theoretical one-direction bandwidth of a GPU's link, in
    /// MB/s, for every GPU [default: from the PCIe link speed and width in
    /// sysfs, as recorded with the results].
    ///
    /// The thesis uses 12800 for
    /// PCIe 2.0 x16.
    #[arg(long, value_name = "MB/S")]
    pub phi: Option<f64>,
}

/// `--profile` of `numabench run`.
#[derive(clap::Args, Debug, Clone)]
pub struct ProfileArgs {
    /// What to run: default, quick or full.
    ///
    /// What `numabench run` runs: `default` (topology, matrix, sweep, then
    /// latency by pattern, parallel chases, loaded latency, peak injection
    /// and core to core; half a minute on a 2-CPU machine, `run --plan`
    /// estimates any other), `quick`
    /// (topology and the matrix, no sweep: every key figure of a fleet
    /// report; seconds, growing with the square of the node count) or
    /// `full` (also perf's mem suite at 5 s per test, the four AutoNUMA
    /// tests and numa_test with one task per CPU; minutes).
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = profiles())]
    pub profile: String,
}

fn profiles() -> PossibleValuesParser {
    PossibleValuesParser::new([
        PossibleValue::new("default"),
        PossibleValue::new("quick"),
        PossibleValue::new("full"),
        PossibleValue::new("smoke").hide(true),
    ])
}

/// `--dir` of `numabench run`.
#[derive(clap::Args, Debug, Clone)]
pub struct ResultsDirArgs {
    /// Where results folders go (a new one per run).
    ///
    /// Where results folders go; each run makes a new
    /// `<host>-<date>-<time>` folder there and never overwrites one.
    #[arg(long, value_name = "DIR", default_value = "numabench-results")]
    pub dir: PathBuf,
}

/// `--output` of the reports.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReportOutputArgs {
    /// Write the report to FILE [default: standard output].
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// How long the workloads that watch memory move (autonuma, tier) run,
/// how they look, and their baselines.
#[derive(clap::Args, Debug, Clone)]
pub struct WatchArgs {
    /// Seconds each test runs (1 to 604800, a week).
    #[arg(long, value_name = "SECS", value_parser = secs)]
    pub secs: Option<u32>,
    /// Seconds between two looks at where the memory is (0.01 to 60).
    #[arg(long, value_name = "SECS", default_value_t = 0.5, value_parser = interval)]
    pub interval: f64,
    /// Pages sampled at each look at where the memory is (16 to 16777216).
    ///
    /// Pages whose node a look asks of the kernel, spread evenly over the
    /// memory it looks at, each counting for the pages around it (16 to
    /// 16777216).
    #[arg(long, value_name = "N", default_value_t = crate::probes::workload::watch::DEFAULT_SAMPLE_PAGES, value_parser = sample_pages)]
    pub sample_pages: usize,
    /// Run no baselines (the same work placed best and worst).
    ///
    /// Run no baselines (the same work with its memory placed best and
    /// worst, between which the test's result is placed).
    #[arg(long)]
    pub no_baselines: bool,
}

fn interval(s: &str) -> Result<f64, String> {
    units::time(s, 0.01, 60.0, "seconds")
}

fn runs(s: &str) -> Result<usize, String> {
    whole(s, 1, 1000)
}

fn secs(s: &str) -> Result<u32, String> {
    whole(s, 1, 604_800).map(|v| v as u32)
}

fn sample_pages(s: &str) -> Result<usize, String> {
    whole(s, 16, 1 << 24)
}

/// A whole number from `lo` to `hi`.
fn whole(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

impl WatchArgs {
    /// `--interval` as a duration.
    pub fn interval(&self) -> Duration {
        units::duration(self.interval)
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command, parsed_command};
    use clap::Parser;

    #[test]
    fn a_command_sets_its_own_defaults_on_the_shared_options() {
        let Command::Latency(l) = parsed_command(&["latency"]) else {
            panic!("not latency")
        };
        assert_eq!(l.chase.pattern, ["full-random", "page-local"]);
        assert_eq!(l.pages.pages, ["base", "thp"]);
        let Command::Mlp(m) = parsed_command(&["mlp"]) else {
            panic!("not mlp")
        };
        assert_eq!(m.chase.pattern, ["page-local"]);
        let Command::Matrix(m) = parsed_command(&["matrix"]) else {
            panic!("not matrix")
        };
        assert_eq!(
            (m.chase.pattern.as_slice(), m.tries.tries),
            (&["full-random".to_string()][..], 3)
        );
        let Command::Pcie(p) = parsed_command(&["pcie"]) else {
            panic!("not pcie")
        };
        assert_eq!(p.tries.tries, 10);
        let Command::Tier(t) = parsed_command(&["tier"]) else {
            panic!("not tier")
        };
        assert_eq!(t.watch.secs, Some(30));
        assert_eq!(
            t.watch.sample_pages.to_string(),
            crate::probes::tier::run::DEFAULT_SAMPLE_PAGES
        );
        let Command::Autonuma(a) = parsed_command(&["autonuma"]) else {
            panic!("not autonuma")
        };
        assert_eq!(a.watch.secs, None);
        assert_eq!(
            a.watch.sample_pages,
            crate::probes::workload::watch::DEFAULT_SAMPLE_PAGES
        );
        let Command::Run(r) = parsed_command(&["run"]) else {
            panic!("not run")
        };
        assert_eq!(r.profile.profile, "default");
        assert_eq!(r.dir.dir, std::path::Path::new("numabench-results"));
        // fleet submit: --dir has no default there, and the profile is quick.
        assert!(Cli::try_parse_from(["numabench", "fleet", "submit"]).is_err());
        let Command::Fleet(f) = parsed_command(&["fleet", "submit", "--dir", "d"]) else {
            panic!("not fleet")
        };
        let crate::cli::fleet::FleetCommand::Submit(s) = f.command else {
            panic!("not submit")
        };
        assert_eq!(
            (s.profile.profile.as_str(), s.dir.dir.to_str()),
            ("quick", Some("d"))
        );
    }

    #[test]
    fn one_pattern_one_stride_and_one_page_kind_where_a_command_takes_one() {
        let Command::Matrix(m) =
            parsed_command(&["matrix", "--pattern", "stride", "--stride", "128"])
        else {
            panic!("not matrix")
        };
        assert_eq!(
            m.chase.one(64).unwrap(),
            crate::kernels::pattern::Pattern::Stride { stride: 128 }
        );
        for (words, says) in [
            (
                &["matrix", "--pattern", "full-random,page-local"][..],
                "--pattern full-random,page-local: this command measures one pattern",
            ),
            (
                &["matrix", "--pattern", "stride", "--stride", "64,128"],
                "--stride 64,128: this command measures one stride",
            ),
        ] {
            let Command::Matrix(m) = parsed_command(words) else {
                panic!("not matrix")
            };
            let e = m.chase.one(64).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
            assert!(e.to_string().starts_with(says), "{e}");
        }
        let Command::Place(p) = parsed_command(&["place", "--pages", "base,thp"]) else {
            panic!("not place")
        };
        let e = p.pages.one().unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--pages base,thp: this command uses one page kind"),
            "{e}"
        );
        let Command::Place(p) = parsed_command(&["place"]) else {
            panic!("not place")
        };
        assert_eq!(p.pages.one().unwrap().0, "thp");
    }

    #[test]
    fn node_lists_and_sizes_name_their_flag() {
        let Command::Peak(p) = parsed_command(&["peak", "--cpu-nodes", "x", "-s", "1K"]) else {
            panic!("not peak")
        };
        assert!(
            p.nodes
                .cpu()
                .unwrap_err()
                .to_string()
                .starts_with("--cpu-nodes x")
        );
        assert!(p.nodes.mem().unwrap().is_none());
        let e = p.size.at_least(1 << 20).unwrap_err();
        assert!(e.to_string().starts_with("--size 1K"), "{e}");
    }
}

/// `--plan` and `--sysfs-root`: what a command would measure on this
/// machine or a captured one, measuring nothing.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PlanArgs {
    /// Print what would be measured and an estimated time; measure nothing.
    ///
    /// Print what would be measured (cells or pairs, the buffers built and
    /// their sizes, the memory mapped at once) and an estimated time, and
    /// measure nothing; with --sysfs-root, for a captured machine
    #[arg(long)]
    pub plan: bool,
    #[command(flatten)]
    pub root: super::RootArgs,
}

impl PlanArgs {
    /// The machine the command works on: this one, or with `--plan` the
    /// one `--sysfs-root` names. A root without `--plan` is refused: a
    /// measurement is of the machine it runs on.
    pub fn topology(&self) -> Result<Topology> {
        if self.root.sysfs_root.is_some() && !self.plan {
            return Err(usage(
                "--sysfs-root goes with --plan: a measurement is of the machine it runs on",
            ));
        }
        if self.plan {
            Ok(self.root.topology()?.1)
        } else {
            Ok(crate::topology::read_topology(
                &crate::topology::SysfsRoot::live(),
            )?)
        }
    }

    /// Prints `plan` for `command` on `topo` when `--plan` was given;
    /// whether it did (the command then ends).
    pub(crate) fn print(
        &self,
        command: &str,
        topo: &Topology,
        plan: &crate::view::PartPlan,
    ) -> bool {
        if self.plan {
            crate::console::out(&crate::jobs::run::plan::command_text(command, topo, plan));
        }
        self.plan
    }
}

/// `--sample-above` and `--all-pairs`: which node pairs a per-pair probe
/// measures on a large machine.
#[derive(clap::Args, Debug, Clone)]
pub struct PairSamplingArgs {
    /// Above N memory nodes, measure a sample of each distance class.
    ///
    /// Above N memory nodes, measure every local pair and a spread sample
    /// of each SLIT distance class, and measure a class whole where its
    /// sample differs by more than 10% (1 to 100000)
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::probes::pairs::SAMPLE_ABOVE,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000),
        conflicts_with = "all_pairs"
    )]
    pub sample_above: usize,
    /// Measure every node pair however many nodes there are
    #[arg(long)]
    pub all_pairs: bool,
}

impl PairSamplingArgs {
    /// The pairs asked for.
    pub(crate) fn selection(&self) -> crate::probes::pairs::Selection {
        use crate::probes::pairs::Selection;
        if self.all_pairs {
            Selection::All
        } else {
            Selection::ByClass {
                above: self.sample_above,
            }
        }
    }
}
