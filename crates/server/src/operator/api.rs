//! The operator UI's JSON API. Every handler but the session ones needs a
//! signed-in operator ([`Signed`]); errors are `{"error": "…"}` with a 4xx
//! for what the operator asked wrong and a 5xx for what failed here.
//!
//! What operators change is logged (who, what, never a value); what they
//! decide about approvals is in the activity log through the store.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use connecta_core::activity::{ApprovalDecision, Outcome, Source};
use connecta_core::error::clamp_text;
use connecta_core::secret::Secret;
use connecta_gateway::credential_admin::{self, AdminError};
use connecta_gateway::{approval_view, now_ms};
use connecta_store::{AccessTokenRow, ActivityQuery, StoreError};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::session::{Session, SignInRefusal, clean_name};
use crate::AppState;
use crate::access_tokens;

/// Activity rows per page: default and most.
const ACTIVITY_PAGE: usize = 50;
const MAX_ACTIVITY_PAGE: usize = 200;
/// Approval questions listed at most.
const MAX_APPROVALS: usize = 200;
/// A token's lifetime from the UI, in days: the CLI's limit.
const MAX_TOKEN_DAYS: i64 = 3_660;

pub(crate) fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn store_failed(e: &StoreError) -> Response {
    tracing::warn!("operator UI: the store failed: {e}");
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the store failed: {e}"),
    )
}

fn admin_failed(e: &AdminError) -> Response {
    if e.is_caller_fault() {
        let status = match e {
            AdminError::UnknownConnector { .. } | AdminError::NoSlot(_) => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        };
        refuse(status, e.to_string())
    } else {
        tracing::warn!("operator UI: {e}");
        refuse(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

/// A JSON body of type `T`, or a 400 that says what is wrong with it.
fn body<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, Response> {
    serde_json::from_slice(bytes).map_err(|e| {
        refuse(
            StatusCode::BAD_REQUEST,
            format!("the request body is not what this call takes: {e}"),
        )
    })
}

/// A signed-in operator, from the session cookie.
pub(crate) struct Signed(pub Session);

impl FromRequestParts<AppState> for Signed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let session = state.operator.as_ref().and_then(|op| {
            op.session(
                parts
                    .headers
                    .get(header::COOKIE)
                    .and_then(|v| v.to_str().ok()),
                now_ms(),
            )
        });
        session.map(Signed).ok_or_else(|| {
            refuse(
                StatusCode::UNAUTHORIZED,
                "sign in first (there is no session, or it has expired)",
            )
        })
    }
}

impl Signed {
    /// Who decided, for the activity log.
    fn actor(&self) -> String {
        format!("ui:{}", self.0.name)
    }
}

/// Errors axum answers by itself (a body over the limit, a wrong method, a
/// query that does not parse) in this API's shape: `{"error": "…"}`.
pub(crate) async fn json_errors(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let res = next.run(req).await;
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let text = match axum::body::to_bytes(res.into_body(), 4096).await {
        Ok(b) if !b.is_empty() => String::from_utf8_lossy(&b).trim().to_owned(),
        _ => status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_owned(),
    };
    refuse(status, text)
}

pub(crate) async fn not_found() -> Response {
    refuse(StatusCode::NOT_FOUND, "no such operator API route")
}

// ---- session ----------------------------------------------------------

pub(crate) async fn session_get(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let session = state.operator.as_ref().and_then(|op| {
        op.session(
            headers.get(header::COOKIE).and_then(|v| v.to_str().ok()),
            now_ms(),
        )
    });
    Json(json!({
        "signedIn": session.is_some(),
        "name": session.map(|s| s.name),
    }))
    .into_response()
}

#[derive(Deserialize)]
struct SignIn {
    secret: String,
    name: Option<String>,
}

pub(crate) async fn session_post(State(state): State<AppState>, bytes: Bytes) -> Response {
    let Some(op) = &state.operator else {
        return not_found().await;
    };
    let req: SignIn = match body(&bytes) {
        Ok(r) => r,
        Err(res) => return res,
    };
    let name = clean_name(req.name.as_deref());
    match op.sign_in(&req.secret, &name, now_ms()) {
        Ok((session, cookie)) => {
            tracing::info!(operator = %session.name, "operator signed in to the UI");
            (
                [(header::SET_COOKIE, cookie)],
                Json(json!({ "signedIn": true, "name": session.name })),
            )
                .into_response()
        }
        Err(SignInRefusal::WrongSecret) => {
            tracing::warn!("operator UI: a sign-in with a wrong secret was refused");
            refuse(StatusCode::UNAUTHORIZED, "that is not the operator secret")
        }
        Err(SignInRefusal::TooMany(wait)) => {
            let secs = wait.as_secs().max(1);
            let mut res = refuse(
                StatusCode::TOO_MANY_REQUESTS,
                format!("too many wrong secrets lately; try again in {secs} s"),
            );
            if let Ok(v) = secs.to_string().parse() {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
            res
        }
    }
}

pub(crate) async fn session_delete(State(state): State<AppState>) -> Response {
    let Some(op) = &state.operator else {
        return not_found().await;
    };
    (
        [(header::SET_COOKIE, op.sign_out_cookie())],
        Json(json!({ "signedIn": false })),
    )
        .into_response()
}

// ---- connections ------------------------------------------------------

pub(crate) async fn connections(State(state): State<AppState>, _: Signed) -> Response {
    let g = &state.gateway;
    let mut report = match serde_json::to_value(g.health()) {
        Ok(v) => v,
        Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let (slots, _) =
        match credential_admin::slot_states(&g.config, g.store.as_ref(), g.keys.location()).await {
            Ok(s) => s,
            Err(e) => return store_failed(&e),
        };
    if let Some(list) = report.get_mut("connectors").and_then(Value::as_array_mut) {
        for c in list {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
            if let Some(slot) = slots.iter().find(|s| s.connector == id) {
                c["credential"] = json!({ "label": slot.label, "fields": slot.fields });
            }
            if let Some(oauth) = g.connector(&id).and_then(|h| h.oauth.clone()) {
                c["oauth"] = match oauth.status().await {
                    Ok(s) => serde_json::to_value(s).unwrap_or(Value::Null),
                    Err(e) => json!({ "status": "unreadable", "problem": e.operator_detail() }),
                };
            }
        }
    }
    let now = now_ms();
    let pending = match g.store.approval_list(true, MAX_APPROVALS).await {
        Ok(rows) => rows.iter().filter(|r| r.expires_at_ms > now).count(),
        Err(e) => return store_failed(&e),
    };
    report["pendingApprovals"] = json!(pending);
    Json(report).into_response()
}

pub(crate) async fn connection_refresh(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
) -> Response {
    let Some(handle) = state.gateway.connector(&id) else {
        return refuse(
            StatusCode::NOT_FOUND,
            format!("there is no connector \"{}\"", clamp_text(&id, 64)),
        );
    };
    tracing::info!(operator = %signed.0.name, connector = %id, "operator refreshed a catalog");
    match handle.catalog.refresh().await {
        Ok(loaded) => Json(json!({ "tools": loaded.catalog.tools().len() })).into_response(),
        Err(e) => refuse(
            StatusCode::BAD_GATEWAY,
            format!(
                "{}: {}",
                e.code.as_str(),
                state.gateway.redactor.redact(&e.message)
            ),
        ),
    }
}

/// The downstream OAuth of connector `id`, or a 404.
fn oauth_of(
    state: &AppState,
    id: &str,
) -> Result<std::sync::Arc<connecta_gateway::oauth_flow::OAuthCredentials>, Response> {
    state
        .gateway
        .connector(id)
        .and_then(|h| h.oauth.clone())
        .ok_or_else(|| {
            refuse(
                StatusCode::NOT_FOUND,
                format!(
                    "there is no connector \"{}\" with [connector.oauth]",
                    clamp_text(id, 64)
                ),
            )
        })
}

#[derive(Deserialize, Default)]
struct AuthorizeBody {
    #[serde(default)]
    force: bool,
}

/// Start (or resume) a connector's downstream OAuth: the consent link the
/// operator opens, or that it is authorized already.
pub(crate) async fn connection_authorize(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    let req: AuthorizeBody = if bytes.is_empty() {
        AuthorizeBody::default()
    } else {
        match body(&bytes) {
            Ok(r) => r,
            Err(res) => return res,
        }
    };
    let oauth = match oauth_of(&state, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    tracing::info!(operator = %signed.0.name, connector = %id, force = req.force, "operator asked for a downstream authorization");
    match oauth.authorize(req.force, true).await {
        Ok(s) => Json(s).into_response(),
        Err(e) => refuse(
            StatusCode::BAD_GATEWAY,
            state.gateway.redactor.redact(&e.message).into_owned(),
        ),
    }
}

/// Forget a connector's downstream tokens and pending consent.
pub(crate) async fn connection_deauthorize(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
) -> Response {
    let oauth = match oauth_of(&state, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    match oauth.forget().await {
        Ok(n) => {
            tracing::info!(operator = %signed.0.name, connector = %id, "operator removed a downstream authorization");
            Json(json!({ "removed": n })).into_response()
        }
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

// ---- credentials ------------------------------------------------------

pub(crate) async fn credentials(State(state): State<AppState>, _: Signed) -> Response {
    let g = &state.gateway;
    match credential_admin::slot_states(&g.config, g.store.as_ref(), g.keys.location()).await {
        Ok((slots, _)) => Json(json!({ "credentials": slots })).into_response(),
        Err(e) => store_failed(&e),
    }
}

#[derive(Deserialize)]
struct SetValues {
    values: std::collections::BTreeMap<String, String>,
}

pub(crate) async fn credential_put(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    let req: SetValues = match body(&bytes) {
        Ok(r) => r,
        Err(res) => return res,
    };
    let g = &state.gateway;
    let values: Vec<(String, Secret)> = req
        .values
        .into_iter()
        .map(|(f, v)| (f, Secret::new(v)))
        .collect();
    let fields: Vec<&str> = values.iter().map(|(f, _)| f.as_str()).collect();
    match credential_admin::set(&g.config, g.store.clone(), g.keys.location(), &id, &values).await {
        Ok(outcome) => {
            tracing::info!(operator = %signed.0.name, connector = %id, fields = ?fields, "operator set a credential");
            if outcome.created_key {
                tracing::warn!(
                    "created a new vault key in {} (mode 0600); back it up: without it the stored credentials cannot be read",
                    g.keys.location().file.display()
                );
            }
            slot_view(&state, &id).await
        }
        Err(e) => admin_failed(&e),
    }
}

async fn slot_view(state: &AppState, id: &str) -> Response {
    let g = &state.gateway;
    match credential_admin::slot_states(&g.config, g.store.as_ref(), g.keys.location()).await {
        Ok((slots, _)) => match slots.into_iter().find(|s| s.connector == id) {
            Some(s) => Json(s).into_response(),
            None => refuse(StatusCode::NOT_FOUND, "no such credential slot"),
        },
        Err(e) => store_failed(&e),
    }
}

pub(crate) async fn credential_delete(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
) -> Response {
    let g = &state.gateway;
    if let Err(e) = credential_admin::slot_of(&g.config, &id) {
        return admin_failed(&e);
    }
    match g.store.vault_delete(&id).await {
        Ok(n) => {
            tracing::info!(operator = %signed.0.name, connector = %id, fields = n, "operator removed a credential");
            Json(json!({ "removed": n })).into_response()
        }
        Err(e) => store_failed(&e),
    }
}

pub(crate) async fn credential_test(
    State(state): State<AppState>,
    _: Signed,
    Path(id): Path<String>,
) -> Response {
    let g = &state.gateway;
    match credential_admin::test(&g.config, g.store.clone(), g.keys.location(), &id).await {
        Ok(Ok(what)) => Json(json!({ "ok": true, "detail": what })).into_response(),
        Ok(Err(why)) => Json(json!({ "ok": false, "detail": why })).into_response(),
        Err(e) => admin_failed(&e),
    }
}

// ---- tokens -----------------------------------------------------------

fn token_view(t: &AccessTokenRow, now: i64) -> Value {
    json!({
        "id": t.id, "name": t.name, "status": access_tokens::status(t, now),
        "createdAtMs": t.created_at_ms, "expiresAtMs": t.expires_at_ms,
        "revokedAtMs": t.revoked_at_ms,
    })
}

pub(crate) async fn tokens(State(state): State<AppState>, _: Signed) -> Response {
    let now = now_ms();
    match state.gateway.store.token_list().await {
        Ok(rows) => {
            let list: Vec<Value> = rows.iter().rev().map(|t| token_view(t, now)).collect();
            Json(json!({ "tokens": list })).into_response()
        }
        Err(e) => store_failed(&e),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewToken {
    name: String,
    expires_in_days: Option<i64>,
}

pub(crate) async fn token_create(
    State(state): State<AppState>,
    signed: Signed,
    bytes: Bytes,
) -> Response {
    let req: NewToken = match body(&bytes) {
        Ok(r) => r,
        Err(res) => return res,
    };
    let now = now_ms();
    let expires = match req.expires_in_days {
        None => None,
        Some(d) if (1..=MAX_TOKEN_DAYS).contains(&d) => Some(now + d * 86_400_000),
        Some(_) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!(
                    "expiresInDays must be between 1 and {MAX_TOKEN_DAYS}, or null for no expiry"
                ),
            );
        }
    };
    let issued = match access_tokens::issue(&req.name, now, expires) {
        Ok(i) => i,
        Err(why) => return refuse(StatusCode::BAD_REQUEST, why),
    };
    match state.gateway.store.token_insert(&issued.row).await {
        Ok(()) => {}
        Err(StoreError::Conflict(m)) => return refuse(StatusCode::CONFLICT, m),
        Err(e) => return store_failed(&e),
    }
    tracing::info!(operator = %signed.0.name, token = %issued.row.id, name = %issued.row.name, "operator issued an access token");
    Json(json!({
        "id": issued.row.id, "name": issued.row.name,
        "token": issued.token.expose(), "expiresAtMs": issued.row.expires_at_ms,
    }))
    .into_response()
}

#[derive(Deserialize)]
struct Rename {
    name: String,
}

/// Token routes take ids only (`tok_…`); the store's revoke also matches
/// names, which the UI never means.
fn token_id(id: &str) -> Result<&str, Response> {
    if id.starts_with("tok_") {
        Ok(id)
    } else {
        Err(refuse(
            StatusCode::NOT_FOUND,
            "token routes take a token id (tok_…)",
        ))
    }
}

pub(crate) async fn token_rename(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    let id = match token_id(&id) {
        Ok(id) => id,
        Err(res) => return res,
    };
    let req: Rename = match body(&bytes) {
        Ok(r) => r,
        Err(res) => return res,
    };
    if let Err(why) = access_tokens::check_name(&req.name) {
        return refuse(StatusCode::BAD_REQUEST, why);
    }
    match state.gateway.store.token_rename(id, &req.name).await {
        Ok(Some(t)) => {
            tracing::info!(operator = %signed.0.name, token = %t.id, name = %t.name, "operator renamed an access token");
            Json(token_view(&t, now_ms())).into_response()
        }
        Ok(None) => refuse(
            StatusCode::NOT_FOUND,
            format!("there is no live token {id} (a revoked token keeps its name)"),
        ),
        Err(StoreError::Conflict(m)) => refuse(StatusCode::CONFLICT, m),
        Err(e) => store_failed(&e),
    }
}

pub(crate) async fn token_revoke(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
) -> Response {
    let id = match token_id(&id) {
        Ok(id) => id,
        Err(res) => return res,
    };
    let now = now_ms();
    match state.gateway.store.token_revoke(id, now).await {
        Ok(Some(t)) if t.id == id => {
            tracing::info!(operator = %signed.0.name, token = %t.id, name = %t.name, "operator revoked an access token");
            Json(token_view(&t, now)).into_response()
        }
        Ok(_) => refuse(
            StatusCode::NOT_FOUND,
            format!("there is no token {id} that is not already revoked"),
        ),
        Err(e) => store_failed(&e),
    }
}

// ---- approvals --------------------------------------------------------

#[derive(Deserialize)]
pub(crate) struct ApprovalsQuery {
    all: Option<bool>,
}

pub(crate) async fn approvals(
    State(state): State<AppState>,
    _: Signed,
    Query(q): Query<ApprovalsQuery>,
) -> Response {
    let all = q.all.unwrap_or(false);
    let now = now_ms();
    match state.gateway.store.approval_list(!all, MAX_APPROVALS).await {
        Ok(rows) => {
            let list: Vec<Value> = rows.iter().map(|r| approval_view(r, now)).collect();
            Json(json!({ "approvals": list })).into_response()
        }
        Err(e) => store_failed(&e),
    }
}

#[derive(Deserialize)]
struct Decide {
    decision: String,
}

pub(crate) async fn approval_decide(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    let req: Decide = match body(&bytes) {
        Ok(r) => r,
        Err(res) => return res,
    };
    let decision = match req.decision.as_str() {
        "approve" => ApprovalDecision::AllowedOnce,
        "reject" => ApprovalDecision::Rejected,
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "decision must be \"approve\" or \"reject\"",
            );
        }
    };
    let store = &state.gateway.store;
    let now = now_ms();
    match store
        .approval_decide(&id, decision, &signed.actor(), now, true)
        .await
    {
        Ok(Some(r)) => {
            tracing::info!(operator = %signed.0.name, approval = %r.id, decision = decision.as_str(), "operator answered an approval question");
            Json(approval_view(&r, now)).into_response()
        }
        Ok(None) => match store.approval_get(&id).await {
            Ok(None) => refuse(
                StatusCode::NOT_FOUND,
                format!("there is no approval question {}", clamp_text(&id, 64)),
            ),
            Ok(Some(r)) if !r.is_pending() => refuse(
                StatusCode::CONFLICT,
                format!(
                    "{} was already decided: {} by {}",
                    r.id,
                    r.status,
                    r.decided_by.as_deref().unwrap_or("?")
                ),
            ),
            Ok(Some(r)) => refuse(
                StatusCode::CONFLICT,
                format!(
                    "{} has expired (nobody answered in time); the caller got approval_unavailable",
                    r.id
                ),
            ),
            Err(e) => store_failed(&e),
        },
        Err(e) => store_failed(&e),
    }
}

// ---- activity ---------------------------------------------------------

#[derive(Deserialize)]
pub(crate) struct ActivityParams {
    limit: Option<usize>,
    before: Option<String>,
    connector: Option<String>,
    outcome: Option<String>,
    source: Option<String>,
}

pub(crate) async fn activity(
    State(state): State<AppState>,
    _: Signed,
    Query(p): Query<ActivityParams>,
) -> Response {
    let limit = p.limit.unwrap_or(ACTIVITY_PAGE).clamp(1, MAX_ACTIVITY_PAGE);
    let before = match p.before.as_deref().filter(|b| !b.is_empty()) {
        None => None,
        Some(b) => match b
            .split_once(':')
            .and_then(|(ms, id)| ms.parse::<i64>().ok().map(|ms| (ms, id.to_owned())))
        {
            Some(c) => Some(c),
            None => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "before is not a cursor this API gave",
                );
            }
        },
    };
    let nonempty = |v: Option<String>| v.filter(|s| !s.is_empty());
    let outcome = match nonempty(p.outcome) {
        None => None,
        Some(o) => match Outcome::parse(&o) {
            Some(o) => Some(o),
            None => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "outcome must be one of success, error, timeout, cancelled",
                );
            }
        },
    };
    let source = match nonempty(p.source) {
        None => None,
        Some(s) => match Source::parse(&s) {
            Some(s) => Some(s),
            None => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "source must be one of call_tool, call_destructive_tool, execute_code",
                );
            }
        },
    };
    let query = ActivityQuery {
        limit,
        before,
        since_ms: None,
        connector: nonempty(p.connector),
        outcome,
        source,
    };
    match state.gateway.store.activity_list(&query).await {
        Ok(events) => {
            let next = (events.len() == limit)
                .then(|| {
                    events
                        .last()
                        .map(|e| format!("{}:{}", e.occurred_at_ms, e.id))
                })
                .flatten();
            Json(json!({ "events": events, "next": next })).into_response()
        }
        Err(e) => store_failed(&e),
    }
}
