//! Rendering records and models for people: tables now, more formats as
//! probes arrive. Nothing here measures anything.

pub(crate) mod bars;
pub(crate) mod compare;
pub(crate) mod compare_metric;
pub(crate) mod fleet;
pub(crate) mod html;
pub(crate) mod render;
pub(crate) mod report;
pub(crate) mod sections;
pub(crate) mod svg;
pub(crate) mod tables;
pub(crate) mod topo;
pub(crate) mod topo_tables;
pub mod topo_text;

pub use crate::text::escape;
pub use crate::view::markdown_cell;
