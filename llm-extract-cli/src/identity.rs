//! What a built backend is, for the choices that depend on it: whether it is the embedded engine (`doc`
//! and `run --jsonl` size their chunks for its context), and which model answers (what `doc` keys its
//! resumable state by). Both are read from the backend as built, so a setting that comes from the
//! environment (`OLLAMA_HOST`, `OLLAMA_MODEL`, `OPENAI_MODEL`, `LLM_EXTRACT_MODEL`, the default model)
//! counts as much as a flag.

use llm_extract::llm::{Anthropic, ConvertMedia, Gemini, Llm, Ollama, OpenAiCompatible};

/// A backend that says what it is.
pub trait Identified: Llm {
    /// Whether this is the embedded llama.cpp engine (a small context, tokens counted with the model's
    /// own tokenizer).
    fn is_embedded(&self) -> bool {
        false
    }

    /// Bytes that differ when the model answering may differ: the kind of backend, the server's URL
    /// (without credentials or query: no key ever goes into a hash that names a file) and the model's
    /// name; or the model file's path, size and modification time.
    fn identity(&self) -> Vec<u8>;
}

/// The backend underneath, marked: a converted PDF reaches the model as other input.
impl Identified for ConvertMedia<std::sync::Arc<dyn Identified>> {
    fn is_embedded(&self) -> bool {
        self.inner().is_embedded()
    }

    fn identity(&self) -> Vec<u8> {
        let mut identity = self.inner().identity();
        identity.extend_from_slice(b"\nconvert-media");
        identity
    }
}

impl Identified for Ollama {
    fn identity(&self) -> Vec<u8> {
        server("ollama", self.host(), self.model())
    }
}

impl Identified for OpenAiCompatible {
    fn identity(&self) -> Vec<u8> {
        server("openai", self.base_url(), self.model())
    }
}

impl Identified for Anthropic {
    fn identity(&self) -> Vec<u8> {
        server("anthropic", self.base_url(), self.model())
    }
}

impl Identified for Gemini {
    fn identity(&self) -> Vec<u8> {
        server("gemini", self.base_url(), self.model())
    }
}

#[cfg(feature = "llama-cpp")]
impl Identified for llm_extract::llm::llama_cpp::LlamaCpp {
    fn is_embedded(&self) -> bool {
        true
    }

    fn identity(&self) -> Vec<u8> {
        model_file(self.model_path())
    }
}

/// A backend behind a response cache is the backend.
impl Identified for llm_extract::llm::Cache<std::sync::Arc<dyn Identified>> {
    fn is_embedded(&self) -> bool {
        self.inner().is_embedded()
    }

    fn identity(&self) -> Vec<u8> {
        self.inner().identity()
    }
}

/// The identity of `model` on the server at `url`.
fn server(kind: &str, url: &str, model: &str) -> Vec<u8> {
    format!("{kind}\n{}\n{model}", without_credentials(url)).into_bytes()
}

/// The identity of a model file: its full path, its size and when it was last written (a file replaced
/// under the same name is another model).
#[cfg_attr(not(feature = "llama-cpp"), allow(dead_code))]
fn model_file(path: &std::path::Path) -> Vec<u8> {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut identity = b"embedded\n".to_vec();
    identity.extend_from_slice(path.as_os_str().as_encoded_bytes());
    if let Ok(metadata) = std::fs::metadata(&path) {
        let modified = metadata
            .modified()
            .ok()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_nanos());
        identity.extend_from_slice(format!("\n{}\n{modified}", metadata.len()).as_bytes());
    }
    identity
}

/// `url` without its user information (`user:password@`), query (`?key=...`) and fragment.
fn without_credentials(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let url = url.get(..end).unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let host_start = rest
        .get(..authority_end)
        .and_then(|authority| authority.rfind('@'))
        .map_or(0, |at| at + 1);
    format!("{scheme}://{}", rest.get(host_start..).unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_the_identity() {
        assert_eq!(
            without_credentials("https://user:s3cret@host:8000/v1?key=abc#x"),
            "https://host:8000/v1"
        );
        assert_eq!(
            without_credentials("http://127.0.0.1:11434"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(without_credentials("host/a@b"), "host/a@b");
        let openai =
            OpenAiCompatible::builder("https://me:s3cret@gpu:8000/v1?token=abc", "qwen3:4b")
                .build()
                .unwrap();
        let identity = String::from_utf8(openai.identity()).unwrap();
        assert!(
            !identity.contains("s3cret") && !identity.contains("abc"),
            "{identity}"
        );
        assert!(
            identity.contains("gpu:8000/v1") && identity.contains("qwen3:4b"),
            "{identity}"
        );
    }

    #[test]
    fn the_model_and_the_server_each_change_the_identity() {
        let ollama = |host: &str, model: &str| {
            Ollama::builder(model)
                .host(host)
                .build()
                .unwrap()
                .identity()
        };
        let openai = |url: &str, model: &str| {
            OpenAiCompatible::builder(url, model)
                .build()
                .unwrap()
                .identity()
        };
        let base = ollama("http://a:11434", "m");
        assert_eq!(base, ollama("http://a:11434", "m"));
        assert_ne!(base, ollama("http://b:11434", "m"));
        assert_ne!(base, ollama("http://a:11434", "n"));
        assert_ne!(base, openai("http://a:11434", "m"), "the kind counts");
        assert_ne!(openai("http://a/v1", "m"), openai("http://a/v1", "m2"));
    }

    #[test]
    fn a_model_file_is_known_by_path_size_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, "GGUF one").unwrap();
        let first = model_file(&path);
        assert_eq!(first, model_file(&path));
        std::fs::write(&path, "GGUF two!").unwrap();
        assert_ne!(first, model_file(&path), "another size");
        let other = dir.path().join("n.gguf");
        std::fs::copy(&path, &other).unwrap();
        assert_ne!(model_file(&path), model_file(&other), "another path");
    }
}
