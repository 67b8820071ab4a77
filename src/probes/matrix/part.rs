//! The matrix in the jobs over several probes: its part in `run` is run's
//! own first step, in this process.

use super::MatrixView;
use crate::view::Probe;

impl Probe for MatrixView {}
