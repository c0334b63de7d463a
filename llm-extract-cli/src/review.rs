//! The review page: one self-contained HTML file (no script from elsewhere, no network) showing the
//! document with every grounded span highlighted, coloured by the item's type (see [`type_of`]), the
//! item on hover, and a table of the items with counts per type and per pass.
//!
//! Everything from the document or the model is escaped (`&`, `<`, `>`, `"`, `'`), so a document holding
//! `<script>` or HTML entities shows them as text. Highlights are `<mark>` elements placed at the spans'
//! byte offsets in one pass over the document (a span overlapping an earlier one is listed in the table
//! but not highlighted twice), so the page is linear in the document's size.
//!
//! A document read page by page (a PDF) has a form feed (U+000C) between its pages: each is shown as a
//! page boundary (`<div class="page">`, "page N"), and each highlight's tip and each item's row name
//! the page its spans are on.

use llm_extract::extract::Document;
use llm_extract::ground::{MatchKind, Span};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Colours for the types, in order of first appearance (then reused).
const COLOURS: &[&str] = &[
    "#ffe08a", "#a8e6a1", "#9fd3ff", "#ffb3c7", "#d9b8ff", "#ffc999", "#b8f0e6", "#e0e0a0",
];

/// The HTML of the review page of `text` and what was extracted from it.
pub fn page(title: &str, text: &str, doc: &Document<Value>) -> String {
    let palette = Palette::of(doc.items.iter().map(|item| &item.value));
    // Every found span, with its item, in document order.
    let mut marks: Vec<(&Span, usize)> = doc
        .items
        .iter()
        .enumerate()
        .flat_map(|(i, item)| item.spans.iter().map(move |span| (span, i)))
        .filter(|(span, _)| span.kind.is_found() && !span.bytes.is_empty())
        .collect();
    marks.sort_by_key(|(span, _)| (span.bytes.start, span.bytes.end));

    // Where each page break is: a span's page is one more than the breaks before it.
    let breaks: Vec<usize> = text.match_indices('\u{c}').map(|(at, _)| at).collect();
    let paged = !breaks.is_empty();
    let page_of = |at: usize| breaks.partition_point(|b| *b < at) + 1;
    let mut html = String::with_capacity(text.len() * 2 + 4096);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
    escape_into(&mut html, title);
    html.push_str("</title>\n<style>\n");
    html.push_str(
        "body{font-family:system-ui,sans-serif;margin:0;display:flex;height:100vh}\n\
         #text{flex:3;overflow:auto;padding:1em 2em;white-space:pre-wrap;font-family:Georgia,serif;line-height:1.5}\n\
         #side{flex:2;overflow:auto;padding:1em;border-left:1px solid #ccc;font-size:90%}\n\
         mark{border-radius:3px;padding:0 1px}\nmark:target{outline:2px solid #c00}\n\
         table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:2px 4px;text-align:left;vertical-align:top}\n\
         .swatch{display:inline-block;width:1em;height:1em;border-radius:2px;vertical-align:middle}\n\
         .inexact{text-decoration:underline dotted}\n\
         .page{border-top:2px dashed #999;margin:1em 0 0;color:#777;font:80% system-ui,sans-serif}\n",
    );
    for i in 0..palette.types.len() {
        let _ = writeln!(html, ".t{i}{{background:{}}}", colour(i));
    }
    html.push_str("</style></head><body>\n<div id=\"text\">");
    let mut page = 1;
    if paged {
        html.push_str("<div class=\"page\" data-page=\"1\">page 1</div>");
    }
    let mut at = 0;
    let mut first_mark: BTreeMap<usize, usize> = BTreeMap::new();
    let mut highlighted = 0;
    for (n, (span, item)) in marks.iter().enumerate() {
        if span.bytes.start < at {
            continue; // overlaps the previous highlight
        }
        let (Some(before), Some(inside)) =
            (text.get(at..span.bytes.start), text.get(span.bytes.clone()))
        else {
            continue;
        };
        paged_into(&mut html, before, &mut page);
        first_mark.entry(*item).or_insert(n);
        let inexact = if span.kind == MatchKind::Exact {
            ""
        } else {
            " inexact"
        };
        let _ = write!(
            html,
            "<mark id=\"m{n}\" class=\"t{}{inexact}\" data-item=\"{item}\" title=\"",
            palette.class(*item)
        );
        let tip = doc
            .items
            .get(*item)
            .map(|it| {
                let on = if paged {
                    format!(", page {}", page_of(span.bytes.start))
                } else {
                    String::new()
                };
                format!(
                    "#{} {}\n{} ({}{on})",
                    item + 1,
                    palette.type_name(*item),
                    it.value,
                    kind_word(span.kind)
                )
            })
            .unwrap_or_default();
        escape_into(&mut html, &tip);
        html.push_str("\">");
        paged_into(&mut html, inside, &mut page);
        html.push_str("</mark>");
        highlighted += 1;
        at = span.bytes.end;
    }
    paged_into(&mut html, text.get(at..).unwrap_or_default(), &mut page);
    html.push_str("</div>\n<div id=\"side\">\n<h1>");
    escape_into(&mut html, title);
    let failed = doc.failed().count();
    let _ = write!(
        html,
        "</h1>\n<p id=\"summary\" data-items=\"{}\" data-highlights=\"{highlighted}\">{} items ({} before merging) from {} chunks ({} failed); {} spans highlighted.</p>\n",
        doc.items.len(),
        doc.items.len(),
        doc.found,
        doc.chunks.len(),
        failed,
        highlighted
    );
    html.push_str("<h2>Types</h2><table><tr><th></th><th>type</th><th>items</th></tr>\n");
    for (i, (ty, count)) in palette.types.iter().enumerate() {
        let _ = write!(html, "<tr><td><span class=\"swatch t{i}\"></span></td><td>");
        escape_into(&mut html, ty);
        let _ = writeln!(html, "</td><td>{count}</td></tr>");
    }
    html.push_str("</table>\n<h2>Passes</h2><table><tr><th>pass</th><th>chunks</th><th>failed</th><th>items</th><th>new</th><th>tokens</th></tr>\n");
    for pass in &doc.passes {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            pass.pass + 1,
            pass.chunks,
            pass.failed,
            pass.items,
            pass.new_items,
            pass.usage.total()
        );
    }
    html.push_str("</table>\n<h2>Items</h2><table><tr><th>#</th><th>item</th><th>spans</th>");
    html.push_str(if paged {
        "<th>pages</th></tr>\n"
    } else {
        "</tr>\n"
    });
    for (i, item) in doc.items.iter().enumerate() {
        let _ = write!(html, "<tr><td>{}</td><td>", i + 1);
        match first_mark.get(&i) {
            Some(n) => {
                let _ = write!(html, "<a href=\"#m{n}\" class=\"t{}\">", palette.class(i));
                escape_into(&mut html, &item.value.to_string());
                html.push_str("</a>");
            }
            None => escape_into(&mut html, &item.value.to_string()),
        }
        let found = item.spans.iter().filter(|s| s.kind.is_found()).count();
        let _ = write!(html, "</td><td>{found}/{}</td>", item.spans.len());
        if paged {
            let mut pages: Vec<usize> = item
                .spans
                .iter()
                .filter(|s| s.kind.is_found())
                .map(|s| page_of(s.bytes.start))
                .collect();
            pages.dedup();
            let pages: Vec<String> = pages.iter().map(usize::to_string).collect();
            let _ = write!(html, "<td class=\"pages\">{}</td>", pages.join(", "));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n</div>\n</body></html>\n");
    html
}

/// The items' types in order of first appearance, each with how many items have it, and each item's
/// type: counted in one pass over the items.
struct Palette<'a> {
    /// Each type and its number of items; a type's index is its colour class (`t<index>`).
    types: Vec<(&'a str, usize)>,
    /// Per item, the index of its type in `types`.
    classes: Vec<usize>,
}

impl<'a> Palette<'a> {
    fn of(values: impl Iterator<Item = &'a Value>) -> Self {
        let mut index: HashMap<&'a str, usize> = HashMap::new();
        let mut types: Vec<(&'a str, usize)> = Vec::new();
        let mut classes = Vec::new();
        for value in values {
            let ty = type_of(value);
            let class = *index.entry(ty).or_insert_with(|| {
                types.push((ty, 0));
                types.len() - 1
            });
            if let Some((_, count)) = types.get_mut(class) {
                *count += 1;
            }
            classes.push(class);
        }
        Palette { types, classes }
    }

    /// The colour class of item `item`.
    fn class(&self, item: usize) -> usize {
        self.classes.get(item).copied().unwrap_or(0)
    }

    /// The type of item `item`.
    fn type_name(&self, item: usize) -> &'a str {
        self.types
            .get(self.class(item))
            .map_or("item", |(ty, _)| ty)
    }
}

/// The colour of class `class`: the palette's colours in turn.
fn colour(class: usize) -> &'static str {
    COLOURS
        .get(class % COLOURS.len())
        .copied()
        .unwrap_or("#ffe08a")
}

/// An item's type: the first of its properties `type`, `kind`, `category` and `class` that is a string;
/// else its first string property whose name ends in `type` (`entity_type`, `eventType`); else `item`.
fn type_of(value: &Value) -> &str {
    let Value::Object(fields) = value else {
        return "item";
    };
    for name in ["type", "kind", "category", "class"] {
        if let Some(Value::String(tag)) = fields.get(name) {
            return tag;
        }
    }
    fields
        .iter()
        .find_map(|(name, field)| match field {
            Value::String(tag) if name.to_ascii_lowercase().ends_with("type") => Some(tag.as_str()),
            _ => None,
        })
        .unwrap_or("item")
}

fn kind_word(kind: MatchKind) -> String {
    match kind {
        MatchKind::Exact => "exact".into(),
        MatchKind::Normalized => "normalized".into(),
        MatchKind::Fuzzy { score } => format!("fuzzy {score:.2}"),
        _ => "not found".into(),
    }
}

/// Appends `text` escaped, each form feed (a page break) shown as the start of the next page,
/// `page` counting them.
fn paged_into(out: &mut String, text: &str, page: &mut usize) {
    let mut parts = text.split('\u{c}');
    if let Some(first) = parts.next() {
        escape_into(out, first);
    }
    for part in parts {
        *page += 1;
        let _ = write!(
            out,
            "<div class=\"page\" data-page=\"{page}\">page {page}</div>"
        );
        escape_into(out, part);
    }
}

/// Appends `text` with `& < > " '` escaped.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_item_type_is_its_tag_or_a_property_named_like_a_type() {
        assert_eq!(type_of(&json!({"name": "a", "type": "person"})), "person");
        assert_eq!(type_of(&json!({"kind": "place", "class": "x"})), "place");
        assert_eq!(type_of(&json!({"category": "org"})), "org");
        assert_eq!(type_of(&json!({"type": 3, "class": "event"})), "event");
        assert_eq!(
            type_of(&json!({"name": "a", "entity_type": "person", "doc_type": "x"})),
            "person"
        );
        assert_eq!(type_of(&json!({"eventType": "battle"})), "battle");
        assert_eq!(type_of(&json!({"entity_type": 1, "name": "a"})), "item");
        assert_eq!(type_of(&json!("just a string")), "item");
    }

    #[test]
    fn types_are_counted_in_one_pass_in_order_of_first_appearance() {
        let values = [
            json!({"type": "b"}),
            json!({"type": "a"}),
            json!({"type": "b"}),
            json!({"name": "x"}),
        ];
        let palette = Palette::of(values.iter());
        assert_eq!(palette.types, [("b", 2), ("a", 1), ("item", 1)]);
        assert_eq!(palette.classes, [0, 1, 0, 2]);
        assert_eq!(palette.type_name(1), "a");
        // Every item a type of its own: one pass, where a count per type would compare 4 * 10^10 pairs.
        let many: Vec<Value> = (0..200_000)
            .map(|i| json!({"type": i.to_string()}))
            .collect();
        // The work, counted: each value is read once.
        let mut read = 0;
        let started = std::time::Instant::now();
        let palette = Palette::of(many.iter().inspect(|_| read += 1));
        assert_eq!(read, many.len());
        assert_eq!(palette.types.len(), many.len());
        assert!(palette.types.iter().all(|(_, count)| *count == 1));
        assert_eq!(palette.classes.len(), many.len());
        // A hang guard, no claim of speed: the one pass takes milliseconds, a comparison of every pair
        // of types (2 * 10^10 in an unoptimized build) far longer than this.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(300),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn form_feeds_are_page_boundaries_counted_from_one() {
        let mut out = String::new();
        let mut page = 1;
        paged_into(&mut out, "a<b\n\u{c}\nc\u{c}", &mut page);
        assert_eq!(page, 3);
        assert_eq!(
            out,
            "a&lt;b\n<div class=\"page\" data-page=\"2\">page 2</div>\nc\
             <div class=\"page\" data-page=\"3\">page 3</div>"
        );
    }

    #[test]
    fn escaping_covers_markup_and_entities() {
        let mut out = String::new();
        escape_into(&mut out, "<script>alert('x')</script> &amp; \"q\"");
        assert_eq!(
            out,
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp;amp; &quot;q&quot;"
        );
    }
}
