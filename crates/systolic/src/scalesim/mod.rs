//! SCALE-Sim 3.0.0 compatibility: its `.cfg` config, topology CSVs and layout files in
//! ([`config`], [`topology`], [`layout`]), its per-layer reports out ([`report`]), and
//! [`compat`], which reproduces its numbers exactly (its demand streams, refetching
//! read buffers and stalling write buffer replayed row by row; N:M sparse layers and
//! custom layouts with banked SRAM lines included), next to [`ours`], our own model
//! written in the same report format.
//!
//! Inside `compat`: `compute` (the compute-side columns), `demand` (addresses per
//! demand row), `sparsity` (the operand matrices of sparse layers, numpy's seeded
//! draws, SPARSE_REPORT's storage figures), `replay` (the memory loop), the read
//! buffers `calc_refetch`, `user_refetch` and `layout_buffer` (with `layout_order`, the
//! fetch order a layout gives, and `pyset`, CPython's set order that places words in
//! banks), and `write_buffer`.
//!
//! Where the two differ, and why (see also `tests/scalesim_goldens.rs`):
//!
//! * SCALE-Sim's "Total Cycles" is `folds · (fold length) − 1`: the last cycle's
//!   *index*, not a count (the off-by-one its users report). We count cycles.
//! * SCALE-Sim pads every fold to the full array (a partial fold costs as much as a full
//!   one) and reloads weights every fold with no overlap (ws: `2R + C + M − 2` per fold).
//!   Our engine ends a fold when its last *used* column's result has left, and by default
//!   double-buffers the weight load so it hides behind the previous fold.
//! * SCALE-Sim's os dataflow does not count the time to drain the stationary results
//!   out of the array; ours does (R cycles, exposed without double buffering).
//! * SCALE-Sim's os "SRAM OFMAP Writes" adds R + C per fold to the real count (an
//!   inflated output count); ours counts M·N.
//! * When an operand exceeds half its SRAM, SCALE-Sim's USER mode adds each positive
//!   refetch delay twice to the row's stall (and lets a negative one pull the row's
//!   service cycle back); its CALC mode refetches in epochs of 50 address sets with
//!   no stall at all, and reads a word again whenever it recurs in a later epoch. The
//!   compat mode reproduces all of that; ours charges one bandwidth-bound stall
//!   estimate with every distinct word read once (see [`ours`]).
//! * Sparsity and custom layouts change only SCALE-Sim's numbers here: our own model
//!   runs the dense layer and ignores the layout.

mod calc_refetch;
pub mod compat;
mod compute;
pub mod config;
mod demand;
pub mod layout;
mod layout_buffer;
mod layout_order;
pub mod ours;
pub mod pyfmt;
mod pyset;
pub mod readable;
mod replay;
pub mod report;
mod sparsity;
pub mod topology;
mod user_refetch;
mod write_buffer;
