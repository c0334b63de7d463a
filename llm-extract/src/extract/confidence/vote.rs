//! The vote that merges several answers to one request into one value (self-consistency, see
//! `samples.rs`), and how much the answers agree with it.
//!
//! The answers are voted on from the root down:
//! - values of different kinds (an object, a list, a string, ...) or different scalars: the value most
//!   answers gave wins; a tie goes to the value of the earliest answer among the tied (answer 0 is the
//!   extractor's own, greedy by default). An object or a list that wins is voted on inside.
//! - objects: a property is kept when more answers have it than lack it (a tie: as the earliest
//!   answer has it), and its value is voted on among the answers that have it.
//! - lists: the items of the answers are matched, by their key properties (`"x-key": true`,
//!   `#[extract(key)]`, strings compared trimmed and lowercased) when the item schema has some, else by
//!   the pairing that matches the most equal leaves ([`assign`]) against the items already seen. An item
//!   is kept when more of the answers that have the list hold it than not (a tie: as the earliest
//!   answer); items come in the order of their first appearance, and each is voted on among its copies.
//!
//! Every leaf of the result is one an answer gave at the same path (list positions aside): nothing is
//! averaged or invented. The agreement of a leaf (a scalar, by JSON pointer into the result) is the
//! share of the answers that gave that value there. For n answers: O(n) per property, O(n²) per scalar
//! (equal values grouped); a list without keys costs the pairing, O(n·m³) for n answers of m items
//! (greedy beyond [`EXACT_LIMIT`](crate::ground::assign::EXACT_LIMIT) items).

use crate::ground::assign::assign;
use crate::ground::merge::key_properties;
use crate::schema::node::{escape_token, resolve};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// How deep the schema's `anyOf`/`oneOf`/`allOf` branches are searched for a property's schema.
const MAX_BRANCH_DEPTH: usize = 8;

/// The merged value and the agreement of each of its leaves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Vote<V> {
    /// The value the vote chose.
    pub value: V,
    /// For each leaf of `value` (a JSON pointer), the share of the answers that gave it.
    pub agreement: BTreeMap<String, f32>,
}

/// Votes on `answers`, values of the schema `root` (a schema with its `$defs`).
pub(crate) fn vote(answers: &[Value], root: &Value) -> Vote<Value> {
    let mut voter = Voter::new(root, answers.len());
    let members: Vec<(usize, &Value)> = answers.iter().enumerate().collect();
    let value = voter.value(&members, Some(root), String::new());
    Vote {
        value,
        agreement: voter.agreement,
    }
}

/// Votes on the item lists `answers`, each item a value of the schema `root`; the agreement's pointers
/// start at the item's position (`/0/name`).
pub(crate) fn vote_items(answers: &[Vec<Value>], root: &Value) -> Vote<Vec<Value>> {
    let mut voter = Voter::new(root, answers.len());
    let members: Vec<(usize, &[Value])> = answers
        .iter()
        .enumerate()
        .map(|(i, items)| (i, items.as_slice()))
        .collect();
    let value = voter.list(&members, Some(root), "");
    Vote {
        value,
        agreement: voter.agreement,
    }
}

/// The agreement of each leaf of `value` with `answers`, place by place: the share of the answers with
/// the same leaf at the same JSON pointer (for a value that was not voted, such as an answer taken
/// whole).
pub(crate) fn agreement_at_places(value: &Value, answers: &[Value]) -> BTreeMap<String, f32> {
    let answer_leaves: Vec<HashMap<String, &Value>> = answers
        .iter()
        .map(|answer| leaves(answer).into_iter().collect())
        .collect();
    let total = answers.len().max(1) as f32;
    leaves(value)
        .into_iter()
        .map(|(pointer, leaf)| {
            let agree = answer_leaves
                .iter()
                .filter(|other| other.get(&pointer) == Some(&leaf))
                .count();
            (pointer, agree as f32 / total)
        })
        .collect()
}

/// How many leaves `answer` shares with `value`, place by place: how well an answer agrees with the
/// vote.
pub(crate) fn shared_leaves(value: &Value, answer: &Value) -> usize {
    let mine: HashMap<String, &Value> = leaves(answer).into_iter().collect();
    leaves(value)
        .into_iter()
        .filter(|(pointer, leaf)| mine.get(pointer) == Some(leaf))
        .count()
}

/// Every scalar of `value` (and every empty object or list) by its JSON pointer.
fn leaves(value: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), value)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (name, child) in map {
                    stack.push((format!("{pointer}/{}", escape_token(name)), child));
                }
            }
            Value::Array(items) if !items.is_empty() => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((format!("{pointer}/{i}"), child));
                }
            }
            leaf => out.push((pointer, leaf)),
        }
    }
    out
}

/// The shape a vote compares first.
#[derive(PartialEq)]
enum Kind<'v> {
    Object,
    List,
    Scalar(&'v Value),
}

fn kind_of(value: &Value) -> Kind<'_> {
    match value {
        Value::Object(_) => Kind::Object,
        Value::Array(_) => Kind::List,
        scalar => Kind::Scalar(scalar),
    }
}

struct Voter<'s> {
    root: &'s Value,
    /// How many answers there are: the denominator of every agreement.
    total: usize,
    agreement: BTreeMap<String, f32>,
}

impl<'s> Voter<'s> {
    fn new(root: &'s Value, total: usize) -> Self {
        Voter {
            root,
            total,
            agreement: BTreeMap::new(),
        }
    }

    /// Votes on the values `members` (answer index, value; in answer order, never empty) gave at
    /// `pointer`, whose schema is `node`.
    fn value(
        &mut self,
        members: &[(usize, &Value)],
        node: Option<&Value>,
        pointer: String,
    ) -> Value {
        // Groups of equal kind (equal value for scalars), in order of their first member.
        let mut groups: Vec<(Kind<'_>, Vec<(usize, &Value)>)> = Vec::new();
        for &(i, value) in members {
            let kind = kind_of(value);
            match groups.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, group)) => group.push((i, value)),
                None => groups.push((kind, vec![(i, value)])),
            }
        }
        let mut winner: Option<(Kind<'_>, Vec<(usize, &Value)>)> = None;
        for group in groups {
            if winner
                .as_ref()
                .is_none_or(|(_, best)| group.1.len() > best.len())
            {
                winner = Some(group);
            }
        }
        let Some((kind, group)) = winner else {
            return Value::Null;
        };
        match kind {
            Kind::Scalar(value) => {
                self.agree(pointer, group.len());
                value.clone()
            }
            Kind::Object => {
                let objects: Vec<(usize, &Map<String, Value>)> = group
                    .iter()
                    .filter_map(|&(i, value)| Some((i, value.as_object()?)))
                    .collect();
                self.object(&objects, node, &pointer)
            }
            Kind::List => {
                let lists: Vec<(usize, &[Value])> = group
                    .iter()
                    .filter_map(|&(i, value)| Some((i, value.as_array()?.as_slice())))
                    .collect();
                if lists.iter().all(|(_, items)| items.is_empty()) {
                    self.agree(pointer, group.len());
                    return Value::Array(Vec::new());
                }
                let items = node.and_then(|node| self.items_of(node, 0));
                Value::Array(self.list(&lists, items, &pointer))
            }
        }
    }

    fn agree(&mut self, pointer: String, count: usize) {
        self.agreement
            .insert(pointer, count as f32 / self.total.max(1) as f32);
    }

    fn object(
        &mut self,
        members: &[(usize, &Map<String, Value>)],
        node: Option<&Value>,
        pointer: &str,
    ) -> Value {
        let Some(&(earliest, _)) = members.first() else {
            return Value::Object(Map::new());
        };
        let mut names: Vec<&String> = Vec::new();
        let mut seen = HashSet::new();
        for (_, map) in members {
            for name in map.keys() {
                if seen.insert(name) {
                    names.push(name);
                }
            }
        }
        let mut out = Map::new();
        if names.is_empty() {
            self.agree(pointer.to_owned(), members.len());
        }
        for name in names {
            let present: Vec<(usize, &Value)> = members
                .iter()
                .filter_map(|&(i, map)| Some((i, map.get(name)?)))
                .collect();
            let absent = members.len() - present.len();
            let earliest_has_it = present.first().is_some_and(|&(i, _)| i == earliest);
            if present.len() < absent || (present.len() == absent && !earliest_has_it) {
                continue;
            }
            let child = node.and_then(|node| self.property_of(node, name, 0));
            let place = format!("{pointer}/{}", escape_token(name));
            let value = self.value(&present, child, place);
            out.insert(name.clone(), value);
        }
        Value::Object(out)
    }

    /// Votes on the item lists `members` gave at `pointer`, whose items have the schema `node`.
    fn list(
        &mut self,
        members: &[(usize, &[Value])],
        node: Option<&Value>,
        pointer: &str,
    ) -> Vec<Value> {
        let Some(&(earliest, _)) = members.first() else {
            return Vec::new();
        };
        let keys = node.map(|node| self.keys_of(node)).unwrap_or_default();
        let clusters = if keys.is_empty() {
            by_assignment(members)
        } else {
            by_key(members, &keys)
        };
        let mut out = Vec::new();
        for cluster in clusters {
            let holds = cluster.len();
            let lack = members.len() - holds;
            let earliest_holds = cluster.first().is_some_and(|&(i, _)| i == earliest);
            if holds < lack || (holds == lack && !earliest_holds) {
                continue;
            }
            let place = format!("{pointer}/{}", out.len());
            let value = self.value(&cluster, node, place);
            out.push(value);
        }
        out
    }

    /// The key and tag properties of an item schema; empty when it names no key.
    fn keys_of(&self, node: &Value) -> Vec<String> {
        let mut keys = HashSet::new();
        let mut tags = HashSet::new();
        key_properties(self.root, node, &mut keys, &mut tags, 0);
        if keys.is_empty() {
            return Vec::new();
        }
        let mut all: Vec<String> = keys.into_iter().chain(tags).collect();
        all.sort();
        all.dedup();
        all
    }

    /// The schema of property `name` of an object schema (its branches searched in order).
    fn property_of(&self, node: &'s Value, name: &str, depth: usize) -> Option<&'s Value> {
        let node = resolve(self.root, node);
        if let Some(found) = node.get("properties").and_then(|p| p.get(name)) {
            return Some(found);
        }
        self.branches(node, depth)
            .find_map(|branch| self.property_of(branch, name, depth + 1))
    }

    /// The item schema of a list schema (its branches searched in order).
    fn items_of(&self, node: &'s Value, depth: usize) -> Option<&'s Value> {
        let node = resolve(self.root, node);
        if let Some(items) = node.get("items").filter(|items| items.is_object()) {
            return Some(items);
        }
        self.branches(node, depth)
            .find_map(|branch| self.items_of(branch, depth + 1))
    }

    fn branches(&self, node: &'s Value, depth: usize) -> impl Iterator<Item = &'s Value> {
        let keywords = if depth < MAX_BRANCH_DEPTH {
            &["anyOf", "oneOf", "allOf"][..]
        } else {
            &[][..]
        };
        keywords
            .iter()
            .filter_map(move |keyword| node.get(*keyword)?.as_array())
            .flatten()
    }
}

/// An item's identity: its key values (strings trimmed and lowercased); `None` when it gives none.
fn identity(item: &Value, keys: &[String]) -> Option<String> {
    let object = item.as_object()?;
    let mut parts = Vec::with_capacity(keys.len());
    let mut any = false;
    for key in keys {
        let part = match object.get(key) {
            Some(Value::String(text)) => text.trim().to_lowercase(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        any |= !part.is_empty();
        parts.push(part);
    }
    any.then(|| parts.join("\u{1f}"))
}

/// The copies of each item across the answers, matched by key (each answer's first copy of a key;
/// an item without key values stands alone), in order of first appearance.
fn by_key<'v>(members: &[(usize, &'v [Value])], keys: &[String]) -> Vec<Vec<(usize, &'v Value)>> {
    let mut clusters: Vec<Vec<(usize, &Value)>> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for &(i, items) in members {
        for item in items {
            let id = identity(item, keys);
            let slot = id.as_ref().and_then(|id| at.get(id)).copied();
            match slot.and_then(|c| clusters.get_mut(c)) {
                Some(cluster) if cluster.iter().all(|&(j, _)| j != i) => cluster.push((i, item)),
                Some(_) => {}
                None => {
                    if let Some(id) = id {
                        at.insert(id, clusters.len());
                    }
                    clusters.push(vec![(i, item)]);
                }
            }
        }
    }
    clusters
}

/// The copies of each item across the answers, each answer's items paired with the items seen so far
/// by the most equal leaves; an item paired with none starts its own.
fn by_assignment<'v>(members: &[(usize, &'v [Value])]) -> Vec<Vec<(usize, &'v Value)>> {
    let mut clusters: Vec<Vec<(usize, &Value)>> = Vec::new();
    for &(i, items) in members {
        let weights: Vec<Vec<u64>> = clusters
            .iter()
            .map(|cluster| {
                let first = cluster.first().map_or(&Value::Null, |&(_, v)| v);
                items.iter().map(|item| similarity(first, item)).collect()
            })
            .collect();
        let paired = assign(&weights);
        let mut taken = vec![false; items.len()];
        for (cluster, column) in clusters.iter_mut().zip(paired) {
            if let Some((j, item)) = column.and_then(|j| Some((j, items.get(j)?))) {
                cluster.push((i, item));
                if let Some(flag) = taken.get_mut(j) {
                    *flag = true;
                }
            }
        }
        for (item, taken) in items.iter().zip(taken) {
            if !taken {
                clusters.push(vec![(i, item)]);
            }
        }
    }
    clusters
}

/// How many leaves two items share, place by place.
fn similarity(a: &Value, b: &Value) -> u64 {
    shared_leaves(a, b) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn open() -> Value {
        json!({})
    }

    #[test]
    fn scalars_go_by_majority_and_ties_to_the_earliest_answer() {
        let out = vote(&[json!("a"), json!("b"), json!("b")], &open());
        assert_eq!(out.value, json!("b"));
        assert_eq!(out.agreement[""], 2.0 / 3.0);
        let tie = vote(
            &[json!(1), json!(2), json!(null), json!(2), json!(1)],
            &open(),
        );
        assert_eq!(tie.value, json!(1));
        assert_eq!(tie.agreement[""], 0.4);
    }

    #[test]
    fn objects_are_voted_field_by_field() {
        let answers = [
            json!({"name": "Ada", "age": 36, "city": "London"}),
            json!({"name": "Ada", "age": 37}),
            json!({"name": "Bo", "age": 37, "note": "x"}),
        ];
        let out = vote(&answers, &open());
        // `city` and `note` are each in one answer of three: left out.
        assert_eq!(out.value, json!({"name": "Ada", "age": 37}));
        assert_eq!(out.agreement["/name"], 2.0 / 3.0);
        assert_eq!(out.agreement["/age"], 2.0 / 3.0);
        assert_eq!(out.agreement.len(), 2);
        // A property in half the answers stays when the earliest has it.
        let half = vote(&[json!({"a": 1}), json!({})], &open());
        assert_eq!(half.value, json!({"a": 1}));
        let half = vote(&[json!({}), json!({"a": 1})], &open());
        assert_eq!(half.value, json!({}));
    }

    #[test]
    fn list_items_are_matched_by_their_keys() {
        let schema = json!({
            "type": "object",
            "properties": {"people": {"type": "array", "items": {"$ref": "#/$defs/Person"}}},
            "$defs": {"Person": {"type": "object", "properties": {
                "name": {"type": "string", "x-key": true},
                "role": {"type": "string"}
            }}}
        });
        let answers = [
            json!({"people": [{"name": "Tim Cook", "role": "CEO"}, {"name": "Lisa Su", "role": "CEO"}]}),
            json!({"people": [{"name": "lisa su ", "role": "CEO"}, {"name": "Tim Cook", "role": "COO"}]}),
            json!({"people": [{"name": "Tim Cook", "role": "CEO"}, {"name": "Jensen", "role": "CEO"}]}),
        ];
        let out = vote(&answers, &schema);
        assert_eq!(
            out.value,
            json!({"people": [{"name": "Tim Cook", "role": "CEO"}, {"name": "Lisa Su", "role": "CEO"}]})
        );
        assert_eq!(out.agreement["/people/0/name"], 1.0);
        assert_eq!(out.agreement["/people/0/role"], 2.0 / 3.0);
        // "Lisa Su" and "lisa su " are one item; its name as the earliest answer wrote it.
        assert_eq!(out.agreement["/people/1/name"], 1.0 / 3.0);
        assert_eq!(out.agreement["/people/1/role"], 2.0 / 3.0);
    }

    #[test]
    fn list_items_without_keys_are_matched_by_the_best_pairing() {
        let answers = [
            vec![json!({"a": 1, "b": 2}), json!({"a": 5, "b": 6})],
            vec![json!({"a": 5, "b": 6}), json!({"a": 1, "b": 3})],
            vec![json!({"a": 9, "b": 9})],
        ];
        let out = vote_items(&answers, &open());
        assert_eq!(
            out.value,
            [json!({"a": 1, "b": 2}), json!({"a": 5, "b": 6})]
        );
        assert_eq!(out.agreement["/0/a"], 2.0 / 3.0);
        assert_eq!(out.agreement["/0/b"], 1.0 / 3.0);
        assert_eq!(out.agreement["/1/b"], 2.0 / 3.0);
        // The stray item {"a": 9} is in one answer of three: left out.
        assert_eq!(out.value.len(), 2);
    }

    #[test]
    fn kinds_are_voted_before_values() {
        let answers = [
            json!(null),
            json!({"a": 1}),
            json!({"a": 2}),
            json!({"a": 2}),
        ];
        let out = vote(&answers, &open());
        assert_eq!(out.value, json!({"a": 2}));
        assert_eq!(out.agreement["/a"], 0.5);
    }

    #[test]
    fn agreement_of_an_answer_taken_whole_is_counted_by_place() {
        let answers = [json!({"a": 1, "b": [1, 2]}), json!({"a": 1, "b": [2]})];
        let places = agreement_at_places(&answers[0], &answers);
        assert_eq!(places["/a"], 1.0);
        assert_eq!(places["/b/0"], 0.5);
        assert_eq!(shared_leaves(&answers[0], &answers[1]), 1);
    }

    /// Every scalar of `value`, each with its path (object names and list positions dropped: a voted
    /// list renumbers its items).
    fn scalars(value: &Value, out: &mut Vec<Value>) {
        match value {
            Value::Object(map) => map.values().for_each(|v| scalars(v, out)),
            Value::Array(items) => items.iter().for_each(|v| scalars(v, out)),
            leaf => out.push(leaf.clone()),
        }
    }

    /// Values from few leaves and keys, so that answers often agree.
    fn json_value() -> impl Strategy<Value = Value> {
        let numbers = (0i64..4).prop_map(Value::from);
        super::super::json_values(numbers, "[ab]{0,2}", "[xyz]", (3, 24))
    }

    proptest! {
        #[test]
        fn every_leaf_of_the_vote_is_one_an_answer_gave(
            answers in prop::collection::vec(json_value(), 1..6)
        ) {
            let out = vote(&answers, &open());
            let mut given = Vec::new();
            answers.iter().for_each(|a| scalars(a, &mut given));
            let mut chosen = Vec::new();
            scalars(&out.value, &mut chosen);
            for leaf in &chosen {
                prop_assert!(given.contains(leaf), "{leaf} is in no answer");
            }
            for (pointer, share) in &out.agreement {
                prop_assert!(*share > 0.0 && *share <= 1.0);
                prop_assert!(out.value.pointer(pointer).is_some(), "{pointer}");
            }
            // A unanimous vote is the answer itself, in full agreement.
            let same = vote(&[answers[0].clone(), answers[0].clone()], &open());
            prop_assert_eq!(&same.value, &answers[0]);
            prop_assert!(same.agreement.values().all(|share| *share == 1.0));
        }
    }
}
