//! Seccomp-like policy filters: the rule model and its wire format.
//!
//! User space describes a filter as a [`FilterDescription`], a list of
//! [`Rule`]s, and hands it to the kernel [`encode`]d with postcard; the
//! kernel [`decode`]s it into a Filter object. Both sides share these types,
//! so what the SDK's rule builder writes is exactly what the kernel reads.
//! `docs/policy.md` describes the model; the short version:
//!
//! * A rule matches on the syscall number, the invoked object's type, the
//!   message label (`x1`), the capability's badge and up to
//!   [`MAX_ARGS_PER_RULE`] register comparisons; a field left `None` (or no
//!   comparison at all) matches anything.
//! * Within one filter the **first** matching rule decides; a syscall that
//!   no rule matches is allowed. A deny-by-default filter ends with a rule
//!   that matches everything.
//! * Across stacked filters the **strictest** verdict wins (the order of
//!   [`Action`]).
//!
//! # Validation
//!
//! [`encode`] and [`decode`] accept only a valid description: at most
//! [`MAX_RULES`] rules, each with at most [`MAX_ARGS_PER_RULE`] comparisons
//! on registers `x0..=x7`, a syscall number that names a [`Syscall`], a
//! label that fits the message info's 55 bits, and an `Errno` code that is
//! a defined, non-zero [`ErrorCode`]. Decoding also refuses input longer
//! than [`MAX_DESCRIPTION_BYTES`], bytes left over after the description,
//! and anything postcard cannot read; it never panics.

use crate::cap::CapType;
use crate::{ErrorCode, Syscall};
use core::cmp::Ordering;
use core::fmt;
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Most rules one filter holds. Sized for real sandboxes: a rule per
/// syscall (21 today) with room for argument-specific rules on top; the
/// kernel object stays a few pages.
pub const MAX_RULES: usize = 64;

/// Most register comparisons one rule makes (all must hold).
pub const MAX_ARGS_PER_RULE: usize = 4;

/// Largest encoded description the kernel accepts, in bytes. Every valid
/// description fits: a valid rule encodes to at most 115 bytes (every field
/// set to its widest valid value), so [`MAX_RULES`] of them need at most
/// 7361.
pub const MAX_DESCRIPTION_BYTES: usize = 8192;

/// The highest register a comparison may name: `x7`.
pub const MAX_ARG_REGISTER: u8 = 7;

/// Bits of the message label (`MessageInfo::label`).
pub(crate) const LABEL_BITS: u32 = 55;

/// What happens to a syscall that a rule matches.
///
/// # Strictness
///
/// `Kill > Trap > Errno > Notify > Log > Allow`: when stacked filters
/// disagree, the strictest verdict wins, so a filter can only take
/// permissions away. [`Ord`] is this order. Two `Errno` verdicts are ordered
/// by their code (the larger wins): an arbitrary but fixed choice that keeps
/// the result independent of the order filters were attached in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// Run the syscall.
    Allow,
    /// Do not run it; return this [`ErrorCode`] number in `x0` (non-zero).
    Errno(u16),
    /// End the thread.
    Kill,
    /// Do not run it; send a fault message to the thread's fault endpoint.
    Trap,
    /// Ask the policy server, whose reply is the verdict.
    Notify,
    /// Run the syscall and write an audit record of it.
    Log,
}

impl Action {
    /// The action's rank in the strictness order: Allow 0, Log 1, Notify 2,
    /// Errno 3, Trap 4, Kill 5.
    pub const fn strictness(self) -> u8 {
        match self {
            Action::Allow => 0,
            Action::Log => 1,
            Action::Notify => 2,
            Action::Errno(_) => 3,
            Action::Trap => 4,
            Action::Kill => 5,
        }
    }

    /// `Errno` with `code` (which should not be [`ErrorCode::Ok`]).
    pub const fn errno(code: ErrorCode) -> Action {
        Action::Errno(code as u16)
    }

    /// The total order behind [`Ord`]: strictness, then the `Errno` code.
    const fn rank(self) -> (u8, u16) {
        match self {
            Action::Errno(code) => (self.strictness(), code),
            _ => (self.strictness(), 0),
        }
    }

    fn validate(self) -> Result<(), PolicyError> {
        match self {
            Action::Errno(code) => match ErrorCode::from_raw(code as u64) {
                Some(ErrorCode::Ok) | None => Err(PolicyError::BadErrno),
                Some(_) => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

impl Ord for Action {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Action {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How a register, masked, is compared with a value. Comparisons are
/// unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArgOp {
    /// `x & mask == value`.
    Eq,
    /// `x & mask != value`.
    Ne,
    /// `x & mask < value`.
    Lt,
    /// `x & mask <= value`.
    Le,
    /// `x & mask > value`.
    Gt,
    /// `x & mask >= value`.
    Ge,
    /// `x & mask == value & mask`: the bits the mask selects equal those of
    /// `value`, whatever `value` holds elsewhere (libseccomp's
    /// `SCMP_CMP_MASKED_EQ`). `Eq` with a `value` outside the mask never
    /// matches; `MaskedEq` ignores those bits.
    MaskedEq,
}

/// One register comparison: `(x[register] & mask) op value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArgMatch {
    /// The register, 0..=7 for `x0..x7` (`x0` is the capability pointer,
    /// `x1` the message info, `x2..x7` the message registers).
    pub register: u8,
    /// Bits of the register compared; `u64::MAX` for all of them.
    pub mask: u64,
    /// The comparison.
    pub op: ArgOp,
    /// What the masked register is compared with.
    pub value: u64,
}

impl ArgMatch {
    /// `(args[register] & mask) op value`, unsigned. A register above
    /// `x7` never matches (a filter description with one is refused
    /// before it is used).
    #[inline]
    pub fn matches(&self, args: &[u64; 8]) -> bool {
        let Some(register) = args.get(self.register as usize) else {
            return false;
        };
        let field = register & self.mask;
        match self.op {
            ArgOp::Eq => field == self.value,
            ArgOp::Ne => field != self.value,
            ArgOp::Lt => field < self.value,
            ArgOp::Le => field <= self.value,
            ArgOp::Gt => field > self.value,
            ArgOp::Ge => field >= self.value,
            ArgOp::MaskedEq => field == self.value & self.mask,
        }
    }
}

/// One rule: every field that is set must match; then `action` applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// The syscall number (`x8`); `None` matches every syscall.
    pub syscall: Option<u64>,
    /// The type of the object the capability in `x0` names; `None`
    /// matches any (and syscalls that name no object).
    #[serde(with = "cap_type_option")]
    pub object_type: Option<CapType>,
    /// The message label (`MessageInfo::label` of `x1`).
    pub label: Option<u64>,
    /// The badge of the capability in `x0` (0 when unbadged).
    pub badge: Option<u64>,
    /// Register comparisons, all of which must hold.
    pub args: heapless::Vec<ArgMatch, MAX_ARGS_PER_RULE>,
    /// What happens when the rule matches.
    pub action: Action,
}

impl Rule {
    /// A rule that matches every syscall, with `action`.
    pub const fn new(action: Action) -> Rule {
        Rule {
            syscall: None,
            object_type: None,
            label: None,
            badge: None,
            args: heapless::Vec::new(),
            action,
        }
    }

    /// Adds a register comparison; `TooManyArgs` past [`MAX_ARGS_PER_RULE`].
    pub fn push_arg(&mut self, arg: ArgMatch) -> Result<(), PolicyError> {
        self.args.push(arg).map_err(|_| PolicyError::TooManyArgs)
    }

    /// Does the rule look at anything but the syscall number?
    pub fn is_conditional(&self) -> bool {
        self.object_type.is_some()
            || self.label.is_some()
            || self.badge.is_some()
            || !self.args.is_empty()
    }

    /// Could the rule match syscall `number`?
    pub fn applies_to(&self, number: u64) -> bool {
        self.syscall.is_none_or(|s| s == number)
    }

    /// Checks the fields serde cannot (see the module docs).
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self
            .syscall
            .is_some_and(|n| Syscall::from_number(n).is_none())
        {
            return Err(PolicyError::BadSyscall);
        }
        if self.label.is_some_and(|l| l >> LABEL_BITS != 0) {
            return Err(PolicyError::BadLabel);
        }
        if self.args.iter().any(|a| a.register > MAX_ARG_REGISTER) {
            return Err(PolicyError::BadRegister);
        }
        self.action.validate()
    }
}

/// A filter as user space describes it: rules in the order they are tried.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterDescription {
    /// The rules; the first that matches decides.
    pub rules: heapless::Vec<Rule, MAX_RULES>,
}

impl FilterDescription {
    /// No rules: allows everything.
    pub const fn new() -> FilterDescription {
        FilterDescription {
            rules: heapless::Vec::new(),
        }
    }

    /// Appends a rule; `TooManyRules` past [`MAX_RULES`].
    pub fn push(&mut self, rule: Rule) -> Result<(), PolicyError> {
        self.rules.push(rule).map_err(|_| PolicyError::TooManyRules)
    }

    /// Checks every rule (see the module docs).
    pub fn validate(&self) -> Result<(), PolicyError> {
        self.rules.iter().try_for_each(Rule::validate)
    }
}

/// Why a description was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyError {
    /// Not a description: truncated, an unknown tag or object type, a
    /// rule with more than [`MAX_ARGS_PER_RULE`] comparisons.
    Malformed,
    /// Bytes left over after the description.
    TrailingBytes,
    /// The encoding is longer than [`MAX_DESCRIPTION_BYTES`].
    TooLarge,
    /// More than [`MAX_RULES`] rules.
    TooManyRules,
    /// More than [`MAX_ARGS_PER_RULE`] comparisons in a rule.
    TooManyArgs,
    /// A comparison names a register above `x7`.
    BadRegister,
    /// An `Errno` code that is 0 or no [`ErrorCode`].
    BadErrno,
    /// A syscall number that names no [`Syscall`].
    BadSyscall,
    /// A label wider than the message info's 55 bits.
    BadLabel,
    /// The output buffer of [`encode`] is too small.
    BufferTooSmall,
}

impl PolicyError {
    /// What went wrong, for people (the `Display` text).
    pub const fn describe(self) -> &'static str {
        match self {
            PolicyError::Malformed => "malformed filter description",
            PolicyError::TrailingBytes => "bytes after the filter description",
            PolicyError::TooLarge => "filter description too large",
            PolicyError::TooManyRules => "too many rules",
            PolicyError::TooManyArgs => "too many argument comparisons in a rule",
            PolicyError::BadRegister => "argument register above x7",
            PolicyError::BadErrno => "errno code is 0 or undefined",
            PolicyError::BadSyscall => "no such syscall",
            PolicyError::BadLabel => "label wider than 55 bits",
            PolicyError::BufferTooSmall => "output buffer too small",
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Encodes a valid `description` into `buffer`; returns the bytes written.
pub fn encode<'b>(
    description: &FilterDescription,
    buffer: &'b mut [u8],
) -> Result<&'b [u8], PolicyError> {
    description.validate()?;
    let written = postcard::to_slice(description, buffer).map_err(|e| match e {
        postcard::Error::SerializeBufferFull => PolicyError::BufferTooSmall,
        _ => PolicyError::Malformed,
    })?;
    Ok(written)
}

/// Decodes and validates a description.
///
/// The result is about 10 KiB; a kernel with a small stack uses
/// [`decode_into`] instead.
pub fn decode(bytes: &[u8]) -> Result<FilterDescription, PolicyError> {
    let mut description = FilterDescription::new();
    decode_into(bytes, &mut description)?;
    Ok(description)
}

/// Decodes and validates a description into `out`, one rule at a time (the
/// stack holds one [`Rule`], never a whole description).
///
/// On error `out` is unchanged: a first pass checks everything and stores
/// nothing, the second stores. Both read the same bytes, so the second
/// cannot fail where the first succeeded.
pub fn decode_into(bytes: &[u8], out: &mut FilterDescription) -> Result<(), PolicyError> {
    if bytes.len() > MAX_DESCRIPTION_BYTES {
        return Err(PolicyError::TooLarge);
    }
    read_rules(bytes, None)?;
    out.rules.clear();
    read_rules(bytes, Some(&mut out.rules))
}

/// One pass over the encoded description: checks each rule and, if `sink`
/// is given, appends it there.
fn read_rules(
    bytes: &[u8],
    sink: Option<&mut heapless::Vec<Rule, MAX_RULES>>,
) -> Result<(), PolicyError> {
    let mut problem = None;
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    let seed = DescriptionSeed {
        sink,
        problem: &mut problem,
    };
    let read = seed.deserialize(&mut deserializer);
    if let Some(problem) = problem {
        return Err(problem);
    }
    read.map_err(|_| PolicyError::Malformed)?;
    match deserializer.finalize() {
        Ok([]) => Ok(()),
        Ok(_) => Err(PolicyError::TrailingBytes),
        Err(_) => Err(PolicyError::Malformed),
    }
}

/// Reads a [`FilterDescription`] (a struct whose one field is the rule
/// sequence) the way the derived `Deserialize` would, but rule by rule.
struct DescriptionSeed<'a> {
    sink: Option<&'a mut heapless::Vec<Rule, MAX_RULES>>,
    /// Why the pass failed, when it was a rule rather than the bytes.
    problem: &'a mut Option<PolicyError>,
}

impl<'de> DeserializeSeed<'de> for DescriptionSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_struct("FilterDescription", &["rules"], self)
    }
}

impl<'de> Visitor<'de> for DescriptionSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a filter description")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut fields: A) -> Result<(), A::Error> {
        let rules = RulesSeed {
            sink: self.sink,
            problem: self.problem,
        };
        match fields.next_element_seed(rules)? {
            Some(()) => Ok(()),
            None => Err(de::Error::invalid_length(
                0,
                &"a description with its rules",
            )),
        }
    }
}

/// Reads the rule sequence, checking each rule as it arrives.
struct RulesSeed<'a> {
    sink: Option<&'a mut heapless::Vec<Rule, MAX_RULES>>,
    problem: &'a mut Option<PolicyError>,
}

impl<'de> DeserializeSeed<'de> for RulesSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RulesSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of rules")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut rules: A) -> Result<(), A::Error> {
        let mut count = 0;
        while let Some(rule) = rules.next_element::<Rule>()? {
            count += 1;
            let checked = if count > MAX_RULES {
                Err(PolicyError::TooManyRules)
            } else {
                rule.validate()
            };
            if let Err(problem) = checked {
                *self.problem = Some(problem);
                return Err(de::Error::custom(problem));
            }
            if let Some(sink) = self.sink.as_deref_mut() {
                // Cannot fail: `count <= MAX_RULES` and the sink was cleared.
                sink.push(rule)
                    .map_err(|_| de::Error::custom("rule table full"))?;
            }
        }
        Ok(())
    }
}

/// `Option<CapType>` on the wire as `Option<u8>` (the type's ABI number):
/// `CapType` itself carries no serde derive.
mod cap_type_option {
    use crate::cap::CapType;
    use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<CapType>, s: S) -> Result<S::Ok, S::Error> {
        t.map(CapType::raw).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CapType>, D::Error> {
        match Option::<u8>::deserialize(d)? {
            None => Ok(None),
            Some(raw) => CapType::from_raw(raw.into())
                .map(Some)
                .ok_or_else(|| de::Error::custom("no such object type")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUFFER: usize = MAX_DESCRIPTION_BYTES;

    fn arg(register: u8, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
        ArgMatch {
            register,
            mask,
            op,
            value,
        }
    }

    fn sample() -> FilterDescription {
        let mut d = FilterDescription::new();
        let mut print = Rule::new(Action::errno(ErrorCode::Denied));
        print.syscall = Some(Syscall::DebugPrint.number());
        print.push_arg(arg(3, u64::MAX, ArgOp::Gt, 64)).unwrap();
        d.push(print).unwrap();
        let mut call = Rule::new(Action::Notify);
        call.syscall = Some(Syscall::Call.number());
        call.object_type = Some(CapType::Endpoint);
        call.label = Some(2);
        call.badge = Some(7);
        d.push(call).unwrap();
        d.push(Rule::new(Action::Log)).unwrap();
        d
    }

    /// The longest valid encoding: every field set to its widest valid
    /// value, `MAX_RULES` rules.
    fn largest() -> FilterDescription {
        let mut d = FilterDescription::new();
        for _ in 0..MAX_RULES {
            let mut r = Rule::new(Action::errno(ErrorCode::NoReplyTarget));
            r.syscall = Some(Syscall::Retype.number());
            r.object_type = Some(CapType::DebugConsole);
            r.label = Some((1 << LABEL_BITS) - 1);
            r.badge = Some(u64::MAX);
            for register in 4..=MAX_ARG_REGISTER {
                r.push_arg(arg(register, u64::MAX, ArgOp::MaskedEq, u64::MAX))
                    .unwrap();
            }
            d.push(r).unwrap();
        }
        d
    }

    /// Encodes without validating, to build bytes `encode` would refuse.
    fn raw_encode(d: &FilterDescription) -> heapless::Vec<u8, BUFFER> {
        let mut buffer = [0u8; BUFFER];
        let n = postcard::to_slice(d, &mut buffer).unwrap().len();
        heapless::Vec::from_slice(&buffer[..n]).unwrap()
    }

    fn first_undefined_code() -> u16 {
        (1..)
            .find(|&c| ErrorCode::from_raw(c as u64).is_none())
            .unwrap()
    }

    use crate::test_rng::Rng;

    #[test]
    fn strictness_order_is_kill_trap_errno_notify_log_allow() {
        let order = [
            Action::Allow,
            Action::Log,
            Action::Notify,
            Action::Errno(1),
            Action::Trap,
            Action::Kill,
        ];
        for (i, a) in order.iter().enumerate() {
            assert_eq!(a.strictness() as usize, i);
            for b in &order[i + 1..] {
                assert!(a < b, "{a:?} < {b:?}");
                assert_eq!((*a).max(*b), *b);
            }
        }
        assert!(Action::Errno(8) > Action::Errno(5), "larger code wins");
        assert!(Action::Errno(13) < Action::Trap);
        assert!(Action::Errno(13) > Action::Notify);
    }

    #[test]
    fn round_trip() {
        let mut buffer = [0u8; BUFFER];
        for d in [FilterDescription::new(), sample(), largest()] {
            let bytes = encode(&d, &mut buffer).unwrap();
            assert_eq!(decode(bytes), Ok(d.clone()));
            // The same bytes the derived serde impls read: one format.
            assert_eq!(postcard::from_bytes::<FilterDescription>(bytes), Ok(d));
        }
    }

    #[test]
    fn the_largest_valid_description_fits_the_limit() {
        let mut buffer = [0u8; 2 * BUFFER];
        let bytes = encode(&largest(), &mut buffer).unwrap();
        assert_eq!(bytes.len(), 1 + MAX_RULES * 115);
        assert!(bytes.len() <= MAX_DESCRIPTION_BYTES);
    }

    #[test]
    fn encode_refuses_what_decode_would() {
        let mut buffer = [0u8; BUFFER];
        type Spoil = fn(&mut Rule);
        let cases: [(Spoil, PolicyError); 5] = [
            (|r| r.args[0].register = 8, PolicyError::BadRegister),
            (|r| r.action = Action::Errno(0), PolicyError::BadErrno),
            (
                |r| r.action = Action::Errno(first_undefined_code()),
                PolicyError::BadErrno,
            ),
            (|r| r.syscall = Some(Syscall::END), PolicyError::BadSyscall),
            (|r| r.label = Some(1 << LABEL_BITS), PolicyError::BadLabel),
        ];
        for (spoil, error) in cases {
            let mut d = sample();
            spoil(&mut d.rules[0]);
            assert_eq!(encode(&d, &mut buffer), Err(error));
            assert_eq!(decode(&raw_encode(&d)), Err(error));
        }
        assert_eq!(
            encode(&sample(), &mut buffer[..8]),
            Err(PolicyError::BufferTooSmall)
        );
    }

    #[test]
    fn builders_stop_at_their_limits() {
        let mut d = FilterDescription::new();
        for _ in 0..MAX_RULES {
            d.push(Rule::new(Action::Allow)).unwrap();
        }
        assert_eq!(
            d.push(Rule::new(Action::Allow)),
            Err(PolicyError::TooManyRules)
        );
        let mut r = Rule::new(Action::Allow);
        for _ in 0..MAX_ARGS_PER_RULE {
            r.push_arg(arg(0, 1, ArgOp::Eq, 1)).unwrap();
        }
        assert_eq!(
            r.push_arg(arg(0, 1, ArgOp::Eq, 1)),
            Err(PolicyError::TooManyArgs)
        );
    }

    #[test]
    fn every_truncation_is_refused() {
        let mut buffer = [0u8; BUFFER];
        let bytes = encode(&largest(), &mut buffer).unwrap();
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "prefix of {len} bytes");
        }
        let bytes = encode(&sample(), &mut buffer).unwrap();
        for len in 0..bytes.len() {
            assert_eq!(decode(&bytes[..len]), Err(PolicyError::Malformed));
        }
    }

    #[test]
    fn rule_count_limit() {
        // An empty rule is six zero bytes: four `None`s, no args, `Allow`.
        let mut bytes = [0u8; 1 + 6 * (MAX_RULES + 1)];
        bytes[0] = MAX_RULES as u8;
        let fits = decode(&bytes[..1 + 6 * MAX_RULES]).unwrap();
        assert_eq!(fits.rules.len(), MAX_RULES);
        assert!(fits.rules.iter().all(|r| *r == Rule::new(Action::Allow)));
        bytes[0] = MAX_RULES as u8 + 1;
        assert_eq!(decode(&bytes), Err(PolicyError::TooManyRules));
        // A count claiming more rules than the bytes hold.
        assert_eq!(decode(&[0xff, 0xff, 0x03]), Err(PolicyError::Malformed));
    }

    #[test]
    fn malformed_fields_are_refused() {
        // One rule: syscall None, then the given object type, label None,
        // badge None, args, action.
        let rule = |object: &[u8], args: &[u8], action: &[u8]| {
            let mut v: heapless::Vec<u8, 256> = heapless::Vec::new();
            v.extend_from_slice(&[1, 0]).unwrap();
            v.extend_from_slice(object).unwrap();
            v.extend_from_slice(&[0, 0]).unwrap();
            v.extend_from_slice(args).unwrap();
            v.extend_from_slice(action).unwrap();
            v
        };
        let ok = rule(&[1, 4], &[1, 2, 0xff, 0x01, 0, 3], &[1, 8]);
        let d = decode(&ok).unwrap();
        assert_eq!(d.rules[0].object_type, Some(CapType::Endpoint));
        assert_eq!(d.rules[0].args[0], arg(2, 0xff, ArgOp::Eq, 3));
        assert_eq!(d.rules[0].action, Action::Errno(8));
        let bad = [
            rule(&[1, 13], &[0], &[0]),         // no such object type
            rule(&[2], &[0], &[0]),             // Option tag 2
            rule(&[0], &[0], &[6]),             // no such action
            rule(&[0], &[1, 0, 1, 7, 0], &[0]), // no such op
            rule(
                &[0],
                &[
                    5, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0,
                ],
                &[0],
            ), // five comparisons
            rule(&[0], &[0], &[1, 0x80, 0x80, 0x80, 0x80, 0x80]), // varint overflow
        ];
        for bytes in bad {
            assert_eq!(decode(&bytes), Err(PolicyError::Malformed), "{bytes:?}");
        }
        let mut trailing = ok.clone();
        trailing.push(0).unwrap();
        assert_eq!(decode(&trailing), Err(PolicyError::TrailingBytes));
        assert_eq!(
            decode(&[0u8; MAX_DESCRIPTION_BYTES + 1]),
            Err(PolicyError::TooLarge)
        );
    }

    #[test]
    fn random_bytes_never_panic_and_never_yield_an_invalid_filter() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut accepted = 0;
        for _ in 0..20_000 {
            let len = (rng.next() % 64) as usize;
            let mut bytes = [0u8; 64];
            for b in &mut bytes[..len] {
                // Small values make valid tags likely, so decoding gets deep.
                *b = match rng.next() % 4 {
                    0 => rng.next() as u8,
                    _ => (rng.next() % 3) as u8,
                };
            }
            if let Ok(d) = decode(&bytes[..len]) {
                accepted += 1;
                assert_eq!(d.validate(), Ok(()));
            }
        }
        assert!(accepted > 0, "the generator reaches valid descriptions");
    }

    #[test]
    fn a_failed_decode_leaves_the_target_as_it_was() {
        let mut buffer = [0u8; BUFFER];
        let mut target = sample();
        let mut spoiled = sample();
        spoiled.rules[2].action = Action::Errno(0);
        assert_eq!(
            decode_into(&raw_encode(&spoiled), &mut target),
            Err(PolicyError::BadErrno)
        );
        assert_eq!(target, sample());
        let bytes = encode(&largest(), &mut buffer).unwrap();
        assert!(decode_into(&bytes[..bytes.len() - 1], &mut target).is_err());
        assert_eq!(target, sample());
        decode_into(
            encode(&FilterDescription::new(), &mut buffer).unwrap(),
            &mut target,
        )
        .unwrap();
        assert_eq!(target, FilterDescription::new());
    }
}
