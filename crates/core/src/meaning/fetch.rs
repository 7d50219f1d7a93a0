//! `pidx model fetch`: downloads a published Model2Vec model's three files from the Hugging
//! Face hub over HTTPS (rustls, already a dependency for the team server; a blocking
//! HTTP/1.1 GET following redirects, about 80 lines, rather than an HTTP client crate and its
//! async runtime). Without internet it fails with one line saying so.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};

/// The model fetched when none is named: Model2Vec's small English model (8M parameters,
/// 256 dimensions, MIT licence).
pub const DEFAULT_MODEL: &str = "minishlab/potion-base-8M";

const HUB: &str = "huggingface.co";
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Downloads model `name` (`owner/model` on the hub) into `out`.
///
/// # Errors
/// `Invalid` with one line when the hub cannot be reached or answers otherwise than with the
/// files; `Io` when `out` cannot be written.
pub fn fetch(name: &str, out: &Path) -> Result<()> {
    let fail = |why: String| Error::Invalid(format!("cannot fetch {name} from {HUB}: {why}"));
    let mut got = Vec::new();
    for file in FILES {
        let url = format!("https://{HUB}/{name}/resolve/main/{file}");
        got.push((file, get(&url, 5).map_err(fail)?));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    for (file, bytes) in got {
        let path = out.join(file);
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
    }
    super::StaticModel::load(out).map(drop)
}

/// The body of `url` (https only), following up to `hops` redirects.
fn get(url: &str, hops: usize) -> std::result::Result<Vec<u8>, String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("refusing a non-https address {url}"))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let tcp = TcpStream::connect((host, 443)).map_err(|e| format!("{host}: {e}"))?;
    tcp.set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(|e| e.to_string())?;
    let roots = rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let server =
        rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| e.to_string())?;
    let conn =
        rustls::ClientConnection::new(Arc::new(config), server).map_err(|e| e.to_string())?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    write!(
        tls,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: pidx\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(tls);
    let mut status = String::new();
    reader.read_line(&mut status).map_err(|e| e.to_string())?;
    let code: u16 = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or("not an HTTP answer")?;
    let (mut location, mut chunked) = (None, false);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            match k.to_ascii_lowercase().as_str() {
                "location" => location = Some(v.trim().to_string()),
                "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
                _ => {}
            }
        }
    }
    if (300..400).contains(&code) {
        let to = location.ok_or("a redirect without a location")?;
        let to = if to.starts_with('/') {
            format!("https://{host}{to}")
        } else {
            to
        };
        return match hops {
            0 => Err("too many redirects".into()),
            _ => get(&to, hops - 1),
        };
    }
    if code != 200 {
        return Err(format!("HTTP {code} for {url}"));
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).map_err(|e| e.to_string())?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| "a bad chunk size")?;
            if n == 0 {
                break;
            }
            let at = body.len();
            body.resize(at + n + 2, 0);
            reader
                .read_exact(&mut body[at..])
                .map_err(|e| e.to_string())?;
            body.truncate(at + n);
        }
    } else {
        reader.read_to_end(&mut body).map_err(|e| e.to_string())?;
    }
    Ok(body)
}
