//! Record, param and metric names of the `sweep` probe alone.
