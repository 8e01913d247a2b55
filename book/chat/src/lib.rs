//! The one OpenAI-compatible HTTP client of the workspace: the translation proxy's
//! upstream (`lorebank serve --upstream`) and the model the book's batch jobs ask
//! (`lorebank extract --model-url`) are both an [`Endpoint`].
//!
//! It owns reaching an endpoint: the URL (`http://host:port/v1`,
//! `https://host/v1`), its credential (sent as `Authorization: Bearer`, never printed
//! by `Debug`), TLS (rustls with the ring provider, through tokio-rustls: HTTP/1.1
//! with ALPN `http/1.1`, the URL's host as the server name, trusting the system's root
//! certificates and those of an extra PEM file), the connect timeout and the wait for
//! an answer. One request is one connection.
//!
//! It must not know a book, a prompt or what an answer means: the proxy streams the
//! response it gets from [`Endpoint::send`]; a batch job reads the whole body from
//! [`Endpoint::post`] and parses it itself. It reads no file and no environment
//! variable: the caller reads the key and the certificates and hands them over.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method};
use http_body_util::{BodyExt, Full};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

/// The longest wait for a TCP connection and, for `https`, its handshake.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The flags (or settings) an endpoint was configured by, named in its errors.
#[derive(Clone, Copy, Debug)]
pub struct Flags {
    /// What the endpoint is called in errors (`upstream`, `model endpoint`).
    pub noun: &'static str,
    /// The URL's (`--upstream`).
    pub url: &'static str,
    /// The extra certificates' (`--upstream-ca`).
    pub ca: &'static str,
    /// Where the key is read from (`--upstream-key-env or --upstream-key-file`).
    pub key: &'static str,
}

/// Why a request got no usable answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// No connection, a refused certificate, a broken exchange.
    #[error("{0}")]
    Unavailable(String),
    /// No answer (or no next piece of it) within the wait.
    #[error("the {noun} {authority} did not answer within {:.1} s", after.as_secs_f64())]
    TimedOut {
        /// [`Flags::noun`].
        noun: &'static str,
        /// `host:port`.
        authority: String,
        /// The wait.
        after: Duration,
    },
    /// An answer longer than the caller's limit.
    #[error("the {noun} {authority}'s answer is longer than {limit} bytes")]
    TooLarge {
        /// [`Flags::noun`].
        noun: &'static str,
        /// `host:port`.
        authority: String,
        /// The limit.
        limit: usize,
    },
}

/// Certificates to trust besides the system's: the file's name for errors and its
/// PEM text.
pub struct ExtraCa<'a> {
    pub name: &'a str,
    pub pem: &'a [u8],
}

/// An OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct Endpoint {
    /// `host:port`, what is connected to.
    authority: String,
    /// The `Host` header: the URL's authority as written.
    host: String,
    /// TLS, for an `https` endpoint.
    tls: Option<Tls>,
    /// The path the OpenAI routes hang below (`/v1`), without a trailing slash.
    base_path: String,
    /// The credential, when one is configured.
    key: Option<String>,
    /// The flags it was configured by, named in errors.
    flags: Flags,
    /// The longest wait for the response's headers, and between two pieces of its
    /// body.
    pub timeout: Duration,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never printed.
        f.debug_struct("Endpoint")
            .field("authority", &self.authority)
            .field("tls", &self.tls.is_some())
            .field("base_path", &self.base_path)
            .field("key", &self.key.as_ref().map(|_| "(set)"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The TLS of an `https` endpoint: the client's configuration and the server name the
/// certificate must be valid for (also sent as SNI, unless it is an IP address).
#[derive(Clone)]
struct Tls {
    connector: tokio_rustls::TlsConnector,
    name: ServerName<'static>,
}

/// The roots an `https` endpoint's certificate must chain to: the system's
/// (`rustls-native-certs`: the platform's store; on Linux the OpenSSL locations, or
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` when set) and every certificate of `ca`.
fn roots(flags: Flags, url: &str, ca: Option<&ExtraCa>) -> Result<rustls::RootCertStore, String> {
    let mut roots = rustls::RootCertStore::empty();
    // A certificate of the system's that does not parse, or a location that cannot be
    // read, leaves the others; none at all is refused below.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(ca) = ca {
        let (flag, name) = (flags.ca, ca.name);
        let mut added = 0;
        for certificate in CertificateDer::pem_slice_iter(ca.pem) {
            let certificate = certificate.map_err(|error| format!("{flag} {name}: not PEM: {error}"))?;
            roots
                .add(certificate)
                .map_err(|error| format!("{flag} {name}: a certificate that cannot be trusted: {error}"))?;
            added += 1;
        }
        if added == 0 {
            return Err(format!("{flag} {name}: no certificate in it (expected PEM `BEGIN CERTIFICATE` blocks)"));
        }
    }
    if roots.is_empty() {
        return Err(format!(
            "{} {url:?}: no root certificates to trust: none found on this system (install its CA \
             certificates, e.g. the ca-certificates package, or set SSL_CERT_FILE) and no {}",
            flags.url, flags.ca
        ));
    }
    Ok(roots)
}

impl Tls {
    fn new(flags: Flags, url: &str, host: &str, ca: Option<&ExtraCa>) -> Result<Tls, String> {
        // An IPv6 address is written in brackets in a URL, not in a server name.
        let bare = host.strip_prefix('[').and_then(|host| host.strip_suffix(']')).unwrap_or(host);
        let name = ServerName::try_from(bare.to_owned()).map_err(|_| {
            format!("{} {url:?}: {host:?} is not a host name TLS can check a certificate for", flags.url)
        })?;
        // The provider async-nats builds rustls with (ring), named so that the process
        // needs no default provider installed.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| format!("cannot set up TLS: {error}"))?
            .with_root_certificates(roots(flags, url, ca)?)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls { connector: tokio_rustls::TlsConnector::from(Arc::new(config)), name })
    }
}

/// What a failed handshake says: for a refused certificate, what was wrong with it.
fn handshake_failed(flags: Flags, authority: &str, error: &std::io::Error) -> String {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidCertificate(problem)) => {
            let why = match problem {
                rustls::CertificateError::UnknownIssuer => format!(
                    "it is not signed by an authority this server trusts (UnknownIssuer); a private CA is trusted \
                     with {} FILE",
                    flags.ca
                ),
                problem => problem.to_string(),
            };
            format!("the {} {authority}'s TLS certificate was refused: {why}", flags.noun)
        }
        Some(other) => format!("the TLS handshake with the {} {authority} failed: {other}", flags.noun),
        None => format!("the TLS handshake with the {} {authority} failed: {error}", flags.noun),
    }
}

/// A connection to the endpoint: TCP, or TLS over it.
enum Connection {
    Plain(tokio::net::TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
}

/// A whole answer: its status and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Endpoint {
    /// The endpoint at `url` (`http://host:port/v1` or `https://host/v1`), with its
    /// credential; an `https` one trusts the system's roots and those of `ca`. Errors
    /// name the `flags` it was configured by.
    pub fn new(
        flags: Flags,
        url: &str,
        ca: Option<ExtraCa>,
        key: Option<String>,
        timeout: Duration,
    ) -> Result<Endpoint, String> {
        let flag = flags.url;
        let uri: http::Uri = url.parse().map_err(|_| format!("{flag} {url:?}: not a URL"))?;
        let (https, default_port) = match uri.scheme_str() {
            Some("http") => (false, 80),
            Some("https") => (true, 443),
            _ => return Err(format!("{flag} {url:?}: expected http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH")),
        };
        let authority = uri.authority().ok_or_else(|| format!("{flag} {url:?}: no host"))?;
        if authority.as_str().contains('@') {
            return Err(format!(
                "{flag}: a user or password in the URL is not allowed; the key is read from {}",
                flags.key
            ));
        }
        let host = authority.as_str().to_owned();
        let authority = match authority.port_u16() {
            Some(_) => authority.to_string(),
            None => format!("{}:{default_port}", authority.host()),
        };
        if uri.query().is_some() {
            return Err(format!("{flag} {url:?}: a query is not allowed"));
        }
        let base_path = uri.path().trim_end_matches('/').to_owned();
        if let Some(key) = &key {
            if key.is_empty() || HeaderValue::from_str(&format!("Bearer {key}")).is_err() {
                return Err(format!("the key ({}) is empty or not a valid header value", flags.key));
            }
        }
        let tls = match (https, ca) {
            (true, ca) => Some(Tls::new(flags, url, uri.host().unwrap_or_default(), ca.as_ref())?),
            (false, Some(ca)) => {
                return Err(format!("{} {}: the {} {url:?} is not https", flags.ca, ca.name, flags.noun))
            }
            (false, None) => None,
        };
        Ok(Endpoint { authority, host, tls, base_path, key, flags, timeout })
    }

    /// `host:port`.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// Sends one request: connects (within [`CONNECT_TIMEOUT`]) and waits for the
    /// response's headers (within `timeout`). The body is the caller's to read.
    pub async fn send(
        &self,
        method: Method,
        route: &str,
        body: Option<Bytes>,
    ) -> Result<http::Response<hyper::body::Incoming>, Failure> {
        let connect_within = CONNECT_TIMEOUT.min(self.timeout);
        let connect = async {
            let stream = tokio::net::TcpStream::connect(self.authority.as_str()).await.map_err(|error| {
                Failure::Unavailable(format!("cannot connect to the {} {}: {error}", self.flags.noun, self.authority))
            })?;
            let _ = stream.set_nodelay(true);
            match &self.tls {
                None => Ok(Connection::Plain(stream)),
                Some(tls) => tls
                    .connector
                    .connect(tls.name.clone(), stream)
                    .await
                    .map(|stream| Connection::Tls(Box::new(stream)))
                    .map_err(|error| Failure::Unavailable(handshake_failed(self.flags, &self.authority, &error))),
            }
        };
        let connection = match tokio::time::timeout(connect_within, connect).await {
            Ok(connection) => connection?,
            Err(_) => return Err(self.timed_out(connect_within)),
        };
        let exchange = async {
            match connection {
                Connection::Plain(stream) => self.exchange(stream, method, route, body).await,
                Connection::Tls(stream) => self.exchange(*stream, method, route, body).await,
            }
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(self.timed_out(self.timeout)),
        }
    }

    /// `POST`s `body` (JSON) to `route` and reads the whole answer, each piece within
    /// `timeout`, refusing one longer than `limit` bytes. Any status is an answer.
    pub async fn post(&self, route: &str, body: Vec<u8>, limit: usize) -> Result<Answer, Failure> {
        let response = self.send(Method::POST, route, Some(Bytes::from(body))).await?;
        let status = response.status().as_u16();
        let mut incoming = response.into_body();
        let mut bytes = Vec::new();
        loop {
            let frame = match tokio::time::timeout(self.timeout, incoming.frame()).await {
                Err(_) => return Err(self.timed_out(self.timeout)),
                Ok(None) => break,
                Ok(Some(Err(error))) => {
                    return Err(Failure::Unavailable(format!(
                        "the {} {}'s answer was cut: {error}",
                        self.flags.noun, self.authority
                    )))
                }
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > limit {
                    return Err(Failure::TooLarge { noun: self.flags.noun, authority: self.authority.clone(), limit });
                }
                bytes.extend_from_slice(&data);
            }
        }
        Ok(Answer { status, body: bytes })
    }

    /// [`Endpoint::post`] from synchronous code: on a runtime of its own, on this
    /// thread (so not from inside an async task).
    pub fn post_blocking(&self, route: &str, body: Vec<u8>, limit: usize) -> Result<Answer, Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| Failure::Unavailable(format!("cannot start the client's runtime: {error}")))?;
        runtime.block_on(self.post(route, body, limit))
    }

    fn timed_out(&self, after: Duration) -> Failure {
        Failure::TimedOut { noun: self.flags.noun, authority: self.authority.clone(), after }
    }

    /// One request over a connection made: HTTP/1.1, the response's headers.
    async fn exchange<S>(
        &self,
        stream: S,
        method: Method,
        route: &str,
        body: Option<Bytes>,
    ) -> Result<http::Response<hyper::body::Incoming>, Failure>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let unavailable = |what: &str, error: &dyn std::fmt::Display| {
            Failure::Unavailable(format!("the {} {} {what}: {error}", self.flags.noun, self.authority))
        };
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake::<_, Full<Bytes>>(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|error| unavailable("refused the connection", &error))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{}{route}", self.base_path))
            .header(header::HOST, self.host.as_str())
            .header(header::ACCEPT, "application/json, text/event-stream");
        if let Some(key) = &self.key {
            request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let request = match body {
            Some(body) => request.header(header::CONTENT_TYPE, "application/json").body(Full::new(body)),
            None => request.body(Full::new(Bytes::new())),
        }
        .map_err(|error| Failure::Unavailable(format!("cannot build the request: {error}")))?;
        sender.send_request(request).await.map_err(|error| unavailable("failed", &error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: Flags = Flags { noun: "model endpoint", url: "--model-url", ca: "--model-ca", key: "--model-key-env" };

    fn endpoint(url: &str) -> Result<Endpoint, String> {
        Endpoint::new(FLAGS, url, None, None, Duration::from_secs(1))
    }

    #[test]
    fn urls_are_read_or_refused_naming_the_flag() {
        let plain = endpoint("http://127.0.0.1:8080/v1/").unwrap();
        assert_eq!((plain.authority(), plain.base_path.as_str(), plain.tls.is_none()), ("127.0.0.1:8080", "/v1", true));
        assert_eq!(endpoint("http://example.org/v1").unwrap().authority(), "example.org:80");
        for (url, says) in [
            ("ftp://h/v1", "expected http://"),
            ("http://u:p@h/v1", "a user or password"),
            ("http://h/v1?x=1", "a query"),
            ("not a url", "not a URL"),
        ] {
            let error = endpoint(url).unwrap_err();
            assert!(error.starts_with("--model-url") && error.contains(says), "{url}: {error}");
        }
        let error = Endpoint::new(FLAGS, "http://h/v1", None, Some("a\nb".into()), Duration::from_secs(1)).unwrap_err();
        assert!(error.contains("--model-key-env"), "{error}");
        let ca = ExtraCa { name: "ca.pem", pem: b"" };
        let error = Endpoint::new(FLAGS, "http://h/v1", Some(ca), None, Duration::from_secs(1)).unwrap_err();
        assert!(error.starts_with("--model-ca ca.pem: the model endpoint"), "{error}");
    }

    #[test]
    fn the_key_is_never_printed() {
        let endpoint = Endpoint::new(FLAGS, "http://h/v1", None, Some("sk-secret".into()), Duration::from_secs(1));
        let shown = format!("{:?}", endpoint.unwrap());
        assert!(!shown.contains("sk-secret") && shown.contains("(set)"), "{shown}");
    }

    #[test]
    fn a_closed_port_is_unavailable_and_a_silent_one_times_out() {
        // A port nothing listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let closed = endpoint(&format!("http://127.0.0.1:{port}/v1")).unwrap();
        assert!(matches!(closed.post_blocking("/chat/completions", b"{}".to_vec(), 10), Err(Failure::Unavailable(_))));
        // A listener that accepts and never answers.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", silent.local_addr().unwrap());
        let endpoint = Endpoint::new(FLAGS, &url, None, None, Duration::from_millis(200)).unwrap();
        let failure = endpoint.post_blocking("/chat/completions", b"{}".to_vec(), 10).unwrap_err();
        assert!(matches!(failure, Failure::TimedOut { .. }), "{failure:?}");
        assert!(failure.to_string().contains("did not answer within 0.2 s"), "{failure}");
    }
}
