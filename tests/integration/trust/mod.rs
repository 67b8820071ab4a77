//! The reliability contract, case by case: what numabench does when it is run
//! as root by a careless user, fed hostile files, or stopped halfway.
//! Each submodule reproduces one family of cases and asserts the fixed
//! behaviour.

mod inputs;
mod limits;
mod memory;
mod panics;
mod signals;
mod tasks;
mod writes;
