//! Reading a results file: a regular file of bounded size, the whole
//! document where it parses, else as much of it as does, held to what
//! [`checks`](super::checks) allows; with what the reader should know.

use super::document::{Document, Host, Record, SCHEMA};
use crate::topology::Topology;
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

impl Document {
    /// Reads a results file; the error says which file and what is wrong
    /// with it.
    pub fn load(path: &Path) -> Result<Loaded> {
        let text = read_results_file(path)
            .with_context(|| format!("cannot read results file {}", path.display()))?;
        Self::from_json(&text)
            .with_context(|| format!("{} is not a usable results file", path.display()))
    }

    pub fn from_json(text: &str) -> Result<Loaded> {
        // Straight into the document first: the generic tree of a large
        // file takes several times the memory of the document itself. The
        // tree is built only for a file that does not read so, to say why
        // or to read what can be read of it.
        if let Ok(document) = serde_json::from_str::<Document>(text)
            && document.tool == "numabench"
        {
            let mut warnings = Vec::new();
            if document.schema > SCHEMA {
                warnings.push(newer_schema(u64::from(document.schema)));
            }
            super::checks::check_host_ids(&document.host.topology)?;
            super::checks::check_records(document.records.iter().map(Into::into))?;
            return Ok(Loaded { document, warnings });
        }
        let value: Value = serde_json::from_str(text).context("not valid JSON")?;
        let Some(obj) = value.as_object() else {
            bail!("the top level is not an object");
        };
        if obj.get("tool").and_then(Value::as_str) != Some("numabench") {
            bail!("it has no \"tool\": \"numabench\" key");
        }
        let schema = obj
            .get("schema")
            .and_then(Value::as_u64)
            .context("it has no numeric \"schema\" key")?;
        let mut warnings = Vec::new();
        if schema > u64::from(SCHEMA) {
            warnings.push(newer_schema(schema));
        }
        // Read from the parsed value in place: a copy would double the memory a
        // large file takes.
        let document = match Document::deserialize(&value) {
            Ok(d) => d,
            // Read what can be read: each record on its own, the host as far
            // as its names go, and say what was left out.
            Err(whole) => lenient(obj, schema, &mut warnings)
                .with_context(|| format!("schema {schema} document does not match: {whole}"))?,
        };
        super::checks::check_host_ids(&document.host.topology)?;
        super::checks::check_records(document.records.iter().map(Into::into))?;
        Ok(Loaded { document, warnings })
    }
}

fn newer_schema(schema: u64) -> String {
    format!(
        "schema {schema} is newer than this numabench understands ({SCHEMA}); fields it does not know are ignored"
    )
}

/// Most a results file may hold; a run of every probe on a large machine
/// writes a few MiB. Parsed, a document takes up to some twenty times its
/// size in memory, so the cap is what bounds a hostile file's cost.
pub(super) const MAX_RESULTS_BYTES: u64 = 64 << 20;

/// Memory a document takes while it is read, as a multiple of its size:
/// the text, then the records built from it (about eight times the text
/// for a document of many small records).
const PARSE_FACTOR: u64 = 10;

/// What reading a document may take without a look at the memory limit:
/// well inside the reserve the limit keeps for the process's own heap.
const PARSE_UNCHECKED_BYTES: u64 = 16 << 20;

/// The text of a results file, which must be a regular file: a FIFO or a
/// terminal would block forever, `/dev/zero` would never end. The type is
/// checked before opening (opening a device can act: `/dev/watchdog` arms a
/// timer) and again on the descriptor, which was opened without blocking,
/// so nothing swapped in between is read.
pub(crate) fn read_results_file(path: &Path) -> Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let regular = |meta: std::fs::Metadata| -> Result<()> {
        if meta.is_file() {
            return Ok(());
        }
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, pipe, socket or device)"
        };
        bail!("it is {kind}; save the results to a file first (--save FILE) and give that");
    };
    regular(std::fs::metadata(path)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    regular(meta.clone())?;
    // A small document fits in what the limit's reserve keeps for the
    // process itself; only one that needs more is held to the headroom.
    let need = meta.len().min(MAX_RESULTS_BYTES) * PARSE_FACTOR;
    if need > PARSE_UNCHECKED_BYTES
        && let Some(limit) = crate::topology::process_memory_limit()
        && need > limit.headroom_bytes
    {
        bail!(
            "reading its {} takes up to {} of memory, more than the {}; raise the limit or read it where there is room",
            crate::units::bytes(meta.len()),
            crate::units::bytes(need),
            limit.describe()
        );
    }
    let mut bytes = Vec::new();
    file.take(MAX_RESULTS_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_RESULTS_BYTES {
        bail!(
            "it holds more than {} MiB, more than any results document",
            MAX_RESULTS_BYTES >> 20
        );
    }
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("it is not UTF-8 text"))
}

/// A document whose whole does not parse: its records one by one (bad ones
/// skipped with a warning) and its host as far as it parses.
fn lenient(obj: &Map<String, Value>, schema: u64, warnings: &mut Vec<String>) -> Result<Document> {
    let Some(records) = obj.get("records").and_then(Value::as_array) else {
        bail!("it has no \"records\" list");
    };
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let mut doc = Document {
        schema: schema as u32,
        tool: "numabench".into(),
        version: text("version").unwrap_or_else(|| "?".into()),
        command: obj
            .get("command")
            .and_then(|c| Vec::<String>::deserialize(c).ok())
            .unwrap_or_default(),
        started: text("started").unwrap_or_default(),
        finished: text("finished"),
        complete: obj.get("complete").and_then(Value::as_bool).unwrap_or(true),
        host: Host::from_topology(&Topology::default()),
        records: Vec::new(),
    };
    // Parts are read in place, never copied: a large file must not take
    // twice its memory.
    let host = obj.get("host").unwrap_or(&Value::Null);
    match Host::deserialize(host) {
        Ok(h) => doc.host = h,
        Err(e) => {
            let name = |k: &str| {
                host.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            };
            doc.host.hostname = name("hostname");
            doc.host.kernel = name("kernel");
            doc.host.cpu_model = name("cpu_model");
            doc.host.topology.hostname = doc.host.hostname.clone();
            warnings.push(format!(
                "its host description cannot be read ({e}); only the host's names are used"
            ));
        }
    }
    for (i, r) in records.iter().enumerate() {
        match Record::deserialize(r) {
            Ok(rec) => doc.records.push(rec),
            Err(e) => warnings.push(format!(
                "record {} ({}) cannot be read and is left out: {e}",
                i + 1,
                r.get("name").and_then(Value::as_str).unwrap_or("unnamed")
            )),
        }
    }
    Ok(doc)
}

/// A document read from disk with what the reader should know about it.
#[derive(Debug)]
pub struct Loaded {
    pub document: Document,
    pub warnings: Vec<String>,
}
