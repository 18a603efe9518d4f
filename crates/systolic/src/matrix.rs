//! A dense row-major matrix and the plain reference matmul the engine is checked
//! against.

use crate::element::{Acc, Element};
use crate::error::{Result, SystolicError};

/// A dense row-major `rows × cols` matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix<T> {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// `rows · cols` values, row after row.
    pub data: Vec<T>,
}

impl<T: Copy> Matrix<T> {
    /// Wrap `data` (length must be rows·cols).
    pub fn from_vec(rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        match rows.checked_mul(cols) {
            Some(n) if n == data.len() => Ok(Matrix { rows, cols, data }),
            _ => Err(SystolicError::Shape(format!(
                "{} values cannot form a {rows}×{cols} matrix",
                data.len()
            ))),
        }
    }
    /// Build from a function of (row, col).
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let mut data = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                data.push(f(r, c));
            }
        }
        Matrix { rows, cols, data }
    }
    /// The value at (row, col); panics when out of range (internal use).
    #[inline]
    pub fn at(&self, r: usize, c: usize) -> T {
        self.data[r * self.cols + c]
    }
    /// The transpose.
    pub fn transpose(&self) -> Self {
        Matrix::from_fn(self.cols, self.rows, |r, c| self.at(c, r))
    }
}

/// The plain triple-loop product C = A·W in the accumulator type, k ascending: the
/// independent reference for the engine (bit-exact for integers).
pub fn reference_matmul<E: Element>(a: &Matrix<E>, w: &Matrix<E>) -> Result<Matrix<E::Acc>> {
    if a.cols != w.rows {
        return Err(SystolicError::Shape(format!(
            "A is {}×{} but W is {}×{}",
            a.rows, a.cols, w.rows, w.cols
        )));
    }
    let mut c = vec![E::Acc::default(); a.rows * w.cols];
    for m in 0..a.rows {
        for k in 0..a.cols {
            let av = a.at(m, k).widen();
            let row = &mut c[m * w.cols..(m + 1) * w.cols];
            for (n, cv) in row.iter_mut().enumerate() {
                *cv = cv.mac(av, w.at(k, n).widen());
            }
        }
    }
    Ok(Matrix {
        rows: a.rows,
        cols: w.cols,
        data: c,
    })
}
