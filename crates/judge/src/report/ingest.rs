//! `rbf ingest`'s text: what was read, what was written, the key and the flows.

use std::path::Path;

use rbf_data::ingest::command::IngestRun;

/// The summary of `run`, whose stream went to `output`.
pub fn ingest_text(run: &IngestRun, output: &Path) -> String {
    let summary = &run.summary;
    let mut text = format!(
        "{}: {} {} record(s) -> {} message(s) in {} ({:.2} s)\n",
        summary.source,
        summary.records,
        summary.format,
        run.written,
        output.display(),
        run.seconds
    );
    if let Some(k) = &summary.key {
        text.push_str(&format!("key: {k}\n"));
    }
    if let Some(f) = &summary.flows {
        text.push_str(&format!(
            "flows: {} record(s) exported (inactive {} s, active {} s), at most {} live\n",
            f.records, f.inactive_timeout_s, f.active_timeout_s, f.max_live_flows
        ));
    }
    text
}
