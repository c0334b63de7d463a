//! PDF pages drawn as PNG images with the pure-Rust `hayro` rasterizer (feature `pdf-render`): what
//! lets a PDF without a text layer (a scan) go, page by page, to a backend that reads images but not
//! PDFs (see [`ConvertMedia`](crate::llm::ConvertMedia)).
//!
//! The document is checked against [`RenderLimits`] before a page is drawn: too many pages is an
//! error naming the limit (never a document cut short), and each page is drawn at the resolution
//! asked for, or smaller when that would pass [`RenderLimits::max_pixels`], so memory is bounded by
//! the limits, not by the file. The rasterizer runs under `catch_unwind`: a panic on a malformed file
//! is [`PdfError::Malformed`].

use super::pdf::PdfError;
use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::{LoadPdfError, Pdf};
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{render, PixmapSettings, RenderCache, RenderSettings};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The bounds PDF pages are drawn within.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RenderLimits {
    /// The most pages a document may have (all are drawn, or none).
    pub max_pages: usize,
    /// The resolution pages are drawn at, in dots per inch.
    pub dpi: f32,
    /// The most pixels one page may have: a larger page is drawn at a lower resolution.
    pub max_pixels: u64,
}

impl Default for RenderLimits {
    /// 20 pages, at 150 dpi (an A4 page is 1240 × 1754 pixels), at most 4 million pixels a page.
    fn default() -> Self {
        RenderLimits {
            max_pages: 20,
            dpi: 150.0,
            max_pixels: 4_000_000,
        }
    }
}

impl RenderLimits {
    /// At most `pages` pages.
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages;
        self
    }

    /// Pages drawn at `dpi` dots per inch.
    pub fn dpi(mut self, dpi: f32) -> Self {
        self.dpi = dpi;
        self
    }

    /// At most `pixels` pixels a page.
    pub fn max_pixels(mut self, pixels: u64) -> Self {
        self.max_pixels = pixels;
        self
    }
}

/// Each page of the PDF `bytes` as a PNG image, in order, within `limits`.
///
/// ```no_run
/// use llm_extract::document::render::{render_pages, RenderLimits};
///
/// let scan = std::fs::read("scan.pdf")?;
/// for (i, png) in render_pages(&scan, &RenderLimits::default())?.iter().enumerate() {
///     std::fs::write(format!("page-{}.png", i + 1), png)?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`PdfError::NotPdf`], [`PdfError::Encrypted`] (a password other than the empty one),
/// [`PdfError::Malformed`] (the file, or a page, could not be drawn), [`PdfError::TooManyPages`].
pub fn render_pages(bytes: &[u8], limits: &RenderLimits) -> Result<Vec<Vec<u8>>, PdfError> {
    let head = bytes.get(..bytes.len().min(1024)).unwrap_or_default();
    if memchr::memmem::find(head, b"%PDF-").is_none() {
        return Err(PdfError::NotPdf);
    }
    let drawn = catch_unwind(AssertUnwindSafe(|| draw(bytes, limits)));
    drawn.unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the rasterizer failed".to_owned());
        Err(PdfError::Malformed { reason })
    })
}

fn draw(bytes: &[u8], limits: &RenderLimits) -> Result<Vec<Vec<u8>>, PdfError> {
    let pdf = Pdf::new(bytes.to_vec()).map_err(|e| match e {
        LoadPdfError::Decryption(_) => PdfError::Encrypted,
        LoadPdfError::Invalid => PdfError::Malformed {
            reason: "the rasterizer could not read the file".to_owned(),
        },
    })?;
    let pages = pdf.pages();
    if pages.len() > limits.max_pages {
        return Err(PdfError::TooManyPages {
            pages: pages.len(),
            limit: limits.max_pages,
        });
    }
    let cache = RenderCache::new();
    let interpreter = InterpreterSettings::default();
    let settings = RenderSettings::default();
    let mut images = Vec::with_capacity(pages.len());
    for (index, page) in pages.iter().enumerate() {
        let (width, height) = page.render_dimensions();
        let (width, height) = (width.max(1.0), height.max(1.0));
        let mut scale = limits.dpi.max(1.0) / 72.0;
        let pixels = f64::from(width * scale) * f64::from(height * scale);
        // Over the bound, the page is drawn smaller and its sides rounded down (so it stays within).
        let bounded = pixels > limits.max_pixels as f64;
        if bounded {
            scale *= (limits.max_pixels as f64 / pixels).sqrt() as f32;
        }
        // The drawing surface is at most u16::MAX a side.
        let side = f32::from(u16::MAX);
        scale = scale.min(side / width).min(side / height);
        // The rasterizer truncates the scaled size: each side is aimed at the middle of its pixel
        // count, so a 612-point page at 150 dpi is 1275 pixels, not 1274.
        let aim = |points: f32| {
            let sized = points * scale;
            let pixels = if bounded {
                sized.floor()
            } else {
                sized.round()
            };
            (pixels.max(1.0) + 0.5) / points
        };
        let pixmap = render(
            page,
            &cache,
            &interpreter,
            &settings,
            &PixmapSettings {
                x_scale: aim(width),
                y_scale: aim(height),
                bg_color: WHITE,
            },
        );
        let png = pixmap.into_png().map_err(|e| PdfError::Malformed {
            reason: format!("page {}: {e}", index + 1),
        })?;
        images.push(png);
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_pdf_is_refused() {
        let error = render_pages(b"hello", &RenderLimits::default()).unwrap_err();
        assert!(matches!(error, PdfError::NotPdf), "{error}");
        let error = render_pages(b"%PDF-1.4\n garbage", &RenderLimits::default()).unwrap_err();
        assert!(matches!(error, PdfError::Malformed { .. }), "{error}");
    }

    #[test]
    fn an_a4_page_is_drawn_at_the_resolution_asked_within_the_pixel_bound() {
        let invoice = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/data/invoice.pdf"
        ))
        .unwrap();
        let size = |png: &[u8]| {
            let word =
                |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
            (word(16), word(20))
        };
        let pages = render_pages(&invoice, &RenderLimits::default()).unwrap();
        assert_eq!(pages.len(), 1);
        assert!(pages[0].starts_with(b"\x89PNG\r\n\x1a\n"));
        // A4 is 595 x 842 points: at 150 dpi, 1240 x 1754 pixels (rounded).
        assert_eq!(size(&pages[0]), (1240, 1754));
        let small = render_pages(&invoice, &RenderLimits::default().max_pixels(100_000)).unwrap();
        let (width, height) = size(&small[0]);
        assert!(
            u64::from(width) * u64::from(height) <= 100_000,
            "{width} x {height}"
        );
        let error = render_pages(&invoice, &RenderLimits::default().max_pages(0)).unwrap_err();
        assert!(
            matches!(error, PdfError::TooManyPages { pages: 1, limit: 0 }),
            "{error}"
        );
    }
}
