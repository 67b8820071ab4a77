//! Pure functions over measured rows and records: summaries, scores,
//! classes, models, comparisons. Nothing here touches hardware.

pub(crate) mod atlas;
pub(crate) mod checks;
pub(crate) mod classes;
pub(crate) mod compare;
pub(crate) mod findings;
pub(crate) mod fleet;
pub(crate) mod model;
pub(crate) mod part_findings;
pub(crate) mod placement;
pub(crate) mod repeats;
pub(crate) mod sweep_summary;
