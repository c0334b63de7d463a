//! Credentials: which API key a hosted backend sends, and where (the rules every builder applies when
//! it builds), and keeping keys and the credentials of URLs out of every text a backend shows.
//!
//! - A key the caller names (`api_key` or `api_key_env` on a builder) goes to the server the caller names.
//! - A provider's own variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`), read when no
//!   key is named, goes only to that provider's own API over https: a proxy, a gateway, a cluster node or
//!   a local server gets a key only when one is named for it, so one provider's key never reaches another
//!   provider or a server the user did not mean.
//! - No key goes over plain `http` to a host other than this machine (anyone on the way could read it),
//!   unless the caller allows it on purpose with `allow_insecure_key(true)`. Credentials written into the
//!   URL (`user:password@`, a `key=`, `token=`, ... query parameter, Ollama's basic authentication) count
//!   as a key for this rule. This machine is `localhost` and the literal loopback addresses (127.0.0.0/8,
//!   `::1`) alone: a resolver may send any other name, `*.localhost` included, elsewhere.
//! - A key goes to the origin (scheme, host, port) it was resolved for and no other: the HTTP client
//!   follows a redirect only within that origin (`http.rs`).

use super::env::Env;
use super::LlmError;
use std::net::IpAddr;

/// A provider's own API: the one server its default key variable may go to (a [`Protocol`](super::Protocol)'s
/// [`API`](super::Protocol::API)). Without a key named on the builder, the variable `key_env` is read
/// for requests to `https://{host}` and sent there alone.
#[derive(Debug, Clone, Copy)]
pub struct OfficialApi {
    /// The API's host, reached over https on the default port.
    pub host: &'static str,
    /// The environment variable the key is read from when none is named.
    pub key_env: &'static str,
    /// Whether the API needs a key: a missing variable is then an error when the backend is built.
    pub key_required: bool,
}

impl OfficialApi {
    /// The API at `https://{host}`, its key in `key_env`, which must be set when `key_required`.
    pub const fn new(host: &'static str, key_env: &'static str, key_required: bool) -> Self {
        OfficialApi {
            host,
            key_env,
            key_required,
        }
    }

    /// What to add to a rejection of the request's credentials: where the key went, or why none did.
    pub(crate) fn auth_hint(&self, key_sent: bool, header: &str) -> String {
        if key_sent {
            format!(
                "the key is sent in {header}; without a key named for the backend it is read from {} \
                 for https://{} only",
                self.key_env, self.host
            )
        } else {
            format!(
                "no key was sent: {} goes only to https://{}; name a key for this server \
                 (api_key_env on the builder, --api-key-env after the backend flag on the command line)",
                self.key_env, self.host
            )
        }
    }
}

/// What a builder was told about its key.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyChoice {
    /// A key given as it is.
    pub key: Option<Secret>,
    /// The environment variable a key is read from.
    pub key_env: Option<String>,
    /// Whether the key may go over plain `http` to another machine.
    pub allow_insecure: bool,
}

impl KeyChoice {
    /// The key requests to `base` carry, if any, by the rules of this module, reading variables from
    /// `env`; `official` is the provider's own API (`None`: a backend with no key of its own, which
    /// sends only what its URL holds). Fails, before anything is sent, when a key or the credentials
    /// of `base` would go over plain `http` to another machine and that was not allowed.
    pub fn resolve(
        self,
        base: &str,
        official: Option<OfficialApi>,
        env: &Env,
    ) -> Result<Option<Secret>, LlmError> {
        let url = reqwest::Url::parse(base).ok();
        let key = match (self.key, &self.key_env, official) {
            (Some(key), _, _) => Some(key),
            (None, Some(name), _) => Some(Secret::from_var(name, env)?),
            (None, None, Some(official))
                if url.as_ref().is_some_and(|u| is_official(u, official)) =>
            {
                if official.key_required {
                    Some(Secret::from_var(official.key_env, env)?)
                } else {
                    Secret::from_var(official.key_env, env).ok()
                }
            }
            (None, None, _) => None,
        };
        let credentials = key.is_some() || has_url_credentials(base);
        if credentials && !self.allow_insecure && url.as_ref().is_some_and(is_exposed) {
            return Err(LlmError::InsecureKey {
                url: redact_url(base),
            });
        }
        Ok(key)
    }
}

/// Whether `url` holds credentials: a `user:password@` (or a user part alone, where services put
/// tokens) or a query parameter named like a credential (`key=`, `api_key=`, `access_token=`, ...).
/// What [`redact_url`] hides is what this finds.
fn has_url_credentials(url: &str) -> bool {
    !url_credentials(url).is_empty()
}

/// Whether `url` is the provider's own API: https, its host, the default port.
fn is_official(url: &reqwest::Url, official: OfficialApi) -> bool {
    url.scheme() == "https"
        && url
            .host_str()
            .is_some_and(|host| host.eq_ignore_ascii_case(official.host))
        && url.port_or_known_default() == Some(443)
}

/// Whether a key sent to `url` crosses a network in clear text: plain `http` to a host that is not this
/// machine (`localhost`, 127.0.0.0/8, `::1`).
fn is_exposed(url: &reqwest::Url) -> bool {
    url.scheme() == "http" && !url.host_str().is_some_and(is_loopback)
}

/// Whether `host` is this machine: `localhost` or a literal loopback address. Not `*.localhost`, which
/// is only a convention some resolvers keep: another may send it anywhere.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

/// An API key or other credential. Its `Debug` prints `[redacted]`, it has no `Display`, and the backends
/// scrub it from anything a server echoes back, so it never reaches a log or an error message.
///
/// ```
/// use llm_extract::llm::Secret;
///
/// let key = Secret::new("sk-very-secret");
/// assert_eq!(format!("{key:?}"), "[redacted]");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// Reads a credential from the environment variable `name`.
    pub fn from_env(name: &str) -> Result<Self, LlmError> {
        Self::from_var(name, &Env::default())
    }

    /// Reads a credential from the variable `name` of `env`.
    pub(crate) fn from_var(name: &str, env: &Env) -> Result<Self, LlmError> {
        match env.var(name) {
            Some(value) if !value.trim().is_empty() => Ok(Secret(value.trim().to_owned())),
            _ => Err(LlmError::Config {
                message: format!(
                    "the environment variable {name} holding the API key is not set or empty"
                ),
            }),
        }
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

/// `err` without the credentials a backend holds: its key and any in its URL, replaced first, and only
/// then the server's text it quotes cut to [`EXCERPT_CHARS`](super::http::EXCERPT_CHARS) (a key cut in two would survive). Every
/// error an HTTP backend returns or logs goes through this.
pub(crate) fn scrub(err: LlmError, key: Option<&Secret>, url: &str) -> LlmError {
    let err = match key {
        Some(key) => err.scrub(key.expose()),
        None => err,
    };
    url_credentials(url)
        .into_iter()
        .filter_map(|(start, end)| url.get(start..end))
        .fold(err, LlmError::scrub)
        .shorten()
}

/// The credentials written in `url` (what [`redact_url`] hides), as they appear in it.
pub(crate) fn url_credential_values(url: &str) -> Vec<String> {
    url_credentials(url)
        .into_iter()
        .filter_map(|(start, end)| url.get(start..end))
        .map(str::to_owned)
        .collect()
}

/// Whether a query parameter of this name holds a credential.
fn is_credential_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "auth",
        "sig",
        "credential",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// The byte ranges of the credentials in a URL (whether or not it parses): the password of
/// `user:password@` (or the whole user part when it has no password, as services put tokens there)
/// and the values of query parameters named like a credential (`key=`, `api_key=`, `token=`, ...).
fn url_credentials(url: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let authority_start = url.find("://").map_or(0, |i| i + 3);
    let rest = url.get(authority_start..).unwrap_or_default();
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..authority_len).unwrap_or_default();
    if let Some(at) = authority.rfind('@') {
        let user_info = authority.get(..at).unwrap_or_default();
        let secret_from = user_info.find(':').map_or(0, |colon| colon + 1);
        if secret_from < at {
            spans.push((authority_start + secret_from, authority_start + at));
        }
    }
    if let Some(question) = url.find('?') {
        let query_end = url
            .get(question..)
            .and_then(|q| q.find('#'))
            .map_or(url.len(), |i| question + i);
        let mut pair_start = question + 1;
        for pair in url
            .get(question + 1..query_end)
            .unwrap_or_default()
            .split('&')
        {
            if let Some((name, value)) = pair.split_once('=') {
                let value_start = pair_start + name.len() + 1;
                if is_credential_name(name) && !value.is_empty() {
                    spans.push((value_start, value_start + value.len()));
                }
            }
            pair_start += pair.len() + 1;
        }
    }
    spans
}

/// `url` with its credentials (the password of `user:password@`, the value of a `key=`, `token=`, ...
/// query parameter) replaced by `[redacted]`: the form to show a URL in in a message or a log.
///
/// ```
/// use llm_extract::llm::redact_url;
///
/// assert_eq!(
///     redact_url("https://me:pw@host/v1?key=k&x=1"),
///     "https://me:[redacted]@host/v1?key=[redacted]&x=1"
/// );
/// ```
pub fn redact_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut copied = 0;
    for (start, end) in url_credentials(url) {
        out.push_str(url.get(copied..start).unwrap_or_default());
        out.push_str("[redacted]");
        copied = end;
    }
    out.push_str(url.get(copied..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const API: OfficialApi = OfficialApi {
        host: "api.example.com",
        key_env: "LLM_EXTRACT_TEST_CREDENTIALS_OFFICIAL_KEY",
        key_required: true,
    };

    /// An environment holding these variables alone.
    fn env(vars: &[(&'static str, &'static str)]) -> Env {
        let vars = vars.to_vec();
        Env::from_fn(move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    /// An environment where the provider's own variable is set.
    fn official_env() -> Env {
        env(&[(API.key_env, "sk-official")])
    }

    fn named(key: &str) -> KeyChoice {
        KeyChoice {
            key: Some(Secret::new(key)),
            ..KeyChoice::default()
        }
    }

    /// `choice` resolved for `base` against the test API with no variable set.
    fn resolve(choice: KeyChoice, base: &str) -> Result<Option<Secret>, LlmError> {
        choice.resolve(base, Some(API), &env(&[]))
    }

    #[test]
    fn the_providers_own_variable_goes_only_to_its_own_api_over_https() {
        let official = KeyChoice::default()
            .resolve("https://API.example.com/v1", Some(API), &official_env())
            .unwrap();
        assert_eq!(official, Some(Secret::new("sk-official")));
        for elsewhere in [
            "https://gateway.example.net/v1",
            "http://api.example.com/v1",
            "https://api.example.com:8443/v1",
            "https://api.example.com.evil.net/v1",
            "http://127.0.0.1:8080/v1",
        ] {
            let key = KeyChoice::default()
                .resolve(elsewhere, Some(API), &official_env())
                .unwrap();
            assert_eq!(key, None, "{elsewhere}");
        }
        // A backend without an API of its own reads no variable.
        let keyless = KeyChoice::default()
            .resolve("https://API.example.com/v1", None, &official_env())
            .unwrap();
        assert_eq!(keyless, None);
    }

    #[test]
    fn a_named_key_goes_where_it_is_named() {
        let to_gateway = resolve(named("sk-named"), "https://gateway.example.net/v1").unwrap();
        assert_eq!(to_gateway, Some(Secret::new("sk-named")));
        let from_env = KeyChoice {
            key_env: Some("NAMED_KEY".into()),
            ..KeyChoice::default()
        }
        .resolve(
            "http://127.0.0.1:8000/v1",
            Some(API),
            &env(&[("NAMED_KEY", " sk-from-env\n")]),
        )
        .unwrap();
        assert_eq!(from_env, Some(Secret::new("sk-from-env")));
        for unset in [env(&[]), env(&[("NAMED_KEY", " ")])] {
            let missing = KeyChoice {
                key_env: Some("NAMED_KEY".into()),
                ..KeyChoice::default()
            }
            .resolve("https://gateway.example.net", Some(API), &unset)
            .unwrap_err();
            assert!(matches!(missing, LlmError::Config { .. }), "{missing:?}");
            assert!(missing.to_string().contains("NAMED_KEY"), "{missing}");
        }
    }

    #[test]
    fn a_required_official_key_that_is_missing_is_a_config_error() {
        let err = resolve(KeyChoice::default(), "https://api.example.com").unwrap_err();
        assert!(err.to_string().contains(API.key_env), "{err}");
        let optional = OfficialApi {
            key_required: false,
            ..API
        };
        let none = KeyChoice::default()
            .resolve("https://api.example.com", Some(optional), &env(&[]))
            .unwrap();
        assert_eq!(none, None);
    }

    #[test]
    fn no_key_goes_over_plain_http_to_another_machine_unless_allowed() {
        for exposed in [
            "http://10.255.255.1:1/v1",
            "http://node1:8000/v1",
            "http://user:pw@example.com/v1?key=k",
            "http://[2001:db8::1]:8000/v1",
            "http://api.localhost:8000/v1",
            "http://localhost.example.com:8000/v1",
        ] {
            let err = resolve(named("sk-named"), exposed).unwrap_err();
            let LlmError::InsecureKey { url } = &err else {
                panic!("{err:?}")
            };
            assert!(!url.contains("pw") && !url.contains("key=k"), "{url}");
            assert!(err.to_string().contains("allow_insecure_key"), "{err}");
            assert!(!err.to_string().contains("sk-named"), "{err}");
            let allowed = resolve(
                KeyChoice {
                    allow_insecure: true,
                    ..named("sk-named")
                },
                exposed,
            )
            .unwrap();
            assert_eq!(allowed, Some(Secret::new("sk-named")), "{exposed}");
        }
        for local in [
            "http://127.0.0.1:8000/v1",
            "http://127.1.2.3:8000",
            "http://localhost:8000/v1",
            "http://LOCALHOST:8000/v1",
            "http://[::1]:8000/v1",
            "http://[::ffff:127.0.0.1]:8000/v1",
            "https://10.255.255.1/v1",
        ] {
            let key = resolve(named("sk-named"), local).unwrap();
            assert_eq!(key, Some(Secret::new("sk-named")), "{local}");
        }
        // Without a key there is nothing to protect.
        assert_eq!(
            resolve(KeyChoice::default(), "http://10.255.255.1:1").unwrap(),
            None
        );
    }

    #[test]
    fn credentials_in_the_url_are_a_key_for_the_plain_http_rule() {
        for exposed in [
            "http://user:pw@10.255.255.1/v1",
            "http://token-only@10.255.255.1/v1",
            "http://10.255.255.1/v1?key=k",
            "http://10.255.255.1/v1?x=1&api_key=k",
            "http://10.255.255.1/v1?api-key=k",
            "http://10.255.255.1/v1?access_token=k",
            "http://10.255.255.1/v1?token=k",
            "http://user:pw@node1.localhost:11434",
        ] {
            for official in [Some(API), None] {
                let err = KeyChoice::default()
                    .resolve(exposed, official, &env(&[]))
                    .unwrap_err();
                let LlmError::InsecureKey { url } = &err else {
                    panic!("{exposed}: {err:?}")
                };
                assert!(!url.contains("pw") && !url.contains("=k"), "{url}");
                let allowed = KeyChoice {
                    allow_insecure: true,
                    ..KeyChoice::default()
                }
                .resolve(exposed, official, &env(&[]));
                assert_eq!(allowed.unwrap(), None, "{exposed}");
            }
        }
        for fine in [
            "https://user:pw@10.255.255.1/v1?key=k",
            "http://user:pw@127.0.0.1:11434",
            "http://localhost:8000/v1?key=k",
            "http://10.255.255.1/v1?model=m&x=1",
            "http://10.255.255.1/v1?key=",
        ] {
            let key = KeyChoice::default().resolve(fine, None, &env(&[])).unwrap();
            assert_eq!(key, None, "{fine}");
        }
    }

    #[test]
    fn credentials_in_urls_are_redacted() {
        let cases = [
            (
                "https://user:pw@host:8080/v1?api_key=k1&x=1#f",
                "https://user:[redacted]@host:8080/v1?api_key=[redacted]&x=1#f",
            ),
            ("http://tok3n@host/v1", "http://[redacted]@host/v1"),
            (
                "http://h/v1?key=a&token=b&model=m&access_token=c",
                "http://h/v1?key=[redacted]&token=[redacted]&model=m&access_token=[redacted]",
            ),
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
            (
                "user:pw@not a url?key=v",
                "user:[redacted]@not a url?key=[redacted]",
            ),
            ("http://h/a@b?key=", "http://h/a@b?key="),
        ];
        for (url, redacted) in cases {
            assert_eq!(redact_url(url), redacted, "{url}");
        }
        let err = LlmError::Http {
            status: 500,
            message: "bad request for http://user:pw@h/v1?key=k1 with sk-9".into(),
            retry_after: None,
        };
        let key = Secret::new("sk-9");
        let text = scrub(err, Some(&key), "http://user:pw@h/v1?key=k1").to_string();
        assert!(
            !text.contains("pw@") && !text.contains("k1") && !text.contains("sk-9"),
            "{text}"
        );
    }

    #[test]
    fn secret_from_missing_env_is_a_config_error() {
        let err = Secret::from_env("LLM_EXTRACT_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(matches!(err, LlmError::Config { .. }));
        assert!(err
            .to_string()
            .contains("LLM_EXTRACT_SURELY_UNSET_VARIABLE"));
    }
}
