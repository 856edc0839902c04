//! `appzone-server`: see `appzone-server --help`.

// mimalloc rather than the system allocator: a listing allocates about 30 times, and glibc's
// malloc and free cost about 3,000 more instructions per request (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    appzone_server::cli::main()
}
