//! Host tests of the policy engine: rule matching, first match, stacking,
//! the verdict cache and its fast-path mask.

use super::*;
use abi::cap::CapType;
use abi::policy::{
    encode, Action, ArgMatch, ArgOp, BytesMatch, BytesOp, FilterDescription, Operand, PolicyError,
    Rule, MAX_DESCRIPTION_BYTES,
};
use abi::{ErrorCode, MessageInfo, Syscall};
use proptest::prelude::*;

pub(super) fn rule(syscall: Option<Syscall>, action: Action) -> Rule {
    Rule {
        syscall: syscall.map(Syscall::number),
        ..Rule::new(action)
    }
}

pub(super) fn with_arg(mut rule: Rule, register: u8, mask: u64, op: ArgOp, value: u64) -> Rule {
    let arg = ArgMatch::register(register, mask, op, value);
    rule.push_arg(arg).unwrap();
    rule
}

pub(super) fn filter(rules: &[Rule]) -> Filter {
    filter_with_default(rules, Action::Allow)
}

pub(super) fn filter_with_default(rules: &[Rule], default: Action) -> Filter {
    let mut d = FilterDescription::new(default);
    for r in rules {
        d.push(r.clone()).unwrap();
    }
    Filter::from_description(d).unwrap()
}

fn facts(syscall: Syscall, args: [u64; 8]) -> SyscallFacts<'static> {
    SyscallFacts::from_registers(syscall.number(), args)
}

pub(super) const DENIED: Action = Action::errno(ErrorCode::Denied);

#[test]
fn no_rule_matching_allows() {
    let f = filter(&[rule(Some(Syscall::Yield), Action::Kill)]);
    assert_eq!(f.verdict(&facts(Syscall::Null, [0; 8])), Action::Allow);
    assert_eq!(
        Filter::new().verdict(&facts(Syscall::Null, [0; 8])),
        Action::Allow
    );
    assert_eq!(evaluate(&[], &facts(Syscall::Null, [0; 8])), Action::Allow);
}

#[test]
fn the_first_matching_rule_decides_even_if_a_later_one_is_stricter() {
    let f = filter(&[
        with_arg(
            rule(Some(Syscall::DebugPrint), Action::Allow),
            3,
            u64::MAX,
            ArgOp::Lt,
            16,
        ),
        rule(Some(Syscall::DebugPrint), DENIED),
        rule(None, Action::Kill),
    ]);
    let print = |len| facts(Syscall::DebugPrint, [1, 0, 0x1000, len, 0, 0, 0, 0]);
    assert_eq!(f.verdict(&print(15)), Action::Allow);
    assert_eq!(f.verdict(&print(16)), DENIED);
    assert_eq!(f.verdict(&facts(Syscall::Yield, [0; 8])), Action::Kill);
}

#[test]
fn every_arg_op_with_masks() {
    // (op, mask, value, register value, matches)
    let cases = [
        (ArgOp::Eq, u64::MAX, 5, 5, true),
        (ArgOp::Eq, u64::MAX, 5, 6, false),
        (ArgOp::Eq, 0xff, 0x05, 0x1205, true),
        (ArgOp::Eq, 0xff, 0x1205, 0x1205, false), // value outside the mask
        (ArgOp::Ne, u64::MAX, 5, 6, true),
        (ArgOp::Ne, 0xff, 0x05, 0x3305, false),
        (ArgOp::Lt, u64::MAX, 10, 9, true),
        (ArgOp::Lt, u64::MAX, 10, 10, false),
        (ArgOp::Lt, u64::MAX, 10, u64::MAX, false), // unsigned
        (ArgOp::Lt, 0xf, 10, 0xf3, true),
        (ArgOp::Le, u64::MAX, 10, 10, true),
        (ArgOp::Le, u64::MAX, 10, 11, false),
        (ArgOp::Gt, u64::MAX, 10, 11, true),
        (ArgOp::Gt, u64::MAX, 10, 10, false),
        (ArgOp::Gt, 0xf, 10, 0xf3, false),
        (ArgOp::Ge, u64::MAX, 10, 10, true),
        (ArgOp::Ge, u64::MAX, 10, 9, false),
        (ArgOp::MaskedEq, 0b1100, 0b0100, 0b0111, true),
        (ArgOp::MaskedEq, 0b1100, 0b0100, 0b1111, false),
        (ArgOp::MaskedEq, 0xff, 0x1205, 0x3405, true), // value outside the mask ignored
        (ArgOp::MaskedEq, 0, 0xffff, 0x1234, true),    // an empty mask selects nothing
    ];
    for (op, mask, value, x, expected) in cases {
        for register in 0..=7u8 {
            let f = filter(&[with_arg(
                rule(None, Action::Kill),
                register,
                mask,
                op,
                value,
            )]);
            let mut args = [!x; 8];
            args[register as usize] = x;
            let got = f.verdict(&facts(Syscall::Send, args)) == Action::Kill;
            assert_eq!(
                got, expected,
                "{op:?} mask {mask:#x} value {value:#x} x{register}={x:#x}"
            );
        }
    }
}

#[test]
fn all_comparisons_of_a_rule_must_hold() {
    let r = with_arg(rule(None, DENIED), 2, u64::MAX, ArgOp::Ge, 4);
    let f = filter(&[with_arg(r, 3, u64::MAX, ArgOp::Le, 8)]);
    assert_eq!(
        f.verdict(&facts(Syscall::Send, [0, 0, 4, 8, 0, 0, 0, 0])),
        DENIED
    );
    assert_eq!(
        f.verdict(&facts(Syscall::Send, [0, 0, 3, 8, 0, 0, 0, 0])),
        Action::Allow
    );
    assert_eq!(
        f.verdict(&facts(Syscall::Send, [0, 0, 4, 9, 0, 0, 0, 0])),
        Action::Allow
    );
}

#[test]
fn object_type_label_and_badge() {
    let f = filter(&[Rule {
        object_type: Some(CapType::Endpoint),
        label: Some(7),
        badge: Some(42),
        ..rule(Some(Syscall::Call), Action::Notify)
    }]);
    let info: u64 = MessageInfo::with(7, 2).into();
    let call = facts(Syscall::Call, [3, info, 0, 0, 0, 0, 0, 0]);
    assert_eq!(call.label, 7);
    assert_eq!(
        f.verdict(&call.with_capability(CapType::Endpoint, 42)),
        Action::Notify
    );
    // Each fact must match; without a capability lookup none does.
    assert_eq!(f.verdict(&call), Action::Allow);
    assert_eq!(
        f.verdict(&call.with_capability(CapType::Endpoint, 41)),
        Action::Allow
    );
    assert_eq!(
        f.verdict(&call.with_capability(CapType::Notification, 42)),
        Action::Allow
    );
    let other_label: u64 = MessageInfo::with(8, 2).into();
    let call8 = facts(Syscall::Call, [3, other_label, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        f.verdict(&call8.with_capability(CapType::Endpoint, 42)),
        Action::Allow
    );
}

#[test]
fn the_strictest_verdict_wins_across_up_to_16_filters() {
    let order = [
        Action::Allow,
        Action::Log,
        Action::Notify,
        DENIED,
        Action::Trap,
        Action::Kill,
    ];
    for depth in 1..=16usize {
        for strictest in 0..order.len() {
            // Filter i gives order[i % (strictest + 1)]: the strictest one
            // appears at most once or twice, anywhere in the stack.
            let filters: Vec<Filter> = (0..depth)
                .map(|i| filter(&[rule(None, order[(i * 7 + depth) % (strictest + 1)])]))
                .collect();
            let mut stack: Vec<&Filter> = filters.iter().collect();
            let expected = filters
                .iter()
                .map(|f| f.verdict(&facts(Syscall::Null, [0; 8])))
                .max()
                .unwrap();
            let f = facts(Syscall::Null, [0; 8]);
            assert_eq!(evaluate(&stack, &f), expected);
            stack.reverse();
            assert_eq!(evaluate(&stack, &f), expected, "order does not matter");
            assert_eq!(VerdictCache::new(&stack).cached_verdict(0), Some(expected));
        }
    }
    // Two errno codes: the larger wins, whatever the order.
    let (a, b) = (
        filter(&[rule(None, Action::Errno(5))]),
        filter(&[rule(None, DENIED)]),
    );
    let f = facts(Syscall::Null, [0; 8]);
    assert_eq!(evaluate(&[&a, &b], &f), DENIED);
    assert_eq!(evaluate(&[&b, &a], &f), DENIED);
}

#[test]
fn unfiltered_cache_allows_everything_on_the_fast_path() {
    let cache = VerdictCache::unfiltered();
    assert_eq!(cache, VerdictCache::new(&[]));
    let mut mask = 0u64;
    for s in Syscall::ALL {
        assert_eq!(cache.cached_verdict(s.number()), Some(Action::Allow));
        mask |= 1 << s.number();
    }
    assert_eq!(cache.no_entry_work_mask(), mask);
    assert_eq!(cache.cached_verdict(SYSCALL_COUNT as u64), None);
    assert_eq!(cache.cached_verdict(u64::MAX), None);
}

#[test]
fn the_cache_holds_argument_independent_verdicts_only() {
    let f = filter(&[
        rule(Some(Syscall::Exit), Action::Kill),
        rule(Some(Syscall::Yield), Action::Log),
        with_arg(
            rule(Some(Syscall::DebugPrint), DENIED),
            3,
            u64::MAX,
            ArgOp::Gt,
            64,
        ),
        Rule {
            badge: Some(1),
            ..rule(Some(Syscall::Send), Action::Notify)
        },
        Rule {
            label: Some(1),
            ..rule(Some(Syscall::Recv), Action::Trap)
        },
        Rule {
            object_type: Some(CapType::Endpoint),
            ..rule(Some(Syscall::Call), Action::Allow)
        },
        rule(Some(Syscall::Call), DENIED),
        rule(Some(Syscall::Signal), Action::Allow),
        rule(Some(Syscall::Signal), Action::Kill), // never reached
        // Conditional, but every outcome is the same errno.
        with_arg(rule(Some(Syscall::Poll), DENIED), 2, 1, ArgOp::Eq, 1),
        rule(Some(Syscall::Poll), DENIED),
    ]);
    let cache = VerdictCache::new(&[&f]);
    let cached = |s: Syscall| cache.cached_verdict(s.number());
    assert_eq!(cached(Syscall::Exit), Some(Action::Kill));
    assert_eq!(cached(Syscall::Yield), Some(Action::Log));
    assert_eq!(cached(Syscall::Signal), Some(Action::Allow));
    assert_eq!(cached(Syscall::Poll), Some(DENIED));
    assert_eq!(cached(Syscall::Null), Some(Action::Allow));
    for s in [
        Syscall::DebugPrint,
        Syscall::Send,
        Syscall::Recv,
        Syscall::Call,
    ] {
        assert_eq!(cached(s), None, "{s:?} depends on more than its number");
    }
    assert!(cache.needs_capability(Syscall::Send.number()));
    assert!(cache.needs_capability(Syscall::Call.number()));
    assert!(!cache.needs_capability(Syscall::DebugPrint.number()));
    assert!(!cache.needs_capability(Syscall::Recv.number()));
    // The mask: exactly the constant-Allow syscalls, every one this
    // filter does not name but Signal.
    let not_allowed = [
        Syscall::Exit,
        Syscall::Yield,
        Syscall::DebugPrint,
        Syscall::Send,
        Syscall::Recv,
        Syscall::Call,
        Syscall::Poll,
    ];
    let mask = Syscall::ALL
        .iter()
        .filter(|s| !not_allowed.contains(s))
        .fold(0u64, |m, s| m | 1 << s.number());
    assert!(mask & 1 << Syscall::Signal.number() != 0);
    assert_eq!(cache.no_entry_work_mask(), mask);
    // The refusals the vector answers: exactly the constant Errno (Poll,
    // conditional but always the same code), with its code; not the
    // argument-dependent one (DebugPrint), nor Trap, Kill or Log.
    assert_eq!(cache.refused_mask(), 1 << Syscall::Poll.number());
    assert_eq!(
        cache.refusal_code(Syscall::Poll.number()),
        ErrorCode::Denied.raw() as u16
    );
    for s in [
        Syscall::DebugPrint,
        Syscall::Exit,
        Syscall::Yield,
        Syscall::Null,
    ] {
        assert_eq!(cache.refusal_code(s.number()), 0, "{s:?}");
    }
    assert_eq!(VerdictCache::unfiltered().refused_mask(), 0);
}

#[test]
fn a_constant_kill_in_one_filter_outranks_conditions_in_another() {
    let conditional = filter(&[with_arg(
        rule(None, Action::Trap),
        2,
        u64::MAX,
        ArgOp::Eq,
        0,
    )]);
    let kill_exit = filter(&[rule(Some(Syscall::Exit), Action::Kill)]);
    let cache = VerdictCache::new(&[&conditional, &kill_exit]);
    assert_eq!(
        cache.cached_verdict(Syscall::Exit.number()),
        Some(Action::Kill)
    );
    assert_eq!(cache.cached_verdict(Syscall::Null.number()), None);
    assert_eq!(cache.no_entry_work_mask(), 0);
}

#[test]
fn verdict_uses_the_cache_or_evaluates() {
    let f = filter(&[with_arg(
        rule(Some(Syscall::Send), DENIED),
        2,
        u64::MAX,
        ArgOp::Eq,
        9,
    )]);
    let stack = [&f];
    let cache = VerdictCache::new(&stack);
    let send = |x2| facts(Syscall::Send, [0, 0, x2, 0, 0, 0, 0, 0]);
    assert_eq!(cache.verdict(&stack, &send(9)), DENIED);
    assert_eq!(cache.verdict(&stack, &send(8)), Action::Allow);
    assert_eq!(
        cache.verdict(&stack, &facts(Syscall::Null, [0; 8])),
        Action::Allow
    );
}

#[test]
fn the_lean_entry_judges_a_number_whose_verdict_needs_no_more_than_x0_to_x8() {
    let on_x2 = |action| with_arg(rule(Some(Syscall::Null), action), 2, u64::MAX, ArgOp::Eq, 1);
    for (action, lean) in [
        (Action::Errno(5), true),
        (Action::Log, true),
        (Action::Notify, false),
        (Action::Trap, false),
        (Action::Kill, false),
    ] {
        let conditional = filter(&[on_x2(action)]);
        let cache = VerdictCache::new(&[&conditional]);
        assert_eq!(
            cache.judged_by_lean_entry(Syscall::Null.number()),
            lean,
            "{action:?}"
        );
        assert!(cache.judged_by_lean_entry(Syscall::Yield.number()));
    }
    // A rule on the PC, whatever its action.
    let mut on_pc = rule(Some(Syscall::Null), Action::Errno(5));
    on_pc
        .args
        .push(ArgMatch {
            operand: Operand::Pc,
            ..ArgMatch::register(0, u64::MAX, ArgOp::Eq, 0x1000)
        })
        .unwrap();
    let cache = VerdictCache::new(&[&filter(&[on_pc])]);
    assert!(!cache.judged_by_lean_entry(Syscall::Null.number()));
    // A rule on the bytes a call carries: copied first, not lean.
    let on_bytes = with_arg(
        rule(Some(Syscall::DebugPrint), DENIED),
        2,
        u64::MAX,
        ArgOp::Eq,
        1,
    );
    let on_word = ArgMatch {
        operand: Operand::Word(7),
        ..ArgMatch::register(0, u64::MAX, ArgOp::Eq, 1)
    };
    let mut on_memory = rule(Some(Syscall::Call), DENIED);
    on_memory.args.push(on_word).unwrap();
    let cache = VerdictCache::new(&[&filter(&[on_bytes, on_memory])]);
    assert!(cache.judged_by_lean_entry(Syscall::DebugPrint.number()));
    assert!(!cache.judged_by_lean_entry(Syscall::Call.number()));
    // A default reaches every number no rule decides.
    let trapping = filter_with_default(&[rule(Some(Syscall::Null), Action::Allow)], Action::Trap);
    let cache = VerdictCache::new(&[&trapping]);
    assert!(cache.judged_by_lean_entry(Syscall::Null.number()));
    assert!(!cache.judged_by_lean_entry(Syscall::Yield.number()));
    // Stacked: any filter's reach counts; no number past the syscalls.
    let quiet = filter(&[]);
    let cache = VerdictCache::new(&[&quiet, &trapping]);
    assert!(!cache.judged_by_lean_entry(Syscall::Yield.number()));
    assert!(VerdictCache::unfiltered().judged_by_lean_entry(Syscall::Call.number()));
    // A syscall that reads or writes the whole frame never takes the lean
    // entry: not judged there either.
    for syscall in Syscall::ALL {
        assert_eq!(
            VerdictCache::unfiltered().judged_by_lean_entry(syscall.number()),
            !crate::syscall::reads_or_writes_whole_context(syscall),
            "{syscall:?}"
        );
    }
    assert!(!VerdictCache::unfiltered().judged_by_lean_entry(64));
    assert!(!VerdictCache::unfiltered().judged_by_lean_entry(u64::MAX));
}

#[test]
fn a_filter_that_can_only_allow_a_syscall_is_not_evaluated_for_it() {
    let quiet = filter(&[rule(Some(Syscall::Yield), DENIED)]);
    let on_x2 = filter(&[with_arg(
        rule(Some(Syscall::Null), DENIED),
        2,
        u64::MAX,
        ArgOp::Eq,
        1,
    )]);
    let cache = VerdictCache::new(&[&quiet, &on_x2]);
    assert_eq!(cache.deciding_filters(Syscall::Null.number()), 0b10);
    assert_eq!(cache.deciding_filters(Syscall::Yield.number()), 0b01);
    assert_eq!(cache.deciding_filters(Syscall::Call.number()), 0);
    assert_eq!(cache.deciding_filters(999), u8::MAX);
    // A skipped filter is not asked: one that would refuse everything
    // gives Allow when its bit is clear.
    let refusing = filter_with_default(&[], DENIED);
    let null = facts(Syscall::Null, [0; 8]);
    assert_eq!(
        evaluate_deciding(&[&refusing, &on_x2], 0b10, &null),
        Action::Allow
    );
    assert_eq!(evaluate_deciding(&[&refusing, &on_x2], 0b11, &null), DENIED);
}

#[test]
fn load_replaces_the_rules_or_keeps_them() {
    let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
    let mut d = FilterDescription::new(Action::Allow);
    d.push(rule(Some(Syscall::Yield), Action::Kill)).unwrap();
    let bytes = encode(&d, &mut buffer).unwrap();
    let mut f = filter(&[rule(None, DENIED)]);
    let before = f.clone();
    assert_eq!(
        f.load(&bytes[..bytes.len() - 1]),
        Err(PolicyError::Malformed)
    );
    assert_eq!(f, before);
    assert_eq!(
        f.load(&[1, 0, 0, 0, 0, 0, 0, 1, 0, 0]),
        Err(PolicyError::BadErrno)
    );
    assert_eq!(f, before);
    f.load(bytes).unwrap();
    assert_eq!(f.rules(), &d.rules[..]);
    let mut invalid = d.clone();
    invalid.rules[0].syscall = Some(99);
    assert_eq!(
        Filter::from_description(invalid),
        Err(PolicyError::BadSyscall)
    );
}

// Property tests: random small filters over a few syscalls and registers.

fn any_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        Just(Action::Allow),
        Just(Action::Log),
        Just(Action::Notify),
        (1u16..=13).prop_map(Action::Errno),
        Just(Action::Trap),
        Just(Action::Kill),
    ]
}

/// A comparison of one of `operands`, with every operator, a full or a
/// small mask, and a small value (also the compiled verdicts' tests').
pub(super) fn any_arg(operands: impl Strategy<Value = Operand>) -> impl Strategy<Value = ArgMatch> {
    let op = prop_oneof![
        Just(ArgOp::Eq),
        Just(ArgOp::Ne),
        Just(ArgOp::Lt),
        Just(ArgOp::Le),
        Just(ArgOp::Gt),
        Just(ArgOp::Ge),
        Just(ArgOp::MaskedEq),
    ];
    (operands, prop_oneof![Just(u64::MAX), 0u64..4], op, 0u64..4).prop_map(
        |(operand, mask, op, value)| ArgMatch {
            operand,
            mask,
            op,
            value,
        },
    )
}

fn any_rule() -> impl Strategy<Value = Rule> {
    let arg = any_arg(prop_oneof![
        (0u8..=7).prop_map(Operand::Register),
        (0u8..=9).prop_map(Operand::Word),
        Just(Operand::Pc),
    ]);
    let bytes = proptest::option::weighted(
        0.2,
        (
            prop_oneof![
                Just(BytesOp::Equal),
                Just(BytesOp::Prefix),
                Just(BytesOp::Contains)
            ],
            proptest::collection::vec(0u8..2, 1..3),
            0u16..3,
        )
            .prop_map(|(op, pattern, within)| BytesMatch {
                op,
                pattern: heapless::Vec::from_slice(&pattern).unwrap(),
                within,
            }),
    );
    (
        proptest::option::of(0u64..4),
        proptest::option::weighted(0.2, Just(CapType::Endpoint)),
        proptest::option::weighted(0.2, 0u64..2),
        proptest::option::weighted(0.2, 0u64..2),
        proptest::collection::vec(arg, 0..3),
        bytes,
        any_action(),
    )
        .prop_map(
            |(syscall, object_type, label, badge, args, bytes, action)| {
                let mut r = Rule {
                    syscall,
                    object_type,
                    label,
                    badge,
                    bytes,
                    ..Rule::new(action)
                };
                for a in args {
                    r.push_arg(a).unwrap();
                }
                r
            },
        )
}

fn any_filter() -> impl Strategy<Value = Filter> {
    (proptest::collection::vec(any_rule(), 0..6), any_action())
        .prop_map(|(rules, default)| filter_with_default(&rules, default))
}

/// Judged memories the property tests draw from: none, bytes of a buffer
/// (one judged in full, one longer than judged), a message's words.
const MEMORIES: [JudgedView<'static>; 4] = [
    JudgedView {
        bytes: None,
        length: 0,
        message: false,
    },
    JudgedView {
        bytes: Some(&[0, 1, 1, 0]),
        length: 4,
        message: false,
    },
    JudgedView {
        bytes: Some(&[1, 0]),
        length: 600,
        message: false,
    },
    JudgedView {
        bytes: Some(&[1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]),
        length: 16,
        message: true,
    },
];

fn any_facts() -> impl Strategy<Value = SyscallFacts<'static>> {
    (
        0u64..5,
        proptest::array::uniform8(0u64..4),
        proptest::option::of((Just(CapType::Endpoint), 0u64..2)),
        0u64..2,
        0u64..4,
        0usize..MEMORIES.len(),
    )
        .prop_map(|(number, mut args, capability, label, pc, memory)| {
            args[1] = MessageInfo::with(label, 0).into();
            let f = SyscallFacts::from_registers(number, args)
                .with_pc(pc)
                .with_memory(MEMORIES[memory]);
            match capability {
                Some((t, badge)) => f.with_capability(t, badge),
                None => f,
            }
        })
}

#[test]
fn each_filters_notify_goes_to_its_own_server_and_a_serverless_one_fails_closed() {
    let notify = filter(&[rule(Some(Syscall::Poll), Action::Notify)]);
    let allow = filter(&[]);
    let call = facts(Syscall::Poll, [0; 8]);
    let denied = Action::Errno(ErrorCode::Denied.raw() as u16);
    // Filter 1 asks its server; filter 0 says nothing of Poll.
    assert_eq!(
        routed_verdict(&[&allow, &notify], &call, 0, 0b10),
        (Action::Notify, Some(1))
    );
    // Two filters ask: the first one's server first, then the second's.
    assert_eq!(
        routed_verdict(&[&notify, &notify], &call, 0, 0b11),
        (Action::Notify, Some(0))
    );
    assert_eq!(
        routed_verdict(&[&notify, &notify], &call, 0b01, 0b11),
        (Action::Notify, Some(1))
    );
    assert_eq!(
        routed_verdict(&[&notify, &notify], &call, 0b11, 0b11),
        (Action::Allow, None)
    );
    // A filter with no server refuses, whatever the others' servers say.
    assert_eq!(
        routed_verdict(&[&notify, &notify], &call, 0b01, 0b01),
        (denied, None)
    );
    assert_eq!(routed_verdict(&[&notify], &call, 0, 0), (denied, None));
    // A stricter verdict of another filter wins over any Notify.
    let kill = filter(&[rule(Some(Syscall::Poll), Action::Kill)]);
    assert_eq!(
        routed_verdict(&[&notify, &kill], &call, 0, 0b11),
        (Action::Kill, None)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// With no waiver and every server there, the routed verdict is the
    /// stack's; waivers only ever turn a `Notify` into something less
    /// strict, and missing servers only into `Errno(Denied)`.
    #[test]
    fn routing_agrees_with_evaluation(
        filters in proptest::collection::vec(any_filter(), 0..8),
        facts in any_facts(),
        waived in any::<u8>(),
        served in any::<u8>(),
    ) {
        let stack: Vec<&Filter> = filters.iter().collect();
        let plain = evaluate(&stack, &facts);
        let (routed, asker) = routed_verdict(&stack, &facts, 0, u8::MAX);
        prop_assert_eq!(routed, plain);
        prop_assert_eq!(asker.is_some(), plain == Action::Notify);
        if let Some(i) = asker {
            prop_assert_eq!(stack[i as usize].verdict(&facts), Action::Notify);
        }
        let (changed, asker) = routed_verdict(&stack, &facts, waived, served);
        if let Some(i) = asker {
            prop_assert_eq!(changed, Action::Notify);
            prop_assert!(waived & (1 << i) == 0 && served & (1 << i) != 0);
        }
        if changed != plain {
            prop_assert!(plain == Action::Notify || changed == Action::Errno(ErrorCode::Denied.raw() as u16));
        }
    }

    /// A cached verdict is what evaluation gives for every call with that
    /// number; the mask bit is set exactly for a cached `Allow`.
    #[test]
    fn the_cache_agrees_with_evaluation(
        filters in proptest::collection::vec(any_filter(), 0..4),
        calls in proptest::collection::vec(any_facts(), 1..16),
    ) {
        let stack: Vec<&Filter> = filters.iter().collect();
        let cache = VerdictCache::new(&stack);
        for facts in &calls {
            if let Some(cached) = cache.cached_verdict(facts.number) {
                prop_assert_eq!(cached, evaluate(&stack, facts));
            }
            prop_assert_eq!(cache.verdict(&stack, facts), evaluate(&stack, facts));
            // Only the deciding filters evaluated: the same verdict.
            let deciding = cache.deciding_filters(facts.number);
            prop_assert_eq!(evaluate_deciding(&stack, deciding, facts), evaluate(&stack, facts));
            // The lean entry judges such a number: no call with it may
            // trap or kill.
            if cache.judged_by_lean_entry(facts.number) {
                let verdict = evaluate(&stack, facts);
                prop_assert!(matches!(verdict, Action::Allow | Action::Log | Action::Errno(_)));
                let elsewhere = SyscallFacts { pc: facts.pc ^ 0x1004, ..*facts };
                prop_assert_eq!(evaluate(&stack, &elsewhere), verdict, "no rule reads the PC");
                prop_assert!(!cache.needs_memory(facts.number));
            }
        }
        for s in Syscall::ALL {
            let bit = cache.no_entry_work_mask() & (1 << s.number()) != 0;
            prop_assert_eq!(bit, cache.cached_verdict(s.number()) == Some(Action::Allow));
            // Asked by the vector: one filter's constant `Notify`, for a
            // syscall that carries no memory.
            let asked = cache.asked_mask() & (1 << s.number()) != 0;
            prop_assert_eq!(
                asked,
                stack.len() == 1
                    && cache.cached_verdict(s.number()) == Some(Action::Notify)
                    && !s.carries_memory()
            );
        }
    }

    /// The stack's verdict is the strictest single-filter verdict, in any order.
    #[test]
    fn stacking_is_the_maximum(
        filters in proptest::collection::vec(any_filter(), 1..16),
        facts in any_facts(),
    ) {
        let mut stack: Vec<&Filter> = filters.iter().collect();
        let strictest = stack.iter().map(|f| f.verdict(&facts)).max().unwrap();
        prop_assert_eq!(evaluate(&stack, &facts), strictest);
        stack.reverse();
        prop_assert_eq!(evaluate(&stack, &facts), strictest);
    }
}

#[test]
fn the_killing_rule_is_the_first_kill_then_the_first_notify() {
    let quiet = filter(&[rule(Some(Syscall::Yield), Action::Allow)]);
    let killer = filter(&[
        rule(Some(Syscall::Null), DENIED),
        rule(Some(Syscall::Yield), Action::Kill),
    ]);
    let asker = filter(&[rule(Some(Syscall::Signal), Action::Notify)]);
    let stack = [&quiet, &asker, &killer];
    assert_eq!(
        killing_rule(&stack, &facts(Syscall::Yield, [0; 8])),
        Some((2, 1, false)),
        "filter 2's rule 1 kills (filter 0 allows first, but a kill wins)"
    );
    assert_eq!(
        killing_rule(&stack, &facts(Syscall::Signal, [0; 8])),
        Some((1, 0, true)),
        "no Kill rule: the server behind filter 1's Notify rule 0 killed"
    );
    assert_eq!(killing_rule(&stack, &facts(Syscall::Null, [0; 8])), None);
    assert_eq!(
        killer.deciding_rule(&facts(Syscall::Null, [0; 8])),
        Some((0, DENIED))
    );
}
