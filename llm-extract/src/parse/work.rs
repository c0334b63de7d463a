//! A count of the steps the parsers take that could grow faster than their input (a look-ahead, a
//! comparison between candidates), so the tests can hold each to a multiple of the input's size
//! without timing anything. Outside this crate's unit tests it compiles to nothing, unless the
//! hidden feature `__work-count` (for the workspace's integration tests) is on.

#[cfg(any(test, feature = "__work-count"))]
thread_local! {
    static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `steps` (when counting is compiled in; nothing otherwise).
#[inline(always)]
pub(crate) fn count(steps: usize) {
    #[cfg(any(test, feature = "__work-count"))]
    STEPS.with(|n| n.set(n.get().saturating_add(steps)));
    #[cfg(not(any(test, feature = "__work-count")))]
    let _ = steps;
}

/// The steps `f` counts on this thread. Not public API: for tests only, no stability promise.
#[cfg(any(test, feature = "__work-count"))]
pub fn of(f: impl FnOnce()) -> usize {
    STEPS.with(|n| n.set(0));
    f();
    STEPS.with(|n| n.get())
}
