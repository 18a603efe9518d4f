//! Convolutions on the engine via im2col, and the direct convolution they are checked
//! against.
//!
//! Tensors are NHWC (`input[b][y][x][c]`), filters HWIO (`filter[ky][kx][ci][co]`, ci
//! within the group, co over all output channels: group g owns co in
//! g·out_c/groups .. (g+1)·out_c/groups), outputs NHWC.

use crate::analytic::{RunOptions, Stats, StatsBuilder};
use crate::element::{Acc, Element};
use crate::engine::run_gemm;
use crate::error::{Result, SystolicError};
use crate::fold::FoldTiming;
use crate::matrix::Matrix;
use crate::shape::{ArraySpec, Conv, Workload};

/// The result of a convolution on the engine.
#[derive(Debug, Clone)]
pub struct ConvRun<A> {
    /// Output tensor, NHWC, `batch · out_h · out_w · out_c` values.
    pub output: Vec<A>,
    /// Measured figures over all groups.
    pub stats: Stats,
    /// Every fold's measured timing, groups in order.
    pub folds: Vec<FoldTiming>,
}

fn check_len(what: &str, got: usize, want: u64) -> Result<()> {
    if got as u64 != want {
        return Err(SystolicError::Shape(format!(
            "{what} has {got} values, the convolution needs {want}"
        )));
    }
    Ok(())
}

/// The im2col matrix of group `g`: row m = (b, oy, ox), column = (ky, kx, ci); padded
/// positions read as zero. Shape (batch·out_h·out_w) × (KH·KW·in_c/groups).
pub fn im2col<E: Element + Default>(conv: &Conv, input: &[E], g: u64) -> Result<Matrix<E>> {
    let (oh, ow) = conv.validate()?;
    check_len("input", input.len(), conv.input_elems())?;
    let cg = (conv.in_c / conv.groups) as usize;
    let gemm = conv.gemm()?;
    let (h, w, c) = (conv.in_h as i64, conv.in_w as i64, conv.in_c as usize);
    let mut data = Vec::with_capacity((gemm.m * gemm.k) as usize);
    for b in 0..conv.batch as usize {
        for oy in 0..oh as i64 {
            for ox in 0..ow as i64 {
                for ky in 0..conv.kh as i64 {
                    for kx in 0..conv.kw as i64 {
                        let y =
                            oy * conv.stride_h as i64 - conv.pad_h as i64 + ky * conv.dil_h as i64;
                        let x =
                            ox * conv.stride_w as i64 - conv.pad_w as i64 + kx * conv.dil_w as i64;
                        for ci in 0..cg {
                            let v = if y >= 0 && y < h && x >= 0 && x < w {
                                input[((b * h as usize + y as usize) * w as usize + x as usize) * c
                                    + g as usize * cg
                                    + ci]
                            } else {
                                E::default()
                            };
                            data.push(v);
                        }
                    }
                }
            }
        }
    }
    Matrix::from_vec(gemm.m as usize, gemm.k as usize, data)
}

/// Group `g`'s filters as the GEMM's W: (KH·KW·in_c/groups) × (out_c/groups).
pub fn weights_to_gemm<E: Element>(conv: &Conv, filter: &[E], g: u64) -> Result<Matrix<E>> {
    conv.validate()?;
    check_len("filter", filter.len(), conv.filter_elems())?;
    let gemm = conv.gemm()?;
    let ng = gemm.n as usize;
    let oc = conv.out_c as usize;
    Ok(Matrix::from_fn(gemm.k as usize, ng, |kk, co| {
        filter[kk * oc + g as usize * ng + co]
    }))
}

/// Run a convolution on the engine: im2col per group, one GEMM per group, folds of all
/// groups composed into one timeline.
pub fn run_conv<E: Element + Default>(
    arr: ArraySpec,
    opts: RunOptions,
    conv: &Conv,
    input: &[E],
    filter: &[E],
) -> Result<ConvRun<E::Acc>> {
    let gemm = conv.gemm()?;
    let (m, ng) = (gemm.m as usize, gemm.n as usize);
    let oc = conv.out_c as usize;
    let mut output = vec![E::Acc::default(); m * oc];
    let mut all = Vec::new();
    for g in 0..conv.groups {
        let a = im2col(conv, input, g)?;
        let w = weights_to_gemm(conv, filter, g)?;
        let run = run_gemm(arr, opts, &a, &w)?;
        for mm in 0..m {
            for co in 0..ng {
                output[mm * oc + g as usize * ng + co] = run.c.data[mm * ng + co];
            }
        }
        all.extend(run.folds);
    }
    let mut b = StatsBuilder::new(opts);
    for t in &all {
        b.push(t);
    }
    let stats = b.finish(arr, &Workload::from_conv(conv)?);
    Ok(ConvRun {
        output,
        stats,
        folds: all,
    })
}

/// Direct convolution (seven nested loops, no im2col): the independent reference.
pub fn conv_reference<E: Element>(conv: &Conv, input: &[E], filter: &[E]) -> Result<Vec<E::Acc>> {
    let (oh, ow) = conv.validate()?;
    check_len("input", input.len(), conv.input_elems())?;
    check_len("filter", filter.len(), conv.filter_elems())?;
    let (h, w, c, oc) = (
        conv.in_h as i64,
        conv.in_w as i64,
        conv.in_c as usize,
        conv.out_c as usize,
    );
    let cg = c / conv.groups as usize;
    let ng = oc / conv.groups as usize;
    let mut out = vec![E::Acc::default(); conv.batch as usize * oh as usize * ow as usize * oc];
    for b in 0..conv.batch as usize {
        for oy in 0..oh as i64 {
            for ox in 0..ow as i64 {
                for co in 0..oc {
                    let g = co / ng;
                    let mut acc = E::Acc::default();
                    for ky in 0..conv.kh as i64 {
                        for kx in 0..conv.kw as i64 {
                            let y = oy * conv.stride_h as i64 - conv.pad_h as i64
                                + ky * conv.dil_h as i64;
                            let x = ox * conv.stride_w as i64 - conv.pad_w as i64
                                + kx * conv.dil_w as i64;
                            if y < 0 || y >= h || x < 0 || x >= w {
                                continue;
                            }
                            for ci in 0..cg {
                                let iv = input[((b * h as usize + y as usize) * w as usize
                                    + x as usize)
                                    * c
                                    + g * cg
                                    + ci];
                                let fv = filter[((ky as usize * conv.kw as usize + kx as usize)
                                    * cg
                                    + ci)
                                    * oc
                                    + co];
                                acc = acc.mac(iv.widen(), fv.widen());
                            }
                        }
                    }
                    out[((b * oh as usize + oy as usize) * ow as usize + ox as usize) * oc + co] =
                        acc;
                }
            }
        }
    }
    Ok(out)
}
