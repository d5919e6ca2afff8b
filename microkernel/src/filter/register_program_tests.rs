//! Host tests of the compiled verdicts (`RegisterProgram`): what is
//! compiled, and that a compiled verdict is always the filters' own.

use super::*;
use abi::policy::{Action, ArgMatch, ArgOp, FilterDescription, Operand, Rule};
use abi::{ErrorCode, MessageInfo, Syscall};
use proptest::prelude::*;

const DENIED: Action = Action::errno(ErrorCode::Denied);
const BUSY: Action = Action::errno(ErrorCode::WouldBlock);

fn filter(rules: &[Rule], default: Action) -> Filter {
    let mut d = FilterDescription::new(default);
    for r in rules {
        d.push(r.clone()).unwrap();
    }
    Filter::from_description(d).unwrap()
}

fn on(syscall: Syscall, args: &[ArgMatch], action: Action) -> Rule {
    let mut rule = Rule {
        syscall: Some(syscall.number()),
        ..Rule::new(action)
    };
    for &a in args {
        rule.push_arg(a).unwrap();
    }
    rule
}

fn compiled(stack: &[&Filter]) -> (VerdictCache, RegisterProgram) {
    let cache = VerdictCache::new(stack);
    let program = RegisterProgram::new(stack, &cache);
    (cache, program)
}

fn expected(stack: &[&Filter], number: u64, args: [u64; 8]) -> Action {
    evaluate(stack, &SyscallFacts::from_registers(number, args))
}

/// The benchmark's filter: Null refused when x2 is 1. One comparison,
/// and the verdicts the filter gives.
#[test]
fn a_rule_on_a_register_is_one_comparison() {
    let x2_is_1 = ArgMatch::register(2, u64::MAX, ArgOp::Eq, 1);
    let f = filter(&[on(Syscall::Null, &[x2_is_1], DENIED)], Action::Allow);
    let (_, program) = compiled(&[&f]);
    assert_eq!(program.compiled_mask(), 1 << Syscall::Null.number());
    let mut args = [0; 8];
    assert_eq!(program.verdict(0, &args), Some(Action::Allow));
    args[2] = 1;
    assert_eq!(program.verdict(0, &args), Some(DENIED));
    args[2] = 2;
    assert_eq!(program.verdict(0, &args), Some(Action::Allow));
    assert_eq!(
        program.verdict(Syscall::Yield.number(), &args),
        None,
        "not compiled"
    );
}

/// Stacked filters, several rules, the label, a message word and every
/// operator: compiled, and the verdict of each call is the filters'.
#[test]
fn stacks_labels_words_and_operators_compile_to_the_same_verdicts() {
    let first = filter(
        &[
            Rule {
                label: Some(7),
                ..on(
                    Syscall::Signal,
                    &[ArgMatch::register(3, 0xff, ArgOp::Lt, 0x10)],
                    BUSY,
                )
            },
            on(
                Syscall::Signal,
                &[ArgMatch {
                    operand: Operand::Word(1),
                    mask: 0xf0,
                    op: ArgOp::MaskedEq,
                    value: 0x3f,
                }],
                Action::Allow,
            ),
            on(
                Syscall::Signal,
                &[
                    ArgMatch::register(4, u64::MAX, ArgOp::Ge, 5),
                    ArgMatch::register(5, u64::MAX, ArgOp::Ne, 0),
                ],
                DENIED,
            ),
        ],
        Action::Allow,
    );
    let second = filter(
        &[
            on(
                Syscall::Signal,
                &[ArgMatch::register(0, u64::MAX, ArgOp::Gt, 9)],
                Action::Allow,
            ),
            on(
                Syscall::Signal,
                &[ArgMatch::register(0, u64::MAX, ArgOp::Le, 2)],
                BUSY,
            ),
        ],
        DENIED,
    );
    let stack = [&first, &second];
    let (_, program) = compiled(&stack);
    let number = Syscall::Signal.number();
    assert_ne!(program.compiled_mask() & (1 << number), 0);
    let values = [0u64, 1, 2, 3, 5, 9, 10, 0x13, 0x30, 0x3f, 0x110];
    for label in [0u64, 7, 8] {
        for &a in &values {
            for &b in &values {
                let mut args = [a, 0, b, a, b, a ^ b, 0, 0];
                args[1] = MessageInfo::with(label, 0).into();
                assert_eq!(
                    program.verdict(number, &args),
                    Some(expected(&stack, number, args)),
                    "label {label}, args {args:?}"
                );
            }
        }
    }
}

/// A rule that reads anything but registers, or an action other than
/// `Allow` or `Errno`, leaves its syscall to the lean entry.
#[test]
fn rules_beyond_registers_are_not_compiled() {
    let x2_is_1 = ArgMatch::register(2, u64::MAX, ArgOp::Eq, 1);
    let pc = ArgMatch {
        operand: Operand::Pc,
        mask: u64::MAX,
        op: ArgOp::Eq,
        value: 1,
    };
    let buffer_word = ArgMatch {
        operand: Operand::Word(8),
        mask: u64::MAX,
        op: ArgOp::Eq,
        value: 1,
    };
    let cases = [
        on(Syscall::Null, &[pc], DENIED),
        on(Syscall::Null, &[x2_is_1], Action::Log),
        on(Syscall::Null, &[x2_is_1], Action::Kill),
        on(Syscall::Call, &[buffer_word], DENIED),
        Rule {
            badge: Some(1),
            ..on(Syscall::Signal, &[], DENIED)
        },
    ];
    for rule in cases {
        let f = filter(core::slice::from_ref(&rule), Action::Allow);
        let (_, program) = compiled(&[&f]);
        assert_eq!(program.compiled_mask(), 0, "{rule:?}");
    }
}

/// The same comparisons for several syscalls are kept once; what does
/// not fit is not compiled, and what is compiled still agrees.
#[test]
fn the_table_is_shared_and_bounded() {
    let any_syscall = Rule {
        syscall: None,
        ..Rule::new(DENIED)
    };
    let mut shared = any_syscall.clone();
    shared
        .push_arg(ArgMatch::register(1, u64::MAX, ArgOp::Eq, 3))
        .unwrap();
    let f = filter(&[shared], Action::Allow);
    let (cache, program) = compiled(&[&f]);
    let lean = cache.lean_judged_mask();
    assert_eq!(program.compiled_mask(), lean, "every judged syscall");
    // Many rules of one comparison each, for each syscall: more than the
    // table holds.
    let rules: Vec<Rule> = Syscall::ALL
        .iter()
        .flat_map(|&s| {
            (0..4).map(move |v| {
                let value = 4 * s.number() + v;
                on(
                    s,
                    &[ArgMatch::register(2, u64::MAX, ArgOp::Eq, value)],
                    DENIED,
                )
            })
        })
        .take(abi::policy::MAX_RULES)
        .collect();
    let f = filter(&rules, Action::Allow);
    let stack = [&f];
    let (cache, program) = compiled(&stack);
    let mask = program.compiled_mask();
    let judged = Syscall::ALL
        .iter()
        .map(|s| s.number())
        .filter(|&n| cache.judged_by_lean_entry(n) && cache.cached_verdict(n).is_none());
    let (fitted, left): (Vec<u64>, Vec<u64>) = judged.partition(|&n| mask & (1 << n) != 0);
    assert_eq!(fitted.len(), PROGRAM_COMPARISONS / 4, "as many as fit");
    assert!(!left.is_empty());
    for s in Syscall::ALL {
        for v in 0..64 {
            let args = [0, 0, v, 0, 0, 0, 0, 0];
            if let Some(verdict) = program.verdict(s.number(), &args) {
                assert_eq!(verdict, expected(&stack, s.number(), args));
            }
        }
    }
}

fn register_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => Just(Action::Allow),
        3 => (1u16..=13).prop_map(Action::Errno),
        1 => Just(Action::Log),
    ]
}

fn register_rule() -> impl Strategy<Value = Rule> {
    let arg = super::tests::any_arg(prop_oneof![
        (0u8..=7).prop_map(Operand::Register),
        (0u8..=5).prop_map(Operand::Word),
    ]);
    (
        proptest::option::of(0u64..6),
        proptest::option::weighted(0.3, 0u64..2),
        proptest::collection::vec(arg, 0..4),
        register_action(),
    )
        .prop_map(|(syscall, label, args, action)| {
            let mut r = Rule {
                syscall,
                label,
                ..Rule::new(action)
            };
            for a in args {
                r.push_arg(a).unwrap();
            }
            r
        })
}

fn register_filter() -> impl Strategy<Value = Filter> {
    (
        proptest::collection::vec(register_rule(), 0..6),
        prop_oneof![Just(Action::Allow), (1u16..=13).prop_map(Action::Errno)],
    )
        .prop_map(|(rules, default)| filter(&rules, default))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever is compiled gives the filters' verdict for every call,
    /// its links only go forward, and a syscall the lean entry judges
    /// whose filters compare registers alone is compiled unless the table
    /// is full.
    #[test]
    fn compiled_verdicts_are_the_filters(
        filters in proptest::collection::vec(register_filter(), 1..4),
        calls in proptest::collection::vec(
            (0u64..6, proptest::array::uniform8(0u64..5), 0u64..3), 1..24),
    ) {
        let stack: Vec<&Filter> = filters.iter().collect();
        let (cache, program) = compiled(&stack);
        for (number, mut args, label) in calls {
            args[1] = MessageInfo::with(label, 0).into();
            if let Some(verdict) = program.verdict(number, &args) {
                prop_assert_eq!(verdict, expected(&stack, number, args));
                prop_assert!(cache.judged_by_lean_entry(number));
                prop_assert!(cache.cached_verdict(number).is_none());
            }
        }
        prop_assert!(program.links_go_forward());
    }
}

/// The table's size is bounded by the TCB's: a TCB's record, the
/// compiled verdicts in it, fits the 4 KiB Untyped it may be retyped
/// from (in-guest case 50 does so).
#[test]
fn a_tcb_with_its_program_fits_in_4_kib() {
    let bytes = crate::cap::layout::record_bytes(abi::cap::CapType::Tcb, 0).unwrap();
    assert!(bytes <= 4096, "a TCB's record is {bytes} bytes");
}
