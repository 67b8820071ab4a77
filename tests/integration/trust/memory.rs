//! Memory admission: every command that maps memory refuses, before mapping,
//! what the target nodes cannot hold, and admits the largest size that fits.
