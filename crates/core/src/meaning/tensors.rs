//! The safetensors format, read and written by hand: an 8-byte little-endian header length, a
//! JSON header naming each tensor's dtype, shape and byte range, then the bytes. Twenty lines
//! here instead of a crate; F32, F16 and BF16 tensors are read as f32.

use std::collections::HashMap;

/// A tensor as f32, row-major.
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// Every tensor of a safetensors file's bytes.
pub fn read(bytes: &[u8]) -> Result<HashMap<String, Tensor>, String> {
    let bad = |why: &str| format!("not a safetensors file ({why})");
    let n = u64::from_le_bytes(
        bytes
            .get(..8)
            .ok_or_else(|| bad("too short"))?
            .try_into()
            .expect("8 bytes"),
    ) as usize;
    let header = bytes
        .get(8..8usize.saturating_add(n))
        .ok_or_else(|| bad("header past the end"))?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| bad(&e.to_string()))?;
    let body = &bytes[8 + n..];
    let mut out = HashMap::new();
    for (name, t) in header {
        if name == "__metadata__" {
            continue;
        }
        let dtype = t["dtype"].as_str().unwrap_or("");
        let shape: Vec<usize> = t["shape"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|d| d.as_u64())
                    .map(|d| d as usize)
                    .collect()
            })
            .unwrap_or_default();
        let range = t["data_offsets"]
            .as_array()
            .ok_or_else(|| bad("no offsets"))?;
        let (a, b) = (
            range.first().and_then(|v| v.as_u64()).unwrap_or(0) as usize,
            range.get(1).and_then(|v| v.as_u64()).unwrap_or(0) as usize,
        );
        let raw = body.get(a..b).ok_or_else(|| bad("tensor past the end"))?;
        let data: Vec<f32> = match dtype {
            "F32" => raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
            "F16" => raw
                .chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            "BF16" => raw
                .chunks_exact(2)
                .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16))
                .collect(),
            _ => continue, // position ids (I64) and the like: not needed
        };
        if data.len() != shape.iter().product::<usize>() {
            return Err(bad(&format!("{name}: shape and size disagree")));
        }
        out.insert(name, Tensor { shape, data });
    }
    Ok(out)
}

/// A safetensors file holding the F32 tensors `tensors` (name, shape, data).
pub fn write(tensors: &[(&str, &[usize], &[f32])]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut at = 0usize;
    for (name, shape, data) in tensors {
        let end = at + data.len() * 4;
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [at, end]}),
        );
        at = end;
    }
    let mut head = serde_json::to_vec(&header).expect("a map serialises");
    while !head.len().is_multiple_of(8) {
        head.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + head.len() + at);
    out.extend((head.len() as u64).to_le_bytes());
    out.extend(head);
    for (_, _, data) in tensors {
        for v in data.iter() {
            out.extend(v.to_le_bytes());
        }
    }
    out
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => {
            // Subnormal: value = frac * 2^-24.
            let v = frac as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        31 => sign | 0x7f80_0000 | (frac << 13),
        e => sign | (((e - 15 + 127) as u32) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_tensors_read_back() {
        let bytes = write(&[("embeddings", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, -6.5])]);
        let t = read(&bytes).unwrap();
        assert_eq!(t["embeddings"].shape, [2, 3]);
        assert_eq!(t["embeddings"].data, [1.0, 2.0, 3.0, 4.0, 5.0, -6.5]);
    }

    #[test]
    fn half_floats_widen() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    }

    #[test]
    fn garbage_is_refused() {
        assert!(read(b"abc").is_err());
        assert!(read(&[255, 255, 0, 0, 0, 0, 0, 0, b'{']).is_err());
    }
}
