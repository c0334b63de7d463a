//! The command line. Everything a user reads in `--help` is here.

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  extraction failed: no valid answer after the repairs (batch: at least one document failed;
     each failure is recorded in the output)
  2  usage or configuration error: bad flags, an unreadable or invalid schema, config or input,
     a missing template variable, a schema the backend cannot enforce (try --mode prompted)
  3  backend unavailable: cannot connect, timeout, HTTP error, unknown model, model file not loadable
  4  the output could not be written
Errors are printed on standard error as one line starting with \"llm-extract: error:\".";

const BACKENDS: &str = "\
Backends: --ollama URL, --openai URL (an OpenAI-compatible server such as vLLM or llama-server),
--anthropic[=URL] (key in ANTHROPIC_API_KEY), --gemini[=URL] (key in GEMINI_API_KEY) or
--embedded[=GGUF] (builds with the llama-cpp feature). Without any of them: the Ollama server in
OLLAMA_HOST if it is set, else the embedded model if this build has it, else Ollama on
http://127.0.0.1:11434.

Keys go only where they are meant to: OPENAI_API_KEY only to https://api.openai.com,
ANTHROPIC_API_KEY only to https://api.anthropic.com, GEMINI_API_KEY only to
https://generativelanguage.googleapis.com. Any other server (a proxy, a gateway, a vLLM node) gets a key
only when one is named for it: `--api-key-env VAR` right after its backend flag, e.g.
`--openai https://node1:8000/v1 --api-key-env NODE1_KEY --anthropic --gemini=https://gw/ --api-key-env GW_KEY`.
No key, nor credentials written into a URL (user:password@, ?key=), goes over plain http to a host other
than this machine (localhost, 127.0.0.0/8, ::1) unless --allow-insecure-key is given, and no request
follows a redirect to another scheme, host or port.";

/// Typed, validated JSON from a language model, in a shell pipeline.
#[derive(Debug, Parser)]
#[command(
    name = "llm-extract",
    version,
    about,
    after_help = format!("Examples:
  llm-extract run --schema person.json < bio.txt
  llm-extract run --signature '{{name :string, age :int}}' --jsonl < people.txt | jq .name
  llm-extract prompt --config prompts.json --id extract-definitions text=@paper.txt
  llm-extract schema --schema person.json --dialect openai
  llm-extract batch --schema person.json --input docs/ --out results.jsonl --concurrency 8
  llm-extract eval --schema person.json --gold people.jsonl --json run.json --html run.html

{BACKENDS}

{EXIT_CODES}")
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Extract a value (or, with --jsonl, every item) from text on standard input.
    #[command(after_help = format!("Examples:
  llm-extract run --schema person.json < bio.txt
  llm-extract run --schema person.json --jsonl --ollama http://gpu:11434 --model qwen2.5 < team.txt
  llm-extract run --signature '(text :string, lang :string) -> {{summary :string}}' lang=French < a.txt
  cat notes.txt | llm-extract run --signature '{{todo :string, due :string?}}' --jsonl --no-streaming
  llm-extract run --signature '{{total :float, date :string}}' --anthropic --image receipt.jpg

The text is read from standard input as the template variable `text` (or pass text=@file.txt).
--image and --pdf send files with it (or alone) to a backend that reads them.
With --jsonl each item is printed as one JSON line as soon as it is complete.

{BACKENDS}

{EXIT_CODES}"))]
    Run(RunArgs),
    /// Run a named prompt from a prompt config file (text, json or jsonl answers).
    #[command(after_help = format!("Examples:
  llm-extract prompt --config prompts.json --list
  llm-extract prompt --config prompts.json --id extract-definitions text=@paper.txt
  llm-extract prompt --config prompts.json --id summarize language=French < article.txt

A prompt config is a JSON object of prompts keyed by id, each with \"prompt\" (a template with
{{{{var}}}} placeholders), \"response-type\" (text, json or jsonl) and \"schema\" (json: the whole answer;
jsonl: each line; \"object-schema\" is accepted too). Text answers stream as they are written; jsonl
lines are printed as they complete; an empty jsonl answer is a warning on standard error, not an error.

{BACKENDS}

{EXIT_CODES}"))]
    Prompt(PromptArgs),
    /// Show what would be sent: the schema in a backend's dialect, or the format instructions.
    #[command(after_help = format!("Examples:
  llm-extract schema --schema person.json --dialect gbnf
  llm-extract schema --signature '{{name :string, tags [:string]}}' --dialect openai --jsonl
  llm-extract schema --schema person.json --instructions

In constrained mode a server gets the schema in its dialect; for --jsonl a server gets the list shape
({{\"items\": [...]}}, see --shape list) while the embedded engine constrains each line.

{EXIT_CODES}"))]
    Schema(SchemaArgs),
    /// Extract from many documents: bounded concurrency, resumable, several servers round-robin.
    #[command(after_help = format!("Examples:
  llm-extract batch --schema invoice.json --input invoices/ --out invoices.jsonl
  llm-extract batch --signature '{{name :string}}' --jsonl --input rows.jsonl --out people.jsonl \\
      --openai http://node1:8000/v1 --openai http://node2:8000/v1 --model Qwen/Qwen2.5-7B-Instruct --concurrency 32

Input: a directory (every file in it, recursively, except hidden ones; the id is the relative path) or
a JSON Lines file (one document per line: an object whose \"id\" names it and whose other fields are
template variables, \"text\" among them; or a JSON string, the text; the id is then line-N). A line
names its images and PDFs with \"images\": [\"a.png\", ...] and \"pdf\": \"b.pdf\" (relative to the input
file), and a directory's images and PDFs are sent as themselves.
Output: one JSON line per document, {{\"id\", \"ok\": true, \"value\"}} or {{\"id\", \"ok\": false, \"error\",
\"kind\"}}, appended as each document finishes. Run the same command again to resume: documents already
in the output are skipped (failed ones too, unless --retry-failed). A progress bar is drawn on standard
error when it is a terminal.

{BACKENDS}

{EXIT_CODES}"))]
    Batch(BatchArgs),
    /// Extract every item of a long document: chunked, grounded in the text, merged; JSON Lines with spans.
    #[command(after_help = format!("Examples:
  llm-extract doc --signature '{{name :string, role :string?}}' --grounded name --key name < book.txt
  llm-extract doc --schema people.json --grounded name --passes 2 --html review.html book.txt
  llm-extract doc --schema people.json --grounded name --embedded --chunk-tokens 768 book.txt

The document (a path, or standard input) is split on paragraph, then sentence boundaries into chunks of
--chunk-tokens tokens (counted as 3 bytes each), overlapping by a tenth; each chunk is extracted as with
`run --jsonl`. A --grounded property must quote the text: each value is found in the chunk (exactly,
normalized, or fuzzily), a value that is not is re-asked, and each item is printed as
{{\"value\": ..., \"spans\": [{{\"path\", \"value\", \"bytes\", \"chars\", \"match\"}}]}} with byte and char
offsets into the whole document. Items with equal --key properties (or, without keys, equal values)
are merged. A summary and every failed chunk are reported on standard error; the exit code is 1 when a
chunk failed (the other chunks' items are printed), 3 when no chunk reached the backend.

The document is streamed: memory is bounded by the chunk size, not the document's (only --html reads it
whole, to write the page). A path is read in place, once to check it is UTF-8 and hash it (resuming is
keyed by the hash), then once per pass to count its chunks and once per pass to extract them. Standard
input is first copied to an anonymous temporary file, removed when the command ends: it needs as much free
disk in $TMPDIR (default /tmp) as the document.

{BACKENDS}

{EXIT_CODES}"))]
    Doc(DocArgs),
    /// Measure extraction against a gold file: per-field precision, recall, F1 and accuracy.
    #[command(after_help = format!("Examples:
  llm-extract eval --schema invoice.json --gold invoices.jsonl --openai http://127.0.0.1:8080/v1 --model m
  llm-extract eval --schema invoice.json --gold invoices.jsonl --example shown.jsonl --json with.json \\
      --compare without.json --html report.html
  llm-extract eval --signature '{{name :string}}' --jsonl --texts texts.jsonl --values names.jsonl
  llm-extract eval --schema invoice.json --gold invoices.jsonl --check-command 'python3 checks.py' \\
      --json checked.json --compare greedy.json

The gold file has one JSON object per line: {{\"id\", \"text\", \"value\"}} (\"expected\" is read as \"value\"),
optionally \"accept\" (other accepted answers per field: a property name or JSON pointer to a list) and
\"spans\" ([{{\"path\": \"/name\", \"chars\": [start, end]}}]: grounded values are then scored by overlap).
Or --texts and --values: two files matched by \"id\" when every line has one, else line by line.

Each document is extracted as `batch` does (one at a time unless --concurrency), then every leaf of its
value is scored against the gold: strings normalised (case folded, whitespace collapsed, surrounding
punctuation trimmed), numbers within the tolerance, booleans, null and enum values exact; list items
paired by the schema's key properties (\"x-key\": true), else by the pairing that matches the most
fields. The table (per field and overall: accuracy, precision, recall, F1; validity, tokens and time per
document) goes to standard output; --json writes the whole run (reusable by --compare), --html a
self-contained page. A progress bar is drawn on standard error when it is a terminal.

With --check-command each value is checked as in `batch`: a value whose hard issues outlast the
repairs is no value (its fields count as missed), so precision shows what the checks let through.

Exit codes: 0 the run was measured (whatever its accuracy), 1 the accuracy is below --min-accuracy,
2 usage or configuration error (an unreadable gold file, schema or --compare file), 3 no document
reached the backend, 4 the table, --json or --html could not be written.

{BACKENDS}"))]
    Eval(EvalArgs),
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub source: SchemaSource,
    /// The gold file: one {"id", "text", "value"} per line.
    #[arg(
        long,
        value_name = "FILE.jsonl",
        required_unless_present = "texts",
        conflicts_with = "texts"
    )]
    pub gold: Option<PathBuf>,
    /// The texts, one per line (a JSON string, {"id", "text"}, or the line itself); with --values.
    #[arg(long, value_name = "FILE", requires = "values")]
    pub texts: Option<PathBuf>,
    /// The gold values, one per line ({"id", "value"}, or the value itself); with --texts.
    #[arg(long, value_name = "FILE", requires = "texts")]
    pub values: Option<PathBuf>,
    /// Extract every item of each text (the gold value is then the list of items).
    #[arg(long)]
    pub jsonl: bool,
    /// Write the whole run as JSON (per field, per document, with every scored leaf).
    #[arg(long, value_name = "FILE.json")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report: a bar per field and the worst documents.
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// A previous run's --json: print (and put in the page) each field's change against it.
    #[arg(long, value_name = "RUN.json")]
    pub compare: Option<PathBuf>,
    /// How many documents are extracted at the same time (more skews the time per document).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub concurrency: usize,
    /// Numbers agree when they differ by at most this share of the larger one.
    #[arg(long, value_name = "SHARE", default_value_t = 1e-6)]
    pub relative_tolerance: f64,
    /// Numbers agree when they differ by at most this much.
    #[arg(long, value_name = "X", default_value_t = 1e-9)]
    pub absolute_tolerance: f64,
    /// Grounded spans agree when their intersection over union is at least this share.
    #[arg(long, value_name = "SHARE", default_value_t = 0.5)]
    pub span_overlap: f64,
    /// Exit 1 when the field accuracy is below this percentage (for scripts and CI).
    #[arg(long, value_name = "PERCENT")]
    pub min_accuracy: Option<f64>,
    #[command(flatten)]
    pub template: TemplateArgs,
    #[command(flatten)]
    pub extract: ExtractArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

#[derive(Debug, Args)]
pub struct DocArgs {
    #[command(flatten)]
    pub source: SchemaSource,
    /// A property of the item whose value must quote the text (repeatable).
    #[arg(long, value_name = "FIELD")]
    pub grounded: Vec<String>,
    /// A property that identifies an item when copies are merged (repeatable).
    #[arg(long, value_name = "FIELD")]
    pub key: Vec<String>,
    /// How many times the document is read, chunk boundaries moved each time (recall).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub passes: u32,
    /// How many chunks are extracted at the same time (with --embedded, as sequences the engine decodes
    /// together, as in `batch`).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub concurrency: usize,
    /// The size of a chunk in tokens: counted with the model's tokenizer on the embedded engine, else taken
    /// as 3 bytes each [default: 1024 on the embedded engine, else 2000].
    #[arg(long, value_name = "N")]
    pub chunk_tokens: Option<usize>,
    /// Drop an item whose --grounded value is still nowhere in the text after the repairs (default: print
    /// it with a "not_found" span).
    #[arg(long)]
    pub require_grounding: bool,
    /// Also write the review page: the document with every span highlighted, one self-contained HTML file.
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// One value from the whole document rather than a list of items (a contract's parties and dates):
    /// each property taken from the chunk that grounds it best, the chunks that disagree noted on
    /// standard error; one record with "sources" (the pass and chunk of each property).
    #[arg(long, conflicts_with = "html")]
    pub one: bool,
    /// Ask every chunk, ignoring the chunks an earlier interrupted or failed run of the same command
    /// finished (by default they are kept in the cache directory and only the missing ones are asked).
    #[arg(long)]
    pub no_resume: bool,
    // --template fills only {{text}} (each chunk); the text before it, a context every chunk is sent
    // with, is kept by a provider's prompt cache.
    #[command(flatten)]
    pub template: TemplateArgs,
    #[command(flatten)]
    pub extract: ExtractArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
    /// The document: a text, a PDF (its text layer, page by page) or a web page (its main text)
    /// (default: standard input).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
}

/// Where the schema comes from.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct SchemaSource {
    /// A JSON Schema file (draft 4, 6, 7, 2019-09 or 2020-12, by its $schema; 2020-12 by default).
    /// Answers are validated against it as written; its $refs must stay inside the file.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// A signature instead of a schema file, e.g. '(text :string) -> {sentiment (positive | negative), score :float}'.
    #[arg(long, value_name = "SIGNATURE")]
    pub signature: Option<String>,
}

/// Which model answers.
#[derive(Debug, Args, Clone)]
pub struct BackendArgs {
    /// An Ollama server (repeat to share a batch round-robin between several).
    #[arg(long, value_name = "URL", help_heading = "Backend")]
    pub ollama: Vec<String>,
    /// An OpenAI-compatible server, e.g. http://host:8000/v1 (repeatable, like --ollama).
    #[arg(long, value_name = "URL", help_heading = "Backend")]
    pub openai: Vec<String>,
    /// Anthropic's Messages API (default https://api.anthropic.com; repeatable).
    #[arg(
        long,
        value_name = "URL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        help_heading = "Backend"
    )]
    pub anthropic: Vec<String>,
    /// The Gemini API (default https://generativelanguage.googleapis.com; repeatable).
    #[arg(
        long,
        value_name = "URL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        help_heading = "Backend"
    )]
    pub gemini: Vec<String>,
    /// The model name (Ollama default: $OLLAMA_MODEL, else llama3.2; required with --openai, --anthropic
    /// and --gemini unless $OPENAI_MODEL, $ANTHROPIC_MODEL or $GEMINI_MODEL is set).
    #[arg(long, value_name = "NAME", help_heading = "Backend")]
    pub model: Option<String>,
    /// The environment variable holding the API key of the --openai, --anthropic or --gemini flag just
    /// before it (repeatable, one per backend; alone with a single backend, anywhere). Without it a
    /// backend gets its provider's own variable only at the provider's own API (OPENAI_API_KEY for
    /// https://api.openai.com, ANTHROPIC_API_KEY for https://api.anthropic.com, GEMINI_API_KEY for
    /// https://generativelanguage.googleapis.com), and any other server no key.
    #[arg(long, value_name = "VAR", help_heading = "Backend")]
    pub api_key_env: Vec<String>,
    /// Send API keys, and credentials written into a backend's URL (user:password@, ?key=), over plain
    /// http to hosts other than this machine (refused by default: anyone on the network between could
    /// read them). For a trusted network only.
    #[arg(long, help_heading = "Backend")]
    pub allow_insecure_key: bool,
    /// Which backend each --api-key-env names the key of, from the order of the command line.
    #[arg(skip)]
    pub key_envs: Vec<KeyEnv>,
    /// Run a GGUF model in process (default: $LLM_EXTRACT_MODEL, else the cached default model). Needs a build with the llama-cpp feature.
    #[arg(
        long,
        value_name = "GGUF",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        conflicts_with_all = ["ollama", "openai", "anthropic", "gemini"],
        help_heading = "Backend"
    )]
    pub embedded: Option<String>,
    /// Keep the answers that passed validation in DIR and answer the same request from there again
    /// (a rerun of `batch` or `eval` asks the model only what failed or changed). Keyed by the request,
    /// the backend and a salted digest of its key; the key itself is never written.
    #[arg(long, value_name = "DIR", help_heading = "Backend")]
    pub cache: Option<std::path::PathBuf>,
    /// How many times a request to a server is re-sent after a transient failure (connection refused,
    /// 429, 503, ...) [default: 3].
    #[arg(long, value_name = "N", help_heading = "Backend")]
    pub retries: Option<u32>,
    /// How long a server may go without sending a byte of its answer before the answer counts as
    /// broken, a transient failure retried like the others (seconds, fractions allowed).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "60",
        value_parser = seconds,
        help_heading = "Backend"
    )]
    pub idle_timeout: std::time::Duration,
    /// With --mode tool, force the tool of an --openai server with tool_choice "required" instead of
    /// naming it (llama-server takes only "auto", "none" and "required").
    #[arg(long, help_heading = "Backend")]
    pub tool_choice_required: bool,
    /// Ask the backends given in the order they are written, the next one only when the one before
    /// fails transiently, is rate-limited, refuses the request or finds it too long, or cannot take
    /// it (its schema dialect, images and PDFs, log-probabilities), instead of sharing the work
    /// round-robin. A backend that said when to come back is passed over until then. Each batch
    /// record names the backend that answered.
    #[arg(long, help_heading = "Backend")]
    pub fallback: bool,
    /// At most N requests a minute to each backend, shared by every concurrent extraction (a
    /// rate-limited answer that says how long to wait pauses them all that long).
    #[arg(long, value_name = "N", help_heading = "Backend")]
    pub requests_per_minute: Option<u32>,
    /// At most N tokens (prompt and answer) a minute to each backend, counted before each request
    /// and corrected by the usage the answer reports.
    #[arg(long, value_name = "N", help_heading = "Backend")]
    pub tokens_per_minute: Option<u64>,
    /// Write every request sent to a server and its response into DIR, one JSON file per exchange
    /// (a retry is an exchange of its own): API keys and the URL's credentials redacted, images and
    /// PDFs replaced by their size and SHA-256.
    #[arg(long, value_name = "DIR", help_heading = "Backend")]
    pub dump_exchanges: Option<PathBuf>,
    /// Where each --ollama, --openai, --anthropic and --gemini value stands on the command line, in
    /// the order the backends are built (for --fallback's order).
    #[arg(skip)]
    pub written: Vec<usize>,
}

/// How the extraction runs.
#[derive(Debug, Args, Clone)]
pub struct ExtractArgs {
    /// A PDF the backend cannot take (the embedded engine, Ollama) goes as its text layer, and a scan
    /// as one image per page, instead of being refused; files by URL and images are never converted.
    #[arg(long)]
    pub convert_media: bool,
    /// The most answers requested per extraction: the first plus repairs.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_attempts: u32,
    /// The most tokens one answer may have [default: what the schema bounds, else 1024 for one value and
    /// 4096 for a list].
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// constrained: the backend enforces the schema; prompted: the schema is only described in the prompt;
    /// tool: the schema goes out as one tool the model must call (OpenAI-compatible, Anthropic).
    #[arg(long, value_enum, default_value_t = ModeArg::Constrained)]
    pub mode: ModeArg,
    /// The sampling temperature [default: 0, greedy and seeded, on every backend; a model that loops is
    /// stopped and re-asked with a repeat penalty].
    #[arg(long, value_name = "T")]
    pub temperature: Option<f32>,
    /// Ask for N answers per extraction and merge them field by field by vote (self-consistency): the
    /// first at --temperature (greedy by default), the others at a small temperature (0.3 unless
    /// --temperature is above 0) with seeds seed+1... Costs N times the tokens; each value's agreement
    /// goes into batch records. For run, eval and batch (one value or --jsonl items; doc and chunked
    /// texts take one answer).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub samples: u16,
    /// How one value is asked for: one-answer (the whole value at once) or per-field (a short question per
    /// field: strings copied from the text, enums and booleans chosen by the model's likelihood on
    /// --embedded, numbers and dates copied and read by code). For one value (run, eval, batch, doc where
    /// it extracts one value); --jsonl items take one answer.
    #[arg(long, value_enum, default_value_t = StrategyArg::OneAnswer)]
    pub strategy: StrategyArg,
    /// Write every failed attempt's raw answer into this directory, for inspection.
    #[arg(long, value_name = "DIR")]
    pub save_raw: Option<PathBuf>,
    /// Do not name, on standard error, the schema keywords the backend will not enforce (they are
    /// checked locally either way).
    #[arg(long)]
    pub quiet: bool,
    /// Ask for token log-probabilities and give each field a confidence from 0 to 1: printed with its
    /// value on standard error (`run`), in each record's "confidence" (`batch`), calibrated against the
    /// gold (`eval`). The embedded engine, --openai and --gemini give them; --anthropic and --ollama do
    /// not.
    #[arg(long)]
    pub confidence: bool,
    /// How a field's confidence is computed (implies --confidence): from the log-probabilities among
    /// the tokens the grammar allowed or over the whole vocabulary (embedded engine), as the exp of
    /// their mean or of their sum.
    #[arg(long, value_enum, value_name = "RULE")]
    pub confidence_rule: Option<ConfidenceRuleArg>,
    /// Mark every field whose confidence is below X (0 to 1) as doubtful, a soft issue (implies
    /// --confidence).
    #[arg(long, value_name = "X")]
    pub min_confidence: Option<f32>,
}

/// How a field's confidence is computed (see `--confidence-rule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfidenceRuleArg {
    /// Among the allowed tokens, exp of the mean (the default).
    AllowedMean,
    /// Among the allowed tokens, exp of the sum.
    AllowedSum,
    /// Over the vocabulary, exp of the mean.
    VocabularyMean,
    /// Over the vocabulary, exp of the sum.
    VocabularySum,
}

/// Checks a schema cannot say, run by a program of the user's.
#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// Run COMMAND on each complete value (each item with --jsonl and in doc) to check what a schema
    /// cannot say; its hard issues are sent back to the model, its soft ones printed with the value.
    ///
    /// COMMAND is split into words (spaces separate them, '...' and "..." group them) and run directly,
    /// not by a shell (for pipes or variables, use sh -c '...'). It reads one JSON object on standard
    /// input, {"value": VALUE, "input": {"text": TEXT, ...}}: the value, and the template variables of
    /// the extraction (in doc, the chunk's text). It prints each issue it finds as a JSON line,
    /// {"path": "/total", "message": "the total is not the sum of the lines", "severity": "hard"} (or one
    /// JSON array of them; nothing when the value passes), and exits 0. "path" is a JSON pointer into the
    /// value ("" or left out: the whole value); "severity" is "hard" (the default: the model is asked
    /// again with the path and the message, within --max-attempts) or "soft" (the value is kept and the
    /// issue goes with it: on standard error in run, in each record's "issues" in batch). A command that
    /// cannot start, exits with another status, outlasts --check-timeout or prints anything else fails
    /// the extraction with its message and the end of its standard error: a value that could not be
    /// checked is never passed as checked. Output past 1 MiB fails the check.
    ///
    /// COMMAND runs in a process group of its own, ended once COMMAND exits or times out, or when this
    /// command is interrupted (what it started in the background included). Its environment is this command's without the variables
    /// keys and credentials are read from (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,
    /// OLLAMA_HOST and every --api-key-env VAR); --check-with-keys passes them too.
    #[arg(long, value_name = "COMMAND", help_heading = "Checks")]
    pub check_command: Option<String>,
    /// Give --check-command the variables API keys and credentials are read from too (by default its
    /// environment has none of them).
    #[arg(long, requires = "check_command", help_heading = "Checks")]
    pub check_with_keys: bool,
    /// How long --check-command may run on one value (seconds, fractions allowed).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "30",
        value_parser = seconds,
        help_heading = "Checks"
    )]
    pub check_timeout: std::time::Duration,
    /// A value whose hard issues (from --check-command) outlast --max-attempts is kept instead of
    /// failing: the issues go with it as soft ones ("doubtful"). For one value per document (run
    /// without --jsonl, batch, eval); a small model often cannot mend what a check finds.
    #[arg(long, help_heading = "Checks")]
    pub keep_doubtful: bool,
}

/// What the prompt says besides the schema.
#[derive(Debug, Args, Clone)]
pub struct TemplateArgs {
    /// The user prompt template, with {{var}} placeholders (default: {{text}}); @FILE reads it from a file.
    #[arg(long, value_name = "TEMPLATE")]
    pub template: Option<String>,
    /// The system instructions placed before the format instructions; @FILE reads them from a file.
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Worked examples shown to the model before the input (repeatable): a JSON Lines file, each line
    /// {"text": ..., "value": ...} (with --jsonl also {"text": ..., "items": [...]}), checked against the schema.
    #[arg(long, value_name = "FILE.jsonl")]
    pub example: Vec<PathBuf>,
}

/// Images and PDF documents sent with the text, to a backend that reads them (a vision model).
#[derive(Debug, Args, Clone, Default)]
pub struct MediaArgs {
    /// An image sent with the text (PNG, JPEG, WebP or GIF, told by its first bytes; repeatable).
    /// Ollama, OpenAI-compatible servers, Anthropic and Gemini take images; the embedded engine does not.
    #[arg(long = "image", value_name = "FILE")]
    pub images: Vec<PathBuf>,
    /// A PDF document sent with the text (repeatable). OpenAI-compatible servers, Anthropic and Gemini
    /// take PDFs; Ollama and the embedded engine do not (`doc` reads a PDF's text locally).
    #[arg(long = "pdf", value_name = "FILE")]
    pub pdfs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: SchemaSource,
    /// Extract every item, printed as JSON Lines (the schema describes one item).
    #[arg(long)]
    pub jsonl: bool,
    /// Wait for the whole answer and print it at once (default: print each item as it completes).
    #[arg(long)]
    pub no_streaming: bool,
    /// Print the value as it is written: each snapshot of it as one compact JSON line (strings as far
    /// as written, numbers once complete), then the validated value as the last line.
    #[arg(long, conflicts_with_all = ["jsonl", "no_streaming"])]
    pub partial: bool,
    /// Pretty-print values (default: one compact line each).
    #[arg(long)]
    pub pretty: bool,
    #[command(flatten)]
    pub template: TemplateArgs,
    #[command(flatten)]
    pub media: MediaArgs,
    #[command(flatten)]
    pub extract: ExtractArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
    /// Template variables: key=value, or key=@file to read the value from a file.
    #[arg(value_name = "KEY=VALUE")]
    pub vars: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The prompt config file.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The prompt to run.
    #[arg(long, value_name = "ID", required_unless_present = "list")]
    pub id: Option<String>,
    /// List the prompts of the config and exit.
    #[arg(long)]
    pub list: bool,
    /// Wait for the whole answer and print it at once (default: stream text and jsonl lines).
    #[arg(long)]
    pub no_streaming: bool,
    /// Pretty-print JSON values.
    #[arg(long)]
    pub pretty: bool,
    #[command(flatten)]
    pub extract: ExtractArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
    /// Template variables: key=value, or key=@file to read the value from a file. Standard input, when it
    /// is not a terminal, is the variable `text` unless text=... is given.
    #[arg(value_name = "KEY=VALUE")]
    pub vars: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    #[command(flatten)]
    pub source: SchemaSource,
    /// The dialect to render the schema in.
    #[arg(long, value_enum, default_value_t = DialectArg::Generic)]
    pub dialect: DialectArg,
    /// Show the schema of one line of a JSON Lines answer (same as --shape line).
    #[arg(long, conflicts_with = "shape")]
    pub jsonl: bool,
    /// Which shape: one value, one line of JSON Lines, or the {"items": [...]} list.
    #[arg(long, value_enum)]
    pub shape: Option<ShapeArg>,
    /// Show the format instructions put in the prompt instead of the schema.
    #[arg(long)]
    pub instructions: bool,
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(flatten)]
    pub source: SchemaSource,
    /// Extract every item of each document (its value is then an array).
    #[arg(long)]
    pub jsonl: bool,
    /// A directory of documents, or a JSON Lines file of documents.
    #[arg(long, value_name = "DIR|FILE.jsonl")]
    pub input: PathBuf,
    /// The results file (JSON Lines, appended to; documents already in it are skipped).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// How many documents are extracted at the same time, over all backends [default: 4]. The embedded
    /// engine decodes one at a time unless --concurrency is given; then it decodes N sequences together
    /// (faster on a large machine, but a sequence decoded beside others is computed in another
    /// floating-point order, so a near-tie can change a greedy answer).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Run again the documents the output records as failed (their records are replaced).
    #[arg(long)]
    pub retry_failed: bool,
    #[command(flatten)]
    pub provider_batch: ProviderBatchArgs,
    #[command(flatten)]
    pub template: TemplateArgs,
    // Sent with every document; a line of a JSON Lines input names its own with "images" and "pdf".
    #[command(flatten)]
    pub media: MediaArgs,
    #[command(flatten)]
    pub extract: ExtractArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// The flags of `batch` on a provider's batch API.
#[derive(Debug, Clone, Args)]
pub struct ProviderBatchArgs {
    /// Send the documents through the provider's batch API (one --openai, --anthropic or --gemini
    /// backend; at its batch price) instead of one online request each. Jobs, results and state are
    /// kept in a manifest beside --out (FILE.batch-manifest.jsonl): running the same command again
    /// polls the jobs still running and reads what finished, never paying twice for a request.
    #[arg(long, help_heading = "Provider batch")]
    pub provider_batch: bool,
    /// Seconds between two polls of running jobs [default: 30].
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "provider_batch",
        help_heading = "Provider batch"
    )]
    pub poll: Option<f64>,
    /// Send re-asks (repairs of invalid answers) online, at once, instead of in follow-up jobs.
    #[arg(long, requires = "provider_batch", help_heading = "Provider batch")]
    pub reask_online: bool,
    /// At most N requests per job (the provider's own limit is the most).
    #[arg(
        long,
        value_name = "N",
        requires = "provider_batch",
        help_heading = "Provider batch"
    )]
    pub job_requests: Option<usize>,
}

/// A backend flag that takes a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosted {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Hosted {
    /// The flag, as the user writes it.
    pub fn flag(self) -> &'static str {
        match self {
            Hosted::OpenAi => "--openai",
            Hosted::Anthropic => "--anthropic",
            Hosted::Gemini => "--gemini",
        }
    }
}

/// An --api-key-env and the backend it names the key of: the `nth` value of the flag `backend`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEnv {
    pub backend: Hosted,
    pub nth: usize,
    pub var: String,
}

impl BackendArgs {
    /// The variable named for the `nth` `backend` flag's key, if one is.
    pub fn key_env(&self, backend: Hosted, nth: usize) -> Option<&str> {
        self.key_envs
            .iter()
            .find(|k| k.backend == backend && k.nth == nth)
            .map(|k| k.var.as_str())
    }
}

impl Command {
    fn backend_mut(&mut self) -> Option<&mut BackendArgs> {
        match self {
            Command::Run(args) => Some(&mut args.backend),
            Command::Prompt(args) => Some(&mut args.backend),
            Command::Batch(args) => Some(&mut args.backend),
            Command::Doc(args) => Some(&mut args.backend),
            Command::Eval(args) => Some(&mut args.backend),
            Command::Schema(_) => None,
        }
    }
}

/// The command line of this process (clap prints its own errors and `--help`, and exits); an error
/// when an --api-key-env names no backend's key.
pub fn parse() -> Result<Cli, String> {
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    pair_key_envs(&matches, &mut cli)?;
    note_written_order(&matches, &mut cli);
    Ok(cli)
}

/// Notes where each backend flag's value stands on the command line, in the order `backends.rs` builds
/// the backends (every --ollama, then --openai, --anthropic, --gemini).
fn note_written_order(matches: &ArgMatches, cli: &mut Cli) {
    let (Some((_, sub)), Some(backend)) = (matches.subcommand(), cli.command.backend_mut()) else {
        return;
    };
    backend.written = ["ollama", "openai", "anthropic", "gemini"]
        .into_iter()
        .filter(|id| sub.try_contains_id(id).unwrap_or(false))
        .flat_map(|id| sub.indices_of(id).into_iter().flatten())
        .collect();
}

/// Gives each --api-key-env to the backend flag just before it on the command line (clap keeps each
/// flag's values apart, so the order comes from their positions).
fn pair_key_envs(matches: &ArgMatches, cli: &mut Cli) -> Result<(), String> {
    let (Some((_, sub)), Some(backend)) = (matches.subcommand(), cli.command.backend_mut()) else {
        return Ok(());
    };
    if !sub.try_contains_id("api_key_env").unwrap_or(false) {
        return Ok(());
    }
    /// One value on the command line: a backend flag's, or an --api-key-env's.
    enum Item<'a> {
        Keyed(Hosted, usize),
        Keyless(&'static str),
        Key(&'a str),
    }
    let positions = |id: &str| -> Vec<usize> {
        sub.indices_of(id)
            .map(|indices| indices.collect())
            .unwrap_or_default()
    };
    let mut items: Vec<(usize, Item)> = Vec::new();
    for (backend, id) in [
        (Hosted::OpenAi, "openai"),
        (Hosted::Anthropic, "anthropic"),
        (Hosted::Gemini, "gemini"),
    ] {
        for (nth, at) in positions(id).into_iter().enumerate() {
            items.push((at, Item::Keyed(backend, nth)));
        }
    }
    for (flag, id) in [("--ollama", "ollama"), ("--embedded", "embedded")] {
        items.extend(
            positions(id)
                .into_iter()
                .map(|at| (at, Item::Keyless(flag))),
        );
    }
    let vars = &backend.api_key_env;
    for (at, var) in positions("api_key_env").into_iter().zip(vars) {
        items.push((at, Item::Key(var)));
    }
    items.sort_by_key(|(at, _)| *at);

    let keyed = items
        .iter()
        .filter(|(_, item)| matches!(item, Item::Keyed(..)))
        .count();
    let mut paired: Vec<KeyEnv> = Vec::new();
    let mut leading: Vec<&str> = Vec::new();
    // The backend flag last seen: a keyed one, or the name of a keyless one.
    let mut last: Option<Result<(Hosted, usize), &str>> = None;
    for (_, item) in &items {
        let var = match item {
            Item::Keyed(backend, nth) => {
                last = Some(Ok((*backend, *nth)));
                continue;
            }
            Item::Keyless(flag) => {
                last = Some(Err(flag));
                continue;
            }
            Item::Key(var) => var,
        };
        match last {
            None => leading.push(var),
            Some(Err(flag)) => {
                return Err(format!(
                "--api-key-env {var} follows {flag}, which takes no key; put it right after the \
                     --openai, --anthropic or --gemini flag whose key it names"
            ))
            }
            Some(Ok((backend, nth))) => {
                if paired.iter().any(|k| k.backend == backend && k.nth == nth) {
                    return Err(format!(
                        "two --api-key-env follow the same {} flag; give one after each backend",
                        backend.flag()
                    ));
                }
                paired.push(KeyEnv {
                    backend,
                    nth,
                    var: (*var).to_owned(),
                });
            }
        }
    }
    match (leading.as_slice(), keyed) {
        ([], _) => {}
        ([var], 1) if paired.is_empty() => {
            let only = items.iter().find_map(|(_, item)| match item {
                Item::Keyed(backend, nth) => Some((*backend, *nth)),
                _ => None,
            });
            if let Some((backend, nth)) = only {
                paired.push(KeyEnv {
                    backend,
                    nth,
                    var: (*var).to_owned(),
                });
            }
        }
        ([var, ..], 0) => {
            return Err(format!(
                "--api-key-env {var} names the key of an --openai, --anthropic or --gemini backend, and \
                 this command has none"
            ))
        }
        ([var, ..], _) => {
            return Err(format!(
                "--api-key-env {var} comes before every backend flag, so it is unclear whose key it is; \
                 put it right after the --openai, --anthropic or --gemini flag whose key it names"
            ))
        }
    }
    backend.key_envs = paired;
    Ok(())
}

/// How one value is asked for (see `--strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    OneAnswer,
    PerField,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Constrained,
    Prompted,
    Tool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    /// The generation schema (draft 2020-12): the file's, with local $refs inlined (recursive ones
    /// kept) and objects that list their properties closed.
    Generic,
    /// llama.cpp's JSON-Schema-to-GBNF converter, used by Ollama and llama-server.
    #[value(alias = "ollama")]
    Gbnf,
    /// OpenAI's strict structured outputs.
    Openai,
    /// Anthropic's structured outputs and tool input schemas.
    Anthropic,
    /// Gemini's responseJsonSchema.
    Gemini,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShapeArg {
    One,
    Line,
    List,
}

/// A positive number of seconds.
fn seconds(text: &str) -> Result<std::time::Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() && secs <= 1e9 => {
            Ok(std::time::Duration::from_secs_f64(secs))
        }
        _ => Err(format!(
            "{text:?} is not a positive number of seconds (e.g. 60 or 0.5)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn embedded_takes_its_path_only_after_an_equals_sign() {
        let cli = Cli::try_parse_from([
            "llm-extract",
            "prompt",
            "--config",
            "p.json",
            "--id",
            "x",
            "--embedded",
            "text=hello",
        ])
        .unwrap();
        let Command::Prompt(args) = cli.command else {
            panic!()
        };
        assert_eq!(args.backend.embedded.as_deref(), Some(""));
        assert_eq!(args.vars, ["text=hello"]);
        let cli = Cli::try_parse_from([
            "llm-extract",
            "run",
            "--signature",
            "{a :int}",
            "--embedded=m.gguf",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!()
        };
        assert_eq!(args.backend.embedded.as_deref(), Some("m.gguf"));
    }

    /// The backend flags of `run` with `flags`, each --api-key-env given to its backend.
    fn backend_of(flags: &[&str]) -> Result<BackendArgs, String> {
        let argv = ["llm-extract", "run", "--signature", "{a :int}"];
        let matches = Cli::command()
            .try_get_matches_from(argv.iter().chain(flags))
            .unwrap();
        let mut cli = Cli::from_arg_matches(&matches).unwrap();
        pair_key_envs(&matches, &mut cli)?;
        note_written_order(&matches, &mut cli);
        let Command::Run(args) = cli.command else {
            panic!()
        };
        Ok(args.backend)
    }

    #[test]
    fn the_backends_are_noted_in_the_order_they_are_written() {
        let args = backend_of(&[
            "--gemini",
            "--openai",
            "http://a/v1",
            "--ollama",
            "http://o:1",
            "--anthropic=http://c",
            "--openai",
            "http://b/v1",
        ])
        .unwrap();
        // Built as every --ollama, --openai, --anthropic, then --gemini; written in another order.
        let mut order: Vec<usize> = (0..args.written.len()).collect();
        order.sort_by_key(|&i| args.written[i]);
        assert_eq!(args.written.len(), 5, "{:?}", args.written);
        // The --gemini (built last) was written first, the --ollama (built first) third.
        assert_eq!(order, vec![4, 1, 0, 3, 2]);
    }

    #[test]
    fn each_api_key_env_names_the_key_of_the_backend_flag_before_it() {
        let args = backend_of(&[
            "--openai",
            "http://a/v1",
            "--api-key-env",
            "A",
            "--anthropic",
            "--openai",
            "http://b/v1",
            "--gemini=http://g",
            "--api-key-env",
            "G",
            "--anthropic=https://gw",
            "--api-key-env",
            "W",
        ])
        .unwrap();
        assert_eq!(args.key_env(Hosted::OpenAi, 0), Some("A"));
        assert_eq!(args.key_env(Hosted::OpenAi, 1), None);
        assert_eq!(args.key_env(Hosted::Anthropic, 0), None);
        assert_eq!(args.key_env(Hosted::Anthropic, 1), Some("W"));
        assert_eq!(args.key_env(Hosted::Gemini, 0), Some("G"));
        assert_eq!(args.key_envs.len(), 3);

        // Alone with one backend, anywhere.
        let args = backend_of(&["--api-key-env", "K", "--gemini"]).unwrap();
        assert_eq!(args.key_env(Hosted::Gemini, 0), Some("K"));
        let args = backend_of(&["--anthropic", "--model", "m", "--api-key-env", "K"]).unwrap();
        assert_eq!(args.key_env(Hosted::Anthropic, 0), Some("K"));
    }

    #[test]
    fn an_api_key_env_whose_backend_is_unclear_or_keyless_is_refused() {
        let refused = [
            (
                vec!["--api-key-env", "K", "--openai", "http://a", "--gemini"],
                "comes before every backend flag",
            ),
            (
                vec![
                    "--api-key-env",
                    "K",
                    "--openai",
                    "http://a",
                    "--api-key-env",
                    "L",
                ],
                "comes before every backend flag",
            ),
            (
                vec![
                    "--openai",
                    "http://a",
                    "--ollama",
                    "h",
                    "--api-key-env",
                    "K",
                ],
                "follows --ollama",
            ),
            (
                vec!["--embedded", "--api-key-env", "K"],
                "follows --embedded",
            ),
            (
                vec!["--gemini", "--api-key-env", "K", "--api-key-env", "L"],
                "two --api-key-env follow the same --gemini flag",
            ),
            (vec!["--api-key-env", "K"], "this command has none"),
            (
                vec!["--ollama", "h", "--api-key-env", "K"],
                "follows --ollama",
            ),
        ];
        for (flags, needle) in refused {
            let err = backend_of(&flags).unwrap_err();
            assert!(err.contains(needle), "{flags:?}: {err}");
        }
    }

    #[test]
    fn a_schema_source_is_required_and_unique() {
        assert!(Cli::try_parse_from(["llm-extract", "run"]).is_err());
        assert!(Cli::try_parse_from([
            "llm-extract",
            "run",
            "--schema",
            "a.json",
            "--signature",
            "{a :int}"
        ])
        .is_err());
    }

    #[test]
    fn seconds_are_positive_and_finite() {
        assert_eq!(seconds("0.5"), Ok(std::time::Duration::from_millis(500)));
        assert_eq!(seconds("60"), Ok(std::time::Duration::from_secs(60)));
        for bad in ["0", "-1", "NaN", "inf", "1e300", "soon", ""] {
            assert!(seconds(bad).is_err(), "{bad:?}");
        }
    }
}
