//! Policy filter descriptions: the decoder user space feeds, and the
//! verdicts the kernel computes from what it decoded.

use super::bytes::Bytes;
use abi::cap::CapType;
use abi::policy::{self, Action, FilterDescription, Rule, MAX_DESCRIPTION_BYTES, MAX_JUDGED_BYTES};
use microkernel::filter::{
    evaluate, Filter, JudgedView, SyscallFacts, VerdictCache, SYSCALL_COUNT,
};

/// Decodes `data` as an encoded filter description.
///
/// Checks: decoding never panics; what it accepts is valid, re-encodes
/// (into `MAX_DESCRIPTION_BYTES`, which every valid description fits) and
/// decodes back to the same description; the re-encoding is a fixed point
/// (encoding the decoded re-encoding gives the same bytes); `decode_into`
/// agrees with `decode` and leaves its target untouched on error; a
/// kernel `Filter` loaded from the bytes holds the same rules and default
/// (and a refused load leaves the empty filter: no rules, `Allow`).
pub fn policy_description(data: &[u8]) {
    let decoded = policy::decode(data);
    check_decode_into_agrees(data, &decoded);
    let mut filter = Filter::new();
    let loaded = filter.load(data);
    assert_eq!(loaded, decoded.as_ref().map(|_| ()).map_err(|e| *e));
    let Ok(description) = decoded else {
        assert!(
            filter.rules().is_empty() && filter.default() == Action::Allow,
            "a refused load left rules or a default behind"
        );
        return;
    };
    assert_eq!(filter.rules(), &description.rules[..]);
    assert_eq!(filter.default(), description.default);
    assert_eq!(filter.asks_a_server(), description.asks_a_server());
    assert_eq!(
        description.validate(),
        Ok(()),
        "decode accepted an invalid rule"
    );

    let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
    let encoded = match policy::encode(&description, &mut buffer) {
        Ok(bytes) => bytes,
        Err(e) => panic!("a decoded description does not encode: {e:?}"),
    };
    let again = policy::decode(encoded);
    assert_eq!(again.as_ref(), Ok(&description), "encode/decode changed it");
    let mut second = [0u8; MAX_DESCRIPTION_BYTES];
    if let Ok(again) = again {
        let re_encoded = policy::encode(&again, &mut second).map(|b| b.to_vec());
        assert_eq!(
            re_encoded.as_deref(),
            Ok(encoded),
            "encoding is not canonical"
        );
    }
}

/// `decode_into` on a target holding a known description must end with
/// the same result as `decode`, or with the target unchanged.
fn check_decode_into_agrees(data: &[u8], decoded: &Result<FilterDescription, policy::PolicyError>) {
    let before = sentinel();
    let mut target = before.clone();
    match (policy::decode_into(data, &mut target), decoded) {
        (Ok(()), Ok(d)) => assert_eq!(&target, d),
        (Err(a), Err(b)) => {
            assert_eq!(a, *b);
            assert_eq!(target, before, "a failed decode_into changed its target");
        }
        (a, b) => panic!("decode_into {a:?} but decode {b:?}"),
    }
}

/// A one-rule description to see whether a failed decode touched it.
fn sentinel() -> FilterDescription {
    let mut d = FilterDescription::new(Action::Trap);
    let mut rule = Rule::new(Action::Kill);
    rule.syscall = Some(abi::Syscall::Yield.number());
    // Cannot fail: one rule, far below `MAX_RULES`.
    let _ = d.push(rule);
    d
}

/// Most filters stacked on one thread in this target.
const MAX_STACK: usize = 3;

/// Loads a small filter stack from `data` and evaluates syscalls against
/// it.
///
/// Input: one byte (stack depth 1..=3), then per filter a little-endian
/// `u16` length and that many bytes of encoded description (a description
/// the decoder refuses leaves an empty filter), then syscall facts until
/// the input ends (see `next_facts`).
///
/// Checks, for every syscall: the verdict cache gives what a full
/// evaluation gives; a cached verdict holds whatever the registers, label,
/// object type, badge, PC and memory; a syscall the cache marks "no entry
/// work" is allowed; a syscall the cache says needs no capability lookup
/// gets the same verdict with and without one, and one it says needs no
/// memory copied the same with and without its memory (numbers that name
/// no syscall are exempt: see `check_verdict`); the stack's verdict is the
/// strictest of its filters'.
pub fn policy_verdict(data: &[u8]) {
    let mut input = Bytes::new(data);
    let depth = 1 + usize::from(input.u8()) % MAX_STACK;
    let mut stack: [Filter; MAX_STACK] = [Filter::new(), Filter::new(), Filter::new()];
    for filter in stack.iter_mut().take(depth) {
        let len = usize::from(u16::from_le_bytes([input.u8(), input.u8()]));
        if filter.load(input.take(len)).is_err() {
            *filter = Filter::new();
        }
    }
    let filters: [&Filter; MAX_STACK] = [&stack[0], &stack[1], &stack[2]];
    let filters = &filters[..depth];
    let cache = VerdictCache::new(filters);
    while !input.is_empty() {
        let facts = next_facts(&mut input);
        check_verdict(&cache, filters, &facts);
    }
}

/// One syscall's facts: a number byte (mostly a syscall, sometimes past
/// the last), the eight argument registers, an object-type byte (11 and
/// above: no capability) and a badge, the PC, then the memory it carries:
/// a kind byte (modulo 3: none, a buffer, a message's words), and for a
/// buffer or message its length and how many of its bytes were judged
/// (two bytes each, little endian; at most the length and
/// `MAX_JUDGED_BYTES`), then those bytes.
fn next_facts<'a>(input: &mut Bytes<'a>) -> SyscallFacts<'a> {
    let number = u64::from(input.u8()) % (SYSCALL_COUNT as u64 + 2);
    let mut args = [0u64; 8];
    for arg in &mut args {
        *arg = input.u64();
    }
    let facts = SyscallFacts::from_registers(number, args);
    let object_type = CapType::from_raw(input.u8().into());
    let badge = input.u64();
    let facts = match object_type {
        Some(t) => facts.with_capability(t, badge),
        None => facts,
    }
    .with_pc(input.u64());
    let kind = input.u8() % 3;
    if kind == 0 {
        return facts;
    }
    let length = usize::from(u16::from_le_bytes([input.u8(), input.u8()]));
    let judged = usize::from(u16::from_le_bytes([input.u8(), input.u8()]));
    facts.with_memory(JudgedView {
        bytes: Some(input.take(judged.min(length).min(MAX_JUDGED_BYTES))),
        length,
        message: kind == 2,
    })
}

fn check_verdict(cache: &VerdictCache, filters: &[&Filter], facts: &SyscallFacts) {
    let full = evaluate(filters, facts);
    assert_eq!(
        cache.verdict(filters, facts),
        full,
        "cache disagrees: {facts:?}"
    );
    if let Some(cached) = cache.cached_verdict(facts.number) {
        assert_eq!(cached, full, "a cached verdict does not hold: {facts:?}");
    }
    if facts.number < 64 && cache.no_entry_work_mask() & (1 << facts.number) != 0 {
        assert_eq!(full, Action::Allow, "no-entry-work syscall not allowed");
    }
    // Only for syscalls: for a number no syscall has, `needs_capability`
    // is false and rules on the object type or badge cannot match without
    // the lookup, which is moot (dispatch refuses the number).
    let is_syscall = abi::Syscall::from_number(facts.number).is_some();
    if is_syscall
        && !cache.needs_capability(facts.number)
        && cache.cached_verdict(facts.number).is_none()
    {
        let without = SyscallFacts {
            object_type: None,
            badge: None,
            ..*facts
        };
        assert_eq!(
            evaluate(filters, &without),
            full,
            "the verdict depends on a capability the cache would not look up: {facts:?}"
        );
    }
    if is_syscall && !cache.needs_memory(facts.number) {
        let without = facts.with_memory(JudgedView::default());
        assert_eq!(
            evaluate(filters, &without),
            full,
            "the verdict depends on memory the kernel would not copy: {facts:?}"
        );
    }
    let strictest = filters
        .iter()
        .map(|f| f.verdict(facts))
        .max()
        .unwrap_or(Action::Allow);
    assert_eq!(full, strictest, "the stack is not its strictest filter");
}
