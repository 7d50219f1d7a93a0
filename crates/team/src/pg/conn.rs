//! Connecting to the team server: the URL, then the standard `PG*` environment variables and
//! `.pgpass` for what the URL leaves out (libpq's order), TLS by the URL's `sslmode` (rustls, the
//! system's roots plus `PGSSLROOTCERT`), and redaction: no error or message carries a password.

use std::sync::Arc;

use postgres::config::{Host, SslMode};
use postgres::{Client, Config};

use pidx_core::error::{Error, Result};

/// A connection string with its password hidden, for messages.
pub fn redact_url(url: &str) -> String {
    let mut out = url.to_string();
    // URL form: scheme://user:password@host
    if let Some(scheme) = out.find("://") {
        let rest = &out[scheme + 3..];
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        if let Some(at) = rest[..end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                out.replace_range(scheme + 3 + colon + 1..scheme + 3 + at, "***");
            }
        }
    }
    // Query or key=value form: password=...
    let lower = out.to_ascii_lowercase();
    if let Some(p) = lower.find("password=") {
        let start = p + "password=".len();
        let end = out[start..]
            .find(['&', ' '])
            .map_or(out.len(), |e| start + e);
        out.replace_range(start..end, "***");
    }
    out
}

/// `text` with every occurrence of `secret` replaced (server and driver messages may echo it).
pub fn redact(text: &str, secret: Option<&[u8]>) -> String {
    match secret.and_then(|s| std::str::from_utf8(s).ok()) {
        Some(s) if !s.is_empty() => text.replace(s, "***"),
        _ => text.to_string(),
    }
}

/// Parses `url` and fills what it leaves out from `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
/// `PGPASSWORD`, `PGSSLMODE` and the password file (`PGPASSFILE` or `~/.pgpass`).
///
/// # Errors
/// `Invalid` for a string that is not a connection string (the message is redacted).
pub fn config(url: &str) -> Result<Config> {
    let mut cfg: Config = url.parse().map_err(|e: postgres::Error| {
        Error::Invalid(format!(
            "--pg {}: {}; expected postgresql://USER@HOST:PORT/DB",
            redact_url(url),
            redact_url(&e.to_string())
        ))
    })?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if cfg.get_hosts().is_empty() {
        let host = env("PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
        for h in host.split(',') {
            cfg.host(h);
        }
    }
    if cfg.get_ports().is_empty() {
        if let Some(port) = env("PGPORT").and_then(|p| p.parse().ok()) {
            cfg.port(port);
        }
    }
    if cfg.get_user().is_none() {
        let user = env("PGUSER")
            .or_else(|| env("USER"))
            .unwrap_or_else(|| "postgres".into());
        cfg.user(&user);
    }
    if cfg.get_dbname().is_none() {
        if let Some(db) = env("PGDATABASE") {
            cfg.dbname(&db);
        }
    }
    if !url.contains("sslmode") {
        match env("PGSSLMODE").as_deref() {
            Some("disable") => cfg.ssl_mode(SslMode::Disable),
            Some("require" | "verify-ca" | "verify-full") => cfg.ssl_mode(SslMode::Require),
            _ => &mut cfg,
        };
    }
    if cfg.get_password().is_none() {
        if let Some(pw) = env("PGPASSWORD").or_else(|| pgpass(&cfg)) {
            cfg.password(pw);
        }
    }
    Ok(cfg)
}

/// The password `.pgpass` gives for this host, port, database and user (libpq's rules: the
/// first matching line, `*` matches anything, `\` escapes).
fn pgpass(cfg: &Config) -> Option<String> {
    let path = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".pgpass")))?;
    let text = std::fs::read_to_string(path).ok()?;
    let host = match cfg.get_hosts().first()? {
        Host::Tcp(h) => h.clone(),
        Host::Unix(p) => {
            let p = p.to_string_lossy();
            if p == "/var/run/postgresql" || p == "/tmp" {
                "localhost".into()
            } else {
                p.into_owned()
            }
        }
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = cfg.get_user().unwrap_or_default().to_string();
    let db = cfg
        .get_dbname()
        .map_or_else(|| user.clone(), str::to_string);
    let wanted = [host, port, db, user];
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(pgpass_fields)
        .find(|f| f.len() == 5 && (0..4).all(|i| f[i] == "*" || f[i] == wanted[i]))
        .map(|f| f[4].clone())
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// Connects with TLS as `sslmode` asks (`prefer`, the default, tries TLS first).
///
/// # Errors
/// `Server` with a redacted message when the server cannot be reached or refuses us.
pub fn connect(url: &str) -> Result<Client> {
    let cfg = config(url)?;
    let secret = cfg.get_password().map(<[u8]>::to_vec);
    let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls_config()?);
    cfg.connect(tls).map_err(|e| {
        Error::Server(format!(
            "cannot connect to {}: {}",
            redact_url(url),
            redact(&full_message(&e), secret.as_deref())
        ))
    })
}

/// Asks the server to stop the statement `token`'s connection is running, over a connection of
/// its own made as [`connect`] makes one.
///
/// # Errors
/// The server cannot be reached.
pub fn cancel(token: &postgres::CancelToken) -> Result<()> {
    let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls_config()?);
    token
        .cancel_query(tls)
        .map_err(|e| Error::Server(full_message(&e)))
}

/// The driver's error with its cause (the `Display` alone is often just "db error").
pub fn full_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut msg = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                msg.push_str(": ");
                msg.push_str(&c.to_string());
                cause = c.source();
            }
            msg
        }
    }
}

fn tls_config() -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = std::env::var_os("PGSSLROOTCERT") {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(&path)
            .map_err(|e| Error::Invalid(format!("PGSSLROOTCERT: {e}")))?;
        for cert in certs.flatten() {
            roots
                .add(cert)
                .map_err(|e| Error::Invalid(format!("PGSSLROOTCERT: {e}")))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Invalid(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_in_both_url_forms() {
        assert_eq!(
            redact_url("postgresql://bob:s3cret@db:5432/pidx"),
            "postgresql://bob:***@db:5432/pidx"
        );
        assert_eq!(
            redact_url("postgresql://bob@db/pidx?password=s3cret&sslmode=require"),
            "postgresql://bob@db/pidx?password=***&sslmode=require"
        );
        assert_eq!(
            redact_url("host=db password=s3cret user=bob"),
            "host=db password=*** user=bob"
        );
        assert_eq!(
            redact("auth failed for s3cret", Some(b"s3cret")),
            "auth failed for ***"
        );
    }

    #[test]
    fn pgpass_lines_split_on_unescaped_colons() {
        assert_eq!(
            pgpass_fields(r"db:5432:*:bob:pa\:ss"),
            vec!["db", "5432", "*", "bob", "pa:ss"]
        );
    }
}
