//! Record, param and metric names of the `model` probe alone.
