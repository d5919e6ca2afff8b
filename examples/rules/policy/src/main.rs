//! The reference policy server (`servers/policy`), reading its rules at
//! run time from the file the description maps for it: the same rule
//! language the host tool checked (`abi::rules`).
#![no_std]
#![no_main]

use policy_server::RuleServer;
use sdk::console::Console;
use sdk::ipc::Cptr;
use sdk::println;

/// The endpoint the filter's requests come to.
const REQUESTS: Cptr = Cptr(2);
/// Where the description maps the rules file.
const RULES: u64 = 0x1000_0000;

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let Ok(text) = core::str::from_utf8(sdk::described_file(RULES)) else {
        println!("policy: the rules file is not UTF-8");
        return 1;
    };
    let mut server = match RuleServer::new(text, Console) {
        Ok(server) => server,
        Err(error) => {
            println!("policy: policy.rules {error}");
            return 1;
        }
    };
    let rules = server.rules();
    let default = if rules.default().is_some() {
        " and a default"
    } else {
        ""
    };
    println!(
        "policy: serving {} rules{default} from policy.rules",
        rules.rules().len()
    );
    match sdk::policy_server::serve(REQUESTS, &mut server) {
        Ok(()) => 0,
        Err(error) => {
            println!("policy: stopped: {}", error.name());
            1
        }
    }
}
