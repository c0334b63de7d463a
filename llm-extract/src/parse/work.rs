//! A count of the steps the parsers take that could grow faster than their input (a look-ahead, a
//! comparison between candidates), so the tests can hold each to a multiple of the input's size
//! without timing anything. Outside tests it compiles to nothing.

#[cfg(test)]
thread_local! {
    static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `steps` (in tests; nothing otherwise).
#[inline(always)]
pub(crate) fn count(steps: usize) {
    #[cfg(test)]
    STEPS.with(|n| n.set(n.get().saturating_add(steps)));
    #[cfg(not(test))]
    let _ = steps;
}

/// The steps `f` counts on this thread.
#[cfg(test)]
pub(crate) fn of(f: impl FnOnce()) -> usize {
    STEPS.with(|n| n.set(0));
    f();
    STEPS.with(|n| n.get())
}
