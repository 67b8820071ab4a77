//! Rendering records and models for people: tables now, more formats as
//! probes arrive. Nothing here measures anything.

pub mod autonuma;
pub mod compare;
pub mod html;
pub mod matrix;
pub mod mem;
pub mod render;
pub mod sched;
pub mod sections;
pub mod svg;
pub mod sweep;
pub mod topo_text;

pub use crate::view::{escape, markdown_cell};
