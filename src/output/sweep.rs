//! Transitional: `cli/run.rs` writes its sweep.csv from rows through here
//! until it renders that file from its document. The CSV is the sweep
//! view's, drawn from the rows' records; delete this with that call.

use crate::probes::sweep::{SweepRow, records, view};
use crate::results::Record;

pub(crate) fn csv(rows: &[SweepRow]) -> String {
    let recs = records::records(rows, &[]);
    let refs: Vec<&Record> = recs.iter().collect();
    super::render::csv_text(&view::csv(&records::rows(&refs), Vec::new())).unwrap_or_default()
}
