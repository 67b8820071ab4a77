//! Several results documents in one format: the HTML report of them all,
//! or each drawn as its command printed it, one after the other.

use super::html::{Run, report};
use super::render::{Format, render};
use crate::results::Document;
use crate::view::Probe;
use anyhow::Result;

/// `runs` in `format`, drawn by `views`: one HTML report; for JSON the document itself, or
/// an array of them; otherwise each document's rendering, separated by a
/// blank line.
pub(crate) fn runs(runs: &[Run<'_>], format: Format, views: &[&dyn Probe]) -> Result<String> {
    Ok(match format {
        Format::Html => report(runs, views),
        Format::Json if runs.len() > 1 => {
            let all: Vec<&Document> = runs.iter().map(|r| r.doc).collect();
            format!("{}\n", crate::text::json_pretty(&all)?)
        }
        f => runs
            .iter()
            .map(|r| render(r.doc, f, views))
            .collect::<Result<Vec<_>>>()?
            .join("\n"),
    })
}
