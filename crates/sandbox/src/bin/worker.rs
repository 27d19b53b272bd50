//! The sandbox worker as a standalone binary, for this crate's tests and
//! benches. The gateway runs the same code as `connecta __sandbox-worker`.

fn main() -> std::process::ExitCode {
    connecta_sandbox::worker_main()
}
