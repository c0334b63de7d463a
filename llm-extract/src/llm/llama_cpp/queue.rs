//! The first-come, first-served queue generations wait in, and waiting for it outside a runtime.

use std::sync::{Arc, OnceLock};

/// The queue every model without its own ([`LlamaCppBuilder::parallel`]) waits in: one generation at a time.
pub(super) fn shared_queue() -> &'static Arc<tokio::sync::Semaphore> {
    static QUEUE: OnceLock<Arc<tokio::sync::Semaphore>> = OnceLock::new();
    QUEUE.get_or_init(|| Arc::new(tokio::sync::Semaphore::new(1)))
}

/// Runs a future to completion on this thread (to wait for a queue slot outside any async runtime).
pub(super) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(output) => return output,
            std::task::Poll::Pending => std::thread::park(),
        }
    }
}
