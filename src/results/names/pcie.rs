//! Record, param and metric names of the `pcie` probe alone.
