//! Sharded runs merge into exactly the unsharded run, and results do not depend on
//! the number of threads.

use std::path::Path;

use crate::scratch::Scratch;

use rbf_judge::experiment::{self, output, ExperimentConfig, RunOptions, Shard};

const CONFIG: &str = r#"
name = "shards"
seeds = [1, 2]
measures = ["observed", "fp-model", "renewal", "drop-pins"]

[[synthetic]]
distinct = 300
zipf = 1.0
p_repeat = 0.9
arrivals = 20000

[[synthetic]]
distinct = 300
zipf = 0.0
p_repeat = 0.5
placement = "top"
arrivals = 20000

[grid]
memory = [600, 1200]
hashes = [2, 3]
sigma_fraction = [0.3, 0.5]
phases = [1, 2]
"#;

fn config() -> ExperimentConfig {
    ExperimentConfig::parse(CONFIG, Path::new("shards.toml")).expect("config parses")
}

fn tempdir(tag: &str) -> Scratch {
    Scratch::new(&format!("test-{tag}"))
}

fn run_with_threads(c: &ExperimentConfig, threads: usize, shard: Shard) -> experiment::Results {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
        .install(|| {
            experiment::run(
                c,
                RunOptions {
                    shard,
                    progress: false,
                },
            )
        })
        .expect("run")
}

#[test]
fn merged_shards_equal_the_unsharded_run_byte_for_byte() {
    let c = config();
    let whole = run_with_threads(&c, 2, Shard::ALL);
    assert_eq!(whole.rows.len(), 2 * 2 * 2 * 2 * 2);
    let dir = tempdir("shards");
    let w = output::write(&whole, &dir.join("whole")).expect("write");
    let mut parts = Vec::new();
    for i in 0..3 {
        let s = run_with_threads(&c, 1, Shard { index: i, count: 3 });
        assert!(s.rows.iter().all(|r| r.point % 3 == i));
        let sw = output::write(&s, &dir.join(format!("shard{i}"))).expect("write shard");
        parts.push(output::read(&sw.json).expect("read shard back"));
    }
    let merged = experiment::merge(parts.clone()).expect("merge");
    assert_eq!(merged, whole);
    let m = output::write(&merged, &dir.join("merged")).expect("write merged");
    for (a, b) in [
        (&w.csv, &m.csv),
        (&w.json, &m.json),
        (&w.report, &m.report),
        (&w.html, &m.html),
    ] {
        assert_eq!(
            std::fs::read(a).expect("read"),
            std::fs::read(b).expect("read"),
            "{} differs from {}",
            a.display(),
            b.display()
        );
    }
    // A missing or repeated shard is an error, not a partial table.
    assert!(experiment::merge(parts[..2].to_vec()).is_err());
    let mut twice = parts.clone();
    twice.push(parts[0].clone());
    assert!(experiment::merge(twice).is_err());
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let c = config();
    let one = run_with_threads(&c, 1, Shard::ALL);
    let two = run_with_threads(&c, 2, Shard::ALL);
    let four = run_with_threads(&c, 4, Shard::ALL);
    assert_eq!(one, two);
    assert_eq!(one, four);
}
