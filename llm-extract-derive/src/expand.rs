//! Code generation. The model has been validated; this only writes the impls.
//!
//! For a type `T` the derive writes the impls `__private::FieldSchema` (builds `T`'s generic schema
//! from its fields' `FieldSchema`s, so derived types nest, through `build_guarded`, which gives a
//! type that recurs a `$defs` entry), `Schema` (caches a `SchemaSet` built from that schema in a
//! `static`, or per instantiation for a generic type) and `Extract`, `Flatten` for a struct with named
//! fields and `MapKey` for a fieldless enum, and the partial form `TPartial` with its `PartialValue`
//! impl (`partial.rs`). A generic type's impls bound each type parameter a field names by the trait
//! the impl needs of it. On any error it writes `compile_error!` plus impls that cannot run,
//! so uses of `T` elsewhere do not cascade into more errors.

use crate::ast::{self, Enum, Field, Input, Repr, Struct, Style, Variant};
use crate::attr::{Example, Json, Number};
use crate::ctxt::Ctxt;
use crate::ty::{self, Kind};
use crate::valid;
use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{parse_quote, DeriveInput};

/// The one path generated code reaches the runtime through.
fn private() -> TokenStream {
    quote!(::llm_extract::__private)
}

/// Parses, validates and expands one derive input.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let model = Input::from_syn(&cx, input);
    if let Some(model) = &model {
        valid::check(&cx, model);
    }
    match (cx.check(), model) {
        (Ok(()), Some(model)) => expand(&model),
        (Err(error), _) => fallback(input, error),
        // `from_syn` reports why it returns `None`; this arm only keeps the match total.
        (Ok(()), None) => fallback(
            input,
            syn::Error::new_spanned(&input.ident, "cannot derive `Extract` for this item"),
        ),
    }
}

fn expand(input: &Input) -> TokenStream {
    let p = private();
    let original = input.original();
    let ident = &original.ident;
    let name = ast::type_name(ident);
    let body = match input {
        Input::Struct(input) => struct_schema(input),
        Input::Enum(input) => enum_schema(input),
    };
    let partial = crate::partial::expand(input);
    let examples = crate::example_attr::expand(match input {
        Input::Struct(input) => &input.attrs.extract.example,
        Input::Enum(input) => &input.attrs.extract.example,
    });
    let attrs = match input {
        Input::Struct(input) => &input.attrs,
        Input::Enum(input) => &input.attrs,
    };
    // Spanned at `check`, so a type without a `Check` implementation is told so there.
    let check = attrs.extract.check.as_ref().map(|check| {
        let span = check
            .tokens
            .clone()
            .into_iter()
            .next()
            .map_or_else(proc_macro2::Span::call_site, |token| token.span());
        quote_spanned! {span=>
            fn check(&self, issues: &mut ::llm_extract::check::Issues) {
                <Self as ::llm_extract::check::Check>::check(self, issues)
            }
        }
    });
    let generics = ty::bounded(original, &fields(input), quote!(#p::FieldSchema + 'static));
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    // A generic type is `Schema` where its instantiation deserializes; a concrete type has no
    // bound (the compiler then reports a missing `Deserialize` at the type, with serde's hint).
    let mut schema_generics = generics.clone();
    if !original.generics.params.is_empty() {
        schema_generics
            .make_where_clause()
            .predicates
            .push(parse_quote!(Self: #p::DeserializeOwned + ::core::marker::Send));
    }
    let (_, _, schema_where) = schema_generics.split_for_impl();
    // A generic function cannot own a `static` per instantiation: a generic type's sets are kept in
    // a map keyed by the instantiation's `TypeId`.
    let schema_set = if original.generics.params.is_empty() {
        quote! {
            static SET: #p::OnceLock<#p::SchemaSet> = #p::OnceLock::new();
            SET.get_or_init(|| {
                #p::SchemaSet::new(#name, #p::root_schema(<Self as #p::FieldSchema>::field_schema))
            })
        }
    } else {
        quote! {
            #p::schema_set_of::<Self>(|| {
                #p::SchemaSet::new(
                    #p::schema_name::<Self>(),
                    #p::root_schema(<Self as #p::FieldSchema>::field_schema),
                )
            })
        }
    };
    let flatten = match input {
        Input::Struct(input) if matches!(input.style, ast::Style::Named) => quote! {
            #[automatically_derived]
            impl #impl_generics #p::Flatten for #ident #ty_generics #where_clause {
                fn flattened() -> (#p::Value, bool) {
                    (<Self as #p::FieldSchema>::field_schema(), true)
                }
            }
        },
        _ => TokenStream::new(),
    };
    let map_key = match input {
        Input::Enum(input) if is_fieldless(input) => {
            let names = input
                .variants
                .iter()
                .filter(|v| !v.skipped())
                .map(|variant| &variant.name);
            quote! {
                #[automatically_derived]
                impl #impl_generics #p::MapKey for #ident #ty_generics #where_clause {
                    fn key_schema() -> ::core::option::Option<#p::Value> {
                        ::core::option::Option::Some(#p::key_names(&[#(#names),*]))
                    }
                }
            }
        }
        _ => TokenStream::new(),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::FieldSchema for #ident #ty_generics #where_clause {
            fn field_schema() -> #p::Value {
                #p::build_guarded::<Self>(|| { #body })
            }
        }

        #[automatically_derived]
        impl #impl_generics ::llm_extract::Schema for #ident #ty_generics #schema_where {
            fn schema() -> &'static #p::SchemaSet {
                #schema_set
            }
        }

        #[automatically_derived]
        impl #impl_generics ::llm_extract::Extract for #ident #ty_generics #schema_where {
            #examples
            #check
        }

        #flatten

        #map_key

        #partial
    }
}

/// Whether the enum is a string enum (no tag, every live variant a unit): serde reads it from a map
/// key as well.
fn is_fieldless(input: &Enum) -> bool {
    input.attrs.serde.tag.is_none()
        && input.attrs.serde.content.is_none()
        && input
            .variants
            .iter()
            .filter(|v| !v.skipped())
            .all(|v| matches!(v.style, ast::Style::Unit))
}

/// The fields whose types the schema is built from.
fn fields<'f, 'a>(input: &'f Input<'a>) -> Vec<&'f Field<'a>> {
    let fields: Vec<&Field> = match input {
        Input::Struct(input) => input.fields.iter().collect(),
        Input::Enum(input) => input
            .variants
            .iter()
            .filter(|v| !v.skipped())
            .flat_map(|v| v.fields.iter())
            .collect(),
    };
    fields
        .into_iter()
        .filter(|f| !f.skipped() && f.attrs.extract.schemars.is_none())
        .collect()
}

fn struct_schema(input: &Struct) -> TokenStream {
    let p = private();
    let all_optional = input.attrs.serde.default.is_some();
    let fields: Vec<&Field> = input.fields.iter().filter(|f| !f.skipped()).collect();
    let assertions = fields.iter().map(|field| type_assertions(field));
    let description = option_str(input.attrs.description());
    if let Some(inner) = input.inner() {
        // A newtype or `#[serde(transparent)]` struct: serde reads the field's JSON alone.
        let inner = property(inner, false);
        return quote! {
            #(#assertions)*
            #p::newtype(#description, #inner)
        };
    }
    if let Style::Tuple(_) = input.style {
        let elements = fields.iter().map(|field| property(field, false));
        return quote! {
            #(#assertions)*
            #p::tuple(#description, ::std::vec![#(#elements),*], #all_optional)
        };
    }
    let tag = input.attrs.serde.tag.as_ref().map(|tag| {
        let value = &input.serialized_name;
        // serde writes the tag when serializing a struct and ignores it when deserializing.
        quote!(#p::Property::tag(#tag, #value).optional(),)
    });
    let properties = fields.iter().map(|field| property(field, all_optional));
    quote! {
        #(#assertions)*
        #p::object(#description, ::std::vec![#tag #(#properties,)*])
    }
}

fn enum_schema(input: &Enum) -> TokenStream {
    let p = private();
    let description = option_str(input.attrs.description());
    let repr = input.repr();
    let variants = input.live();
    let assertions = variants
        .iter()
        .flat_map(|variant| variant.live_fields())
        .map(type_assertions);
    let (tagged, untagged): (Vec<&Variant>, Vec<&Variant>) = variants
        .iter()
        .partition(|v| !v.untagged() && !matches!(repr, Repr::Untagged));
    let untagged: Vec<TokenStream> = untagged
        .iter()
        .map(|variant| {
            let data = variant_data(variant);
            let description = variant
                .attrs
                .description()
                .map(|text| quote!(#p::describe(&mut __schema, #text);));
            quote!({
                let mut __schema = #data;
                #description
                __schema
            })
        })
        .collect();
    if tagged.is_empty() {
        return quote! {
            #(#assertions)*
            #p::any_of(#description, ::std::vec![#(#untagged),*])
        };
    }
    // The tagged variants' schema carries the enum's description unless untagged variants follow.
    let tagged_description = if untagged.is_empty() {
        description.clone()
    } else {
        option_str(None)
    };
    let known = names_of(tagged.iter().filter(|v| !v.other()).copied());
    let tagged = match &repr {
        Repr::External | Repr::Untagged => external(&tagged, &tagged_description, &known),
        Repr::Internal { tag } => {
            let objects = tagged.iter().map(|variant| {
                let desc = option_str(variant.attrs.description());
                let tag = tag_property(tag, variant, &known);
                match variant.style {
                    Style::Tuple(_) => {
                        let inner = variant_data(variant);
                        quote!(#p::tagged_newtype(#desc, #tag, #inner))
                    }
                    _ => {
                        let properties = variant
                            .live_fields()
                            .into_iter()
                            .map(|field| property(field, false));
                        quote!(#p::object(#desc, ::std::vec![#tag, #(#properties,)*]))
                    }
                }
            });
            quote!(#p::one_of(#tagged_description, ::std::vec![#(#objects),*]))
        }
        Repr::Adjacent { tag, content } => {
            let objects = tagged.iter().map(|variant| {
                let desc = option_str(variant.attrs.description());
                let tag = tag_property(tag, variant, &known);
                let content = match variant.style {
                    Style::Unit => None,
                    _ => {
                        let data = variant_data(variant);
                        Some(quote!(#p::Property::with_schema(#content, #data, true),))
                    }
                };
                quote!(#p::object(#desc, ::std::vec![#tag, #content]))
            });
            quote!(#p::one_of(#tagged_description, ::std::vec![#(#objects),*]))
        }
    };
    if untagged.is_empty() {
        return quote! {
            #(#assertions)*
            #tagged
        };
    }
    quote! {
        #(#assertions)*
        #p::any_of(#description, ::std::vec![#tagged, #(#untagged),*])
    }
}

/// The names (and aliases) serde reads for `variants`.
fn names_of<'v, 'a: 'v>(variants: impl Iterator<Item = &'v Variant<'a>>) -> Vec<String> {
    variants
        .flat_map(|variant| std::iter::once(variant.name.clone()).chain(variant.aliases()))
        .collect()
}

/// The tag property of a variant of an internally or adjacently tagged enum: its name as a
/// `const` (aliases recorded), or any other name for the `#[serde(other)]` variant.
fn tag_property(tag: &str, variant: &Variant, known: &[String]) -> TokenStream {
    let p = private();
    if variant.other() {
        return quote!(#p::Property::with_schema(#tag, #p::other_name(&[#(#known),*]), true));
    }
    let name = &variant.name;
    let aliases = variant.aliases();
    if aliases.is_empty() {
        quote!(#p::Property::tag(#tag, #name))
    } else {
        quote!(#p::Property::tag(#tag, #name).tag_aliases(&[#(#aliases),*]))
    }
}

/// An externally tagged enum: unit variants as strings (one string `enum`), the others as an
/// object with the variant's name as its one key; all in a `oneOf`, or just the string `enum`.
fn external(variants: &[&Variant], description: &TokenStream, known: &[String]) -> TokenStream {
    let p = private();
    let units: Vec<&Variant> = variants
        .iter()
        .filter(|v| matches!(v.style, Style::Unit) && !v.other())
        .copied()
        .collect();
    let unit_names = units.iter().map(|v| &v.name);
    let unit_aliases = units.iter().flat_map(|v| {
        let name = &v.name;
        v.aliases()
            .into_iter()
            .map(move |alias| quote!((#alias, #name)))
    });
    let strings = quote!({
        let mut __schema = #p::string_enum(::core::option::Option::None, &[#(#unit_names),*]);
        #p::name_aliases(&mut __schema, &[#(#unit_aliases),*]);
        __schema
    });
    let mut branches = Vec::new();
    if !units.is_empty() {
        branches.push(strings);
    }
    let mut only_strings = true;
    for variant in variants {
        if variant.other() {
            branches.push(quote!(#p::other_name(&[#(#known),*])));
            only_strings = false;
            continue;
        }
        if matches!(variant.style, Style::Unit) {
            continue;
        }
        only_strings = false;
        let name = &variant.name;
        let desc = option_str(variant.attrs.description());
        let data = variant_data(variant);
        let aliases = variant.aliases();
        branches.push(quote! {
            #p::object(#desc, ::std::vec![
                #p::Property::with_schema(#name, #data, true) #(.alias(#aliases))*
            ])
        });
    }
    if only_strings {
        // Every variant a unit variant: a string enum, as serde writes it.
        let names = units.iter().map(|v| &v.name);
        let aliases = units.iter().flat_map(|v| {
            let name = &v.name;
            v.aliases()
                .into_iter()
                .map(move |alias| quote!((#alias, #name)))
        });
        return quote!({
            let mut __schema = #p::string_enum(#description, &[#(#names),*]);
            #p::name_aliases(&mut __schema, &[#(#aliases),*]);
            __schema
        });
    }
    quote!(#p::one_of(#description, ::std::vec![#(#branches),*]))
}

/// A variant's data as serde writes it without a tag: `null` for a unit variant, the field's own
/// JSON for a newtype variant, a fixed-length array for a tuple variant, a closed object for a
/// struct variant.
fn variant_data(variant: &Variant) -> TokenStream {
    let p = private();
    let fields = variant.live_fields();
    match variant.style {
        Style::Unit => quote!(#p::json!({ "type": "null" })),
        Style::Tuple(all) if all.unnamed.len() == 1 => match fields.first() {
            Some(field) => {
                let inner = property(field, false);
                quote!(#inner.into_schema())
            }
            None => quote!(#p::json!({ "type": "null" })),
        },
        Style::Tuple(_) => {
            let elements = fields.iter().map(|field| property(field, false));
            quote!(#p::tuple(::core::option::Option::None, ::std::vec![#(#elements),*], false))
        }
        Style::Named => {
            let properties = fields.iter().map(|field| property(field, false));
            quote!(#p::object(::core::option::Option::None, ::std::vec![#(#properties,)*]))
        }
    }
}

/// One `Property` expression: the field type's schema, then constraints, description and aliases.
fn property(field: &Field, all_optional: bool) -> TokenStream {
    let p = private();
    let name = &field.name;
    let ty = field.ty;
    let extract = &field.attrs.extract;
    if field.attrs.serde.flatten.is_some() {
        let mut expr = quote_spanned! {ty.span()=> #p::Property::flatten::<#ty>() };
        if all_optional || field.attrs.serde.default.is_some() {
            expr.extend(quote!(.optional()));
        }
        return expr;
    }
    let mut expr = match (&extract.schemars, ty::option_inner(ty)) {
        (Some(_), Some(inner)) => quote_spanned! {ty.span()=>
            #p::Property::with_schema(#name, #p::nullable(#p::schemars_schema::<#inner>()), false)
        },
        (Some(_), None) => quote_spanned! {ty.span()=>
            #p::Property::with_schema(#name, #p::schemars_schema::<#ty>(), true)
        },
        (None, _) => quote_spanned! {ty.span()=> #p::Property::of::<#ty>(#name) },
    };
    if all_optional || field.attrs.serde.default.is_some() {
        expr.extend(quote!(.optional()));
    }
    let mut constrain = |keyword: &str, value: TokenStream| {
        expr.extend(quote!(.constraint(#keyword, #value)));
    };
    if let Some(pattern) = &extract.pattern {
        let pattern = &pattern.value;
        constrain("pattern", quote!(#p::Value::from(#pattern)));
    }
    for (keyword, setting) in [
        ("minLength", &extract.min_length),
        ("maxLength", &extract.max_length),
        ("minItems", &extract.min_items),
        ("maxItems", &extract.max_items),
    ] {
        if let Some(setting) = setting {
            let value = Literal::u64_suffixed(setting.value);
            constrain(keyword, quote!(#p::Value::from(#value)));
        }
    }
    for (keyword, setting) in [("minimum", &extract.minimum), ("maximum", &extract.maximum)] {
        if let Some(setting) = setting {
            constrain(keyword, number(setting.value));
        }
    }
    if let Some(examples) = &extract.examples {
        constrain("examples", array(&examples.value));
    }
    if extract.grounded.is_some() {
        expr.extend(quote!(.grounded()));
    }
    if extract.key.is_some() {
        expr.extend(quote!(.key()));
    }
    if let Some(description) = field.attrs.description() {
        expr.extend(quote!(.description(#description)));
    }
    for alias in &field.attrs.serde.aliases {
        expr.extend(quote!(.alias(#alias)));
    }
    expr
}

/// For a field type the macro cannot classify (an alias, a path it does not know), a constraint's
/// requirement becomes a trait bound, reported on the field's type if it does not hold.
fn type_assertions(field: &Field) -> TokenStream {
    let p = private();
    let extract = &field.attrs.extract;
    if extract.schemars.is_some() || ty::kind(field.ty) != Kind::Unknown {
        return TokenStream::new();
    }
    let ty = field.ty;
    let mut assertions = TokenStream::new();
    let mut assert = |function: TokenStream| {
        assertions.extend(quote_spanned! {ty.span()=> #p::#function::<#ty>(); });
    };
    if extract.pattern.is_some() || extract.min_length.is_some() || extract.max_length.is_some() {
        assert(quote!(assert_string));
    }
    if extract.min_items.is_some() || extract.max_items.is_some() {
        assert(quote!(assert_list));
    }
    if extract.minimum.is_some() || extract.maximum.is_some() {
        assert(quote!(assert_number));
    }
    assertions
}

fn option_str(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

fn number(value: Number) -> TokenStream {
    let p = private();
    let literal = match value {
        Number::Int(int) => match (i64::try_from(int), u64::try_from(int)) {
            (Ok(int), _) => Literal::i64_suffixed(int),
            (_, Ok(int)) => Literal::u64_suffixed(int),
            // Beyond JSON's integers; only an i128/u128 bound can be this large.
            _ => Literal::f64_suffixed(int as f64),
        },
        Number::Float(float) => Literal::f64_suffixed(float),
    };
    quote!(#p::Value::from(#literal))
}

fn array(examples: &[Example]) -> TokenStream {
    let p = private();
    let items = examples.iter().map(|example| match &example.value {
        Json::String(text) => quote!(#p::Value::from(#text)),
        Json::Bool(flag) => quote!(#p::Value::Bool(#flag)),
        Json::Number(value) => number(*value),
        Json::Array(items) => array(items),
    });
    quote!(#p::Value::Array(::std::vec![#(#items),*]))
}

/// `compile_error!` plus impls that satisfy every use of the type, so one mistake gives one error.
fn fallback(input: &DeriveInput, error: syn::Error) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let error = error.to_compile_error();
    let partial = crate::partial::fallback(input);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut extract_generics = input.generics.clone();
    // Written with a higher-ranked lifetime so a type that also lacks `Deserialize` does not add
    // an error of its own here (bounds without one are checked eagerly).
    extract_generics
        .make_where_clause()
        .predicates
        .push(parse_quote! {
            for<'workaround> #ident #ty_generics: #p::DeserializeOwned + ::core::marker::Send + 'static
        });
    let (_, _, extract_where) = extract_generics.split_for_impl();
    quote! {
        #error

        #[automatically_derived]
        impl #impl_generics #p::FieldSchema for #ident #ty_generics #where_clause {
            fn field_schema() -> #p::Value {
                ::core::unreachable!()
            }
        }

        #[automatically_derived]
        impl #impl_generics ::llm_extract::Schema for #ident #ty_generics #extract_where {
            fn schema() -> &'static #p::SchemaSet {
                ::core::unreachable!()
            }
        }

        #[automatically_derived]
        impl #impl_generics ::llm_extract::Extract for #ident #ty_generics #extract_where {}

        #[automatically_derived]
        impl #impl_generics #p::Flatten for #ident #ty_generics #where_clause {
            fn flattened() -> (#p::Value, bool) {
                ::core::unreachable!()
            }
        }

        #[automatically_derived]
        impl #impl_generics #p::MapKey for #ident #ty_generics #where_clause {
            fn key_schema() -> ::core::option::Option<#p::Value> {
                ::core::unreachable!()
            }
        }

        #partial
    }
}
