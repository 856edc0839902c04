//! `appzone-server`: see `appzone-server --help`.

fn main() -> std::process::ExitCode {
    appzone_server::cli::main()
}
