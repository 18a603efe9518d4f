//! The crate's error type: every variant carries the offending input.

use tpusim_layout::ElementType;

/// Everything that can go wrong in this crate. Each message names the value the caller
/// gave and the limit it broke, so the CLI can print it as one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LmemError {
    /// A preset name that is not built in.
    #[error("unknown chip preset '{given}' (known: {known})")]
    UnknownPreset {
        /// The name asked for.
        given: String,
        /// Comma-separated list of the built-in presets.
        known: String,
    },
    /// A chip description (TOML) that does not parse.
    #[error("bad chip description: {0}")]
    BadChipFile(String),
    /// A chip parameter outside its valid range.
    #[error("chip '{chip}': {field} = {value} is invalid: {why}")]
    BadChip {
        /// Chip name.
        chip: String,
        /// Field name (`npu_num`, `eu_bytes`, …).
        field: &'static str,
        /// The value given.
        value: u64,
        /// What is required.
        why: &'static str,
    },
    /// EU_BYTES does not hold a whole number of elements of this type.
    #[error("EU_BYTES {eu_bytes} does not hold a whole number of {dtype} elements")]
    EuNum {
        /// The chip's EU_BYTES.
        eu_bytes: u64,
        /// The element type.
        dtype: ElementType,
    },
    /// The 4N layout (bm1684) only packs 8-, 16- and 32-bit elements.
    #[error("the 4N layout of chip '{chip}' cannot hold {dtype} elements (only 8, 16 or 32-bit)")]
    Unsupported4N {
        /// Chip name.
        chip: String,
        /// The element type.
        dtype: ElementType,
    },
    /// A shape or index text that does not parse.
    #[error("bad shape '{given}': {why}")]
    BadShape {
        /// The text given.
        given: String,
        /// What is expected.
        why: &'static str,
    },
    /// A layout name that is not known.
    #[error("unknown layout '{0}' (expected aligned, compact, line or global)")]
    BadLayout(String),
    /// A tensor dimension of size zero.
    #[error("dimension {dim} of the shape is 0 (every dimension must be at least 1)")]
    ZeroDim {
        /// Dimension name (`n`, `c`, `d`, `h`, `w`).
        dim: &'static str,
    },
    /// A start NPU index beyond the chip's lanes.
    #[error("start NPU {given} is out of range: the chip has {npu_num} NPUs (0..{npu_num})")]
    StartNpu {
        /// The start NPU given.
        given: u64,
        /// The chip's NPU count.
        npu_num: u64,
    },
    /// An aligned or line-aligned tensor whose start address is not EU_BYTES aligned.
    #[error("start address {addr} is not a multiple of EU_BYTES {eu_bytes} (required by the {layout} layout)")]
    Unaligned {
        /// The start address given (bytes in the lane).
        addr: u64,
        /// The chip's EU_BYTES.
        eu_bytes: u64,
        /// Layout name.
        layout: &'static str,
    },
    /// A size computation that overflows u64.
    #[error("{what} overflows 64 bits")]
    Overflow {
        /// Which quantity overflowed.
        what: &'static str,
    },
    /// The tensor does not fit in the lane from its start address.
    #[error("tensor needs {needed} bytes per lane from address {start}, but the lane holds {lane_bytes} bytes ({available} free from that address)")]
    DoesNotFit {
        /// Bytes per lane the tensor reserves.
        needed: u64,
        /// Start address in the lane.
        start: u64,
        /// Bytes free from the start address to the end of the lane.
        available: u64,
        /// The lane size.
        lane_bytes: u64,
    },
    /// An element index beyond the tensor's shape.
    #[error("index {dim} = {index} is out of range for size {size}")]
    IndexOutOfRange {
        /// Dimension name.
        dim: &'static str,
        /// The index given.
        index: u64,
        /// The dimension's size.
        size: u64,
    },
    /// A lane map asked of a chip with more lanes than a picture can show.
    #[error("a lane map draws at most {max} lanes, but the chip has {npu_num}")]
    TooManyLanes {
        /// The chip's NPU count.
        npu_num: u64,
        /// Lanes a map draws at most ([`crate::svg::MAX_LANES`]).
        max: u64,
    },
    /// A lane index beyond the chip's lanes.
    #[error("lane {lane} is out of range: the chip has {npu_num} lanes")]
    LaneOutOfRange {
        /// The lane given.
        lane: u64,
        /// The chip's NPU count.
        npu_num: u64,
    },
    /// An offset beyond the end of a lane.
    #[error("offset {offset} is beyond the lane size {lane_bytes}")]
    OffsetOutOfRange {
        /// The offset given.
        offset: u64,
        /// The lane size.
        lane_bytes: u64,
    },
    /// A question that only makes sense for local memory was asked of a global tensor.
    #[error(
        "{what} is only defined for local-memory layouts (aligned, compact, line), not global"
    )]
    NotLocal {
        /// What was asked.
        what: &'static str,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, LmemError>;

/// Checked multiplication naming the quantity on overflow.
pub(crate) fn mul(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_mul(b).ok_or(LmemError::Overflow { what })
}

/// Checked addition naming the quantity on overflow.
pub(crate) fn add(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_add(b).ok_or(LmemError::Overflow { what })
}

/// Round `x` up to a multiple of `m` (m ≥ 1), checked.
pub(crate) fn align_up(x: u64, m: u64, what: &'static str) -> Result<u64> {
    let r = x % m;
    if r == 0 {
        Ok(x)
    } else {
        add(x, m - r, what)
    }
}
