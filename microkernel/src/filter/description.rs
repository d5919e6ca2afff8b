//! The content of a Filter kernel object.

use abi::policy::{decode_into, FilterDescription, PolicyError, Rule};

/// A Filter object: a decoded, validated description.
///
/// Every `Filter` holds valid rules: it is built empty, from a validated
/// description, or by [`Filter::load`], which checks before it changes
/// anything. It is about 20 KiB ([`abi::policy::MAX_RULES`] rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    description: FilterDescription,
}

impl Filter {
    /// A filter with no rules: it allows everything (what a Filter object
    /// holds before its first `FilterLoad`).
    pub const fn new() -> Filter {
        Filter {
            description: FilterDescription::new(abi::policy::Action::Allow),
        }
    }

    /// A filter holding `description`, if it is valid.
    pub fn from_description(description: FilterDescription) -> Result<Filter, PolicyError> {
        description.validate()?;
        Ok(Filter { description })
    }

    /// Replaces the rules with those `bytes` encode (postcard, as
    /// `abi::policy::encode` writes them). On error the filter keeps its
    /// rules. Decodes in place: the stack never holds a whole description.
    pub fn load(&mut self, bytes: &[u8]) -> Result<(), PolicyError> {
        decode_into(bytes, &mut self.description)
    }

    /// The rules, in the order they are tried.
    pub fn rules(&self) -> &[Rule] {
        &self.description.rules
    }

    /// What a syscall no rule matches gets.
    pub fn default(&self) -> abi::policy::Action {
        self.description.default
    }

    /// Can one of its verdicts be `Notify` (a rule's, or the default)?
    /// Such a filter is attached only with a policy server.
    pub fn asks_a_server(&self) -> bool {
        self.description.asks_a_server()
    }

    /// Does a rule that applies to syscall `number` look at memory?
    pub fn reads_memory(&self, number: u64) -> bool {
        self.rules()
            .iter()
            .any(|r| r.applies_to(number) && r.reads_memory())
    }
}

impl Default for Filter {
    fn default() -> Filter {
        Filter::new()
    }
}
