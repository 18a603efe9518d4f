//! Slices of a pod: shape parsing, validation against the pod, wraparound per axis by
//! the chip's rule, counts (chips, hosts, cores, FLOP/s, HBM), hop distances on the
//! torus or mesh, and bisection bandwidth.

use crate::chip::{Chip, Wraparound};
use crate::dtype::RateClass;
use crate::error::{ChipError, Result};

/// Largest accepted axis length (far beyond any pod; keeps products in u64).
pub const MAX_AXIS: u32 = 1 << 16;

/// Parse a slice shape such as `4x4`, `8x16`, `4x4x8` (separator `x`, `X` or `×`).
pub fn parse_shape(text: &str) -> Result<Vec<u32>> {
    let bad = |problem: String| ChipError::BadShape {
        given: text.to_string(),
        problem,
    };
    let t = text.trim();
    if t.is_empty() {
        return Err(bad("empty (expected e.g. 4x4 or 4x4x8)".into()));
    }
    t.split(['x', 'X', '×'])
        .map(|p| {
            let p = p.trim();
            let v: u32 = p.parse().map_err(|_| {
                bad(format!(
                    "'{p}' is not a whole number of chips (expected e.g. 4x4x8)"
                ))
            })?;
            if v == 0 || v > MAX_AXIS {
                return Err(bad(format!(
                    "axis length {v} must be between 1 and {MAX_AXIS}"
                )));
            }
            Ok(v)
        })
        .collect()
}

/// Format a shape as `4x4x8`.
pub fn format_shape(dims: &[u32]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// An ICI-connected slice of one chip type: its shape and which axes wrap around.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// The chip every position of the slice holds.
    pub chip: Chip,
    /// Chips per axis.
    pub dims: Vec<u32>,
    /// Whether each axis has wraparound (torus) links.
    pub wraparound: Vec<bool>,
}

impl Slice {
    /// A slice `dims` of `chip`, validated against the pod (same rank, each axis no
    /// longer than the pod's), with wraparound decided by the chip's rule:
    /// full-axis pods (v5e/v6e) wrap an axis iff it spans the pod axis; cube pods
    /// (v4p/v5p) wrap every axis iff the slice is whole cubes, none otherwise.
    pub fn new(chip: &Chip, dims: &[u32]) -> Result<Slice> {
        let shape = format_shape(dims);
        let no = |problem: String| ChipError::SliceDoesNotFit {
            shape: shape.clone(),
            chip: chip.name.clone(),
            problem,
        };
        if chip.wraparound == Wraparound::Switched {
            return Err(no(format!(
                "{} uses a switched network, not a torus; slices model TPU tori only",
                chip.display_name
            )));
        }
        let pod = &chip.pod_shape;
        if dims.len() != pod.len() {
            return Err(no(format!(
                "the pod {} has {} axes, the slice {}",
                format_shape(pod),
                pod.len(),
                dims.len()
            )));
        }
        for (i, (&d, &p)) in dims.iter().zip(pod).enumerate() {
            if d == 0 || d > p {
                return Err(no(format!(
                    "axis {i} has {d} chips but the pod {} has {p}",
                    format_shape(pod)
                )));
            }
        }
        let wraparound = match chip.wraparound {
            Wraparound::FullAxis => dims
                .iter()
                .zip(pod)
                .map(|(&d, &p)| d == p && d > 2)
                .collect(),
            Wraparound::FullCubes => {
                let cube = chip.cube_shape.clone().unwrap_or_default();
                let whole = cube.len() == dims.len()
                    && dims.iter().zip(&cube).all(|(&d, &c)| c > 0 && d % c == 0);
                dims.iter().map(|&d| whole && d > 2).collect()
            }
            Wraparound::Switched => unreachable!("rejected above"),
        };
        Ok(Slice {
            chip: chip.clone(),
            dims: dims.to_vec(),
            wraparound,
        })
    }

    /// The same slice with wraparound forced per axis (`true` on an axis of 1 or 2
    /// chips is ignored: such an axis has no distinct way round).
    pub fn with_wraparound(mut self, wrap: &[bool]) -> Result<Slice> {
        if wrap.len() != self.dims.len() {
            return Err(ChipError::BadValue {
                what: "wraparound flags".into(),
                expected: format!("{} values, one per axis", self.dims.len()),
                given: format!("{wrap:?}"),
            });
        }
        self.wraparound = wrap
            .iter()
            .zip(&self.dims)
            .map(|(&w, &d)| w && d > 2)
            .collect();
        Ok(self)
    }

    /// The shape as `4x4x8`.
    pub fn shape(&self) -> String {
        format_shape(&self.dims)
    }

    /// Chips in the slice.
    pub fn chips(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }

    /// Hosts the slice spans: the fewest whole host blocks (`host_shape`, in any axis
    /// order) that tile it; a slice smaller than a host needs one.
    pub fn hosts(&self) -> u64 {
        let host = &self.chip.host_shape;
        let mut best = u64::MAX;
        for perm in permutations(host.len()) {
            let n: u64 = self
                .dims
                .iter()
                .zip(&perm)
                .map(|(&d, &p)| u64::from(d.div_ceil(host[p])))
                .product();
            best = best.min(n);
        }
        best
    }

    /// TensorCores in the slice.
    pub fn cores(&self) -> u64 {
        self.chips() * u64::from(self.chip.cores_per_chip)
    }

    /// Peak FLOP/s of the whole slice for a rate class.
    pub fn flops_per_s(&self, class: RateClass) -> f64 {
        self.chips() as f64 * self.chip.peak(class).ops_per_s
    }

    /// HBM of the whole slice, bytes.
    pub fn hbm_bytes(&self) -> Result<u64> {
        self.chips()
            .checked_mul(self.chip.hbm_bytes)
            .ok_or_else(|| ChipError::Overflow(format!("HBM of slice {}", self.shape())))
    }

    /// Check a chip coordinate: one index per axis, each inside the slice.
    pub fn check_coord(&self, c: &[u32]) -> Result<()> {
        let bad = |problem: String| ChipError::BadCoordinate {
            given: c
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(","),
            shape: self.shape(),
            problem,
        };
        if c.len() != self.dims.len() {
            return Err(bad(format!(
                "needs {} indices, one per axis",
                self.dims.len()
            )));
        }
        for (i, (&v, &d)) in c.iter().zip(&self.dims).enumerate() {
            if v >= d {
                return Err(bad(format!("index {v} on axis {i} must be below {d}")));
            }
        }
        Ok(())
    }

    /// Parse a coordinate `I,J[,K]` and check it against the slice.
    pub fn parse_coord(&self, text: &str) -> Result<Vec<u32>> {
        let c = text
            .split(',')
            .map(|p| {
                p.trim()
                    .parse::<u32>()
                    .map_err(|_| ChipError::BadCoordinate {
                        given: text.to_string(),
                        shape: self.shape(),
                        problem: format!(
                            "'{}' is not a whole number (expected e.g. 0,0)",
                            p.trim()
                        ),
                    })
            })
            .collect::<Result<Vec<u32>>>()?;
        self.check_coord(&c)?;
        Ok(c)
    }

    /// Hops between two indices on one axis: |a−b| on a line, the shorter way round
    /// on a ring.
    pub fn axis_distance(&self, axis: usize, a: u32, b: u32) -> u64 {
        let d = u64::from(a.abs_diff(b));
        let n = u64::from(self.dims[axis]);
        if self.wraparound[axis] {
            d.min(n - d)
        } else {
            d
        }
    }

    /// Shortest-path hop count between two chips (sum over axes: dimension-order
    /// routing on a torus or mesh is shortest).
    pub fn distance(&self, a: &[u32], b: &[u32]) -> Result<u64> {
        self.check_coord(a)?;
        self.check_coord(b)?;
        Ok((0..self.dims.len())
            .map(|i| self.axis_distance(i, a[i], b[i]))
            .sum())
    }

    /// Longest hop count along one axis: ⌊n/2⌋ with wraparound, n−1 without.
    pub fn axis_max_hops(&self, axis: usize) -> u64 {
        let n = u64::from(self.dims[axis]);
        if self.wraparound[axis] {
            n / 2
        } else {
            n - 1
        }
    }

    /// The slice's diameter: the most hops between any two chips.
    pub fn max_hops(&self) -> u64 {
        (0..self.dims.len()).map(|i| self.axis_max_hops(i)).sum()
    }

    /// The most hops from chip `c` to any chip of the slice.
    pub fn eccentricity(&self, c: &[u32]) -> Result<u64> {
        self.check_coord(c)?;
        Ok((0..self.dims.len())
            .map(|i| {
                let n = self.dims[i];
                self.axis_distance(i, c[i], 0)
                    .max(self.axis_distance(i, c[i], n - 1))
                    .max(if self.wraparound[i] {
                        u64::from(n / 2)
                    } else {
                        0
                    })
            })
            .sum())
    }

    /// ICI links of chip `c` that lead to other chips of the slice: per axis 2 on a
    /// ring (more than 2 chips), 2 inside a line, 1 at a line's end, 0 on an axis of 1.
    pub fn ports_at(&self, c: &[u32]) -> Result<u32> {
        self.check_coord(c)?;
        Ok((0..self.dims.len())
            .map(|i| {
                let n = self.dims[i];
                match n {
                    1 => 0,
                    2 => 1,
                    _ if self.wraparound[i] => 2,
                    _ if c[i] == 0 || c[i] == n - 1 => 1,
                    _ => 2,
                }
            })
            .sum())
    }

    /// Links cut by the cheapest cut of the slice into two halves (across the axis
    /// where the fewest links cross: chips/n of them, twice that with wraparound).
    /// None for a single chip.
    pub fn bisection_links(&self) -> Option<u64> {
        (0..self.dims.len())
            .filter(|&i| self.dims[i] >= 2)
            .map(|i| {
                let across = self.chips() / u64::from(self.dims[i]);
                if self.wraparound[i] {
                    2 * across
                } else {
                    across
                }
            })
            .min()
    }

    /// Bisection bandwidth, bytes/s, one direction: bisection links × one-way link
    /// bandwidth (the convention of Google's pod tables: v3 pod 6.4e12).
    pub fn bisection_bytes_per_s(&self) -> Option<f64> {
        self.bisection_links()
            .map(|l| l as f64 * self.chip.ici_one_way_bytes_per_s)
    }

    /// Resolve an axis name: `X`, `Y`, `Z` (in the order of the shape) or `0`, `1`, `2`.
    pub fn parse_axis(&self, text: &str) -> Result<usize> {
        let t = text.trim();
        let i = match t.to_ascii_lowercase().as_str() {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            other => other.parse::<usize>().ok(),
        };
        match i {
            Some(i) if i < self.dims.len() => Ok(i),
            _ => Err(ChipError::BadAxis {
                given: t.to_string(),
                shape: self.shape(),
                problem: format!(
                    "expected one of {} (or 0..{})",
                    ["X", "Y", "Z"][..self.dims.len().min(3)].join(", "),
                    self.dims.len()
                ),
            }),
        }
    }

    /// Parse a comma-separated axis list (`X,Y`, `0,2`); no repeats.
    pub fn parse_axes(&self, text: &str) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        for p in text.split(',') {
            let a = self.parse_axis(p)?;
            if out.contains(&a) {
                return Err(ChipError::BadAxis {
                    given: text.to_string(),
                    shape: self.shape(),
                    problem: format!("axis {} named twice", p.trim()),
                });
            }
            out.push(a);
        }
        Ok(out)
    }
}

/// Every permutation of 0..n (n ≤ 3 here).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, n - 1);
            out.push(q);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::lookup;

    #[test]
    fn wraparound_rules() {
        let v5e = lookup("v5e").unwrap();
        assert_eq!(
            Slice::new(&v5e, &[8, 16]).unwrap().wraparound,
            vec![false, true]
        );
        assert_eq!(
            Slice::new(&v5e, &[4, 4]).unwrap().wraparound,
            vec![false, false]
        );
        let v5p = lookup("v5p").unwrap();
        assert_eq!(
            Slice::new(&v5p, &[4, 4, 8]).unwrap().wraparound,
            vec![true; 3]
        );
        assert_eq!(
            Slice::new(&v5p, &[2, 2, 4]).unwrap().wraparound,
            vec![false; 3]
        );
        assert!(Slice::new(&v5p, &[4, 4]).is_err());
        assert!(Slice::new(&v5e, &[32, 4]).is_err());
        assert!(Slice::new(&lookup("h100").unwrap(), &[8]).is_err());
    }

    #[test]
    fn counts_and_hops() {
        let v5e = lookup("v5e").unwrap();
        let s = Slice::new(&v5e, &[4, 4]).unwrap();
        assert_eq!((s.chips(), s.hosts(), s.max_hops()), (16, 2, 6));
        assert_eq!(s.distance(&[0, 0], &[3, 3]).unwrap(), 6);
        assert_eq!(s.ports_at(&[0, 0]).unwrap(), 2);
        assert_eq!(s.ports_at(&[1, 2]).unwrap(), 4);
        let pod = Slice::new(&v5e, &[16, 16]).unwrap();
        assert_eq!(pod.distance(&[0, 0], &[15, 9]).unwrap(), 1 + 7);
        assert_eq!(pod.max_hops(), 16);
        assert_eq!(pod.eccentricity(&[3, 5]).unwrap(), 16);
        assert_eq!(parse_shape("4x4x8").unwrap(), vec![4, 4, 8]);
        assert!(parse_shape("4x0").is_err());
        assert!(parse_shape("4xx4").is_err());
        assert_eq!(s.parse_axes("y,X").unwrap(), vec![1, 0]);
        assert!(s.parse_axes("Z").is_err());
        assert!(s.parse_axes("X,0").is_err());
        assert!(s.parse_coord("4,0").is_err());
    }

    #[test]
    fn bisection_matches_google_v3_pod() {
        // Google's v3 page: bisection bandwidth per pod 6.4 TB/s.
        let v3 = lookup("v3").unwrap();
        let pod = Slice::new(&v3, &[32, 32]).unwrap();
        assert_eq!(pod.bisection_links(), Some(64));
        assert_eq!(pod.bisection_bytes_per_s(), Some(6.4e12));
    }
}

/// The facts of a slice that `tpusim slice info --json` prints.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SliceInfo {
    /// Chip name.
    pub chip: String,
    /// Chips per axis.
    pub shape: Vec<u32>,
    /// Chips in all.
    pub chips: u64,
    /// Hosts.
    pub hosts: u64,
    /// TensorCores.
    pub cores: u64,
    /// Wraparound per axis.
    pub wraparound: Vec<bool>,
    /// The rate class the FLOP/s are for.
    pub dtype: &'static str,
    /// Peak FLOP/s of the whole slice at `dtype`.
    pub flops_per_s: f64,
    /// HBM of the whole slice, bytes.
    pub hbm_bytes: u64,
    /// Most hops between two chips.
    pub max_hops: u64,
    /// Links cut by the worst bisection (None where not defined).
    pub bisection_links: Option<u64>,
    /// Bandwidth across it, bytes/s.
    pub bisection_bytes_per_s: Option<f64>,
}

impl Slice {
    /// This slice's facts at rate class `class`.
    pub fn info(&self, class: RateClass) -> Result<SliceInfo> {
        Ok(SliceInfo {
            chip: self.chip.name.clone(),
            shape: self.dims.clone(),
            chips: self.chips(),
            hosts: self.hosts(),
            cores: self.cores(),
            wraparound: self.wraparound.clone(),
            dtype: class.name(),
            flops_per_s: self.flops_per_s(class),
            hbm_bytes: self.hbm_bytes()?,
            max_hops: self.max_hops(),
            bisection_links: self.bisection_links(),
            bisection_bytes_per_s: self.bisection_bytes_per_s(),
        })
    }
}
