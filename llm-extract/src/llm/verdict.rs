//! The extraction's verdict on the answer under way, for a layer that keeps only the answers that
//! passed: a [`Cache`](super::Cache) that answered from its backend leaves what would store the answer
//! ([`awaiting`]); the extraction loop runs it once the answer validated ([`accept`]) and drops it before
//! the next request ([`discard`]), so an answer that failed is never stored. The slot lives for one
//! extraction, set by [`noting_who_answers`](super::noting_who_answers); a request made outside one
//! leaves nothing (a caller of the layer stores by hand, [`Cache::store`](super::Cache::store)).

use std::cell::RefCell;

/// What stores the answer under way once it is accepted.
pub(crate) type Commit = Box<dyn FnOnce() + Send>;

tokio::task_local! {
    /// The commit of the last answer of the task, if a layer left one.
    static PENDING: RefCell<Option<Commit>>;
}

/// Runs `task` with a slot for the commit of its answers.
pub(crate) async fn scoped<F: std::future::Future>(task: F) -> F::Output {
    PENDING.scope(RefCell::new(None), task).await
}

/// Leaves `commit` to be run if the answer just received is accepted (replacing any earlier one).
pub(crate) fn awaiting(commit: Commit) {
    let _ = PENDING.try_with(|slot| *slot.borrow_mut() = Some(commit));
}

/// The answer received last passed validation: its commit, if one was left, runs.
pub(crate) fn accept() {
    let commit = PENDING
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten();
    if let Some(commit) = commit {
        commit();
    }
}

/// A new request is about to go out: the commit of the answer before it, not accepted, is dropped.
pub(crate) fn discard() {
    let _ = PENDING.try_with(|slot| slot.borrow_mut().take());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    fn counting(count: &Arc<AtomicU32>) -> Commit {
        let count = Arc::clone(count);
        Box::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[tokio::test]
    async fn only_an_accepted_answer_is_committed_and_once() {
        let count = Arc::new(AtomicU32::new(0));
        scoped(async {
            awaiting(counting(&count));
            discard();
            accept();
            assert_eq!(count.load(Ordering::SeqCst), 0, "a discarded answer ran");
            awaiting(counting(&count));
            accept();
            accept();
        })
        .await;
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // Outside a scope nothing is kept, and nothing fails.
        awaiting(counting(&count));
        accept();
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}
