//! The managed NATS's credentials: a Secret of the deployment, created once with a random
//! password, before the NATS StatefulSet that reads it is first applied (see `apply`), and never
//! read back. The NATS server and its clients take it by `secretKeyRef`
//! (`infera_core::render::nats_credentials`), so the operator needs no more than `create` on
//! Secrets, and no Secret value passes through it after it made one. A Secret that exists is
//! kept as it is; it goes with the deployment (its owner).

use infera_core::{ValidDeployment, naming::OPERATOR_MANAGER, render::nats_credentials};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client, ResourceExt, api::PostParams};

use crate::{Error, Result};

/// The credentials for `valid`'s managed NATS, with a new password; none without one.
pub fn render(valid: &ValidDeployment) -> Result<Option<Secret>> {
    if !matches!(valid.nats, infera_core::validate::Nats::Managed { .. }) {
        return Ok(None);
    }
    Ok(nats_credentials(valid, &password()?))
}

/// 32 random bytes in hex: 256 bits, and nothing a URL must escape.
fn password() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(Error::Random)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Creates `secret` unless it exists, which it then keeps.
pub async fn create(client: &Client, secret: &Secret) -> Result<()> {
    let name = secret.name_any();
    let namespace = secret.namespace().unwrap_or_default();
    let api: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let params = PostParams {
        dry_run: false,
        field_manager: Some(OPERATOR_MANAGER.into()),
    };
    match api.create(&params, secret).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(source) => Err(Error::Credentials { name, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_new_each_time_and_need_no_escaping() {
        let (one, two) = (password().ok(), password().ok());
        assert_ne!(one, two);
        let one = one.unwrap_or_default();
        assert_eq!(one.len(), 64);
        assert!(one.chars().all(|c| c.is_ascii_hexdigit()), "{one}");
    }
}
