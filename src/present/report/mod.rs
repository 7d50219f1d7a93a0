//! The HTML report: `data` runs the queries, `html` and `svg` draw. Nothing taken from a
//! transcript reaches the page unescaped, nor any secret in it (the texts are redacted).

pub mod data;
mod escape;
pub mod html;
pub mod svg;
