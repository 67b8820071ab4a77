//! One results document in any format, drawn by the probes' views: the
//! only path from records to what a person or a program reads.

use super::sections;
use crate::results::{Document, Record};
use crate::view::{Csv, Probe, Section, View, records_of};
use anyhow::Result;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables for a terminal.
    Text,
    /// Comma-separated values.
    Csv,
    /// The results document itself.
    Json,
    /// Markdown tables.
    Markdown,
    /// A LaTeX document.
    Latex,
    /// One self-contained HTML page with charts.
    Html,
}

/// `doc` in `format`, each probe's records drawn by its view in `views`
/// (the registry); records of a probe without a view get the generic
/// table.
pub(crate) fn render(doc: &Document, format: Format, views: &[&dyn Probe]) -> Result<String> {
    let parts = parts(doc, views);
    Ok(match format {
        Format::Json => String::from_utf8(doc.to_json()?)?,
        Format::Text => {
            let body = parts
                .iter()
                .map(|p| text(doc, p))
                .collect::<Vec<_>>()
                .join("\n");
            if parts.len() > 1 {
                let head =
                    sections::text_titled(Some(&title(doc, &parts)), &[findings(doc, views)]);
                format!("{head}{body}")
            } else {
                // One command's tables say what it measured; what makes a
                // figure doubtful follows them, as its report's findings
                // flag it.
                format!("{body}{}", warning_lines(doc, views))
            }
        }
        Format::Markdown => {
            sections::markdown(&title(doc, &parts), &all_sections(doc, &parts, views))
        }
        Format::Latex => sections::latex(&title(doc, &parts), &all_sections(doc, &parts, views)),
        Format::Csv => csv_text(&csv(doc, &parts))?,
        Format::Html => super::html::report(
            &[super::html::Run {
                label: "run".into(),
                doc,
            }],
            views,
        ),
    })
}

/// The records of one probe and the view that draws them (`None`: no view
/// knows the probe, e.g. a document from a newer numabench).
struct Part<'a> {
    view: Option<&'a dyn View>,
    probe: &'a str,
    records: Vec<&'a Record>,
}

fn parts<'a>(doc: &'a Document, views: &[&'a dyn Probe]) -> Vec<Part<'a>> {
    let mut out: Vec<Part<'a>> = views
        .iter()
        .map(|v| Part {
            view: Some(*v as &dyn View),
            probe: v.probe(),
            records: records_of(doc, v.probe()),
        })
        .filter(|p| !p.records.is_empty())
        .collect();
    for r in &doc.records {
        if !views.iter().any(|v| v.probe() == r.probe) {
            match out
                .iter_mut()
                .find(|p| p.view.is_none() && p.probe == r.probe)
            {
                Some(p) => p.records.push(r),
                None => out.push(Part {
                    view: None,
                    probe: &r.probe,
                    records: vec![r],
                }),
            }
        }
    }
    out
}

/// A document of one probe is titled by its view; one of several (a
/// run's) by its command and the probes it holds, so that it is not read
/// as its first probe's.
fn title(doc: &Document, parts: &[Part<'_>]) -> String {
    match parts {
        [Part { view: Some(v), .. }] => v.title(doc),
        _ => {
            let command = match doc.command.get(1).map(String::as_str) {
                Some("run") => " run",
                _ => "",
            };
            // The run's own records (part times) are not a probe it ran.
            let probes: Vec<&str> = parts
                .iter()
                .map(|p| p.probe)
                .filter(|p| *p != crate::results::names::probe::RUN)
                .collect();
            format!(
                "numabench{command}: {} ({}), {}; probes: {}",
                doc.host.hostname,
                doc.host.cpu_model,
                doc.started,
                probes.join(", ")
            )
        }
    }
}

/// The findings of the HTML report, as a section: a flag starts with
/// `warning:`, as run's summary marks it.
fn findings(doc: &Document, views: &[&dyn Probe]) -> Section {
    let mut s = Section::new("findings");
    s.lines = crate::analysis::findings::findings(doc, views)
        .into_iter()
        .map(|f| {
            if f.flag {
                format!("warning: {}", f.text)
            } else {
                f.text
            }
        })
        .collect();
    s
}

/// The flagged findings of `doc`, a `warning:` line each.
fn warning_lines(doc: &Document, views: &[&dyn Probe]) -> String {
    crate::analysis::findings::findings(doc, views)
        .into_iter()
        .filter(|f| f.flag)
        .map(|f| format!("warning: {}\n", crate::text::escape(&f.text)))
        .collect()
}

fn part_sections(doc: &Document, p: &Part<'_>) -> Vec<Section> {
    match p.view {
        Some(v) => v.sections(doc, &p.records),
        None => vec![generic_section(p.probe, &p.records)],
    }
}

/// Every part's sections; a document of several parts (a run) opens, as
/// the HTML report does, with its findings and the machine's topology.
fn all_sections(doc: &Document, parts: &[Part<'_>], views: &[&dyn Probe]) -> Vec<Section> {
    let mut out = Vec::new();
    if parts.len() > 1 {
        out.push(findings(doc, views));
        out.extend(
            super::topo_tables::sections(&doc.host.topology)
                .into_iter()
                .map(|s| Section {
                    title: format!("topology: {}", s.title),
                    ..s
                }),
        );
    }
    out.extend(parts.iter().flat_map(|p| part_sections(doc, p)));
    out
}

fn text(doc: &Document, p: &Part<'_>) -> String {
    match p.view {
        Some(v) => v.text(doc, &p.records).unwrap_or_else(|| {
            sections::text_titled(Some(&v.title(doc)), &v.sections(doc, &p.records))
        }),
        None => sections::text(&[generic_section(p.probe, &p.records)]),
    }
}

/// A probe without a view: one row per record, one column per metric,
/// and the records' notes under it.
pub(crate) fn generic_section(probe: &str, records: &[&Record]) -> Section {
    let mut s = crate::view::section::metrics_table(probe, records);
    for r in records {
        for n in &r.notes {
            s.lines.push(format!("{}: {n}", r.name));
        }
    }
    s
}

/// The CSV of a document: a probe's own table where the document holds one
/// probe whose view has one, else the long form over every record.
fn csv(doc: &Document, parts: &[Part<'_>]) -> Csv {
    if let [
        Part {
            view: Some(v),
            records,
            ..
        },
    ] = parts
        && let Some(c) = v.csv(doc, records)
    {
        return c;
    }
    let records: Vec<&Record> = parts.iter().flat_map(|p| p.records.clone()).collect();
    long_csv(&records)
}

/// One line per record and metric: probe, name, every param seen (blank
/// where a record lacks it), metric, value, unit.
pub(crate) fn long_csv(records: &[&Record]) -> Csv {
    let mut params: Vec<&str> = Vec::new();
    for r in records {
        for k in r.params.keys() {
            if !params.contains(&k.as_str()) {
                params.push(k);
            }
        }
    }
    let mut out = Csv {
        header: ["probe", "name"]
            .iter()
            .map(|s| s.to_string())
            .chain(params.iter().map(|s| s.to_string()))
            .chain(["metric", "value", "unit"].iter().map(|s| s.to_string()))
            .collect(),
        ..Default::default()
    };
    for r in records {
        let fixed: Vec<String> = [r.probe.clone(), r.name.clone()]
            .into_iter()
            .chain(params.iter().map(|k| r.param_shown(k).unwrap_or_default()))
            .collect();
        for (name, m) in &r.metrics {
            let mut row = fixed.clone();
            row.extend([name.clone(), format!("{}", m.value), m.unit.clone()]);
            out.rows.push(row);
        }
        for n in &r.notes {
            out.notes.push(format!("{}: {n}", r.name));
        }
    }
    out
}

/// A CSV table as text: fields quoted only where they must be, control
/// characters from inputs made visible, notes as `# note:` lines.
pub(crate) fn csv_text(c: &Csv) -> Result<String> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    if !c.header.is_empty() {
        w.write_record(c.header.iter().map(|f| crate::text::escape(f).into_owned()))?;
    }
    for r in &c.rows {
        w.write_record(r.iter().map(|f| crate::text::escape(f).into_owned()))?;
    }
    let mut out = String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    for n in &c.notes {
        out.push_str(&format!("# note: {}\n", crate::text::escape(n)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Better, Record};
    use crate::view::Block;

    /// A probe that exists only as a view, as a new probe starts: every
    /// format must draw it without a line anywhere else in output.
    struct Toy;

    impl View for Toy {
        fn probe(&self) -> &'static str {
            "toy"
        }
        fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
            let mut s = Section::new("toy figures");
            s.header = vec!["name".into(), "speed".into()];
            for r in records {
                s.rows.push(vec![
                    r.name.clone(),
                    format!("{:.1}", r.metrics["speed"].value),
                ]);
            }
            vec![s]
        }
        fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
            Some(Csv {
                header: vec!["name".into(), "speed".into()],
                rows: records
                    .iter()
                    .map(|r| vec![r.name.clone(), r.metrics["speed"].value.to_string()])
                    .collect(),
                notes: vec![],
            })
        }
        fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
            let mut out: Vec<Block> = self
                .sections(doc, records)
                .into_iter()
                .map(Block::Section)
                .collect();
            out.push(Block::Note("drawn by the toy view".into()));
            out
        }
    }

    impl Probe for Toy {}

    fn toy_document() -> Document {
        let mut doc = Document::new(&crate::topology::fixture("two-node"));
        doc.records.push(Record::new("toy", "fast one").metric(
            "speed",
            42.5,
            "m/s",
            Better::Higher,
        ));
        doc.records.push(Record::new("other", "unviewed").metric(
            "speed",
            7.0,
            "m/s",
            Better::Higher,
        ));
        doc
    }

    #[test]
    fn a_registered_view_is_drawn_in_every_format() {
        let doc = toy_document();
        let views: &[&dyn Probe] = &[&Toy];
        let want = [
            (Format::Text, "toy figures"),
            (Format::Markdown, "| fast one | 42.5 |"),
            (Format::Latex, "fast one & 42.5"),
            (Format::Html, "drawn by the toy view"),
            (Format::Json, "\"fast one\""),
        ];
        for (format, needle) in want {
            let out = render(&doc, format, views).unwrap();
            assert!(out.contains(needle), "{format:?} lacks {needle:?}:\n{out}");
            // A probe no view knows still shows, in the generic table.
            assert!(
                out.contains("unviewed"),
                "{format:?} lost the unviewed record"
            );
        }
        // Two probes in one document: the long form, which holds both.
        let csv = render(&doc, Format::Csv, views).unwrap();
        assert!(csv.contains("toy,fast one,speed,42.5,m/s"), "{csv}");
        let only_toy = Document {
            records: doc.records[..1].to_vec(),
            ..doc.clone()
        };
        let csv = render(&only_toy, Format::Csv, views).unwrap();
        assert_eq!(csv, "name,speed\nfast one,42.5\n");
    }

    #[test]
    fn without_its_view_a_probe_falls_back_to_the_generic_table() {
        let doc = toy_document();
        let text = render(&doc, Format::Text, &[]).unwrap();
        assert!(!text.contains("toy figures"));
        assert!(
            text.contains("fast one") && text.contains("42.500"),
            "{text}"
        );
    }

    /// The run document of the golden cases, through the real registry.
    fn run_document() -> Document {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases/run.json");
        Document::load(&path).unwrap().document
    }

    #[test]
    fn a_run_in_markdown_has_its_findings_and_topology_and_no_entity() {
        let doc = run_document();
        let md = render(&doc, Format::Markdown, crate::probes::REGISTRY).unwrap();
        assert!(md.starts_with("# numabench run: vm (AMD EPYC), "), "{md}");
        assert!(
            md.contains("; probes: matrix, sweep, latency, mlp, loaded, peak, c2c\n"),
            "{md}"
        );
        let found = crate::analysis::findings::findings(&doc, crate::probes::REGISTRY);
        let at = md.find("## findings\n").expect("no findings");
        // Every finding in the report's order, a flag marked as one.
        let mut from = at;
        for f in &found {
            let line = format!(
                "- {}{}\n",
                if f.flag { "warning: " } else { "" },
                crate::view::markdown_cell(&f.text)
            );
            let i = md[from..]
                .find(&line)
                .unwrap_or_else(|| panic!("{line} missing or out of order"));
            from += i;
        }
        assert!(found.iter().any(|f| f.flag));
        assert!(md.contains("## topology: distances"), "{md}");
        assert!(
            !md.contains("## \n") && !md.lines().any(|l| l.trim_end() == "##"),
            "an empty heading"
        );
        for entity in ["&gt;", "&lt;", "&amp;"] {
            assert!(!md.contains(entity), "{entity} in the Markdown");
        }
        // The arrows of the node pairs read as they are.
        assert!(md.contains("0->0"), "{md}");
    }

    #[test]
    fn a_run_in_text_is_headed_as_a_run_with_its_findings() {
        let doc = run_document();
        let text = render(&doc, Format::Text, crate::probes::REGISTRY).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("numabench run: vm (AMD EPYC), "),
            "{first}"
        );
        assert!(
            first.ends_with("probes: matrix, sweep, latency, mlp, loaded, peak, c2c"),
            "{first}"
        );
        assert!(text.contains("\n\nfindings\n  one NUMA node: "), "{text}");
        assert!(text.contains("\n  warning: sweep: CV above 5%"), "{text}");
        // A document of one probe keeps its view's title.
        let mut matrix = doc.clone();
        matrix.records.retain(|r| r.probe == "matrix");
        let one = render(&matrix, Format::Text, crate::probes::REGISTRY).unwrap();
        assert!(one.starts_with("numabench matrix: "), "{one}");
    }
}
