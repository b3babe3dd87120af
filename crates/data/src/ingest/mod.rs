//! Ingest: traces in the formats users have become one message stream.
//!
//! Every reader is a [`MessageSource`]: an iterator of [`Message`]s plus an
//! [`IngestSummary`] that counts what was read, skipped (by reason) and malformed, and
//! records damage (a truncated or corrupt input yields everything before the damage and
//! a warning saying where). Nothing is skipped silently.
//!
//! A trace is one file, standard input (`-`), or a series of files read as one
//! ([`series`]: several paths, a directory, a glob pattern); captures can be turned
//! into flow records ([`packet::flows::FlowExport`]); zstd- and gzip-compressed inputs
//! are decompressed on the way in ([`compressed`], [`gzip`]); decoding runs on a thread
//! of its own beside the consumer ([`readahead`]).

pub mod binary;
pub mod command;
pub mod compressed;
pub mod count;
pub mod csv;
pub mod digest;
pub mod flowlog;
pub mod gzip;
pub mod input;
pub mod lcs;
pub mod open;
pub mod options;
pub mod packet;
pub mod progress;
pub mod rbfs;
pub mod readahead;
pub mod series;
pub mod sketch;
pub mod source;
pub mod text;

pub use open::{open, open_inputs};
pub use options::{Format, IngestOptions};
pub use series::{SeriesError, SeriesPlace};
pub use source::{FlowSummary, IngestSummary, MessageSource, SourceFormat, MAX_EXAMPLES};
