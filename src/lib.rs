//! Examples and integration tests of llm-extract live in `examples/` and `tests/`.
