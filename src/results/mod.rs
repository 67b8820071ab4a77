//! The results document: one versioned JSON file per run that every output
//! (tables, CSV, HTML, compare) renders.

mod checks;
mod condition;
mod document;
#[cfg(test)]
mod document_props;
mod lean;
pub(crate) mod names;
mod read;
mod reader;
mod time;
mod write;

pub(crate) use condition::Condition;
pub(crate) use document::*;
pub(crate) use lean::*;
pub(crate) use time::now_rfc3339;
pub(crate) use write::{
    check_not_an_input, check_output, check_output_dir, describe_file, remove_temp_in_flight,
    write_output,
};
