//! Pure functions over measured rows and records: summaries, scores,
//! classes, models, comparisons. Nothing here touches hardware.

pub mod sweep_summary;
