//! What the prompt is made and filled from: the template, `key=value` and `key=@file` variables,
//! standard input, the images and PDFs sent with the text, and the documents of a batch.

use crate::args::{MediaArgs, TemplateArgs};
use crate::error::CliError;
use llm_extract::batch::Record;
use llm_extract::extract::Input;
use llm_extract::llm::Media;
use serde_json::{Map, Value};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

/// Parses `key=value` / `key=@file` arguments into variables. `@@text` is the literal `@text`.
pub fn variables(args: &[String]) -> Result<Map<String, Value>, CliError> {
    let mut vars = Map::new();
    for arg in args {
        let Some((key, value)) = arg.split_once('=') else {
            return Err(CliError::usage(format!(
                "unexpected argument `{arg}`: template variables are written key=value or key=@file"
            )));
        };
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
        {
            return Err(CliError::usage(format!(
                "`{arg}`: a variable name is letters, digits, `_` and `-` (got `{key}`)"
            )));
        }
        let value = if let Some(literal) = value.strip_prefix("@@") {
            format!("@{literal}")
        } else if let Some(path) = value.strip_prefix('@') {
            read_text(Path::new(path), &format!("{key}=@{path}"))?
        } else {
            value.to_owned()
        };
        if vars.insert(key.to_owned(), Value::String(value)).is_some() {
            return Err(CliError::usage(format!(
                "the variable `{key}` is given twice"
            )));
        }
    }
    Ok(vars)
}

/// A flag's value, or a file's content when it is `@FILE`.
pub fn text_or_file(flag: &str, value: &str) -> Result<String, CliError> {
    match value.strip_prefix('@') {
        Some(path) => read_text(Path::new(path), &format!("{flag} @{path}")),
        None => Ok(value.to_owned()),
    }
}

fn read_text(path: &Path, what: &str) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("{what}: cannot read {}: {e}", path.display())))
}

/// Adds standard input as the variable `text`, unless `text` is given or standard input is a terminal or
/// empty. Returns whether it did.
pub fn stdin_as_text(vars: &mut Map<String, Value>) -> Result<bool, CliError> {
    if vars.contains_key("text") {
        return Ok(false);
    }
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(false);
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .map_err(|e| CliError::usage(format!("cannot read standard input as text: {e}")))?;
    if text.is_empty() {
        return Ok(false);
    }
    vars.insert("text".into(), Value::String(text));
    Ok(true)
}

/// A file to send with the text: an image or a PDF, as the flag or the field that named it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaFile {
    pub path: PathBuf,
    /// Named as a PDF (`--pdf`, `"pdf"`), not as an image.
    pub pdf: bool,
}

impl MediaFile {
    /// The file's content with its type read from its first bytes: an error naming the file when it
    /// cannot be read, or is not the kind it was named as.
    pub fn read(&self) -> Result<Media, String> {
        let shown = self.path.display();
        let media = Media::from_path(&self.path).map_err(|e| e.to_string())?;
        let named = if self.pdf { "a PDF" } else { "an image" };
        if media.media_type().is_image() == self.pdf {
            return Err(format!(
                "{shown} was given as {named} but is {} (by its first bytes); pass it with {}",
                media.media_type(),
                if self.pdf { "--image" } else { "--pdf" }
            ));
        }
        Ok(media)
    }
}

/// The files of `--image` and `--pdf`, images first, each in the order given.
pub fn media_files(args: &MediaArgs) -> Vec<MediaFile> {
    let images = args.images.iter().map(|path| MediaFile {
        path: path.clone(),
        pdf: false,
    });
    let pdfs = args.pdfs.iter().map(|path| MediaFile {
        path: path.clone(),
        pdf: true,
    });
    images.chain(pdfs).collect()
}

/// Reads every file of `files`, in order.
pub fn read_media(files: &[MediaFile]) -> Result<Vec<Media>, String> {
    files.iter().map(MediaFile::read).collect()
}

/// `input` with `media` added, in order.
pub fn with_media(input: Input, media: Vec<Media>) -> Input {
    media.into_iter().fold(input, Input::with_media)
}

/// The documents of a batch, and where they come from.
#[derive(Debug)]
pub struct Documents {
    pub source: Source,
    /// How many there are.
    pub total: usize,
}

#[derive(Debug)]
pub enum Source {
    /// Files of a directory: (id, path).
    Files(Vec<(String, PathBuf)>),
    /// Lines of a JSON Lines file, already parsed, each with the files it names (read when the
    /// document's turn comes, as the files of a directory are).
    Lines(Vec<(Record, Vec<MediaFile>)>),
}

impl Documents {
    /// Lists the documents at `path`: the files of a directory, or the lines of a JSON Lines file.
    pub fn open(path: &Path) -> Result<Self, CliError> {
        let metadata = std::fs::metadata(path)
            .map_err(|e| CliError::usage(format!("--input {}: {e}", path.display())))?;
        let source = if metadata.is_dir() {
            let mut files = Vec::new();
            list_files(path, path, &mut files)?;
            files.sort();
            Source::Files(files)
        } else {
            Source::Lines(jsonl_documents(path)?)
        };
        let total = match &source {
            Source::Files(files) => files.len(),
            Source::Lines(lines) => lines.len(),
        };
        Ok(Documents { source, total })
    }

    /// The ids, in order.
    pub fn ids(&self) -> Vec<&str> {
        match &self.source {
            Source::Files(files) => files.iter().map(|(id, _)| id.as_str()).collect(),
            Source::Lines(lines) => lines.iter().map(|(d, _)| d.id.as_str()).collect(),
        }
    }
}

fn list_files(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), CliError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::usage(format!("--input: cannot list {}: {e}", dir.display())))?;
    for entry in entries {
        let entry = entry
            .map_err(|e| CliError::usage(format!("--input: cannot list {}: {e}", dir.display())))?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| CliError::usage(format!("--input: {}: {e}", path.display())))?;
        if kind.is_dir() {
            list_files(root, &path, out)?;
        } else {
            let id = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            out.push((id, path));
        }
    }
    Ok(())
}

/// The files a line names in `"images"` (a path or a list of them) and `"pdf"` (the same), taken out of
/// its variables; relative paths are read from `dir`, the input file's directory.
fn line_media(
    fields: &mut Map<String, Value>,
    dir: &Path,
    at: &str,
) -> Result<Vec<MediaFile>, CliError> {
    let mut files = Vec::new();
    for (field, pdf) in [("images", false), ("pdf", true)] {
        let paths = match fields.shift_remove(field) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(path)) => vec![Value::String(path)],
            Some(Value::Array(paths)) => paths,
            Some(other) => {
                return Err(CliError::usage(format!(
                    "{at}: \"{field}\" must be a file name or a list of them, not {other}"
                )))
            }
        };
        for path in paths {
            let Value::String(path) = path else {
                return Err(CliError::usage(format!(
                    "{at}: \"{field}\" lists {path}, which is not a file name"
                )));
            };
            files.push(MediaFile {
                path: dir.join(path),
                pdf,
            });
        }
    }
    Ok(files)
}

fn jsonl_documents(path: &Path) -> Result<Vec<(Record, Vec<MediaFile>)>, CliError> {
    let shown = path.display();
    let dir = path.parent().unwrap_or(Path::new(""));
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("--input {shown}: {e}")))?;
    let mut documents: Vec<(Record, Vec<MediaFile>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| {
            CliError::usage(format!(
                "--input {shown}: line {number} is not JSON ({e}); each line must be a JSON object or string"
            ))
        })?;
        let (document, files) = match value {
            Value::String(text) => (Record::new(format!("line-{number}"), text), Vec::new()),
            Value::Object(mut fields) => {
                let files = line_media(&mut fields, dir, &format!("--input {shown}: line {number}"))?;
                if !files.is_empty() && !fields.contains_key("text") {
                    // The files alone are the document: the text is empty, and no part of it is sent.
                    fields.insert("text".into(), Value::String(String::new()));
                }
                let id = match fields.shift_remove("id") {
                    Some(Value::String(id)) => id,
                    Some(Value::Number(n)) => n.to_string(),
                    None => format!("line-{number}"),
                    Some(other) => {
                        return Err(CliError::usage(format!(
                            "--input {shown}: line {number}: \"id\" must be a string or a number, not {other}"
                        )))
                    }
                };
                (Record::new(id, Input::context(&fields)), files)
            }
            other => {
                return Err(CliError::usage(format!(
                    "--input {shown}: line {number} is {other}; each line must be a JSON object or string"
                )))
            }
        };
        if !seen.insert(document.id.clone()) {
            return Err(CliError::usage(format!(
                "--input {shown}: line {number}: the id \"{}\" is used twice; ids must be unique to resume",
                document.id
            )));
        }
        documents.push((document, files));
    }
    Ok(documents)
}

/// `--template`, or the default: the text, then each other input the signature names.
pub fn template(args: &TemplateArgs, inputs: &[String]) -> Result<String, CliError> {
    if let Some(template) = &args.template {
        return text_or_file("--template", template);
    }
    if inputs.is_empty() {
        return Ok("{{text}}".to_owned());
    }
    Ok(inputs
        .iter()
        .map(|name| {
            if name == "text" {
                "{{text}}".to_owned()
            } else {
                format!("{name}: {{{{{name}}}}}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_template() -> TemplateArgs {
        TemplateArgs {
            template: None,
            system: None,
            example: Vec::new(),
        }
    }

    #[test]
    fn the_default_template_names_every_signature_input() {
        assert_eq!(template(&no_template(), &[]).unwrap(), "{{text}}");
        let inputs = ["text".to_owned(), "lang".to_owned()];
        assert_eq!(
            template(&no_template(), &inputs).unwrap(),
            "{{text}}\n\nlang: {{lang}}"
        );
    }

    #[test]
    fn variables_read_files_and_keep_literals() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.txt");
        std::fs::write(&file, "from a file").unwrap();
        let vars = variables(&[
            format!("text=@{}", file.display()),
            "lang=fr=ch".into(),
            "at=@@home".into(),
        ])
        .unwrap();
        assert_eq!(vars["text"], "from a file");
        assert_eq!(vars["lang"], "fr=ch");
        assert_eq!(vars["at"], "@home");
        assert!(variables(&["novalue".into()]).is_err());
        assert!(variables(&["=x".into()]).is_err());
        assert!(variables(&["a=1".into(), "a=2".into()]).is_err());
        let missing = variables(&["t=@/nonexistent/file".into()]).unwrap_err();
        assert!(
            missing.message.contains("/nonexistent/file"),
            "{}",
            missing.message
        );
    }

    #[test]
    fn jsonl_documents_take_ids_and_variables() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("docs.jsonl");
        std::fs::write(&file, "{\"id\": \"a\", \"text\": \"x\", \"lang\": \"fr\"}\n\n\"plain\"\n{\"id\": 7, \"text\": \"y\"}\n").unwrap();
        let docs = Documents::open(&file).unwrap();
        assert_eq!(docs.ids(), ["a", "line-3", "7"]);
        std::fs::write(&file, "{\"id\": \"a\"}\n{\"id\": \"a\"}\n").unwrap();
        assert!(Documents::open(&file)
            .unwrap_err()
            .message
            .contains("used twice"));
        std::fs::write(&file, "[1]\n").unwrap();
        assert!(Documents::open(&file).is_err());
    }

    #[test]
    fn jsonl_lines_name_files_relative_to_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("docs.jsonl");
        std::fs::write(
            &file,
            "{\"id\": \"a\", \"images\": [\"x.png\", \"y.jpg\"], \"pdf\": \"z.pdf\", \"lang\": \"fr\"}\n",
        )
        .unwrap();
        let docs = Documents::open(&file).unwrap();
        let Source::Lines(lines) = docs.source else {
            panic!("a JSON Lines source")
        };
        let (record, files) = &lines[0];
        let named: Vec<(PathBuf, bool)> = files.iter().map(|f| (f.path.clone(), f.pdf)).collect();
        assert_eq!(
            named,
            [
                (dir.path().join("x.png"), false),
                (dir.path().join("y.jpg"), false),
                (dir.path().join("z.pdf"), true)
            ]
        );
        // The files are read when the document's turn comes, not when the input is opened.
        assert!(record.input.media().is_empty());
        for bad in ["{\"images\": 3}", "{\"pdf\": [1]}"] {
            std::fs::write(&file, bad).unwrap();
            let err = Documents::open(&file).unwrap_err();
            assert!(err.message.contains("line 1"), "{}", err.message);
        }
    }

    #[test]
    fn a_file_named_as_an_image_must_be_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.pdf");
        std::fs::write(&path, b"%PDF-1.4\n").unwrap();
        let as_image = MediaFile {
            path: path.clone(),
            pdf: false,
        };
        let err = as_image.read().unwrap_err();
        assert!(
            err.contains("given as an image but is application/pdf"),
            "{err}"
        );
        assert!(MediaFile { path, pdf: true }.read().is_ok());
    }

    #[test]
    fn directories_list_files_recursively_without_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b.txt"), "b").unwrap();
        std::fs::write(dir.path().join("sub/a.txt"), "a").unwrap();
        std::fs::write(dir.path().join(".hidden"), "h").unwrap();
        let docs = Documents::open(dir.path()).unwrap();
        assert_eq!(docs.ids(), ["b.txt", "sub/a.txt"]);
    }
}
