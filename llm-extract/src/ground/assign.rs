//! The pairing of two lists that matches the most: for each row of a weight matrix (items of one
//! list), the column (an item of the other) it is paired with, so that the paired weights sum to the
//! most. Exact (the Hungarian algorithm, O(n³)) when the shorter list has at most [`EXACT_LIMIT`]
//! items, else greedy (the pair with the most weight first, O(n·m·log(n·m))).
//!
//! Used where items of two lists answer each other without keys: gold and predicted items in
//! [`eval`](crate::eval), the samples' items in a self-consistency vote.

/// The longest list (the shorter of the two) paired by the exact assignment; longer ones are paired
/// greedily.
pub const EXACT_LIMIT: usize = 64;

/// For each row of `weights` (rows: the items of one list, columns: those of the other, all rows of
/// one length), the column it is paired with, so that the sum of the paired weights is as large as
/// possible; a pair of weight 0 is left unpaired. Exact up to [`EXACT_LIMIT`] items, greedy beyond.
pub fn assign(weights: &[Vec<u64>]) -> Vec<Option<usize>> {
    let rows = weights.len();
    let columns = weights.iter().map(Vec::len).max().unwrap_or(0);
    let weight = |i: usize, j: usize| -> u64 {
        weights
            .get(i)
            .and_then(|row| row.get(j))
            .copied()
            .unwrap_or(0)
    };
    let mut paired = if rows.min(columns) == 0 {
        vec![None; rows]
    } else if rows.min(columns) <= EXACT_LIMIT {
        hungarian(rows, columns, &weight)
    } else {
        greedy(rows, columns, &weight)
    };
    for (i, column) in paired.iter_mut().enumerate() {
        if column.is_some_and(|j| weight(i, j) == 0) {
            *column = None;
        }
    }
    paired
}

/// The maximum-weight assignment (Hungarian algorithm with potentials, O(n²·m) for n ≤ m).
fn hungarian(
    rows: usize,
    columns: usize,
    weight: &dyn Fn(usize, usize) -> u64,
) -> Vec<Option<usize>> {
    // Minimise (max - weight) over the smaller side as rows.
    let transposed = rows > columns;
    let (n, m) = if transposed {
        (columns, rows)
    } else {
        (rows, columns)
    };
    let top = (0..rows)
        .flat_map(|i| (0..columns).map(move |j| (i, j)))
        .map(|(i, j)| weight(i, j))
        .max()
        .unwrap_or(0);
    let cost = |r: usize, c: usize| -> i128 {
        let w = if transposed {
            weight(c, r)
        } else {
            weight(r, c)
        };
        i128::from(top) - i128::from(w)
    };
    // Indices from 1; 0 is the fictitious start column. Every index below stays within 0..=n or
    // 0..=m by construction.
    let mut u = vec![0i128; n + 1];
    let mut v = vec![0i128; m + 1];
    let mut row_of = vec![0usize; m + 1];
    let mut way = vec![0usize; m + 1];
    for i in 1..=n {
        row_of[0] = i;
        let mut j0 = 0;
        let mut min_to = vec![i128::MAX; m + 1];
        let mut used = vec![false; m + 1];
        loop {
            used[j0] = true;
            let i0 = row_of[j0];
            let mut delta = i128::MAX;
            let mut j1 = 0;
            for j in 1..=m {
                if used[j] {
                    continue;
                }
                let reduced = cost(i0 - 1, j - 1) - u[i0] - v[j];
                if reduced < min_to[j] {
                    min_to[j] = reduced;
                    way[j] = j0;
                }
                if min_to[j] < delta {
                    delta = min_to[j];
                    j1 = j;
                }
            }
            for j in 0..=m {
                if used[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    min_to[j] -= delta;
                }
            }
            j0 = j1;
            if row_of[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut paired = vec![None; rows];
    for (j, &r) in row_of.iter().enumerate().skip(1) {
        if r == 0 {
            continue;
        }
        let (gold, predicted) = if transposed {
            (j - 1, r - 1)
        } else {
            (r - 1, j - 1)
        };
        if let Some(slot) = paired.get_mut(gold) {
            *slot = Some(predicted);
        }
    }
    paired
}

/// Pairs taken by decreasing weight (ties by position), each row and column once.
fn greedy(rows: usize, columns: usize, weight: &dyn Fn(usize, usize) -> u64) -> Vec<Option<usize>> {
    let mut candidates: Vec<(u64, usize, usize)> = (0..rows)
        .flat_map(|i| (0..columns).map(move |j| (i, j)))
        .map(|(i, j)| (weight(i, j), i, j))
        .filter(|(w, _, _)| *w > 0)
        .collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut paired = vec![None; rows];
    let mut taken = vec![false; columns];
    for (_, i, j) in candidates {
        let (Some(slot), Some(used)) = (paired.get_mut(i), taken.get_mut(j)) else {
            continue;
        };
        if slot.is_none() && !*used {
            *slot = Some(j);
            *used = true;
        }
    }
    paired
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn total(weights: &[Vec<u64>], paired: &[Option<usize>]) -> u64 {
        paired
            .iter()
            .enumerate()
            .filter_map(|(i, j)| Some(weights[i][(*j)?]))
            .sum()
    }

    /// The best total over every injective pairing, by trying them all.
    fn brute_force(weights: &[Vec<u64>], row: usize, used: &mut Vec<bool>) -> u64 {
        if row == weights.len() {
            return 0;
        }
        let mut best = brute_force(weights, row + 1, used);
        for j in 0..used.len() {
            if !used[j] {
                used[j] = true;
                best = best.max(weights[row][j] + brute_force(weights, row + 1, used));
                used[j] = false;
            }
        }
        best
    }

    #[test]
    fn the_assignment_is_optimal_where_greedy_is_not() {
        // Greedy takes (0, 0) = 5 and is left with (1, 1) = 0; the best is 4 + 4.
        let weights = vec![vec![5, 4], vec![4, 0]];
        let paired = assign(&weights);
        assert_eq!(paired, [Some(1), Some(0)]);
        assert_eq!(total(&weights, &paired), 8);
        assert_eq!(total(&weights, &greedy(2, 2, &|i, j| weights[i][j])), 5);
    }

    #[test]
    fn the_assignment_matches_brute_force_on_small_matrices() {
        // A fixed pseudo-random sequence (no seed to vary between runs).
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..300 {
            let rows = (next() % 6) as usize;
            let columns = (next() % 6) as usize;
            let weights: Vec<Vec<u64>> = (0..rows)
                .map(|_| (0..columns).map(|_| next() % 7).collect())
                .collect();
            let paired = assign(&weights);
            let mut seen = HashSet::new();
            assert!(
                paired.iter().flatten().all(|j| seen.insert(*j)),
                "round {round}"
            );
            let best = brute_force(&weights, 0, &mut vec![false; columns]);
            assert_eq!(total(&weights, &paired), best, "round {round}: {weights:?}");
        }
    }

    #[test]
    fn zero_weight_pairs_stay_apart_and_long_lists_are_paired_greedily() {
        assert_eq!(assign(&[vec![0, 0], vec![0, 3]]), [None, Some(1)]);
        let n = EXACT_LIMIT + 6;
        let weights: Vec<Vec<u64>> = (0..n)
            .map(|i| (0..n).map(|j| u64::from(i == (j + 1) % n)).collect())
            .collect();
        let paired = assign(&weights);
        assert!((0..n).all(|i| paired[i] == Some((i + n - 1) % n)));
    }
}
