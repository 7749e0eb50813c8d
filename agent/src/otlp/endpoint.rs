//! The collector's URL: `otlp=`'s value and the OpenTelemetry endpoint
//! variables, parsed. Apart from the push's configuration so that the
//! option parser can check `otlp=` without depending on it.

use std::fmt;

/// The default collector (the OTLP/HTTP port on this host).
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:4318";
/// Where a base URL's profiles go.
pub const PROFILES_PATH: &str = "/v1development/profiles";
/// A parsed `http://` or `https://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub https: bool,
    /// As written (an IPv6 address without its brackets).
    pub host: String,
    pub port: u16,
    /// Starts with `/`.
    pub path: String,
}

impl Endpoint {
    /// Parses `url`; `base`: a base URL, to which [`PROFILES_PATH`] is
    /// appended (an `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT` is taken as is).
    pub fn parse(url: &str, base: bool) -> Result<Endpoint, UrlError> {
        let (https, rest) = if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else {
            return Err(UrlError(
                "the URL must start with http:// or https://".into(),
            ));
        };
        if url.chars().any(|c| c.is_control() || c == ' ') {
            return Err(UrlError(
                "spaces and control characters are not allowed in the URL".into(),
            ));
        }
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(UrlError("user information in the URL is not supported; give credentials in OTEL_EXPORTER_OTLP_HEADERS".into()));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| UrlError("an IPv6 address lacks its ']'".into()))?;
            (h, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(UrlError("the URL has no host".into()));
        }
        let port = match port {
            None => {
                if https {
                    443
                } else {
                    80
                }
            }
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| UrlError(format!("bad port '{p}'")))?,
        };
        if path.contains(['?', '#']) {
            return Err(UrlError(
                "a query or fragment is not supported in the URL".into(),
            ));
        }
        let mut path = path.trim_end_matches('/').to_owned();
        if base {
            path.push_str(PROFILES_PATH);
        } else if path.is_empty() {
            path.push('/');
        }
        Ok(Endpoint {
            https,
            host: host.to_owned(),
            port,
            path,
        })
    }

    /// `scheme://host:port/path`, for messages.
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{scheme}://{host}:{}{}", self.port, self.path)
    }
}

/// Why a URL is refused: the message says what is wrong with it.
#[derive(Debug)]
pub struct UrlError(String);

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
