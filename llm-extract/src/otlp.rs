//! Exporting the extraction spans over OTLP (the `otlp` feature): the `tracing` spans of every
//! extraction and attempt, with their OpenTelemetry GenAI attributes (`extract/telemetry.rs`), sent to
//! an OpenTelemetry collector over OTLP/HTTP in protobuf, by a batch exporter on a thread of its own.
//!
//! The spans carry no key (a backend's address has its credentials redacted), and no message content
//! unless the extractor was asked for it
//! ([`Extractor::trace_content`](crate::extract::Extractor::trace_content)), so what is exported holds
//! none either. Span names come from `otel.name`
//! (`chat {model}` for an attempt, `extract {schema}` for an extraction), kinds from `otel.kind`.
//!
//! ```no_run
//! # fn main() -> Result<(), llm_extract::otlp::OtlpError> {
//! // Export to a collector, and make its layer the process's subscriber.
//! let otlp = llm_extract::otlp::Otlp::new("http://127.0.0.1:4318/v1/traces", "my-service")?;
//! otlp.install()?;
//! // ... extract ...
//! otlp.shutdown()?; // sends what is still waiting
//! # Ok(()) }
//! ```

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// The exporter could not be built, installed or flushed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The OTLP exporter could not be built (a bad endpoint URL, say).
    #[error("cannot build the OTLP exporter: {message}")]
    Build {
        /// What the exporter library said.
        message: String,
    },
    /// Another subscriber is already the process's default.
    #[error(
        "cannot install the OTLP layer: another tracing subscriber is already installed; add \
         Otlp::layer to that subscriber instead"
    )]
    Installed,
    /// Sending the spans still waiting failed (the collector unreachable, say).
    #[error("cannot send the remaining spans to the OTLP collector: {message}")]
    Flush {
        /// What the exporter library said.
        message: String,
    },
}

/// An OTLP span exporter and its tracer provider: [`layer`](Otlp::layer) is the `tracing` layer that
/// turns spans into OpenTelemetry spans and hands them to it.
#[derive(Debug, Clone)]
pub struct Otlp {
    provider: SdkTracerProvider,
}

impl Otlp {
    /// An exporter sending to the collector's OTLP/HTTP traces URL `endpoint` (such as
    /// `http://127.0.0.1:4318/v1/traces`, sent to as written), the spans naming the service
    /// `service_name`.
    pub fn new(endpoint: &str, service_name: &str) -> Result<Self, OtlpError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(endpoint)
            .build()
            .map_err(|e| OtlpError::Build {
                message: e.to_string(),
            })?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(service_name.to_owned())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        Ok(Otlp { provider })
    }

    /// The `tracing` layer exporting every span of a subscriber it is added to.
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        tracing_opentelemetry::layer().with_tracer(self.provider.tracer("llm-extract"))
    }

    /// Makes a subscriber of this layer alone the process's default (for a program with no subscriber
    /// of its own; one that has one adds [`layer`](Self::layer) to it).
    pub fn install(&self) -> Result<(), OtlpError> {
        use tracing_subscriber::layer::SubscriberExt as _;
        let subscriber = tracing_subscriber::registry().with(self.layer());
        tracing::subscriber::set_global_default(subscriber).map_err(|_| OtlpError::Installed)
    }

    /// Sends the spans still waiting, now.
    pub fn flush(&self) -> Result<(), OtlpError> {
        self.provider.force_flush().map_err(|e| OtlpError::Flush {
            message: e.to_string(),
        })
    }

    /// Sends the spans still waiting and stops the exporter (call it before the program ends).
    pub fn shutdown(&self) -> Result<(), OtlpError> {
        self.provider.shutdown().map_err(|e| OtlpError::Flush {
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Extractor;
    use crate::llm::{
        BoxFuture, ChatRequest, ChatResponse, ChatStream, Description, Llm, LlmError,
    };
    use crate::schema::Dialect;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use prost::Message as _;
    use std::collections::BTreeMap;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::{Arc, Mutex};

    const KEY: &str = "sk-otlp-0123456789-SECRET";

    /// A local OTLP/HTTP receiver: every request body it gets, answered with an empty success.
    fn receiver() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let kept = Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    continue;
                }
                kept.lock().unwrap().push(body);
                let _ = reader.get_mut().write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\n\
                      content-length: 0\r\nconnection: close\r\n\r\n",
                );
            }
        });
        (url, bodies)
    }

    /// A backend that describes itself with a key in its URL (which the description redacts) and
    /// answers a person with usage.
    struct Described;

    impl Llm for Described {
        fn dialect(&self) -> Dialect {
            Dialect::OpenAiStrict
        }
        fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
            let answer = ChatResponse::new(r#"{"name": "Ada"}"#)
                .with_usage(30, 7)
                .with_model("test-model");
            Box::pin(async move {
                crate::llm::from_fn(move |_: ChatRequest| {
                    let answer = answer.clone();
                    async move { Ok(answer) }
                })
                .chat_stream(request)
                .await
            })
        }
        fn describe(&self) -> Option<Description> {
            Some(
                Description::new("openai")
                    .with_url(&format!("https://user:{KEY}@api.example.com/v1?key={KEY}"))
                    .with_model("test-model"),
            )
        }
    }

    /// One value, its `Extract` written by hand (what the derive generates).
    #[derive(serde::Deserialize)]
    struct Person {
        name: String,
    }

    impl crate::Extract for Person {}

    impl crate::Schema for Person {
        fn schema() -> &'static crate::schema::SchemaSet {
            static SET: std::sync::OnceLock<crate::schema::SchemaSet> = std::sync::OnceLock::new();
            SET.get_or_init(|| {
                crate::schema::SchemaSet::new(
                    "Person",
                    serde_json::json!({
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                        "additionalProperties": false
                    }),
                )
            })
        }
    }

    #[test]
    fn spans_reach_a_collector_with_their_genai_attributes_and_no_key() {
        let (url, bodies) = receiver();
        let otlp = Otlp::new(&url, "otlp-test").unwrap();
        let subscriber = {
            use tracing_subscriber::layer::SubscriberExt as _;
            tracing_subscriber::registry().with(otlp.layer())
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tracing::subscriber::with_default(subscriber, || {
            runtime.block_on(async {
                let out = Extractor::new(Described)
                    .temperature(0.25)
                    .extract::<Person>("Ada")
                    .await
                    .unwrap();
                assert_eq!(out.value.name, "Ada");
            })
        });
        otlp.shutdown().unwrap();

        let bodies = bodies.lock().unwrap();
        assert!(!bodies.is_empty(), "the collector got nothing");
        let mut spans = BTreeMap::new();
        for body in bodies.iter() {
            let raw = String::from_utf8_lossy(body);
            for secret in [KEY, "0123456789"] {
                assert!(!raw.contains(secret), "{secret} exported");
            }
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            for span in request
                .resource_spans
                .iter()
                .flat_map(|r| &r.scope_spans)
                .flat_map(|s| &s.spans)
            {
                let attributes: BTreeMap<String, String> = span
                    .attributes
                    .iter()
                    .map(|kv| {
                        let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                            Some(Any::StringValue(s)) => s.clone(),
                            Some(Any::IntValue(i)) => i.to_string(),
                            Some(Any::DoubleValue(d)) => d.to_string(),
                            Some(Any::BoolValue(b)) => b.to_string(),
                            other => format!("{other:?}"),
                        };
                        (kv.key.clone(), value)
                    })
                    .collect();
                spans.insert(span.name.clone(), (span.kind, attributes));
            }
        }
        let (kind, attempt) = spans
            .get("chat test-model")
            .unwrap_or_else(|| panic!("no attempt span in {spans:?}"));
        // SPAN_KIND_CLIENT.
        assert_eq!(*kind, 3);
        assert_eq!(attempt["gen_ai.operation.name"], "chat");
        assert_eq!(attempt["gen_ai.provider.name"], "openai");
        assert_eq!(attempt["gen_ai.request.model"], "test-model");
        assert_eq!(attempt["gen_ai.request.temperature"], "0.25");
        assert_eq!(attempt["gen_ai.response.model"], "test-model");
        assert_eq!(attempt["gen_ai.usage.input_tokens"], "30");
        assert_eq!(attempt["gen_ai.usage.output_tokens"], "7");
        assert!(attempt["server.address"].contains("[redacted]"));
        let (_, extraction) = spans.get("extract Person").expect("the extraction span");
        assert_eq!(extraction["llm_extract.attempts"], "1");
    }
}
