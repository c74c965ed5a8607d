use crate::{cli::GlobalArgs, error::{Error, Result}, printer::Printer};
pub async fn run(_args: &impl std::fmt::Debug, _global: &GlobalArgs, _printer: &Printer) -> Result<()> {
    Err(Error::Failed("not implemented yet".into()))
}
