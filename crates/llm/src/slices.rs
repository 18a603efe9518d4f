//! Which slices a chip's pod offers: the shape `--slice` names (a shape such as
//! `4x4`, or a chip count such as `8`), and the candidates `min_slice` walks.

use crate::error::{bad, Result};
use tpusim_chip::{Chip, Slice};

/// The slice `text` names on `chip`: a shape (`4x2`, `4x4x8`; `4x4` on a 3-D pod is
/// `4x4x1`), a chip count (`8`, which takes the canonical shape of [`shape_for`]) or a
/// cloud name ending in a TensorCore count (`v5litepod-8`: 8 chips; `v5p-16`: 8 chips).
pub fn parse(chip: &Chip, text: &str) -> Result<Slice> {
    let t = text.trim();
    // Cloud names such as `v5litepod-16` or `v5p-8` end in a count of TensorCores
    // (one per chip on v5e and v6e, two on v4 and v5p).
    let cloud;
    let t = match t.rsplit_once('-') {
        Some((_, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
            let cores: u64 = n
                .parse()
                .map_err(|_| bad("--slice", text, "count too large"))?;
            let per = u64::from(chip.cores_per_chip.max(1));
            if cores % per != 0 {
                return Err(bad(
                    "--slice",
                    text,
                    format!(
                        "{} has {per} TensorCores per chip; the count after the dash counts cores",
                        chip.name
                    ),
                ));
            }
            cloud = (cores / per).to_string();
            cloud.as_str()
        }
        _ => t,
    };
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        let n: u64 = t
            .parse()
            .map_err(|_| bad("--slice", text, "chip count too large"))?;
        let dims = shape_for(chip, n).ok_or_else(|| {
            bad(
                "--slice",
                text,
                format!(
                    "a {} pod ({}) has no slice of {n} chips; valid counts: {}",
                    chip.name,
                    tpusim_chip::slice::format_shape(&chip.pod_shape),
                    candidates(chip)
                        .iter()
                        .map(|s| s.chips().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        return Ok(Slice::new(chip, &dims)?);
    }
    let mut dims = tpusim_chip::parse_shape(t)?;
    // A 2-D shape on a 3-D pod is a slice one chip deep (`4x4` = `4x4x1` on v5p).
    while dims.len() < chip.pod_shape.len() {
        dims.push(1);
    }
    Ok(Slice::new(chip, &dims)?)
}

/// The canonical shape of `n` chips on `chip`'s pod: as square as the pod allows,
/// every axis a power of two (or the whole pod axis). Two-axis pods list the longer
/// axis first, as the book writes `4x2`; three-axis pods list it last, as Google
/// names `2x2x4`. `None` when no such shape has `n` chips.
pub fn shape_for(chip: &Chip, n: u64) -> Option<Vec<u32>> {
    let pod = &chip.pod_shape;
    if n == chip.pod_chips() {
        return Some(pod.clone());
    }
    if n == 0 || !n.is_power_of_two() {
        return None;
    }
    let mut dims = vec![1u32; pod.len()];
    let mut left = n;
    // Double the smallest axis that can still grow, lowest index first.
    while left > 1 {
        let axis = (0..dims.len())
            .filter(|&a| dims[a] * 2 <= pod[a])
            .min_by_key(|&a| (dims[a], a))?;
        dims[axis] *= 2;
        left /= 2;
    }
    if pod.len() == 2 {
        dims.sort_unstable_by(|a, b| b.cmp(a));
        if dims.iter().zip(pod).any(|(&d, &p)| d > p) {
            dims.reverse();
        }
    } else {
        dims.sort_unstable();
        if dims.iter().zip(pod).any(|(&d, &p)| d > p) {
            return None;
        }
    }
    Some(dims)
}

/// Every canonical slice of the pod, smallest first: 1, 2, 4, … chips and the pod.
pub fn candidates(chip: &Chip) -> Vec<Slice> {
    let pod = chip.pod_chips();
    let mut out = Vec::new();
    let mut n = 1u64;
    while n < pod {
        if let Some(s) = shape_for(chip, n).and_then(|d| Slice::new(chip, &d).ok()) {
            out.push(s);
        }
        n *= 2;
    }
    if let Ok(s) = Slice::new(chip, &chip.pod_shape) {
        out.push(s);
    }
    out
}
