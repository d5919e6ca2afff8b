//! The benchmark suite's host side: reading the guest's `BENCH` lines,
//! printing and comparing them, generating the docs, and the regression
//! budgets.
//!
//! The guest protocol (`portcullis.mode=bench`):
//!
//! | line | meaning |
//! | --- | --- |
//! | `BENCH name=N unit=instructions\|cycles iterations=I min=A median=M mean=X.Y max=B overhead=O` | one result; min..max per operation, `overhead` (one counter read) already subtracted |
//! | `BENCH-ERROR name=N reason=TEXT` | a benchmark that could not run (the guest then exits 1) |
//! | `# portcullis-bench: C results` | the end: C result lines were printed |
//!
//! Other lines (banner, `[kernel] ...`, `[bench#N] ...`) may come in
//! between. The runner passes `portcullis.counter=instructions` with
//! `-icount shift=0` (the default), and `portcullis.bench.iterations=N`
//! and `portcullis.bench.filter=TEXT` when asked.
//!
//! | file | one idea |
//! | --- | --- |
//! | `result.rs` | [`BenchResult`] and its unit |
//! | `line.rs`, `report.rs` | classifying lines; a run's results and what is wrong with them |
//! | `run.rs` | the boot request and the verdict |
//! | `flat_json.rs`, `json_lines.rs` | results as JSON lines |
//! | `text_table.rs`, `results_table.rs`, `compare.rs` | terminal tables |
//! | `catalogue.rs`, `target.rs`, `doc_rows.rs` | peers and goals per benchmark |
//! | `docs_markdown.rs`, `docs_svg.rs`, `outputs.rs` | the generated docs and files |
//! | `budget.rs` | the regression budgets |
//! | `command.rs` | `portcullis bench` |

pub mod budget;
pub mod catalogue;
mod command;
pub mod compare;
pub mod doc_rows;
pub mod docs_markdown;
pub mod docs_svg;
pub mod flat_json;
pub mod json_lines;
pub mod line;
pub mod outputs;
pub mod report;
pub mod result;
pub mod results_table;
pub mod run;
pub mod target;
pub mod text_table;

pub use budget::{BudgetViolation, Budgets, BUDGET_FILE};
pub use command::{results_text, run_bench_command, BenchOptions};
pub use report::{BenchProblem, BenchReport};
pub use result::{BenchResult, Tenths, Unit};
pub use run::{BenchOutcome, BenchSettings};
