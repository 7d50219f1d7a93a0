//! The server's passages (pg 0032): rows as push sends them, and a sign code as the bit string
//! PostgreSQL compares (`bit_count(code # q)`), written the same way by push and by a search.

use postgres::Transaction;

use super::server_err;
use pidx_core::error::Result;

/// A sign code (`meaning::codes`, bit `d` at word `d / 64`, bit `d % 64`) as a bit string of
/// every word's 64 bits, dimension 0 first.
pub fn code_bits(code: &[u64]) -> String {
    let mut s = String::with_capacity(code.len() * 64);
    for w in code {
        for b in 0..64 {
            s.push(if w >> b & 1 == 1 { '1' } else { '0' });
        }
    }
    s
}

/// Passages waiting to be written, as columns.
#[derive(Default)]
pub struct Rows {
    fid: Vec<i64>,
    seq: Vec<i64>,
    kind: Vec<i16>,
    scale: Vec<f32>,
    vec: Vec<Vec<u8>>,
    code: Vec<String>,
}

impl Rows {
    /// Passages a statement writes: a few megabytes of vectors and codes.
    const MOST: usize = 5_000;

    pub fn add(&mut self, fid: i64, seq: i64, kind: i16, scale: f32, vec: Vec<u8>, code: String) {
        self.fid.push(fid);
        self.seq.push(seq);
        self.kind.push(kind);
        self.scale.push(scale);
        self.vec.push(vec);
        self.code.push(code);
    }

    pub fn full(&self) -> bool {
        self.fid.len() >= Self::MOST
    }

    /// Writes the rows (one statement) and empties them.
    ///
    /// # Errors
    /// Server errors.
    pub fn write(&mut self, tx: &mut Transaction, source: &str) -> Result<()> {
        if self.fid.is_empty() {
            return Ok(());
        }
        tx.execute(
            "INSERT INTO passages (source, fid, seq, kind, scale, vec, code)
             SELECT $1, u.fid, u.seq, u.kind, u.scale, u.vec, u.code::varbit
             FROM unnest($2::int8[], $3::int8[], $4::int2[], $5::float4[], $6::bytea[], $7::text[])
                  AS u(fid, seq, kind, scale, vec, code)",
            &[
                &source,
                &self.fid,
                &self.seq,
                &self.kind,
                &self.scale,
                &self.vec,
                &self.code,
            ],
        )
        .map_err(server_err)?;
        *self = Rows::default();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::code_bits;

    #[test]
    fn a_code_s_bits_come_dimension_by_dimension() {
        let bits = code_bits(&[0b1011, 1 << 63]);
        assert_eq!(bits.len(), 128);
        assert_eq!(&bits[..5], "11010");
        assert_eq!(bits[5..127].chars().filter(|c| *c == '1').count(), 0);
        assert_eq!(&bits[127..], "1");
    }
}
