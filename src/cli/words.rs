//! Splitting a subcommand's arguments into options and their values.

use super::CliError;

/// The arguments after a subcommand, read one option at a time.
pub struct OptionWords<I: Iterator<Item = String>> {
    args: I,
    inline_value: Option<String>,
}

impl<I: Iterator<Item = String>> OptionWords<I> {
    /// Reads `args`.
    pub fn new(args: I) -> Self {
        OptionWords {
            args,
            inline_value: None,
        }
    }

    /// The next word; `--option=value` comes back as `--option`, with the
    /// value kept for [`OptionWords::value`].
    pub fn next_word(&mut self) -> Option<String> {
        let word = self.args.next()?;
        match word.split_once('=') {
            Some((option, value)) if option.starts_with("--") => {
                self.inline_value = Some(value.to_string());
                Some(option.to_string())
            }
            _ => {
                self.inline_value = None;
                Some(word)
            }
        }
    }

    /// The value of the option just read: after `=`, else the next word.
    pub fn value(&mut self, option: &'static str) -> Result<String, CliError> {
        self.inline_value
            .take()
            .or_else(|| self.args.next())
            .ok_or(CliError::MissingValue(option))
    }

    /// The word just read as it was given (`--option=value` whole), for a
    /// parser that hands the words it does not take on to another.
    pub fn as_given(&mut self, word: String) -> String {
        match self.inline_value.take() {
            Some(value) => format!("{word}={value}"),
            None => word,
        }
    }

    /// Fails if the option just read came with `=value` it does not take.
    pub fn no_value(&mut self, option: &'static str) -> Result<(), CliError> {
        match self.inline_value.take() {
            None => Ok(()),
            Some(_) => Err(CliError::BadValue {
                option,
                reason: "takes no value".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_value_spellings() {
        let mut words = OptionWords::new(
            ["--a=1", "--b", "2", "plain", "--flag=x"]
                .into_iter()
                .map(String::from),
        );
        assert_eq!(words.next_word().as_deref(), Some("--a"));
        assert_eq!(words.value("--a"), Ok("1".into()));
        assert_eq!(words.next_word().as_deref(), Some("--b"));
        assert_eq!(words.value("--b"), Ok("2".into()));
        assert_eq!(words.next_word().as_deref(), Some("plain"));
        assert_eq!(words.next_word().as_deref(), Some("--flag"));
        assert!(words.no_value("--flag").is_err());
        let mut given = OptionWords::new(["--m=v", "w"].into_iter().map(String::from));
        let word = given.next_word().unwrap();
        assert_eq!(given.as_given(word), "--m=v");
        let word = given.next_word().unwrap();
        assert_eq!(given.as_given(word), "w");
        assert_eq!(words.next_word(), None);
        assert_eq!(words.value("--c"), Err(CliError::MissingValue("--c")));
    }
}
