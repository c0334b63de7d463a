//! Media files for tests of images and PDFs in requests: small files of each kind, and reading back
//! the base64 and `data:` URLs a request carries them in.

use base64::Engine as _;
use serde_json::Value;

/// A small PNG-looking file: the signature, then bytes of every value (so base64 uses its whole
/// alphabet, `+` and `/` included).
pub fn png() -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..=255u8).rev());
    bytes
}

/// A small JPEG-looking file.
pub fn jpeg() -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xD8, 0xFF, 0xE0];
    bytes.extend((0..200u8).map(|i| i.wrapping_mul(7)));
    bytes
}

/// A small PDF-looking file, with the binary comment PDF writers put on its second line.
pub fn pdf() -> Vec<u8> {
    b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n".to_vec()
}

/// The bytes of a base64 string (a JSON string).
pub fn decode(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text.as_str().expect("a base64 string"))
        .expect("valid base64")
}

/// The bytes of a `data:` URL (a JSON string), after checking its media type.
pub fn data_url(url: &Value, media_type: &str) -> Vec<u8> {
    let url = url.as_str().expect("a data URL");
    let prefix = format!("data:{media_type};base64,");
    let data = url
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{url:.60} does not start with {prefix}"));
    decode(&Value::String(data.to_owned()))
}

/// The last of a recorded chat request's `messages`.
pub fn last_message(request: &super::Request) -> Value {
    request.json["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .cloned()
        .expect("a message")
}
