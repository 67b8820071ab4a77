//! The data-access performance model (Braithwaite 2012) applied to a
//! measured matrix: its records (Gamma, classes with their alpha, D for an
//! access mix, predictions for a process) and a check of the model against
//! a mixed placement measured now.

pub(crate) mod view;
