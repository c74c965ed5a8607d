//! The report's files in memory, what could not be read, and the `.tar.gz` they become, with a
//! README that lists both.

use flate2::{Compression, write::GzEncoder};
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::error::{Error, Result, chain};

/// The files of a report under one directory, and what could not be read.
#[derive(Debug)]
pub struct Bundle {
    root: String,
    files: Vec<(String, Vec<u8>)>,
    pub problems: Vec<String>,
}

impl Bundle {
    pub fn new(root: String) -> Self {
        Self {
            root,
            files: Vec::new(),
            problems: Vec::new(),
        }
    }

    pub fn text(&mut self, path: &str, text: &str) {
        let mut bytes = text.as_bytes().to_vec();
        if !text.is_empty() && !text.ends_with('\n') {
            bytes.push(b'\n');
        }
        self.files.push((path.to_string(), bytes));
    }

    pub fn yaml<T: Serialize>(&mut self, path: &str, value: &T) {
        match infera_core::yaml::to_yaml(value) {
            Ok(text) => self.text(path, &text),
            Err(e) => self.problem(path, chain(&e)),
        }
    }

    pub fn json<T: Serialize>(&mut self, path: &str, value: &T) {
        match serde_json::to_string_pretty(value) {
            Ok(text) => self.text(path, &text),
            Err(e) => self.problem(path, chain(&e)),
        }
    }

    /// `part` could not be read (or written), and why.
    pub fn problem(&mut self, part: &str, why: String) {
        self.problems.push(format!("{part}: {why}"));
    }

    /// The README: when and by what the report was made, its files, and what is missing.
    fn readme(&self, now: Timestamp) -> String {
        let mut text = format!(
            "Infera support report, made {now} by kubectl-infera {}.\n\n\
             Secret values are not in it: Secrets were read as metadata only, and passwords in\n\
             URLs in the logs are written as ***. Logs carry the API server's timestamps.\n\nFiles:\n",
            env!("CARGO_PKG_VERSION")
        );
        for (path, bytes) in &self.files {
            text.push_str(&format!("  {path} ({} bytes)\n", bytes.len()));
        }
        if self.problems.is_empty() {
            text.push_str("\nEverything could be read.\n");
        } else {
            text.push_str("\nNot in the report:\n");
            for problem in &self.problems {
                text.push_str(&format!("  {problem}\n"));
            }
        }
        text
    }

    /// The `.tar.gz`: README.txt and every file under the root directory, in the order added,
    /// dated `now`.
    pub fn finish(self, now: Timestamp) -> Result<Vec<u8>> {
        let readme = self.readme(now);
        let mtime = u64::try_from(now.as_second()).unwrap_or_default();
        let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
        let files =
            std::iter::once(("README.txt".to_string(), readme.into_bytes())).chain(self.files);
        for (path, bytes) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(mtime);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(
                &mut header,
                format!("{}/{path}", self.root),
                bytes.as_slice(),
            )
            .map_err(|e| archive_error(&path, e))?;
        }
        let gz = tar
            .into_inner()
            .map_err(|e| archive_error("the archive", e))?;
        gz.finish().map_err(|e| archive_error("the archive", e))
    }
}

fn archive_error(what: &str, error: std::io::Error) -> Error {
    Error::Serialize {
        what: what.to_string(),
        format: "tar.gz",
        source: Box::new(error),
    }
}
