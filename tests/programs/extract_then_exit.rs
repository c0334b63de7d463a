//! A user's program in miniature, run by `tests/llama/exit.rs`: an extraction with the embedded engine
//! from `#[tokio::main]`, the result printed, then `std::process::exit` (no destructor runs, the runtime
//! is not shut down). With `stream` as first argument it stops reading a streamed answer after its first
//! piece and exits while the engine may still be generating; with `count` it exits while other threads
//! count tokens.

use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::{llm::ChatRequest, Extract, Extractor, Llm};
use serde::Deserialize;

/// The person and the company a text names.
#[derive(Extract, Deserialize, Debug)]
struct Extracted {
    /// The person's full name.
    person: String,
    /// The company's name.
    company: String,
}

const TEXT: &str = "Satya Nadella is the chief executive of Microsoft.";

#[tokio::main]
async fn main() {
    let llm = match LlamaCpp::from_env() {
        Ok(llm) => llm,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    if std::env::args().nth(1).as_deref() == Some("count") {
        // Threads that count tokens without pause, as a chunker does, while the program exits.
        let text = TEXT.repeat(2_000);
        for _ in 0..2 {
            let (llm, text) = (llm.clone(), text.clone());
            std::thread::spawn(move || loop {
                let _ = llm.count_tokens(&text);
            });
        }
        println!("{:?}", llm.count_tokens(&text));
        std::process::exit(0);
    }
    if std::env::args().nth(1).as_deref() == Some("stream") {
        use futures_util::StreamExt;
        let request = ChatRequest::new(TEXT).with_max_tokens(200);
        match llm.chat_stream(request).await {
            Ok(mut stream) => {
                let first = stream.next().await;
                println!("{first:?}");
                std::process::exit(0);
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    match Extractor::new(&llm)
        .max_tokens(64)
        .extract::<Extracted>(TEXT)
        .await
    {
        Ok(extracted) => {
            println!("{} {}", extracted.value.person, extracted.value.company);
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
