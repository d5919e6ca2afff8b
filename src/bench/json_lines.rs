//! Results as JSON lines: one object per result, one result per line.
//!
//! `{"name":"null_syscall","unit":"instructions","iterations":10000,"min":31,"median":31,"mean":31.4,"max":58,"overhead":2}`
//!
//! The same text goes to stdout (after the table) and to the `--json`
//! file, which `--compare` reads back.

use std::fmt;

use super::flat_json::{parse_object, quote, FlatValue};
use super::result::{is_benchmark_name, BenchResult, Tenths, Unit};

/// One result as a JSON object on one line (no line terminator).
pub fn to_json_line(result: &BenchResult) -> String {
    format!(
        "{{\"name\":{},\"unit\":{},\"iterations\":{},\"min\":{},\"median\":{},\"mean\":{},\"max\":{},\"overhead\":{}}}",
        quote(&result.name),
        quote(result.unit.name()),
        result.iterations,
        result.min,
        result.median,
        result.mean,
        result.max,
        result.overhead
    )
}

/// Every result, one JSON line each, each ending in `\n`.
pub fn to_json_lines(results: &[BenchResult]) -> String {
    results
        .iter()
        .map(|result| to_json_line(result) + "\n")
        .collect()
}

/// A JSON-lines file line that is not a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonLineError {
    /// 1-based line number.
    pub line_number: usize,
    /// The line.
    pub line: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for JsonLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {} in {:?}",
            self.line_number, self.reason, self.line
        )
    }
}

impl std::error::Error for JsonLineError {}

/// Reads a JSON-lines file's text; blank lines are skipped.
pub fn parse_json_lines(text: &str) -> Result<Vec<BenchResult>, JsonLineError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            from_json_line(line).map_err(|reason| JsonLineError {
                line_number: index + 1,
                line: line.to_string(),
                reason,
            })
        })
        .collect()
}

/// Reads one result object. Unknown keys are ignored (a later runner may
/// add some); each known key is required.
pub fn from_json_line(line: &str) -> Result<BenchResult, String> {
    let fields = parse_object(line)?;
    let field = |key: &str| {
        fields
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
            .ok_or_else(|| format!("`{key}` is missing"))
    };
    let text = |key: &str| match field(key)? {
        FlatValue::Text(text) => Ok(text.as_str()),
        FlatValue::Number(_) => Err(format!("`{key}` must be a string")),
    };
    let number_text = |key: &str| match field(key)? {
        FlatValue::Number(number) => Ok(number.as_str()),
        FlatValue::Text(_) => Err(format!("`{key}` must be a number")),
    };
    let whole = |key: &str| {
        let number = number_text(key)?;
        number
            .parse::<u64>()
            .map_err(|_| format!("`{key}` = {number} is not a whole number ≥ 0"))
    };
    let name = text("name")?;
    if !is_benchmark_name(name) {
        return Err(format!("name {name:?} is not a snake_case identifier"));
    }
    Ok(BenchResult {
        name: name.to_string(),
        unit: text("unit")?.parse::<Unit>()?,
        iterations: whole("iterations")?,
        min: whole("min")?,
        median: whole("median")?,
        mean: number_text("mean")?
            .parse::<Tenths>()
            .map_err(|reason| format!("`mean`: {reason}"))?,
        max: whole("max")?,
        overhead: whole("overhead")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BenchResult {
        BenchResult {
            name: "null_syscall".into(),
            unit: Unit::Instructions,
            iterations: 10_000,
            min: 31,
            median: 31,
            mean: Tenths(314),
            max: 58,
            overhead: 2,
        }
    }

    #[test]
    fn writes_the_documented_line() {
        assert_eq!(
            to_json_line(&sample()),
            r#"{"name":"null_syscall","unit":"instructions","iterations":10000,"min":31,"median":31,"mean":31.4,"max":58,"overhead":2}"#
        );
    }

    #[test]
    fn lines_read_back_to_the_same_results() {
        let floor = BenchResult {
            name: "floor_svc_eret".into(),
            unit: Unit::Cycles,
            mean: Tenths(60),
            ..sample()
        };
        let text = to_json_lines(&[sample(), floor.clone()]);
        assert_eq!(text.lines().count(), 2);
        assert_eq!(parse_json_lines(&text), Ok(vec![sample(), floor]));
    }

    #[test]
    fn unknown_keys_are_ignored_and_missing_ones_named() {
        let extra = r#"{"name":"a","unit":"cycles","iterations":1,"min":1,"median":1,"mean":1.0,"max":1,"overhead":0,"host":"x"}"#;
        assert!(from_json_line(extra).is_ok());
        let missing = r#"{"name":"a","unit":"cycles"}"#;
        assert_eq!(
            from_json_line(missing),
            Err("`iterations` is missing".into())
        );
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number() {
        let text = format!("{}\n\nnot json\n", to_json_line(&sample()));
        let error = parse_json_lines(&text).expect_err("line 3 is bad");
        assert_eq!(error.line_number, 3);
        assert!(error.to_string().contains("not json"));
        let negative = to_json_line(&sample()).replace("\"min\":31", "\"min\":-31");
        assert!(from_json_line(&negative).is_err());
        let stringly = to_json_line(&sample()).replace("\"min\":31", "\"min\":\"31\"");
        assert!(from_json_line(&stringly).is_err());
    }
}
