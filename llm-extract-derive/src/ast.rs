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
