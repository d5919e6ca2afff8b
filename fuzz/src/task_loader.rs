//! Task ELF files: the root loads what `sdk::loader::plan` accepts (the
//! shared parser's image, `abi::elf`) into a task's address space, page by
//! page. Part of the `elf_image` target.

use abi::vspace::{MapRights, FRAME_MAP_START};
use sdk::ipc::Cptr;
use sdk::loader::{
    self, ElfError, LoadError, Plan, SpaceBuilder, TaskMemory, IMAGE_END, IMAGE_START, MAX_PAGES,
    PAGE_SIZE,
};
use sdk::vspace::VSpace;
use std::collections::BTreeMap;

/// Plans `data` as a task image and builds it into a fake address space;
/// `refused` is what `abi::elf::parse` said of it.
///
/// Checks: `plan` refuses what the parser refuses, with the same error;
/// an accepted plan has one page per page of the image, each aligned
/// inside `IMAGE_START..IMAGE_END`, in ascending order, with its
/// segment's rights; the file bytes a page takes lie inside the file and
/// the page; the built pages hold exactly the segment's file bytes and
/// zeros elsewhere, each mapped once; and `load_elf` refuses what `plan`
/// refuses, with the same error, before any syscall.
pub(super) fn check(data: &[u8], refused: Option<ElfError>) {
    let planned = loader::plan(data);
    assert_eq!(
        planned.as_ref().err().copied(),
        refused,
        "plan disagrees with parse"
    );
    check_load_elf_agrees(data, refused);
    let Ok(plan) = planned else {
        return;
    };
    check_plan(&plan, data);
    check_build(&plan, data);
}

fn check_plan(plan: &Plan<'_>, data: &[u8]) {
    let segments = plan.image().segments();
    let mut pages = 0;
    let mut last_va = None;
    for page in plan.pages() {
        pages += 1;
        assert_eq!(page.va % PAGE_SIZE, 0);
        assert!(
            page.va >= IMAGE_START && page.va <= IMAGE_END - PAGE_SIZE,
            "{page:?}"
        );
        assert!(
            last_va.is_none_or(|last| page.va > last),
            "pages out of order"
        );
        last_va = Some(page.va);
        assert!(page.file_bytes.end <= data.len(), "{page:?} past the file");
        assert!(page.page_offset + page.file_bytes.len() <= PAGE_SIZE as usize);
        let segment = segments
            .iter()
            .find(|s| s.first_page() <= page.va && page.va < s.end_page())
            .expect("a page outside every segment");
        assert_eq!(page.rights, segment.rights);
    }
    assert_eq!(pages, plan.page_count());
}

/// A fake address space: page contents by address.
#[derive(Default)]
struct FakeSpace {
    frames: Vec<Vec<u8>>,
    mapped: BTreeMap<u64, (usize, MapRights)>,
}

impl SpaceBuilder for FakeSpace {
    type Frame = usize;
    type Error = ();

    fn new_frame(&mut self) -> Result<usize, ()> {
        self.frames.push(vec![0; PAGE_SIZE as usize]);
        Ok(self.frames.len() - 1)
    }

    fn write(&mut self, frame: &usize, offset: usize, bytes: &[u8]) -> Result<(), ()> {
        self.frames[*frame][offset..offset + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    fn map(&mut self, frame: &usize, va: u64, rights: MapRights) -> Result<(), ()> {
        let previous = self.mapped.insert(va, (*frame, rights));
        assert!(previous.is_none(), "{va:#x} mapped twice");
        Ok(())
    }
}

fn check_build(plan: &Plan<'_>, data: &[u8]) {
    let mut space = FakeSpace::default();
    plan.build(&mut space).expect("the fake never fails");
    assert_eq!(space.frames.len(), plan.page_count());
    for segment in plan.image().segments() {
        for page in (segment.first_page()..segment.end_page()).step_by(PAGE_SIZE as usize) {
            let (frame, rights) = space.mapped[&page];
            assert_eq!(rights, segment.rights);
            for (index, byte) in space.frames[frame].iter().enumerate() {
                let va = page + index as u64;
                let want = if va >= segment.vaddr && va - segment.vaddr < segment.file_size {
                    data[(segment.offset + (va - segment.vaddr)) as usize]
                } else {
                    0
                };
                assert_eq!(*byte, want, "byte at {va:#x}");
            }
        }
    }
}

/// `load_elf` (whose syscalls all fail on the host) must refuse a file
/// `plan` refuses with the same error and no slot used, and stop an
/// accepted file at its first syscall, also with no slot used.
fn check_load_elf_agrees(data: &[u8], refused: Option<ElfError>) {
    let memory = TaskMemory {
        untyped: Cptr(1),
        own: VSpace(Cptr(2)),
        target: VSpace(Cptr(3)),
        slots: 100..100 + MAX_PAGES as u64,
        scratch: FRAME_MAP_START,
    };
    let failure = loader::load_elf(data, &memory).expect_err("no kernel on the host");
    assert!(failure.slots_used.is_empty(), "{failure:?}");
    let want = match refused {
        Some(error) => LoadError::Elf(error),
        None => LoadError::Retype(abi::ErrorCode::InvalidSyscall),
    };
    assert_eq!(failure.error, want);
}
