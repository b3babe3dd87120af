//! Sizing the ground truth before a replay: every command that replays a trace asks
//! here how many distinct keys to make room for, so that none of them grows its key
//! table by doubling (the peak of a doubling is the old and the new table together).

use rbf_data::filter::FilterConfig;
use rbf_data::ingest::MessageSource;

use super::memory::MemoryPlan;

/// How many distinct keys to size the ground truths of `filters` filters for, up
/// front: the count the trace declares (an lcs header) or estimates from its records
/// (oracleGeneral's next-access field, [`rbf_data::ingest::count`]), when the predicted
/// peak memory fits the machine. A count that would not fit is not trusted blindly (a
/// damaged header): the replay then grows its tables as it goes, each doubling checked
/// on the way. A prediction of 64 MiB or more is said on stderr before the work.
pub fn distinct_up_front(
    config: &FilterConfig,
    source: &dyn MessageSource,
    filters: u64,
) -> Option<u64> {
    let (distinct, how) = match (source.declared_distinct(), source.estimated_distinct()) {
        (Some(d), _) => (d, "declared by its header"),
        (None, Some(e)) => (e.distinct, e.describe()),
        (None, None) => return None,
    };
    let plan = MemoryPlan::new(config, distinct, true).filters(filters);
    let name = &source.summary().source;
    match rbf_foundations::resources::check_memory(
        &format!("replaying {name} ({distinct} distinct keys {how})"),
        plan.total() as f64,
    ) {
        Ok(()) => {
            if plan.total() >= 64 << 20 {
                rbf_foundations::progress::note(&format!(
                    "{name}: {distinct} distinct objects {how}: predicted peak memory {}",
                    plan.describe()
                ));
            }
            Some(distinct)
        }
        Err(e) => {
            rbf_foundations::progress::note(&format!(
                "{e}; the ground truth is not sized up front but grown as keys arrive, each step checked"
            ));
            None
        }
    }
}
