//! The per-field strategy on the embedded engine: every copied string is a span of the text (the
//! grammar can only copy), numbers and dates are read from the copies by code, enums and booleans are
//! chosen by the model's likelihood with their probability as the field's confidence, and each field's
//! cost is reported.
#![cfg(feature = "llama-cpp")]

use crate::llama_common;

use llama_common::model;
use llm_extract::extract::Strategy;
use llm_extract::{Extract, Extractor};
use serde::Deserialize;

/// The currency of an amount.
#[derive(Extract, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    /// Euros.
    Eur,
    /// US dollars.
    Usd,
}

/// An invoice a text describes.
#[derive(Extract, Deserialize, Debug)]
struct Invoice {
    /// The customer's name.
    customer: String,
    /// The total amount.
    total: f64,
    /// The currency of the total.
    currency: Currency,
    /// Whether the invoice has been paid.
    paid: bool,
    /// When payment is due, as YYYY-MM-DD, if the text gives a date.
    due_date: Option<String>,
}

const TEXT: &str =
    "Invoice INV-2041 for Harbor Logistics Ltd: total due 1,250.00 EUR by 15 March 2025. \
Status: unpaid.";

#[tokio::test]
async fn an_invoice_field_by_field() {
    let out = Extractor::new(model())
        .strategy(Strategy::PerField)
        .extract::<Invoice>(TEXT)
        .await
        .unwrap();
    let invoice = out.value;
    eprintln!("{invoice:?}\n{:#?}", out.report.fields);
    // Copied: a span of the text, by construction (the model copies on past the name; the copy is cut
    // at its first clause break, not before the name).
    assert!(TEXT.contains(&invoice.customer), "{invoice:?}");
    assert!(
        invoice.customer.ends_with("Harbor Logistics Ltd"),
        "{invoice:?}"
    );
    assert_eq!(invoice.total, 1250.0, "read from the copy by code");
    // A date, when one is found, is read as ISO by code: never the text's own form.
    if let Some(date) = &invoice.due_date {
        assert_eq!(date, "2025-03-15");
    }
    // Chosen by likelihood: the most likely of two options, its probability the confidence.
    for path in ["/currency", "/paid"] {
        let p = out.report.confidence[path];
        assert!(
            (0.5..=1.0).contains(&p),
            "{path} ({:?}, paid {}): {p}",
            invoice.currency,
            invoice.paid
        );
    }
    // A cost per field, all five.
    assert_eq!(out.report.fields.len(), 5, "{:#?}", out.report.fields);
    assert!(out.report.usage.total() > 0);
}
