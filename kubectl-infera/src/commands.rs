//! One module and one entry function per subcommand.

pub mod bench;
pub mod completion;
pub mod dashboard;
pub mod deploy;
pub mod doctor;
pub mod generate;
pub mod init;
pub mod logs;
pub mod planner;
pub mod render;
pub mod report;
pub mod revisions;
pub mod rollout;
pub mod scale;
pub mod status;
pub mod uninstall;
pub mod version;

use crate::{
    cli::{Cli, Command},
    error::Result,
    printer::Printer,
};

/// Runs the command the user asked for.
pub async fn run(cli: Cli, printer: &Printer) -> Result<()> {
    let global = &cli.global;
    match &cli.command {
        Command::Render(args) => render::run(args, global.namespace.as_deref(), printer),
        Command::Version(args) => version::run(args, global, printer).await,
        Command::Completion(args) => completion::run(args, printer),
        Command::Complete(args) => completion::complete(args, global, printer).await,
        Command::Generate(args) => generate::run(args, printer),
        Command::Init(args) => init::run(args, global, printer).await,
        Command::Uninstall(args) => uninstall::run(args, global, printer).await,
        Command::Doctor(args) => doctor::run(args, global, printer).await,
        Command::Deploy(args) => deploy::run(args, global, printer).await,
        Command::Status(args) => status::run(args, global, printer).await,
        Command::Scale(args) => scale::run(args, global, printer).await,
        Command::Rollout(args) => rollout::run(args, global, printer).await,
        Command::Logs(args) => logs::run(args, global, printer).await,
        Command::Report(args) => report::run(args, global, printer).await,
        Command::Dashboard(args) => dashboard::run(args, global, printer).await,
        Command::Planner(args) => planner::run(args, global, printer).await,
        Command::Bench(args) => bench::run(args, global, printer).await,
    }
}
