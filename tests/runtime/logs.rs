//! The log lines of the whole test binary, captured: one global `tracing` subscriber (DEBUG and up) that
//! writes into a shared buffer, installed by the first test that asks for it.
//!
//! Global, not thread-local: with tests on parallel threads, a thread-local subscriber can miss a callsite
//! whose interest another thread had already cached as "never". Every test of the binary logs into the
//! same buffer, so a test looks for its own lines in it and may see other tests' lines too (a check that
//! no key appears anywhere is then a check over every test's logs).

use std::sync::{Arc, Mutex, OnceLock};

/// The captured log text of the binary so far (shared by every caller).
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// The binary's log buffer; the first call installs the global subscriber that fills it.
pub fn captured() -> Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Captured::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other global subscriber in a binary that captures its logs");
        logs
    })
    .clone()
}
