//! Operand and accumulator number types the engine computes with.
//!
//! Operands are widened to the accumulator type when they enter a PE register (exact
//! for every pair: i8→i32, i32→i64, bf16→f32, f32→f32); integer MACs wrap on overflow
//! (two's complement, like hardware accumulators), float MACs round once per add.

use half::bf16;

/// An accumulator type: what PE registers hold and MACs produce.
pub trait Acc: Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// `self + a·b` (wrapping for integers).
    fn mac(self, a: Self, b: Self) -> Self;
    /// `self + o` (wrapping for integers).
    fn plus(self, o: Self) -> Self;
    /// The value as f64 (for error measurement and pictures).
    fn to_f64(self) -> f64;
}

/// Integer accumulators wrap on overflow, like hardware accumulators.
macro_rules! wrapping_acc {
    ($($t:ty),*) => {$(
        impl Acc for $t {
            #[inline(always)]
            fn mac(self, a: Self, b: Self) -> Self {
                self.wrapping_add(a.wrapping_mul(b))
            }
            #[inline(always)]
            fn plus(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
wrapping_acc!(i32, i64);

impl Acc for f32 {
    #[inline(always)]
    fn mac(self, a: Self, b: Self) -> Self {
        self + a * b
    }
    #[inline(always)]
    fn plus(self, o: Self) -> Self {
        self + o
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// An operand type with its accumulator: i8→i32, i32→i64, bf16→f32, f32→f32.
pub trait Element: Copy + Send + Sync + 'static {
    /// The accumulator type.
    type Acc: Acc;
    /// The operand as an accumulator value (exact).
    fn widen(self) -> Self::Acc;
    /// Short name (`i8`, `i32`, `bf16`, `f32`).
    const NAME: &'static str;
}

impl Element for i8 {
    type Acc = i32;
    fn widen(self) -> i32 {
        self as i32
    }
    const NAME: &'static str = "i8";
}
impl Element for i32 {
    type Acc = i64;
    fn widen(self) -> i64 {
        self as i64
    }
    const NAME: &'static str = "i32";
}
impl Element for bf16 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    const NAME: &'static str = "bf16";
}
impl Element for f32 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self
    }
    const NAME: &'static str = "f32";
}
