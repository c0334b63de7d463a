//! The four kinds of document in the evaluation set, one type each.

use llm_extract::Extract;
use serde::{Deserialize, Serialize};

/// An invoice a text describes.
#[derive(Extract, Deserialize, Serialize, Debug, Clone)]
pub struct Invoice {
    /// The invoice's own number or reference (not the customer's number).
    pub invoice_number: String,
    /// Who is billed: the customer's name (a person or a company).
    pub customer: String,
    /// The total amount of the invoice.
    pub total: f64,
    /// The currency of the total.
    pub currency: Currency,
    /// Whether the invoice has been paid.
    pub paid: bool,
    /// When payment is due, as YYYY-MM-DD, if the text gives a date.
    #[extract(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub due_date: Option<String>,
}

/// A currency, as its ISO 4217 code.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, Copy)]
#[serde(rename_all = "UPPERCASE")]
pub enum Currency {
    /// Euro (€).
    Eur,
    /// US dollar ($).
    Usd,
    /// Pound sterling (£).
    Gbp,
    /// Swiss franc.
    Chf,
}

/// A person to contact.
#[derive(Extract, Deserialize, Serialize, Debug, Clone)]
pub struct Contact {
    /// The person's full name.
    pub name: String,
    /// Their email address, if the text gives one.
    pub email: Option<String>,
    /// Their phone number as written, if the text gives one.
    pub phone: Option<String>,
    /// The company they work for, if the text names one.
    pub company: Option<String>,
}

/// An event a text announces.
#[derive(Extract, Deserialize, Serialize, Debug, Clone)]
pub struct Event {
    /// What the event is called.
    pub title: String,
    /// The day it takes place, as YYYY-MM-DD, if the text gives a date.
    #[extract(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub date: Option<String>,
    /// When it starts, as HH:MM on a 24-hour clock, if the text says.
    #[extract(pattern = "^[0-9]{2}:[0-9]{2}$")]
    pub time: Option<String>,
    /// The city it takes place in, if the text names one.
    pub city: Option<String>,
}

/// A product review.
#[derive(Extract, Deserialize, Serialize, Debug, Clone)]
pub struct Review {
    /// The product reviewed.
    pub product: String,
    /// The rating in stars from 1 to 5, if the text gives one.
    #[extract(minimum = 1, maximum = 5)]
    pub rating: Option<u8>,
    /// The reviewer's overall opinion.
    pub sentiment: Sentiment,
    /// Whether the reviewer recommends the product, if they say.
    pub recommends: Option<bool>,
}

/// An overall opinion.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Sentiment {
    /// Mostly good.
    Positive,
    /// Mostly bad.
    Negative,
    /// Good and bad in similar measure.
    Mixed,
}
