//! One column of the matrix: a memory node's buffers built once and every
//! CPU node measured against them. The bandwidth arrays come first (one
//! set per working-set size the rows want, shared by teams of every size),
//! then the peak cells with teams of their own, then the chase (one per
//! chase size); each is unmapped before the next is mapped, so no more
//! memory is mapped at once than one cell needs.

use super::{Cell, MatrixConfig, Scaling, bandwidth_pages, peak_cell, scaling};
use crate::probes::measure::{self, Bandwidth, Latency};
use crate::probes::team::{NodeArrays, Seat};
use crate::results::Condition;
use anyhow::Result;

/// One cell of a column before it is measured: its row's CPUs and the
/// sizes it wants.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub cpu_node: usize,
    /// Cores first ([`crate::probes::seats::node_cpus`]).
    pub cpus: Vec<usize>,
    /// The working set of all the arrays of a team.
    pub ws: usize,
    /// The chase buffer.
    pub chase: usize,
}

/// Buffers a column built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Builds {
    /// Sets of bandwidth arrays: one per distinct working set.
    pub bandwidth: usize,
    /// Chase buffers: one per distinct chase size.
    pub chase: usize,
}

impl Builds {
    pub(crate) fn total(&self) -> usize {
        self.bandwidth + self.chase
    }
}

/// One buffer to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Build {
    /// The memory node it is bound to.
    pub node: usize,
    /// The working set of the arrays, or the chase's size.
    pub bytes: usize,
    /// The largest team the arrays serve (1 for a chase).
    pub threads: usize,
    /// The CPU that maps it and first touches it.
    pub cpu: usize,
}

/// A bandwidth measurement of a team of seats on the arrays built.
pub(super) type TeamOn<'a> = &'a mut dyn FnMut(&[Seat]) -> Result<Bandwidth>;
/// A latency measurement from a CPU on the chase built.
pub(super) type ChaseFrom<'a> = &'a mut dyn FnMut(usize) -> Result<Latency>;

/// What a column builds and measures with: [`Live`] maps and measures; a
/// test's stand-in counts and makes figures up.
pub(super) trait Bench {
    /// Builds the bandwidth arrays of `b`, calls `body` with them, then
    /// unmaps them.
    fn on_arrays(&self, b: Build, body: &mut dyn FnMut(TeamOn<'_>) -> Result<()>) -> Result<()>;

    /// Builds the chase of `b`, calls `body` with it, then unmaps it.
    fn on_chase(&self, b: Build, body: &mut dyn FnMut(ChaseFrom<'_>) -> Result<()>)
    -> Result<()>;
}

/// The measurements themselves.
pub(super) struct Live<'a>(pub &'a MatrixConfig);

impl Bench for Live<'_> {
    fn on_arrays(&self, b: Build, body: &mut dyn FnMut(TeamOn<'_>) -> Result<()>) -> Result<()> {
        let cfg = self.0;
        let shape = (cfg.kernel.op.arrays(), b.threads);
        let pages = bandwidth_pages(cfg);
        let mut arrays = NodeArrays::build((b.node, b.bytes), shape, pages, b.cpu)?;
        body(&mut |seats| measure::bandwidth_on(seats, &mut arrays, cfg.kernel, cfg.timing))
    }

    fn on_chase(
        &self,
        b: Build,
        body: &mut dyn FnMut(ChaseFrom<'_>) -> Result<()>,
    ) -> Result<()> {
        let cfg = self.0;
        let seat = Seat {
            cpu: b.cpu,
            node: b.node,
        };
        measure::with_node_chase(seat, b.bytes, cfg.latency_pages, &cfg.pattern, |chase| {
            body(&mut |cpu| chase.latency_from(cpu))
        })
    }
}

/// What measuring a column gave.
pub(super) struct Column {
    /// One per row, in the rows' order; those the run did not reach empty.
    pub cells: Vec<Cell>,
    pub builds: Builds,
    /// The failure that ended the column (and the run), if one did.
    pub failure: Option<anyhow::Error>,
}

/// How a column is measured.
pub(super) struct Ctx<'a> {
    pub cfg: &'a MatrixConfig,
    pub bench: &'a dyn Bench,
    /// Whether to stop starting measurements (a signal, the time limit).
    pub stop: &'a dyn Fn() -> bool,
    /// The SLIT distance of a (CPU node, memory node) pair.
    pub distance: &'a dyn Fn(usize, usize) -> Option<u32>,
    /// With [`MatrixConfig::knee_by_class`]: the saturating thread count
    /// the scan found per (CPU node, distance), for the class's other
    /// cells.
    pub knees: std::cell::RefCell<std::collections::HashMap<(usize, Option<u32>), usize>>,
}

/// Memory node `m` against every row: the bandwidth of all rows on arrays
/// built once per working set, then the peak cells, then the latency of
/// all rows on a chase built once per size. Nothing is built once `stop`
/// says so. A failure ends the column and keeps what it measured before.
pub(super) fn measure_column(
    ctx: &Ctx<'_>,
    m: usize,
    rows: &[Row],
    progress: &mut dyn FnMut(&str),
) -> Column {
    let mut cells: Vec<Cell> = rows.iter().map(|r| Cell::empty(r.cpu_node, m)).collect();
    let mut builds = Builds::default();
    let failure = fill_column(ctx, m, rows, (&mut cells, &mut builds), progress).err();
    Column {
        cells,
        builds,
        failure,
    }
}

fn fill_column(
    ctx: &Ctx<'_>,
    m: usize,
    rows: &[Row],
    (cells, builds): (&mut [Cell], &mut Builds),
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let cfg = ctx.cfg;
    if cfg.single || cfg.saturated {
        for (ws, group) in by_size(rows, |r| r.ws) {
            if (ctx.stop)() {
                break;
            }
            let build = Build {
                node: m,
                bytes: ws,
                threads: group.iter().map(|&i| rows[i].cpus.len()).max().unwrap_or(1),
                cpu: builder_cpu(m, rows, &group),
            };
            ctx.bench.on_arrays(build, &mut |team| {
                builds.bandwidth += 1;
                for &i in &group {
                    bandwidth_cell(ctx, (&mut cells[i], &rows[i].cpus), team, progress)?;
                }
                Ok(())
            })?;
        }
    }
    if !cfg.peak.is_empty() {
        for (cell, row) in cells.iter_mut().zip(rows) {
            let pages = (bandwidth_pages(cfg), cfg.timing);
            let at = (&row.cpus[..], m);
            cell.peak = peak_cell(&cfg.peak, at, row.ws, pages, ctx.stop, progress)?;
        }
    }
    if cfg.latency {
        for (size, group) in by_size(rows, |r| r.chase) {
            let group: Vec<usize> = group
                .into_iter()
                .filter(|&i| cfg.wants_latency(rows[i].cpu_node, m))
                .collect();
            if group.is_empty() {
                continue;
            }
            if (ctx.stop)() {
                break;
            }
            let build = Build {
                node: m,
                bytes: size,
                threads: 1,
                cpu: builder_cpu(m, rows, &group),
            };
            ctx.bench.on_chase(build, &mut |chase| {
                builds.chase += 1;
                for &i in &group {
                    if (ctx.stop)() {
                        break;
                    }
                    let c = rows[i].cpu_node;
                    progress(&format!("cpu node {c} -> mem node {m}: latency"));
                    cells[i].latency = Some(chase(rows[i].cpus[0])?);
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

/// The rows (indexes) that want each size, sizes in the order rows first
/// want them: one build serves every row of a group.
fn by_size(rows: &[Row], size: impl Fn(&Row) -> usize) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        match out.iter_mut().find(|(s, _)| *s == size(r)) {
            Some((_, group)) => group.push(i),
            None => out.push((size(r), vec![i])),
        }
    }
    out
}

/// The CPU that maps and first touches a column's buffer: one of the
/// memory node's own where it is a row of the group (the page tables then
/// sit beside the pages), else the first row's first.
fn builder_cpu(m: usize, rows: &[Row], group: &[usize]) -> usize {
    let own = group.iter().find(|&&i| rows[i].cpu_node == m);
    rows[*own.unwrap_or(&group[0])].cpus[0]
}

/// One row's thread scaling (its first step is the single-thread figure)
/// or one thread alone, each team on `team`'s arrays, each step skipped
/// once `stop` says so.
fn bandwidth_cell(
    ctx: &Ctx<'_>,
    (cell, cpus): (&mut Cell, &[usize]),
    team: TeamOn<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let cfg = ctx.cfg;
    let (c, m) = (cell.cpu_node, cell.mem_node);
    let cut_short = std::cell::Cell::new(false);
    let stopped = std::cell::Cell::new(false);
    let first = std::cell::RefCell::new(None);
    let mut one = |n: usize| -> Result<Option<(Bandwidth, f64)>> {
        if (ctx.stop)() {
            cut_short.set(crate::interrupt::requested().is_some());
            stopped.set(true);
            return Ok(None);
        }
        progress(&format!("cpu node {c} -> mem node {m}: {n} thread(s)"));
        let seats: Vec<Seat> = cpus[..n].iter().map(|&cpu| Seat { cpu, node: m }).collect();
        let b = team(&seats)?;
        let v = b.stream_mb_s();
        if n == 1 {
            first.replace(Some(b.clone()));
        }
        Ok(Some((b, v)))
    };
    let class = (c, (ctx.distance)(c, m));
    let known = cfg
        .knee_by_class
        .then(|| ctx.knees.borrow().get(&class).copied())
        .flatten();
    if cfg.saturated {
        let scanned = match known {
            Some(k) => at_known_knee(k, class.1, &mut one),
            None => scaling::scan(cpus.len(), cfg.full_scaling, &mut one),
        };
        let (steps, peak, stop) = match scanned {
            Ok(curve) => curve,
            // A curve cut by a failure (a thread the task limit refused)
            // has no peak, but its one-thread figure stands.
            Err(e) => {
                if cfg.single {
                    cell.single = first.take();
                }
                return Err(e);
            }
        };
        if cfg.single {
            cell.single = steps.first().cloned();
        }
        if known.is_none()
            && let Some(best) = steps.get(peak)
        {
            ctx.knees.borrow_mut().insert(class, best.threads);
        }
        // A curve a signal cut short has no peak to report; one the time
        // limit cut short says so.
        if !steps.is_empty() && !cut_short.get() {
            let cut = cfg.time_limit.filter(|_| stopped.get());
            let cut = cut.map(Condition::time_limit);
            cell.saturated = Some(Scaling {
                steps,
                peak,
                stop,
                cut,
            });
        }
    } else if cfg.single {
        cell.single = one(1)?.map(|(b, _)| b);
    }
    Ok(())
}

/// The saturated figure of a cell whose class's knee is known: one
/// thread (the single-thread figure) and the knee's count, the best of the
/// two kept.
fn at_known_knee<T>(
    knee: usize,
    distance: Option<u32>,
    one: &mut dyn FnMut(usize) -> Result<Option<(T, f64)>>,
) -> Result<(Vec<T>, usize, String)> {
    let counts = if knee > 1 { vec![1, knee] } else { vec![1] };
    let mut steps = Vec::new();
    let mut best = (0, f64::MIN);
    for n in counts {
        let Some((step, mb_s)) = one(n)? else {
            return Ok((steps, best.0, format!("time limit reached at {n} threads")));
        };
        if mb_s > best.1 {
            best = (steps.len(), mb_s);
        }
        steps.push(step);
    }
    let at = distance.map_or("".into(), |d| format!(" at distance {d}"));
    Ok((
        steps,
        best.0,
        format!("measured at the knee of {knee} threads the scan found on this CPU node{at}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{Matrix, run_with};
    use super::*;
    use crate::kernels::{Op, Store};
    use crate::results::names::matrix::param::BUFFER_BUILDS;
    use crate::topology::{Topology, fixture};
    use std::cell::RefCell;

    /// Counts the buffers built and what was measured on each; figures
    /// made up: bandwidth grows to two threads then stays flat, latency
    /// is the chasing CPU's number plus 100 ns.
    #[derive(Default)]
    struct Fake {
        arrays: RefCell<Vec<Build>>,
        chases: RefCell<Vec<Build>>,
        teams: RefCell<Vec<(Build, Vec<Seat>)>>,
        chased: RefCell<Vec<(Build, usize)>>,
        /// The memory node whose chase cannot be built.
        refuse_chase_on: Option<usize>,
    }

    fn bandwidth(seats: &[Seat]) -> Bandwidth {
        let n = seats.len();
        Bandwidth {
            kernel: crate::kernels::best(Op::Triad, Store::Regular).unwrap(),
            threads: n,
            array_bytes: 1 << 20,
            reps: 1,
            iterations: 2,
            times_s: vec![n as f64 / n.min(2) as f64 * 1e-3],
            elapsed_s: 0.1,
            seen: measure::Seen {
                cpus_seen: seats.iter().map(|s| s.cpu).collect(),
                verified_pct: 100.0,
                ..Default::default()
            },
        }
    }

    impl Bench for Fake {
        fn on_arrays(
            &self,
            b: Build,
            body: &mut dyn FnMut(TeamOn<'_>) -> Result<()>,
        ) -> Result<()> {
            self.arrays.borrow_mut().push(b);
            body(&mut |seats| {
                self.teams.borrow_mut().push((b, seats.to_vec()));
                Ok(bandwidth(seats))
            })
        }

        fn on_chase(
            &self,
            b: Build,
            body: &mut dyn FnMut(ChaseFrom<'_>) -> Result<()>,
        ) -> Result<()> {
            if self.refuse_chase_on == Some(b.node) {
                anyhow::bail!("no chase on node {}", b.node);
            }
            self.chases.borrow_mut().push(b);
            body(&mut |cpu| {
                self.chased.borrow_mut().push((b, cpu));
                Ok(Latency {
                    size_bytes: b.bytes,
                    pattern: crate::kernels::pattern::Pattern::FullRandom,
                    samples: vec![100.0 + cpu as f64],
                    elapsed_s: 0.1,
                    seen: Default::default(),
                })
            })
        }
    }

    fn config() -> MatrixConfig {
        MatrixConfig::new().unwrap()
    }

    fn measure(topo: &Topology, cfg: &MatrixConfig, fake: &Fake) -> Matrix {
        run_with(topo, cfg, fake, &mut |_| {}).unwrap()
    }

    /// (CPU node, memory node) of every pair, row-major.
    fn pairs(topo: &Topology) -> Vec<(usize, usize)> {
        let mems: Vec<usize> = topo.usable_memory_nodes().iter().collect();
        let cpus = topo.usable_cpu_nodes();
        cpus.iter()
            .flat_map(|c| mems.iter().map(move |&m| (c, m)))
            .collect()
    }

    #[test]
    fn each_memory_node_builds_its_buffers_once_for_every_cpu_node() {
        for name in ["two-node", "amd-4node", "cxl-memonly", "big-16node"] {
            let topo = fixture(name);
            let fake = Fake::default();
            let m = measure(&topo, &config(), &fake);
            let mems: Vec<usize> = topo.usable_memory_nodes().iter().collect();
            let rows: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
            // One set of arrays and one chase per memory node, in order.
            let built: Vec<usize> = fake.arrays.borrow().iter().map(|b| b.node).collect();
            assert_eq!(built, mems, "{name}");
            let chased: Vec<usize> = fake.chases.borrow().iter().map(|b| b.node).collect();
            assert_eq!(chased, mems, "{name}");
            let one_each = Builds {
                bandwidth: 1,
                chase: 1,
            };
            let by_node: Vec<(usize, Builds)> = mems.iter().map(|&n| (n, one_each)).collect();
            assert_eq!(m.builds, by_node, "{name}");
            // Every row measured on them: each team on its arrays' node
            // with its row's CPUs, each row's first CPU chasing.
            for (b, seats) in fake.teams.borrow().iter() {
                assert!(seats.iter().all(|s| s.node == b.node), "{name}: {seats:?}");
                assert!(seats.len() <= b.threads, "{name}");
            }
            for &m in &mems {
                let from: Vec<usize> = fake
                    .chased
                    .borrow()
                    .iter()
                    .filter(|(b, _)| b.node == m)
                    .map(|p| p.1)
                    .collect();
                let firsts: Vec<usize> = rows
                    .iter()
                    .map(|&c| crate::probes::seats::node_cpus(&topo, c)[0])
                    .collect();
                assert_eq!(from, firsts, "{name}: column {m}");
            }
            // The cells come out row-major, every figure measured.
            let order: Vec<(usize, usize)> =
                m.cells.iter().map(|c| (c.cpu_node, c.mem_node)).collect();
            assert_eq!(order, pairs(&topo), "{name}");
            for cell in &m.cells {
                assert!(cell.single.is_some() && cell.saturated.is_some(), "{name}");
                let l = cell.latency.as_ref().unwrap();
                let first = crate::probes::seats::node_cpus(&topo, cell.cpu_node)[0];
                assert_eq!(l.samples, [100.0 + first as f64], "{name}");
                let single = cell.single.as_ref().unwrap();
                assert_eq!(single.seen.cpus_seen, [first], "{name}");
            }
            let note = format!(
                "buffers built: {} (bandwidth 1 per memory node, chase 1 per memory node)",
                2 * mems.len()
            );
            assert!(m.notes.contains(&note), "{name}: {:?}", m.notes);
            // Each cell's records carry its column's builds.
            let recs = m.records();
            assert!(!recs.is_empty());
            for r in &recs {
                assert_eq!(r.u64_param(BUFFER_BUILDS), Some(2), "{name}: {}", r.name);
            }
        }
    }

    #[test]
    fn rows_that_want_other_sizes_get_buffers_of_their_own() {
        // Node 1's CPUs see an L3 four times as large as node 0's: its
        // working set and chase differ, so each column builds two of each.
        let mut topo = fixture("two-node");
        let node1 = topo.usable_cpus_of(1);
        let top = topo.caches.iter().map(|c| c.level).max().unwrap();
        for c in topo.caches.iter_mut() {
            if c.level == top && c.cpus.iter().any(|cpu| node1.contains(cpu)) {
                c.size_bytes *= 64;
            }
        }
        for n in topo.nodes.iter_mut() {
            n.mem_free_bytes = Some(1 << 40);
        }
        let fake = Fake::default();
        let m = measure(&topo, &config(), &fake);
        let two = Builds {
            bandwidth: 2,
            chase: 2,
        };
        assert_eq!(m.builds, [(0, two), (1, two)]);
        let sizes = |v: &RefCell<Vec<Build>>| -> Vec<(usize, usize)> {
            v.borrow().iter().map(|b| (b.node, b.bytes)).collect()
        };
        let arrays = sizes(&fake.arrays);
        assert!(arrays[0].1 < arrays[1].1, "{arrays:?}");
        assert_eq!(arrays[..2], [(0, arrays[0].1), (0, arrays[1].1)]);
        let chases = sizes(&fake.chases);
        assert!(chases[0].1 < chases[1].1, "{chases:?}");
        // Each team on the arrays of its own row's size.
        for (b, seats) in fake.teams.borrow().iter() {
            let row = topo.cpu(seats[0].cpu).unwrap().node.unwrap();
            assert_eq!(b.bytes, arrays[row].1, "{seats:?}");
        }
        assert!(m.notes.contains(
            &"buffers built: 8 (bandwidth 2 per memory node, chase 2 per memory node)".into()
        ));
        assert_eq!(m.cells.len(), 4);
        assert!(m.cells.iter().all(|c| c.latency.is_some()));
    }

    #[test]
    fn a_chase_that_cannot_be_built_keeps_the_bandwidth_measured_before_it() {
        let topo = fixture("amd-4node");
        let fake = Fake {
            refuse_chase_on: Some(2),
            ..Default::default()
        };
        let m = measure(&topo, &config(), &fake);
        assert_eq!(m.failed.as_deref(), Some("no chase on node 2"));
        // Columns 0 and 1 whole, column 2's bandwidth, nothing of column
        // 3: row-major still.
        let want: Vec<(usize, usize)> = pairs(&topo)
            .into_iter()
            .filter(|(_, m)| *m <= 2)
            .collect();
        let order: Vec<(usize, usize)> =
            m.cells.iter().map(|c| (c.cpu_node, c.mem_node)).collect();
        assert_eq!(order, want);
        for c in &m.cells {
            assert!(c.single.is_some());
            assert_eq!(c.latency.is_some(), c.mem_node < 2, "{}->{}", c.cpu_node, c.mem_node);
        }
        let built: Vec<usize> = fake.arrays.borrow().iter().map(|b| b.node).collect();
        assert_eq!(built, [0, 1, 2]);
        assert_eq!(m.builds.last(), Some(&(2, Builds { bandwidth: 1, chase: 0 })));
        // No stop: the cells left out are the failure's, not the limit's.
        assert!(m.conditions.is_empty(), "{:?}", m.conditions);
    }

    #[test]
    fn nothing_is_built_once_time_is_up() {
        let topo = fixture("amd-4node");
        let cfg = config().time_limit(Some(std::time::Duration::ZERO));
        let fake = Fake::default();
        let m = measure(&topo, &cfg, &fake);
        assert!(fake.arrays.borrow().is_empty() && fake.chases.borrow().is_empty());
        assert_eq!(m.cells.len(), 16);
        assert!(m.cells.iter().all(|c| !c.measured()));
        assert!(m.builds.iter().all(|(_, b)| b.total() == 0));
        assert!(
            m.notes
                .iter()
                .any(|n| n == "time limit of 0 s reached: 16 cell(s) not fully measured"),
            "{:?}",
            m.notes
        );
        assert!(!m.notes.iter().any(|n| n.starts_with("buffers built")));
    }

    #[test]
    fn what_is_not_measured_is_not_built() {
        let topo = fixture("two-node");
        let fake = Fake::default();
        let cfg = config().measure(true, false, false);
        let m = measure(&topo, &cfg, &fake);
        assert_eq!(fake.arrays.borrow().len(), 2);
        assert!(fake.chases.borrow().is_empty());
        // One thread alone: teams of one only.
        assert!(fake.teams.borrow().iter().all(|(_, s)| s.len() == 1));
        assert!(m.cells.iter().all(|c| c.saturated.is_none() && c.single.is_some()));
        assert!(m.notes.contains(
            &"buffers built: 2 (bandwidth 1 per memory node, chase 0 per memory node)".into()
        ));
        let fake = Fake::default();
        let m = measure(&topo, &config().measure(false, false, true), &fake);
        assert!(fake.arrays.borrow().is_empty());
        assert_eq!(fake.chases.borrow().len(), 2);
        assert!(m.cells.iter().all(|c| c.single.is_none() && c.latency.is_some()));
    }
}
