//! One sentence of a results document's findings, as the probes give
//! them and every output shows them.

/// One sentence of the findings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// Something that makes a figure doubtful, or that a reader must act on.
    pub flag: bool,
    pub text: String,
}

impl Finding {
    pub(crate) fn info(text: String) -> Self {
        Finding { flag: false, text }
    }

    pub(crate) fn flag(text: String) -> Self {
        Finding { flag: true, text }
    }
}
