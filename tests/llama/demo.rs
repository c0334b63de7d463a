//! The demo's types on the real model (feature `llama-cpp`; the model `scripts/fetch-model.sh` caches):
//! kinds chosen by likelihood, and the quickstart's checked properties.
#![cfg(feature = "llama-cpp")]

#[allow(dead_code)]
#[path = "../../examples/quickstart.rs"]
mod quickstart;

use llm_extract::extract::Chooser;
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::{ChatRequest, Likelihood, Message};
use quickstart::Kind;

fn model() -> LlamaCpp {
    LlamaCpp::from_env().unwrap_or_else(|e| {
        panic!("these tests need a GGUF model: {e} (run scripts/fetch-model.sh)")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_scores_continuations_by_their_tokens() {
    let llm = model();
    let request = ChatRequest::new("Name a colour.").with_message(Message::assistant("The sky is"));
    let options = [" blue".to_string(), " a refrigerator manual".to_string()];
    let first = llm.log_likelihoods(&request, &options).await.unwrap();
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|s| *s < 0.0 && s.is_finite()), "{first:?}");
    assert!(first[0] > first[1], "{first:?}");
    // Nothing is sampled: the same scores each time.
    assert_eq!(
        llm.log_likelihoods(&request, &options).await.unwrap(),
        first
    );
}

/// Texts written for this test alone (in no data set of the demo, and no name in any), with every
/// person and company they name, by careful reading.
const UNSEEN: [(&str, &[(&str, Kind)]); 3] = [
    (
        "Howard Schultz built Starbucks. Indra Nooyi ran PepsiCo for twelve years.",
        &[
            ("Howard Schultz", Kind::Person),
            ("Starbucks", Kind::Company),
            ("Indra Nooyi", Kind::Person),
            ("PepsiCo", Kind::Company),
        ],
    ),
    (
        "Phil Knight co-founded Nike, and Ursula Burns once led Xerox.",
        &[
            ("Phil Knight", Kind::Person),
            ("Nike", Kind::Company),
            ("Ursula Burns", Kind::Person),
            ("Xerox", Kind::Company),
        ],
    ),
    (
        "Yvon Chouinard started Patagonia in a shed.",
        &[
            ("Yvon Chouinard", Kind::Person),
            ("Patagonia", Kind::Company),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kinds_chosen_by_likelihood_on_a_text_the_demo_was_not_tuned_on() {
    let llm = model();
    for (text, gold) in UNSEEN {
        let chooser = Chooser::new(&llm, text);
        for &(name, kind) in gold {
            let choice = chooser.choose::<Kind>(name).await.unwrap();
            assert_eq!(choice.value, kind, "{name}: {choice:?}");
            assert!(choice.probability > 0.5, "{name}: {choice:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_lists_each_name_once_from_the_text_with_its_kind() {
    // The demo's own text: every name once, each with its right kind (BENCHMARKS.md, "The demo").
    let llm = model();
    let text = "Tim Cook runs Apple. Lisa Su leads AMD. Jensen Huang co-founded Nvidia.";
    let found = quickstart::people_and_companies(&llm, Some(&llm), text)
        .await
        .unwrap();
    let listed: Vec<(&str, Kind)> = found
        .names
        .iter()
        .map(|n| (n.name.as_str(), n.kind))
        .collect();
    assert_eq!(
        listed,
        [
            ("Tim Cook", Kind::Person),
            ("Apple", Kind::Company),
            ("Lisa Su", Kind::Person),
            ("AMD", Kind::Company),
            ("Jensen Huang", Kind::Person),
            ("Nvidia", Kind::Company),
        ],
        "{:?}",
        found.names
    );
    // Every kind is scored, and a right kind is not shown as doubtful.
    for named in &found.names {
        assert!(
            named.probability.is_some_and(|p| p >= quickstart::SURE),
            "{named:?}"
        );
    }
}
