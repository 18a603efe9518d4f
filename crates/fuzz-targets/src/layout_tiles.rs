//! Layouts with random tiles (structured): element type, dims, minor-to-major order and
//! up to three tiles of random sizes (`*` and `?` included) printed as XLA text, then
//! parsed, validated, sized, index-mapped and round-tripped through the canonical text.
use arbitrary::Arbitrary;
use tpusim_layout::{parse_valid, sizes, Geometry, Shape};

const TYPES: [&str; 12] = [
    "pred", "s2", "s4", "s8", "u8", "s16", "f16", "bf16", "f32", "s64", "c64", "f8e4m3fn",
];

/// The structured input.
#[derive(Arbitrary, Debug)]
pub struct Layout {
    ty: u8,
    dims: Vec<u16>,
    order_seed: u32,
    tiles: Vec<Vec<i16>>,
    memory_space: Option<u8>,
}

fn tile_dim(v: i16) -> String {
    match v {
        -1 => "*".into(),
        -2 => "?".into(),
        v => (v % 1025).to_string(),
    }
}

/// One input, as the fuzzer gives it.
pub fn run(l: Layout) {
    let dims: Vec<u16> = l.dims.iter().take(5).map(|d| d % 300).collect();
    let mut order: Vec<usize> = (0..dims.len()).collect();
    let mut seed = l.order_seed as usize;
    for i in (1..order.len()).rev() {
        order.swap(i, seed % (i + 1));
        seed /= i + 1;
    }
    let tiles: String = l
        .tiles
        .iter()
        .take(3)
        .map(|t| {
            let inner: Vec<String> = t.iter().take(4).map(|&v| tile_dim(v)).collect();
            format!("({})", inner.join(","))
        })
        .collect();
    let mut text = format!(
        "{}[{}]{{{}",
        TYPES[l.ty as usize % TYPES.len()],
        dims.iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(","),
        order
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    if !tiles.is_empty() {
        text.push_str(&format!(":T{tiles}"));
    }
    if let Some(s) = l.memory_space {
        text.push_str(&format!("S({})", s % 4));
    }
    text.push('}');
    let Ok(shape) = parse_valid(&text) else {
        return;
    };
    let canonical = shape.to_string();
    let again = parse_valid(&canonical).expect("canonical text parses");
    assert_eq!(again.to_string(), canonical, "{text}");
    let Shape::Array(a) = &shape else { return };
    let Ok(sz) = sizes(a) else { return };
    assert!(sz.array_size_bytes >= sz.logical_bytes, "{text}");
    if sz.array_size_bytes <= 1 << 16 {
        if let Ok(g) = Geometry::new(a) {
            // the index map and its inverse agree on sampled elements
            let dims = g.logical_dims().to_vec();
            let n = g.logical_elements();
            for k in (0..n).step_by((n as usize / 64).max(1)) {
                let mut rest = k;
                let mut idx = vec![0u64; dims.len()];
                for (i, &d) in dims.iter().enumerate().rev() {
                    idx[i] = rest % d.max(1);
                    rest /= d.max(1);
                }
                let lin = g.linear_index(&idx).expect("index in range");
                assert!(lin < g.physical_elements(), "{text}");
                assert_eq!(
                    g.logical_index(lin).expect("in buffer"),
                    Some(idx),
                    "{text}"
                );
            }
        }
    }
}
