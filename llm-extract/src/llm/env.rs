//! Where a backend's builder reads environment variables (the key variables, `OLLAMA_HOST`): the
//! process's environment, or a lookup function the caller gives with `env_lookup` on the builder (a
//! program that keeps its settings elsewhere, a test that must not change the process's environment).

use std::sync::Arc;

/// A lookup of environment variables by name.
type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The environment a builder reads: the process's unless a lookup was given. Its `Debug` says which,
/// never a value (a key may be one).
#[derive(Clone, Default)]
pub(crate) struct Env {
    lookup: Option<Arc<Lookup>>,
}

impl Env {
    /// The environment `lookup` answers for.
    pub fn from_fn(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Env {
            lookup: Some(Arc::new(lookup)),
        }
    }

    /// The value of the variable `name`, `None` when it is unset or not Unicode.
    pub fn var(&self, name: &str) -> Option<String> {
        match &self.lookup {
            Some(lookup) => lookup(name),
            None => std::env::var(name).ok(),
        }
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.lookup {
            Some(_) => "Env(lookup)",
            None => "Env(process)",
        })
    }
}

/// The `env_lookup` setter every backend builder has.
macro_rules! env_builder_method {
    () => {
        /// Where the builder reads environment variables when it builds (the variable of a key, the
        /// provider's own key variable, `OLLAMA_HOST`): `lookup` is asked for each by name, `None`
        /// meaning unset. Default: the process's environment. For a program that keeps its settings
        /// elsewhere, or a test that must not change the process's environment while others run.
        pub fn env_lookup(
            mut self,
            lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
        ) -> Self {
            self.common.env = crate::llm::env::Env::from_fn(lookup);
            self
        }
    };
}
pub(crate) use env_builder_method;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_answers_instead_of_the_process_and_debug_shows_no_value() {
        let env = Env::from_fn(|name| (name == "PATH").then(|| "sk-not-the-path".to_owned()));
        assert_eq!(env.var("PATH").as_deref(), Some("sk-not-the-path"));
        assert_eq!(env.var("HOME"), None);
        assert!(!format!("{env:?}").contains("sk-"));
        assert_eq!(Env::default().var("PATH"), std::env::var("PATH").ok());
    }
}
