//! Rendering records and models for people: tables now, more formats as
//! probes arrive. Nothing here measures anything.

pub mod compare;
pub mod html;
pub mod render;
pub mod report;
pub mod sections;
pub mod svg;
pub mod tables;
pub mod topo_tables;
pub mod topo_text;

pub use crate::text::escape;
pub use crate::view::markdown_cell;
