//! The address of an Ollama server, read from `OLLAMA_HOST` (or a builder's `host`) the way Ollama
//! reads it.

use super::credentials::redact_url;
use super::LlmError;

/// Where Ollama listens when `OLLAMA_HOST` is not set.
pub(crate) const DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// Reads `OLLAMA_HOST` the way Ollama does: an optional scheme (default `http`; an explicit `http` or
/// `https` defaults the port to 80 or 443), a host (default `127.0.0.1`), a port (default 11434) and an
/// optional path prefix. A port that is not a number from 1 to 65535 is an error (Ollama itself falls
/// back to the default port, so a typo would reach another server).
pub(crate) fn parse_host(raw: &str) -> Result<String, LlmError> {
    let raw = raw.trim().trim_end_matches('/');
    if raw.is_empty() {
        return Ok(DEFAULT_HOST.to_owned());
    }
    let shown = redact_url(raw);
    let (scheme, rest, default_port) = match raw.split_once("://") {
        None => ("http", raw, 11434),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => ("http", rest, 80),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => ("https", rest, 443),
        Some((scheme, _)) => {
            return Err(LlmError::Config {
                message: format!(
                    "the Ollama host {shown:?} has the scheme {scheme:?}; use http:// or https://"
                ),
            })
        }
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    // Credentials for a proxy in front of the server (`user:password@host`) stay in the URL: the HTTP
    // client sends them as basic authentication, and every message shows them redacted.
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => (format!("{userinfo}@"), hostport),
        None => (String::new(), authority),
    };
    let (host, port) = split_host_port(hostport);
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    let port = match port.filter(|p| !p.is_empty()) {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(port) if port > 0 => port,
            _ => {
                return Err(LlmError::Config {
                    message: format!(
                        "the Ollama host {shown:?} has the port {p:?}, which is not a port number \
                         (1 to 65535); use one like 127.0.0.1:11434"
                    ),
                })
            }
        },
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    let url = format!("{scheme}://{userinfo}{host}:{port}{path}");
    match reqwest::Url::parse(&url) {
        Ok(_) => Ok(url),
        Err(e) => Err(LlmError::Config {
            message: format!("the Ollama host {shown:?} is not a valid address ({e})"),
        }),
    }
}

/// Splits `host:port`, `[v6]:port`, `[v6]`, a bare IPv6 address or a bare host.
fn split_host_port(hostport: &str) -> (&str, Option<&str>) {
    if let Some(bracketed) = hostport.strip_prefix('[') {
        return match bracketed.split_once(']') {
            Some((host, rest)) => (host, rest.strip_prefix(':')),
            None => (bracketed, None),
        };
    }
    match hostport.matches(':').count() {
        1 => hostport
            .split_once(':')
            .map_or((hostport, None), |(h, p)| (h, Some(p))),
        _ => (hostport, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_like_ollama_reads_them() {
        let cases = [
            ("", "http://127.0.0.1:11434"),
            ("   ", "http://127.0.0.1:11434"),
            ("0.0.0.0", "http://0.0.0.0:11434"),
            ("example.com", "http://example.com:11434"),
            ("example.com:8080", "http://example.com:8080"),
            (":8080", "http://127.0.0.1:8080"),
            ("http://example.com", "http://example.com:80"),
            ("https://example.com", "https://example.com:443"),
            ("https://example.com:8443/", "https://example.com:8443"),
            ("http://example.com/ollama", "http://example.com:80/ollama"),
            ("::1", "http://[::1]:11434"),
            ("[::1]:9000", "http://[::1]:9000"),
            ("localhost:", "http://localhost:11434"),
            ("user:pw@example.com", "http://user:pw@example.com:11434"),
            (
                "https://user:p%40ss@example.com:8443/x",
                "https://user:p%40ss@example.com:8443/x",
            ),
            ("me@[::1]:9000", "http://me@[::1]:9000"),
        ];
        for (raw, expected) in cases {
            assert_eq!(parse_host(raw).unwrap(), expected, "{raw:?}");
        }
    }

    #[test]
    fn a_port_that_is_not_one_is_refused() {
        for raw in [
            "localhost:notaport",
            "host:99999",
            "http://host:65536/",
            "host:0",
            "[::1]:-1",
            ":1e3",
        ] {
            let err = parse_host(raw).unwrap_err();
            assert!(matches!(err, LlmError::Config { .. }), "{raw:?}: {err:?}");
            assert!(err.to_string().contains("not a port number"), "{err}");
        }
        let err = parse_host("http://user:pw@host:99999").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
        let err = parse_host("http://user:pw@host:notaport").unwrap_err();
        assert!(err.to_string().contains("\"notaport\""), "{err}");
        assert!(!err.to_string().contains("pw"), "{err}");
        assert!(matches!(
            parse_host("ftp://example.com"),
            Err(LlmError::Config { .. })
        ));
    }
}
