//! Which images a page shows: rasters a browser cannot run (never SVG), and only when their
//! bytes are the type they claim.

use base64::Engine as _;

/// The image types a page shows.
pub const RASTER: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Whether base64 `data` starts as the raster type `mime` claims (read from its first 18 bytes
/// only, so a page does not decode every image it links).
pub fn claims_truly(mime: &str, data: &str) -> bool {
    let head = data.trim_start().get(..24).unwrap_or(data);
    base64::engine::general_purpose::STANDARD
        .decode(head)
        .is_ok_and(|b| sniff(&b) == Some(mime))
}

/// The raster type the first bytes say.
pub fn sniff(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if b.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if b.len() > 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}
