//! The matrix drawn by its registered view, for callers that take the
//! matrix part of a larger document (`numabench run` writes matrix.csv from
//! a document holding every part). New code renders through
//! `render::render` instead.

use super::render::csv_text;
use crate::results::names::probe;
use crate::results::{Document, Record};
use crate::view::records_of;

/// The matrix records of one document.
pub(crate) struct View<'a> {
    doc: &'a Document,
    records: Vec<&'a Record>,
}

impl<'a> View<'a> {
    /// Gamma comes from the document; `_peak` is kept for the callers'
    /// signature.
    pub(crate) fn new(doc: &'a Document, _peak: Option<f64>) -> Self {
        View {
            doc,
            records: records_of(doc, probe::MATRIX),
        }
    }

    fn view(&self) -> Option<&'static dyn crate::view::View> {
        crate::probes::VIEWS
            .iter()
            .copied()
            .find(|v| v.probe() == probe::MATRIX)
    }

    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        self.view().map_or_else(String::new, |v| {
            super::sections::text_titled(
                Some(&v.title(self.doc)),
                &v.sections(self.doc, &self.records),
            )
        })
    }

    #[cfg(test)]
    pub(crate) fn markdown(&self) -> String {
        self.view().map_or_else(String::new, |v| {
            super::sections::markdown(&v.title(self.doc), &v.sections(self.doc, &self.records))
        })
    }

    pub(crate) fn csv(&self) -> String {
        self.view()
            .and_then(|v| v.csv(self.doc, &self.records))
            .and_then(|c| csv_text(&c).ok())
            .unwrap_or_default()
    }
}
