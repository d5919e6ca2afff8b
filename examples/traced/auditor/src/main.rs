//! The app's audit server: reads the ring its system description maps
//! at `RING` each time the notification says records were written, and
//! prints every record (and every gap) until the app's `exit`.
#![no_std]
#![no_main]

use abi::audit::DROPPED_OFFSET;
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::vspace::MappedFrame;
use sdk::Syscall;

/// The notification the kernel signals as it writes records.
const WRITTEN: Cptr = Cptr(2);
/// Where the description maps the ring (read-write: the server moves
/// its consumed counter).
const RING: u64 = 0x1000_0000;

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let mut ring = MappedFrame::described(RING, true);
    let mut reader = Reader::new();
    loop {
        if ipc::wait(WRITTEN).is_err() {
            return 1;
        }
        while let Some(entry) = reader.next(&mut ring) {
            let Entry::Record { record, gap } = entry else {
                println!("audit: a garbled record");
                continue;
            };
            if gap > 0 {
                println!("audit: {gap} records lost before #{}", record.sequence);
            }
            println!("audit: {}", Line(&record));
            if record.syscall == Syscall::Exit.number() {
                println!(
                    "audit: {} records, {} lost ({} dropped by the kernel)",
                    reader.records,
                    reader.missing,
                    ring.read_u64(DROPPED_OFFSET)
                );
                return 0;
            }
        }
    }
}
