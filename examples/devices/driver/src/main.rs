//! A driver's first steps on QEMU virt: the first virtio-mmio transport's
//! registers, mapped by its system description as device memory, and
//! that transport's interrupt, delivered through an IrqHandler bound to
//! a notification (`../system.toml`).
#![no_std]
#![no_main]

use sdk::ipc::Cptr;
use sdk::println;
use sdk::syscall::irq_ack;
use sdk::vspace::MappedFrame;

/// Where the description maps the transport's page.
const VIRTIO: u64 = 0x2000_0000;
/// The transport's IrqHandler.
const IRQ: Cptr = Cptr(2);
/// "virt" in little-endian ASCII: every virtio-mmio transport's first word.
const MAGIC: u32 = 0x7472_6976;

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let registers = MappedFrame::described(VIRTIO, false);
    let magic = registers.read_u32(0);
    let version = registers.read_u32(4);
    println!("driver: virtio-mmio magic {magic:#x}, version {version}");
    let acked = irq_ack(IRQ.0);
    println!("driver: its interrupt's handler acknowledges -> {acked:?}");
    i32::from(magic != MAGIC || acked.is_err())
}
