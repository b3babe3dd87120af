//! Each command is one library call. The calls are checked against the
//! lower-level pieces they assemble (a replay, a fit, the judge), and their requests
//! against bad input before any trace is read.

use std::path::{Path, PathBuf};

use rbf_data::filter::FilterConfig;
use rbf_data::ingest::command::IngestRequest;
use rbf_data::ingest::{self, IngestOptions};
use rbf_data::synth::command::{self as synth_command, SynthRequest};
use rbf_data::workload::{Workload, WorkloadSpec};
use rbf_judge::compare::model_fn::model_fn;
use rbf_judge::compare::{judge, JudgeOptions, Subject};
use rbf_judge::experiment::command::RunRequest;
use rbf_observed::fit::command::{self as fit_command, FitRequest};
use rbf_observed::fit::{FitOptions, Fitter};
use rbf_observed::replay::command::{self as replay_command, ReplayRequest};
use rbf_observed::replay::{ReplayOptions, Replays};
use rbf_predicted::model::false_negative::{Method, DEFAULT_EPS};

use crate::scratch::Scratch;

fn spec() -> WorkloadSpec {
    WorkloadSpec {
        file: None,
        zipf: Some(1.0),
        distinct: Some(500),
        p_repeat: Some(0.9),
        placement: None,
    }
}

/// A synthetic trace written by `rbf synth`'s library call: 500 prologue + 20,000.
fn trace(dir: &Path) -> PathBuf {
    let path = dir.join("t.txt");
    let request = SynthRequest::new(&spec(), 20_000, 7, true, &path).expect("request");
    let run = synth_command::run(&request).expect("synth");
    assert_eq!((run.written, run.prologue), (20_500, 500));
    path
}

fn open(path: &Path) -> Box<dyn ingest::MessageSource> {
    ingest::open(path, &IngestOptions::default()).expect("trace opens")
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("serialises")
}

#[test]
fn replay_call_reports_what_the_replay_it_runs_reports() {
    let dir = Scratch::new("lib-replay");
    let path = trace(&dir);
    let filter = FilterConfig::sigma_bounded(4096, 3, 300);
    let options = ReplayOptions {
        warmup: 500,
        confidence: 0.95,
    };
    let request = ReplayRequest::new(&filter, options, 2).expect("request");
    let mut source = open(&path);
    let mut read = 0;
    let run =
        replay_command::run(&request, source.as_mut(), |s| read = s.messages).expect("replay");
    assert_eq!((read, run.seen), (20_500, 20_500));
    let mut direct = Replays::new(&filter, options, 2).expect("replays");
    direct
        .run_source(open(&path).as_mut())
        .expect("direct replay");
    assert_eq!(json(&run.report), json(&direct.report()));
    let out = serde_json::to_value(run.output(source.summary())).expect("json");
    assert_eq!(out["ingest"]["messages"], 20_500);
    assert_eq!(out["arrivals"], run.report.counts.arrivals);
}

#[test]
fn fit_call_writes_the_workload_it_fitted() {
    let dir = Scratch::new("lib-fit");
    let path = trace(&dir);
    let (workload, table) = (dir.join("w.json"), dir.join("r.csv"));
    let request = FitRequest::new(
        FitOptions::default(),
        std::slice::from_ref(&path),
        Some(&workload),
        Some(&table),
    )
    .expect("request");
    assert!(!request.writes_stdout());
    let mut written = Vec::new();
    let run = fit_command::run(
        &request,
        open(&path).as_mut(),
        |_| {},
        |what, p| written.push((what.to_string(), p.to_path_buf())),
    )
    .expect("fit");
    let want = [("workload", &workload), ("rank table", &table)];
    let want: Vec<(String, PathBuf)> = want.map(|(w, p)| (w.into(), p.clone())).to_vec();
    assert_eq!(written, want);
    let mut direct = Fitter::new(FitOptions::default()).expect("fitter");
    direct.run(open(&path).as_mut());
    let direct = direct.finish().expect("direct fit");
    assert_eq!(json(&run.fit.summary), json(&direct.summary));
    let saved = Workload::load(&workload).expect("workload file reads");
    assert_eq!(json(&saved), json(&run.fit.workload().expect("workload")));
}

#[test]
fn model_fn_call_is_the_judge_on_the_given_workload() {
    let filter = FilterConfig::sigma_bounded(8192, 3, 600);
    let w = spec().resolve().expect("workload");
    let options = JudgeOptions::new(vec![Method::Renewal], DEFAULT_EPS, None, false);
    let run = model_fn(&filter, &w, &options).expect("model fn");
    let direct = judge(&Subject::given(&filter, &w), &options, None).expect("judge");
    assert_eq!(json(&run.judgement.records), json(&direct.records));
    let out = serde_json::to_value(run.output()).expect("json");
    assert_eq!(out["distinct"], 500);
    assert!(out["fn_renewal_upper"].as_f64().is_some_and(|v| v > 0.0));
    assert!(
        out["fn_markov_lower"].is_null(),
        "not asked for, not computed"
    );
}

/// Every request is refused, naming what is wrong, before a trace is read or an output
/// is started.
#[test]
fn requests_refuse_bad_input_up_front() {
    let dir = Scratch::new("lib-requests");
    let path = trace(&dir);
    let filter = FilterConfig::sigma_bounded(4096, 3, 300);
    let bad_level = ReplayOptions {
        warmup: 0,
        confidence: 1.5,
    };
    let e = ReplayRequest::new(&filter, bad_level, 1).expect_err("level 1.5");
    assert!(e.to_string().contains("confidence"), "{e}");
    let trace = std::slice::from_ref(&path);
    let e = FitRequest::new(FitOptions::default(), trace, Some(&path), None)
        .expect_err("the workload file onto the trace");
    assert!(e.to_string().contains("t.txt"), "{e}");
    let e = FitRequest::new(FitOptions::default(), trace, None, Some(&dir.join("r.txt")))
        .expect_err("a table format the name does not tell");
    assert!(e.to_string().contains("r.txt"), "{e}");
    let e = IngestRequest::new(IngestOptions::default(), trace, &path).expect_err("onto input");
    assert!(e.to_string().contains("t.txt"), "{e}");
    let e = SynthRequest::new(&spec(), 10, 1, true, &dir.join("no").join("s.txt"))
        .expect_err("a directory that does not exist");
    assert!(e.to_string().contains("s.txt"), "{e}");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quickstart.toml");
    let e = RunRequest::new(&config, Some(Path::new("-")), None)
        .err()
        .expect("stdout");
    assert!(e.to_string().contains("output"), "{e}");
    let e = RunRequest::new(&config, Some(&dir.join("out")), Some("3/2"))
        .err()
        .expect("shard");
    assert!(e.to_string().contains("3/2"), "{e}");
    assert_eq!(
        std::fs::read_dir(&*dir).expect("scratch").count(),
        1,
        "nothing written"
    );
}
