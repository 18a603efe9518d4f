//! What the report's figures mean: the overlap rule and every column of every table,
//! one text shared by the terminal and the HTML page.

/// How a group's time follows from its compute and its transfers.
pub const OVERLAP_RULE: &str = "A group runs its slices through time steps; each step takes the longer of its \
compute and its transfers (DMA), which run at the same time. So total = compute + exposed transfers, \
where exposed transfers are the DMA time no compute hides: the pipeline's fill and drain and the \
steps whose transfers outlast their compute. An op run alone (global) takes the longer of its compute \
and its memory time.";

/// One term of a table header and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    /// The column header.
    pub name: &'static str,
    /// Its definition, one sentence.
    pub meaning: &'static str,
}

const fn term(name: &'static str, meaning: &'static str) -> Term {
    Term { name, meaning }
}

/// Columns of the layer tables (each layer timed alone, all operands from off-chip).
pub const LAYER_COLUMNS: &[Term] = &[
    term(
        "flops",
        "floating-point operations: 2 per multiply-accumulate, 1 per element of vector work",
    ),
    term(
        "logical",
        "bytes the layer reads and writes at the tensors' logical sizes",
    ),
    term(
        "moved",
        "bytes it moves with every tensor in the chip's layout (tile or lane padding included)",
    ),
    term(
        "compute",
        "matrix-unit time from the systolic model, or vector work at the vector rate",
    ),
    term("memory", "moved bytes over the off-chip bandwidth"),
    term("time", "the layer alone: the larger of compute and memory"),
    term("bound", "which of compute and memory is larger"),
    term(
        "util",
        "how full the unit's slots are while it works, not how busy it is over time: matrix work \
         counts useful MACs over the MAC slots of every MXU (or NPU lane) for the cycles it runs; \
         vector work counts vector lanes holding real data, so a memory-bound add can read 100 %",
    ),
    term(
        "group",
        "index of the plan group the layer runs in (see Groups)",
    ),
];

/// Columns of the groups table.
pub const GROUP_COLUMNS: &[Term] = &[
    term(
        "n×h slices",
        "parts the batch and the height are cut into; each part is one loop iteration",
    ),
    term(
        "dma",
        "time of all the group's transfers, summed as if alone",
    ),
    term(
        "compute",
        "time of all the group's ops on all slices, summed",
    ),
    term(
        "exposed",
        "transfer time compute does not hide: time − compute",
    ),
    term("time", "the group's time: compute + exposed"),
];

/// Columns of the padding tables.
pub const TENSOR_COLUMNS: &[Term] = &[
    term("stored as", "the layout the chip stores the tensor in (XLA shape with tiles on a TPU, LMEM lanes on an NPU)"),
    term("logical", "elements × element bytes"),
    term("stored", "bytes the stored layout occupies"),
    term("waste", "stored − logical"),
    term("expansion", "stored / logical"),
];

/// The terms of `columns` named in `header`, in the header's order.
pub fn terms_for<'a>(columns: &'a [Term], header: &[&str]) -> Vec<&'a Term> {
    header
        .iter()
        .filter_map(|h| columns.iter().find(|t| t.name == *h))
        .collect()
}
