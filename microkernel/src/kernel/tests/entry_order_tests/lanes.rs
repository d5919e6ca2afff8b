//! The entry's lanes beside its machine: the lean entry's audit-only
//! lane and the policy-only lane (`Kernel::syscall_judged`) against the
//! entry machine, and the audit a destroyed ring or notification turns
//! off.

use super::*;

/// What the lane tests compare after a syscall taken both ways.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct LaneState {
    context: arch::context::UserContext,
    state: ThreadState,
    call: CallSlot,
    trace: TraceProgress,
    work: WorkFlags,
    counts: Option<crate::thread::StatCounts>,
    current: Option<ThreadId>,
    seen: Vec<Seen>,
    line: String,
}

impl Scene {
    /// Deletes the capability in `slot` of the scene's CNode as a kernel
    /// entry does (the kernel's hooks run for what that destroys).
    fn destroy_through_the_kernel(&mut self, slot: u64) {
        crate::kernel::tests::test_kernel::delete_through_the_kernel(
            &mut self.kernel,
            &mut self.machine,
            self.cnode,
            slot,
        );
    }

    /// The thread's registers, state, stopped call, trace progress, work
    /// and counts, who runs next, and what the machine saw.
    pub(super) fn lane_state(&self) -> LaneState {
        let t = self.thread();
        LaneState {
            context: t.context,
            state: t.state(),
            call: t.call,
            trace: t.trace,
            work: t.work,
            counts: t.stats.counts(),
            current: self.kernel.current,
            seen: self.machine.seen.clone(),
            line: self.machine.line.clone(),
        }
    }
}

/// An audit-only thread's syscall is carried out by the lean entry's
/// audit-only half (its record reads nothing of the frame the lean entry
/// leaves unsaved): the same record as the generic entry writes, and the
/// thread goes back as it is; a thread with other work is declined by
/// both halves, with nothing done.
#[test]
fn an_audit_only_syscall_takes_the_lean_entry_and_writes_the_same_record() {
    use crate::kernel::LeanSyscall;
    let mut records = Vec::new();
    for lean in [false, true] {
        let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited();
        let context = &mut scene.kernel.objects[scene.thread].context;
        context.set_syscall_number(Syscall::Poll.number());
        context.set_arg(entry::ArgIndex::X0, SIGNAL);
        context.pc = 0x1004;
        if lean {
            let answer = scene.kernel.lean_audited_syscall(&mut scene.machine, SVC);
            assert!(matches!(answer, LeanSyscall::Returns { .. }), "{answer:?}");
        } else {
            let _ = scene.kernel.syscall(&mut scene.machine, scene.thread, SVC);
        }
        assert_eq!(scene.thread().context.result(), ErrorCode::Ok.raw());
        let mut written = scene.records();
        assert_eq!(written.len(), 1);
        written[0].time = 0;
        records.push(written.remove(0));
    }
    assert_eq!(records[0], records[1]);
    assert_eq!(records[1].syscall, Syscall::Poll.number());
    // Policy work besides: declined before anything is done.
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO)))
        .filtered()
        .audited();
    let syscalls = scene.thread().stats.counts();
    scene.kernel.objects[scene.thread]
        .context
        .set_syscall_number(Syscall::Poll.number());
    for answer in [
        scene.kernel.lean_audited_syscall(&mut scene.machine, SVC),
        scene.kernel.lean_syscall(&mut scene.machine, SVC),
    ] {
        assert_eq!(answer, LeanSyscall::NotLean);
    }
    assert_eq!(scene.records().len(), 0);
    assert_eq!(scene.thread().stats.counts(), syscalls);
}

/// A syscall that suspends its own thread returns a result and leaves
/// nothing owed on the thread, yet the thread is no longer the CPU's:
/// the lean entry's lanes (audit alone, policy alone) must not send it
/// back as it is.
#[test]
fn a_lean_lane_syscall_that_suspends_its_own_thread_does_not_go_back() {
    use crate::kernel::LeanSyscall;
    use abi::policy::{ArgMatch, ArgOp};
    for policy in [false, true] {
        // A rule on `x2` (which does not hold), so that the verdict for
        // `TcbSuspend` is evaluated by the lean entry's policy lane.
        let mut rule = rule(Syscall::TcbSuspend, Action::Errno(ERRNO));
        rule.args
            .push(ArgMatch::register(2, u64::MAX, ArgOp::Eq, 2))
            .unwrap();
        let scene = Scene::new(rule);
        let mut scene = if policy {
            scene.filtered()
        } else {
            scene.audited()
        };
        let context = &mut scene.kernel.objects[scene.thread].context;
        context.set_syscall_number(Syscall::TcbSuspend.number());
        context.set_arg(entry::ArgIndex::X0, TCB);
        context.pc = 0x1004;
        let answer = if policy {
            scene.kernel.lean_syscall(&mut scene.machine, SVC)
        } else {
            scene.kernel.lean_audited_syscall(&mut scene.machine, SVC)
        };
        assert_eq!(answer, LeanSyscall::Finish, "policy {policy}");
        assert_ne!(scene.kernel.current, Some(scene.thread), "policy {policy}");
    }
}

/// An audit whose notification or ring is destroyed is off at once
/// (`Kernel::audit_sink_destroyed`): the thread leaves the lists of audit
/// users, has no audit work, and its next syscall is an ordinary one
/// that writes no record, lossy or lossless.
#[test]
fn an_audit_whose_notification_or_ring_is_destroyed_is_off_at_once() {
    for mode in [AuditMode::Lossy, AuditMode::Lossless] {
        for gone in [SIGNAL, RING] {
            let case = format!("{mode:?}, slot {gone} gone");
            let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited_in(mode);
            scene.syscall(Syscall::Null);
            assert_eq!(scene.records().len(), 1, "{case}");
            scene.destroy_through_the_kernel(gone);
            assert_eq!(scene.thread().audit, None, "{case}: off");
            assert!(!scene.thread().work.contains(WorkFlags::AUDIT), "{case}");
            scene.syscall(Syscall::Null);
            assert_eq!(
                scene.thread().context.result(),
                ErrorCode::Ok.raw(),
                "{case}"
            );
            assert!(scene.thread().audit_pending.is_none(), "{case}");
            if gone == SIGNAL {
                // The ring is still there: nothing more went into it.
                assert_eq!(scene.records().len(), 1, "{case}");
            }
        }
    }
}

/// A syscall that destroys its own audit's notification is recorded in
/// its ring, which still lives, unsignalled, and the audit is then off:
/// every audited syscall leaves a record or a visible gap. A syscall
/// that destroys its own ring leaves nothing to write into (the server
/// lost the ring with it), and the audit off.
#[test]
fn a_syscall_that_destroys_its_own_audit_notification_is_still_recorded() {
    use crate::stopped_call::EntryOutcome;
    for mode in [AuditMode::Lossy, AuditMode::Lossless] {
        for gone in [SIGNAL, RING] {
            let case = format!("{mode:?}, slot {gone} gone");
            let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited_in(mode);
            let thread = scene.thread;
            let context = &mut scene.kernel.objects[thread].context;
            context.set_syscall_number(Syscall::CapDelete.number());
            context.set_arg(entry::ArgIndex::X2, gone);
            // Its record begun at its audit entry, the syscall destroys
            // the object through the kernel (its hooks run), and its
            // record is written after dispatch.
            scene
                .kernel
                .audit_begin(thread, EntryOutcome::Run, false, None);
            scene.destroy_through_the_kernel(gone);
            assert_eq!(scene.thread().audit, None, "{case}: off at once");
            scene.machine.seen.clear();
            scene
                .kernel
                .write_record(&mut scene.machine, thread, Some(ErrorCode::Ok.raw()));
            if gone == SIGNAL {
                let records = scene.records();
                assert_eq!(records.len(), 1, "{case}: recorded");
                assert_eq!(records[0].syscall, Syscall::CapDelete.number(), "{case}");
                assert_eq!(records[0].args[2], SIGNAL, "{case}");
                assert_eq!(records[0].result, Some(ErrorCode::Ok.raw()), "{case}");
                assert_eq!(scene.machine.seen, [Seen::Record(1)], "{case}: once");
            }
            assert_eq!(scene.thread().audit, None, "{case}: off");
            assert!(!scene.thread().work.contains(WorkFlags::AUDIT), "{case}");
            assert!(scene.thread().audit_pending.is_none(), "{case}");
        }
    }
}

/// A lossless thread waiting for room in its ring (its syscall stopped
/// at its audit entry) goes on when the ring or the notification is
/// destroyed: its audit is off, and its syscall runs as judged, without
/// a record.
#[test]
fn a_thread_waiting_for_audit_room_goes_on_when_its_ring_or_notification_is_destroyed() {
    for gone in [SIGNAL, RING] {
        let case = format!("slot {gone} gone");
        let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited();
        let ring = scene.ring;
        scene
            .machine
            .write_phys_u64(ring + WRITTEN_OFFSET, abi::audit::RING_SLOTS);
        scene.syscall(Syscall::Null);
        assert_eq!(
            scene.thread().state(),
            ThreadState::BlockedOnAudit,
            "{case}"
        );
        scene.destroy_through_the_kernel(gone);
        assert_eq!(scene.thread().audit, None, "{case}: off");
        assert_eq!(scene.thread().state(), ThreadState::Ready, "{case}");
        scene.machine.seen.clear();
        let _ = scene.kernel.resume(&mut scene.machine);
        assert_eq!(scene.kernel.current, Some(scene.thread), "{case}");
        assert_eq!(scene.thread().call, CallSlot::Empty, "{case}");
        assert_eq!(
            scene.thread().context.result(),
            ErrorCode::Ok.raw(),
            "{case}"
        );
        assert_eq!(scene.machine.seen, [], "{case}: no record");
    }
}

/// A stopped syscall whose audit's notification is destroyed while it
/// waits for its policy server had no record begun yet (that is after
/// the verdict): its audit is off at once, and its cancellation writes
/// nothing.
#[test]
fn a_stopped_call_whose_audit_notification_is_destroyed_is_not_recorded_when_cancelled() {
    let mut scene = Scene::new(rule(Syscall::Null, Action::Notify))
        .filtered()
        .audited();
    scene.syscall(Syscall::Null);
    let call = *scene
        .thread()
        .call
        .as_ref()
        .expect("stopped for its server");
    assert!(scene.thread().audit_pending.is_none());
    scene.destroy_through_the_kernel(SIGNAL);
    assert_eq!(scene.thread().audit, None, "off");
    let thread = scene.thread;
    let interrupted = Some(ErrorCode::Interrupted.raw());
    scene
        .kernel
        .audit_cancelled(&mut scene.machine, thread, &call, interrupted);
    assert_eq!(scene.records().len(), 0);
}

/// The call a syscall keeps when its one filter's constant `Notify` asks
/// the filter's server is `CallSlot::POLICY_ASK` with the syscall's
/// `x0..x8` and ESR and, for a syscall that names a capability, what the
/// slot `x0` names held and the serial count; its request is filter 0's,
/// with that capability's type and badge (none for an empty slot, a slot
/// past the CSpace, or a syscall that names none): what the policy
/// request fast path (`policy_request_fast_path.s`) writes in their place,
/// for every number the thread's `asked` mask sends it, with `x0` naming
/// an Untyped (slot 0), a badged endpoint, an empty slot and no slot.
#[test]
fn an_asked_syscall_keeps_the_policy_request_fast_paths_call() {
    let mut asked = 0;
    for number in Syscall::ALL {
        for x0 in [UNTYPED, BADGED, 200, 1 << 40] {
            let mut scene = Scene::new(rule(number, Action::Notify)).filtered();
            if scene.thread().asked & (1 << number.number()) == 0 {
                continue;
            }
            asked += 1;
            assert_eq!(scene.thread().asked, 1 << number.number(), "{number:?}");
            // A badged copy of the server's endpoint.
            let thread = scene.thread;
            let objects = &mut scene.kernel.objects;
            let (server, badged) = (
                objects.slot(scene.cnode, SERVER).unwrap(),
                objects.slot(scene.cnode, BADGED).unwrap(),
            );
            let rights = objects.lookup(server).unwrap().rights();
            objects.mint(server, badged, rights, Some(0xbad9e)).unwrap();
            let context = &mut scene.kernel.objects[thread].context;
            context.set_syscall_number(number.number());
            context.set_arg(entry::ArgIndex::X0, x0);
            context.set_arg(entry::ArgIndex::X2, 2);
            context.pc = 0x1004;
            let judged = number
                .names_capability()
                .then(|| scene.kernel.judged_capability(thread));
            let regs = scene.kernel.objects[thread].context.syscall_registers();
            let _ = super::super::test_kernel::svc_as_the_vector_takes_it(
                &mut scene.kernel,
                &mut scene.machine,
                thread,
                SVC,
            );
            let thread = scene.thread();
            let mut expected = CallSlot::POLICY_ASK;
            let call = expected.as_mut().expect("a stopped call");
            call.regs = regs;
            call.esr = SVC;
            call.capability = judged;
            assert_eq!(thread.call, expected, "{number:?} on {x0}");
            assert_eq!(thread.trace.number, number.number());
            let request = thread.policy_request().expect("a request");
            let named = judged.map_or(crate::cap::Capability::NULL, |j| j.capability);
            let (object_type, badge) = match named.is_null() {
                true => (0, 0),
                false => (u64::from(named.cap_type().raw()), named.badge()),
            };
            assert_eq!(
                (request.filter, request.object_type, request.badge),
                (0, object_type, badge),
                "{number:?} on {x0}"
            );
            if number.names_capability() && x0 == BADGED {
                assert_eq!(
                    (object_type, badge),
                    (CapType::Endpoint.raw().into(), 0xbad9e)
                );
            }
            assert_eq!(request.cookie, scene.kernel.policy_cookie);
        }
    }
    assert!(asked >= 4 * 8, "Null, Yield, Poll, Signal... on each slot");
}

/// A free slot of the scene's CNode.
const BADGED: u64 = 9;

/// The policy-only lane (`Kernel::syscall_judged`, which `syscall` and
/// the lean entry take for a thread whose only work is policy) leaves the
/// same state as the generic entry's machine (`syscall_with_work`) for
/// every verdict, each evaluated (a rule on `x2`) or given by the
/// default: the registers, the thread's state, stopped call, trace
/// progress, work and counts, who runs next, and what the machine saw.
/// By the lean entry (its unsaved slots scribbled over while it runs),
/// too: a number whose rule reads the PC, or whose verdict may be a
/// `Notify`, a `Trap` or a `Kill` (each reads the PC or ends the
/// thread), is declined with nothing done, and takes the generic entry.
#[test]
fn the_policy_only_lane_leaves_the_same_state_as_the_entry_machine_for_every_verdict() {
    use crate::kernel::tests::test_kernel::lean_half;
    use crate::kernel::LeanSyscall;
    use abi::policy::{ArgMatch, ArgOp};
    let actions = [
        Action::Allow,
        Action::Log,
        Action::Errno(ERRNO),
        Action::Trap,
        Action::Kill,
        Action::Notify,
    ];
    let numbers = [Syscall::Null, Syscall::Poll, Syscall::DebugPrint];
    let mut lane_taken = 0;
    for (action, number, on_pc) in actions
        .into_iter()
        .flat_map(|a| numbers.map(|n| (a, n)))
        .flat_map(|(a, n)| [(a, n, false), (a, n, true)])
    {
        // The rule's comparison (of `x2`, or of the PC) holds for 2 and not
        // for 3: the verdict is the rule's or the default (`Allow`),
        // evaluated.
        for x2 in [2, 3] {
            let mut states = Vec::new();
            for way in ["lane", "lean", "machine"] {
                let mut rule = rule(number, action);
                let compared = ArgMatch::register(2, u64::MAX, ArgOp::Eq, 2);
                let compared = match on_pc {
                    true => ArgMatch {
                        operand: abi::policy::Operand::Pc,
                        value: 0x1000 + 2,
                        ..compared
                    },
                    false => compared,
                };
                rule.args.push(compared).unwrap();
                let mut scene = Scene::new(rule).filtered();
                let thread = scene.thread;
                assert_eq!(scene.thread().work, WorkFlags::POLICY);
                let context = &mut scene.kernel.objects[thread].context;
                context.set_syscall_number(number.number());
                context.set_arg(entry::ArgIndex::X0, SIGNAL);
                context.set_arg(entry::ArgIndex::X2, x2);
                context.set_arg(entry::ArgIndex::X3, 5);
                context.pc = if on_pc { 0x1000 + x2 } else { 0x1004 };
                // A verdict that is the same either way (an `Allow`
                // rule) is a constant: that syscall skips the entry.
                if scene.thread().skips_entry_work(number.number()) {
                    assert_eq!(action, Action::Allow);
                    continue;
                }
                let machine = &mut scene.machine;
                match way {
                    "lane" => {
                        lane_taken += 1;
                        let _ = scene.kernel.syscall(machine, thread, SVC);
                    }
                    "lean" => {
                        let before = scene.kernel.objects[thread].stats.counts();
                        let answer = lean_half(&mut scene.kernel, machine, SVC);
                        let reads_pc =
                            on_pc || matches!(action, Action::Notify | Action::Trap | Action::Kill);
                        assert_eq!(answer == LeanSyscall::NotLean, reads_pc, "{action:?}");
                        match answer {
                            LeanSyscall::NotLean => {
                                let counts = scene.kernel.objects[thread].stats.counts();
                                assert_eq!(counts, before, "declined with nothing done");
                                let _ = scene.kernel.syscall(machine, thread, SVC);
                            }
                            LeanSyscall::Finish => {
                                let _ = scene.kernel.finish_lean_syscall(machine);
                            }
                            LeanSyscall::Returns { .. } => {}
                        }
                    }
                    _ => {
                        scene.kernel.objects[thread].stats.count_syscall();
                        scene.kernel.syscall_with_work(machine, thread, SVC, None);
                        let _ = scene.kernel.resume(machine);
                    }
                }
                states.push(scene.lane_state());
            }
            if let [lane, lean, machine] = &states[..] {
                let case = format!("{action:?} on {number:?}, x2 or PC {x2} (PC: {on_pc})");
                assert_eq!(lane, machine, "{case}");
                assert_eq!(lean, machine, "{case}, by the lean entry");
            }
        }
    }
    // Every verdict but the constant `Allow`, on each number, both ways.
    assert_eq!(lane_taken, (actions.len() - 1) * numbers.len() * 2 * 2);
}

/// A syscall stopped at its policy stage, whose server has answered, goes
/// on by the policy-only lane (`continue_call`) as by the entry machine:
/// every answer, to a `Notify` for `x2` = 2 (with a rule that refuses
/// `x2` = 7, so that new arguments are judged again), leaves the same
/// state either way.
#[test]
fn a_server_answer_goes_on_by_the_policy_only_lane_as_by_the_entry_machine() {
    use abi::policy::{ArgMatch, ArgOp};
    let answers = [
        PolicyAnswer::Allow,
        PolicyAnswer::AllowWith,
        PolicyAnswer::Refuse(ErrorCode::Denied),
        PolicyAnswer::Emulate { x0: 5, x8: 6 },
        PolicyAnswer::Kill,
    ];
    for answer in answers {
        for new_x2 in [2, 7] {
            let mut states = Vec::new();
            for by_lane in [true, false] {
                let mut notify = rule(Syscall::Poll, Action::Notify);
                notify
                    .args
                    .push(ArgMatch::register(2, u64::MAX, ArgOp::Eq, 2))
                    .unwrap();
                // A second rule of the one filter: `x2` = 7 is refused.
                let mut refuse = rule(Syscall::Poll, Action::Errno(ERRNO));
                refuse
                    .args
                    .push(ArgMatch::register(2, u64::MAX, ArgOp::Eq, 7))
                    .unwrap();
                let mut scene = Scene::with_rules([notify, refuse]).filtered();
                let thread = scene.thread;
                let context = &mut scene.kernel.objects[thread].context;
                context.set_syscall_number(Syscall::Poll.number());
                context.set_arg(entry::ArgIndex::X0, SIGNAL);
                context.set_arg(entry::ArgIndex::X2, 2);
                context.pc = 0x1004;
                let _ = scene.kernel.syscall(&mut scene.machine, thread, SVC);
                assert!(
                    scene.thread().policy_request().is_some(),
                    "{answer:?}: asked"
                );
                // The server's answer, as `ipc::answer_policy_request`
                // leaves it (new arguments in the kept registers).
                scene.kernel.objects[thread].take_kernel_message();
                scene.kernel.cancel_wait(thread);
                let t = &mut scene.kernel.objects[thread];
                let call = t.call.as_mut().unwrap();
                call.forwarded = true;
                call.waived |= 1;
                call.answer = Some(StopAnswer::Policy(answer));
                if answer == PolicyAnswer::AllowWith {
                    call.regs[2] = new_x2;
                }
                // Back on the CPU, and on as `continue_call` goes on.
                t.run();
                scene.kernel.current = Some(thread);
                let call = *t.call.as_ref().unwrap();
                t.context.set_syscall_registers(&call.regs);
                let resumed = call.resumed();
                t.call.clear();
                let machine = &mut scene.machine;
                if by_lane {
                    scene
                        .kernel
                        .continue_judged(machine, thread, call.esr, &resumed);
                } else {
                    scene
                        .kernel
                        .syscall_with_work(machine, thread, call.esr, Some(&resumed));
                }
                let _ = scene.kernel.resume(machine);
                states.push(scene.lane_state());
            }
            assert_eq!(states[0], states[1], "{answer:?}, x2 = {new_x2}");
            // And what each answer means, as a check of the check.
            let LaneState { context, state, .. } = states[0].clone();
            let expected = match (answer, new_x2) {
                (PolicyAnswer::Allow, _) | (PolicyAnswer::AllowWith, 2) => Some(0),
                (PolicyAnswer::AllowWith, _) => Some(u64::from(ERRNO)),
                (PolicyAnswer::Refuse(code), _) => Some(code.raw()),
                (PolicyAnswer::Emulate { x0, .. }, _) => Some(x0),
                (PolicyAnswer::Kill, _) => None,
            };
            match expected {
                Some(x0) => assert_eq!(context.result(), x0, "{answer:?}, x2 = {new_x2}"),
                None => assert!(
                    matches!(state, ThreadState::Exited(_) | ThreadState::Free),
                    "{answer:?}: {state:?}"
                ),
            }
        }
    }
}

/// What a call stopped at its policy stage keeps of the slot its `x0`
/// names (`StoppedCall::capability`, taken by `Kernel::stop_call`):
/// nothing for a syscall that names no capability (a `Null` asked of its
/// server), which runs as allowed whatever the slot holds by then; the
/// capability for a syscall that names one (a `Poll`), which is cancelled
/// if the slot has changed when the call goes on.
#[test]
fn a_stopped_call_keeps_the_named_capability_only_for_a_syscall_that_names_one() {
    for (number, kept) in [(Syscall::Null, false), (Syscall::Poll, true)] {
        let mut scene = Scene::new(rule(number, Action::Notify)).filtered();
        let thread = scene.thread;
        let context = &mut scene.kernel.objects[thread].context;
        context.set_syscall_number(number.number());
        context.set_arg(entry::ArgIndex::X0, SIGNAL);
        let _ = scene.kernel.syscall(&mut scene.machine, thread, SVC);
        assert!(scene.thread().policy_request().is_some(), "{number:?}");
        let call = scene.thread().call.as_ref().expect("a stopped call");
        assert_eq!(call.capability.is_some(), kept, "{number:?}");
        // The slot changes while the server decides; it allows.
        scene.destroy_through_the_kernel(SIGNAL);
        scene.server_allows();
        let expected = if kept {
            ErrorCode::Interrupted
        } else {
            ErrorCode::Ok
        };
        assert_eq!(
            scene.thread().context.result(),
            expected.raw(),
            "{number:?}"
        );
        assert!(scene.thread().call.as_ref().is_none(), "{number:?}");
    }
}
