//! `kubectl infera`: the kubectl plugin of Infera. See `kubectl infera --help` and the README's
//! "kubectl infera" section; the exit-code contract is in [`error`].

mod apply;
mod bundle;
mod chart;
mod checks;
mod cli;
mod client;
mod commands;
mod completions;
mod diagnose;
mod duration;
mod error;
mod gateway_api;
mod installed;
mod plan;
mod pod_logs;
mod printer;
mod spec;
mod view;
mod wait;
mod watch;
mod wizard;

use std::process::ExitCode;

use clap::Parser;

use crate::{
    error::{Error, Exit},
    printer::Printer,
};

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            let _ = e.print();
            return code.into();
        }
    };
    init_logging(cli.global.verbosity);
    let printer = Printer::new(cli.global.color);
    match run(cli, &printer) {
        Ok(()) => Exit::Ok.into(),
        Err(error) => {
            if !error.already_reported() {
                printer.error(&error);
            }
            error.exit().into()
        }
    }
}

fn run(cli: cli::Cli, printer: &Printer) -> Result<(), Error> {
    // One thread: the plugin waits on the API server, and threads handing each response chunk to
    // one another cost more than they save (most of `status -A`'s time at 1,000 deployments went
    // to futex wake-ups and context switches between the runtime's workers).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    runtime.block_on(async {
        tokio::select! {
            result = commands::run(cli, printer) => result,
            _ = tokio::signal::ctrl_c() => {
                printer.clear_progress();
                Err(Error::Interrupted)
            }
        }
    })
}

/// `-v 6` and above log every API request (method and URL) to stderr, like kubectl's `-v=6`.
fn init_logging(verbosity: u8) {
    let filter = match verbosity {
        0..=5 => return,
        6..=7 => "kube_client::client::builder=debug",
        _ => "kube=trace,kube_client=trace",
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .try_init();
}
