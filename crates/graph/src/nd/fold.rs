//! Values flowing through the N-D graph, broadcasting, and the evaluation of small
//! constant tensors (the shape subgraphs exporters write: `Shape → Gather →
//! Unsqueeze → Concat → Reshape`).

/// Largest constant tensor evaluated (shape subgraphs are tiny; masks are not folded).
pub(crate) const MAX_FOLD: usize = 4096;

/// A value: its dimensions, its contents when it is a small constant, whether it is
/// an integer tensor, and whether it is a weight (an initializer).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Val {
    pub dims: Vec<u64>,
    pub konst: Option<Vec<f64>>,
    pub int: bool,
    pub weight: bool,
}

impl Val {
    pub fn act(dims: Vec<u64>) -> Val {
        Val {
            dims,
            konst: None,
            int: false,
            weight: false,
        }
    }

    /// A run-time value, integer or not.
    pub fn typed(dims: Vec<u64>, int: bool) -> Val {
        Val {
            int,
            ..Val::act(dims)
        }
    }

    pub fn constant(dims: Vec<u64>, values: Vec<f64>, int: bool) -> Val {
        let fits = values.len() <= MAX_FOLD;
        Val {
            dims,
            konst: fits.then_some(values),
            int,
            weight: false,
        }
    }

    pub fn elements(&self) -> f64 {
        self.dims.iter().map(|&d| d as f64).product()
    }
}

/// Most elements a tensor may have (2^50): every product of dims stays in u64.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 50;

/// Elements of `dims`, `None` above [`MAX_ELEMENTS`].
pub(crate) fn count(dims: &[u64]) -> Option<u64> {
    dims.iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
}

/// Numpy broadcasting of two shapes; `None` when they do not broadcast.
pub(crate) fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Element `flat` of the broadcast result read from an operand of shape `dims`.
fn pick(values: &[f64], dims: &[u64], out: &[u64], flat: usize) -> f64 {
    let mut rem = flat;
    let mut idx = 0usize;
    let mut stride = 1usize;
    let off = out.len() - dims.len();
    for i in (0..out.len()).rev() {
        let o = out[i] as usize;
        let coord = rem % o;
        rem /= o;
        if i >= off {
            let d = dims[i - off] as usize;
            if d != 1 {
                idx += coord * stride;
            }
            stride *= d;
        }
    }
    values.get(idx).copied().unwrap_or(0.0)
}

/// Apply `f` element-wise over broadcast constants.
pub(crate) fn zip(vals: &[&Val], out: &[u64], f: impl Fn(&[f64]) -> f64) -> Option<Vec<f64>> {
    let count = count(out)?;
    if count as usize > MAX_FOLD {
        return None;
    }
    let konsts: Vec<&Vec<f64>> = vals
        .iter()
        .map(|v| v.konst.as_ref())
        .collect::<Option<_>>()?;
    let mut args = vec![0.0; vals.len()];
    Some(
        (0..count as usize)
            .map(|flat| {
                for (j, v) in vals.iter().enumerate() {
                    args[j] = pick(konsts[j], &v.dims, out, flat);
                }
                f(&args)
            })
            .collect(),
    )
}

/// Row-major strides of `dims`.
pub(crate) fn strides(dims: &[u64]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1] as usize;
    }
    s
}
