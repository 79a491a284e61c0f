//! The `pi` binary: parse arguments, run, map the outcome to an exit code. Everything else is
//! in the library.

// A run allocates and frees small blocks all the time (JSON values of every event, stream
// chunk and request body); with glibc's malloc that was about a third of pi's own
// instructions per turn of the 50-call benchmark.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = match pi::app::main() {
        Ok(code) => code,
        Err(e) => {
            pi::term_eprintln!("Error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}
