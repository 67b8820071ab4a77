//! Writing: devices, FIFOs and symlinks at an output path, planted temp-file
//! links, outputs checked before any measurement, write errors on stdout.
