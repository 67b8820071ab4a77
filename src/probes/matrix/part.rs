//! The matrix in the repeat check: its idle-latency cells. Its part in
//! `run` is run's own first step, in this process.

use super::MatrixView;
use crate::results::Record;
use crate::results::names::matrix::{kind, param};
use crate::results::names::metric;
use crate::view::Probe;

impl Probe for MatrixView {
    fn idle_chase(&self, r: &Record) -> Option<f64> {
        (r.str_param(param::KIND) == Some(kind::LATENCY))
            .then(|| r.value(metric::LATENCY_NS))
            .flatten()
    }

    fn idle_chase_source(&self) -> &'static str {
        "the matrix"
    }
}
