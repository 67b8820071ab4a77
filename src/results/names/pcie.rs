//! Record, param and metric names of the `pcie` probe alone.

/// What a record of the probe is (its `kind` param).
pub(crate) mod kind {
    /// One GPU: its node, its link and Phi.
    pub(crate) const GPU: &str = "gpu";
    /// One (GPU, memory node, direction, size): every timed copy.
    pub(crate) const SIZE: &str = "size";
    /// One (GPU, memory node, direction): the best figure, alpha_p, class.
    pub(crate) const BEST: &str = "best";
    /// One (GPU, CPU node, memory node, direction, size) with the thread on
    /// another node than the memory node's own: every timed copy.
    pub(crate) const PAIR_SIZE: &str = "pair_size";
    /// One (GPU, CPU node, memory node, direction), the memory node's own
    /// CPU node included: the best figure and alpha_p (a cell of the node x
    /// node table, Braithwaite's Table 5.5).
    pub(crate) const PAIR: &str = "pair";
}

/// Where Phi comes from (the `phi_source` param).
pub(crate) mod phi_source {
    /// `--phi`.
    pub(crate) const GIVEN: &str = "given";
    /// The PCIe link in sysfs.
    pub(crate) const LINK: &str = "link";
}

pub(crate) mod param {
    /// One of [`super::kind`].
    pub(crate) const KIND: &str = "kind";
    /// The CUDA device ordinal.
    pub(crate) const GPU: &str = "gpu";
    pub(crate) const GPU_NAME: &str = "gpu_name";
    /// As the driver writes it, e.g. `0000:3B:00.0`.
    pub(crate) const PCI_BUS_ID: &str = "pci_bus_id";
    /// The node sysfs gives for the GPU's PCI device.
    pub(crate) const GPU_NODE: &str = "gpu_node";
    pub(crate) const LINK_SPEED_GT_S: &str = "link_speed_gt_s";
    pub(crate) const LINK_WIDTH: &str = "link_width";
    pub(crate) const MAX_LINK_SPEED_GT_S: &str = "max_link_speed_gt_s";
    pub(crate) const MAX_LINK_WIDTH: &str = "max_link_width";
    /// One of [`super::phi_source`].
    pub(crate) const PHI_SOURCE: &str = "phi_source";
    /// `download` or `readback`.
    pub(crate) const DIRECTION: &str = "direction";
    /// Timed copies behind a figure.
    pub(crate) const TRIES: &str = "tries";
    /// The bandwidth class of a memory node (0 = fastest).
    pub(crate) const CLASS: &str = "class";
    /// Phi on a best record, beside its alpha_p.
    pub(crate) const PHI_MB_S: &str = "phi_mb_s";
}

pub(crate) mod metric {
    /// The link's theoretical one-direction bandwidth.
    pub(crate) const PHI_MB_S: &str = "phi_mb_s";
    /// Bandwidth / Phi (Braithwaite, eq. 4.3).
    pub(crate) const ALPHA_P: &str = "alpha_p";
}
