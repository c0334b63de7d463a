//! `--check-command`: checks a schema cannot say ("the total equals the sum of the lines", "the end
//! is not before the start", "the name is copied from the text"), written as a program in any
//! language and run on each complete value.
//!
//! The command line is split into words (spaces separate them; '...' and "..." group them; no
//! shell: no pipes, variables or globs) and run once per value, or per item with `--jsonl` and in
//! `doc`. Its standard input is one JSON object, `{"value": VALUE, "input": {"text": TEXT, ...}}`:
//! the value, and the template variables of the extraction it came from (for a chunk of `doc`, the
//! chunk's text). It prints the issues it finds on standard output, as JSON lines
//! `{"path": "/total", "message": "...", "severity": "hard"}` (or one JSON array of them; nothing when
//! the value passes), and exits 0. `path` is a JSON pointer into the value (default `""`, the root),
//! `severity` `hard` (default: the model is asked again with the path and the message) or `soft` (the
//! value is kept; the issue goes with it into the output).
//!
//! A command that cannot start, exits with another status, runs longer than its timeout, or prints
//! anything else is a [`CheckError`] naming the command (with the end of its standard error): the
//! value is then not passed as checked. What the command prints is read up to a bound
//! ([`MAX_OUTPUT`], [`MAX_STDERR`]); the rest is read and dropped, so a command that prints without
//! end is stopped by its timeout, never by memory.
//!
//! On Unix the command runs in a process group of its own, and the whole group is killed once the
//! command exits or runs out of time: a process it left in the background can neither hold its output
//! open (which would make a finished check look unfinished) nor outlive it. Being in a group of its own,
//! it no longer gets the terminal's Ctrl-C: once a check command has run, an interrupt, a termination
//! or a hangup of this command kills the groups of the ones still running before it exits (with 128
//! plus the signal's number, as a shell reports a process the signal ended). Its environment is this
//! command's without the variables keys and credentials are read from (`key_vars.rs`), unless
//! `--check-with-keys` asks for them.
//!
//! [`fingerprint`] names what a command runs (its line, and the content of each file it names), for
//! `doc` to key saved chunks by.

use crate::args::{BackendArgs, CheckArgs};
use crate::error::{one_line, CliError};
use llm_extract::check::{CheckError, Context, Issue, Issues, Severity};
use llm_extract::stable_hash::StableHasher;
use llm_extract::{Extractor, Llm};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// The most bytes of standard output read as issues; a command that prints more fails.
pub const MAX_OUTPUT: usize = 1 << 20;

/// The most bytes of standard error kept for the message of a failed command.
pub const MAX_STDERR: usize = 64 << 10;

/// How much of the end of the standard error a failure message shows.
const STDERR_SHOWN: usize = 600;

/// How much of an unreadable line of output a failure message shows.
const LINE_SHOWN: usize = 120;

/// A check command, split into its program and arguments.
#[derive(Debug, Clone)]
pub struct CheckCommand {
    /// The command line as given, to name it in messages.
    line: String,
    program: String,
    args: Vec<String>,
    timeout: Duration,
    /// The environment variables the command does not get.
    hidden: Vec<String>,
}

/// What `--check-command` and `--keep-doubtful` ask for.
#[derive(Debug, Clone, Default)]
pub struct Checking {
    /// The command, if any.
    command: Option<Arc<CheckCommand>>,
    /// Whether a value whose hard issues outlast the attempts is kept, marked doubtful.
    keep_doubtful: bool,
}

/// The checking `args` ask for; the command does not get the variables keys are read from with the
/// flags `backend` (unless `--check-with-keys`).
///
/// # Errors
/// An empty command line or an unclosed quote (a usage error).
pub fn from_args(args: &CheckArgs, backend: &BackendArgs) -> Result<Checking, CliError> {
    let hidden = if args.check_with_keys {
        Vec::new()
    } else {
        crate::key_vars::key_vars(backend)
    };
    let command = args
        .check_command
        .as_deref()
        .map(|line| {
            CheckCommand::new(line, args.check_timeout)
                .map(|command| Arc::new(command.without_env(hidden.clone())))
        })
        .transpose()?;
    Ok(Checking {
        command,
        keep_doubtful: args.keep_doubtful,
    })
}

/// `extractor`, running the command (if any) on each value and item, and keeping doubtful values
/// if asked.
pub fn attach<L: Llm>(extractor: Extractor<L>, checking: &Checking) -> Extractor<L> {
    let extractor = extractor.keep_doubtful(checking.keep_doubtful);
    let Some(command) = &checking.command else {
        return extractor;
    };
    let command = Arc::clone(command);
    extractor.check_async_in_context(move |value, input| {
        let command = Arc::clone(&command);
        async move { command.check(value, input).await }
    })
}

impl CheckCommand {
    /// The command `line` (split into words), stopped after `timeout`.
    ///
    /// # Errors
    /// An empty command line or an unclosed quote.
    pub fn new(line: &str, timeout: Duration) -> Result<Self, CliError> {
        let mut words = words(line)
            .map_err(|e| CliError::usage(format!("--check-command {line:?}: {e}")))?
            .into_iter();
        let program = words
            .next()
            .ok_or_else(|| CliError::usage("--check-command is empty: give the program to run"))?;
        Ok(CheckCommand {
            line: line.trim().to_owned(),
            program,
            args: words.collect(),
            timeout,
            hidden: Vec::new(),
        })
    }

    /// The command, run without the environment variables `hidden`.
    pub fn without_env(self, hidden: Vec<String>) -> Self {
        CheckCommand { hidden, ..self }
    }

    /// Runs the command on `value` extracted from the input of the variables `input`, and reads the
    /// issues it prints.
    ///
    /// # Errors
    /// The command could not start, failed, ran out of time, or printed something that is not issues.
    pub async fn check(&self, value: Value, input: Arc<Context>) -> Result<Issues, CheckError> {
        let payload = json!({"value": value, "input": &*input}).to_string();
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for name in &self.hidden {
            command.env_remove(name);
        }
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| self.error(format!("could not start: {e}")))?;
        // Ended when the command exits, or when this is dropped (the timeout, a cancelled check).
        let mut group = Group::of(&child);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let finished = async {
            let write = async {
                if let Some(mut stdin) = stdin {
                    // A command that does not read its input closes the pipe: not an error.
                    let _ = stdin.write_all(payload.as_bytes()).await;
                }
            };
            let exited = async {
                let status = child.wait().await;
                // What the command left running goes with it, and with it its ends of the pipes. The
                // group's id stays taken while any process of it lives; with none left, nothing has it
                // (an id is handed out again only after every other one, not within this moment).
                group.end();
                status
            };
            let ((), out, err, status) = tokio::join!(
                write,
                read_capped(stdout, MAX_OUTPUT),
                read_capped(stderr, MAX_STDERR),
                exited
            );
            (out, err, status)
        };
        let (out, err, status) = match tokio::time::timeout(self.timeout, finished).await {
            Ok(done) => done,
            Err(_) => {
                return Err(self.error(format!(
                    "did not finish within {} s (--check-timeout)",
                    self.timeout.as_secs_f64()
                )))
            }
        };
        let status = status.map_err(|e| self.error(format!("could not be waited for: {e}")))?;
        let (out, more) = out.map_err(|e| self.error(format!("output unreadable: {e}")))?;
        let err = err.map(|(err, _)| err).unwrap_or_default();
        if !status.success() {
            let how = match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => "was stopped by a signal".to_owned(),
            };
            return Err(self.error(format!("{how}{}", stderr_tail(&err))));
        }
        if more {
            return Err(self.error(format!(
                "printed more than {MAX_OUTPUT} bytes; print one line per issue"
            )));
        }
        let text = std::str::from_utf8(&out)
            .map_err(|_| self.error("printed bytes that are not UTF-8".to_owned()))?;
        let found = issues(text).map_err(|e| {
            self.error(format!(
                "{e}; print each issue as a JSON line {{\"path\": \"/field\", \"message\": \"...\", \
                 \"severity\": \"hard\" or \"soft\"}}{}",
                stderr_tail(&err)
            ))
        })?;
        let mut checked = Issues::new();
        for issue in found {
            checked.push(issue);
        }
        Ok(checked)
    }

    /// A failure of this command, naming it.
    fn error(&self, what: String) -> CheckError {
        CheckError::new(format!("the check command `{}` {what}", self.line))
    }
}

/// The process group of a check command (on Unix; elsewhere nothing), killed once.
struct Group {
    /// The group's id (the command's process id), until it is ended.
    id: Option<u32>,
}

/// The groups of the check commands running now: what an interrupt of this command ends.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Whether the interrupt handlers are installed.
#[cfg(unix)]
static ON_INTERRUPT: std::sync::Once = std::sync::Once::new();

impl Group {
    /// The group `child` leads, ended if this command is interrupted while it runs.
    fn of(child: &tokio::process::Child) -> Self {
        let id = child.id();
        if let Some(id) = id {
            running().push(id);
            end_groups_on_interrupt();
        }
        Group { id }
    }

    /// Kills every process of the group (a group already gone is no error: nothing is left to end).
    fn end(&mut self) {
        if let Some(id) = self.id.take() {
            kill_group(id);
            running().retain(|&running| running != id);
        }
    }
}

/// [`RUNNING`], whatever a thread that panicked while holding it left (a list of ids stays whole).
fn running() -> std::sync::MutexGuard<'static, Vec<u32>> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills every process of the group `id` (on Unix).
fn kill_group(id: u32) {
    #[cfg(unix)]
    {
        // Never 0 or 1, which name this process's group and every process.
        let pid = i32::try_from(id).ok().filter(|&pid| pid > 1);
        if let Some(pid) = pid.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = id;
}

/// From now on, an interrupt (Ctrl-C), a termination or a hangup of this command kills the groups in
/// [`RUNNING`], then ends this command with 128 plus the signal's number. Called from within the
/// runtime, where the handlers run.
fn end_groups_on_interrupt() {
    #[cfg(unix)]
    ON_INTERRUPT.call_once(|| {
        use tokio::signal::unix::{signal, SignalKind};
        let signals = [
            (SignalKind::interrupt(), 2),
            (SignalKind::terminate(), 15),
            (SignalKind::hangup(), 1),
        ];
        for (kind, number) in signals {
            let Ok(mut arrivals) = signal(kind) else {
                continue;
            };
            tokio::spawn(async move {
                if arrivals.recv().await.is_some() {
                    for id in running().drain(..) {
                        kill_group(id);
                    }
                    std::process::exit(128 + number);
                }
            });
        }
    });
}

impl Drop for Group {
    fn drop(&mut self) {
        self.end();
    }
}

/// What the command line `line` runs, as `name=value` lines for a hash: the line itself, then
/// `file <word>=<hash of its content>` for each word of it that names an existing file (the program,
/// when it is a path; a script an interpreter runs, as in `python3 checks.py`; a data file it reads),
/// so that editing the check program changes the fingerprint. A file that cannot be read says so in
/// place of its hash.
pub fn fingerprint(line: &str) -> String {
    let mut lines = vec![format!("command={}", line.trim())];
    for word in words(line).unwrap_or_default() {
        let path = std::path::Path::new(&word);
        if word.is_empty() || !path.is_file() {
            continue;
        }
        let content = match file_hash(path) {
            Ok(hash) => format!("{hash:016x}"),
            Err(e) => format!("unreadable ({})", e.kind()),
        };
        lines.push(format!("file {word}={content}"));
    }
    lines.join("\n")
}

/// The stable hash of the content of the file `path`, read in blocks.
fn file_hash(path: &std::path::Path) -> std::io::Result<u64> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = StableHasher::new();
    let mut block = vec![0u8; 64 << 10];
    loop {
        let read = file.read(&mut block)?;
        let Some(bytes) = block.get(..read).filter(|b| !b.is_empty()) else {
            return Ok(hasher.finish());
        };
        hasher.write(bytes);
    }
}

/// Reads `from` to its end, keeping the first `cap` bytes; whether there was more.
async fn read_capped<R: AsyncRead + Unpin>(
    from: Option<R>,
    cap: usize,
) -> std::io::Result<(Vec<u8>, bool)> {
    let Some(mut from) = from else {
        return Ok((Vec::new(), false));
    };
    let mut kept = Vec::new();
    (&mut from)
        .take(u64::try_from(cap).unwrap_or(u64::MAX))
        .read_to_end(&mut kept)
        .await?;
    let rest = tokio::io::copy(&mut from, &mut tokio::io::sink()).await?;
    Ok((kept, rest > 0))
}

/// `: ` and the end of the standard error `err`, on one line, or nothing when it is empty.
fn stderr_tail(err: &[u8]) -> String {
    let text = String::from_utf8_lossy(err);
    let text = one_line(&text);
    if text.is_empty() {
        return String::new();
    }
    let start = text.len().saturating_sub(STDERR_SHOWN);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let cut = if start > 0 { "..." } else { "" };
    format!(": {cut}{}", &text[start..])
}

/// The issues the command printed: JSON lines (blank lines skipped) or one JSON array.
fn issues(text: &str) -> Result<Vec<Issue>, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('[') {
        let list: Vec<Value> = serde_json::from_str(trimmed)
            .map_err(|e| format!("its output is not a JSON array of issues ({e})"))?;
        return list
            .iter()
            .enumerate()
            .map(|(i, one)| issue(one).map_err(|e| format!("issue {} of its array {e}", i + 1)))
            .collect();
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let shown = shortened(line.trim());
            let one: Value = serde_json::from_str(line).map_err(|e| {
                format!("line {} of its output, {shown:?}, is not JSON ({e})", i + 1)
            })?;
            issue(&one).map_err(|e| format!("line {} of its output, {shown:?}, {e}", i + 1))
        })
        .collect()
}

/// One issue: an object with a `message`, maybe a `path` (a JSON pointer) and a `severity`.
fn issue(one: &Value) -> Result<Issue, String> {
    let Value::Object(fields) = one else {
        return Err("is not an object".to_owned());
    };
    let message = match fields.get("message") {
        Some(Value::String(message)) if !message.trim().is_empty() => message.trim(),
        _ => return Err("has no \"message\" string".to_owned()),
    };
    let path = match fields.get("path") {
        None | Some(Value::Null) => "",
        Some(Value::String(path)) if path.is_empty() || path.starts_with('/') => path,
        Some(other) => {
            return Err(format!(
                "has \"path\" {}, not a JSON pointer such as \"/total\" (or \"\" for the root)",
                shortened(&other.to_string())
            ))
        }
    };
    let severity = match fields.get("severity").map(|s| s.as_str()) {
        None | Some(Some("hard")) => Severity::Hard,
        Some(Some("soft")) => Severity::Soft,
        Some(_) => return Err("has a \"severity\" other than \"hard\" or \"soft\"".to_owned()),
    };
    Ok(Issue::new(path, message, severity))
}

/// `text`, cut to [`LINE_SHOWN`] characters.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(LINE_SHOWN) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}

/// The words of a command line: separated by whitespace, grouped by '...' (taken as written) and
/// "..." (where \" and \\ stand for " and \), and outside quotes \ takes the next character as it is.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => current.push(c),
                        None => return Err("a ' is never closed".to_owned()),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => current.push(c),
                            Some(c) => {
                                current.push('\\');
                                current.push(c);
                            }
                            None => return Err("a \" is never closed".to_owned()),
                        },
                        Some(c) => current.push(c),
                        None => return Err("a \" is never closed".to_owned()),
                    }
                }
            }
            '\\' => {
                let current = word.get_or_insert_with(String::new);
                match chars.next() {
                    Some(c) => current.push(c),
                    None => return Err("it ends with a lone \\".to_owned()),
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_splits_into_words_with_quotes() {
        assert_eq!(
            words(r#"python3  'my checks.py' --kind "in \"voices\"" a\ b ''"#).unwrap(),
            [
                "python3",
                "my checks.py",
                "--kind",
                "in \"voices\"",
                "a b",
                ""
            ]
        );
        assert_eq!(words("  ").unwrap(), Vec::<String>::new());
        assert!(words("sh -c 'echo").unwrap_err().contains("never closed"));
        assert!(words("a \"b").unwrap_err().contains("never closed"));
        assert!(words("a\\").unwrap_err().contains("lone"));
    }

    #[test]
    fn issues_are_json_lines_or_one_array() {
        let found = issues(
            "{\"path\": \"/total\", \"message\": \"too high\", \"severity\": \"soft\"}\n\n\
             {\"message\": \" whole value \"}\n",
        )
        .unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[0].path.as_str(), found[0].severity),
            ("/total", Severity::Soft)
        );
        assert_eq!(
            (found[1].path.as_str(), found[1].message.as_str()),
            ("", "whole value")
        );
        assert_eq!(found[1].severity, Severity::Hard);
        let listed = issues(r#" [{"path": "/a", "message": "m"}] "#).unwrap();
        assert_eq!(listed[0].path, "/a");
        assert!(issues("").unwrap().is_empty());
        assert!(issues("[]").unwrap().is_empty());
    }

    #[test]
    fn output_that_is_not_issues_says_which_line_and_why() {
        let cases = [
            ("ok\n", "line 1 of its output, \"ok\", is not JSON"),
            (
                "{}\n{\"x\": 1}",
                "line 1 of its output, \"{}\", has no \"message\"",
            ),
            (
                "{\"message\": \"m\", \"path\": \"total\"}",
                "not a JSON pointer",
            ),
            (
                "{\"message\": \"m\", \"severity\": \"fatal\"}",
                "other than \"hard\"",
            ),
            ("[1]", "issue 1 of its array is not an object"),
            ("[{\"message\": ", "not a JSON array"),
            ("3", "is not an object"),
        ];
        for (output, needle) in cases {
            let err = issues(output).unwrap_err();
            assert!(err.contains(needle), "{output:?}: {err}");
        }
    }

    #[test]
    fn the_end_of_standard_error_is_shown_on_one_line() {
        assert_eq!(stderr_tail(b""), "");
        assert_eq!(stderr_tail(b"Traceback\n  boom\n"), ": Traceback boom");
        let long = format!("{}é{}", "a".repeat(1000), "z".repeat(10));
        let tail = stderr_tail(long.as_bytes());
        assert!(
            tail.starts_with(": ...") && tail.ends_with("zzzzzzzzzz"),
            "{tail}"
        );
        assert!(tail.len() < STDERR_SHOWN + 10);
    }

    fn sh(script: &str) -> CheckCommand {
        CheckCommand {
            line: format!("sh -c {script}"),
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            timeout: Duration::from_secs(10),
            hidden: Vec::new(),
        }
    }

    #[tokio::test]
    async fn the_command_reads_the_value_and_the_input_and_prints_issues() {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen.json");
        let script = format!(
            "cat > '{}'; echo '{{\"path\": \"/name\", \"message\": \"m\", \"severity\": \"soft\"}}'",
            seen.display()
        );
        let input = json!({"text": "Ada"}).as_object().cloned().unwrap();
        let found = sh(&script)
            .check(json!({"name": "Ada"}), Arc::new(input))
            .await
            .unwrap();
        assert_eq!(found.as_slice().len(), 1);
        assert_eq!(found.as_slice()[0].severity, Severity::Soft);
        let seen: Value = serde_json::from_str(&std::fs::read_to_string(seen).unwrap()).unwrap();
        assert_eq!(
            seen,
            json!({"value": {"name": "Ada"}, "input": {"text": "Ada"}})
        );
    }

    #[tokio::test]
    async fn a_failing_command_is_a_check_error_naming_it_with_its_stderr() {
        let input = Arc::new(Context::new());
        let err = sh("echo 'no such field' >&2; exit 3")
            .check(json!({}), Arc::clone(&input))
            .await
            .unwrap_err();
        assert!(
            err.message.starts_with("the check command `sh -c echo"),
            "{}",
            err.message
        );
        assert!(
            err.message.ends_with("exited with status 3: no such field"),
            "{}",
            err.message
        );

        // Only the timeout can end this check with an error: the command would pass, much later.
        let mut slow = sh("sleep 300");
        slow.timeout = Duration::from_millis(200);
        let err = slow.check(json!({}), Arc::clone(&input)).await.unwrap_err();
        assert!(
            err.message.contains("did not finish within 0.2 s"),
            "{}",
            err.message
        );

        let missing = CheckCommand::new("/nonexistent/check --x", Duration::from_secs(1)).unwrap();
        let err = missing
            .check(json!({}), Arc::clone(&input))
            .await
            .unwrap_err();
        assert!(
            err.message
                .starts_with("the check command `/nonexistent/check --x` could not start"),
            "{}",
            err.message
        );

        let err = sh("echo fine").check(json!({}), input).await.unwrap_err();
        assert!(
            err.message.contains("\"fine\", is not JSON"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn output_past_the_bound_is_dropped_and_fails_the_check() {
        let mut endless = sh("yes '{\"message\": \"m\"}' | head -c 3000000");
        endless.timeout = Duration::from_secs(20);
        let err = endless
            .check(json!({}), Arc::new(Context::new()))
            .await
            .unwrap_err();
        assert!(err.message.contains("printed more than"), "{}", err.message);
    }

    /// Whether the process `pid` is gone (or dead, waiting to be reaped), looked up until it is: a
    /// killed process may take a moment to go. The bound is a hang guard, no claim of speed.
    #[cfg(target_os = "linux")]
    async fn gone(pid: &str) -> bool {
        let stat = format!("/proc/{}/stat", pid.trim());
        for _ in 0..600 {
            match std::fs::read_to_string(&stat) {
                Err(_) => return true,
                // The state follows the command name in parentheses: Z is a zombie, X dead.
                Ok(text)
                    if text
                        .rsplit(") ")
                        .next()
                        .is_some_and(|rest| rest.starts_with(['Z', 'X'])) =>
                {
                    return true
                }
                Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        false
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn what_the_command_leaves_running_ends_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        // Exits at once, passing the value, and leaves a process holding its standard output.
        let mut quick = sh(&format!("sleep 300 & echo $! > '{}'", pid.display()));
        // A hang guard: the check ends when `sh` exits, the background sleep killed with it.
        quick.timeout = Duration::from_secs(120);
        let found = quick.check(json!({}), Arc::new(Context::new())).await;
        assert!(found.unwrap().as_slice().is_empty());
        let left = std::fs::read_to_string(&pid).unwrap();
        assert!(gone(&left).await, "process {left} outlived the check");

        // Out of time: the whole group goes, not only the command.
        let mut slow = sh(&format!(
            "sleep 300 & echo $! > '{}'; sleep 300",
            pid.display()
        ));
        std::fs::remove_file(&pid).unwrap();
        slow.timeout = Duration::from_secs(3);
        let err = slow
            .check(json!({}), Arc::new(Context::new()))
            .await
            .unwrap_err();
        assert!(err.message.contains("did not finish"), "{}", err.message);
        let left = std::fs::read_to_string(&pid).expect("the command started its sleep in 3 s");
        assert!(gone(&left).await, "process {left} outlived the check");
    }

    #[tokio::test]
    async fn the_command_runs_without_the_hidden_variables() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("env");
        let script = format!("env > '{}'", env.display());
        // Any variable can be hidden; cargo sets this one for the tests it runs.
        let hidden = "CARGO_MANIFEST_DIR";
        assert!(std::env::var_os(hidden).is_some());
        let command = sh(&script).without_env(vec![hidden.into()]);
        command
            .check(json!({}), Arc::new(Context::new()))
            .await
            .unwrap();
        let seen = std::fs::read_to_string(&env).unwrap();
        assert!(
            !seen.lines().any(|l| l.starts_with("CARGO_MANIFEST_DIR=")),
            "{seen}"
        );
        assert!(seen.lines().any(|l| l.starts_with("PATH=")), "{seen}");
    }

    #[test]
    fn the_fingerprint_changes_with_the_files_the_command_names() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("checks.py");
        std::fs::write(&script, "print()\n").unwrap();
        let line = format!("python3 '{}' --strict", script.display());
        let before = fingerprint(&line);
        assert_eq!(
            before,
            format!(
                "command={line}\nfile {}={:016x}",
                script.display(),
                llm_extract::stable_hash::hash(b"print()\n")
            )
        );
        assert_eq!(fingerprint(&line), before);
        std::fs::write(&script, "print('{\"message\": \"m\"}')\n").unwrap();
        assert_ne!(fingerprint(&line), before);
        // Words that name no file (a program found on PATH, a flag) are only in the line.
        assert_eq!(
            fingerprint("python3 -m checks"),
            "command=python3 -m checks"
        );
    }

    #[test]
    fn an_empty_command_is_a_usage_error() {
        let err = CheckCommand::new("  ", Duration::from_secs(1)).unwrap_err();
        assert!(err.message.contains("is empty"), "{}", err.message);
        let err = CheckCommand::new("python3 'x", Duration::from_secs(1)).unwrap_err();
        assert!(err.message.contains("never closed"), "{}", err.message);
    }
}
