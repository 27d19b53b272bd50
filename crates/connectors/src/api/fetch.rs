//! The guarded fetch: the only way an `api` connector talks to the network.
//!
//! - The base URL is fixed; every request URL is built from it and checked to
//!   stay under its path after normalization ([`confine`]).
//! - Redirects are never followed (a 3xx is an error), so a credential never
//!   travels to another origin.
//! - Requests to loopback, private, link-local, metadata and other special
//!   addresses are refused on the **resolved** address: a custom resolver
//!   ([`GuardedResolver`], shared with the downstream OAuth client) checks
//!   what a name resolves to, and the connection is made to exactly those
//!   checked addresses (no second lookup to rebind). IP-literal hosts,
//!   which skip the resolver, are checked before sending. A connector with
//!   `allow_private_network = true` lifts this for itself only.
//! - No proxy from the environment is used (a proxy would resolve the name
//!   itself, out of the guard's sight).
//! - The response body is capped: a declared `Content-Length` over the cap is
//!   refused before reading, and a streamed body is cut at the cap.
//!
//! Architecture invariant: nothing here knows about tools or arguments, and
//! no error built here contains a header value or a body.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forbidden {
    Loopback,
    Private,
    LinkLocal,
    Metadata,
    Unspecified,
    Broadcast,
    SharedAddressSpace,
    Multicast,
    Reserved,
}

impl fmt::Display for Forbidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Forbidden::Loopback => "loopback",
            Forbidden::Private => "private",
            Forbidden::LinkLocal => "link-local",
            Forbidden::Metadata => "cloud metadata",
            Forbidden::Unspecified => "unspecified",
            Forbidden::Broadcast => "broadcast",
            Forbidden::SharedAddressSpace => "shared (CGNAT)",
            Forbidden::Multicast => "multicast",
            Forbidden::Reserved => "reserved",
        })
    }
}

/// Classify an address; `None` means an ordinary public address.
pub fn classify(ip: IpAddr) -> Option<Forbidden> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Forbidden> {
    let o = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        // AWS/GCP/Azure/OpenStack, and Alibaba Cloud's metadata service.
        return Some(Forbidden::Metadata);
    }
    if ip.is_unspecified() {
        return Some(Forbidden::Unspecified);
    }
    if ip.is_broadcast() {
        return Some(Forbidden::Broadcast);
    }
    if ip.is_loopback() {
        return Some(Forbidden::Loopback);
    }
    if ip.is_private() {
        return Some(Forbidden::Private);
    }
    if ip.is_link_local() {
        return Some(Forbidden::LinkLocal);
    }
    if o[0] == 100 && (o[1] & 0xc0) == 64 {
        return Some(Forbidden::SharedAddressSpace);
    }
    if ip.is_multicast() {
        return Some(Forbidden::Multicast);
    }
    // "This network" 0/8, IETF protocol assignments 192.0.0/24, benchmarking
    // 198.18/15, and the 240/4 block.
    if o[0] == 0
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        || (o[0] == 198 && (o[1] & 0xfe) == 18)
        || o[0] >= 240
    {
        return Some(Forbidden::Reserved);
    }
    None
}

fn classify_v6(ip: Ipv6Addr) -> Option<Forbidden> {
    // Forms that embed an IPv4 address are judged by that address:
    // IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64
    // 64:ff9b::/96 and 6to4 2002::/16.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let s = ip.segments();
    if s[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_loopback() && !ip.is_unspecified() {
        return classify_v4(Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return classify_v4(Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32));
    }
    if s[0] == 0x2002
        && let Some(f) = classify_v4(Ipv4Addr::from(((s[1] as u32) << 16) | s[2] as u32))
    {
        return Some(f);
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some(Forbidden::Metadata);
    }
    if ip.is_unspecified() {
        return Some(Forbidden::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Forbidden::Loopback);
    }
    if (s[0] & 0xfe00) == 0xfc00 {
        return Some(Forbidden::Private);
    }
    // fe80::/10 link-local, and the deprecated fec0::/10 site-local.
    if (s[0] & 0xffc0) == 0xfe80 || (s[0] & 0xffc0) == 0xfec0 {
        return Some(Forbidden::LinkLocal);
    }
    if ip.is_multicast() {
        return Some(Forbidden::Multicast);
    }
    None
}

/// How close to the gateway an address leads, from far to near. A guard
/// allows addresses up to a limit; `Never` is beyond every limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// The internet.
    Public,
    /// A private network: RFC 1918, shared address space (RFC 6598), IPv6
    /// unique-local.
    Private,
    /// This host.
    Loopback,
    /// Nowhere a request should go, whatever the connector: cloud metadata
    /// services, link-local, unspecified, multicast, broadcast and reserved
    /// ranges (IPv6 forms that embed an IPv4 address judged by it).
    Never,
}

/// Where `ip` leads, by [`classify`].
pub fn reach(ip: IpAddr) -> Reach {
    match classify(ip) {
        None => Reach::Public,
        Some(Forbidden::Private | Forbidden::SharedAddressSpace) => Reach::Private,
        Some(Forbidden::Loopback) => Reach::Loopback,
        Some(_) => Reach::Never,
    }
}

/// May a client limited to `limit` go to an address that reaches `target`?
pub fn within(target: Reach, limit: Reach) -> bool {
    target != Reach::Never && target <= limit
}

/// A refused destination. Carries the host as configured (not caller text)
/// and the address it resolved to.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{host} resolves to {ip}, a {class} address")]
pub struct AddressRefused {
    pub host: String,
    pub ip: IpAddr,
    pub class: Forbidden,
}

#[derive(Debug, thiserror::Error)]
#[error("{host} did not resolve to any address")]
struct NoAddress {
    host: String,
}

/// Resolves with the system resolver, then refuses the whole answer when any
/// address leads closer than the limit (a name that resolves to both a
/// public and a private address is an attack or a mistake; neither is worth
/// half-trusting). The client connects to exactly the addresses it let
/// through, so what was checked is what is reached.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    /// How close a host name may lead.
    names: Reach,
    /// How close `localhost` may lead: it names this host by definition
    /// (RFC 6761), so a client that may reach this host by an IP literal
    /// may reach it by that name too.
    localhost: Reach,
}

impl GuardedResolver {
    /// Public addresses only (an `api` connector without
    /// `allow_private_network`).
    pub fn public() -> GuardedResolver {
        GuardedResolver {
            names: Reach::Public,
            localhost: Reach::Public,
        }
    }

    /// Names may lead up to `names`, `localhost` up to `localhost`.
    pub fn with_limits(names: Reach, localhost: Reach) -> GuardedResolver {
        GuardedResolver { names, localhost }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let limit = if host.eq_ignore_ascii_case("localhost") {
            self.localhost
        } else {
            self.names
        };
        Box::pin(resolve_checked(host, limit))
    }
}

async fn resolve_checked(host: String, limit: Reach) -> Result<Addrs, BoxError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
    if addrs.is_empty() {
        return Err(Box::new(NoAddress { host }));
    }
    if let Some((ip, class)) = addrs.iter().find_map(|a| {
        let ip = a.ip();
        classify(ip)
            .filter(|_| !within(reach(ip), limit))
            .map(|c| (ip, c))
    }) {
        return Err(Box::new(AddressRefused { host, ip, class }));
    }
    Ok(Box::new(addrs.into_iter()))
}

/// A request the fetch sends as is; the URL comes from [`GuardedFetch::url`].
pub struct Prepared {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<Vec<u8>>,
}

/// A response with its body read (under the cap).
pub struct Fetched {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("refused: {0}")]
    Refused(AddressRefused),
    #[error("the request path would leave the base URL's path")]
    Escapes,
    #[error("the API answered with a redirect (HTTP {0}), which connecta does not follow")]
    Redirect(u16),
    #[error("the response is larger than max_response_bytes ({limit} bytes)")]
    TooLarge { limit: usize, declared: Option<u64> },
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("the request timed out")]
    Timeout,
    #[error("the request failed: {0}")]
    Other(String),
}

/// The guarded HTTP client of one `api` connector.
pub struct GuardedFetch {
    client: reqwest::Client,
    base: Url,
    allow_private: bool,
    max_response_bytes: usize,
}

/// Error bodies (non-2xx) are read up to this much, for a short excerpt.
const MAX_ERROR_BODY: usize = 16 * 1024;

impl GuardedFetch {
    pub fn new(
        base_url: &str,
        allow_private: bool,
        max_response_bytes: usize,
    ) -> Result<GuardedFetch, String> {
        let base = Url::parse(base_url).map_err(|e| format!("base_url does not parse: {e}"))?;
        if !matches!(base.scheme(), "http" | "https") || base.host().is_none() {
            return Err("base_url must be an http(s) URL with a host".into());
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err("base_url must not carry credentials; use a credential slot".into());
        }
        let mut builder = reqwest::Client::builder()
            .redirect(Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(60))
            .user_agent(concat!("connecta/", env!("CARGO_PKG_VERSION")));
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(GuardedResolver::public()));
        }
        let client = builder
            .build()
            .map_err(|e| format!("could not build the HTTP client: {e}"))?;
        Ok(GuardedFetch {
            client,
            base,
            allow_private,
            max_response_bytes,
        })
    }

    pub fn base(&self) -> &Url {
        &self.base
    }

    /// The URL for `path` (already percent-encoded, starting with `/`,
    /// relative to the base path) with `query`, confined under the base.
    pub fn url(&self, path: &str, query: &[(String, String)]) -> Result<Url, FetchError> {
        let mut url = self.base.clone();
        let base_path = self.base.path().trim_end_matches('/');
        url.set_path(&format!("{base_path}{path}"));
        url.set_query(None);
        url.set_fragment(None);
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        confine(&self.base, &url)?;
        Ok(url)
    }

    /// Refuse a URL outside the base, or a forbidden IP-literal host (the
    /// resolver is not consulted for literals). Sends nothing.
    pub fn check_destination(&self, url: &Url) -> Result<(), FetchError> {
        confine(&self.base, url)?;
        if self.allow_private {
            return Ok(());
        }
        let host = url.host_str().unwrap_or_default();
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        if let Some(ip) = literal
            && let Some(class) = classify(ip)
        {
            return Err(FetchError::Refused(AddressRefused {
                host: host.to_owned(),
                ip,
                class,
            }));
        }
        Ok(())
    }

    /// Send one request and read its body under the cap. Never follows a
    /// redirect; refuses a forbidden destination before connecting.
    pub async fn send(&self, req: Prepared) -> Result<Fetched, FetchError> {
        self.check_destination(&req.url)?;
        let mut builder = self
            .client
            .request(req.method, req.url)
            .headers(req.headers);
        if let Some(body) = req.body {
            builder = builder.body(body);
        }
        let resp = builder.send().await.map_err(from_reqwest)?;
        let status = resp.status();
        if status.is_redirection() {
            return Err(FetchError::Redirect(status.as_u16()));
        }
        let cap = if status.is_success() {
            self.max_response_bytes
        } else {
            self.max_response_bytes.min(MAX_ERROR_BODY)
        };
        let headers = resp.headers().clone();
        let body = match read_capped(resp, cap).await {
            Ok(b) => b,
            // An error answer's body is only an excerpt: cut, not refused.
            Err(FetchError::TooLarge { .. }) if !status.is_success() => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(Fetched {
            status,
            headers,
            body,
        })
    }
}

/// Same origin as `base`, and a path at or under the base path with no dot
/// segments left (the URL parser has already resolved them; this is the
/// re-check after normalization).
pub fn confine(base: &Url, url: &Url) -> Result<(), FetchError> {
    if url.scheme() != base.scheme()
        || url.host_str() != base.host_str()
        || url.port_or_known_default() != base.port_or_known_default()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(FetchError::Escapes);
    }
    let base_path = base.path().trim_end_matches('/');
    let path = url.path();
    let under = path == base_path
        || path
            .strip_prefix(base_path)
            .is_some_and(|rest| rest.starts_with('/'));
    if !under {
        return Err(FetchError::Escapes);
    }
    Ok(())
}

/// Read a body, refusing a declared length over `cap` before reading and
/// cutting a streamed body at `cap`.
async fn read_capped(mut resp: reqwest::Response, cap: usize) -> Result<Vec<u8>, FetchError> {
    if let Some(declared) = resp.content_length()
        && declared > cap as u64
    {
        return Err(FetchError::TooLarge {
            limit: cap,
            declared: Some(declared),
        });
    }
    let mut body = Vec::with_capacity(resp.content_length().map_or(8 * 1024, |l| l as usize));
    while let Some(chunk) = resp.chunk().await.map_err(from_reqwest)? {
        if body.len() + chunk.len() > cap {
            return Err(FetchError::TooLarge {
                limit: cap,
                declared: None,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Map a reqwest failure by walking its causes for our own refusal first.
fn from_reqwest(e: reqwest::Error) -> FetchError {
    // The URL can carry a query-placed credential: never let it into text.
    let e = e.without_url();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(cur) = source {
        if let Some(refused) = cur.downcast_ref::<AddressRefused>() {
            return FetchError::Refused(refused.clone());
        }
        source = cur.source();
    }
    if e.is_timeout() {
        return FetchError::Timeout;
    }
    // reqwest's messages name the URL; keep only the innermost cause, which
    // describes the network failure (connection refused, DNS failure…).
    let mut inner: &(dyn std::error::Error + 'static) = &e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    let why = inner.to_string();
    if e.is_connect() || e.is_request() {
        FetchError::Connect(why)
    } else {
        FetchError::Other(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn forbidden_addresses_are_classified_including_mapped_ipv6() {
        let cases = [
            ("127.0.0.1", Forbidden::Loopback),
            ("127.8.9.10", Forbidden::Loopback),
            ("10.1.2.3", Forbidden::Private),
            ("172.16.0.1", Forbidden::Private),
            ("172.31.255.254", Forbidden::Private),
            ("192.168.1.1", Forbidden::Private),
            ("169.254.1.1", Forbidden::LinkLocal),
            ("169.254.169.254", Forbidden::Metadata),
            ("0.0.0.0", Forbidden::Unspecified),
            ("255.255.255.255", Forbidden::Broadcast),
            ("100.64.0.1", Forbidden::SharedAddressSpace),
            ("100.127.255.254", Forbidden::SharedAddressSpace),
            ("224.0.0.1", Forbidden::Multicast),
            ("0.1.2.3", Forbidden::Reserved),
            ("240.0.0.1", Forbidden::Reserved),
            ("::1", Forbidden::Loopback),
            ("::", Forbidden::Unspecified),
            ("fc00::1", Forbidden::Private),
            ("fd12:3456::1", Forbidden::Private),
            ("fd00:ec2::254", Forbidden::Metadata),
            ("fe80::1", Forbidden::LinkLocal),
            ("ff02::1", Forbidden::Multicast),
            ("::ffff:127.0.0.1", Forbidden::Loopback),
            ("::ffff:10.0.0.1", Forbidden::Private),
            ("::ffff:169.254.169.254", Forbidden::Metadata),
            ("::ffff:192.168.0.1", Forbidden::Private),
            ("::127.0.0.1", Forbidden::Loopback),
            ("64:ff9b::a9fe:a9fe", Forbidden::Metadata),
            ("2002:7f00:1::", Forbidden::Loopback),
        ];
        for (a, want) in cases {
            assert_eq!(classify(ip(a)), Some(want), "{a}");
        }
        for ok in [
            "93.184.215.14",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2002:808:808::",
        ] {
            assert_eq!(classify(ip(ok)), None, "{ok}");
        }
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_to_loopback() {
        let name: Name = "localhost".parse().expect("a name");
        let err = match GuardedResolver::public().resolve(name).await {
            Ok(_) => panic!("localhost must be refused"),
            Err(e) => e,
        };
        let refused = err
            .downcast_ref::<AddressRefused>()
            .expect("an address refusal");
        assert_eq!(refused.class, Forbidden::Loopback);
        assert_eq!(refused.host, "localhost");
    }

    #[test]
    fn confinement_rejects_other_origins_and_paths_outside_the_base() {
        let base = Url::parse("https://api.example.com/v1").expect("url");
        let ok = Url::parse("https://api.example.com/v1/items/3").expect("url");
        assert!(confine(&base, &ok).is_ok());
        for bad in [
            "https://api.example.com/v2/items",
            "https://api.example.com/v1evil",
            "https://evil.example.com/v1/items",
            "http://api.example.com/v1/items",
            "https://api.example.com:8443/v1/items",
            "https://user@api.example.com/v1/items",
        ] {
            let u = Url::parse(bad).expect("url");
            assert!(confine(&base, &u).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_are_built_under_the_base_and_dot_segments_cannot_climb_out() {
        let f = GuardedFetch::new("https://api.example.com/v1/", false, 1024).expect("fetch");
        let u = f
            .url("/items/a%2Fb", &[("q".into(), "x y&z".into())])
            .expect("url");
        assert_eq!(
            u.as_str(),
            "https://api.example.com/v1/items/a%2Fb?q=x+y%26z"
        );
        // The URL parser resolves dot segments (also %2e); the re-check then
        // sees a path outside the base.
        for escape in [
            "/../admin",
            "/%2e%2e/admin",
            "/.%2E/admin",
            "/items/../../admin",
        ] {
            assert!(
                matches!(f.url(escape, &[]), Err(FetchError::Escapes)),
                "{escape}"
            );
        }
        let root = GuardedFetch::new("https://api.example.com", false, 1024).expect("fetch");
        assert_eq!(
            root.url("/x", &[]).expect("url").as_str(),
            "https://api.example.com/x"
        );
    }

    #[test]
    fn base_urls_with_credentials_or_other_schemes_are_refused() {
        assert!(GuardedFetch::new("https://u:p@api.example.com", false, 1).is_err());
        assert!(GuardedFetch::new("ftp://api.example.com", false, 1).is_err());
    }

    #[test]
    fn forbidden_ip_literal_hosts_are_refused_without_sending() {
        for base in [
            "http://127.0.0.1:9",
            "http://10.0.0.1:9",
            "http://172.16.5.4",
            "http://192.168.1.1",
            "http://169.254.169.254",
            "http://100.64.1.1",
            "http://[::1]:9",
            "http://[::ffff:127.0.0.1]:9",
            "http://[::ffff:a9fe:a9fe]",
            "http://[fd00:ec2::254]",
            "http://[fe80::1]",
            "http://0.0.0.0:9",
        ] {
            let f = GuardedFetch::new(base, false, 1024).expect("fetch");
            let url = f.url("/x", &[]).expect("url");
            let err = f.check_destination(&url).expect_err("refused");
            assert!(matches!(err, FetchError::Refused(_)), "{base}: {err}");
            let allowed = GuardedFetch::new(base, true, 1024).expect("fetch");
            assert!(allowed.check_destination(&url).is_ok(), "{base} allowed");
        }
    }

    #[tokio::test]
    async fn send_refuses_a_loopback_literal_before_connecting() {
        // A real listener: a broken guard would reach it.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let f = GuardedFetch::new(&base, false, 1024).expect("fetch");
        let url = f.url("/x", &[]).expect("url");
        let err = f
            .send(Prepared {
                method: Method::GET,
                url,
                headers: HeaderMap::new(),
                body: None,
            })
            .await
            .err()
            .expect("refused");
        assert!(matches!(err, FetchError::Refused(_)), "{err}");
        assert!(listener.accept().is_err(), "nothing connected");
    }

    /// A one-shot raw HTTP server on loopback answering every connection
    /// with `response` (written in pieces, to look streamed).
    async fn serve_raw(response: Vec<u8>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            while let Ok((mut sock, _)) = listener.accept().await {
                let response = response.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = sock.read(&mut buf).await;
                    for piece in response.chunks(4096) {
                        if sock.write_all(piece).await.is_err() {
                            return;
                        }
                    }
                    let _ = sock.shutdown().await;
                });
            }
        });
        format!("http://{addr}")
    }

    async fn get(base: &str, cap: usize) -> Result<Fetched, FetchError> {
        let f = GuardedFetch::new(base, true, cap).expect("fetch");
        let url = f.url("/x", &[]).expect("url");
        f.send(Prepared {
            method: Method::GET,
            url,
            headers: HeaderMap::new(),
            body: None,
        })
        .await
    }

    #[tokio::test]
    async fn a_declared_length_over_the_cap_fails_before_reading() {
        // Declares 1 MB but sends only a few bytes: refusing at once proves
        // the body was never waited for.
        let base = serve_raw(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{}"
                .to_vec(),
        )
        .await;
        let err = get(&base, 1000).await.err().expect("too large");
        assert!(
            matches!(
                err,
                FetchError::TooLarge {
                    declared: Some(1_000_000),
                    limit: 1000
                }
            ),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_streamed_body_is_cut_at_the_cap() {
        let mut resp =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
                .to_vec();
        for _ in 0..64 {
            resp.extend_from_slice(b"400\r\n");
            resp.extend_from_slice(&[b'a'; 0x400]);
            resp.extend_from_slice(b"\r\n");
        }
        resp.extend_from_slice(b"0\r\n\r\n");
        let base = serve_raw(resp).await;
        let err = get(&base, 10_000).await.err().expect("too large");
        assert!(
            matches!(err, FetchError::TooLarge { declared: None, .. }),
            "{err}"
        );
        // The same body under a larger cap is read whole.
        let ok = get(&base, 100_000).await.expect("fits");
        assert_eq!(ok.body.len(), 64 * 1024);
    }

    #[tokio::test]
    async fn redirects_are_never_followed() {
        let base = serve_raw(
            b"HTTP/1.1 302 Found\r\nlocation: http://example.com/\r\ncontent-length: 0\r\n\r\n"
                .to_vec(),
        )
        .await;
        let err = get(&base, 1000).await.err().expect("refused");
        assert!(matches!(err, FetchError::Redirect(302)), "{err}");
    }
}
