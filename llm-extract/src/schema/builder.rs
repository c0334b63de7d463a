//! Helpers the derive's generated code calls to build a type's generic schema.
//! Reached only through `llm_extract::__private`. OWNER: derive helper.
