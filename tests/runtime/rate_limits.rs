//! A rate limit held under concurrency: sixteen extractions at once through one [`RateLimit`] over a
//! local OpenAI-compatible server, which writes down when each request reached it. The limit lets
//! four through at once, then one every quarter of its period; the server's count of the requests
//! that reached it within each stretch of time from the start can never exceed what the limit allows
//! (a lower bound on each arrival, which no scheduling delay can break), and a server that says it is
//! rate-limited pauses every caller.

use crate::support;

use llm_extract::extract::Extractor;
use llm_extract::llm::{OpenAiCompatible, RateLimit, RetryPolicy};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::types::Person;
use support::{Answer, Reply, TestServer};

/// A server answering a person, writing down when each request arrived.
fn timed_server(arrivals: &Arc<Mutex<Vec<Instant>>>) -> TestServer {
    let arrivals = Arc::clone(arrivals);
    TestServer::start(move |request| {
        arrivals.lock().unwrap().push(Instant::now());
        Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_extractions_keep_to_the_limit_at_the_server() {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = timed_server(&arrivals);
    let period = Duration::from_millis(800);
    let http = OpenAiCompatible::builder(server.url(), "m")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let llm = Arc::new(RateLimit::new(http).requests_per(4, period));
    let start = Instant::now();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let llm = Arc::clone(&llm);
            tokio::spawn(async move { Extractor::new(&*llm).extract::<Person>("Ada, 36").await })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap().value.age, 36);
    }
    let mut arrivals = arrivals.lock().unwrap().clone();
    arrivals.sort();
    assert_eq!(arrivals.len(), 16);
    // Four at once, then one every period / 4: by `start + j * period / 4` the server can have seen
    // at most 4 + j requests, so the k-th (from 0) arrived no sooner than (k - 3) quarters in.
    let quarter = period / 4;
    for (k, at) in arrivals.iter().enumerate().skip(4) {
        let earliest = quarter * (k as u32 - 3);
        assert!(
            at.duration_since(start) >= earliest,
            "request {k} reached the server {:?} after the start, before {earliest:?}",
            at.duration_since(start)
        );
    }
    for j in 0..16u32 {
        let by = start + quarter * j;
        let seen = arrivals.iter().filter(|at| **at < by).count();
        assert!(
            seen <= 4 + j as usize,
            "{seen} requests before {j} quarters"
        );
    }
}

#[tokio::test]
async fn a_server_that_says_it_is_rate_limited_pauses_every_caller() {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let first = Arc::new(Mutex::new(true));
    let server = {
        let arrivals = Arc::clone(&arrivals);
        TestServer::start(move |request| {
            arrivals.lock().unwrap().push(Instant::now());
            if std::mem::take(&mut *first.lock().unwrap()) {
                // OpenAI's reset header, no Retry-After.
                return Reply::openai_error(429, "rate limit reached")
                    .with_header("x-ratelimit-remaining-requests", "0")
                    .with_header("x-ratelimit-reset-requests", "400ms");
            }
            Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
        })
    };
    let http = OpenAiCompatible::builder(server.url(), "m")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let llm = RateLimit::new(http).requests_per_minute(6000);
    let started = Instant::now();
    assert!(Extractor::new(&llm).extract::<Person>("x").await.is_err());
    for _ in 0..3 {
        Extractor::new(&llm)
            .extract::<Person>("Ada, 36")
            .await
            .unwrap();
    }
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 4);
    // Nobody asked again before the reset the server named.
    for at in &arrivals[1..] {
        assert!(
            at.duration_since(started) >= Duration::from_millis(400),
            "{:?}",
            at.duration_since(started)
        );
    }
}
