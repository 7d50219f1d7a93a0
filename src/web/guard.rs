//! Who may read the pages, and the headers every answer carries. On loopback the Host header
//! must name this server (a page of another site that rebinds its DNS name to 127.0.0.1 sends
//! its own name, and is refused). Off loopback every request needs the access token: as a
//! `token` query parameter once (answered with an HttpOnly, SameSite=Strict cookie and a
//! redirect that drops it from the address bar), the cookie, or `Authorization: Bearer`.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{App, Options};

const COOKIE: &str = "pidx_token";

/// Scripts and styles from this server only, nothing inline, no frames, no other origin.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

pub struct Guard {
    token: Option<String>,
    /// The Host values accepted; `None`: any (off loopback, where the token guards).
    hosts: Option<Vec<String>>,
}

impl Guard {
    /// # Errors
    /// A token that could not be sent in a header.
    pub fn new(opts: &Options, bound: SocketAddr) -> Result<Guard> {
        let loopback = bound.ip().is_loopback();
        let token = match &opts.token {
            Some(t) if t.is_empty() || !t.bytes().all(|b| b.is_ascii_graphic()) => {
                anyhow::bail!("--token: use printable ASCII characters without spaces")
            }
            Some(t) => Some(t.clone()),
            None if loopback => None,
            None => Some(uuid::Uuid::new_v4().simple().to_string()),
        };
        let port = bound.port();
        let hosts = loopback.then(|| {
            ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .flat_map(|h| [format!("{h}:{port}"), (*h).to_string()])
                .collect()
        });
        Ok(Guard { token, hosts })
    }

    /// The address to open, with the token when one is needed.
    pub fn url(&self, addr: SocketAddr) -> String {
        let host = if addr.ip().is_unspecified() {
            format!("<this machine's address>:{}", addr.port())
        } else {
            addr.to_string()
        };
        match &self.token {
            Some(t) => format!("http://{host}/?token={t}"),
            None => format!("http://{host}/"),
        }
    }

    fn host_ok(&self, headers: &HeaderMap) -> bool {
        let Some(hosts) = &self.hosts else {
            return true;
        };
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        host.is_some_and(|h| hosts.iter().any(|ok| ok.eq_ignore_ascii_case(h)))
    }

    /// The token the request carries: (from the query, from a cookie or header).
    fn offered(req: &Request) -> (Option<String>, Option<String>) {
        let query = req
            .uri()
            .query()
            .and_then(|q| url_pairs(q).find(|(k, _)| k == "token").map(|(_, v)| v));
        let cookie = req
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|c| {
                c.trim()
                    .strip_prefix(COOKIE)?
                    .strip_prefix('=')
                    .map(str::to_string)
            });
        let bearer = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        (query, cookie.or(bearer))
    }
}

/// `k=v` pairs of a query string, percent-decoded.
pub fn url_pairs(q: &str) -> impl Iterator<Item = (String, String)> + '_ {
    serde_urlencoded::from_str::<Vec<(String, String)>>(q)
        .unwrap_or_default()
        .into_iter()
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

pub async fn check(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let guard = &app.guard;
    if !guard.host_ok(req.headers()) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to its own address (Host header refused)",
        );
    }
    if let Some(token) = &guard.token {
        let (query, kept) = Guard::offered(&req);
        if let Some(q) = query {
            if !same(&q, token) {
                return refuse(StatusCode::UNAUTHORIZED, "wrong access token");
            }
            // The token leaves the address bar (and the history) for a cookie.
            let mut rest: Vec<(String, String)> = req
                .uri()
                .query()
                .map(|q| url_pairs(q).filter(|(k, _)| k != "token").collect())
                .unwrap_or_default();
            let path = req.uri().path().to_string();
            let to = if rest.is_empty() {
                path
            } else {
                format!(
                    "{path}?{}",
                    serde_urlencoded::to_string(std::mem::take(&mut rest)).unwrap_or_default()
                )
            };
            let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
            if let Ok(v) = HeaderValue::from_str(&format!(
                "{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
            )) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            return secure(r);
        }
        match kept {
            Some(k) if same(&k, token) => {}
            Some(_) => return refuse(StatusCode::UNAUTHORIZED, "wrong access token"),
            None => {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "this server needs its access token: open the address `pidx serve` printed (it ends in ?token=...)",
                )
            }
        }
    }
    secure(next.run(req).await)
}

fn refuse(status: StatusCode, why: &str) -> Response {
    secure((status, why.to_string()).into_response())
}

/// The headers of every answer.
fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    r
}
