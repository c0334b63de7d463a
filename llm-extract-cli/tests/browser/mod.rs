//! A page rendered by headless Chromium (`scripts/setup.sh` installs it): the DOM the browser built
//! from it (not the file), and a screenshot that must be a real image.

use std::path::Path;
use std::process::Command;

const HEADLESS: [&str; 4] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
];

/// The browser on this machine.
fn chromium() -> String {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return name.to_owned();
        }
    }
    panic!("the page tests need Chromium: run scripts/setup.sh (it installs it with apt-get)");
}

/// The DOM Chromium builds from `page`.
pub fn dom(page: &Path) -> String {
    let output = Command::new(chromium())
        .args(HEADLESS)
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Renders `page` at 1280x800 into `shot` and checks the result is a PNG with something drawn.
pub fn assert_screenshot(page: &Path, shot: &Path) {
    let status = Command::new(chromium())
        .args(HEADLESS)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,800")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let png = std::fs::read(shot).unwrap();
    assert!(
        png.len() > 10_000 && png.starts_with(b"\x89PNG"),
        "{} bytes",
        png.len()
    );
}
