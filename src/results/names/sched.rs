//! Record, param and metric names of the `sched` probe alone.
