//! The UI's page and assets, compiled into the binary (no separate build or
//! files at run time). The page names each asset with `?rev=<hash of every
//! asset>`, so a reload always fetches the bundle this binary serves; an
//! asset asked for with the current rev may be cached for good.
//!
//! An unknown asset is a plain-text 404, never the page: a page served as a
//! script would be run as one.

use std::sync::OnceLock;

use axum::extract::{Path, Query};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

const PAGE: &str = include_str!("../../ui/index.html");
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../ui/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("../../ui/app.css"),
    ),
];

/// The hash of every asset: 16 hex digits of SHA-256.
pub(crate) fn rev() -> &'static str {
    static REV: OnceLock<String> = OnceLock::new();
    REV.get_or_init(|| {
        let mut h = Sha256::new();
        for (name, _, body) in ASSETS {
            h.update(name.as_bytes());
            h.update([0]);
            h.update(body.as_bytes());
        }
        hex::encode(&h.finalize()[..8])
    })
}

fn rendered_page() -> &'static str {
    static PAGE_WITH_REV: OnceLock<String> = OnceLock::new();
    PAGE_WITH_REV.get_or_init(|| PAGE.replace("{{rev}}", rev()))
}

pub(crate) async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        rendered_page(),
    )
        .into_response()
}

#[derive(serde::Deserialize)]
pub(crate) struct RevQuery {
    rev: Option<String>,
}

pub(crate) async fn asset(Path(name): Path<String>, Query(q): Query<RevQuery>) -> Response {
    let Some((_, mime, body)) = ASSETS.iter().find(|(n, _, _)| *n == name) else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "not found\n",
        )
            .into_response();
    };
    // The current rev may be kept forever; anything else (an old page, no
    // rev) is revalidated, so it never sticks to a stale bundle.
    let cache = if q.rev.as_deref() == Some(rev()) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut res = (StatusCode::OK, *body).into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_every_asset_with_the_current_rev() {
        let page = rendered_page();
        assert!(!page.contains("{{rev}}"));
        for (name, _, _) in ASSETS {
            let url = format!("/ui/assets/{name}?rev={}", rev());
            assert!(page.contains(&url), "{url} is not in the page");
        }
        assert_eq!(rev().len(), 16);
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        // The content policy forbids them; one would silently not run.
        let page = rendered_page();
        assert!(!page.contains("<style"), "inline <style>");
        assert!(!page.contains(" style="), "style attribute");
        let lower = page.to_ascii_lowercase();
        for (i, _) in lower.match_indices(" on") {
            let word: String = lower[i + 3..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            let next = lower[i + 3 + word.len()..].chars().next();
            assert!(
                word.is_empty() || next != Some('='),
                "inline event handler on{word}="
            );
        }
        for (i, _) in page.match_indices("<script") {
            let tag = &page[i..page[i..].find('>').map_or(page.len(), |e| i + e)];
            assert!(tag.contains(" src="), "inline script: {tag}");
        }
    }
}
