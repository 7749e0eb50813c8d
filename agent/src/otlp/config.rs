//! Where and how the push sends: the endpoint, headers, timeout and TLS
//! roots from the options and the OpenTelemetry environment variables
//! (`OTEL_EXPORTER_OTLP_[PROFILES_]ENDPOINT`, `…_HEADERS`, `…_TIMEOUT`,
//! `…_CERTIFICATE`), and the resource's attributes (`service.name` and the
//! process's, then `OTEL_RESOURCE_ATTRIBUTES`). Every value read from the
//! environment or a file is checked and bounded; a bad one is refused with
//! a message naming it, as a bad option is.

pub use super::endpoint::{Endpoint, DEFAULT_ENDPOINT};
use crate::error::AgentError;
use profrj_otlp::{Attribute, Value};
use std::sync::Arc;
use std::time::Duration;

/// One request's whole time, unless `OTEL_EXPORTER_OTLP_TIMEOUT` says.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest CA file read.
const MAX_CA_FILE: u64 = 1 << 20;
/// Headers from the environment: at most this many bytes in all.
const MAX_HEADERS: usize = 8 << 10;

/// Everything the push needs to send.
pub struct Config {
    pub endpoint: Endpoint,
    /// Extra headers (name, value), checked to hold no line breaks.
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
    pub period: Duration,
    /// For https.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub resource: Vec<Attribute>,
}

/// What the process tells about itself (read through JNI by the caller).
pub struct Process {
    pub pid: u32,
    /// `sun.java.command`.
    pub command: Option<String>,
    /// `java.runtime.name`, `java.runtime.version`, and the VM's vendor,
    /// name and version (`process.runtime.description`).
    pub runtime_name: Option<String>,
    pub runtime_version: Option<String>,
    pub runtime_description: Option<String>,
}

/// An environment variable, if set and not empty.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The signal-specific variable, else the general one: (name, value).
fn env_either(suffix: &str) -> Option<(String, String)> {
    for name in [
        format!("OTEL_EXPORTER_OTLP_PROFILES_{suffix}"),
        format!("OTEL_EXPORTER_OTLP_{suffix}"),
    ] {
        if let Some(v) = env(&name) {
            return Some((name, v));
        }
    }
    None
}

impl Config {
    /// The push's configuration for `options`, from the options and the
    /// environment.
    pub fn new(options: &crate::options::Options, process: &Process) -> Result<Config, AgentError> {
        let endpoint = match options.otlp.as_ref().and_then(Option::as_deref) {
            Some(url) => Endpoint::parse(url, true).map_err(|e| bad!("otlp={url}: {e}"))?,
            None => match (
                env("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT"),
                env("OTEL_EXPORTER_OTLP_ENDPOINT"),
            ) {
                (Some(url), _) => Endpoint::parse(url.trim(), false)
                    .map_err(|e| bad!("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT={url}: {e}"))?,
                (None, Some(url)) => Endpoint::parse(url.trim(), true)
                    .map_err(|e| bad!("OTEL_EXPORTER_OTLP_ENDPOINT={url}: {e}"))?,
                (None, None) => Endpoint::parse(DEFAULT_ENDPOINT, true).map_err(|e| bad!("{e}"))?,
            },
        };
        let headers = match env_either("HEADERS") {
            Some((name, v)) => parse_headers(&v).map_err(|e| bad!("{name}: {e}"))?,
            None => Vec::new(),
        };
        let timeout = match env_either("TIMEOUT") {
            Some((name, v)) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|&ms| (1..=600_000).contains(&ms))
                .map(Duration::from_millis)
                .ok_or_else(|| {
                    bad!("{name}={v}: a whole number of milliseconds from 1 to 600000")
                })?,
            None => DEFAULT_TIMEOUT,
        };
        let tls = if endpoint.https {
            Some(tls_config(options.cafile.as_deref())?)
        } else {
            None
        };
        Ok(Config {
            endpoint,
            headers,
            timeout,
            period: options.period,
            tls,
            resource: resource(options.service.as_deref(), process)?,
        })
    }
}

/// `key=value,key=value` with percent-encoded values (the W3C Baggage
/// form the OpenTelemetry variables use).
fn parse_pairs(v: &str, what: &str) -> Result<Vec<(String, String)>, AgentError> {
    let mut out = Vec::new();
    for item in v.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, val) = item
            .split_once('=')
            .ok_or_else(|| bad!("'{item}' is not {what}=value"))?;
        let key = percent_decode(k.trim())?;
        if key.is_empty() {
            return Err(bad!("'{item}' has an empty {what}"));
        }
        out.push((key, percent_decode(val.trim())?));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Result<String, AgentError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad!("bad percent-encoding in '{s}'"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad!("'{s}' is not UTF-8 once decoded"))
}

/// Headers: names are HTTP tokens, values hold no line break.
fn parse_headers(v: &str) -> Result<Vec<(String, String)>, AgentError> {
    if v.len() > MAX_HEADERS {
        return Err(bad!("longer than {MAX_HEADERS} bytes"));
    }
    let pairs = parse_pairs(v, "header")?;
    for (k, val) in &pairs {
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if !k.chars().all(token) {
            return Err(bad!("'{k}' is not a header name"));
        }
        if val.chars().any(|c| c.is_control() && c != '\t') {
            return Err(bad!("the value of '{k}' holds a control character"));
        }
    }
    Ok(pairs)
}

/// The resource: `service.name`, the process's attributes, then
/// `OTEL_RESOURCE_ATTRIBUTES` (which may override all but `service.name`,
/// whose order is `service=`, `OTEL_SERVICE_NAME`, the variable's, the main
/// class or jar).
fn resource(service: Option<&str>, p: &Process) -> Result<Vec<Attribute>, AgentError> {
    let from_env = match env("OTEL_RESOURCE_ATTRIBUTES") {
        Some(v) => {
            parse_pairs(&v, "attribute").map_err(|e| bad!("OTEL_RESOURCE_ATTRIBUTES: {e}"))?
        }
        None => Vec::new(),
    };
    let service = service
        .map(str::to_owned)
        .or_else(|| env("OTEL_SERVICE_NAME"))
        .or_else(|| {
            from_env
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        })
        .or_else(|| p.command.as_deref().and_then(main_name))
        .unwrap_or_else(|| "unknown_service:java".to_owned());
    let mut attrs = vec![
        Attribute::str("service.name", &service),
        Attribute {
            key: "process.pid".into(),
            value: Value::Int(p.pid as i64),
        },
    ];
    for (key, v) in [
        ("process.runtime.name", &p.runtime_name),
        ("process.runtime.version", &p.runtime_version),
        ("process.runtime.description", &p.runtime_description),
    ] {
        if let Some(v) = v {
            attrs.push(Attribute::str(key, v));
        }
    }
    if let Some(h) = host_name() {
        attrs.push(Attribute::str("host.name", &h));
    }
    attrs.push(Attribute::str("telemetry.sdk.name", "profrj"));
    attrs.push(Attribute::str("telemetry.sdk.language", "java"));
    attrs.push(Attribute::str(
        "telemetry.sdk.version",
        env!("CARGO_PKG_VERSION"),
    ));
    for (k, v) in from_env {
        if k == "service.name" {
            continue;
        }
        attrs.retain(|a| a.key != k);
        attrs.push(Attribute::str(&k, &v));
    }
    Ok(attrs)
}

/// The main class, or the jar's file name without `.jar`, of a
/// `sun.java.command`.
fn main_name(command: &str) -> Option<String> {
    let first = command.split_whitespace().next()?;
    let name = match first.strip_suffix(".jar") {
        Some(jar) => jar.rsplit('/').next().unwrap_or(jar),
        None => first,
    };
    (!name.is_empty()).then(|| name.to_owned())
}

fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    (!name.is_empty()).then_some(name)
}

/// rustls with the CA file's roots (`cafile=`, else the certificate
/// variables), else the system's.
fn tls_config(cafile: Option<&str>) -> Result<Arc<rustls::ClientConfig>, AgentError> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    let file = match cafile {
        Some(f) => Some(("cafile".to_owned(), f.to_owned())),
        None => env_either("CERTIFICATE"),
    };
    match file {
        Some((from, path)) => {
            let pem = read_bounded(&path).map_err(|e| bad!("{from}={path}: {e}"))?;
            let mut n = 0;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| bad!("{from}={path}: {e}"))?;
                roots.add(cert).map_err(|e| bad!("{from}={path}: {e}"))?;
                n += 1;
            }
            if n == 0 {
                return Err(bad!("{from}={path}: no PEM certificate in it"));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err(bad!(
                    "https: no CA certificates found on this system (give cafile=PATH)"
                ));
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A file's bytes, at most [`MAX_CA_FILE`].
fn read_bounded(path: &str) -> Result<Vec<u8>, AgentError> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| bad!("{e}"))?;
    let mut buf = Vec::new();
    f.take(MAX_CA_FILE + 1)
        .read_to_end(&mut buf)
        .map_err(|e| bad!("{e}"))?;
    if buf.len() as u64 > MAX_CA_FILE {
        return Err(bad!("larger than {MAX_CA_FILE} bytes"));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://127.0.0.1:4318", true).unwrap();
        assert_eq!(e.url(), "http://127.0.0.1:4318/v1development/profiles");
        let e = Endpoint::parse("https://c.example/otlp/", true).unwrap();
        assert_eq!((e.https, e.port), (true, 443));
        assert_eq!(e.path, "/otlp/v1development/profiles");
        let e = Endpoint::parse("http://[::1]:9/p", false).unwrap();
        assert_eq!((e.host.as_str(), e.port, e.path.as_str()), ("::1", 9, "/p"));
        assert_eq!(e.url(), "http://[::1]:9/p");
        for bad in [
            "ftp://x",
            "http://",
            "http://:80",
            "http://h:0",
            "http://h:x",
            "http://u:p@h",
            "http://h/a b",
            "http://h/?q",
        ] {
            assert!(Endpoint::parse(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn headers_and_attributes() {
        assert_eq!(
            parse_headers("Authorization=Basic%20eDp5, x-tenant = a").unwrap(),
            [
                ("Authorization".into(), "Basic eDp5".into()),
                ("x-tenant".into(), "a".into())
            ]
        );
        for bad in ["novalue", "a b=1", "x=%0d%0aEvil: 1", "x=%zz", "=v"] {
            assert!(parse_headers(bad).is_err(), "{bad}");
        }
        assert_eq!(
            main_name("org.h2.tools.Server -tcp").as_deref(),
            Some("org.h2.tools.Server")
        );
        assert_eq!(
            main_name("/opt/app/shop-1.2.jar --x").as_deref(),
            Some("shop-1.2")
        );
    }
}
