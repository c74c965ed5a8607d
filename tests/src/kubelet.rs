//! What the kubelet does to a container's command line, for tests that run it as a pod would.

use std::collections::BTreeMap;

/// `$(VAR)` as the kubelet expands it: defined names are replaced, `$$` is a literal `$`, anything
/// else is left as written.
pub fn expand(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if let Some(inner) = tail.strip_prefix("$(")
            && let Some(end) = inner.find(')')
            && let Some(value) = env.get(&inner[..end])
        {
            out.push_str(value);
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// A container's `command` or `args` (a JSON list of strings), each [`expand`]ed.
pub fn expand_all(list: &serde_json::Value, env: &BTreeMap<String, String>) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|item| expand(item.as_str().unwrap_or_default(), env))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defined_names_are_replaced_and_double_dollars_escape() {
        let env = BTreeMap::from([("A".to_string(), "x".to_string())]);
        assert_eq!(expand("$(A):$(B)-$$(A)-$", &env), "x:$(B)-$(A)-$");
    }
}
