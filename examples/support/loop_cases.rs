//! The types and texts of the loop measurements, shared by `examples/loops.rs` and the real-model tests
//! (`tests/llama/guard.rs`): the doc comments are part of the prompt, so both must use these exact types.
#![allow(dead_code)]

use llm_extract::Extract;
use serde::Deserialize;

/// An invoice in one line.
#[derive(Extract, Deserialize, Debug)]
pub struct Invoice {
    /// The invoice number as printed.
    pub invoice_number: String,
    /// Who is billed.
    pub customer: String,
    /// The amount due.
    pub total: f64,
    /// Whether it is paid.
    pub paid: bool,
}

/// One fact a text states.
#[derive(Extract, Deserialize, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Fact {
    /// Someone lives somewhere.
    Residence {
        /// Who.
        person: String,
        /// Where.
        city: String,
    },
    /// Someone works for an organisation.
    Employment {
        /// Who.
        person: String,
        /// For whom.
        employer: String,
    },
}

/// The cap of an answer with the guard off (see the module docs).
pub const OFF_MAX_TOKENS: u32 = 512;

/// Short invoices: the first five loop under greedy decoding (found with `-- probe`), the last two do
/// not.
pub const INVOICES: &[&str] = &[
    "INVOICE 000123 Acme Supplies -> Delta Corp, 1,200.00 USD due 2024-07-01",
    "Facture n° 2024-0310, client Dupont SARL, montant 1 500,00 EUR, réglée",
    "Invoice 000000482 for Blue Ocean Inc, total due $7,800.00",
    "INV 5 - Smith - 10 GBP",
    "Invoice 1250000 for Polar Freight, 12,500.00 EUR, settled",
    "Invoice INV-2291, customer Nova GmbH, amount due 1,250.00 EUR.",
    "Invoice no. 7781 issued to Mira Chen for 45 USD (unpaid).",
];

/// Invoices that did not loop in the probe (no false stop): run with `-- probe`.
pub const CALM_INVOICES: &[&str] = &[
    "Invoice 125 for Bolt Ltd: 300 EUR, paid.",
    "Inv. 100045 to Harbor Foods, total $89.90, settled on 3 May.",
    "Bill 2024-006: Kestrel Labs owes 12,000 GBP, not yet paid.",
    "Invoice 3300 - Pine & Co - 75.50 EUR - paid in full.",
    "Invoice #88 for Luis Ortega, 1,999 EUR, payment pending.",
];

/// More one-line invoices, searched for loops with `-- probe` (the guard on, so a loop costs little).
pub const PROBE_INVOICES: &[&str] = &[
    "Invoice number 4500012345, customer: Zenith Bank, total 99.99 EUR, paid",
    "Ref 2023/0042 - Baker & Sons - EUR 560 - settled",
    "Invoice 10000001 for Orion Ltd, 250,000.00 JPY, unpaid",
    "inv 77-2024-0001 / client Gamma SA / 3.450,00 EUR / paid by card",
    "Invoice 991 to Helen Park: 12.5 USD, overdue",
    "Our invoice 33-1-2024 to Kim Lee totals 640 USD and remains open.",
    "Invoice 120 for 120 USD to 120 Main St Ltd, paid",
];

/// Three facts each.
pub const FACT_TEXTS: &[&str] = &[
    "Anna lives in Oslo. Ben works for Siemens. Carla lives in Lima.",
    "Omar works for Nokia. Omar lives in Espoo. Lea works for Airbus.",
];
