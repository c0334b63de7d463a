//! Which model file to load: `LLM_EXTRACT_MODEL`, else the default model in the user cache; and the
//! check that a file is GGUF before llama.cpp sees it.

use super::LlamaCppError;
use std::path::{Path, PathBuf};

/// The environment variable naming a GGUF model file to use instead of the default model.
pub const MODEL_ENV: &str = "LLM_EXTRACT_MODEL";

/// The file name of the default model (SmolLM2-135M-Instruct, Q4_1) in the model cache.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// What to run to put the default model in the cache.
pub(super) const FETCH_HINT: &str =
    "run scripts/fetch-model.sh (it downloads the default model, SmolLM2-135M-Instruct, 98 MB, \
     into the cache) or set LLM_EXTRACT_MODEL to any GGUF file";

/// Where the default model is cached: `${XDG_CACHE_HOME:-$HOME/.cache}/llm-extract/models/`, as
/// `scripts/fetch-model.sh` writes it. `None` when neither variable is set.
pub fn default_model_path() -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = non_empty("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| non_empty("HOME").map(|home| home.join(".cache")))?;
    Some(
        cache
            .join("llm-extract")
            .join("models")
            .join(DEFAULT_MODEL_FILE),
    )
}

/// The model file to load: the file `LLM_EXTRACT_MODEL` names, else the cached default model.
///
/// # Errors
/// [`LlamaCppError::ModelNotFound`] when that file does not exist, saying how to get one. Nothing is
/// downloaded here.
pub fn model_path_from_env() -> Result<PathBuf, LlamaCppError> {
    if let Some(path) = std::env::var_os(MODEL_ENV).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(LlamaCppError::ModelNotFound {
                path,
                hint: format!("{MODEL_ENV} names no file; point it at a GGUF file, or unset it to use the default model"),
            })
        };
    }
    match default_model_path() {
        Some(path) if path.is_file() => Ok(path),
        Some(path) => Err(LlamaCppError::ModelNotFound {
            path,
            hint: FETCH_HINT.into(),
        }),
        None => Err(LlamaCppError::ModelNotFound {
            path: PathBuf::from(DEFAULT_MODEL_FILE),
            hint: format!("neither HOME nor XDG_CACHE_HOME is set, so there is no model cache; set {MODEL_ENV} to a GGUF file"),
        }),
    }
}

/// Refuses a file that is not GGUF before llama.cpp sees it, with a clearer message than llama.cpp's.
pub(super) fn check_gguf_magic(path: &Path) -> Result<(), LlamaCppError> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    match read {
        Ok(()) if &magic == b"GGUF" => Ok(()),
        Ok(()) => Err(LlamaCppError::ModelLoad {
            path: path.to_path_buf(),
            message: "not a GGUF file (it does not start with the GGUF magic bytes)".into(),
        }),
        Err(e) => Err(LlamaCppError::ModelLoad {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        }),
    }
}
