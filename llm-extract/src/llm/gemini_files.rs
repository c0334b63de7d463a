//! Gemini's Files API, for media over the inline limit: a request whose media, sent inline, would
//! pass [`MediaLimits::max_request_bytes`] (20 MB for Gemini) has its largest parts uploaded first and
//! sent as `{"file_data": {"mime_type", "file_uri"}}` parts naming the uploaded files; the rest stay
//! `inline_data`.
//!
//! The upload is the resumable protocol: `POST {base}/upload/v1beta/files` with
//! `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start`, the file's length and type in
//! `X-Goog-Upload-Header-Content-Length` and `-Content-Type`, and `{"file": {"display_name"}}`; the
//! answer's `X-Goog-Upload-URL` header is where the bytes go, in one `POST` with
//! `X-Goog-Upload-Command: upload, finalize` and `X-Goog-Upload-Offset: 0`, answered with the `file`
//! (`name`, `uri`, `mimeType`, `state`). A file still `PROCESSING` is read again at
//! `GET {base}/v1beta/{name}` until it is `ACTIVE`, a bounded number of times.
//!
//! An uploaded file is remembered by the SHA-256 of its bytes and type for [`REUSE`] (the API keeps a
//! file 48 hours), so a repair or another call sending the same part names the file again instead of
//! uploading it again.
//!
//! The key goes with the upload, so the upload URL must be on the origin of the base URL: another is
//! [`LlmError::UploadElsewhere`] (the URL redacted) and receives nothing. A file over the Files API's
//! 2 GB is refused before anything is sent.

use super::backend::Backend;
use super::credentials::redact_url;
use super::http::same_origin;
use super::{ChatRequest, LlmError, Media, MediaError, MediaLimits, MediaSupport, Protocol};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most bytes one file may have in the Files API (2 GB).
pub(crate) const MAX_FILE_BYTES: usize = 2 * 1024 * 1024 * 1024;

/// How long a file URI is reckoned to be when a request is checked before its uploads (a URI the API
/// gives, `{base}/v1beta/files/{id}`, is shorter).
const URI_ESTIMATE: usize = 120;

/// How long an uploaded file is named again instead of uploaded again (the API keeps it 48 hours).
pub(crate) const REUSE: Duration = Duration::from_secs(46 * 3600);

/// The most uploaded files remembered; past it the record starts again.
const REMEMBERED: usize = 256;

/// The files a backend uploaded: by the SHA-256 of a part's type and bytes, the media type and URI the
/// API gave and when.
#[derive(Debug, Default)]
pub(crate) struct Uploads(Mutex<HashMap<[u8; 32], (String, String, Instant)>>);

impl Uploads {
    /// The key of `media` (bytes) in the record.
    fn key(media: &Media) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(media.media_type().as_str().as_bytes());
        hasher.update([0]);
        hasher.update(media.data().unwrap_or_default());
        hasher.finalize().into()
    }

    /// The file `media` was uploaded as, if it was within [`REUSE`].
    fn find(&self, key: &[u8; 32]) -> Option<(String, String)> {
        let map = self.0.lock().ok()?;
        let (mime_type, uri, at) = map.get(key)?;
        (at.elapsed() < REUSE).then(|| (mime_type.clone(), uri.clone()))
    }

    /// Remembers the file `media` was uploaded as.
    fn keep(&self, key: [u8; 32], file: &(String, String)) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= REMEMBERED {
                map.clear();
            }
            map.insert(key, (file.0.clone(), file.1.clone(), Instant::now()));
        }
    }
}

/// How often, and how many times, a file still `PROCESSING` is read again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Polling {
    /// The wait between two reads.
    pub interval: Duration,
    /// The most reads after the upload.
    pub attempts: u32,
}

impl Default for Polling {
    fn default() -> Self {
        Polling {
            interval: Duration::from_secs(2),
            attempts: 60,
        }
    }
}

/// The parts of `request` (message index, part index) to upload: none when its media fit inline
/// within `limits`; else the largest parts given as bytes, largest first, until the rest fit (or
/// every such part, when even that is not enough: the check then names the request's size).
fn plan(request: &ChatRequest, limits: &MediaLimits) -> Vec<(usize, usize)> {
    let Some(max) = limits.max_request_bytes else {
        return Vec::new();
    };
    let mut total = request.system.as_ref().map_or(0, String::len);
    let mut candidates = Vec::new();
    for (m, message) in request.messages.iter().enumerate() {
        total = total.saturating_add(message.content.len());
        for (p, media) in message.media.iter().enumerate() {
            total = total.saturating_add(media.sent_bytes());
            if media.data().is_some() {
                candidates.push((media.sent_bytes(), m, p));
            }
        }
    }
    if total <= max {
        return Vec::new();
    }
    candidates.sort_by_key(|&(size, _, _)| std::cmp::Reverse(size));
    let mut chosen = Vec::new();
    for (size, m, p) in candidates {
        if total <= max {
            break;
        }
        total = total.saturating_sub(size).saturating_add(URI_ESTIMATE);
        chosen.push((m, p));
    }
    chosen
}

/// `request` with the parts `chosen` replaced by what `replace` gives for each.
fn replaced(
    request: &ChatRequest,
    chosen: &[(usize, usize)],
    replace: impl Fn(&Media) -> Media,
) -> ChatRequest {
    let mut out = request.clone();
    for &(m, p) in chosen {
        if let Some(part) = out.messages.get_mut(m).and_then(|msg| msg.media.get_mut(p)) {
            *part = replace(part);
        }
    }
    out
}

/// The error for a part over the Files API's limit, if one of `chosen` is.
fn over_file_limit(
    request: &ChatRequest,
    chosen: &[(usize, usize)],
    backend: &'static str,
) -> Result<(), MediaError> {
    // Parts are numbered across the request, as the media check numbers them.
    let mut number = 0;
    for (m, message) in request.messages.iter().enumerate() {
        for (p, media) in message.media.iter().enumerate() {
            number += 1;
            let size = media.data().map_or(0, <[u8]>::len);
            if size > MAX_FILE_BYTES && chosen.contains(&(m, p)) {
                return Err(MediaError::TooLarge {
                    backend,
                    limit: "the Files API's 2 GB per file",
                    what: media.describe(number),
                    size,
                    max: MAX_FILE_BYTES,
                });
            }
        }
    }
    Ok(())
}

/// Whether `request` can go out once its large parts are uploaded: each such part within the Files
/// API's limit, and the rest within `limits` as `support` checks them.
pub(crate) fn accepts(
    request: &ChatRequest,
    support: &MediaSupport,
    limits: &MediaLimits,
) -> Result<(), LlmError> {
    if !request.has_media() {
        return Ok(());
    }
    let chosen = plan(request, limits);
    if chosen.is_empty() {
        return Ok(support.check(request, limits)?);
    }
    over_file_limit(request, &chosen, support.backend)?;
    let estimate = "x".repeat(URI_ESTIMATE);
    let planned = replaced(request, &chosen, |media| {
        Media::image_url(media.media_type(), estimate.clone())
    });
    Ok(support.check(&planned, limits)?)
}

/// `request` with its parts over the inline limit uploaded (or found in `uploads`) and named by their
/// file URIs; the request unchanged when its media fit inline.
pub(crate) async fn upload_large<P: Protocol>(
    backend: &Backend<P>,
    request: ChatRequest,
    polling: Polling,
    uploads: &Uploads,
) -> Result<ChatRequest, LlmError> {
    if !request.has_media() {
        return Ok(request);
    }
    let chosen = plan(&request, backend.media_limits());
    if chosen.is_empty() {
        return Ok(request);
    }
    accepts(&request, &P::MEDIA, backend.media_limits())?;
    let mut request = request;
    for &(m, p) in &chosen {
        let Some(media) = request.messages.get(m).and_then(|msg| msg.media.get(p)) else {
            continue;
        };
        let key = Uploads::key(media);
        let (mime_type, uri) = match uploads.find(&key) {
            Some(file) => file,
            None => {
                let file = upload(backend, media, polling).await?;
                uploads.keep(key, &file);
                file
            }
        };
        let kind = super::MediaType::parse(&mime_type).unwrap_or(media.media_type());
        let part = Media::image_url(kind, uri);
        let part = match media.name() {
            Some(name) => part.with_name(name),
            None => part,
        };
        if let Some(slot) = request
            .messages
            .get_mut(m)
            .and_then(|msg| msg.media.get_mut(p))
        {
            *slot = part;
        }
    }
    Ok(request)
}

/// Uploads one part; its media type and URI as the API gives them, once the file is `ACTIVE`.
async fn upload<P: Protocol>(
    backend: &Backend<P>,
    media: &Media,
    polling: Polling,
) -> Result<(String, String), LlmError> {
    let bytes = media.data().unwrap_or_default();
    let mime_type = media.media_type().as_str();
    let base = backend.base();
    let start = format!("{base}/upload/v1beta/files");
    let display_name = media.name().unwrap_or("llm-extract media");
    let headers = [
        ("X-Goog-Upload-Protocol", "resumable".to_owned()),
        ("X-Goog-Upload-Command", "start".to_owned()),
        (
            "X-Goog-Upload-Header-Content-Length",
            bytes.len().to_string(),
        ),
        ("X-Goog-Upload-Header-Content-Type", mime_type.to_owned()),
    ];
    let body = json!({"file": {"display_name": display_name}});
    let location = backend
        .call_headed(&start, Some(&body), None, &headers, |headers, body| {
            headers
                .get("x-goog-upload-url")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| LlmError::InvalidResponse {
                    message: "the Files API's answer to the start of an upload has no X-Goog-Upload-URL header"
                        .into(),
                    body: String::from_utf8_lossy(body).into_owned(),
                })
        })
        .await?;
    let target = on_origin(base, &location)?;
    let headers = [
        ("X-Goog-Upload-Command", "upload, finalize".to_owned()),
        ("X-Goog-Upload-Offset", "0".to_owned()),
    ];
    let answer = backend
        .call_headed(
            target.as_str(),
            None,
            Some((mime_type, bytes)),
            &headers,
            |_, body| super::http::json_body(body),
        )
        .await?;
    let file = answer.get("file").cloned().unwrap_or(answer);
    let what = format!("{display_name:?} ({mime_type})");
    wait_active(backend, file, polling, &what).await
}

/// The upload URL `location` the server gave, if it is on the origin of `base`; else
/// [`LlmError::UploadElsewhere`] naming it redacted (its query, which holds the upload's id, left out).
fn on_origin(base: &str, location: &str) -> Result<reqwest::Url, LlmError> {
    let elsewhere = || {
        let shown = location.split(['?', '#']).next().unwrap_or_default();
        let shown = if shown.len() < location.len() {
            format!("{}?[redacted]", redact_url(shown))
        } else {
            redact_url(shown)
        };
        LlmError::UploadElsewhere { location: shown }
    };
    let base = reqwest::Url::parse(base).map_err(|_| elsewhere())?;
    let target = base.join(location).map_err(|_| elsewhere())?;
    if same_origin(&base, &target) {
        Ok(target)
    } else {
        Err(elsewhere())
    }
}

/// The media type and URI of `file` (the part `what`) once it is `ACTIVE`, reading it again while it
/// is `PROCESSING` (at most `polling.attempts` times).
async fn wait_active<P: Protocol>(
    backend: &Backend<P>,
    mut file: Value,
    polling: Polling,
    what: &str,
) -> Result<(String, String), LlmError> {
    let text = |file: &Value, key: &str| file.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut reads = 0;
    loop {
        match text(&file, "state").as_deref() {
            // A file without a state is taken as ready, as the API leaves out a default.
            None | Some("ACTIVE") | Some("STATE_UNSPECIFIED") => break,
            Some("PROCESSING") => {}
            // `FAILED` (or a state this code does not know): the same bytes fail again.
            Some(other) => {
                return Err(LlmError::Media(MediaError::Unprocessable {
                    backend: P::MEDIA.backend,
                    what: what.to_owned(),
                    state: format!("the Files API state {other}"),
                }))
            }
        }
        if reads >= polling.attempts {
            return Err(LlmError::InvalidResponse {
                message: format!(
                    "the uploaded file was still PROCESSING after {reads} reads {:?} apart; \
                     try again later, or send a smaller file inline",
                    polling.interval
                ),
                body: file.to_string(),
            });
        }
        let name = text(&file, "name").filter(|name| {
            name.strip_prefix("files/").is_some_and(|id| {
                !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            })
        });
        let Some(name) = name else {
            return Err(LlmError::InvalidResponse {
                message:
                    "the Files API's file has no name of the form files/{id} to read it again by"
                        .into(),
                body: file.to_string(),
            });
        };
        tokio::time::sleep(polling.interval).await;
        reads += 1;
        let url = format!("{}/v1beta/{name}", backend.base());
        file = backend.call(&url, None, super::http::json_body).await?;
    }
    match (text(&file, "uri"), text(&file, "mimeType")) {
        (Some(uri), mime_type) => Ok((mime_type.unwrap_or_default(), uri)),
        (None, _) => Err(LlmError::InvalidResponse {
            message: "the Files API's file has no uri".into(),
            body: file.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn request(sizes: &[usize]) -> ChatRequest {
        let media = sizes.iter().map(|&n| Media::png(vec![0u8; n]));
        ChatRequest::new("").with_message(Message::user("look").with_media(media))
    }

    #[test]
    fn only_the_largest_parts_go_to_the_files_api_and_only_past_the_limit() {
        let limits = MediaLimits::gemini().with_max_request_bytes(Some(1000));
        assert!(plan(&request(&[300, 300]), &limits).is_empty());
        // 1,600 bytes as base64: uploading the largest part (800 of them) brings the rest under.
        let chosen = plan(&request(&[300, 600, 300]), &limits);
        assert_eq!(chosen, vec![(1, 1)]);
        let chosen = plan(&request(&[600, 700, 300]), &limits);
        assert_eq!(chosen, vec![(1, 1), (1, 0)]);
        let support = MediaSupport {
            backend: "Gemini",
            images: true,
            pdfs: true,
            image_urls: true,
            pdf_urls: true,
            hint: "",
        };
        accepts(&request(&[300, 600, 300]), &support, &limits).unwrap();
        // Every part uploaded and the text alone over the limit: the check names the request.
        let text = ChatRequest::new("")
            .with_message(Message::user("x".repeat(2000)).with_media([Media::png(vec![0u8; 10])]));
        let err = accepts(&text, &support, &limits).unwrap_err();
        assert!(err.to_string().contains("max_request_bytes"), "{err}");
    }

    #[test]
    fn an_upload_url_elsewhere_is_refused_and_named_without_its_query() {
        let base = "https://generativelanguage.googleapis.com";
        assert!(on_origin(
            base,
            "https://generativelanguage.googleapis.com/upload?upload_id=1"
        )
        .is_ok());
        let err =
            on_origin(base, "https://user:pw@evil.example/upload?upload_id=secret").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, LlmError::UploadElsewhere { .. }));
        assert!(text.contains("evil.example"), "{text}");
        assert!(!text.contains("secret") && !text.contains("pw"), "{text}");
        assert!(on_origin(base, "http://generativelanguage.googleapis.com/u").is_err());
    }
}
