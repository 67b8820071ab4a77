//! Non-regular and malformed inputs: FIFOs, devices, directories, bad sysfs values,
//! control characters on the way to a terminal or a table.
