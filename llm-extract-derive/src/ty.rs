//! What the macro can tell about a field's type from its tokens alone.
//!
//! A proc macro sees tokens, not types: these checks go by the *last path segment* (`String`,
//! `Option`, `Vec`, ...), so `std::string::String` is a string but `type Name = String;` is not
//! recognisable. A type the macro cannot classify is [`Kind::Unknown`]; the generated code then
//! asserts the constraint's requirement with a trait bound instead (see `expand.rs`).

use crate::ast::Field;
use proc_macro2::{Ident, TokenStream};
use syn::{parse_quote, DeriveInput, GenericArgument, PathArguments, PathSegment, Type};

/// What a field's value is, after peeling `Option<_>` and `Box<_>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `String`, `str`
    String,
    /// `char`
    Char,
    /// `bool`
    Bool,
    /// An integer type and its range.
    Int(IntType),
    /// `f32`, `f64`
    Float,
    /// `Vec`, `VecDeque`
    Sequence,
    /// `HashSet`, `BTreeSet`
    Set,
    /// `HashMap`, `BTreeMap`
    Map,
    /// `serde_json::Value`
    Json,
    /// Anything else: a derived type, an alias, a foreign type.
    Unknown,
}

impl Kind {
    /// How an error message names a value of this kind.
    pub fn describe(self) -> String {
        match self {
            Kind::String => "a string".into(),
            Kind::Char => "a `char` (always exactly one character)".into(),
            Kind::Bool => "a `bool`".into(),
            Kind::Int(int) => format!("an integer (`{}`)", int.name),
            Kind::Float => "a floating-point number".into(),
            Kind::Sequence => "a sequence".into(),
            Kind::Set => "a set".into(),
            Kind::Map => "a map".into(),
            Kind::Json => "a `serde_json::Value`".into(),
            Kind::Unknown => "of a type the macro cannot see into".into(),
        }
    }
}

/// An integer type's name and the values it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntType {
    /// `u8`, `i64`, ...
    pub name: &'static str,
    /// The smallest value.
    pub min: i128,
    /// The largest value (`u128::MAX` is clamped to `i128::MAX`; no literal we accept exceeds it).
    pub max: i128,
}

const INTS: &[IntType] = &[
    int("i8", i8::MIN as i128, i8::MAX as i128),
    int("i16", i16::MIN as i128, i16::MAX as i128),
    int("i32", i32::MIN as i128, i32::MAX as i128),
    int("i64", i64::MIN as i128, i64::MAX as i128),
    int("i128", i128::MIN, i128::MAX),
    int("isize", i64::MIN as i128, i64::MAX as i128),
    int("u8", 0, u8::MAX as i128),
    int("u16", 0, u16::MAX as i128),
    int("u32", 0, u32::MAX as i128),
    int("u64", 0, u64::MAX as i128),
    int("u128", 0, i128::MAX),
    int("usize", 0, u64::MAX as i128),
];

const fn int(name: &'static str, min: i128, max: i128) -> IntType {
    IntType { name, min, max }
}

/// The kind of `ty`, looking through `Option<_>` and `Box<_>`.
pub fn kind(ty: &Type) -> Kind {
    let ty = peel_optional(ty);
    let Some(segment) = last_segment(ty) else {
        return Kind::Unknown;
    };
    let name = segment.ident.to_string();
    if let Some(int) = INTS.iter().find(|int| int.name == name) {
        return Kind::Int(*int);
    }
    match name.as_str() {
        "String" | "str" => Kind::String,
        "char" => Kind::Char,
        "bool" => Kind::Bool,
        "f32" | "f64" => Kind::Float,
        "Vec" | "VecDeque" => Kind::Sequence,
        "HashSet" | "BTreeSet" => Kind::Set,
        "HashMap" | "BTreeMap" => Kind::Map,
        "Value" => Kind::Json,
        _ => Kind::Unknown,
    }
}

/// `T` if `ty` is written `Option<T>` (through `Box<_>` too).
pub fn option_inner(ty: &Type) -> Option<&Type> {
    let ty = peel(ty);
    let segment = last_segment(ty)?;
    match segment.ident.to_string().as_str() {
        "Option" => single_type_argument(segment),
        "Box" => option_inner(single_type_argument(segment)?),
        _ => None,
    }
}

/// `ty` without the `Option<_>`/`Box<_>` wrappers (which do not change what constraints apply to).
fn peel_optional(ty: &Type) -> &Type {
    let ty = peel(ty);
    match last_segment(ty) {
        Some(segment) if segment.ident == "Option" || segment.ident == "Box" => {
            match single_type_argument(segment) {
                Some(inner) => peel_optional(inner),
                None => ty,
            }
        }
        _ => ty,
    }
}

/// Removes parentheses and the invisible groups a macro_rules expansion may add.
fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => peel(&group.elem),
        Type::Paren(paren) => peel(&paren.elem),
        other => other,
    }
}

fn last_segment(ty: &Type) -> Option<&PathSegment> {
    match peel(ty) {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

fn type_arguments(segment: &PathSegment) -> Vec<&Type> {
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The element type of `ty` if it is written `Vec<T>` or `VecDeque<T>` (through `Option<_>`/`Box<_>`).
pub fn sequence_element(ty: &Type) -> Option<&Type> {
    let ty = peel_optional(ty);
    let segment = last_segment(ty)?;
    match segment.ident.to_string().as_str() {
        "Vec" | "VecDeque" => single_type_argument(segment),
        _ => None,
    }
}

fn single_type_argument(segment: &PathSegment) -> Option<&Type> {
    match type_arguments(segment).as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// Visits `ty` and every type nested in it (generic arguments, elements), outermost first, until
/// `visit` returns something.
fn find<'a, T>(ty: &'a Type, visit: &mut impl FnMut(&'a Type) -> Option<T>) -> Option<T> {
    if let Some(found) = visit(ty) {
        return Some(found);
    }
    match ty {
        Type::Group(group) => find(&group.elem, visit),
        Type::Paren(paren) => find(&paren.elem, visit),
        Type::Array(array) => find(&array.elem, visit),
        Type::Slice(slice) => find(&slice.elem, visit),
        Type::Reference(reference) => find(&reference.elem, visit),
        Type::Ptr(ptr) => find(&ptr.elem, visit),
        Type::Tuple(tuple) => tuple.elems.iter().find_map(|elem| find(elem, visit)),
        Type::Path(path) => {
            let qself = path.qself.as_ref().and_then(|q| find(&q.ty, visit));
            qself.or_else(|| {
                path.path
                    .segments
                    .iter()
                    .flat_map(type_arguments)
                    .find_map(|arg| find(arg, visit))
            })
        }
        _ => None,
    }
}

/// The first place `ty` names the type being derived: `Self`, or its own name written alone (a
/// qualified path, `other::Node`, may be another type of the same name, and is not taken for it).
pub fn self_reference<'a>(ty: &'a Type, own: &Ident) -> Option<&'a PathSegment> {
    find(ty, &mut |ty| match ty {
        Type::Path(path) if path.qself.is_none() => {
            let segments = &path.path.segments;
            let first = segments.first()?;
            let alone = segments.len() == 1 && path.path.leading_colon.is_none();
            (first.ident == "Self" || (alone && first.ident == *own)).then_some(first)
        }
        _ => None,
    })
}

/// Whether `ty` names the type parameter `param` anywhere (`T`, `Vec<T>`, `T::Item`).
pub fn names(ty: &Type, param: &Ident) -> bool {
    find(ty, &mut |ty| match ty {
        Type::Path(path) => path
            .path
            .segments
            .first()
            .filter(|s| s.ident == *param)
            .map(|_| ()),
        _ => None,
    })
    .is_some()
}

/// The first part of `ty` no JSON schema can describe, and why, with what to use instead.
pub fn unsupported(ty: &Type) -> Option<(&Type, &'static str)> {
    find(ty, &mut |ty| {
        let why = match ty {
            Type::Tuple(tuple) if tuple.elems.is_empty() => {
                "`()` carries no data to extract; remove the field or use `#[serde(skip)]`"
            }
            Type::Reference(_) => {
                "borrowed types are not supported (`Extract` deserializes owned values); use an owned \
                 type such as `String` or `Vec<T>`"
            }
            Type::Slice(_) => "slices are not supported; use `Vec<T>`",
            Type::Ptr(_) | Type::BareFn(_) | Type::TraitObject(_) | Type::ImplTrait(_) => {
                "this type has no JSON representation; use plain data types"
            }
            Type::Never(_) | Type::Infer(_) => "this type has no JSON representation",
            Type::Path(path) => {
                let segment = path.path.segments.last()?;
                if segment.ident != "HashMap" && segment.ident != "BTreeMap" {
                    return None;
                }
                let key = *type_arguments(segment).first()?;
                // An unknown key type (an alias of String, say) is left to the trait bound.
                return match kind(key) {
                    Kind::String | Kind::Unknown => None,
                    _ => Some((
                        key,
                        "map keys must be `String`: the keys of a JSON object are strings",
                    )),
                };
            }
            _ => return None,
        };
        Some((ty, why))
    })
}

/// The input's generics with `bound` on each type parameter that a live field's type names (as
/// serde infers its bounds), and `'static` on every other (a schema is kept per `TypeId`).
pub fn bounded(input: &DeriveInput, fields: &[&Field], bound: TokenStream) -> syn::Generics {
    let mut generics = input.generics.clone();
    let params: Vec<syn::Ident> = input
        .generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    if params.is_empty() {
        return generics;
    }
    let clause = generics.make_where_clause();
    for param in params {
        if fields.iter().any(|f| names(f.ty, &param)) {
            clause.predicates.push(parse_quote!(#param: #bound));
        } else {
            clause.predicates.push(parse_quote!(#param: 'static));
        }
    }
    generics
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn kinds_look_through_option_and_box() {
        let cases: Vec<(Type, Kind)> = vec![
            (parse_quote!(String), Kind::String),
            (parse_quote!(Option<std::string::String>), Kind::String),
            (parse_quote!(Box<Option<Vec<u8>>>), Kind::Sequence),
            (parse_quote!(Option<u8>), Kind::Int(INTS[6])),
            (parse_quote!(f32), Kind::Float),
            (parse_quote!(BTreeSet<String>), Kind::Set),
            (parse_quote!(serde_json::Value), Kind::Json),
            (parse_quote!(Name), Kind::Unknown),
            (parse_quote!((u8, u8)), Kind::Unknown),
        ];
        for (ty, expected) in cases {
            assert_eq!(kind(&ty), expected, "{}", quote::quote!(#ty));
        }
    }

    #[test]
    fn option_inner_is_syntactic() {
        let ty: Type = parse_quote!(Box<Option<chrono::NaiveDate>>);
        let inner = option_inner(&ty).unwrap();
        assert_eq!(quote::quote!(#inner).to_string(), "chrono :: NaiveDate");
        assert!(option_inner(&parse_quote!(Vec<Option<u8>>)).is_none());
    }

    #[test]
    fn self_references_are_found_anywhere() {
        let own: Ident = parse_quote!(Node);
        let found = |ty: Type| self_reference(&ty, &own).map(|s| s.ident.to_string());
        assert_eq!(found(parse_quote!(Vec<Box<Node>>)), Some("Node".into()));
        assert_eq!(found(parse_quote!(Option<Self>)), Some("Self".into()));
        assert_eq!(
            found(parse_quote!(HashMap<String, Node>)),
            Some("Node".into())
        );
        assert_eq!(found(parse_quote!(Vec<Other>)), None);
        // Probably another type of the same name: not taken for the type itself.
        assert_eq!(found(parse_quote!(Option<tree::Node>)), None);
    }

    #[test]
    fn type_parameters_are_found_anywhere() {
        let t: Ident = parse_quote!(T);
        assert!(names(&parse_quote!(Vec<Option<T>>), &t));
        assert!(names(&parse_quote!(HashMap<String, T::Item>), &t));
        assert!(!names(&parse_quote!(Vec<Tee>), &t));
    }

    #[test]
    fn unsupported_types_are_found_anywhere() {
        let why = |ty: Type| unsupported(&ty).map(|(_, why)| why.split(' ').next().unwrap());
        assert_eq!(why(parse_quote!(Vec<[u8; 4]>)), None);
        assert_eq!(why(parse_quote!(Option<(u8, String)>)), None);
        assert_eq!(why(parse_quote!(Option<()>)), Some("`()`"));
        assert_eq!(why(parse_quote!(&'static str)), Some("borrowed"));
        assert_eq!(why(parse_quote!(HashMap<u32, String>)), Some("map"));
        assert_eq!(why(parse_quote!(HashMap<Key, String>)), None);
        assert_eq!(why(parse_quote!(Vec<Option<String>>)), None);
    }
}
