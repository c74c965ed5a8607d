//! Durations as kubectl spells them: `30s`, `5m`, `1h30m`, `250ms`, or a bare number of seconds.

use std::time::Duration;

/// Parses `1h2m3s`, `500ms`, `0` or `45` (seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; use e.g. 30s, 5m or 1h".into());
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("invalid duration {text:?}; use e.g. 30s, 5m or 1h"));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("invalid duration {text:?}; use e.g. 30s, 5m or 1h"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            other => {
                return Err(format!(
                    "invalid unit {other:?} in duration {text:?}; use ms, s, m or h"
                ));
            }
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(number * unit);
    }
    Ok(total)
}

/// Seconds as people read latencies: `850ms`, `1.24s`.
pub fn latency(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.0}ms", seconds * 1000.0)
    } else {
        format!("{seconds:.2}s")
    }
}

/// `1m30s`, `45s`, `2h0m`: short human form for messages.
pub fn human(duration: Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 if secs.is_multiple_of(60) => format!("{}m", secs / 60),
        60..3600 => format!("{}m{}s", secs / 60, secs % 60),
        _ => format!("{}h{}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// Age of an object like kubectl prints it: `12s`, `5m`, `3h`, `2d`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..120 => format!("{s}s"),
        120..7200 => format!("{}m", s / 60),
        7200..172_800 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kubectl_durations() {
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
    }

    #[test]
    fn rejects_garbage_with_a_hint() {
        assert_eq!(
            parse_duration("5x"),
            Err("invalid unit \"x\" in duration \"5x\"; use ms, s, m or h".into())
        );
        assert_eq!(
            parse_duration("m"),
            Err("invalid duration \"m\"; use e.g. 30s, 5m or 1h".into())
        );
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn formats_for_humans() {
        assert_eq!(human(Duration::from_secs(90)), "1m30s");
        assert_eq!(human(Duration::from_secs(300)), "5m");
        assert_eq!(age(30), "30s");
        assert_eq!(age(600), "10m");
        assert_eq!(age(4 * 86400), "4d");
    }
}
