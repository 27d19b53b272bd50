//! The report: its data model, the reference bars, and the markdown view.
//! `report.json` is the model serialized; `report.md` is rendered from the
//! same model, so the two never disagree.

pub mod cells;
pub mod growth;
pub mod markdown;
pub mod model;
pub mod reference;

use std::path::Path;

use anyhow::Context;

pub use model::Report;

/// Write `report.json` and `report.md` into `dir`.
pub fn write(report: &Report, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_string_pretty(report)? + "\n";
    std::fs::write(dir.join("report.json"), json).context("writing report.json")?;
    std::fs::write(dir.join("report.md"), markdown::render(report)).context("writing report.md")?;
    Ok(())
}
