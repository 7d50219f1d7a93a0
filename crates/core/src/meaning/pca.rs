//! Principal components of a row matrix: the covariance's eigenvectors by cyclic Jacobi
//! rotations. The matrices here are small (a 384×384 covariance), so the O(n³) sweeps take
//! well under a second and need no linear-algebra crate.

/// Projects the rows of `x` (`n` × `d`, row-major) onto their first `k` principal components
/// (mean removed), largest variance first; returns the `n` × `k` result.
pub fn reduce(x: &[f32], d: usize, k: usize) -> Vec<f32> {
    let n = x.len() / d;
    let mut mean = vec![0f64; d];
    for row in x.chunks_exact(d) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += *v as f64 / n as f64;
        }
    }
    let mut cov = vec![0f64; d * d];
    let mut centred = vec![0f64; d];
    for row in x.chunks_exact(d) {
        for j in 0..d {
            centred[j] = row[j] as f64 - mean[j];
        }
        for i in 0..d {
            let ci = centred[i];
            for j in i..d {
                cov[i * d + j] += ci * centred[j];
            }
        }
    }
    for i in 0..d {
        for j in 0..i {
            cov[i * d + j] = cov[j * d + i];
        }
    }
    let (values, vectors) = eigen(cov, d);
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|a, b| values[*b].total_cmp(&values[*a]));
    let k = k.min(d);
    let mut out = vec![0f32; n * k];
    for (r, row) in x.chunks_exact(d).enumerate() {
        for (c, &e) in order[..k].iter().enumerate() {
            let mut s = 0f64;
            for j in 0..d {
                s += (row[j] as f64 - mean[j]) * vectors[j * d + e];
            }
            out[r * k + c] = s as f32;
        }
    }
    out
}

/// Eigenvalues and eigenvectors (as columns) of the symmetric `d`×`d` matrix `a`.
fn eigen(mut a: Vec<f64>, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0f64; d * d];
    for i in 0..d {
        v[i * d + i] = 1.0;
    }
    for _sweep in 0..50 {
        let off: f64 = (0..d)
            .flat_map(|i| (0..d).filter(move |j| *j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * d + j] * a[i * d + j])
            .sum();
        let diag: f64 = (0..d).map(|i| a[i * d + i] * a[i * d + i]).sum();
        if off <= 1e-22 * diag.max(1e-300) {
            break;
        }
        for p in 0..d {
            for q in p + 1..d {
                let apq = a[p * d + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * d + q] - a[p * d + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..d {
                    let (akp, akq) = (a[k * d + p], a[k * d + q]);
                    a[k * d + p] = c * akp - s * akq;
                    a[k * d + q] = s * akp + c * akq;
                }
                for k in 0..d {
                    let (apk, aqk) = (a[p * d + k], a[q * d + k]);
                    a[p * d + k] = c * apk - s * aqk;
                    a[q * d + k] = s * apk + c * aqk;
                }
                for k in 0..d {
                    let (vkp, vkq) = (v[k * d + p], v[k * d + q]);
                    v[k * d + p] = c * vkp - s * vkq;
                    v[k * d + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..d).map(|i| a[i * d + i]).collect(), v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_of_a_known_matrix() {
        let (mut vals, _) = eigen(vec![2.0, 1.0, 1.0, 2.0], 2);
        vals.sort_by(f64::total_cmp);
        assert!((vals[0] - 1.0).abs() < 1e-9 && (vals[1] - 3.0).abs() < 1e-9);
    }

    #[test]
    fn first_component_follows_the_long_axis() {
        // Points along y = 2x with a little noise: one component keeps their order and spread.
        let x: Vec<f32> = (0..20)
            .flat_map(|i| {
                let t = i as f32 - 10.0;
                [t, 2.0 * t + if i % 2 == 0 { 0.1 } else { -0.1 }]
            })
            .collect();
        let y = reduce(&x, 2, 1);
        let spread = y[19] - y[0];
        // (19, 38) along the axis, less the noise of the two ends projected on it (0.18).
        assert!((spread.abs() - 19.0 * 5f32.sqrt()).abs() < 0.25, "{spread}");
    }
}
