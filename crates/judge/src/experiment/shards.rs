//! `rbf merge`: shard results combined into the results of the whole grid. Every shard
//! must come from the same run (name, measures, config and inputs: the
//! [`RunFingerprint`]), hold only its own points with numbers in range, and together
//! the shards must cover every point exactly once: anything else is an error naming
//! the shards and what differs, never a partial or mixed table.
//!
//! [`RunFingerprint`]: super::results::RunFingerprint

use std::collections::BTreeMap;

use super::config::ExperimentConfig;
use super::grid::{self, Shard};
use super::results::Results;
use super::row::Row;
use super::shard_error::ShardError;
use super::source::Source;
use rbf_foundations::error::Result;

/// [`merge_labelled`] with the shards named by their place in `parts`.
pub fn merge(parts: Vec<Results>) -> Result<Results> {
    merge_labelled(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("results {}", i + 1), r))
            .collect(),
    )
}

/// Combines shard results, each with a label for messages (its file), into the
/// results of the whole grid.
pub fn merge_labelled(parts: Vec<(String, Results)>) -> Result<Results> {
    let (first_label, first) = parts.first().ok_or(ShardError::NoResults)?;
    for (label, p) in &parts {
        check_shard(label, p)?;
        let differs = differences(first, p);
        if !differs.is_empty() {
            return Err(ShardError::DifferentRuns {
                first: first_label.clone(),
                first_name: first.name.clone(),
                label: label.clone(),
                name: p.name.clone(),
                differences: differs,
            }
            .into());
        }
    }
    check_shard_set(&parts)?;
    let total = first.total_points;
    // Sized by the rows the shards hold, never by the point count they claim: a
    // results.json saying 10^12 points must get an error, not a 10^12-entry table.
    let rows: usize = parts.iter().map(|(_, p)| p.rows.len()).sum();
    let mut out = Results {
        shard: Shard::ALL,
        rows: Vec::with_capacity(rows),
        ..first.clone()
    };
    // A source a shard did not read has no summary: take it from a shard that did.
    for (_, p) in &parts {
        for (mine, theirs) in out.sources.iter_mut().zip(&p.sources) {
            if mine.ingest.is_none() && theirs.ingest.is_some() {
                *mine = theirs.clone();
            }
        }
    }
    for (_, p) in &parts {
        out.rows.extend(p.rows.iter().cloned());
    }
    out.rows.sort_by_key(|r| r.point);
    every_point_once(&out.rows, total)?;
    check_grid(&out)?;
    Ok(out)
}

/// Sorted by point, the merged rows must be exactly the points 0..total, each once.
fn every_point_once(rows: &[Row], total: usize) -> Result<()> {
    for (i, r) in rows.iter().enumerate() {
        if r.point >= total {
            return Err(ShardError::OutsideGrid {
                point: r.point,
                total,
            }
            .into());
        }
        if i > 0 && rows[i - 1].point == r.point {
            return Err(ShardError::InTwoShards { point: r.point }.into());
        }
    }
    let missing = total - rows.len();
    if missing > 0 {
        return Err(ShardError::MissingPoints { missing, total }.into());
    }
    Ok(())
}

/// A shard's own consistency: a real shard, holding only its points, numbers in range.
fn check_shard(label: &str, p: &Results) -> Result<()> {
    let s = p.shard;
    if s.count == 0 || s.index >= s.count {
        return Err(ShardError::NotAShard {
            label: label.to_string(),
            index: s.index,
            count: s.count,
        }
        .into());
    }
    for r in &p.rows {
        if r.point % s.count != s.index {
            return Err(ShardError::NotOfItsShard {
                label: label.to_string(),
                point: r.point,
                index: s.index,
                count: s.count,
            }
            .into());
        }
        if let Err(why) = row_in_range(r) {
            return Err(ShardError::RowOutOfRange {
                label: label.to_string(),
                point: r.point,
                source_name: r.source.clone(),
                why,
            }
            .into());
        }
    }
    Ok(())
}

/// What a computed row can hold: rates and probabilities in [0, 1], intervals around
/// their value, counts not negative.
fn row_in_range(r: &Row) -> std::result::Result<(), String> {
    let unit = [
        ("observed_fp", r.observed_fp),
        ("observed_fp_count_instance", r.observed_fp_count_instance),
        (
            "observed_fp_count_instance_low",
            r.observed_fp_count_instance_low,
        ),
        (
            "observed_fp_count_instance_high",
            r.observed_fp_count_instance_high,
        ),
        ("observed_fn", r.observed_fn),
        ("observed_fn_low", r.observed_fn_low),
        ("observed_fn_high", r.observed_fn_high),
        ("fp_model", r.fp_model),
        ("sigma_fraction", r.sigma_fraction),
        ("target_fp", r.target_fp),
    ];
    for (key, v) in unit {
        if let Some(v) = v.filter(|v| !(0.0..=1.0).contains(v)) {
            return Err(format!("{key} = {v}, expected a value in [0, 1]"));
        }
    }
    intervals_around_values(r)?;
    let counts = [
        ("cycles", r.cycles),
        ("capacity_sigma", r.capacity_sigma),
        ("capacity_worst_case", r.capacity_worst_case),
        ("capacity_ratio", r.capacity_ratio),
    ];
    for (key, v) in counts {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(format!("{key} = {v}, expected a number >= 0"));
        }
    }
    for m in &r.models {
        if !(0.0..=1.0).contains(&m.value) {
            return Err(format!(
                "{} = {}, expected an FN rate in [0, 1]",
                m.bound.value_key(),
                m.value
            ));
        }
    }
    Ok(())
}

/// A row's intervals around their point estimates.
fn intervals_around_values(r: &Row) -> std::result::Result<(), String> {
    let intervals = [
        (
            "observed_fn",
            r.observed_fn_low,
            r.observed_fn,
            r.observed_fn_high,
        ),
        (
            "observed_fp_count_instance",
            r.observed_fp_count_instance_low,
            r.observed_fp_count_instance,
            r.observed_fp_count_instance_high,
        ),
    ];
    for (key, low, v, high) in intervals {
        if let (Some(low), Some(v), Some(high)) = (low, v, high) {
            if !(low <= v && v <= high) {
                return Err(format!(
                    "{key} = {v} lies outside its interval [{low}, {high}]"
                ));
            }
        }
    }
    Ok(())
}

/// What differs between two shards' runs, each as "what: this vs that".
fn differences(a: &Results, b: &Results) -> Vec<String> {
    let mut d = Vec::new();
    if a.name != b.name {
        d.push(format!("name: `{}` vs `{}`", a.name, b.name));
    }
    if a.total_points != b.total_points {
        d.push(format!(
            "grid size: {} vs {} points",
            a.total_points, b.total_points
        ));
    }
    if a.measures != b.measures {
        d.push(format!(
            "measures: [{}] vs [{}]",
            a.measures.join(", "),
            b.measures.join(", ")
        ));
    }
    if a.confidence != b.confidence {
        d.push(format!("confidence: {} vs {}", a.confidence, b.confidence));
    }
    let keys = config_differences(a.config.as_deref(), b.config.as_deref());
    d.extend(keys.iter().cloned());
    match (&a.fingerprint, &b.fingerprint) {
        (Some(x), Some(y)) => {
            if x.config != y.config && keys.is_empty() {
                d.push("the config (trace paths resolve to other files)".into());
            }
            d.extend(input_differences(&x.inputs, &y.inputs));
        }
        (None, None) => {}
        _ => d.push(
            "run fingerprint: one was written by an rbf that did not record it; rerun that shard"
                .into(),
        ),
    }
    d
}

/// The keys whose values differ between two configs (TOML text), `output` aside
/// (each shard writes its own); an unparsable or absent config counts as empty.
fn config_differences(a: Option<&str>, b: Option<&str>) -> Vec<String> {
    let parse = |t: Option<&str>| {
        t.and_then(|t| t.parse::<toml::Table>().ok())
            .map(toml::Value::Table)
            .unwrap_or(toml::Value::Table(Default::default()))
    };
    let mut out = Vec::new();
    diff_values("", &parse(a), &parse(b), &mut out);
    out.retain(|d| !d.starts_with("output:"));
    out
}

/// Appends "key: a vs b" for every leaf where `a` and `b` differ.
fn diff_values(key: &str, a: &toml::Value, b: &toml::Value, out: &mut Vec<String>) {
    use toml::Value;
    let shown = |v: Option<&Value>| v.map_or_else(|| "(absent)".to_string(), |v| v.to_string());
    match (a, b) {
        (Value::Table(x), Value::Table(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let sub = if key.is_empty() {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff_values(&sub, p, q, out),
                    (p, q) => out.push(format!("{sub}: {} vs {}", shown(p), shown(q))),
                }
            }
        }
        // Arrays of tables ([[trace]], [[synthetic]]) key by position.
        (Value::Array(x), Value::Array(y))
            if x.len() == y.len() && x.iter().chain(y).all(Value::is_table) =>
        {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff_values(&format!("{key}[{i}]"), p, q, out);
            }
        }
        _ if a != b => out.push(format!("{key}: {a} vs {b}")),
        _ => {}
    }
}

/// The trace files that differ between two runs' inputs.
fn input_differences(
    a: &[super::results::InputIdentity],
    b: &[super::results::InputIdentity],
) -> Vec<String> {
    let mut d = Vec::new();
    if a.len() != b.len() {
        d.push(format!("input files: {} vs {}", a.len(), b.len()));
        return d;
    }
    for (x, y) in a.iter().zip(b) {
        if x.bytes != y.bytes {
            d.push(format!(
                "input `{}`: {} vs {} bytes",
                y.path.display(),
                x.bytes,
                y.bytes
            ));
        } else if let (Some(dx), Some(dy)) = (&x.digest, &y.digest) {
            if dx != dy {
                d.push(format!(
                    "input `{}`: same size, other content (content digests {dx} vs {dy})",
                    y.path.display()
                ));
            }
        }
    }
    d
}

/// The shards together: one count, each index once.
fn check_shard_set(parts: &[(String, Results)]) -> Result<()> {
    let mut seen: BTreeMap<usize, &str> = BTreeMap::new();
    let (first_label, first) = &parts[0];
    for (label, p) in parts {
        if p.shard.count != first.shard.count {
            return Err(ShardError::DifferentCounts {
                first: first_label.clone(),
                first_index: first.shard.index,
                first_count: first.shard.count,
                label: label.clone(),
                index: p.shard.index,
                count: p.shard.count,
            }
            .into());
        }
        if let Some(other) = seen.insert(p.shard.index, label) {
            return Err(ShardError::GivenTwice {
                index: p.shard.index,
                count: p.shard.count,
                first: other.to_string(),
                label: label.clone(),
            }
            .into());
        }
    }
    Ok(())
}

/// Each row where the run's grid puts its point: the source and filter of point i of
/// the config's grid (when the results carry a config that parses).
fn check_grid(r: &Results) -> Result<()> {
    let Some(config) = r
        .config
        .as_deref()
        .and_then(|t| ExperimentConfig::parse(t, std::path::Path::new("results.json")).ok())
    else {
        return Ok(());
    };
    if grid::count(&config) != Some(r.total_points) {
        return Err(ShardError::GridSize {
            claimed: r.total_points,
            grid: grid::count(&config),
        }
        .into());
    }
    let names: Vec<String> = Source::all(&config).iter().map(Source::name).collect();
    for (p, row) in grid::expand(&config).iter().zip(&r.rows) {
        let source = names.get(p.source).map_or("", String::as_str);
        if row.source != source || row.memory != p.memory || row.hashes != p.hashes {
            return Err(ShardError::NotTheGrid {
                point: row.point,
                source_name: row.source.clone(),
                memory: row.memory,
                hashes: row.hashes,
                grid_source: source.to_string(),
                grid_memory: p.memory,
                grid_hashes: p.hashes,
            }
            .into());
        }
    }
    Ok(())
}
