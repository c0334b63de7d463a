//! [`ConvertMedia`]: a backend that converts the PDFs it cannot take instead of refusing them, when
//! the caller allows it by adding this layer (feature `pdf`).
//!
//! Every backend checks a request's media before sending anything ([`MediaError::Unsupported`]); this
//! layer asks the inner backend first and, only on that refusal, converts each PDF part given as
//! bytes and asks again:
//!
//! - a PDF with a text layer becomes its text ([`document::pdf`](crate::document::pdf)), put before
//!   the message's own text between two marker lines that name the file and its pages;
//! - a PDF without one (a scan) becomes one PNG image per page
//!   ([`document::render`](crate::document::render), feature `pdf-render`), named `"scan.pdf, page
//!   2"`, for a backend that reads images; without that feature, or when the backend refuses images
//!   too, the request is refused with an error that says so.
//!
//! Nothing is dropped: a part is replaced by what it converted to, or the request is refused. Images
//! and PDFs by URL are never converted (the layer does not fetch them); their refusal stands. Each
//! conversion is logged (`tracing`, at `info`), with the part's name and size, never its content.

use crate::document::pdf::{self, PdfError};
use crate::document::PAGE_BREAK;
use crate::llm::{
    ChatRequest, ChatResponse, ChatStream, Llm, LlmError, Media, MediaError, MediaType,
};
use futures_util::future::BoxFuture;

/// A backend that converts the PDFs it cannot take instead of refusing them.
///
/// The inner backend is asked first; only when it refuses a medium before sending anything
/// ([`MediaError::Unsupported`]) is each PDF given as bytes converted, and the request asked again: a
/// PDF with a text layer becomes its text, put before the message's own text between two marker lines
/// that name the file and its pages; a scan becomes one PNG image per page (feature `pdf-render`),
/// named `"scan.pdf, page 2"`. Without that feature, or when the backend refuses images too, the
/// request is refused with an error that says so. Nothing is dropped; images and PDFs by URL are never
/// converted (their refusal stands). Each conversion is logged (`tracing`, at `info`) with the part's
/// name and size, never its content.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, ConvertMedia, Media};
/// use llm_extract::llm::Llm;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // A backend that takes no media at all: it refuses, as the embedded engine does.
/// let text_only = from_fn(|request: ChatRequest| async move {
///     if request.messages.iter().any(|m| !m.media.is_empty()) {
///         return Err(llm_extract::llm::MediaError::Unsupported {
///             backend: "text-only",
///             what: "PDF documents (PDF 1)".into(),
///             hint: "send the text".into(),
///         }
///         .into());
///     }
///     Ok(ChatResponse::new(request.messages[0].content.clone()))
/// });
/// # let pdf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data/invoice.pdf")).unwrap();
/// let mut request = ChatRequest::new("Who is billed?");
/// request.messages[0].media.push(Media::pdf(pdf).with_name("invoice.pdf"));
/// let answer = ConvertMedia::new(text_only).chat(request).await?;
/// assert!(answer.text.contains("Northwind Traders Ltd"));
/// assert!(answer.text.ends_with("Who is billed?"));
/// # Ok::<(), llm_extract::llm::LlmError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ConvertMedia<L> {
    inner: L,
}

impl<L: Llm> ConvertMedia<L> {
    /// `inner`, converting the PDFs it refuses.
    pub fn new(inner: L) -> Self {
        ConvertMedia { inner }
    }

    /// The backend underneath.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

/// Whether `error` is a refusal of a medium, before anything was sent.
fn refused(error: &LlmError) -> bool {
    matches!(error, LlmError::Media(MediaError::Unsupported { .. }))
}

/// The backend an unsupported-media error names.
fn backend_of(error: &LlmError) -> &'static str {
    match error {
        LlmError::Media(MediaError::Unsupported { backend, .. }) => backend,
        _ => "the",
    }
}

/// What a PDF was converted to.
enum Converted {
    Text(String),
    /// Only the renderer (feature `pdf-render`) draws pages.
    #[cfg_attr(not(feature = "pdf-render"), allow(dead_code))]
    Pages(Vec<Media>),
}

/// `request` with every PDF given as bytes converted, or `None` when it has none. A PDF that can be
/// neither read nor drawn is an error naming it.
fn convert(request: &ChatRequest, backend: &'static str) -> Result<Option<ChatRequest>, LlmError> {
    let mut converted = request.clone();
    let mut any = false;
    let mut number = 0;
    for message in &mut converted.messages {
        let mut kept = Vec::with_capacity(message.media.len());
        let mut texts = Vec::new();
        for media in std::mem::take(&mut message.media) {
            number += 1;
            let Some(bytes) = media
                .data()
                .filter(|_| media.media_type() == MediaType::Pdf)
            else {
                kept.push(media);
                continue;
            };
            let name = media
                .name()
                .map_or_else(|| format!("PDF {number}"), |n| format!("PDF {n:?}"));
            any = true;
            match pdf_to(bytes, &name) {
                Ok(Converted::Text(text)) => {
                    tracing::info!(part = %name, bytes = bytes.len(), "PDF sent as its text");
                    texts.push(text);
                }
                Ok(Converted::Pages(pages)) => {
                    tracing::info!(part = %name, pages = pages.len(), "PDF sent as page images");
                    kept.extend(pages);
                }
                Err(reason) => {
                    return Err(MediaError::Unsupported {
                        backend,
                        what: format!("PDF documents ({name})"),
                        hint: format!("it could not be converted either: {reason}"),
                    }
                    .into())
                }
            }
        }
        message.media = kept;
        if !texts.is_empty() {
            texts.push(std::mem::take(&mut message.content));
            message.content = texts.join("\n\n");
        }
    }
    Ok(any.then_some(converted))
}

/// A PDF as its text between marker lines, or (a scan, with `pdf-render`) as page images.
fn pdf_to(bytes: &[u8], name: &str) -> Result<Converted, String> {
    match pdf::read(bytes) {
        Ok(pages) => {
            let text = pages.text().replace(PAGE_BREAK, "\n\n");
            Ok(Converted::Text(format!(
                "[{name}, its text, {} page(s)]\n{}\n[end of {name}]",
                pages.len(),
                text.trim_end()
            )))
        }
        Err(PdfError::NoText { pages }) => scan(bytes, name, pages),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(feature = "pdf-render")]
fn scan(bytes: &[u8], name: &str, _pages: usize) -> Result<Converted, String> {
    use crate::document::render::{render_pages, RenderLimits};
    let images = render_pages(bytes, &RenderLimits::default()).map_err(|e| e.to_string())?;
    Ok(Converted::Pages(
        images
            .into_iter()
            .enumerate()
            .map(|(i, png)| Media::png(png).with_name(format!("{name}, page {}", i + 1)))
            .collect(),
    ))
}

#[cfg(not(feature = "pdf-render"))]
fn scan(_bytes: &[u8], _name: &str, pages: usize) -> Result<Converted, String> {
    Err(format!(
        "its {pages} page(s) have no text layer (a scan), and pages are drawn as images only with \
         the feature `pdf-render`: use a backend that reads PDFs, or run it through OCR first"
    ))
}

impl<L: Llm> ConvertMedia<L> {
    /// `request` converted after the inner backend refused it with `error`; the error itself when
    /// there is nothing to convert.
    fn converted(&self, request: &ChatRequest, error: LlmError) -> Result<ChatRequest, LlmError> {
        match convert(request, backend_of(&error))? {
            Some(request) => Ok(request),
            None => Err(error),
        }
    }
}

impl<L: Llm> Llm for ConvertMedia<L> {
    pass_through!(dialect constrains_json_lines constrains_grounding count_tokens describe gives_logprobs likelihood);

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            match self.inner.chat(request.clone()).await {
                Err(error) if refused(&error) => {
                    let converted = self.converted(&request, error)?;
                    self.inner.chat(converted).await
                }
                other => other,
            }
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            match self.inner.chat_stream(request.clone()).await {
                Err(error) if refused(&error) => {
                    let converted = self.converted(&request, error)?;
                    self.inner.chat_stream(converted).await
                }
                other => other,
            }
        })
    }
}

/// PDFs with known pages, as the integration tests write them.
#[cfg(test)]
#[path = "../../../../tests/support/pdf_writer.rs"]
mod pdf_writer;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::from_fn;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A backend that takes images but no PDFs, as Ollama; counts the requests it answers.
    fn images_only(answered: Arc<AtomicUsize>) -> impl Llm {
        from_fn(move |request: ChatRequest| {
            let pdfs = request
                .messages
                .iter()
                .flat_map(|m| &m.media)
                .any(|m| m.media_type() == MediaType::Pdf);
            if !pdfs {
                answered.fetch_add(1, Ordering::SeqCst);
            }
            let media: Vec<String> = request.messages[0]
                .media
                .iter()
                .map(|m| m.name().unwrap_or_default().to_owned())
                .collect();
            async move {
                if pdfs {
                    return Err(MediaError::Unsupported {
                        backend: "images-only",
                        what: "PDF documents (PDF 1)".into(),
                        hint: "send images".into(),
                    }
                    .into());
                }
                Ok(ChatResponse::new(media.join("|")))
            }
        })
    }

    fn with_scan() -> ChatRequest {
        let mut request = ChatRequest::new("Read it.");
        let scan = super::pdf_writer::write_pdf(&[&[], &[], &[]], true);
        request.messages[0]
            .media
            .push(Media::pdf(scan).with_name("scan.pdf"));
        request
    }

    #[cfg(feature = "pdf-render")]
    #[tokio::test]
    async fn a_scan_goes_as_its_pages_drawn() {
        let answered = Arc::new(AtomicUsize::new(0));
        let llm = ConvertMedia::new(images_only(answered.clone()));
        let answer = llm.chat(with_scan()).await.unwrap();
        assert_eq!(
            answer.text,
            "PDF \"scan.pdf\", page 1|PDF \"scan.pdf\", page 2|PDF \"scan.pdf\", page 3"
        );
        assert_eq!(answered.load(Ordering::SeqCst), 1);
    }

    #[cfg(not(feature = "pdf-render"))]
    #[tokio::test]
    async fn a_scan_without_the_renderer_is_refused_saying_what_to_do() {
        let answered = Arc::new(AtomicUsize::new(0));
        let llm = ConvertMedia::new(images_only(answered.clone()));
        let error = llm.chat(with_scan()).await.unwrap_err().to_string();
        assert!(
            error.contains("PDF \"scan.pdf\"") && error.contains("pdf-render"),
            "{error}"
        );
        assert_eq!(answered.load(Ordering::SeqCst), 0, "nothing was answered");
    }
}
