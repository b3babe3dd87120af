//! Foundations: what every stage stands on, none of it about filters or traces.
//!
//! * `stop`: whether a stop was asked for: the signal received and the interrupt flag.
//! * `error`: one error type; every variant says where and what was expected.
//! * `numbers`: numbers as users write them (`1e6`, `2^20`), for flags and configs.
//! * `prefetch`: software prefetch hints for the replay and fit loops.
//! * `simd`: the widest vector instructions of the CPU, chosen at run time.
//! * `stats`: the intervals behind verdicts (Student t, batch means, ratios, binomial).
//! * `console`: results on stdout and notes on stderr, never a panic on a full stream.
//! * `resources`: memory, disk and cores checked before work starts.
//! * `progress`: progress bars with an ETA, and the Ctrl-C flag long loops poll.
//! * `output_file`: outputs written whole or not at all, never onto an input.
//! * `signals`: the thread that answers SIGINT, SIGTERM and SIGHUP.
//! * `slot_table`: open-addressing key tables looked up once per arrival.

pub mod console;
pub mod error;
pub mod numbers;
pub mod output_file;
pub mod prefetch;
pub mod progress;
pub mod resources;
pub mod signals;
pub mod simd;
pub mod slot_table;
pub mod stats;
pub mod stop;
pub mod worker;
