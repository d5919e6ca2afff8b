//! Writes the system image: header, plan pieces, then every file at a
//! page-aligned offset (`abi::system::image`).

use crate::diagnostic::Diagnostics;
use crate::model::{ObjectKind, System};
use crate::program::Built;
use abi::system::image::{checksum, ImageHeader, FILE_ALIGN, HEADER_BYTES, MAX_IMAGE_BYTES};
use abi::system::plan::{FileRef, FilterPlan, ObjectPlan, PlanHead, TaskPlan};
use serde::Serialize;

/// The image of `system` with the programs of `built`.
pub fn pack(system: &System, built: &Built) -> Result<Vec<u8>, Diagnostics> {
    // The files' offsets depend on the plan's length and the plan holds
    // the offsets: lay out from a guess until the plan's length settles
    // (offsets only grow, so this ends within a few rounds).
    let files: Vec<&[u8]> = system
        .objects
        .iter()
        .filter_map(|o| match &o.kind {
            ObjectKind::File { bytes } => Some(bytes.as_slice()),
            _ => None,
        })
        .chain(built.tasks.iter().map(|t| t.elf.as_slice()))
        .collect();
    let mut plan_bytes = 0;
    let (plan, refs) = loop {
        let first = (HEADER_BYTES + plan_bytes).next_multiple_of(FILE_ALIGN);
        let mut refs = Vec::new();
        let mut at = first;
        for file in &files {
            refs.push(FileRef {
                offset: at as u32,
                bytes: file.len() as u32,
            });
            at = (at + file.len()).next_multiple_of(FILE_ALIGN);
        }
        let plan = encode_plan(system, built, &refs);
        if (HEADER_BYTES + plan.len()).next_multiple_of(FILE_ALIGN) == first {
            break (plan, refs);
        }
        plan_bytes = plan.len();
    };
    let mut image = vec![0u8; HEADER_BYTES];
    image.extend_from_slice(&plan);
    for (file, place) in files.iter().zip(&refs) {
        image.resize(place.offset as usize, 0);
        image.extend_from_slice(file);
    }
    if image.len() as u64 > MAX_IMAGE_BYTES {
        return Err(system
            .source
            .at(
                0,
                "system",
                format!(
                    "the image is {} bytes, above the {} the kernel takes",
                    image.len(),
                    MAX_IMAGE_BYTES
                ),
            )
            .into());
    }
    let header = ImageHeader {
        total_bytes: image.len() as u64,
        plan_offset: HEADER_BYTES as u64,
        plan_bytes: plan.len() as u64,
        checksum: checksum(&image[HEADER_BYTES..]),
    };
    image[..HEADER_BYTES].copy_from_slice(&header.encode());
    Ok(image)
}

/// The plan's pieces with files at `refs` (object files first, then the
/// task ELFs, in order).
fn encode_plan(system: &System, built: &Built, refs: &[FileRef]) -> Vec<u8> {
    let mut out = Vec::new();
    let head = PlanHead {
        name: &system.name,
        objects: system.objects.len() as u16,
        tasks: system.tasks.len() as u16,
    };
    piece(&head, &mut out);
    let mut refs = refs.iter().copied();
    for object in &system.objects {
        let name = object.name.as_str();
        let plan = match object.kind {
            ObjectKind::Endpoint => ObjectPlan::Endpoint { name },
            ObjectKind::Notification => ObjectPlan::Notification { name },
            ObjectKind::Memory { pages } => ObjectPlan::Memory { name, pages },
            ObjectKind::Device { physical, pages } => ObjectPlan::Device {
                name,
                physical,
                pages,
            },
            ObjectKind::File { .. } => ObjectPlan::File {
                name,
                file: refs.next().expect("a place for every file"),
            },
        };
        piece(&plan, &mut out);
    }
    for (task, program) in system.tasks.iter().zip(&built.tasks) {
        let elf = refs.next().expect("a place for every ELF");
        piece(&task_plan(task, elf, program.memory), &mut out);
    }
    out
}

/// The plan of `task` with its ELF at `elf` and `memory` bytes (a power
/// of two).
fn task_plan(task: &crate::model::Task, elf: FileRef, memory: u64) -> TaskPlan<'_> {
    TaskPlan {
        name: &task.name,
        elf,
        priority: task.priority,
        mcp: task.mcp,
        stack_pages: task.stack_pages,
        memory_bits: memory.trailing_zeros() as u8,
        cnode_radix: task.cnode_radix,
        argument: task.argument,
        privileged: task.privileged.as_deref(),
        fault_handler: task.fault_handler,
        restart: task.restart,
        ends_system: task.ends_system,
        caps: task.caps.iter().copied().collect(),
        mappings: task.mappings.iter().map(|m| m.0).collect(),
        filters: task
            .filters
            .iter()
            .map(|(description, server)| FilterPlan {
                description,
                server: *server,
            })
            .collect(),
        tracer: task.tracer,
        audit: task.audit,
    }
}

fn piece<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    out.extend(postcard::to_stdvec(value).expect("plan pieces always encode"));
}
