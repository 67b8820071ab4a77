//! Record, param and metric names of the `matrix` probe alone.
