//! Typed reading of a record: the one place that looks a param or a metric
//! up by name. Views, summaries and the fleet's figures ask for a value of
//! the type they need (with the names from `results::names`) and get
//! `None` where it is missing or of another type, never a JSON value to
//! pick apart.

use super::document::{Metric, Record};
use serde_json::{Map, Value};

impl Record {
    /// A text param's value; `None` where it is missing or not text.
    pub fn str_param(&self, key: &str) -> Option<&str> {
        self.params.get(key)?.as_str()
    }

    /// A whole-number param (a node, a count, a size in bytes).
    pub fn u64_param(&self, key: &str) -> Option<u64> {
        self.params.get(key)?.as_u64()
    }

    /// A whole-number param as an index or a count (a node, a GPU, a size).
    pub fn usize_param(&self, key: &str) -> Option<usize> {
        usize::try_from(self.u64_param(key)?).ok()
    }

    /// A number param, whole or not.
    pub fn f64_param(&self, key: &str) -> Option<f64> {
        self.params.get(key)?.as_f64()
    }

    /// A yes/no param.
    pub fn bool_param(&self, key: &str) -> Option<bool> {
        self.params.get(key)?.as_bool()
    }

    /// Whether the record has the param at all, of any type.
    pub fn has_param(&self, key: &str) -> bool {
        self.params.contains_key(key)
    }

    /// A param as written in a table: text as it is, anything else in its
    /// JSON form (a number, `true`, a list); `None` where it is missing or
    /// null (a run that had no value for it).
    pub fn param_shown(&self, key: &str) -> Option<String> {
        match self.params.get(key)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            v => Some(v.to_string()),
        }
    }

    /// A list param's items, for the probe that wrote them to read.
    pub fn list_param(&self, key: &str) -> Option<&[Value]> {
        self.params.get(key)?.as_array().map(Vec::as_slice)
    }

    /// An object param's entries, for the probe that wrote them to read.
    pub fn map_param(&self, key: &str) -> Option<&Map<String, Value>> {
        self.params.get(key)?.as_object()
    }

    /// A list param's whole numbers; items of another type are skipped.
    pub fn u64s_param(&self, key: &str) -> Option<Vec<u64>> {
        Some(
            self.list_param(key)?
                .iter()
                .filter_map(Value::as_u64)
                .collect(),
        )
    }

    /// A list param's numbers; items of another type are skipped.
    pub fn f64s_param(&self, key: &str) -> Option<Vec<f64>> {
        Some(
            self.list_param(key)?
                .iter()
                .filter_map(Value::as_f64)
                .collect(),
        )
    }

    /// A list param's texts; items of another type are skipped.
    pub fn strs_param(&self, key: &str) -> Option<Vec<&str>> {
        Some(
            self.list_param(key)?
                .iter()
                .filter_map(Value::as_str)
                .collect(),
        )
    }

    /// A param read as the type a probe wrote it from (a struct, a map);
    /// `None` where it is missing or does not read as `T`.
    pub fn param_as<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_value(self.params.get(key)?.clone()).ok()
    }

    /// A metric with its unit and direction.
    pub fn measured(&self, key: &str) -> Option<&Metric> {
        self.metrics.get(key)
    }

    /// A metric's value where it is a finite number.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.metrics
            .get(key)
            .map(|m| m.value)
            .filter(|v| v.is_finite())
    }

    /// The (CPU node, memory node) the record measured, where it names both.
    pub fn node_pair(&self) -> Option<(u64, u64)> {
        use super::names::param;
        Some((
            self.u64_param(param::CPU_NODE)?,
            self.u64_param(param::MEM_NODE)?,
        ))
    }

    /// Whether the record's CPU node and memory node are the same node.
    pub fn is_local(&self) -> bool {
        self.node_pair().is_some_and(|(c, m)| c == m)
    }
}

#[cfg(test)]
mod tests {
    use crate::results::Better;
    use crate::results::Record;
    use crate::results::names::param;

    #[test]
    fn each_reader_gives_its_type_or_none() {
        let r = Record::new("p", "n")
            .param(param::CPU_NODE, 1)
            .param(param::MEM_NODE, 1)
            .param(param::PATTERN, "page-local")
            .param("ratio", 0.5)
            .param("on", true)
            .metric("latency_ns", 90.5, "ns", Better::Lower);
        assert_eq!(r.u64_param(param::CPU_NODE), Some(1));
        assert_eq!(r.u64_param(param::PATTERN), None);
        assert_eq!(r.usize_param(param::CPU_NODE), Some(1));
        assert_eq!(r.usize_param("ratio"), None);
        assert_eq!(r.str_param(param::PATTERN), Some("page-local"));
        assert_eq!(r.str_param(param::CPU_NODE), None);
        assert_eq!(r.f64_param("ratio"), Some(0.5));
        assert_eq!(r.f64_param(param::CPU_NODE), Some(1.0));
        assert_eq!(r.bool_param("on"), Some(true));
        assert_eq!(r.param_shown(param::PATTERN).as_deref(), Some("page-local"));
        assert_eq!(r.param_shown(param::CPU_NODE).as_deref(), Some("1"));
        assert!(r.has_param("ratio") && !r.has_param("missing"));
        assert_eq!(r.value("latency_ns"), Some(90.5));
        assert_eq!(r.value("missing"), None);
        assert_eq!(
            r.measured("latency_ns").map(|m| m.unit.as_str()),
            Some("ns")
        );
        assert_eq!(r.node_pair(), Some((1, 1)));
        assert!(r.is_local());
        let remote = Record::new("p", "n")
            .param(param::CPU_NODE, 0)
            .param(param::MEM_NODE, 1);
        assert!(!remote.is_local());
        assert!(!Record::new("p", "n").is_local());
    }

    #[test]
    fn a_null_param_is_not_shown() {
        let r = Record::new("p", "n")
            .param("gpu_node", serde_json::Value::Null)
            .param("list", vec![1, 2]);
        assert_eq!(r.param_shown("gpu_node"), None);
        assert!(r.has_param("gpu_node"));
        assert_eq!(r.param_shown("list").as_deref(), Some("[1,2]"));
    }

    #[test]
    fn lists_and_maps_read_as_their_items() {
        let r = Record::new("p", "n")
            .param("nodes", serde_json::json!([0, 1.5, "x", 2]))
            .param("settings", serde_json::json!({"a": "1", "b": 2}));
        assert_eq!(r.list_param("nodes").map(<[_]>::len), Some(4));
        assert_eq!(r.u64s_param("nodes"), Some(vec![0, 2]));
        assert_eq!(r.f64s_param("nodes"), Some(vec![0.0, 1.5, 2.0]));
        assert_eq!(r.strs_param("nodes"), Some(vec!["x"]));
        assert_eq!(r.u64s_param("settings"), None);
        assert_eq!(r.map_param("settings").map(|m| m.len()), Some(2));
        assert_eq!(r.map_param("nodes"), None);
        let m: Option<std::collections::BTreeMap<String, serde_json::Value>> =
            r.param_as("settings");
        assert_eq!(m.map(|m| m.len()), Some(2));
        assert_eq!(r.param_as::<Vec<u64>>("nodes"), None);
        assert_eq!(r.param_as::<u64>("missing"), None);
    }
}
