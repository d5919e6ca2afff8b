//! Seccomp-like policy filters: the rule model and its wire format.
//!
//! User space describes a filter as a [`FilterDescription`], a list of
//! [`Rule`]s, and hands it to the kernel [`encode`]d with postcard; the
//! kernel [`decode`]s it into a Filter object. Both sides share these types,
//! so what the SDK's rule builder writes is exactly what the kernel reads.
//! `docs/policy.md` describes the model; the short version:
//!
//! * A rule matches on the syscall number, the invoked object's type, the
//!   message label (`x1`), the capability's badge, up to
//!   [`MAX_ARGS_PER_RULE`] comparisons of registers, message words and the
//!   caller's PC ([`Operand`]), and one match on the bytes the call carries
//!   in memory ([`BytesMatch`]); a field left `None` (or no comparison at
//!   all) matches anything.
//! * Memory (message words past the registers, a buffer argument's bytes)
//!   is judged from the kernel's copy of it, taken once before the check
//!   and used by the call that runs ([`MAX_JUDGED_BYTES`] of it;
//!   `docs/policy.md`, "Judging memory").
//! * Within one filter the **first** matching rule decides; a syscall that
//!   no rule matches gets the filter's explicit
//!   [`FilterDescription::default`] action.
//! * Across stacked filters the **strictest** verdict wins (the order of
//!   [`Action`]).
//!
//! # Validation
//!
//! [`encode`] and [`decode`] accept only a valid description: at most
//! [`MAX_RULES`] rules, each with at most [`MAX_ARGS_PER_RULE`] comparisons
//! on registers `x0..=x7`, message words below [`MAX_MESSAGE_WORDS`] or the
//! PC, a syscall number that names a [`Syscall`], a label that fits the
//! message info's 55 bits, a non-empty byte pattern, and `Errno` codes
//! (the rules' and the default's) that are defined, non-zero
//! [`ErrorCode`]s. Decoding also refuses input longer
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

/// Most comparisons one rule makes (all must hold): libseccomp's limit.
pub const MAX_ARGS_PER_RULE: usize = 6;

/// Longest byte pattern of a [`BytesMatch`].
pub const MAX_PATTERN_BYTES: usize = 64;

/// Most bytes of memory the kernel copies to judge one call, and what a
/// `Notify` request carries: a whole IPC message's buffer words (58 words,
/// 464 bytes), a whole `DebugPrint` text (256), the first 512 bytes of a
/// `FilterLoad` description. A rule sees nothing past them.
pub const MAX_JUDGED_BYTES: usize = 512;

/// Longest message, in words (registers and IPC buffer together).
pub const MAX_MESSAGE_WORDS: u8 = 64;

/// Largest encoded description the kernel accepts, in bytes. Every valid
/// description fits: a valid rule encodes to at most 235 bytes (every field
/// set to its widest valid value), so [`MAX_RULES`] of them and the default
/// need at most 15 043.
pub const MAX_DESCRIPTION_BYTES: usize = 16384;

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

/// What a comparison reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// A register, 0..=7 for `x0..x7` (`x0` is the capability pointer,
    /// `x1` the message info, `x2..x7` the message registers).
    Register(u8),
    /// Message word `n` (below [`MAX_MESSAGE_WORDS`]): words 0..=5 are
    /// `x2..x7`; word 6 and up are the IPC buffer's, as the kernel copied
    /// them to judge the call. A buffer word holds only for a call that
    /// sends a message at least that long; for any other call the
    /// comparison does not hold.
    Word(u8),
    /// The caller's PC: the address of the instruction after its `svc`
    /// (seccomp's `instruction_pointer`).
    Pc,
}

impl Operand {
    /// Is it one a rule may name (a register up to `x7`, a word below
    /// [`MAX_MESSAGE_WORDS`])?
    pub const fn is_valid(self) -> bool {
        match self {
            Operand::Register(r) => r <= MAX_ARG_REGISTER,
            Operand::Word(w) => w < MAX_MESSAGE_WORDS,
            Operand::Pc => true,
        }
    }

    /// Does it read memory (a message word in the IPC buffer)?
    pub const fn reads_memory(self) -> bool {
        matches!(self, Operand::Word(w) if w as usize >= crate::REGISTER_MESSAGE_WORDS)
    }
}

/// One comparison: `(operand & mask) op value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArgMatch {
    /// What is compared.
    pub operand: Operand,
    /// Bits of the operand compared; `u64::MAX` for all of them.
    pub mask: u64,
    /// The comparison.
    pub op: ArgOp,
    /// What the masked operand is compared with.
    pub value: u64,
}

impl ArgMatch {
    /// A comparison of register `x[register]`.
    pub const fn register(register: u8, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
        ArgMatch {
            operand: Operand::Register(register),
            mask,
            op,
            value,
        }
    }

    /// `(operand & mask) op value`, unsigned, for the operand's value
    /// (`None`, an operand the call does not have: never holds).
    #[inline]
    pub fn holds(&self, operand: Option<u64>) -> bool {
        let Some(operand) = operand else {
            return false;
        };
        let field = operand & self.mask;
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

    /// `holds` for a comparison of a register (`args` is `x0..x7`); any
    /// other operand does not hold here.
    #[inline]
    pub fn matches(&self, args: &[u64; 8]) -> bool {
        match self.operand {
            Operand::Register(r) => self.holds(args.get(r as usize).copied()),
            _ => false,
        }
    }
}

/// How a byte pattern is matched against the bytes a call carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BytesOp {
    /// The bytes are exactly the pattern (same length).
    Equal,
    /// The bytes start with the pattern.
    Prefix,
    /// The pattern occurs in the bytes (within the first `within` of them,
    /// if `within` is not 0).
    Contains,
}

/// A match on the bytes a call carries in memory, as the kernel copied
/// them to judge it: `DebugPrint`'s text, `FilterLoad`'s description (its
/// first [`MAX_JUDGED_BYTES`]), an IPC message's buffer words (word 6 on,
/// little-endian). A call that carries none does not match.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BytesMatch {
    /// How the pattern is matched.
    pub op: BytesOp,
    /// The pattern: 1 to [`MAX_PATTERN_BYTES`] bytes.
    pub pattern: heapless::Vec<u8, MAX_PATTERN_BYTES>,
    /// Look only at the first `within` bytes (0: at all that were judged).
    pub within: u16,
}

impl BytesMatch {
    /// A match of `pattern` (1 to [`MAX_PATTERN_BYTES`] bytes) by `op`,
    /// looking at the first `within` bytes (0: at all that were judged).
    pub fn new(op: BytesOp, pattern: &[u8], within: u16) -> Result<BytesMatch, PolicyError> {
        if pattern.is_empty() {
            return Err(PolicyError::EmptyPattern);
        }
        let pattern =
            heapless::Vec::from_slice(pattern).map_err(|_| PolicyError::PatternTooLong)?;
        Ok(BytesMatch {
            op,
            pattern,
            within,
        })
    }

    /// Does it hold for `bytes`, the judged copy, of a buffer `length`
    /// bytes long (`length` may exceed what was judged: then `Equal`
    /// cannot hold, and the other ops see the judged bytes only)? `None`:
    /// the call carries no bytes.
    pub fn holds(&self, bytes: Option<&[u8]>, length: usize) -> bool {
        let Some(bytes) = bytes else {
            return false;
        };
        let bytes = match self.within {
            0 => bytes,
            within => &bytes[..bytes.len().min(usize::from(within))],
        };
        let pattern = &self.pattern[..];
        match self.op {
            BytesOp::Equal => length == pattern.len() && same_bytes(bytes, pattern),
            BytesOp::Prefix => bytes
                .get(..pattern.len())
                .is_some_and(|start| same_bytes(start, pattern)),
            BytesOp::Contains => {
                !pattern.is_empty() && bytes.windows(pattern.len()).any(|w| w == pattern)
            }
        }
    }
}

/// `a == b`, eight bytes at a time: the kernel's `memcmp` compares byte
/// by byte (some six instructions a byte), and a rule on a message
/// compares whole words.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    let tails_match = a_words.remainder() == b_words.remainder();
    tails_match
        && a_words.zip(b_words).all(|(x, y)| {
            let word =
                |c: &[u8]| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            word(x) == word(y)
        })
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
    /// Comparisons, all of which must hold.
    pub args: heapless::Vec<ArgMatch, MAX_ARGS_PER_RULE>,
    /// A match on the bytes the call carries.
    pub bytes: Option<BytesMatch>,
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
            bytes: None,
            action,
        }
    }

    /// Adds a comparison; `TooManyArgs` past [`MAX_ARGS_PER_RULE`].
    pub fn push_arg(&mut self, arg: ArgMatch) -> Result<(), PolicyError> {
        self.args.push(arg).map_err(|_| PolicyError::TooManyArgs)
    }

    /// Does the rule look at anything but the syscall number?
    pub fn is_conditional(&self) -> bool {
        self.object_type.is_some()
            || self.label.is_some()
            || self.badge.is_some()
            || !self.args.is_empty()
            || self.bytes.is_some()
    }

    /// Does the rule look at memory (a message word in the IPC buffer, or
    /// the bytes a call carries)? The kernel copies that memory before
    /// judging a call such a rule could decide.
    pub fn reads_memory(&self) -> bool {
        self.bytes.is_some() || self.args.iter().any(|a| a.operand.reads_memory())
    }

    /// Does the rule look at the caller's PC ([`Operand::Pc`])?
    pub fn reads_pc(&self) -> bool {
        self.args.iter().any(|a| a.operand == Operand::Pc)
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
        if self.args.iter().any(|a| !a.operand.is_valid()) {
            return Err(PolicyError::BadRegister);
        }
        if self.bytes.as_ref().is_some_and(|b| b.pattern.is_empty()) {
            return Err(PolicyError::EmptyPattern);
        }
        self.action.validate()
    }
}

/// A filter as user space describes it: rules in the order they are
/// tried, and what a syscall no rule matches gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterDescription {
    /// The rules; the first that matches decides.
    pub rules: heapless::Vec<Rule, MAX_RULES>,
    /// The action for a syscall no rule matches: always given, never
    /// implied (a deny-by-default filter says so here).
    pub default: Action,
}

impl FilterDescription {
    /// No rules; a syscall gets `default`.
    pub const fn new(default: Action) -> FilterDescription {
        FilterDescription {
            rules: heapless::Vec::new(),
            default,
        }
    }

    /// Does any of its verdicts ask a policy server (a `Notify` rule or
    /// default)? Such a filter is attached only with a server.
    pub fn asks_a_server(&self) -> bool {
        self.default == Action::Notify || self.rules.iter().any(|r| r.action == Action::Notify)
    }

    /// Appends a rule; `TooManyRules` past [`MAX_RULES`].
    pub fn push(&mut self, rule: Rule) -> Result<(), PolicyError> {
        self.rules.push(rule).map_err(|_| PolicyError::TooManyRules)
    }

    /// Checks every rule and the default (see the module docs).
    pub fn validate(&self) -> Result<(), PolicyError> {
        self.rules.iter().try_for_each(Rule::validate)?;
        self.default.validate()
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
    /// A comparison names a register above `x7` or a message word past
    /// [`MAX_MESSAGE_WORDS`].
    BadRegister,
    /// A byte match with an empty pattern.
    EmptyPattern,
    /// A byte pattern longer than [`MAX_PATTERN_BYTES`] (builders only:
    /// the wire format cannot hold one).
    PatternTooLong,
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
            PolicyError::BadRegister => "argument register above x7 or message word past 63",
            PolicyError::EmptyPattern => "empty byte pattern",
            PolicyError::PatternTooLong => "byte pattern longer than 64 bytes",
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

/// Encodes a valid description given as its parts, `rules` (at most
/// [`MAX_RULES`]) and `default`, into `buffer`: the bytes [`encode`]
/// writes for the `FilterDescription` holding them, without building
/// one (a whole description is some 18 KiB; a builder that holds a few
/// rules need not be).
pub fn encode_rules<'b>(
    rules: &[Rule],
    default: Action,
    buffer: &'b mut [u8],
) -> Result<&'b [u8], PolicyError> {
    if rules.len() > MAX_RULES {
        return Err(PolicyError::TooManyRules);
    }
    rules.iter().try_for_each(Rule::validate)?;
    default.validate()?;
    // A struct is its fields in order, a slice its length then its items:
    // the bytes of a `FilterDescription`.
    #[derive(Serialize)]
    struct Parts<'a> {
        rules: &'a [Rule],
        default: Action,
    }
    let written = postcard::to_slice(&Parts { rules, default }, buffer).map_err(|e| match e {
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
    let mut description = FilterDescription::new(Action::Allow);
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
    out.default = read_rules(bytes, Some(&mut out.rules))?;
    Ok(())
}

/// One pass over the encoded description: checks each rule and, if `sink`
/// is given, appends it there; returns the default action.
fn read_rules(
    bytes: &[u8],
    sink: Option<&mut heapless::Vec<Rule, MAX_RULES>>,
) -> Result<Action, PolicyError> {
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
    let default = read.map_err(|_| PolicyError::Malformed)?;
    default.validate()?;
    match deserializer.finalize() {
        Ok([]) => Ok(default),
        Ok(_) => Err(PolicyError::TrailingBytes),
        Err(_) => Err(PolicyError::Malformed),
    }
}

/// Reads a [`FilterDescription`] (a struct: the rule sequence, then the
/// default action) the way the derived `Deserialize` would, but rule by
/// rule.
struct DescriptionSeed<'a> {
    sink: Option<&'a mut heapless::Vec<Rule, MAX_RULES>>,
    /// Why the pass failed, when it was a rule rather than the bytes.
    problem: &'a mut Option<PolicyError>,
}

impl<'de> DeserializeSeed<'de> for DescriptionSeed<'_> {
    type Value = Action;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Action, D::Error> {
        deserializer.deserialize_struct("FilterDescription", &["rules", "default"], self)
    }
}

impl<'de> Visitor<'de> for DescriptionSeed<'_> {
    type Value = Action;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a filter description")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut fields: A) -> Result<Action, A::Error> {
        let rules = RulesSeed {
            sink: self.sink,
            problem: self.problem,
        };
        if fields.next_element_seed(rules)?.is_none() {
            return Err(de::Error::invalid_length(
                0,
                &"a description with its rules",
            ));
        }
        match fields.next_element::<Action>()? {
            Some(default) => Ok(default),
            None => Err(de::Error::invalid_length(
                1,
                &"a description with its default action",
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
        ArgMatch::register(register, mask, op, value)
    }

    fn sample() -> FilterDescription {
        let mut d = FilterDescription::new(Action::Allow);
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
        let mut secret = Rule::new(Action::Kill);
        secret
            .push_arg(ArgMatch {
                operand: Operand::Word(9),
                mask: 0xff,
                op: ArgOp::Eq,
                value: 1,
            })
            .unwrap();
        secret
            .push_arg(ArgMatch {
                operand: Operand::Pc,
                mask: u64::MAX,
                op: ArgOp::Lt,
                value: 0x40_0000,
            })
            .unwrap();
        secret.bytes = Some(BytesMatch {
            op: BytesOp::Contains,
            pattern: heapless::Vec::from_slice(b"secret").unwrap(),
            within: 32,
        });
        d.push(secret).unwrap();
        d.push(Rule::new(Action::Log)).unwrap();
        d
    }

    /// The longest valid encoding: every field set to its widest valid
    /// value, `MAX_RULES` rules.
    fn largest() -> FilterDescription {
        let mut d = FilterDescription::new(Action::errno(ErrorCode::NoReplyTarget));
        for _ in 0..MAX_RULES {
            let mut r = Rule::new(Action::errno(ErrorCode::NoReplyTarget));
            r.syscall = Some(Syscall::Retype.number());
            r.object_type = Some(CapType::DebugConsole);
            r.label = Some((1 << LABEL_BITS) - 1);
            r.badge = Some(u64::MAX);
            for _ in 0..MAX_ARGS_PER_RULE {
                r.push_arg(ArgMatch {
                    operand: Operand::Word(MAX_MESSAGE_WORDS - 1),
                    mask: u64::MAX,
                    op: ArgOp::MaskedEq,
                    value: u64::MAX,
                })
                .unwrap();
            }
            r.bytes = Some(BytesMatch {
                op: BytesOp::Contains,
                pattern: heapless::Vec::from_slice(&[0xff; MAX_PATTERN_BYTES]).unwrap(),
                within: u16::MAX,
            });
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
        for d in [FilterDescription::new(Action::Kill), sample(), largest()] {
            let bytes = encode(&d, &mut buffer).unwrap();
            assert_eq!(decode(bytes), Ok(d.clone()));
            // The same bytes the derived serde impls read: one format.
            assert_eq!(postcard::from_bytes::<FilterDescription>(bytes), Ok(d));
        }
    }

    #[test]
    fn encoding_the_parts_writes_the_descriptions_bytes() {
        let mut whole = [0u8; BUFFER];
        let mut parts = [0u8; BUFFER];
        for d in [FilterDescription::new(Action::Kill), sample(), largest()] {
            assert_eq!(
                encode_rules(&d.rules, d.default, &mut parts),
                encode(&d, &mut whole)
            );
        }
        let mut d = sample();
        d.default = Action::Errno(0);
        assert_eq!(
            encode_rules(&d.rules, d.default, &mut parts),
            Err(PolicyError::BadErrno)
        );
        let too_many = [const { Rule::new(Action::Allow) }; MAX_RULES + 1];
        assert_eq!(
            encode_rules(&too_many, Action::Allow, &mut parts),
            Err(PolicyError::TooManyRules)
        );
    }

    #[test]
    fn the_largest_valid_description_fits_the_limit() {
        let mut buffer = [0u8; 2 * BUFFER];
        let bytes = encode(&largest(), &mut buffer).unwrap();
        // The rule count, 64 rules of 235 bytes, the default (`Errno`: a
        // tag and a one-byte code).
        assert_eq!(bytes.len(), 1 + MAX_RULES * 235 + 2);
        assert!(bytes.len() <= MAX_DESCRIPTION_BYTES);
    }

    #[test]
    fn encode_refuses_what_decode_would() {
        let mut buffer = [0u8; BUFFER];
        type Spoil = fn(&mut Rule);
        let cases: [(Spoil, PolicyError); 7] = [
            (
                |r| r.args[0].operand = Operand::Register(8),
                PolicyError::BadRegister,
            ),
            (
                |r| r.args[0].operand = Operand::Word(MAX_MESSAGE_WORDS),
                PolicyError::BadRegister,
            ),
            (
                |r| {
                    r.bytes = Some(BytesMatch {
                        op: BytesOp::Prefix,
                        pattern: heapless::Vec::new(),
                        within: 0,
                    })
                },
                PolicyError::EmptyPattern,
            ),
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
        let mut d = sample();
        d.default = Action::Errno(0);
        assert_eq!(encode(&d, &mut buffer), Err(PolicyError::BadErrno));
        assert_eq!(decode(&raw_encode(&d)), Err(PolicyError::BadErrno));
        assert_eq!(
            encode(&sample(), &mut buffer[..8]),
            Err(PolicyError::BufferTooSmall)
        );
    }

    #[test]
    fn builders_stop_at_their_limits() {
        let mut d = FilterDescription::new(Action::Allow);
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
        // An empty rule is seven zero bytes: four `None`s, no args, no
        // bytes match, `Allow`; the default `Allow` one more.
        let mut bytes = [0u8; 1 + 7 * (MAX_RULES + 1) + 1];
        bytes[0] = MAX_RULES as u8;
        let fits = decode(&bytes[..1 + 7 * MAX_RULES + 1]).unwrap();
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
        // badge None, args, bytes match, action; then the default `Allow`.
        let rule = |object: &[u8], args: &[u8], bytes: &[u8], action: &[u8]| {
            let mut v: heapless::Vec<u8, 256> = heapless::Vec::new();
            v.extend_from_slice(&[1, 0]).unwrap();
            v.extend_from_slice(object).unwrap();
            v.extend_from_slice(&[0, 0]).unwrap();
            v.extend_from_slice(args).unwrap();
            v.extend_from_slice(bytes).unwrap();
            v.extend_from_slice(action).unwrap();
            v.push(0).unwrap();
            v
        };
        let ok = rule(
            &[1, 4],
            &[2, 0, 2, 0xff, 0x01, 0, 3, 1, 5, 0, 0, 0],
            &[1, 1, 2, b'o', b'k', 3],
            &[1, 8],
        );
        let d = decode(&ok).unwrap();
        assert_eq!(d.rules[0].object_type, Some(CapType::Endpoint));
        assert_eq!(d.rules[0].args[0], arg(2, 0xff, ArgOp::Eq, 3));
        assert_eq!(d.rules[0].args[1].operand, Operand::Word(5));
        let pattern = d.rules[0].bytes.as_ref().unwrap();
        assert_eq!(
            (pattern.op, &pattern.pattern[..], pattern.within),
            (BytesOp::Prefix, &b"ok"[..], 3)
        );
        assert_eq!(d.rules[0].action, Action::Errno(8));
        assert_eq!(d.default, Action::Allow);
        let seven = [
            7, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
            0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0,
        ];
        let bad = [
            rule(&[1, 14], &[0], &[0], &[0]),            // no such object type
            rule(&[2], &[0], &[0], &[0]),                // Option tag 2
            rule(&[0], &[0], &[0], &[6]),                // no such action
            rule(&[0], &[1, 0, 0, 1, 7, 0], &[0], &[0]), // no such op
            rule(&[0], &[1, 3, 0, 1, 0, 0], &[0], &[0]), // no such operand
            rule(&[0], &[0], &[1, 3, 1, 1, 0], &[0]),    // no such bytes op
            rule(&[0], &[0], &[1, 0, 65], &[0]),         // a pattern over 64 bytes
            rule(&[0], &seven, &[0], &[0]),              // seven comparisons
            rule(&[0], &[0], &[0], &[1, 0x80, 0x80, 0x80, 0x80, 0x80]), // varint overflow
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
            encode(&FilterDescription::new(Action::Allow), &mut buffer).unwrap(),
            &mut target,
        )
        .unwrap();
        assert_eq!(target, FilterDescription::new(Action::Allow));
    }
}
