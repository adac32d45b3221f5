//! NumPy `.npy` files: the header read (versions 1, 2 and 3) and written (version 1), and the
//! values brought to C order in native little-endian floats.
//!
//! No crate: the header is a tiny fixed grammar (a Python dict literal with three keys, written
//! by `numpy.lib.format`), f4/f8 are the only element types the codecs take, and a 40-line
//! parser costs less to review and keep than a dependency and its own dependencies.
//!
//! Layout (NumPy's format spec): `\x93NUMPY`, major and minor version bytes, the header length
//! (u16 little-endian for v1, u32 for v2 and v3), then the header (ASCII for v1/v2, UTF-8 for
//! v3) padded with spaces and a newline so the data starts at a multiple of 64 bytes.

use fzpack::{DType, Element};

/// The NumPy magic.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// What an `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Element type.
    pub dtype: DType,
    /// Big-endian values (`>f4` / `>f8`).
    pub big_endian: bool,
    /// Fortran (column-major) order.
    pub fortran: bool,
    /// The shape (empty for a 0-d array, which holds one value).
    pub shape: Vec<usize>,
    /// Where the values start.
    pub data_offset: usize,
}

impl Header {
    /// Number of values the shape holds (`None` on overflow).
    pub fn count(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }
}

/// Parses an `.npy` header; the error says what is wrong (the dtype is named when it is not
/// `f4`/`f8`).
pub fn parse(bytes: &[u8]) -> Result<Header, String> {
    if !bytes.starts_with(MAGIC) {
        return Err("not a NumPy .npy file (no \\x93NUMPY magic)".into());
    }
    let major = *bytes.get(6).ok_or("truncated .npy header")?;
    let (len, start): (Option<usize>, usize) = match major {
        1 => (
            bytes
                .get(8..10)
                .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize),
            10,
        ),
        2 | 3 => (
            bytes
                .get(8..12)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
            12,
        ),
        v => {
            return Err(format!(
                ".npy format version {v} is not supported (1, 2, 3 are)"
            ));
        }
    };
    let len = len.ok_or("truncated .npy header")?;
    let end = start.checked_add(len).filter(|&e| e <= bytes.len());
    let text = end
        .and_then(|e| std::str::from_utf8(&bytes[start..e]).ok())
        .ok_or("truncated or non-text .npy header")?;
    let descr = dict_value(text, "descr")?;
    let fortran = match dict_value(text, "fortran_order")? {
        "True" => true,
        "False" => false,
        v => {
            return Err(format!(
                ".npy header: fortran_order is {v}, not True or False"
            ));
        }
    };
    let shape_s = dict_value(text, "shape")?;
    let inner = shape_s
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!(".npy header: shape {shape_s} is not a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| format!(".npy header: bad dimension {d:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let d = descr
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .ok_or_else(|| {
            format!(
                "the .npy dtype is {descr} (a structured or record type); fzpack takes float32 \
                 or float64 ('<f4', '>f4', '<f8', '>f8')"
            )
        })?;
    let (big_endian, dtype) = match d {
        "<f4" | "=f4" => (false, DType::F32),
        ">f4" => (true, DType::F32),
        "<f8" | "=f8" => (false, DType::F64),
        ">f8" => (true, DType::F64),
        other => {
            return Err(format!(
                "the .npy dtype is '{other}'; fzpack takes float32 or float64 ('<f4', '>f4', \
                 '<f8', '>f8'); convert it first, e.g. `a.astype('<f4')`"
            ));
        }
    };
    Ok(Header {
        dtype,
        big_endian,
        fortran,
        shape,
        data_offset: end.unwrap_or(start),
    })
}

/// The text of `key`'s value in the header dict: a quoted string, a parenthesised tuple or a
/// bare word, up to the next top-level `,` or `}`.
fn dict_value<'a>(text: &'a str, key: &str) -> Result<&'a str, String> {
    let missing = || format!(".npy header has no '{key}' entry");
    let at = text
        .find(&format!("'{key}'"))
        .or_else(|| text.find(&format!("\"{key}\"")))
        .ok_or_else(missing)?;
    let rest = text[at + key.len() + 2..].trim_start();
    let rest = rest.strip_prefix(':').ok_or_else(missing)?.trim_start();
    let end = match rest.chars().next() {
        Some('(') => rest.find(')').map(|i| i + 1),
        Some(q @ ('\'' | '"')) => rest[1..].find(q).map(|i| i + 2),
        Some('[') => rest.find(']').map(|i| i + 1),
        _ => rest.find([',', '}']),
    };
    end.map(|e| rest[..e].trim()).ok_or_else(missing)
}

/// The values of an `.npy` file in C order, native floats; checks the data length.
pub fn values<T: Element>(bytes: &[u8], h: &Header) -> Result<Vec<T>, String> {
    let n = h.count().ok_or(".npy shape overflows")?;
    let data = &bytes[h.data_offset.min(bytes.len())..];
    let want = n.checked_mul(T::BYTES).ok_or(".npy shape overflows")?;
    if data.len() != want {
        return Err(format!(
            ".npy shape {} needs {want} bytes of data, the file holds {}",
            shape_str(&h.shape),
            data.len()
        ));
    }
    let v: Vec<T> = if h.big_endian {
        let swapped: Vec<u8> = data
            .chunks_exact(T::BYTES)
            .flat_map(|c| c.iter().rev().copied())
            .collect();
        fzpack::values_from_le_bytes(&swapped)
    } else {
        fzpack::values_from_le_bytes(data)
    }
    .ok_or(".npy data length")?;
    Ok(if h.fortran && h.shape.len() > 1 {
        fortran_to_c(&v, &h.shape)
    } else {
        v
    })
}

/// Reorders column-major values to row-major: the C-order element at multi-index `i` is the
/// Fortran-order element at the same multi-index.
fn fortran_to_c<T: Copy>(v: &[T], shape: &[usize]) -> Vec<T> {
    let nd = shape.len();
    // Fortran strides (in elements): the first index varies fastest.
    let mut fs = vec![1usize; nd];
    for k in 1..nd {
        fs[k] = fs[k - 1] * shape[k - 1];
    }
    let mut idx = vec![0usize; nd];
    let mut out = Vec::with_capacity(v.len());
    for _ in 0..v.len() {
        let off: usize = idx.iter().zip(&fs).map(|(i, s)| i * s).sum();
        out.push(v[off]);
        // next C-order multi-index: the last index varies fastest
        for k in (0..nd).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// A version 1 `.npy` header for little-endian C-order values of `dtype` with `shape`, padded
/// so the data starts at a multiple of 64 bytes.
pub fn header_bytes(dtype: DType, shape: &[usize]) -> Vec<u8> {
    let descr = match dtype {
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    };
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    dict.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// `2161x4320`.
pub fn shape_str(shape: &[usize]) -> String {
    if shape.is_empty() {
        return "() (a scalar)".into();
    }
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_pads_to_64() {
        let h = header_bytes(DType::F64, &[3, 4]);
        assert_eq!(h.len() % 64, 0);
        let p = parse(&h).unwrap();
        assert_eq!(p.shape, vec![3, 4]);
        assert_eq!(p.dtype, DType::F64);
        assert!(!p.fortran && !p.big_endian);
        assert_eq!(p.data_offset, h.len());
    }

    #[test]
    fn fortran_reorder() {
        // 2x3 array [[0,1,2],[3,4,5]] in Fortran order: 0,3,1,4,2,5
        let f = [0, 3, 1, 4, 2, 5];
        assert_eq!(fortran_to_c(&f, &[2, 3]), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn hostile_headers_are_errors_not_panics() {
        let mut good = header_bytes(DType::F32, &[2, 3]);
        good.extend_from_slice(&[0u8; 24]);
        assert!(values::<f32>(&good, &parse(&good).unwrap()).is_ok());
        // every truncation, and every byte of the header set to each of a few values
        for cut in 0..good.len() {
            if let Ok(h) = parse(&good[..cut]) {
                assert!(values::<f32>(&good[..cut], &h).is_err());
            }
        }
        for i in 0..128 {
            for b in [0u8, b'\'', b'(', b')', b',', b'}', b':', 0xff, b'9'] {
                let mut v = good.clone();
                v[i] = b;
                if let Ok(h) = parse(&v) {
                    let _ = values::<f32>(&v, &h);
                    let _ = values::<f64>(&v, &h);
                }
            }
        }
        // a shape whose product overflows (a zero dimension last)
        let dict =
            "{'descr': '<f4', 'fortran_order': True, 'shape': (4294967296, 4294967296, 0), }";
        let mut big = b"\x93NUMPY\x01\x00".to_vec();
        big.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        big.extend_from_slice(dict.as_bytes());
        let h = parse(&big).unwrap();
        assert_eq!(h.count(), None);
        assert!(values::<f32>(&big, &h).is_err());
    }
}
