//! Images and PDF documents a message carries besides its text ([`Media`]), the limits a backend checks
//! before it sends them ([`MediaLimits`]), what each backend takes of them ([`MediaSupport`]), and the
//! typed error of a part refused ([`MediaError`]). Each backend writes the parts in its own wire form;
//! this module decides, before anything is sent, whether it may.

use super::{ChatRequest, MediaError, Role};
use base64::Engine as _;
use std::path::Path;

/// The formats a [`Media`] part can be: four image formats and PDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MediaType {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/webp`.
    Webp,
    /// `image/gif`.
    Gif,
    /// `application/pdf`.
    Pdf,
}

impl MediaType {
    /// The IANA media type, as the wire formats write it (`image/png`, `application/pdf`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Webp => "image/webp",
            MediaType::Gif => "image/gif",
            MediaType::Pdf => "application/pdf",
        }
    }

    /// Whether this is an image (every type but PDF).
    pub fn is_image(self) -> bool {
        self != MediaType::Pdf
    }

    /// The type named by an IANA media type (`image/jpg` is read as JPEG); `None` for any other.
    pub fn parse(media_type: &str) -> Option<MediaType> {
        let lower = media_type.trim().to_ascii_lowercase();
        Some(match lower.as_str() {
            "image/png" => MediaType::Png,
            "image/jpeg" | "image/jpg" => MediaType::Jpeg,
            "image/webp" => MediaType::Webp,
            "image/gif" => MediaType::Gif,
            "application/pdf" => MediaType::Pdf,
            _ => return None,
        })
    }

    /// The type `bytes` are, by their magic bytes: PNG's signature, JPEG's `FF D8 FF`, `GIF87a` or
    /// `GIF89a`, a RIFF container of `WEBP`, and `%PDF-` within the first 1,024 bytes (where PDF
    /// readers look for it). `None` for anything else.
    pub fn sniff(bytes: &[u8]) -> Option<MediaType> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(MediaType::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(MediaType::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(MediaType::Gif)
        } else if bytes.len() >= 12
            && bytes.starts_with(b"RIFF")
            && bytes.get(8..12) == Some(b"WEBP")
        {
            Some(MediaType::Webp)
        } else if memchr::memmem::find(&bytes[..bytes.len().min(1024)], b"%PDF-").is_some() {
            Some(MediaType::Pdf)
        } else {
            None
        }
    }
}

impl std::fmt::Display for MediaType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a part's content is: its bytes, or a URL the provider fetches.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MediaSource {
    /// The content itself, sent base64-encoded.
    Bytes(bytes::Bytes),
    /// An `http(s)` URL the provider fetches itself (only where it does: see each backend).
    Url(String),
}

/// An image or a PDF document sent with a message, as bytes or as a URL.
///
/// Build one from bytes whose type you know ([`Media::png`], [`Media::pdf`], ...), from bytes or a file
/// whose type is read from its magic bytes ([`Media::sniff`], [`Media::from_path`]), or from a URL
/// ([`Media::image_url`], [`Media::pdf_url`]); attach it to an
/// [`Input`](crate::extract::Input::with_media) or a [`Message`](super::Message::with_media).
///
/// ```
/// use llm_extract::llm::{Media, MediaType};
///
/// let png = Media::png(b"\x89PNG\r\n\x1a\n...".to_vec());
/// assert_eq!(png.media_type(), MediaType::Png);
/// let sniffed = Media::sniff(b"%PDF-1.7 ...".to_vec())?.with_name("invoice.pdf");
/// assert_eq!(sniffed.media_type(), MediaType::Pdf);
/// let remote = Media::image_url(MediaType::Jpeg, "https://example.com/receipt.jpg");
/// assert_eq!(remote.url(), Some("https://example.com/receipt.jpg"));
/// # Ok::<(), llm_extract::llm::MediaError>(())
/// ```
///
/// Its `Debug` shows the type, the size and the name, never the bytes (a URL is shown with its
/// credentials redacted).
#[derive(Clone, PartialEq, Eq)]
pub struct Media {
    media_type: MediaType,
    source: MediaSource,
    name: Option<String>,
}

impl Media {
    /// A part of `media_type` holding `data`.
    pub fn bytes(media_type: MediaType, data: impl Into<bytes::Bytes>) -> Self {
        Media {
            media_type,
            source: MediaSource::Bytes(data.into()),
            name: None,
        }
    }

    /// A PNG image.
    pub fn png(data: impl Into<bytes::Bytes>) -> Self {
        Media::bytes(MediaType::Png, data)
    }

    /// A JPEG image.
    pub fn jpeg(data: impl Into<bytes::Bytes>) -> Self {
        Media::bytes(MediaType::Jpeg, data)
    }

    /// A WebP image.
    pub fn webp(data: impl Into<bytes::Bytes>) -> Self {
        Media::bytes(MediaType::Webp, data)
    }

    /// A GIF image.
    pub fn gif(data: impl Into<bytes::Bytes>) -> Self {
        Media::bytes(MediaType::Gif, data)
    }

    /// A PDF document.
    pub fn pdf(data: impl Into<bytes::Bytes>) -> Self {
        Media::bytes(MediaType::Pdf, data)
    }

    /// A part holding `data`, its type read from its magic bytes ([`MediaType::sniff`]); an error if
    /// they are none of the supported formats.
    pub fn sniff(data: impl Into<bytes::Bytes>) -> Result<Self, MediaError> {
        let data = data.into();
        match MediaType::sniff(&data) {
            Some(media_type) => Ok(Media::bytes(media_type, data)),
            None => Err(MediaError::UnknownType {
                what: format!("{} bytes", data.len()),
            }),
        }
    }

    /// The file at `path`, its type read from its magic bytes, named by its file name (the `filename`
    /// of an OpenAI-compatible file part, the `title` of an Anthropic document).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, MediaError> {
        let path = path.as_ref();
        let data = std::fs::read(path).map_err(|e| MediaError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let media_type = MediaType::sniff(&data).ok_or_else(|| MediaError::UnknownType {
            what: path.display().to_string(),
        })?;
        let media = Media::bytes(media_type, data);
        Ok(match path.file_name() {
            Some(name) => media.with_name(name.to_string_lossy()),
            None => media,
        })
    }

    /// An image the provider fetches from `url`.
    pub fn image_url(media_type: MediaType, url: impl Into<String>) -> Self {
        Media {
            media_type,
            source: MediaSource::Url(url.into()),
            name: None,
        }
    }

    /// A PDF document the provider fetches from `url`.
    pub fn pdf_url(url: impl Into<String>) -> Self {
        Media::image_url(MediaType::Pdf, url)
    }

    /// Names the part (a file name): the `filename` of an OpenAI-compatible file part, the `title` of an
    /// Anthropic document, and how errors name it.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The part's type.
    pub fn media_type(&self) -> MediaType {
        self.media_type
    }

    /// Where the content is.
    pub fn source(&self) -> &MediaSource {
        &self.source
    }

    /// The bytes, unless the part is a URL.
    pub fn data(&self) -> Option<&[u8]> {
        match &self.source {
            MediaSource::Bytes(data) => Some(data),
            MediaSource::Url(_) => None,
        }
    }

    /// The URL, if the part is one.
    pub fn url(&self) -> Option<&str> {
        match &self.source {
            MediaSource::Url(url) => Some(url),
            MediaSource::Bytes(_) => None,
        }
    }

    /// The name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The bytes base64-encoded (standard alphabet, padded), as every wire format carries them; `None`
    /// for a URL.
    pub fn base64(&self) -> Option<String> {
        self.data()
            .map(|data| base64::engine::general_purpose::STANDARD.encode(data))
    }

    /// The part as a record keeps it without its bytes: its name (if any), media type, size in bytes
    /// and SHA-256 (lower-case hex), or its URL with any credentials redacted. What `--save-raw` and
    /// an [`Exchange`](crate::llm::Exchange) write in place of a file.
    ///
    /// ```
    /// use llm_extract::llm::Media;
    ///
    /// let summary = Media::png(b"abc".to_vec()).summary();
    /// assert_eq!(summary["bytes"], 3);
    /// assert_eq!(summary["media_type"], "image/png");
    /// assert!(summary["sha256"].as_str().unwrap().starts_with("ba7816bf"));
    /// ```
    pub fn summary(&self) -> serde_json::Value {
        use sha2::Digest as _;
        let mut entry = serde_json::Map::new();
        if let Some(name) = &self.name {
            entry.insert("name".into(), name.as_str().into());
        }
        entry.insert("media_type".into(), self.media_type.as_str().into());
        match &self.source {
            MediaSource::Bytes(data) => {
                entry.insert("bytes".into(), data.len().into());
                let digest = sha2::Sha256::digest(data);
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                entry.insert("sha256".into(), hex.into());
            }
            MediaSource::Url(url) => {
                entry.insert("url".into(), super::redact_url(url).into());
            }
        }
        serde_json::Value::Object(entry)
    }

    /// A `data:` URL of the bytes (`data:image/png;base64,...`), or the URL of a URL part.
    pub fn data_url(&self) -> String {
        match &self.source {
            MediaSource::Bytes(data) => format!(
                "data:{};base64,{}",
                self.media_type,
                base64::engine::general_purpose::STANDARD.encode(data)
            ),
            MediaSource::Url(url) => url.clone(),
        }
    }

    /// How many bytes the part adds to a request: its base64 length (4 for every 3 bytes, padded), or
    /// the URL's length.
    pub fn sent_bytes(&self) -> usize {
        match &self.source {
            MediaSource::Bytes(data) => data.len().div_ceil(3).saturating_mul(4),
            MediaSource::Url(url) => url.len(),
        }
    }

    /// How errors name the part: `image 2 ("receipt.png")` (numbered from 1 in the request).
    pub(crate) fn describe(&self, number: usize) -> String {
        let kind = if self.media_type.is_image() {
            "image"
        } else {
            "PDF"
        };
        match &self.name {
            Some(name) => format!("{kind} {number} ({name:?})"),
            None => format!("{kind} {number}"),
        }
    }
}

impl std::fmt::Debug for Media {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Media");
        out.field("media_type", &self.media_type.as_str());
        match &self.source {
            MediaSource::Bytes(data) => out.field("bytes", &data.len()),
            MediaSource::Url(url) => out.field("url", &super::redact_url(url)),
        };
        out.field("name", &self.name).finish()
    }
}

/// One mebibyte, the unit of the providers' size limits below.
const MIB: usize = 1024 * 1024;

/// The limits a backend checks before it sends a request with media: a request over one is refused
/// with [`MediaError::TooLarge`] or [`MediaError::TooMany`], naming the limit, and nothing is sent.
///
/// Sizes are counted as sent: a part's bytes base64-encoded (a third larger than the file), a URL's
/// length, and for [`max_request_bytes`](Self::max_request_bytes) the text of every message too. Each
/// backend starts from its provider's documented figures ([`MediaLimits::openai`],
/// [`MediaLimits::anthropic`], [`MediaLimits::gemini`]; Ollama documents none); a builder's
/// `media_limits` replaces them, e.g. for an OpenAI-compatible server that takes more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MediaLimits {
    /// The most parts (images and PDFs) one request may carry.
    pub max_parts: Option<usize>,
    /// The largest image, in bytes as sent.
    pub max_image_bytes: Option<usize>,
    /// The largest PDF, in bytes as sent.
    pub max_pdf_bytes: Option<usize>,
    /// The largest request: every part as sent plus the text of every message, in bytes.
    pub max_request_bytes: Option<usize>,
}

impl MediaLimits {
    /// No limit at all.
    pub const fn none() -> Self {
        MediaLimits {
            max_parts: None,
            max_image_bytes: None,
            max_pdf_bytes: None,
            max_request_bytes: None,
        }
    }

    /// OpenAI's chat completions: at most 500 images and 50 MB of payload per request (the vision
    /// guide, <https://platform.openai.com/docs/guides/images-vision>), PDFs up to 32 MB of content in
    /// one request (the file inputs guide, <https://platform.openai.com/docs/guides/pdf-files>).
    pub const fn openai() -> Self {
        MediaLimits {
            max_parts: Some(500),
            max_image_bytes: None,
            max_pdf_bytes: Some(32 * MIB),
            max_request_bytes: Some(50 * MIB),
        }
    }

    /// Anthropic's Messages API: at most 100 images per request and 5 MB per image (the vision guide,
    /// <https://docs.anthropic.com/en/docs/build-with-claude/vision>), 32 MB per request (the PDF support
    /// guide, <https://docs.anthropic.com/en/docs/build-with-claude/pdf-support>, which also allows
    /// 100 PDF pages per request: pages are not counted here, the API refuses more).
    pub const fn anthropic() -> Self {
        MediaLimits {
            max_parts: Some(100),
            max_image_bytes: Some(5 * MIB),
            max_pdf_bytes: Some(32 * MIB),
            max_request_bytes: Some(32 * MIB),
        }
    }

    /// Gemini's inline data: a whole request, files and text, up to 20 MB, and up to 3,600 images
    /// (the image understanding guide, <https://ai.google.dev/gemini-api/docs/image-understanding>).
    /// Larger files go through Gemini's Files API, which this backend does not use yet: a request over
    /// the limit is refused instead.
    pub const fn gemini() -> Self {
        MediaLimits {
            max_parts: Some(3600),
            max_image_bytes: None,
            max_pdf_bytes: None,
            max_request_bytes: Some(20 * MIB),
        }
    }

    /// Sets [`max_parts`](Self::max_parts).
    pub fn with_max_parts(mut self, max: Option<usize>) -> Self {
        self.max_parts = max;
        self
    }

    /// Sets [`max_image_bytes`](Self::max_image_bytes).
    pub fn with_max_image_bytes(mut self, max: Option<usize>) -> Self {
        self.max_image_bytes = max;
        self
    }

    /// Sets [`max_pdf_bytes`](Self::max_pdf_bytes).
    pub fn with_max_pdf_bytes(mut self, max: Option<usize>) -> Self {
        self.max_pdf_bytes = max;
        self
    }

    /// Sets [`max_request_bytes`](Self::max_request_bytes).
    pub fn with_max_request_bytes(mut self, max: Option<usize>) -> Self {
        self.max_request_bytes = max;
        self
    }
}

/// What a backend's wire format takes of media (a [`Protocol`](super::Protocol)'s
/// [`MEDIA`](super::Protocol::MEDIA)): a request with a part of another form is refused before it is
/// sent, with `hint` in the error.
#[derive(Debug, Clone, Copy)]
pub struct MediaSupport {
    /// How errors name the backend.
    pub backend: &'static str,
    /// Images as bytes.
    pub images: bool,
    /// PDFs as bytes.
    pub pdfs: bool,
    /// Images as URLs.
    pub image_urls: bool,
    /// PDFs as URLs.
    pub pdf_urls: bool,
    /// What to do about a part it cannot take.
    pub hint: &'static str,
}

impl MediaSupport {
    /// A backend that takes no media at all.
    pub const fn none(backend: &'static str, hint: &'static str) -> Self {
        MediaSupport {
            backend,
            images: false,
            pdfs: false,
            image_urls: false,
            pdf_urls: false,
            hint,
        }
    }

    /// Whether `request` can go out: every part of a form this backend takes, in a user message, and
    /// within `limits`. Checked before a request is sent, so a refused part never reaches the server
    /// (and is never dropped).
    pub fn check(&self, request: &ChatRequest, limits: &MediaLimits) -> Result<(), MediaError> {
        let backend = self.backend;
        let mut count = 0;
        let mut request_bytes = request.system.as_ref().map_or(0, String::len);
        for message in &request.messages {
            request_bytes = request_bytes.saturating_add(message.content.len());
            for media in &message.media {
                count += 1;
                let what = media.describe(count);
                if message.role != Role::User {
                    return Err(MediaError::Unsupported {
                        backend,
                        what: format!("{what} in a {} message", role_name(message.role)),
                        hint: "attach media to user messages only".into(),
                    });
                }
                let image = media.media_type.is_image();
                let url = media.url().is_some();
                let taken = match (image, url) {
                    (true, false) => self.images,
                    (false, false) => self.pdfs,
                    (true, true) => self.image_urls,
                    (false, true) => self.pdf_urls,
                };
                if !taken {
                    let form = match (image, url) {
                        (true, false) => "images",
                        (false, false) => "PDF documents",
                        (true, true) => "images by URL",
                        (false, true) => "PDF documents by URL",
                    };
                    return Err(MediaError::Unsupported {
                        backend,
                        what: format!("{form} ({what})"),
                        hint: self.hint.into(),
                    });
                }
                let size = media.sent_bytes();
                let (limit, max) = if image {
                    ("max_image_bytes", limits.max_image_bytes)
                } else {
                    ("max_pdf_bytes", limits.max_pdf_bytes)
                };
                if let Some(max) = max.filter(|max| !url && size > *max) {
                    return Err(MediaError::TooLarge {
                        backend,
                        limit,
                        what,
                        size,
                        max,
                    });
                }
                request_bytes = request_bytes.saturating_add(size);
            }
        }
        if let Some(max) = limits.max_parts.filter(|max| count > *max) {
            return Err(MediaError::TooMany {
                backend,
                count,
                max,
            });
        }
        if let Some(max) = limits
            .max_request_bytes
            .filter(|max| count > 0 && request_bytes > *max)
        {
            return Err(MediaError::TooLarge {
                backend,
                limit: "max_request_bytes",
                what: format!("the request with its {count} media part(s)"),
                size: request_bytes,
                max,
            });
        }
        Ok(())
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn types_are_read_from_magic_bytes() {
        assert_eq!(MediaType::sniff(PNG), Some(MediaType::Png));
        assert_eq!(
            MediaType::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some(MediaType::Jpeg)
        );
        assert_eq!(MediaType::sniff(b"GIF89a.."), Some(MediaType::Gif));
        assert_eq!(
            MediaType::sniff(b"RIFF\x10\0\0\0WEBPVP8 "),
            Some(MediaType::Webp)
        );
        assert_eq!(MediaType::sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(
            MediaType::sniff(b"\xEF\xBB\xBF%PDF-1.4"),
            Some(MediaType::Pdf)
        );
        assert_eq!(MediaType::sniff(b"plain text"), None);
        assert_eq!(MediaType::sniff(b""), None);
        assert!(matches!(
            Media::sniff(b"hello".to_vec()),
            Err(MediaError::UnknownType { .. })
        ));
    }

    #[test]
    fn debug_shows_no_bytes() {
        let media = Media::png(vec![b'A'; 300]).with_name("a.png");
        let shown = format!("{media:?}");
        assert!(
            shown.contains("bytes: 300") && !shown.contains("AAAA"),
            "{shown}"
        );
        let url = Media::pdf_url("https://u:secret@example.com/a.pdf");
        assert!(!format!("{url:?}").contains("secret"));
    }

    #[test]
    fn a_message_written_out_keeps_its_text_not_its_files() {
        let message = Message::user("total?").with_media([Media::png(PNG.to_vec())]);
        let written = serde_json::to_value(&message).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"role": "user", "content": "total?"})
        );
    }

    #[test]
    fn sizes_count_as_sent() {
        assert_eq!(Media::png(vec![0; 3]).sent_bytes(), 4);
        assert_eq!(Media::png(vec![0; 4]).sent_bytes(), 8);
        assert_eq!(Media::png(vec![1, 2, 3]).base64().as_deref(), Some("AQID"));
        assert_eq!(
            Media::png(vec![1, 2, 3]).data_url(),
            "data:image/png;base64,AQID"
        );
    }

    fn request(media: Vec<Media>) -> ChatRequest {
        ChatRequest::new("text").with_message(Message::user("more").with_media(media))
    }

    const ALL: MediaSupport = MediaSupport {
        backend: "test",
        images: true,
        pdfs: true,
        image_urls: true,
        pdf_urls: true,
        hint: "",
    };

    #[test]
    fn limits_name_the_limit() {
        let limits = MediaLimits::none().with_max_image_bytes(Some(8));
        assert!(ALL
            .check(&request(vec![Media::png(vec![0; 6])]), &limits)
            .is_ok());
        let err = ALL
            .check(
                &request(vec![Media::png(vec![0; 7]).with_name("x.png")]),
                &limits,
            )
            .unwrap_err();
        assert!(matches!(
            err,
            MediaError::TooLarge {
                limit: "max_image_bytes",
                size: 12,
                max: 8,
                ..
            }
        ));
        assert!(err.to_string().contains("image 1 (\"x.png\")"), "{err}");
        // A PDF is not an image: the image limit does not apply to it.
        assert!(ALL
            .check(&request(vec![Media::pdf(vec![0; 7])]), &limits)
            .is_ok());
        let limits = MediaLimits::none().with_max_parts(Some(1));
        let two = request(vec![Media::png(vec![0]), Media::pdf(vec![0])]);
        assert!(matches!(
            ALL.check(&two, &limits),
            Err(MediaError::TooMany {
                count: 2,
                max: 1,
                ..
            })
        ));
        // The request's text counts toward its size.
        let limits = MediaLimits::none().with_max_request_bytes(Some(12));
        assert!(matches!(
            ALL.check(&two, &limits),
            Err(MediaError::TooLarge {
                limit: "max_request_bytes",
                size: 16,
                ..
            })
        ));
        // A request without media is never refused for its size.
        assert!(ALL.check(&request(Vec::new()), &limits).is_ok());
    }

    #[test]
    fn forms_a_backend_lacks_are_refused() {
        let images_only = MediaSupport {
            pdfs: false,
            image_urls: false,
            pdf_urls: false,
            hint: "convert it",
            ..ALL
        };
        let none = MediaLimits::none();
        let err = images_only
            .check(&request(vec![Media::pdf(vec![0])]), &none)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the test backend cannot take PDF documents (PDF 1); nothing was sent: convert it"
        );
        let url = Media::image_url(MediaType::Png, "https://example.com/a.png");
        assert!(images_only.check(&request(vec![url]), &none).is_err());
        let assistant = ChatRequest::new("t")
            .with_message(Message::assistant("a").with_media(vec![Media::png(vec![0])]));
        assert!(ALL.check(&assistant, &none).is_err());
    }
}
