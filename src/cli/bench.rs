//! `portcullis bench [OPTIONS]` and `portcullis profile NAME [OPTIONS]`.

use std::path::PathBuf;

use super::words::OptionWords;
use super::{bad, parse_cpus, parse_timeout, CliCommand, CliError};
use crate::bench::{BenchOptions, BenchSettings};
use crate::machine::Machine;
use crate::profile::{ProfileOptions, DEFAULT_PROFILE_ITERATIONS};

/// Parses the words after `bench`.
pub fn parse_bench(args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut options = BenchOptions {
        settings: BenchSettings::new(Machine::Virt),
        compare: None,
        json: None,
        update_docs: false,
    };
    let mut words = OptionWords::new(args);
    while let Some(word) = words.next_word() {
        match word.as_str() {
            "-h" | "--help" => return Ok(CliCommand::Help),
            "--machine" => options.settings.machine = machine(&mut words)?,
            "--iterations" => {
                options.settings.iterations = Some(iterations(&words.value("--iterations")?)?)
            }
            "--filter" => options.settings.filter = Some(filter(words.value("--filter")?)?),
            "--compare" => options.compare = Some(PathBuf::from(words.value("--compare")?)),
            "--json" => options.json = Some(PathBuf::from(words.value("--json")?)),
            "--timeout" => options.settings.timeout = parse_timeout(&words.value("--timeout")?)?,
            "--cpus" => options.settings.cpus = Some(parse_cpus(&words.value("--cpus")?)?),
            "--update-docs" => {
                words.no_value("--update-docs")?;
                options.update_docs = true;
            }
            "--no-icount" => {
                words.no_value("--no-icount")?;
                options.settings.icount = false;
            }
            _ => return Err(CliError::UnknownOption(word)),
        }
    }
    if options.update_docs && !options.settings.icount {
        return Err(bad(
            "--update-docs",
            "the docs compare instruction counts: drop --no-icount",
        ));
    }
    if options.update_docs && options.settings.cpus.is_some_and(|cpus| cpus != 4) {
        return Err(bad(
            "--update-docs",
            "the docs show every row, the four-core ones too: drop --cpus",
        ));
    }
    if options.update_docs && options.settings.filter.is_some() {
        return Err(bad(
            "--update-docs",
            "the docs show the whole suite: drop --filter",
        ));
    }
    Ok(CliCommand::Bench(options))
}

/// Parses the words after `profile`.
pub fn parse_profile(args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut name = None;
    let mut options = ProfileOptions {
        name: String::new(),
        iterations: DEFAULT_PROFILE_ITERATIONS,
        machine: Machine::Virt,
        timeout: BenchSettings::new(Machine::Virt).timeout,
        pcs: None,
        cpus: None,
    };
    let mut words = OptionWords::new(args);
    while let Some(word) = words.next_word() {
        match word.as_str() {
            "-h" | "--help" => return Ok(CliCommand::Help),
            "--machine" => options.machine = machine(&mut words)?,
            "--iterations" => options.iterations = iterations(&words.value("--iterations")?)?,
            "--timeout" => options.timeout = parse_timeout(&words.value("--timeout")?)?,
            "--pcs" => options.pcs = Some(PathBuf::from(words.value("--pcs")?)),
            "--cpus" => options.cpus = Some(parse_cpus(&words.value("--cpus")?)?),
            option if option.starts_with('-') => return Err(CliError::UnknownOption(word)),
            _ if name.is_some() => {
                return Err(bad(
                    "profile",
                    format!("one benchmark name, not also `{word}`"),
                ))
            }
            _ => name = Some(filter(word)?),
        }
    }
    options.name = name.ok_or(CliError::MissingValue("profile NAME"))?;
    Ok(CliCommand::Profile(options))
}

fn machine<I: Iterator<Item = String>>(words: &mut OptionWords<I>) -> Result<Machine, CliError> {
    words
        .value("--machine")?
        .parse()
        .map_err(|e| bad("--machine", e))
}

fn iterations(text: &str) -> Result<u32, CliError> {
    match text.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(
            "--iterations",
            format!("`{text}` is not a whole number of at least 1"),
        )),
    }
}

/// A filter goes on the kernel command line: one word of printable ASCII.
fn filter(text: String) -> Result<String, CliError> {
    let printable_word = !text.is_empty() && text.bytes().all(|b| b.is_ascii_graphic());
    if printable_word {
        Ok(text)
    } else {
        Err(bad(
            "--filter",
            format!(
                "{text:?} must be one word of printable ASCII (it goes on the kernel command line)"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse;
    use std::time::Duration;

    fn command(words: &[&str]) -> Result<CliCommand, CliError> {
        parse(words.iter().map(|word| word.to_string()))
    }

    fn bench(words: &[&str]) -> BenchOptions {
        let mut all = vec!["bench"];
        all.extend_from_slice(words);
        match command(&all) {
            Ok(CliCommand::Bench(options)) => options,
            other => panic!("{words:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn bench_defaults_to_the_whole_suite_under_icount_on_virt() {
        let options = bench(&[]);
        assert_eq!(options.settings, BenchSettings::new(Machine::Virt));
        assert!(options.settings.icount);
        assert_eq!(
            (options.compare, options.json, options.update_docs),
            (None, None, false)
        );
    }

    #[test]
    fn bench_reads_every_option() {
        let options = bench(&[
            "--machine=raspi4b",
            "--iterations",
            "1000",
            "--filter=ipc",
            "--compare",
            "old.json",
            "--json",
            "new.json",
            "--no-icount",
            "--timeout",
            "60",
        ]);
        assert_eq!(options.settings.machine, Machine::Raspi4b);
        assert_eq!(options.settings.iterations, Some(1000));
        assert_eq!(options.settings.filter.as_deref(), Some("ipc"));
        assert_eq!(options.compare, Some(PathBuf::from("old.json")));
        assert_eq!(options.json, Some(PathBuf::from("new.json")));
        assert!(!options.settings.icount);
        assert_eq!(options.settings.timeout, Some(Duration::from_secs(60)));
        assert!(bench(&["--update-docs"]).update_docs);
        assert_eq!(bench(&["--cpus", "1"]).settings.cpus, Some(1));
        assert!(command(&["bench", "--cpus", "5"]).is_err());
        assert!(command(&["bench", "--update-docs", "--cpus", "1"]).is_err());
    }

    #[test]
    fn bench_refuses_what_it_cannot_do() {
        for words in [
            &["bench", "--iterations", "0"][..],
            &["bench", "--iterations", "many"],
            &["bench", "--filter", "two words"],
            &["bench", "--filter="],
            &["bench", "--update-docs", "--no-icount"],
            &["bench", "--update-docs", "--filter", "ipc"],
            &["bench", "--no-icount=yes"],
        ] {
            assert!(
                matches!(command(words), Err(CliError::BadValue { .. })),
                "{words:?}"
            );
        }
        assert_eq!(
            command(&["bench", "--fast"]),
            Err(CliError::UnknownOption("--fast".into()))
        );
        assert_eq!(
            command(&["bench", "--json"]),
            Err(CliError::MissingValue("--json"))
        );
    }

    #[test]
    fn profile_takes_one_name_and_options() {
        match command(&["profile", "null_syscall", "--iterations", "20"]) {
            Ok(CliCommand::Profile(options)) => {
                assert_eq!(options.name, "null_syscall");
                assert_eq!(options.iterations, 20);
                assert_eq!(options.machine, Machine::Virt);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            command(&["profile"]),
            Err(CliError::MissingValue("profile NAME"))
        );
        assert!(command(&["profile", "a", "b"]).is_err());
        assert!(command(&["profile", "a", "--filter", "b"]).is_err());
    }
}
