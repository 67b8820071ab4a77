//! Property tests: a results file from anywhere (arbitrary bytes, or a
//! valid document with any field replaced) loads as a document or an
//! error, and whatever loads renders, never a panic.

use super::*;
use crate::output::html::{Run, report};
use proptest::prelude::*;
use serde_json::Value;

/// A document with what report draws: a 2x2 matrix, latency, a sweep curve
/// and a scaling curve.
fn sample() -> Value {
    let mut doc = Document::new(&crate::topology::fixture("two-node"));
    for (c, m, v) in [
        (0, 0, 10_000.0),
        (0, 1, 6_000.0),
        (1, 0, 6_100.0),
        (1, 1, 9_900.0),
    ] {
        for kind in ["bandwidth_1t", "bandwidth_sat"] {
            doc.records.push(
                Record::new("matrix", &format!("{kind} {c}->{m}"))
                    .param("kind", kind)
                    .param("cpu_node", c)
                    .param("mem_node", m)
                    .param("threads", 1)
                    .metric("bandwidth_mb_s", v, "MB/s", Better::Higher),
            );
        }
        doc.records.push(
            Record::new("matrix", &format!("latency {c}->{m}"))
                .param("kind", "latency")
                .param("cpu_node", c)
                .param("mem_node", m)
                .metric("latency_ns", 1e6 / v, "ns", Better::Lower),
        );
    }
    for (i, size) in [16usize, 256, 4096, 65536].into_iter().enumerate() {
        let mut rec = Record::new("sweep", &format!("read {size}K"))
            .param("size_bytes", size * 1024)
            .param("operation", "read")
            .param("threads", 2)
            .metric(
                "bandwidth_mb_s",
                50_000.0 / (i + 1) as f64,
                "MB/s",
                Better::Higher,
            );
        rec.samples
            .insert("bandwidth_mb_s".into(), vec![1.0, 2.0, 3.0]);
        doc.records.push(rec);
    }
    doc.finish();
    serde_json::to_value(&doc).unwrap()
}

/// Every leaf of a JSON value, by JSON pointer.
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| leaves(x, format!("{at}/{k}"), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| leaves(x, format!("{at}/{i}"), out)),
        _ => out.push(at),
    }
}

/// A replacement for a leaf: the values a hostile or damaged file holds.
fn hostile() -> impl Strategy<Value = Value> {
    prop_oneof![
        proptest::num::f64::ANY
            .prop_filter("JSON has no NaN or infinity", |v| v.is_finite())
            .prop_map(Value::from),
        Just(Value::from(5e-324)),
        Just(Value::from(f64::MAX)),
        Just(Value::from(-f64::MAX)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::MIN)),
        Just(Value::from(0)),
        Just(Value::from(1usize << 20)),
        Just(Value::Null),
        Just(Value::Bool(true)),
        Just(Value::Array(vec![])),
        Just(Value::Object(Default::default())),
        "\\PC{0,12}".prop_map(Value::from),
    ]
}

/// Loads `text`; what loads must render as a report, a matrix view and a
/// comparison either way round with a sound document.
fn load_and_render(text: &str) {
    if let Ok(loaded) = Document::from_json(text) {
        let doc = loaded.document;
        let html = report(
            &[Run {
                label: "r".into(),
                doc: &doc,
            }],
            crate::probes::REGISTRY,
        );
        assert!(html.contains("</html>"));
        use crate::output::render::{Format, render};
        for format in [Format::Text, Format::Csv, Format::Markdown, Format::Latex] {
            let _ = render(&doc, format, crate::probes::REGISTRY);
        }
        let _ = crate::analysis::atlas::Atlas::from_records(&doc.records);
        let base = Document::from_json(&sample().to_string()).unwrap().document;
        let labels = ["a".to_string(), "b".to_string()];
        use crate::analysis::compare::Metrics;
        for c in [
            crate::analysis::compare::compare(&base, &[&doc], Metrics::All),
            crate::analysis::compare::compare(&doc, &[&base], Metrics::Main),
        ] {
            let _ = crate::output::compare::text(&c, &labels);
            let _ = crate::output::compare::csv(&c, &labels);
            let _ = crate::output::compare_metric::text(&c, &labels, &[]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn arbitrary_bytes_are_a_document_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        load_and_render(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn a_document_with_any_field_replaced_loads_or_is_refused(
        picks in proptest::collection::vec((any::<proptest::sample::Index>(), hostile()), 1..4),
    ) {
        let mut doc = sample();
        let mut at = Vec::new();
        leaves(&doc, String::new(), &mut at);
        for (index, value) in picks {
            if let Some(leaf) = doc.pointer_mut(index.get(&at).as_str()) {
                *leaf = value;
            }
        }
        load_and_render(&doc.to_string());
    }

    #[test]
    fn a_document_with_bytes_changed_loads_or_is_refused(
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = sample().to_string().into_bytes();
        for (index, b) in edits {
            let i = index.index(bytes.len());
            bytes[i] = b;
        }
        load_and_render(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn the_sample_draws_every_part() {
    let loaded = Document::from_json(&sample().to_string()).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let html = report(
        &[Run {
            label: "r".into(),
            doc: &loaded.document,
        }],
        crate::probes::REGISTRY,
    );
    assert!(html.contains("<svg") && html.contains("<table"), "{html}");
    assert!(html.contains("bandwidth against buffer size"));
}

#[test]
fn a_node_number_past_the_id_bound_is_refused() {
    let mut doc = sample();
    doc["host"]["topology"]["nodes"][0]["id"] = Value::from(1u64 << 61);
    let e = Document::from_json(&doc.to_string()).unwrap_err();
    assert!(
        format!("{e:#}").contains("node 2305843009213693952"),
        "{e:#}"
    );
}
