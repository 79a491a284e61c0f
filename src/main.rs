//! The `pi` binary: parse arguments, run, map the outcome to an exit code. Everything else is
//! in the library.

fn main() {
    let code = match pi::app::main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}
