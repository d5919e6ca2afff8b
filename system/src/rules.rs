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

/// Compiles `text`: for a filter, its description (`Some`; the text must
/// say its `default`); for a server's rules file, `None` once every line
/// is checked (its `default` is optional, at most one).
pub fn compile_rules(text: &str, usage: RuleUse) -> Result<Option<FilterDescription>, RuleError> {
    match usage {
        RuleUse::Filter => Ok(Some(abi::rules::filter_description(text)?)),
        RuleUse::Server => {
            for line in abi::rules::parse(text, RuleUse::Server) {
                line?;
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
        let filter = compile_rules(
            "signal -> errno denied\npoll -> notify\ndefault -> allow\n",
            RuleUse::Filter,
        )
        .unwrap()
        .unwrap();
        assert_eq!(filter.rules.len(), 2);
        assert_eq!(filter.default, abi::policy::Action::Allow);
        assert_eq!(
            compile_rules("poll -> emulate 0 0x77", RuleUse::Server),
            Ok(None)
        );
        let wrong = compile_rules("\npoll -> emulate 0 0x77", RuleUse::Filter).unwrap_err();
        assert_eq!((wrong.line, wrong.column), (2, 9));
        let wrong = compile_rules("pol -> allow", RuleUse::Server).unwrap_err();
        assert_eq!((wrong.line, wrong.column), (1, 1));
    }

    #[test]
    fn a_filter_must_say_its_default_a_server_may() {
        let missing = compile_rules("\npoll -> notify\n", RuleUse::Filter).unwrap_err();
        assert_eq!((missing.line, missing.column), (1, 1));
        assert!(
            missing.message.contains("add a line `default -> DECISION`"),
            "{}",
            missing.message
        );
        assert_eq!(compile_rules("poll -> allow\n", RuleUse::Server), Ok(None));
        assert_eq!(
            compile_rules("default -> emulate 0 0\n", RuleUse::Server),
            Ok(None)
        );
        let twice = compile_rules("default -> allow\ndefault -> kill\n", RuleUse::Server);
        assert_eq!(twice.map_err(|e| (e.line, e.column)), Err((2, 1)));
    }
}
