//! The one stylesheet and the one script, embedded in the binary (`cargo install` is the whole
//! installation). Their addresses carry a version so a browser never runs an old script.

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::Fail;

pub(super) const CSS: &str = include_str!("assets/app.css");
const JS: &str = include_str!("assets/app.js");

pub const CSS_URL: &str = concat!("/assets/app-", env!("CARGO_PKG_VERSION"), ".css");
pub const JS_URL: &str = concat!("/assets/app-", env!("CARGO_PKG_VERSION"), ".js");

pub async fn serve(Path(name): Path<String>) -> Response {
    let (body, kind) = if format!("/assets/{name}") == CSS_URL {
        (CSS, "text/css; charset=utf-8")
    } else if format!("/assets/{name}") == JS_URL {
        (JS, "text/javascript; charset=utf-8")
    } else {
        return Fail::NotFound("there is no such file".into()).into_response();
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        body,
    )
        .into_response()
}
