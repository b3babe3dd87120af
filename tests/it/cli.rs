//! Running the `rbf` binary from tests.

use std::process::Output;

/// The JSON a successful run printed (the test fails with its stderr otherwise).
pub fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}
