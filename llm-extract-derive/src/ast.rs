//! A typed model of the derive input. Attributes are parsed here once and the JSON names serde uses
//! are resolved (renames and case rules applied); nothing downstream reads raw `syn` attributes.

use crate::attr::{self, Attrs};
use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, Ident, Type};

/// The item `#[derive(Extract)]` is on.
pub enum Input<'a> {
    /// A struct (any style; `valid.rs` rejects all but named fields).
    Struct(Struct<'a>),
    /// An enum.
    Enum(Enum<'a>),
}

/// How an enum's variants are told apart in JSON: serde's four representations.
pub enum Repr {
    /// `{"Variant": data}`, a unit variant as the string `"Variant"` (serde's default).
    External,
    /// `{"tag": "Variant", ...fields}` (`#[serde(tag = "tag")]`).
    Internal {
        /// The tag's key.
        tag: String,
    },
    /// `{"tag": "Variant", "content": data}` (`#[serde(tag = "tag", content = "content")]`).
    Adjacent {
        /// The tag's key.
        tag: String,
        /// The key of the variant's data.
        content: String,
    },
    /// The data alone (`#[serde(untagged)]`); serde takes the first variant that deserializes.
    Untagged,
}

/// A struct.
pub struct Struct<'a> {
    /// The whole input.
    pub original: &'a DeriveInput,
    /// Its attributes.
    pub attrs: Attrs,
    /// Named, tuple or unit.
    pub style: Style<'a>,
    /// The name serde writes as the tag value when the struct has `#[serde(tag = "..")]`.
    pub serialized_name: String,
    /// Its fields (named or not).
    pub fields: Vec<Field<'a>>,
}

/// An enum.
pub struct Enum<'a> {
    /// The whole input.
    pub original: &'a DeriveInput,
    /// Its attributes.
    pub attrs: Attrs,
    /// Its variants, skipped ones included.
    pub variants: Vec<Variant<'a>>,
}

/// An enum variant.
pub struct Variant<'a> {
    /// The variant as written.
    pub original: &'a syn::Variant,
    /// Its attributes.
    pub attrs: Attrs,
    /// The name serde reads (the tag value, or the string of a fieldless enum).
    pub name: String,
    /// Named, tuple or unit.
    pub style: Style<'a>,
    /// Its fields.
    pub fields: Vec<Field<'a>>,
}

/// A struct or variant field.
pub struct Field<'a> {
    /// The field as written.
    pub original: &'a syn::Field,
    /// Its attributes.
    pub attrs: Attrs,
    /// The JSON key serde reads (empty for a tuple field).
    pub name: String,
    /// Its type.
    pub ty: &'a Type,
}

/// How a struct or variant holds its data.
pub enum Style<'a> {
    /// `{ a: A }`
    Named,
    /// `(A, B)`: the parenthesised field list, for error spans.
    Tuple(&'a syn::FieldsUnnamed),
    /// No fields.
    Unit,
}

impl<'a> Input<'a> {
    /// Builds the model; `None` for a union (reported here).
    pub fn from_syn(cx: &Ctxt, node: &'a DeriveInput) -> Option<Self> {
        let attrs = attr::get(cx, &node.attrs);
        match &node.data {
            Data::Struct(data) => {
                let rule = attrs.serde.rename_all;
                let serialized_name = attrs
                    .serde
                    .rename
                    .serialize
                    .as_ref()
                    .map_or_else(|| node.ident.unraw().to_string(), |name| name.value());
                Some(Input::Struct(Struct {
                    original: node,
                    style: Style::of(&data.fields),
                    serialized_name,
                    fields: Field::multiple(cx, &data.fields, rule),
                    attrs,
                }))
            }
            Data::Enum(data) => {
                let variants = data
                    .variants
                    .iter()
                    .map(|variant| Variant::from_syn(cx, variant, &attrs))
                    .collect();
                Some(Input::Enum(Enum {
                    original: node,
                    attrs,
                    variants,
                }))
            }
            Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    "unions cannot derive `Extract` (serde cannot deserialize them); use an enum \
                     with `#[serde(tag = \"type\")]`",
                );
                None
            }
        }
    }

    /// The whole input.
    pub fn original(&self) -> &'a DeriveInput {
        match self {
            Input::Struct(input) => input.original,
            Input::Enum(input) => input.original,
        }
    }
}

impl<'a> Enum<'a> {
    /// The enum's representation; `valid.rs` rejects the combinations serde rejects.
    pub fn repr(&self) -> Repr {
        let serde = &self.attrs.serde;
        match (&serde.tag, &serde.content) {
            _ if serde.untagged.is_some() => Repr::Untagged,
            (Some(tag), Some(content)) => Repr::Adjacent {
                tag: tag.value(),
                content: content.value(),
            },
            (Some(tag), None) => Repr::Internal { tag: tag.value() },
            (None, _) => Repr::External,
        }
    }

    /// The variants serde can deserialize.
    pub fn live(&self) -> Vec<&Variant<'a>> {
        self.variants.iter().filter(|v| !v.skipped()).collect()
    }

    /// Whether every live variant is a unit variant (the enum is a string enum, when externally
    /// tagged).
    pub fn fieldless(&self) -> bool {
        self.live().iter().all(|v| matches!(v.style, Style::Unit))
    }
}

impl<'a> Struct<'a> {
    /// The one live field whose JSON is the struct's: a newtype struct's, or a
    /// `#[serde(transparent)]` struct's.
    pub fn inner(&self) -> Option<&Field<'a>> {
        let transparent = self.attrs.serde.transparent.is_some();
        let newtype = matches!(&self.style, Style::Tuple(fields) if fields.unnamed.len() == 1);
        if !(transparent || newtype) {
            return None;
        }
        let mut live = self.fields.iter().filter(|f| !f.skipped());
        match (live.next(), live.next()) {
            (Some(field), None) => Some(field),
            _ => None,
        }
    }
}

impl<'a> Variant<'a> {
    fn from_syn(cx: &Ctxt, node: &'a syn::Variant, container: &Attrs) -> Self {
        let attrs = attr::get(cx, &node.attrs);
        let name = attrs.serde.rename.deserialize.as_ref().map_or_else(
            || {
                let rule = container.serde.rename_all;
                rule.apply_to_variant(&node.ident.unraw().to_string())
            },
            |name| name.value(),
        );
        // A variant's own rename_all wins over the enum's rename_all_fields (as in serde).
        let field_rule = if attrs.serde.has_rename_all {
            attrs.serde.rename_all
        } else {
            container.serde.rename_all_fields
        };
        Variant {
            original: node,
            name,
            style: Style::of(&node.fields),
            fields: Field::multiple(cx, &node.fields, field_rule),
            attrs,
        }
    }

    /// Whether serde skips the variant when deserializing.
    pub fn skipped(&self) -> bool {
        self.attrs.serde.skip.is_some()
    }

    /// The other names serde reads for the variant (`#[serde(alias = "..")]`).
    pub fn aliases(&self) -> Vec<String> {
        self.attrs.serde.aliases.iter().map(|a| a.value()).collect()
    }

    /// Whether this is the catch-all variant (`#[serde(other)]`).
    pub fn other(&self) -> bool {
        self.attrs.serde.other.is_some()
    }

    /// Whether the variant is read untagged (`#[serde(untagged)]` on the variant).
    pub fn untagged(&self) -> bool {
        self.attrs.serde.untagged.is_some()
    }

    /// The live fields.
    pub fn live_fields(&self) -> Vec<&Field<'a>> {
        self.fields.iter().filter(|f| !f.skipped()).collect()
    }
}

impl<'a> Field<'a> {
    fn multiple(cx: &Ctxt, fields: &'a Fields, rule: RenameRule) -> Vec<Self> {
        fields
            .iter()
            .map(|field| {
                let attrs = attr::get(cx, &field.attrs);
                let name = match (&attrs.serde.rename.deserialize, &field.ident) {
                    (Some(name), _) => name.value(),
                    (None, Some(ident)) => rule.apply_to_field(&ident.unraw().to_string()),
                    (None, None) => String::new(),
                };
                Field {
                    original: field,
                    attrs,
                    name,
                    ty: &field.ty,
                }
            })
            .collect()
    }

    /// Whether serde skips the field when deserializing (it is then not in the schema).
    pub fn skipped(&self) -> bool {
        self.attrs.serde.skip.is_some()
    }
}

impl<'a> Style<'a> {
    fn of(fields: &'a Fields) -> Self {
        match fields {
            Fields::Named(_) => Style::Named,
            Fields::Unnamed(unnamed) => Style::Tuple(unnamed),
            Fields::Unit => Style::Unit,
        }
    }
}

/// The type's name as a string (raw identifiers unescaped).
pub fn type_name(ident: &Ident) -> String {
    ident.unraw().to_string()
}
