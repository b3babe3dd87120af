//! Checks made before any work: no output is an input, output directories can be
//! written.

use std::path::Path;

use super::is_stdio;
use super::paths::{file_id, id_of, is_special, parent_dir, resolved, temp_name, FileId};
use crate::error::{Error, Result};

pub(super) fn refuse(output: &Path, message: String) -> Error {
    Error::output(output, message)
}

/// Creates and removes a file in `dir`, the only sure test that it can be written.
pub fn check_dir_writable(dir: &Path) -> Result<()> {
    let probe = temp_name(&dir.join("probe"), "probe");
    let ticket = super::pending::register(&probe, None, false);
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe);
    super::pending::settle(ticket, || {
        let _ = std::fs::remove_file(&probe);
    });
    match created {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                e.kind(),
                format!("cannot write output files in this directory: {e}"),
            ),
        }),
    }
}

/// Checks, before any work, that every output file can be written and none of them
/// is an input (or another output). `-` (stdout or stdin) is skipped.
pub fn check_outputs(outputs: &[&Path], inputs: &[&Path]) -> Result<()> {
    let input_ids: Vec<(&Path, FileId)> = inputs
        .iter()
        .filter(|p| !is_stdio(p))
        .filter_map(|p| id_of(p).map(|id| (*p, id)))
        .collect();
    if outputs.iter().filter(|p| is_stdio(p)).count() > 1 {
        return Err(Error::TwoOnStdout);
    }
    let mut seen: Vec<(&Path, FileId)> = Vec::new();
    for &out in outputs.iter().filter(|p| !is_stdio(p)) {
        if let Ok(m) = std::fs::metadata(out) {
            if m.is_dir() {
                return Err(refuse(out, "it is a directory, not a file".into()));
            }
            if let Some(id) = file_id(&m) {
                if let Some((input, _)) = input_ids.iter().find(|(_, i)| *i == id) {
                    return Err(refuse(
                        out,
                        format!(
                            "it is the input {} (the same file); choose another output name",
                            input.display()
                        ),
                    ));
                }
                if let Some((other, _)) = seen.iter().find(|(_, i)| *i == id) {
                    return Err(refuse(
                        out,
                        format!("it is also the output {}", other.display()),
                    ));
                }
                seen.push((out, id));
            }
            if is_special(&m) {
                continue;
            }
            crate::progress::note(&format!(
                "{} exists; it will be replaced once the new one is complete",
                out.display()
            ));
        }
        let dir = parent_dir(&resolved(out));
        if !dir.is_dir() {
            return Err(Error::Io {
                path: out.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("the directory {} does not exist", dir.display()),
                ),
            });
        }
        // Named as given, and where it leads (`/proc/self/x` is in /proc/<pid>).
        check_dir_writable(&dir).map_err(|e| {
            refuse(
                out,
                match e {
                    Error::Io { source, .. } => format!(
                        "no file can be created in its directory {} ({source})",
                        dir.display()
                    ),
                    e => e.to_string(),
                },
            )
        })?;
    }
    Ok(())
}

/// Refuses an output directory that is an input or holds one (its contents are
/// replaced as a whole), and checks that its parent can be written (creating it).
pub fn check_output_dir(dir: &Path, inputs: &[&Path]) -> Result<()> {
    if let Ok(m) = std::fs::metadata(dir) {
        if !m.is_dir() {
            return Err(refuse(dir, "it exists and is not a directory".into()));
        }
        let dir_id = file_id(&m);
        for input in inputs.iter().filter(|p| !is_stdio(p)) {
            let inside = resolved(input)
                .ancestors()
                .any(|a| dir_id.is_some() && id_of(a) == dir_id);
            if inside {
                return Err(refuse(
                    dir,
                    format!(
                        "the input {} is in it, and an output directory is replaced as a whole",
                        input.display()
                    ),
                ));
            }
        }
    }
    // Like `mkdir -p`: the parents of an output directory are created (nothing is
    // replaced by that), so a config's `output = "../out/name"` works on a fresh clone.
    let parent = parent_dir(&resolved(dir));
    std::fs::create_dir_all(&parent).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        source: std::io::Error::new(
            e.kind(),
            format!("cannot create the directory {}: {e}", parent.display()),
        ),
    })?;
    check_dir_writable(&parent)
}
