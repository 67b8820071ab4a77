//! Record, param and metric names of the `autonuma` probe alone.
