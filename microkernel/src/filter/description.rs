//! The content of a Filter kernel object.

use abi::policy::{decode_into, FilterDescription, PolicyError, Rule};

/// A Filter object: a decoded, validated description.
///
/// Every `Filter` holds valid rules: it is built empty, from a validated
/// description, or by [`Filter::load`], which checks before it changes
/// anything. It is about 10 KiB ([`abi::policy::MAX_RULES`] rules).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    description: FilterDescription,
}

impl Filter {
    /// A filter with no rules: it allows everything.
    pub const fn new() -> Filter {
        Filter {
            description: FilterDescription::new(),
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
}
