//! A document read page by page ([`Pages`], e.g. a PDF's text layer): extracted as any long text is
//! ([`Extractor::extract_document`]: chunks, which prefer to end at a page break, passes, merge,
//! grounding), then each span located on its page ([`PagedDocument::pages`]).

use crate::document::ReadError;
use crate::document::{PageSpan, Pages};
use crate::extract::document::items::Document;
use crate::extract::Extract;
use crate::extract::Extractor;
use crate::llm::Llm;

/// A [`Document`] of a paged text, with the page of each span.
#[derive(Debug)]
#[non_exhaustive]
pub struct PagedDocument<T> {
    /// The items, chunks and reports, with spans at offsets into [`Pages::text`].
    pub document: Document<T>,
    /// For each of the document's items, in order, where each of its spans is on the pages (`None` for
    /// a value that was not found): `pages[i][j]` locates `document.items[i].spans[j]`.
    pub pages: Vec<Vec<Option<PageSpan>>>,
}

impl<L: Llm> Extractor<L> {
    /// Every item of `T` in a document read page by page, as [`Extractor::extract_document`] finds
    /// them in [`Pages::text`], with the page of each span and its offsets within that page's text.
    ///
    /// ```
    /// use llm_extract::document::Pages;
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Total {
    ///     #[extract(grounded, key)]
    ///     amount: String,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|_| async { Ok(ChatResponse::new(r#"{"items": [{"amount": "42.00 EUR"}]}"#)) });
    /// let pages = Pages::from_pages(["Invoice 7", "Total due: 42.00 EUR"]);
    /// let doc = Extractor::new(llm).extract_pages::<Total>(&pages).await?;
    /// let at = doc.pages[0][0].as_ref().unwrap();
    /// assert_eq!(at.page, 2);
    /// assert_eq!(&pages.page_text(2).unwrap()[at.bytes.clone()], "42.00 EUR");
    /// # Ok::<(), llm_extract::document::ReadError>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_pages<T: Extract>(
        &self,
        pages: &Pages,
    ) -> Result<PagedDocument<T>, ReadError> {
        let document = self.extract_document::<T>(pages.text()).await?;
        let located = pages.locate_items(&document.items);
        Ok(PagedDocument {
            document,
            pages: located,
        })
    }
}
