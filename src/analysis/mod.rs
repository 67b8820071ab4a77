//! Pure functions over measured rows and records: summaries, scores,
//! classes, models, comparisons. Nothing here touches hardware.

pub mod atlas;
pub mod classes;
pub mod compare;
pub mod findings;
pub mod fleet;
pub mod model;
pub mod placement;
pub mod repeats;
pub mod sweep_summary;
