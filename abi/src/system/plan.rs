//! The plan: what the root task builds, as the host tool checked and laid
//! it out from a system description (`docs/systems.md`).
//!
//! The plan is postcard-encoded in pieces, one after another: a
//! [`PlanHead`], then `head.objects` [`ObjectPlan`]s, then `head.tasks`
//! [`TaskPlan`]s. The root decodes one piece at a time (a task's plan is
//! a kilobyte or two; the root never holds them all), and refers to
//! objects and tasks by their index in that order. Every string and
//! byte string borrows from the image.
//!
//! [`Plan::open`] checks the whole plan once: every piece decodes, every
//! index names an object or task of the right kind, every file lies in
//! the image. What it does not check (it needs the kernel's answer) the
//! root reports as it builds.

use super::image::{ImageError, ImageHeader, HEADER_BYTES};
use serde::{Deserialize, Serialize};

/// Most tasks a system has.
pub const MAX_TASKS: usize = 32;
/// Most objects (endpoints, notifications, memory regions, files) a
/// system has.
pub const MAX_OBJECTS: usize = 64;
/// Most capabilities the plan gives one task.
pub const MAX_TASK_CAPS: usize = 24;
/// Most memory regions mapped into one task.
pub const MAX_TASK_MAPPINGS: usize = 8;
/// Most filters attached to one task.
pub const MAX_TASK_FILTERS: usize = 4;
/// Most IRQs a system's tasks hold.
pub const MAX_IRQS: usize = 16;
/// The largest task memory (`2^MAX_MEMORY_BITS` bytes, the user half),
/// and the most all tasks' memory, once more per restart, may add up to:
/// the root's sums of them cannot overflow.
pub const MAX_MEMORY_BITS: u8 = 47;
/// The smallest task memory, and the smallest Untyped capability: a page.
pub const MIN_MEMORY_BITS: u8 = 12;
/// The CNode radixes a task may have (8 ..= 4096 slots; 4096 is the
/// root's, `crate::bootinfo::ROOT_CNODE_RADIX`).
pub const TASK_CNODE_RADIXES: core::ops::RangeInclusive<u8> = 3..=12;
/// The largest stack, in pages (1 MiB).
pub const MAX_STACK_PAGES: u16 = 256;

/// A name of the system or of an object: 1 to 32 letters, digits, `-`
/// and `_` (so a console line that names it says nothing else).
pub fn is_object_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// A file of the image: `bytes` bytes at `offset` from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRef {
    /// Offset from the image's first byte (a multiple of
    /// `image::FILE_ALIGN`).
    pub offset: u32,
    /// Length in bytes.
    pub bytes: u32,
}

/// The plan's first piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanHead<'a> {
    /// The system's name (for console lines).
    pub name: &'a str,
    /// How many [`ObjectPlan`]s follow.
    pub objects: u16,
    /// How many [`TaskPlan`]s follow them.
    pub tasks: u16,
}

/// An object the root makes once, from its own memory, before any task:
/// tasks share it through the capabilities the plan gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObjectPlan<'a> {
    /// An endpoint.
    Endpoint {
        /// Its name in the description.
        name: &'a str,
    },
    /// A notification.
    Notification {
        /// Its name in the description.
        name: &'a str,
    },
    /// Zeroed RAM shared by the tasks that map it.
    Memory {
        /// Its name in the description.
        name: &'a str,
        /// Its size in pages.
        pages: u32,
    },
    /// Device memory (MMIO) at a physical address, mapped Device-nGnRE.
    Device {
        /// Its name in the description.
        name: &'a str,
        /// Its physical address (page-aligned).
        physical: u64,
        /// Its size in pages.
        pages: u32,
    },
    /// A file of the image (a rules file, data), read-only for every task
    /// that maps it: the root copies it into Frames; its first eight bytes
    /// there hold its length (little-endian), the file follows.
    File {
        /// Its name in the description.
        name: &'a str,
        /// The file.
        file: FileRef,
    },
}

impl ObjectPlan<'_> {
    /// Its name in the description.
    pub fn name(&self) -> &str {
        match self {
            ObjectPlan::Endpoint { name }
            | ObjectPlan::Notification { name }
            | ObjectPlan::Memory { name, .. }
            | ObjectPlan::Device { name, .. }
            | ObjectPlan::File { name, .. } => name,
        }
    }

    /// Pages a task maps when it maps the whole object (`None`: not
    /// mappable).
    pub fn pages(&self) -> Option<u64> {
        match *self {
            ObjectPlan::Memory { pages, .. } | ObjectPlan::Device { pages, .. } => {
                Some(u64::from(pages))
            }
            ObjectPlan::File { file, .. } => Some((u64::from(file.bytes) + 8).div_ceil(4096)),
            ObjectPlan::Endpoint { .. } | ObjectPlan::Notification { .. } => None,
        }
    }

    fn is_endpoint(&self) -> bool {
        matches!(self, ObjectPlan::Endpoint { .. })
    }

    fn is_notification(&self) -> bool {
        matches!(self, ObjectPlan::Notification { .. })
    }

    /// Whether a task may map it writable (never a file).
    fn is_writable(&self) -> bool {
        matches!(self, ObjectPlan::Memory { .. } | ObjectPlan::Device { .. })
    }

    /// Its sizes are ones the root can make: at least a page, and a
    /// device's pages do not run past the end of the address space.
    fn sizes_ok(&self) -> bool {
        match *self {
            ObjectPlan::Endpoint { .. } | ObjectPlan::Notification { .. } => true,
            ObjectPlan::Memory { pages, .. } => pages > 0,
            ObjectPlan::Device {
                physical, pages, ..
            } => {
                pages > 0
                    && physical.is_multiple_of(4096)
                    && physical.checked_add(u64::from(pages) * 4096).is_some()
            }
            ObjectPlan::File { .. } => true,
        }
    }
}

/// A badged use of an endpoint or notification: `badge` 0 is no badge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectUse {
    /// The object's index.
    pub object: u16,
    /// The badge (0: none).
    pub badge: u64,
}

/// Where a capability of a task comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CapSource {
    /// An endpoint or notification of the plan, maybe badged.
    Object(ObjectUse),
    /// The debug console.
    Console,
    /// The root's supervisor endpoint, badged `control::CONTROL_BADGE` |
    /// the task's index + 1: the task may ask the supervisor to show and
    /// change the system (`abi::control`).
    Supervisor,
    /// An IrqHandler for interrupt `intid`, its interrupts signalled to
    /// a notification of the plan.
    Irq {
        /// The interrupt ID.
        intid: u32,
        /// The notification (and the badge its signals carry).
        notification: ObjectUse,
    },
    /// Another task's TCB (or the task's own).
    Tcb {
        /// The task's index.
        task: u16,
    },
    /// The task's own VSpace.
    OwnVSpace,
    /// An Untyped of `2^bits` bytes of the task's own, for what it makes
    /// at run time (carved from the task's memory).
    Untyped {
        /// log2 of its size.
        bits: u8,
    },
}

/// One capability the plan gives a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapPlan {
    /// The slot of the task's CNode.
    pub slot: u32,
    /// What it is.
    pub source: CapSource,
    /// Its rights (`abi::cap::Rights` bits).
    pub rights: u8,
}

/// A memory object mapped into a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingPlan {
    /// The object (memory, device or file).
    pub object: u16,
    /// Where its first page goes (page-aligned).
    pub address: u64,
    /// Writable (never for a file; never executable).
    pub writable: bool,
}

/// A filter attached to a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterPlan<'a> {
    /// The `abi::policy::FilterDescription`, postcard-encoded (the
    /// host compiled it from the rule text and checked it).
    pub description: &'a [u8],
    /// The endpoint its `Notify` rules ask (`None`: it has none).
    pub server: Option<ObjectUse>,
}

/// A task's audit ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditPlan {
    /// The ring: a one-page memory object the audit server maps.
    pub ring: u16,
    /// The notification signalled as records are written.
    pub notification: ObjectUse,
    /// Lossless (the task waits for room) rather than lossy.
    pub lossless: bool,
    /// The badge in every record.
    pub badge: u64,
}

/// What the root does when a task ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Restart {
    /// Leave it ended.
    Never,
    /// Build it again (fresh memory) when it was killed or faulted, at
    /// most `max` times.
    OnFault {
        /// Most restarts.
        max: u32,
    },
    /// Build it again however it ended, at most `max` times.
    Always {
        /// Most restarts.
        max: u32,
    },
}

/// One task: its program, its memory and what it is given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskPlan<'a> {
    /// Its name (`abi::tcb::is_valid_name`).
    pub name: &'a str,
    /// Its ELF file.
    pub elf: FileRef,
    /// Its priority.
    pub priority: u8,
    /// Its MCP.
    pub mcp: u8,
    /// Pages of stack below `abi::USER_STACK_TOP`.
    pub stack_pages: u16,
    /// Its memory: an Untyped of `2^memory_bits` bytes every object of the
    /// task is made from.
    pub memory_bits: u8,
    /// Its CNode has `2^cnode_radix` slots.
    pub cnode_radix: u8,
    /// Its `x0` at start.
    pub argument: u64,
    /// A privileged task is given what the kernel gave the root, in the
    /// root's slot layout (`abi::bootinfo`), with this command line: the
    /// root's Untyped left after every other task, the device memory
    /// nobody mapped, the IrqControl and the timer's IrqHandler. At most
    /// one task is privileged; it is built last.
    pub privileged: Option<&'a str>,
    /// Where its faults and its end go (`None`: to the root, which
    /// supervises it).
    pub fault_handler: Option<ObjectUse>,
    /// What the root does when it ends.
    pub restart: Restart,
    /// When it ends for good, the system ends with its status.
    pub ends_system: bool,
    /// Its capabilities (its own CNode is always in slot 0).
    pub caps: heapless::Vec<CapPlan, MAX_TASK_CAPS>,
    /// Memory mapped into it.
    pub mappings: heapless::Vec<MappingPlan, MAX_TASK_MAPPINGS>,
    /// Its filters, attached in this order.
    #[serde(borrow)]
    pub filters: heapless::Vec<FilterPlan<'a>, MAX_TASK_FILTERS>,
    /// The endpoint its trace stops go to.
    pub tracer: Option<ObjectUse>,
    /// Its audit ring.
    pub audit: Option<AuditPlan>,
}

/// A plan checked by [`Plan::open`].
#[derive(Clone, Copy, Debug)]
pub struct Plan<'a> {
    /// The image the plan is in (files are read from it).
    image: &'a [u8],
    /// The first piece.
    pub head: PlanHead<'a>,
    /// The bytes after the head: the objects, then the tasks.
    pieces: &'a [u8],
}

/// Decodes one piece from the front of `bytes`.
fn take<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, &'a [u8]), ImageError> {
    postcard::take_from_bytes(bytes).map_err(|_| ImageError::BadPlan)
}

impl<'a> Plan<'a> {
    /// Opens the image in `image` (all of it: header, checksum, plan) and
    /// checks the plan whole.
    pub fn open(image: &'a [u8]) -> Result<Plan<'a>, ImageError> {
        let header = ImageHeader::parse(image)?;
        header.check(image)?;
        let image = &image[..header.total_bytes as usize];
        let start = header.plan_offset as usize;
        let bytes = &image[start..start + header.plan_bytes as usize];
        let (head, pieces): (PlanHead<'a>, _) = take(bytes)?;
        let plan = Plan {
            image,
            head,
            pieces,
        };
        plan.check()?;
        Ok(plan)
    }

    /// The bytes of a file of the image.
    pub fn file(&self, file: FileRef) -> Option<&'a [u8]> {
        let start = file.offset as usize;
        self.image
            .get(start..start.checked_add(file.bytes as usize)?)
    }

    /// The objects, in order.
    pub fn objects(&self) -> Pieces<'a, ObjectPlan<'a>> {
        Pieces {
            bytes: self.pieces,
            left: self.head.objects,
            _piece: core::marker::PhantomData,
        }
    }

    /// The tasks, in order.
    pub fn tasks(&self) -> Pieces<'a, TaskPlan<'a>> {
        let mut objects = self.objects();
        for _ in objects.by_ref() {}
        Pieces {
            bytes: objects.bytes,
            left: self.head.tasks,
            _piece: core::marker::PhantomData,
        }
    }

    /// Object `index`.
    pub fn object(&self, index: u16) -> Option<ObjectPlan<'a>> {
        self.objects().nth(usize::from(index))
    }

    /// Task `index`.
    pub fn task(&self, index: u16) -> Option<TaskPlan<'a>> {
        self.tasks().nth(usize::from(index))
    }

    fn check(&self) -> Result<(), ImageError> {
        let bad = Err(ImageError::BadPlan);
        if usize::from(self.head.objects) > MAX_OBJECTS
            || usize::from(self.head.tasks) > MAX_TASKS
            || !is_object_name(self.head.name)
        {
            return bad;
        }
        let mut kinds: heapless::Vec<ObjectPlan<'a>, MAX_OBJECTS> = heapless::Vec::new();
        let mut objects = self.objects();
        for _ in 0..self.head.objects {
            let object = objects.try_next()?.ok_or(ImageError::BadPlan)?;
            if let ObjectPlan::File { file, .. } = object {
                if self.file(file).is_none() || (file.offset as usize) < HEADER_BYTES {
                    return bad;
                }
            }
            if !is_object_name(object.name()) || !object.sizes_ok() {
                return bad;
            }
            kinds.push(object).map_err(|_| ImageError::BadPlan)?;
        }
        let kind = |index: u16| kinds.get(usize::from(index));
        let endpoint = |u: &ObjectUse| kind(u.object).is_some_and(|o| o.is_endpoint());
        let notification = |u: &ObjectUse| kind(u.object).is_some_and(|o| o.is_notification());
        let mut tasks = Pieces::<TaskPlan<'a>> {
            bytes: objects.bytes,
            left: self.head.tasks,
            _piece: core::marker::PhantomData,
        };
        let mut privileged = 0;
        // Each interrupt is given once: the root makes one IrqHandler
        // per interrupt, bound to the first notification that names it.
        let mut irqs: heapless::Vec<u32, MAX_IRQS> = heapless::Vec::new();
        // Every task's memory, once more per restart (the root carves
        // the sum).
        let mut memory: u64 = 0;
        for _ in 0..self.head.tasks {
            let task = tasks.try_next()?.ok_or(ImageError::BadPlan)?;
            privileged += usize::from(task.privileged.is_some());
            for cap in &task.caps {
                if let CapSource::Irq { intid, .. } = cap.source {
                    if irqs.contains(&intid) || irqs.push(intid).is_err() {
                        return bad;
                    }
                }
            }
            let caps_ok = task.caps.iter().all(|cap| match &cap.source {
                CapSource::Object(u) => endpoint(u) || notification(u),
                CapSource::Irq {
                    notification: n, ..
                } => notification(n),
                CapSource::Tcb { task } => *task < self.head.tasks,
                CapSource::Untyped { bits } => (MIN_MEMORY_BITS..task.memory_bits).contains(bits),
                CapSource::Console | CapSource::Supervisor | CapSource::OwnVSpace => true,
            });
            let maps_ok = task.mappings.iter().all(|m| {
                kind(m.object)
                    .is_some_and(|o| o.pages().is_some() && (!m.writable || o.is_writable()))
            });
            let filters_ok = task
                .filters
                .iter()
                .all(|f| f.server.as_ref().is_none_or(endpoint));
            let audit_ok = task.audit.as_ref().is_none_or(|a| {
                notification(&a.notification)
                    && matches!(kind(a.ring), Some(ObjectPlan::Memory { pages: 1, .. }))
            });
            let restarts = match task.restart {
                Restart::Never => 0,
                Restart::OnFault { max } | Restart::Always { max } => u64::from(max),
            };
            // Only the tasks the root supervises (their ends come to it)
            // are restarted or end the system, and never the privileged.
            let supervised = task.fault_handler.is_none();
            let restart_ok = restarts == 0 || (supervised && task.privileged.is_none());
            let sizes_ok = (MIN_MEMORY_BITS..=MAX_MEMORY_BITS).contains(&task.memory_bits)
                && TASK_CNODE_RADIXES.contains(&task.cnode_radix)
                && (1..=MAX_STACK_PAGES).contains(&task.stack_pages);
            if sizes_ok {
                memory = (1u64 << task.memory_bits)
                    .checked_mul(1 + restarts)
                    .and_then(|bytes| memory.checked_add(bytes))
                    .filter(|&total| total <= 1 << MAX_MEMORY_BITS)
                    .ok_or(ImageError::BadPlan)?;
            }
            let ok = self.file(task.elf).is_some()
                && crate::tcb::is_valid_name(task.name.as_bytes())
                && sizes_ok
                && restart_ok
                && (supervised || !task.ends_system)
                && caps_ok
                && maps_ok
                && filters_ok
                && audit_ok
                && task.fault_handler.as_ref().is_none_or(endpoint)
                && task.tracer.as_ref().is_none_or(endpoint);
            if !ok {
                return bad;
            }
        }
        if privileged > 1 || !tasks.bytes.is_empty() {
            return bad;
        }
        Ok(())
    }
}

/// The pieces of one kind, decoded one at a time.
pub struct Pieces<'a, T> {
    bytes: &'a [u8],
    left: u16,
    _piece: core::marker::PhantomData<T>,
}

impl<'a, T: Deserialize<'a>> Pieces<'a, T> {
    fn try_next(&mut self) -> Result<Option<T>, ImageError> {
        if self.left == 0 {
            return Ok(None);
        }
        let (piece, rest) = take(self.bytes)?;
        self.bytes = rest;
        self.left -= 1;
        Ok(Some(piece))
    }
}

impl<'a, T: Deserialize<'a>> Iterator for Pieces<'a, T> {
    type Item = T;

    /// The next piece (a plan [`Plan::open`] accepted decodes whole).
    fn next(&mut self) -> Option<T> {
        self.try_next().ok().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::super::image::{checksum, FILE_ALIGN};
    use super::*;
    use std::vec::Vec;

    fn piece<T: Serialize>(value: &T, out: &mut Vec<u8>) {
        let mut buffer = [0u8; 4096];
        out.extend_from_slice(postcard::to_slice(value, &mut buffer).unwrap());
    }

    /// An image of `objects` and `tasks`, with `elf` as the one file.
    fn image(objects: &[ObjectPlan<'_>], tasks: &[TaskPlan<'_>], elf: &[u8]) -> Vec<u8> {
        let mut plan = Vec::new();
        let head = PlanHead {
            name: "test",
            objects: objects.len() as u16,
            tasks: tasks.len() as u16,
        };
        piece(&head, &mut plan);
        objects.iter().for_each(|o| piece(o, &mut plan));
        tasks.iter().for_each(|t| piece(t, &mut plan));
        let mut body = plan.clone();
        body.resize(FILE_ALIGN - HEADER_BYTES, 0);
        body.extend_from_slice(elf);
        let header = ImageHeader {
            total_bytes: (HEADER_BYTES + body.len()) as u64,
            plan_offset: HEADER_BYTES as u64,
            plan_bytes: plan.len() as u64,
            checksum: checksum(&body),
        };
        let mut bytes = header.encode().to_vec();
        bytes.extend_from_slice(&body);
        bytes
    }

    fn task(name: &str) -> TaskPlan<'_> {
        TaskPlan {
            name,
            elf: FileRef {
                offset: FILE_ALIGN as u32,
                bytes: 4,
            },
            priority: 100,
            mcp: 100,
            stack_pages: 4,
            memory_bits: 20,
            cnode_radix: 4,
            argument: 0,
            privileged: None,
            fault_handler: None,
            restart: Restart::Never,
            ends_system: true,
            caps: heapless::Vec::new(),
            mappings: heapless::Vec::new(),
            filters: heapless::Vec::new(),
            tracer: None,
            audit: None,
        }
    }

    /// Bytes of a plan changed at random (the checksum made to match, so
    /// the plan's own checks are what is tried): `Plan::open` never
    /// panics, and whatever it accepts reads whole without panicking.
    #[test]
    fn damaged_plans_never_panic() {
        let description = [1u8, 2, 3];
        let mut app = task("app");
        app.filters
            .push(FilterPlan {
                description: &description,
                server: Some(ObjectUse {
                    object: 0,
                    badge: 0,
                }),
            })
            .unwrap();
        let objects = [
            ObjectPlan::Endpoint { name: "requests" },
            ObjectPlan::Memory {
                name: "ring",
                pages: 1,
            },
        ];
        let good = image(&objects, &[app, task("server")], b"\x7fELF");
        let plan_bytes = ImageHeader::parse(&good).unwrap().plan_bytes as usize;
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next();
        let mut accepted = 0;
        for _ in 0..20_000 {
            let mut bytes = good.clone();
            for _ in 0..1 + next() % 4 {
                let at = HEADER_BYTES + (next() as usize) % plan_bytes;
                bytes[at] = next() as u8;
            }
            let sum = checksum(&bytes[HEADER_BYTES..]);
            bytes[32..40].copy_from_slice(&sum.to_le_bytes());
            if let Ok(plan) = Plan::open(&bytes) {
                accepted += 1;
                for object in plan.objects() {
                    let _ = object.pages();
                }
                for task in plan.tasks() {
                    let _ = plan.file(task.elf);
                    for filter in &task.filters {
                        let _ = filter.description.len();
                    }
                }
            }
        }
        // Some changes (a name's letter, a badge) leave a valid plan.
        assert!(accepted > 0);
    }

    #[test]
    fn a_plan_reads_back_piece_by_piece() {
        let objects = [
            ObjectPlan::Endpoint { name: "requests" },
            ObjectPlan::Notification { name: "ring" },
            ObjectPlan::Memory {
                name: "ring-page",
                pages: 1,
            },
        ];
        let description = [1u8, 2, 3];
        let mut app = task("app");
        app.caps
            .push(CapPlan {
                slot: 2,
                source: CapSource::Object(ObjectUse {
                    object: 0,
                    badge: 7,
                }),
                rights: 3,
            })
            .unwrap();
        app.filters
            .push(FilterPlan {
                description: &description,
                server: Some(ObjectUse {
                    object: 0,
                    badge: 0,
                }),
            })
            .unwrap();
        app.audit = Some(AuditPlan {
            ring: 2,
            notification: ObjectUse {
                object: 1,
                badge: 0,
            },
            lossless: false,
            badge: 0xa99,
        });
        let server = task("server");
        let bytes = image(&objects, &[app.clone(), server.clone()], b"\x7fELF");
        let plan = Plan::open(&bytes).unwrap();
        assert_eq!(plan.head.name, "test");
        assert_eq!(plan.objects().collect::<Vec<_>>(), objects);
        assert_eq!(plan.tasks().collect::<Vec<_>>(), [app.clone(), server]);
        assert_eq!(plan.task(0).unwrap(), app);
        assert_eq!(plan.file(app.elf), Some(&b"\x7fELF"[..]));
        assert_eq!(plan.object(2).unwrap().pages(), Some(1));
    }

    #[test]
    fn wrong_references_are_refused() {
        let objects = [ObjectPlan::Notification { name: "n" }];
        let wrong = |change: &dyn Fn(&mut TaskPlan<'static>)| {
            let mut t = task("t");
            change(&mut t);
            let bytes = image(&objects, &[t], b"\x7fELF");
            Plan::open(&bytes).err()
        };
        let use_of = |object| ObjectUse { object, badge: 0 };
        assert_eq!(wrong(&|_| {}), None);
        assert_eq!(
            wrong(&|t| t.fault_handler = Some(use_of(0))),
            Some(ImageError::BadPlan),
            "a notification is no fault endpoint"
        );
        assert_eq!(
            wrong(&|t| t.tracer = Some(use_of(5))),
            Some(ImageError::BadPlan)
        );
        assert_eq!(
            wrong(&|t| t.elf.bytes = 1 << 20),
            Some(ImageError::BadPlan),
            "the ELF lies past the image"
        );
        assert_eq!(
            wrong(&|t| t
                .caps
                .push(CapPlan {
                    slot: 1,
                    source: CapSource::Tcb { task: 1 },
                    rights: 0
                })
                .unwrap()),
            Some(ImageError::BadPlan)
        );
        let two_privileged = {
            let mut a = task("a");
            a.privileged = Some("");
            let b = a.clone();
            image(&objects, &[a, b], b"\x7fELF")
        };
        assert_eq!(Plan::open(&two_privileged).err(), Some(ImageError::BadPlan));
    }

    /// Every field the root computes with or hands to the kernel is
    /// checked by `Plan::open`, the root's one gate: a crafted image is
    /// refused, never half-built, never a panic or a wrapped sum.
    #[test]
    fn values_the_root_cannot_use_are_refused() {
        let objects = [
            ObjectPlan::Notification { name: "n" },
            ObjectPlan::Endpoint { name: "e" },
            ObjectPlan::File {
                name: "f",
                file: FileRef {
                    offset: FILE_ALIGN as u32,
                    bytes: 4,
                },
            },
            ObjectPlan::Memory {
                name: "m",
                pages: 1,
            },
        ];
        let open = |objects: &[ObjectPlan<'_>], tasks: &[TaskPlan<'_>]| {
            Plan::open(&image(objects, tasks, b"\x7fELF")).err()
        };
        let wrong = |change: &dyn Fn(&mut TaskPlan<'static>)| {
            let mut t = task("t");
            change(&mut t);
            open(&objects, &[t])
        };
        let bad = Some(ImageError::BadPlan);
        assert_eq!(wrong(&|_| {}), None);
        type Change = dyn Fn(&mut TaskPlan<'static>);
        let cases: &[(&str, &Change)] = &[
            ("memory_bits 64 (the root shifts by it)", &|t| {
                t.memory_bits = 64
            }),
            ("memory_bits 63", &|t| t.memory_bits = 63),
            ("memory_bits 11 (below a page)", &|t| t.memory_bits = 11),
            ("cnode_radix 0", &|t| t.cnode_radix = 0),
            ("cnode_radix 40", &|t| t.cnode_radix = 40),
            ("no stack", &|t| t.stack_pages = 0),
            ("a stack of 256 MiB", &|t| t.stack_pages = u16::MAX),
            ("a name the kernel refuses", &|t| t.name = "two words"),
            ("a name with a newline", &|t| t.name = "a\nsystem:"),
            ("restarts that overflow the memory sum", &|t| {
                t.memory_bits = 47;
                t.restart = Restart::Always { max: u32::MAX };
            }),
            ("a privileged task restarted", &|t| {
                t.privileged = Some("");
                t.cnode_radix = 12;
                t.restart = Restart::OnFault { max: 1 };
            }),
            ("restarted, but its end goes elsewhere", &|t| {
                t.fault_handler = Some(ObjectUse {
                    object: 1,
                    badge: 0,
                });
                t.ends_system = false;
                t.restart = Restart::Always { max: 1 };
            }),
            ("ends the system, but its end goes elsewhere", &|t| {
                t.fault_handler = Some(ObjectUse {
                    object: 1,
                    badge: 0,
                });
                t.ends_system = true;
            }),
            ("a writable file", &|t| {
                t.mappings
                    .push(MappingPlan {
                        object: 2,
                        address: 0x1000_0000,
                        writable: true,
                    })
                    .unwrap()
            }),
            ("an Untyped as big as the task's memory", &|t| {
                t.caps
                    .push(CapPlan {
                        slot: 1,
                        source: CapSource::Untyped { bits: 20 },
                        rights: 3,
                    })
                    .unwrap()
            }),
            ("an Untyped below a page", &|t| {
                t.caps
                    .push(CapPlan {
                        slot: 1,
                        source: CapSource::Untyped { bits: 0 },
                        rights: 3,
                    })
                    .unwrap()
            }),
            ("one interrupt given twice", &|t| {
                for (slot, object) in [(1, 0), (2, 0)] {
                    t.caps
                        .push(CapPlan {
                            slot,
                            source: CapSource::Irq {
                                intid: 40,
                                notification: ObjectUse {
                                    object,
                                    badge: slot.into(),
                                },
                            },
                            rights: 3,
                        })
                        .unwrap()
                }
            }),
        ];
        for (what, change) in cases {
            assert_eq!(wrong(*change), bad, "{what}");
        }
        // Still fine: the neighbours of the refused values.
        for change in [
            &(|t: &mut TaskPlan<'static>| t.memory_bits = 12) as &dyn Fn(&mut TaskPlan<'static>),
            &|t| t.memory_bits = 47,
            &|t| t.cnode_radix = 12,
            &|t| t.stack_pages = 256,
            &|t| {
                t.fault_handler = Some(ObjectUse {
                    object: 1,
                    badge: 0,
                });
                t.ends_system = false;
                t.restart = Restart::OnFault { max: 0 };
            },
            &|t| {
                t.mappings
                    .push(MappingPlan {
                        object: 3,
                        address: 0x1000_0000,
                        writable: true,
                    })
                    .unwrap()
            },
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(wrong(change.1), None, "neighbour {}", change.0);
        }
        // Restarts are counted across tasks: two tasks each within the
        // bound, together over it.
        let mut big = task("a");
        big.memory_bits = 46;
        big.restart = Restart::Always { max: 1 };
        assert_eq!(open(&objects, &[big.clone()]), None);
        let mut other = big.clone();
        other.name = "b";
        assert_eq!(open(&objects, &[big, other]), bad);
        // Objects: sizes the root cannot make, names a console line
        // cannot show.
        let t = task("t");
        for object in [
            ObjectPlan::Memory {
                name: "m",
                pages: 0,
            },
            ObjectPlan::Device {
                name: "d",
                physical: 0x900_0000,
                pages: 0,
            },
            ObjectPlan::Device {
                name: "d",
                physical: u64::MAX - 0xfff,
                pages: 2,
            },
            ObjectPlan::Device {
                name: "d",
                physical: 0x900_0010,
                pages: 1,
            },
            ObjectPlan::Endpoint { name: "" },
            ObjectPlan::Endpoint {
                name: "x\nsystem: every task has ended",
            },
        ] {
            assert_eq!(
                open(&[object], core::slice::from_ref(&t)),
                bad,
                "{object:?}"
            );
        }
    }
}
