//! llguidance's view of a model's vocabulary.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::vocab::VocabType;
use llguidance::toktrie::{TokEnv, TokTrie, TokenizerEnv};
use std::sync::Arc;

/// llguidance's view of the vocabulary, tokenizing with the model's own tokenizer. A tokenizer that gives
/// the model's canonical tokens lets llguidance force (fast-forward) the tokens a grammar leaves no choice
/// about, healing the token boundary at the end of the forced text.
pub(super) struct ModelTokEnv {
    trie: TokTrie,
    model: Arc<LlamaModel>,
}

impl ModelTokEnv {
    /// The environment of `model`. Only byte-level BPE vocabularies (GPT-2 style) tokenize a fragment
    /// exactly as it would be tokenized in context; other vocabularies keep llguidance's approximate
    /// tokenizer, which disables forcing.
    pub(super) fn for_model(model: &Arc<LlamaModel>) -> TokEnv {
        let approximate = LlamaSampler::llguidance_tok_env(model);
        if model.vocab().vocab_type() != VocabType::BPE {
            return approximate;
        }
        Arc::new(ModelTokEnv {
            trie: approximate.tok_trie().clone(),
            model: Arc::clone(model),
        })
    }
}

impl TokenizerEnv for ModelTokEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, bytes: &[u8]) -> Vec<u32> {
        if std::str::from_utf8(bytes).is_err() {
            return self.trie.greedy_tokenize(bytes);
        }
        let tokens = self.model.vocab().tokenize(bytes, false, false);
        tokens.into_iter().map(|t| t.0.cast_unsigned()).collect()
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}
