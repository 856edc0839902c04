//! `appzone-server`: see `appzone-server --help`.

// mimalloc rather than the system allocator: a listing allocates a few dozen times, and glibc's
// malloc and free cost measurably more per request (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    appzone_server::cli::main()
}
