//! Parsers of argument values that clap does not know (durations are in `crate::duration`).

use infera_core::validate::limits::MAX_REPLICAS;

/// `POOL=REPLICAS` as clap parses it.
pub(super) fn pool_replicas(arg: &str) -> std::result::Result<(String, i32), String> {
    let (pool, replicas) = arg
        .split_once('=')
        .ok_or_else(|| format!("{arg:?} is not POOL=REPLICAS, e.g. decode=4"))?;
    let replicas = replicas
        .parse()
        .ok()
        .filter(|n| (0..=MAX_REPLICAS).contains(n))
        .ok_or_else(|| {
            format!("{arg:?}: REPLICAS must be a whole number from 0 to {MAX_REPLICAS}")
        })?;
    if pool.is_empty() {
        return Err(format!("{arg:?}: name the pool, e.g. decode=4"));
    }
    Ok((pool.to_string(), replicas))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_replicas_parses_and_names_what_is_wrong() {
        assert_eq!(pool_replicas("decode=4"), Ok(("decode".into(), 4)));
        assert_eq!(pool_replicas("decode=0"), Ok(("decode".into(), 0)));
        assert_eq!(
            pool_replicas("decode"),
            Err(r#""decode" is not POOL=REPLICAS, e.g. decode=4"#.into())
        );
        assert_eq!(
            pool_replicas("decode=-1"),
            Err(r#""decode=-1": REPLICAS must be a whole number from 0 to 1000"#.into())
        );
        assert_eq!(
            pool_replicas("=3"),
            Err(r#""=3": name the pool, e.g. decode=4"#.into())
        );
    }
}
