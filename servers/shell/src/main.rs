//! The shell: a prompt on the console (docs/shell.md). It waits on its
//! stops endpoint with its events notification bound, so one `Recv`
//! brings whatever comes next: typed input, a trace stop of a task it
//! traces, or the audit ring's signal. Commands that show or change
//! tasks ask the supervisor (`abi::control`); the shell itself holds only
//! the console, that request capability, its endpoint, its notification,
//! its own TCB and the audit ring (systems/shell.toml).
#![no_std]
#![no_main]

use abi::audit::{CONSUMED_OFFSET, DROPPED_OFFSET, NEXT_SEQUENCE_OFFSET, WRITTEN_OFFSET};
use abi::control::{ControlError, Request, TaskName, MAX_POLICY_BYTES, MAX_WORDS};
use abi::export::Event;
use abi::inspect::{CapInfo, ThreadInfo, CAP_INFO_WORDS, THREAD_INFO_WORDS};
use abi::message::NOTIFICATION_LABEL;
use abi::{IPC_BUFFER_SEND_CAPS_WORD, REGISTER_MESSAGE_WORDS};
use audit_server::{Entry, Line, Reader};
use core::fmt::Write;
use sdk::console::LineBuffer;
use sdk::console_input;
use sdk::ipc::{self, Cptr, Message};
use sdk::tcb::Tcb;
use sdk::trace::Stop;
use sdk::vspace::MappedFrame;
use shell::command::{self, AuditView, Command, HELP};
use shell::line::{Edit, LineEditor};
use shell::show::{CapRow, ThreadRow, CAP_HEADER, THREAD_HEADER};
use shell::{slots, AUDIT_BIT, CONSOLE_BIT, PROMPT, RING_ADDRESS};
use tracer::Tracer;

/// What the shell is doing between prompts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Reading a command line.
    Prompt,
    /// Showing trace lines until Ctrl-C.
    Tracing,
    /// Showing audit records until Ctrl-C.
    Tailing,
}

/// Thread names the shell has learned, by number.
const MAX_NAMES: usize = 64;

struct Shell {
    editor: LineEditor,
    mode: Mode,
    tracer: Tracer,
    names: heapless::Vec<(u32, TaskName), MAX_NAMES>,
    /// Trace lines and audit records go out as frames (`abi::export`).
    exporting: bool,
    ring: MappedFrame,
    reader: Reader,
    /// The ring's `dropped` counter when last looked at.
    dropped_seen: u64,
}

/// Prints one line (untagged: the shell's console has the read right).
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut line = LineBuffer::default();
        let _ = writeln!(line, $($arg)*);
        let _ = line.flush();
    }};
}

#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let console = slots::CONSOLE;
    if Tcb(Cptr(slots::OWN_TCB))
        .bind_notification(Some(Cptr(slots::EVENTS)))
        .is_err()
        || console_input::set_notification(console, slots::EVENTS).is_err()
    {
        say!("shell: cannot take the console's input (does the description give it?)");
        return 1;
    }
    let mut shell = Shell {
        editor: LineEditor::new(),
        mode: Mode::Prompt,
        tracer: Tracer::new(),
        names: heapless::Vec::new(),
        exporting: false,
        ring: MappedFrame::described(RING_ADDRESS, true),
        reader: Reader::new(),
        dropped_seen: 0,
    };
    say!("Portcullis shell: `help` lists the commands.");
    print(PROMPT.as_bytes());
    loop {
        let received = match ipc::recv(Cptr(slots::STOPS)) {
            Ok(received) => received,
            Err(error) => {
                say!("shell: its endpoint failed: {}", error.name());
                return 1;
            }
        };
        if received.message.info.label() == NOTIFICATION_LABEL {
            if received.badge & AUDIT_BIT != 0 && shell.mode == Mode::Tailing {
                shell.show_audit();
            }
            if received.badge & CONSOLE_BIT != 0 {
                shell.take_input();
            }
        } else if let Some(stop) = Stop::decode(&received) {
            shell.stop(stop);
        } else {
            // Nothing else is sent here; a caller must not wait for us.
            let _ = ipc::reply(&Message::new(0, &[]));
        }
    }
}

/// Writes bytes to the console as they are (the echo, the prompt).
fn print(bytes: &[u8]) {
    let _ = sdk::syscall::debug_print_raw_via(
        slots::CONSOLE,
        bytes.as_ptr() as u64,
        bytes.len() as u64,
    );
}

impl Shell {
    /// Everything typed since the last look.
    fn take_input(&mut self) {
        let mut bytes = [0u8; 64];
        loop {
            let Ok(read) = console_input::read(slots::CONSOLE, &mut bytes) else {
                return;
            };
            if read.dropped > 0 {
                say!("shell: {} typed bytes were lost", read.dropped);
            }
            if read.bytes == 0 {
                return;
            }
            for &byte in &bytes[..read.bytes] {
                self.key(byte);
            }
        }
    }

    /// One typed byte.
    fn key(&mut self, byte: u8) {
        if self.mode != Mode::Prompt {
            if byte == abi::console::CTRL_C {
                self.mode = Mode::Prompt;
                say!("^C");
                print(PROMPT.as_bytes());
            }
            return;
        }
        match self.editor.feed(byte) {
            Edit::Added(byte) => print(&[byte]),
            Edit::Erased => print(b"\x08 \x08"),
            Edit::Interrupt => {
                self.editor.clear();
                say!("^C");
                print(PROMPT.as_bytes());
            }
            Edit::Enter => {
                print(b"\n");
                let mut line = heapless::String::<{ shell::line::MAX_LINE }>::new();
                let _ = line.push_str(self.editor.line());
                self.editor.clear();
                self.run(&line);
                if self.mode == Mode::Prompt {
                    print(PROMPT.as_bytes());
                }
            }
            Edit::Ignored => {}
        }
    }

    /// Runs one command line.
    fn run(&mut self, line: &str) {
        let command = match command::parse(line) {
            Ok(command) => command,
            Err(mistake) => {
                say!("shell: {mistake}");
                return;
            }
        };
        let outcome = match command {
            Command::Empty => Ok(()),
            Command::Help => {
                for (usage, what) in HELP {
                    say!("  {usage:<20} {what}");
                }
                Ok(())
            }
            Command::Ps => self.ps(),
            Command::Caps(task) => self.caps(task),
            Command::Trace(task, on) => self.trace(task, on),
            Command::Policy(task, rules) => self.policy(task, rules),
            Command::Audit(view) => {
                self.audit(view);
                Ok(())
            }
            Command::Kill(task) => {
                named(task).and_then(|task| ask(&Request::Kill { task }, &mut [], false))
            }
            Command::Restart(task) => {
                named(task).and_then(|task| ask(&Request::Restart { task }, &mut [], false))
            }
            Command::Export(on) => {
                self.export(on);
                Ok(())
            }
            Command::Exit(status) => sdk::syscall::exit(status),
        };
        if let Err(error) = outcome {
            say!("shell: {}", error.describe());
        }
    }

    /// `ps`.
    fn ps(&mut self) -> Result<(), ControlError> {
        say!("{THREAD_HEADER}");
        let mut first = 0;
        while let Some(info) = thread(first)? {
            say!("{}", ThreadRow(&info));
            self.learn(&info);
            first = u64::from(info.number) + 1;
        }
        Ok(())
    }

    /// `caps TASK`: the capabilities of the live thread named TASK (the
    /// newest, if a restart left an ended one behind).
    fn caps(&mut self, task: &str) -> Result<(), ControlError> {
        let number = self.number_of(task)?.ok_or(ControlError::NoSuchTask)?;
        say!("{CAP_HEADER}");
        let mut first = 0;
        while let Some(info) = cap(number, first)? {
            say!("{}", CapRow(&info));
            first = info.slot + 1;
        }
        Ok(())
    }

    /// The number of the newest thread named `task` that has not ended.
    fn number_of(&mut self, task: &str) -> Result<Option<u32>, ControlError> {
        let mut first = 0;
        let mut found = None;
        while let Some(info) = thread(first)? {
            self.learn(&info);
            if info.name() == task && info.end.is_none() {
                found = Some(info.number);
            }
            first = u64::from(info.number) + 1;
        }
        Ok(found)
    }

    /// Remembers a thread's name for trace lines.
    fn learn(&mut self, info: &ThreadInfo) {
        let Some(name) = TaskName::new(info.name()) else {
            return;
        };
        match self.names.iter_mut().find(|(n, _)| *n == info.number) {
            Some(known) => known.1 = name,
            None => {
                if self.names.is_full() {
                    self.names.remove(0);
                }
                let _ = self.names.push((info.number, name));
            }
        }
    }

    /// A thread's name, asking the supervisor if it is new (`None`: the
    /// thread is gone).
    fn name_of(&mut self, number: u32) -> Option<TaskName> {
        if let Some((_, name)) = self.names.iter().find(|(n, _)| *n == number) {
            return Some(*name);
        }
        let info = thread(u64::from(number)).ok().flatten()?;
        if info.number != number {
            return None;
        }
        self.learn(&info);
        if self.exporting {
            export_thread(&info);
        }
        TaskName::new(info.name())
    }

    /// `trace TASK on|off`. On: the supervisor attaches the shell's
    /// endpoint as TASK's tracer, and its lines show until Ctrl-C (the
    /// task stays traced; `off` detaches it).
    fn trace(&mut self, task: &str, on: bool) -> Result<(), ControlError> {
        let task = named(task)?;
        if !on {
            return ask(&Request::TraceOff { task }, &mut [], false);
        }
        ask(&Request::TraceOn { task }, &mut [], true)?;
        say!(
            "shell: tracing {} (Ctrl-C for the prompt; `trace {} off` stops it)",
            task.as_str(),
            task.as_str()
        );
        self.mode = Mode::Tracing;
        Ok(())
    }

    /// A trace stop: answered at once (the traced thread goes on), then
    /// shown if the shell is showing trace lines.
    fn stop(&mut self, stop: Stop) {
        let time = stop.time;
        let _ = ipc::reply(&sdk::trace::resume(false));
        let Some(event) = self.tracer.stop(&stop) else {
            if self.mode == Mode::Tracing && self.exporting {
                self.export_stop(&stop, time);
            }
            return;
        };
        if self.mode != Mode::Tracing {
            return;
        }
        if self.exporting {
            self.export_stop(&stop, time);
            return;
        }
        let name = self.name_of(stop.thread as u32);
        let name = name.as_ref().map_or("?", TaskName::as_str);
        say!("{}", self.tracer.named_line(&event, name));
    }

    /// A stop as a frame.
    fn export_stop(&mut self, stop: &Stop, time: u64) {
        let thread = stop.thread as u32;
        let _ = self.name_of(thread);
        let event = if stop.is_exit() {
            Event::SyscallExit {
                time,
                thread,
                number: stop.number,
                result: stop.regs[0],
                second: stop.regs[8],
            }
        } else if stop.is_entry() {
            let mut args = [0u64; 6];
            args.copy_from_slice(&stop.regs[..6]);
            Event::SyscallEntry {
                time,
                thread,
                number: stop.number,
                args,
            }
        } else {
            return;
        };
        let _ = console_input::export(slots::CONSOLE, &event);
    }

    /// `policy TASK RULES`: the rules compiled here (a mistake is shown at
    /// its column in the typed line), then attached by the supervisor.
    fn policy(&mut self, task: &str, rules: &str) -> Result<(), ControlError> {
        let task = named(task)?;
        let mut text = heapless::String::<{ shell::line::MAX_LINE + 64 }>::new();
        let Some(starts) = command::rule_lines(rules, &mut text) else {
            say!("shell: too many rules");
            return Ok(());
        };
        let description = match abi::rules::filter_description(&text) {
            Ok(description) => description,
            Err(error) => {
                let line = error.line.saturating_sub(1);
                let start = starts.get(line).copied().unwrap_or(0);
                say!(
                    "shell: rule {}, column {}: {}",
                    error.line,
                    start + error.column,
                    error.message
                );
                return Ok(());
            }
        };
        if description.asks_a_server() {
            say!("shell: a filter attached from the shell has no policy server: `notify` cannot be used");
            return Ok(());
        }
        let mut bytes = [0u8; MAX_POLICY_BYTES];
        let Ok(encoded) = abi::policy::encode(&description, &mut bytes) else {
            say!("shell: the rules do not fit in one request");
            return Ok(());
        };
        ask(
            &Request::Policy {
                task,
                description: encoded,
            },
            &mut [],
            false,
        )?;
        say!("shell: filter attached to {}", task.as_str());
        Ok(())
    }

    /// `audit stats` / `audit tail`.
    fn audit(&mut self, view: AuditView) {
        match view {
            AuditView::Stats => {
                let ring = &self.ring;
                say!(
                    "audit: {} written, {} read, {} dropped, next sequence {}; this shell read {} ({} lost)",
                    ring.read_u64(WRITTEN_OFFSET),
                    ring.read_u64(CONSUMED_OFFSET),
                    ring.read_u64(DROPPED_OFFSET),
                    ring.read_u64(NEXT_SEQUENCE_OFFSET),
                    self.reader.records,
                    self.reader.missing
                );
            }
            AuditView::Tail => {
                say!("shell: audit records as they come (Ctrl-C for the prompt)");
                self.mode = Mode::Tailing;
                self.show_audit();
            }
        }
    }

    /// Shows every record waiting in the ring.
    fn show_audit(&mut self) {
        let dropped = self.ring.read_u64(DROPPED_OFFSET);
        if dropped > self.dropped_seen {
            let count = dropped - self.dropped_seen;
            self.dropped_seen = dropped;
            if self.exporting {
                let time = sdk::time::clock::now().0;
                let _ = console_input::export(slots::CONSOLE, &Event::AuditDropped { time, count });
            } else {
                say!("audit: {count} records dropped");
            }
        }
        while let Some(entry) = self.reader.next(&mut self.ring) {
            match entry {
                Entry::Record { record, .. } if self.exporting => {
                    let _ = self.name_of(record.thread);
                    let _ = console_input::export(slots::CONSOLE, &Event::Audit(record));
                }
                Entry::Record { record, gap } => {
                    if gap > 0 {
                        say!("audit: {gap} records lost before #{}", record.sequence);
                    }
                    let name = self.name_of(record.thread);
                    let name = name.as_ref().map_or("?", TaskName::as_str);
                    say!("audit [{name}#{}] {}", record.thread, Line(&record));
                }
                Entry::Garbled { index } => say!("audit: record {index} is garbled"),
            }
        }
    }

    /// `export on|off`. On: a clock frame and every thread's name first.
    fn export(&mut self, on: bool) {
        self.exporting = on;
        if !on {
            say!("shell: export off");
            return;
        }
        say!("shell: export on: trace lines and audit records go out as frames");
        let clock = Event::Clock {
            frequency: sdk::time::clock::frequency(),
            time: sdk::time::clock::now().0,
        };
        let _ = console_input::export(slots::CONSOLE, &clock);
        let mut first = 0;
        while let Ok(Some(info)) = thread(first) {
            export_thread(&info);
            self.learn(&info);
            first = u64::from(info.number) + 1;
        }
    }
}

/// A thread's name as a frame.
fn export_thread(info: &ThreadInfo) {
    let mut name = heapless::String::new();
    let _ = name.push_str(info.name());
    let event = Event::Thread {
        thread: info.number,
        name,
    };
    let _ = console_input::export(slots::CONSOLE, &event);
}

/// A name typed, as requests carry it.
fn named(task: &str) -> Result<TaskName, ControlError> {
    TaskName::new(task).ok_or(ControlError::NoSuchTask)
}

/// The thread with the smallest number at or above `first`.
fn thread(first: u64) -> Result<Option<ThreadInfo>, ControlError> {
    let mut words = [0u64; THREAD_INFO_WORDS];
    let length = ask_words(&Request::Thread { first }, &mut words, false)?;
    if length < THREAD_INFO_WORDS {
        return Ok(None);
    }
    ThreadInfo::decode(&words)
        .map(Some)
        .ok_or(ControlError::BadRequest)
}

/// The first capability at or above slot `first` of thread `number`.
fn cap(number: u32, first: u64) -> Result<Option<CapInfo>, ControlError> {
    let mut words = [0u64; CAP_INFO_WORDS];
    let length = ask_words(
        &Request::Caps {
            thread: number,
            first,
        },
        &mut words,
        false,
    )?;
    if length < CAP_INFO_WORDS {
        return Ok(None);
    }
    CapInfo::decode(&words)
        .map(Some)
        .ok_or(ControlError::BadRequest)
}

/// Asks the supervisor; the answer's words go to `answer`.
fn ask(request: &Request<'_>, answer: &mut [u64], with_endpoint: bool) -> Result<(), ControlError> {
    ask_words(request, answer, with_endpoint).map(|_| ())
}

/// Asks the supervisor (sending the stops endpoint with it if
/// `with_endpoint`): the number of words in the answer.
fn ask_words(
    request: &Request<'_>,
    answer: &mut [u64],
    with_endpoint: bool,
) -> Result<usize, ControlError> {
    let mut words = [0u64; MAX_WORDS];
    let (label, length) = request.encode(&mut words).ok_or(ControlError::BadRequest)?;
    for (i, word) in words
        .iter()
        .enumerate()
        .take(length)
        .skip(REGISTER_MESSAGE_WORDS)
    {
        ipc::set_buffer_word(i, *word);
    }
    let mut message =
        Message::new(label, &words[..length.min(REGISTER_MESSAGE_WORDS)]).with_length(length as u8);
    if with_endpoint {
        ipc::set_buffer_word(IPC_BUFFER_SEND_CAPS_WORD, slots::STOPS);
        message.info = message.info.with_caps(1);
    }
    let reply = ipc::call(Cptr(slots::SUPERVISOR), &message).map_err(ControlError::Kernel)?;
    ControlError::from_code(reply.info.label())?;
    let length = usize::from(reply.info.length()).min(answer.len());
    for (i, word) in answer.iter_mut().enumerate().take(length) {
        *word = if i < REGISTER_MESSAGE_WORDS {
            reply.words[i]
        } else {
            ipc::buffer_word(i)
        };
    }
    Ok(length)
}
