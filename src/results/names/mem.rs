//! Record, param and metric names of the `mem` probe alone.
