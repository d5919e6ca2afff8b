//! The task ELFs init embeds (`servers/echo`, `servers/echo-client`), as
//! `build.rs` leaves them in `target/image/tasks/`: stripped, small, and
//! accepted by the SDK's loader with a plan inside its limits; and init's
//! ELF holds exactly these bytes. `docs/tasks.md` describes the loader.
//! The root task's ELF passes the kernel's checks (`abi::elf`) with the
//! kernel's page limit, as `AddressSpace::load` makes them at boot; init,
//! which the root loads as the project's systems' driver, passes the SDK
//! loader's.

use abi::vspace::MapRights;
use portcullis::artifacts;
use sdk::loader::{self, PagePlan, SpaceBuilder, MAX_PAGES};

const TASKS: [&str; 2] = ["portcullis-echo", "portcullis-echo-client"];
/// Unstripped, each is about 200 KB (symbols and debug information);
/// stripped and linked with 4 KiB segment alignment, about 21 KB.
const MAX_EMBEDDED_BYTES: usize = 48 * 1024;

fn read(path: std::path::PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn task(name: &str) -> Vec<u8> {
    read(artifacts::task_elf(name).unwrap_or_else(|e| panic!("{e}")))
}

/// Records what the loader maps, with the bytes of each page.
#[derive(Default)]
struct Recorder {
    frames: Vec<Vec<u8>>,
    mapped: Vec<(u64, MapRights, usize)>,
}

impl SpaceBuilder for Recorder {
    type Frame = usize;
    type Error = ();

    fn new_frame(&mut self) -> Result<usize, ()> {
        self.frames.push(vec![0; 4096]);
        Ok(self.frames.len() - 1)
    }

    fn write(&mut self, frame: &usize, offset: usize, bytes: &[u8]) -> Result<(), ()> {
        self.frames[*frame][offset..offset + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    fn map(&mut self, frame: &usize, va: u64, rights: MapRights) -> Result<(), ()> {
        self.mapped.push((va, rights, *frame));
        Ok(())
    }
}

#[test]
fn the_embedded_tasks_are_stripped_and_small() {
    for name in TASKS {
        let file = task(name);
        assert!(
            file.len() <= MAX_EMBEDDED_BYTES,
            "{name}: {} bytes embedded",
            file.len()
        );
        assert!(
            !file.windows(7).any(|w| w == b".symtab"),
            "{name} still has a symbol table"
        );
    }
}

#[test]
fn the_loader_accepts_each_task_and_maps_its_code_where_the_entry_is() {
    for name in TASKS {
        let file = task(name);
        let plan = loader::plan(&file).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(plan.page_count() <= MAX_PAGES);
        assert!(plan.page_count() >= 2, "{name}: code and read-only data");
        let pages: Vec<PagePlan> = plan.pages().collect();
        let mut space = Recorder::default();
        plan.build(&mut space).unwrap();
        assert_eq!(space.mapped.len(), pages.len());
        // Linked at 4 MiB (servers/sdk/user.ld), code first.
        assert_eq!(pages[0].va, 0x40_0000, "{name}");
        assert_eq!(pages[0].rights, MapRights::ReadExecute, "{name}");
        let entry_page = plan.entry() & !0xfff;
        let (_, rights, frame) = space
            .mapped
            .iter()
            .find(|(va, _, _)| *va == entry_page)
            .unwrap_or_else(|| panic!("{name}: the entry page is not mapped"));
        assert_eq!(*rights, MapRights::ReadExecute);
        // The entry page holds the file's bytes for that address.
        let segment = plan
            .image()
            .segments()
            .iter()
            .find(|s| s.vaddr <= entry_page && entry_page < s.vaddr + s.mem_size)
            .unwrap();
        let at = (segment.offset + (entry_page - segment.vaddr)) as usize;
        let len = 4096.min(file.len() - at);
        assert_eq!(space.frames[*frame][..len], file[at..at + len], "{name}");
    }
}

#[test]
fn init_embeds_exactly_the_stripped_tasks() {
    let init = read(artifacts::init_elf().unwrap_or_else(|e| panic!("{e}")));
    for name in TASKS {
        let file = task(name);
        let embedded = init
            .windows(file.len())
            .any(|window| window[..64] == file[..64] && window == file.as_slice());
        assert!(embedded, "init's ELF does not hold {name} as built");
    }
}

#[test]
fn the_kernel_accepts_the_root_tasks_elf() {
    use microkernel::address_space::{parse_program, MAX_PROGRAM_PAGES};
    let root = read(artifacts::root_elf().unwrap_or_else(|e| panic!("{e}")));
    let image = parse_program(&root).unwrap_or_else(|e| panic!("the root's ELF: {e:?}"));
    let rights: Vec<MapRights> = image.segments().iter().map(|s| s.rights).collect();
    // Text, rodata, then data and bss if it has any (the root keeps its
    // state on its stack), as the SDK's linker script lays them out.
    assert_eq!(
        rights[..2],
        [MapRights::ReadExecute, MapRights::Read],
        "{rights:?}"
    );
    assert!(
        rights[2..].iter().all(|r| *r == MapRights::ReadWrite),
        "{rights:?}"
    );
    let code = image.segments()[0];
    assert!(code.vaddr <= image.entry && image.entry < code.vaddr + code.mem_size);
    println!(
        "root: {} pages of {MAX_PROGRAM_PAGES} the kernel allows",
        image.page_count()
    );
}

#[test]
fn the_root_can_load_init_as_a_task() {
    let init = read(artifacts::init_elf().unwrap_or_else(|e| panic!("{e}")));
    let plan = loader::plan(&init).unwrap_or_else(|e| panic!("init's ELF: {e:?}"));
    assert!(plan.page_count() <= MAX_PAGES);
    println!(
        "init: {} pages of {MAX_PAGES} the SDK's loader allows",
        plan.page_count()
    );
}

/// A task the SDK's builder makes finds the layout a kernel-made thread
/// has: the stack top and size `abi` names are the kernel's, and the
/// builder's defaults are `abi`'s.
#[test]
fn the_task_builder_lays_a_task_out_as_the_kernel_does() {
    use microkernel::address_space;
    assert_eq!(abi::USER_STACK_TOP, address_space::USER_STACK_TOP);
    assert_eq!(abi::USER_STACK_PAGES, address_space::USER_STACK_PAGES);
    let builder = sdk::task::TaskBuilder::new("layout", &[]);
    assert_eq!(builder.stack_top(), abi::USER_STACK_TOP);
    assert_eq!(builder.ipc_buffer_address(), abi::IPC_BUFFER_ADDRESS);
}
