//! Build seccomp-like policy filters: a rule builder over `abi::policy`.
//!
//! ```
//! use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
//! use sdk::{ErrorCode, Syscall};
//!
//! let filter = FilterBuilder::new(Action::Allow)
//!     // Short prints only: a length of 4 KiB or more is refused.
//!     .rule(
//!         RuleBuilder::syscall(Syscall::DebugPrint)
//!             .arg(3, ArgOp::Ge, 0x1000)
//!             .action(Action::errno(ErrorCode::InvalidArgument)),
//!     )
//!     .rule(RuleBuilder::syscall(Syscall::Retype).action(Action::Kill))
//!     .rule(RuleBuilder::syscall(Syscall::Call).label(2).action(Action::Notify))
//!     .build()
//!     .expect("within the limits");
//! assert_eq!(filter.rules.len(), 3);
//!
//! let mut buffer = [0u8; sdk::policy::MAX_DESCRIPTION_BYTES];
//! let bytes = sdk::policy::encode(&filter, &mut buffer).expect("valid");
//! assert_eq!(sdk::policy::decode(bytes), Ok(filter));
//! ```
//!
//! Rules are tried in the order they were added and the first that matches
//! decides; a syscall no rule matches gets the default given to
//! [`FilterBuilder::new`] (`Action::Allow` for a filter that lists what it
//! refuses, a refusal for one that lists what it allows). A rule may also
//! compare message words ([`RuleBuilder::word`]) and the caller's PC
//! ([`RuleBuilder::pc`]), and match the bytes the call carries
//! ([`RuleBuilder::bytes`]):
//!
//! ```
//! use sdk::policy::{Action, ArgOp, BytesOp, FilterBuilder, RuleBuilder};
//! use sdk::{ErrorCode, Syscall};
//!
//! let filter = FilterBuilder::new(Action::errno(ErrorCode::Denied))
//!     .rule(RuleBuilder::syscall(Syscall::DebugPrint)
//!         .bytes(BytesOp::Prefix, b"[app]", 0)
//!         .action(Action::Allow))
//!     // A message whose first buffer word is 0x5afe.
//!     .rule(RuleBuilder::syscall(Syscall::Call).word(6, ArgOp::Eq, 0x5afe).action(Action::Allow))
//!     .build()
//!     .expect("within the limits");
//! assert_eq!(filter.default, Action::errno(ErrorCode::Denied));
//! ```
//!
//! A mistake (too many rules or comparisons, a register above `x7` or a
//! word past 63, an empty or too long byte pattern, an `Errno` of 0) does
//! not stop the chain: [`FilterBuilder::build`] reports the first one.

use abi::cap::CapType;
use abi::policy::{ArgMatch, BytesMatch, Operand, Rule};
use abi::Syscall;

pub use abi::policy::{
    decode, encode, encode_rules, Action, ArgOp, BytesOp, FilterDescription, PolicyError,
    MAX_ARGS_PER_RULE, MAX_DESCRIPTION_BYTES, MAX_RULES,
};

/// One rule being built: what it matches. [`RuleBuilder::action`] ends it.
#[derive(Clone, Debug)]
pub struct RuleBuilder {
    rule: Rule,
    error: Option<PolicyError>,
}

impl RuleBuilder {
    /// A rule for one syscall.
    pub fn syscall(syscall: Syscall) -> RuleBuilder {
        let mut builder = RuleBuilder::any_syscall();
        builder.rule.syscall = Some(syscall.number());
        builder
    }

    /// A rule for every syscall.
    pub fn any_syscall() -> RuleBuilder {
        RuleBuilder {
            rule: Rule::new(Action::Allow),
            error: None,
        }
    }

    /// Only when the capability in `x0` names an object of type `object_type`.
    pub fn object_type(mut self, object_type: CapType) -> RuleBuilder {
        self.rule.object_type = Some(object_type);
        self
    }

    /// Only when the message label (in `x1`) is `label`.
    pub fn label(mut self, label: u64) -> RuleBuilder {
        self.rule.label = Some(label);
        self
    }

    /// Only when the capability in `x0` carries `badge` (0: unbadged).
    pub fn badge(mut self, badge: u64) -> RuleBuilder {
        self.rule.badge = Some(badge);
        self
    }

    /// Only when `x[register] op value` (the whole register).
    pub fn arg(self, register: u8, op: ArgOp, value: u64) -> RuleBuilder {
        self.arg_masked(register, u64::MAX, op, value)
    }

    /// Only when `(x[register] & mask) op value`.
    pub fn arg_masked(self, register: u8, mask: u64, op: ArgOp, value: u64) -> RuleBuilder {
        self.compare(ArgMatch::register(register, mask, op, value))
    }

    /// Only when message word `word op value` (words 0..=5 are `x2..x7`,
    /// 6 and up the IPC buffer's, as the kernel copied them to judge the
    /// call).
    pub fn word(self, word: u8, op: ArgOp, value: u64) -> RuleBuilder {
        self.word_masked(word, u64::MAX, op, value)
    }

    /// Only when `(message word & mask) op value`.
    pub fn word_masked(self, word: u8, mask: u64, op: ArgOp, value: u64) -> RuleBuilder {
        self.compare(ArgMatch {
            operand: Operand::Word(word),
            mask,
            op,
            value,
        })
    }

    /// Only when the caller's PC (the address after its `svc`) `op value`.
    pub fn pc(self, op: ArgOp, value: u64) -> RuleBuilder {
        self.compare(ArgMatch {
            operand: Operand::Pc,
            mask: u64::MAX,
            op,
            value,
        })
    }

    /// Only when the bytes the call carries (a `DebugPrint` text, a
    /// `FilterLoad` description, a message's buffer words) match
    /// `pattern` by `op` (looking at the first `within` bytes; 0: all that
    /// were judged).
    pub fn bytes(mut self, op: BytesOp, pattern: &[u8], within: u16) -> RuleBuilder {
        match BytesMatch::new(op, pattern, within) {
            Ok(bytes) => self.rule.bytes = Some(bytes),
            Err(error) => {
                self.error.get_or_insert(error);
            }
        }
        self
    }

    /// Adds one comparison (at most `MAX_ARGS_PER_RULE`).
    fn compare(mut self, arg: ArgMatch) -> RuleBuilder {
        if let Err(error) = self.rule.push_arg(arg) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// What happens when the rule matches; the rule is complete.
    pub fn action(mut self, action: Action) -> CompleteRule {
        self.rule.action = action;
        CompleteRule {
            rule: self.rule,
            error: self.error,
        }
    }
}

/// A rule with its action, ready for [`FilterBuilder::rule`].
#[derive(Clone, Debug)]
pub struct CompleteRule {
    rule: Rule,
    error: Option<PolicyError>,
}

/// Rules a [`FilterBuilder`] holds unless told otherwise.
pub const BUILDER_RULES: usize = 16;

/// A filter being built: rules in the order they are tried, and what a
/// syscall no rule matches gets. It holds at most `N` rules (a rule is
/// some 290 bytes, and a builder lives on its thread's stack):
/// `FilterBuilder::new` holds [`BUILDER_RULES`], `FilterBuilder::<N>::
/// holding` up to the kernel's [`MAX_RULES`].
#[derive(Clone, Debug)]
pub struct FilterBuilder<const N: usize = BUILDER_RULES> {
    rules: [Rule; N],
    count: usize,
    default: Action,
    error: Option<PolicyError>,
}

impl FilterBuilder {
    /// No rules yet (room for [`BUILDER_RULES`]); a syscall no rule
    /// matches gets `default` (always said: `Action::Allow` for a filter
    /// that lists what it refuses, a refusal for one that lists what it
    /// allows).
    pub fn new(default: Action) -> FilterBuilder {
        FilterBuilder::holding(default)
    }
}

impl<const N: usize> FilterBuilder<N> {
    /// No rules yet, room for `N` (at most [`MAX_RULES`] count: more are
    /// `TooManyRules` when built); `default` as for `new`.
    pub fn holding(default: Action) -> FilterBuilder<N> {
        FilterBuilder {
            rules: [const { Rule::new(Action::Allow) }; N],
            count: 0,
            default,
            error: None,
        }
    }

    /// Adds a rule after the ones already added (`TooManyRules` past `N`).
    pub fn rule(mut self, rule: CompleteRule) -> FilterBuilder<N> {
        let added = match (rule.error, self.rules.get_mut(self.count)) {
            (Some(error), _) => Err(error),
            (None, None) => Err(PolicyError::TooManyRules),
            (None, Some(slot)) => {
                *slot = rule.rule;
                self.count += 1;
                Ok(())
            }
        };
        if let Err(error) = added {
            self.error.get_or_insert(error);
        }
        self
    }

    /// The rules added so far.
    pub fn rules(&self) -> &[Rule] {
        &self.rules[..self.count]
    }

    /// The description, or the first mistake made while building it.
    pub fn build(&self) -> Result<FilterDescription, PolicyError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut description = FilterDescription::new(self.default);
        for rule in self.rules() {
            description.push(rule.clone())?;
        }
        description.validate()?;
        Ok(description)
    }

    /// Encodes the description into `buffer` (at most
    /// [`MAX_DESCRIPTION_BYTES`] are needed), ready for the kernel, or
    /// says the first mistake made while building it.
    pub fn encode<'b>(&self, buffer: &'b mut [u8]) -> Result<&'b [u8], PolicyError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        encode_rules(self.rules(), self.default, buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::ErrorCode;

    #[test]
    fn builds_the_rules_in_order() {
        let d = FilterBuilder::new(Action::Allow)
            .rule(
                RuleBuilder::syscall(Syscall::DebugPrint)
                    .arg(2, ArgOp::Lt, 0x1000)
                    .action(Action::Errno(5)),
            )
            .rule(
                RuleBuilder::syscall(Syscall::Call)
                    .object_type(CapType::Endpoint)
                    .label(3)
                    .badge(9)
                    .arg_masked(4, 0xff, ArgOp::MaskedEq, 0x1234)
                    .action(Action::Notify),
            )
            .rule(RuleBuilder::any_syscall().action(Action::Kill))
            .build()
            .unwrap();
        let mut print = Rule::new(Action::Errno(5));
        print.syscall = Some(3);
        print
            .push_arg(ArgMatch::register(2, u64::MAX, ArgOp::Lt, 0x1000))
            .unwrap();
        assert_eq!(d.rules[0], print);
        let call = &d.rules[1];
        assert_eq!(call.syscall, Some(Syscall::Call.number()));
        assert_eq!(call.object_type, Some(CapType::Endpoint));
        assert_eq!((call.label, call.badge), (Some(3), Some(9)));
        assert_eq!((call.args[0].mask, call.args[0].value), (0xff, 0x1234));
        assert_eq!(d.rules[2], Rule::new(Action::Kill));
    }

    #[test]
    fn encodes_what_the_kernel_decodes() {
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let builder = FilterBuilder::new(Action::Allow)
            .rule(RuleBuilder::syscall(Syscall::Exit).action(Action::Log))
            .rule(RuleBuilder::any_syscall().action(Action::errno(ErrorCode::Denied)));
        let expected = builder.clone().build().unwrap();
        let bytes = builder.encode(&mut buffer).unwrap();
        assert_eq!(decode(bytes), Ok(expected));
    }

    #[test]
    fn words_the_pc_bytes_and_the_default() {
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let builder = FilterBuilder::new(Action::errno(ErrorCode::Denied))
            .rule(
                RuleBuilder::syscall(Syscall::Call)
                    .word(6, ArgOp::Eq, 0x5afe)
                    .word_masked(7, 0xff, ArgOp::Le, 3)
                    .pc(ArgOp::Lt, 0x40_0000)
                    .bytes(BytesOp::Contains, b"ok", 16)
                    .action(Action::Allow),
            )
            .rule(
                RuleBuilder::syscall(Syscall::DebugPrint)
                    .bytes(BytesOp::Prefix, b"[app]", 0)
                    .action(Action::Log),
            );
        let d = builder.clone().build().unwrap();
        assert_eq!(d.default, Action::errno(ErrorCode::Denied));
        let call = &d.rules[0];
        assert_eq!(
            call.args[..],
            [
                ArgMatch {
                    operand: Operand::Word(6),
                    mask: u64::MAX,
                    op: ArgOp::Eq,
                    value: 0x5afe
                },
                ArgMatch {
                    operand: Operand::Word(7),
                    mask: 0xff,
                    op: ArgOp::Le,
                    value: 3
                },
                ArgMatch {
                    operand: Operand::Pc,
                    mask: u64::MAX,
                    op: ArgOp::Lt,
                    value: 0x40_0000
                },
            ]
        );
        assert_eq!(
            call.bytes,
            Some(BytesMatch::new(BytesOp::Contains, b"ok", 16).unwrap())
        );
        assert!(call.reads_memory());
        assert_eq!(
            d.rules[1].bytes,
            Some(BytesMatch::new(BytesOp::Prefix, b"[app]", 0).unwrap())
        );
        let bytes = builder.encode(&mut buffer).unwrap();
        assert_eq!(decode(bytes), Ok(d));
        // The default alone, and a `Notify` default needs a server.
        let notify = FilterBuilder::new(Action::Notify).build().unwrap();
        assert!(notify.rules.is_empty() && notify.asks_a_server());
    }

    #[test]
    fn byte_patterns_and_comparisons_stop_at_their_limits() {
        let pattern = [b'x'; abi::policy::MAX_PATTERN_BYTES];
        let longest = FilterBuilder::new(Action::Allow)
            .rule(
                RuleBuilder::any_syscall()
                    .bytes(BytesOp::Equal, &pattern, 0)
                    .action(Action::Kill),
            )
            .build();
        assert!(longest.is_ok());
        let too_long = [b'x'; abi::policy::MAX_PATTERN_BYTES + 1];
        for (bytes, error) in [
            (&b""[..], PolicyError::EmptyPattern),
            (&too_long[..], PolicyError::PatternTooLong),
        ] {
            let built = FilterBuilder::new(Action::Allow)
                .rule(
                    RuleBuilder::any_syscall()
                        .bytes(BytesOp::Prefix, bytes, 0)
                        .action(Action::Kill),
                )
                .build();
            assert_eq!(built, Err(error));
        }
        // Six comparisons of any operands fit; the seventh is the error.
        let six = RuleBuilder::any_syscall()
            .arg(2, ArgOp::Eq, 0)
            .word(6, ArgOp::Eq, 0)
            .word_masked(63, 1, ArgOp::Eq, 1)
            .pc(ArgOp::Ge, 0x1000)
            .arg_masked(7, 0xf, ArgOp::Ne, 2)
            .word(0, ArgOp::Gt, 5);
        let fits = FilterBuilder::new(Action::Allow)
            .rule(six.clone().action(Action::Kill))
            .build()
            .unwrap();
        assert_eq!(fits.rules[0].args.len(), MAX_ARGS_PER_RULE);
        let seven = FilterBuilder::new(Action::Allow)
            .rule(six.pc(ArgOp::Lt, 0x2000).action(Action::Kill))
            .build();
        assert_eq!(seven, Err(PolicyError::TooManyArgs));
        // A word past 63, and a bad default.
        let far = FilterBuilder::new(Action::Allow).rule(
            RuleBuilder::any_syscall()
                .word(64, ArgOp::Eq, 0)
                .action(Action::Kill),
        );
        assert_eq!(far.build(), Err(PolicyError::BadRegister));
        assert_eq!(
            FilterBuilder::new(Action::Errno(0)).build(),
            Err(PolicyError::BadErrno)
        );
    }

    #[test]
    fn reports_the_first_mistake() {
        let too_many_args = (0..=MAX_ARGS_PER_RULE).fold(RuleBuilder::any_syscall(), |r, i| {
            r.arg(i as u8, ArgOp::Eq, 0)
        });
        let built = FilterBuilder::new(Action::Allow)
            .rule(too_many_args.action(Action::Allow))
            .rule(
                RuleBuilder::any_syscall()
                    .arg(8, ArgOp::Eq, 0)
                    .action(Action::Allow),
            )
            .build();
        assert_eq!(built, Err(PolicyError::TooManyArgs));
        let bad_register = FilterBuilder::new(Action::Allow).rule(
            RuleBuilder::any_syscall()
                .arg(8, ArgOp::Eq, 0)
                .action(Action::Allow),
        );
        assert_eq!(bad_register.build(), Err(PolicyError::BadRegister));
        let errno_zero = FilterBuilder::new(Action::Allow)
            .rule(RuleBuilder::any_syscall().action(Action::Errno(0)));
        let mut buffer = [0u8; 64];
        assert_eq!(errno_zero.encode(&mut buffer), Err(PolicyError::BadErrno));
        let too_many_rules = (0..=MAX_RULES).fold(FilterBuilder::new(Action::Allow), |f, _| {
            f.rule(RuleBuilder::any_syscall().action(Action::Allow))
        });
        assert_eq!(too_many_rules.build(), Err(PolicyError::TooManyRules));
    }
}
