//! The integration tests, one crate (linked once) with a module per area.

mod cli;
mod ingest_support;
mod scratch;

mod cli_replay;
mod compare_bounds;
mod coverage_study;
mod experiment_bounds;
mod experiment_configs;
mod experiment_errors;
mod experiment_shards;
mod fit_bound;
mod fit_round_trip;
mod ingest_cdn;
mod ingest_crosscheck;
mod ingest_flowlogs;
mod ingest_formats;
mod ingest_fuzz;
mod ingest_hostile;
mod ingest_pcap;
mod ingest_roundtrip;
mod ingest_series;
mod model_fn_cli;
mod model_fn_engine;
mod model_fn_paper;
mod model_fn_replay;
mod model_fp;
mod model_fp_cli;
mod readme;
mod renewal_tolerance;
mod replay_reference;
mod safety_flags;
mod safety_outputs;
mod safety_sweep;
mod size;
mod svg_layout;
