//! The engine's innermost loop, `psum[j] += weight[j] · feature[j]` over a row band,
//! compiled twice: portable, and with AVX2 enabled (picked at run time when the CPU has
//! it). Same arithmetic either way (no fused multiply-add: LLVM keeps a·b + c as two
//! roundings for floats).

use crate::element::Acc;

#[inline(always)]
fn mac_plain<A: Acc>(p: &mut [A], w: &[A], x: &[A]) {
    for ((pv, &wv), &xv) in p.iter_mut().zip(w).zip(x) {
        *pv = pv.mac(wv, xv);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn mac_avx2<A: Acc>(p: &mut [A], w: &[A], x: &[A]) {
    mac_plain(p, w, x)
}

/// A row-band MAC kernel.
pub(crate) type MacFn<A> = fn(&mut [A], &[A], &[A]);

fn portable<A: Acc>(p: &mut [A], w: &[A], x: &[A]) {
    mac_plain(p, w, x)
}

#[cfg(target_arch = "x86_64")]
fn avx2<A: Acc>(p: &mut [A], w: &[A], x: &[A]) {
    // SAFETY: only selected by `pick` after checking the CPU supports AVX2.
    unsafe { mac_avx2(p, w, x) }
}

/// The fastest kernel this CPU runs.
pub(crate) fn pick<A: Acc>() -> MacFn<A> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            return avx2::<A>;
        }
    }
    portable::<A>
}
