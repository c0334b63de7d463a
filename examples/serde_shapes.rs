//! One extraction per shape of serde's data model the derive covers: each type's compact format
//! instructions, and what the model wrote for a one-sentence text, as a Markdown table (BENCHMARKS.md,
//! "serde shapes on the embedded model").
//!
//! ```text
//! cargo run --release --features llama-cpp --example serde_shapes         # the embedded model
//! OLLAMA_HOST=localhost:11434 cargo run --example serde_shapes           # an Ollama server
//! ```

// The types exist to be extracted and printed with `Debug`, which dead-code analysis does not count.
#![allow(dead_code)]

#[path = "support/backend.rs"]
mod backend;

use llm_extract::llm::Llm;
use llm_extract::{Extract, Extractor, Schema};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt::Debug;
use std::net::IpAddr;

/// How an order was paid (externally tagged: serde's default).
#[derive(Extract, Deserialize, Debug)]
enum Payment {
    /// Paid in cash.
    Cash,
    /// Paid by card.
    Card {
        /// The last four digits of the card.
        last4: String,
    },
    /// Paid by check, with its number.
    Check(String),
}

/// An order and its payment.
#[derive(Extract, Deserialize, Debug)]
struct Order {
    /// What was bought.
    item: String,
    /// How it was paid.
    payment: Payment,
}

/// A shape (internally tagged).
#[derive(Extract, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Figure {
    /// A circle.
    Circle {
        /// Its radius.
        radius: f64,
    },
    /// A square.
    Square {
        /// Its side.
        side: f64,
    },
}

/// The figure a text draws.
#[derive(Extract, Deserialize, Debug)]
struct Drawing {
    /// The figure.
    figure: Figure,
}

/// A session event (adjacently tagged).
#[derive(Extract, Deserialize, Debug)]
#[serde(tag = "t", content = "c")]
enum Event {
    /// Someone logged in: their user name.
    Login(String),
    /// Someone logged out.
    Logout,
}

/// What happened.
#[derive(Extract, Deserialize, Debug)]
struct Log {
    /// The event.
    event: Event,
}

/// An amount written as a number or as words (untagged).
#[derive(Extract, Deserialize, Debug)]
#[serde(untagged)]
enum Amount {
    /// A number.
    Number(f64),
    /// Words.
    Text(String),
}

/// A price.
#[derive(Extract, Deserialize, Debug)]
struct Price {
    /// The amount.
    amount: Amount,
}

/// An email address (a newtype struct).
#[derive(Extract, Deserialize, Debug)]
struct Email(String);

/// How to reach someone.
#[derive(Extract, Deserialize, Debug)]
struct Contact {
    /// The address.
    email: Email,
}

/// A point (a tuple struct): x, then y.
#[derive(Extract, Deserialize, Debug)]
struct Point(i64, i64);

/// A pin on a map.
#[derive(Extract, Deserialize, Debug)]
struct Pin {
    /// Where it is.
    point: Point,
}

/// A section of a report, with its subsections (a recursive type).
#[derive(Extract, Deserialize, Debug)]
struct Section {
    /// The title.
    title: String,
    /// Its subsections.
    sections: Vec<Section>,
}

/// A person.
#[derive(Extract, Deserialize, Debug)]
struct Person {
    /// The first name.
    name: String,
}

/// One page of results (a generic type).
#[derive(Extract, Deserialize, Debug)]
struct Page<T> {
    /// The results.
    items: Vec<T>,
    /// How many there are.
    total: u32,
}

/// Where someone lives.
#[derive(Extract, Deserialize, Debug)]
struct Address {
    /// The city.
    city: String,
}

/// A resident (an address flattened into it).
#[derive(Extract, Deserialize, Debug)]
struct Resident {
    /// The first name.
    name: String,
    /// The address, its fields beside the name.
    #[serde(flatten)]
    address: Address,
}

/// A day of the week.
#[derive(Extract, Deserialize, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
enum Day {
    /// Monday.
    Monday,
    /// Tuesday.
    Tuesday,
    /// Wednesday.
    Wednesday,
    /// Thursday.
    Thursday,
    /// Friday.
    Friday,
}

/// Hours worked per day (a map keyed by an enum).
#[derive(Extract, Deserialize, Debug)]
struct Timesheet {
    /// The hours of each day worked.
    hours: HashMap<Day, u32>,
}

/// A server (a well-known foreign type).
#[derive(Extract, Deserialize, Debug)]
struct Server {
    /// Its IP address.
    ip: IpAddr,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// One row: the shape, the type's format instructions, the text, and the value or the error.
async fn row<T: Extract + Schema + Debug>(llm: &dyn Llm, shape: &str, text: &str) {
    let instructions = T::format_instructions()
        .split_whitespace()
        .collect::<Vec<_>>();
    let outcome = match Extractor::new(llm).extract::<T>(text).await {
        Ok(out) => format!(
            "`{:?}` ({} tokens)",
            out.value, out.report.usage.completion_tokens
        ),
        Err(error) => format!("error: {}", error.kind()),
    };
    println!(
        "| {shape} | `{}` | {text} | {} |",
        instructions.join(" ").replace('|', "\\|"),
        outcome.replace('|', "\\|")
    );
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    println!("| shape | format instructions | text | value |");
    println!("|---|---|---|---|");
    row::<Order>(
        &*llm,
        "externally tagged enum",
        "Paid for the lamp by card ending 4242.",
    )
    .await;
    row::<Drawing>(&*llm, "internally tagged enum", "A circle of radius 2.").await;
    row::<Log>(&*llm, "adjacently tagged enum", "The user ada logged in.").await;
    row::<Price>(&*llm, "untagged enum", "The price is 12.5.").await;
    row::<Contact>(&*llm, "newtype struct", "Write to ada@example.com.").await;
    row::<Pin>(&*llm, "tuple struct", "The pin is at x 3, y 4.").await;
    let report = "Introduction, with a part Background that has a subpart History.";
    row::<Section>(&*llm, "recursive type", report).await;
    row::<Page<Person>>(&*llm, "generic type", "Two people: Ada and Alan.").await;
    row::<Resident>(&*llm, "flatten", "Ada lives in London.").await;
    let hours = "Monday 8 hours, Friday 6 hours.";
    row::<Timesheet>(&*llm, "map keyed by an enum", hours).await;
    row::<Server>(&*llm, "foreign type (IpAddr)", "The server is at 10.0.0.7.").await;
    Ok(())
}
