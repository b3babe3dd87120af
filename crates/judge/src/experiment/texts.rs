//! What both reports say (report.md from [`super::output`], report.html from
//! [`super::page`]), written once: the extent line, the files, the plots' legend, the
//! sources and what the numbers mean. Texts use a little Markdown (bullets, `**`, `*`,
//! backticks), which the page turns into HTML ([`crate::report::html`]).

use super::results::{Results, SourceInfo};

/// A plot as written: its path relative to the output directory and the SVG.
pub struct Plot {
    pub path: String,
    pub svg: String,
}

/// "24 of 24 grid points (shard 0/1); measures: observed, renewal.": the first line
/// of both reports.
pub fn extent(results: &Results) -> String {
    format!(
        "{} of {} grid points (shard {}/{}); measures: {}.",
        results.rows.len(),
        results.total_points,
        results.shard.index,
        results.shard.count,
        results.measures.join(", ")
    )
}

/// The data files beside the reports, each with what it holds.
pub const FILES: [(&str, &str); 3] = [
    ("results.csv", "every column, one row per point"),
    ("results.parquet", "the same table for polars and pandas"),
    (
        "results.json",
        "the rows, the sources and the config; read back by rbf merge",
    ),
];

/// How the plots draw each kind of measure (both reports).
pub const PLOTS_LEGEND: &str = "Observed (exact replay): points with their intervals as \
error bars. Proven bounds: solid lines. Everything else is dashed and its legend says why: \
\"(fitted model)\", \"(checked)\", \"(not proven)\", \"(not judged)\", \"(approx.)\". Zeros \
are drawn on the axis floor marked 0.";

/// A source that was read, in the reports: its notes and what reading it met (one
/// line), then per file.
pub struct SourceSection<'a> {
    pub name: &'a str,
    pub lines: Vec<&'a str>,
    pub per_file: Vec<String>,
}

/// The sources that were read, in order.
pub fn source_sections(results: &Results) -> Vec<SourceSection<'_>> {
    results
        .sources
        .iter()
        .filter_map(|src: &SourceInfo| {
            let ingest = src.ingest.as_ref()?;
            Some(SourceSection {
                name: &src.name,
                lines: src
                    .notes
                    .iter()
                    .chain(&src.ingest_digest)
                    .map(String::as_str)
                    .collect(),
                per_file: ingest.warnings(),
            })
        })
        .collect()
}

/// What the numbers mean (both reports; Markdown: bullets, `**`, `*`, backticks).
pub const MEANING: &str = "## What the numbers mean\n\n\
- **obs FP**: observed FP paper count-instance rate: arrivals that are first in their cycle \
(new or non-repeat) classified as repeat, over such arrivals. `observed_fp` in the CSV is the FN \
paper's FP: false positives (new messages classified repeat) over all arrivals. Intervals \
(`observed_fp_count_instance_low/high`) are built like the FN interval, clamped to [0, 1].\n\
- **FP model**: the FP paper's average FP rate f_sigma (one phase, or f_sigma^2 for two phases) \
or f_a for N-bounded filters; an estimate, not a bound.\n\
- **obs FN**: false negatives (non-repeats classified new) over all arrivals, mean over seeds; \
`observed_fn_low/high` is a t-interval over seeds (batch means over cycles with one seed), \
clamped to [0, 1]. Each replay runs `hash_seeds` filters (4 by default) whose hash positions \
are drawn anew at every recycle unless the config says `positions = \"fixed\"` (or the two \
halves of a two-phase filter share their positions, which only fixed positions keep): the models \
average over hash positions, and a filter that keeps its positions has rates that depend on \
them (docs/coverage/README.md).\n\
- **the bounds** (one column each, `fn_renewal_upper`, `fn_renewal_fitted`, \
`fn_renewal_conservative`, `fn_markov_lower`, ...): **renewal** is the FN paper's renewal upper \
bound (§5) on the source's workload (the true one for synthetic sources, the fitted one for \
traces); **fitted** and **conserv.** are the renewal bound on the workload fitted from the \
trace (its reuse profile and p_r, docs/FIT.md) at the point estimate (synthetic sources with \
`fit = true`) and at the conservative end of the fit's uncertainty (the profile's upper 99 % \
band, the worst p_r of its interval); the **markov** columns are the Markov-chain bounds and \
approximations (§4); **drop-pins** is a fast approximation (eqs. 10-11), never a bound. The \
Q-based methods (Markov, drop-pins) on a fitted workload carry a range (`{key}_low/high`): \
their spread over the fit and the alternatives the trace cannot tell from it, where some \
alternative is more than 2.5 % from the fit's value; within 2.5 % the trace identifies the \
method and it is a point. Either way it is judged against the whole spread.\n\
- **standing** (`{key}_standing`): *proven* (a theorem of the FN paper covers this number for \
this variant and a workload given as the truth), *fitted-model* (a bound for the model fitted \
from the trace, not a proof for the trace), *checked* (not proven, checked by measurement: the \
two-phase conservative bound, docs/FIT.md), *not-proven* (the notes say why), *not-judged* \
(shown, but no verdict: the model does not fit this trace, or the replays had too few cycles \
for an interval).\n\
- **verdict** (`{key}_verdict_steady`, `{key}_verdict_transient`; ✓ ✗ ? in the tables): the \
bound against the observed FN interval. *holds*: the whole interval is on the bound's side; \
*violated*: the whole interval is on the other side; *undecided*: the interval straddles the \
bound. Without an interval (too few cycles) no bound is judged. The bounds describe the steady state; a replay with fewer than \
10 recycles per replay measures the transient after the warm-up, so its verdict goes in the \
transient column. `{key}_excess`: how far the observed point is beyond the bound, relative to \
the bound. Each verdict rests on one point's interval (99 % unless `confidence` says \
otherwise), so over many points some are *violated* \
by chance even where the bound is exact: the summary says how many chance alone makes \
likely (about (1 - level) / 2 of the points for a bound equal to the true rate everywhere, \
fewer where it lies above) and how probable the count found would be if the points were \
independent (points sharing a trace are not, which makes larger counts likelier).\n\
- **capacity**: messages per cycle a filter of M bits holds at the target FP under the sigma-bounded \
model and under classic worst-case sizing (FP paper eq. 1); the ratio shows how much worst-case \
sizing under-uses memory.\n";
