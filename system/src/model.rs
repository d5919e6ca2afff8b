//! A checked system: every name resolved to an index, every size and
//! right turned into what the plan holds. Only what needs the built
//! programs (their segments, hence memory estimates) is left for
//! `build`.

use crate::diagnostic::Source;
use abi::system::plan::{AuditPlan, CapPlan, MappingPlan, ObjectUse, Restart};
use std::path::PathBuf;

/// Bytes in a page.
pub const PAGE: u64 = 4096;

/// A description that passed every check [`crate::load`] makes.
#[derive(Debug)]
pub struct System {
    /// The description file.
    pub(crate) source: Source,
    /// The system's name.
    pub name: String,
    /// The memory budget in bytes.
    pub budget: u64,
    /// Where the budget is set (or `[system]`): budget errors point there.
    pub(crate) budget_at: usize,
    /// Objects in plan order: endpoints, notifications, memory, devices,
    /// files.
    pub objects: Vec<Object>,
    /// Tasks in file order.
    pub tasks: Vec<Task>,
}

/// An object the root makes for the tasks to share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Its name in the description.
    pub name: String,
    /// What it is.
    pub kind: ObjectKind,
}

/// The kinds of [`Object`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectKind {
    /// An endpoint.
    Endpoint,
    /// A notification.
    Notification,
    /// Shared zeroed RAM of `pages` pages.
    Memory {
        /// Its size in pages.
        pages: u32,
    },
    /// MMIO.
    Device {
        /// Physical address.
        physical: u64,
        /// Size in pages.
        pages: u32,
    },
    /// A file from the host, copied into the image.
    File {
        /// Its contents.
        bytes: Vec<u8>,
    },
}

impl Object {
    /// Bytes of RAM the root spends on it (counted in the budget): the
    /// memory regions, and the Frames files are copied into (the length
    /// word first).
    pub fn ram_bytes(&self) -> u64 {
        match &self.kind {
            ObjectKind::Memory { pages } => u64::from(*pages) * PAGE,
            ObjectKind::File { bytes } => (bytes.len() as u64 + 8).div_ceil(PAGE) * PAGE,
            _ => 0,
        }
    }
}

/// Where a task's program comes from.
#[derive(Debug, Clone)]
pub enum Program {
    /// A crate `build` compiles.
    Crate {
        /// Its directory.
        dir: PathBuf,
        /// The binary.
        bin: String,
        /// Cargo features.
        features: Vec<String>,
    },
    /// A prebuilt ELF, read and checked by `load`.
    Elf {
        /// Its path.
        path: PathBuf,
        /// Its bytes.
        bytes: Vec<u8>,
    },
}

/// One checked task.
#[derive(Debug, Clone)]
pub struct Task {
    /// Its name.
    pub name: String,
    /// Its program.
    pub program: Program,
    /// Where `crate` or `elf` is written (program errors point there).
    pub(crate) program_at: usize,
    /// Priority.
    pub priority: u8,
    /// MCP.
    pub mcp: u8,
    /// Stack pages.
    pub stack_pages: u16,
    /// Memory it asked for (a power of two), and where.
    pub memory: Option<(u64, usize)>,
    /// log2 of its CNode's slots.
    pub cnode_radix: u8,
    /// `x0` at start.
    pub argument: u64,
    /// The command line of the privileged task.
    pub privileged: Option<String>,
    /// Where faults go (`None`: the root).
    pub fault_handler: Option<ObjectUse>,
    /// What the root does when it ends.
    pub restart: Restart,
    /// Its end ends the system.
    pub ends_system: bool,
    /// Capabilities.
    pub caps: Vec<CapPlan>,
    /// Bytes of the Untypeds it is given (carved from its memory).
    pub untyped_bytes: u64,
    /// Mappings, with where each `address` is written.
    pub mappings: Vec<(MappingPlan, u64, usize)>,
    /// Filters: encoded description and server endpoint.
    pub filters: Vec<(Vec<u8>, Option<ObjectUse>)>,
    /// Where its trace stops go.
    pub tracer: Option<ObjectUse>,
    /// Its audit ring.
    pub audit: Option<AuditPlan>,
}

/// Page-table pages a task's memory holds: as `sdk::task::TaskBuilder`
/// reserves by default, plus a worst case of three per mapped object
/// (the tables from the root table down to the page).
const TABLE_PAGES: u64 = 8;
/// Pages for the TCB and the objects the root makes beside it.
const FIXED_PAGES: u64 = 4;
/// Bytes of one CNode slot.
const SLOT_BYTES: u64 = 64;
/// Pages a filter takes (its 10 304-byte record, rounded up).
const FILTER_PAGES: u64 = 3;
/// Bytes of a Frame's record, paid by the memory it comes from.
const FRAME_RECORD_BYTES: u64 = 128;
/// The smallest memory a task gets.
pub const MIN_TASK_MEMORY: u64 = 64 << 10;

impl Task {
    /// Bytes the task needs from its memory with a program of
    /// `image_pages` pages in an ELF file of `file_bytes`: image, stack,
    /// IPC buffer, page tables, VSpace root, CNode, TCB, filters, the
    /// Frames' records, its Untypeds (each may need as much again to be
    /// aligned), and for the privileged task the copy of its ELF the root
    /// maps for it (the formula of `sdk::task::TaskBuilder` and the root,
    /// which use it).
    pub fn estimate(&self, image_pages: u64, file_bytes: u64) -> u64 {
        let cnode_pages = ((1u64 << self.cnode_radix) * SLOT_BYTES).div_ceil(PAGE);
        let copy_pages = if self.privileged.is_some() {
            file_bytes.div_ceil(PAGE)
        } else {
            0
        };
        // The privileged task may take every table page a space may have
        // (it maps as a root does).
        let tables = if self.privileged.is_some() {
            abi::vspace::MAX_USER_TABLE_PAGES
        } else {
            TABLE_PAGES + 3 * self.mappings.len() as u64
        };
        let frames = image_pages + u64::from(self.stack_pages) + 1 + copy_pages;
        let pages = frames
            + tables
            + 1
            + cnode_pages
            + FIXED_PAGES
            + FILTER_PAGES * self.filters.len() as u64;
        pages * PAGE + frames * FRAME_RECORD_BYTES + 2 * self.untyped_bytes
    }

    /// How often the root may rebuild it.
    pub fn restarts(&self) -> u32 {
        match self.restart {
            Restart::Never => 0,
            Restart::OnFault { max } | Restart::Always { max } => max,
        }
    }

    /// Its memory given the estimate: what it asked for, else the
    /// estimate rounded up to a power of two (at least
    /// [`MIN_TASK_MEMORY`]).
    pub fn memory_for(&self, estimate: u64) -> u64 {
        match self.memory {
            Some((bytes, _)) => bytes,
            None => estimate.next_power_of_two().max(MIN_TASK_MEMORY),
        }
    }
}

/// `bytes` for a message: "64 MiB", "12 KiB", "100 bytes".
pub fn show(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}
