//! Rule text, through the one grammar in `abi::rules` (`docs/policy.md`,
//! "The rule language"): a filter's rules compile to an
//! `abi::policy::FilterDescription`; a policy server's rules file is
//! checked as the server will read it at run time.

use abi::policy::FilterDescription;

pub use abi::rules::RuleUse;

/// Where rule text is wrong (1-based line and column within the text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// Line in the text.
    pub line: usize,
    /// Column in the line, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl From<abi::rules::RuleError> for RuleError {
    fn from(error: abi::rules::RuleError) -> Self {
        RuleError {
            line: error.line,
            column: error.column,
            message: error.message.to_string(),
        }
    }
}

/// Compiles `text`: for a filter, its description (`Some`); for a
/// server's rules file, `None` once every line is checked.
pub fn compile_rules(text: &str, usage: RuleUse) -> Result<Option<FilterDescription>, RuleError> {
    match usage {
        RuleUse::Filter => Ok(Some(abi::rules::filter_description(text)?)),
        RuleUse::Server => {
            for rule in abi::rules::parse(text, RuleUse::Server) {
                rule?;
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_uses_go_through_the_shared_grammar() {
        let filter = compile_rules("signal -> errno denied\npoll -> notify\n", RuleUse::Filter)
            .unwrap()
            .unwrap();
        assert_eq!(filter.rules.len(), 2);
        assert_eq!(
            compile_rules("poll -> emulate 0 0x77", RuleUse::Server),
            Ok(None)
        );
        let wrong = compile_rules("\npoll -> emulate 0 0x77", RuleUse::Filter).unwrap_err();
        assert_eq!((wrong.line, wrong.column), (2, 9));
        let wrong = compile_rules("pol -> allow", RuleUse::Server).unwrap_err();
        assert_eq!((wrong.line, wrong.column), (1, 1));
    }
}
