use std::collections::BTreeMap;

use super::*;

#[test]
fn the_exposition_is_parsed_with_labels_escapes_and_infinities() {
    let text = r#"
# HELP infera_request_inflight Currently in-flight requests at the server.
# TYPE infera_request_inflight gauge
infera_request_inflight{router="disagg"} 3.0
infera_request_duration_seconds_bucket{le="+Inf",outcome="ok",router="disagg"} 7
sglang:num_running_reqs{model_name="Qwen/Qwen3-0.6B",note="a \"quoted\", b\\c"} 2 1733470000000
up 1
not a sample line
"#;
    let series = parse(text);
    let shown: Vec<(&str, f64)> = series.iter().map(|s| (s.name.as_str(), s.value)).collect();
    assert_eq!(
        shown,
        [
            ("infera_request_inflight", 3.0),
            ("infera_request_duration_seconds_bucket", 7.0),
            ("sglang:num_running_reqs", 2.0),
            ("up", 1.0),
        ]
    );
    assert_eq!(
        series[1].labels,
        BTreeMap::from([
            ("le".to_string(), "+Inf".to_string()),
            ("outcome".to_string(), "ok".to_string()),
            ("router".to_string(), "disagg".to_string()),
        ])
    );
    assert_eq!(series[2].labels["note"], r#"a "quoted", b\c"#);
}

#[test]
fn quantiles_interpolate_within_the_bucket_as_prometheus_does() {
    let buckets = [(0.1, 10.0), (0.5, 30.0), (1.0, 40.0), (f64::INFINITY, 40.0)];
    let close = |q: f64, expected: f64| {
        let got = quantile(q, &buckets).unwrap_or(f64::NAN);
        assert!((got - expected).abs() < 1e-9, "q{q}: {got}, not {expected}");
    };
    close(0.5, 0.3);
    close(0.95, 0.9);
    // In the +Inf bucket: the highest finite bound.
    assert_eq!(
        quantile(0.5, &[(0.1, 0.0), (f64::INFINITY, 5.0)]),
        Some(0.1)
    );
    // No observations, no +Inf bucket, or a lone bucket: no answer.
    assert_eq!(quantile(0.5, &[(0.1, 0.0), (f64::INFINITY, 0.0)]), None);
    assert_eq!(quantile(0.5, &[(0.1, 3.0), (1.0, 5.0)]), None);
    assert_eq!(quantile(0.5, &[(f64::INFINITY, 5.0)]), None);
}

/// A router's exposition with `n` requests observed, all of them between 0.5 and 1 s.
fn router(in_flight: f64, n: f64) -> Vec<Series> {
    parse(&format!(
        "infera_request_inflight{{router=\"disagg\"}} {in_flight}\n\
         infera_request_duration_seconds_bucket{{le=\"0.5\",outcome=\"ok\",router=\"disagg\"}} 0\n\
         infera_request_duration_seconds_bucket{{le=\"1.0\",outcome=\"ok\",router=\"disagg\"}} {n}\n\
         infera_request_duration_seconds_bucket{{le=\"+Inf\",outcome=\"ok\",router=\"disagg\"}} {n}\n\
         infera_request_duration_seconds_count{{outcome=\"ok\",router=\"disagg\"}} {n}\n"
    ))
}

/// An SGLang engine's exposition (the gauges as upstream's drain reads them).
fn engine(running: f64, usage: f64, tokens: f64, finished: f64) -> Vec<Series> {
    parse(&format!(
        "sglang:num_running_reqs{{model_name=\"m\"}} {running}\n\
         sglang:num_queue_reqs{{model_name=\"m\"}} 1\n\
         sglang:token_usage{{model_name=\"m\"}} {usage}\n\
         sglang:generation_tokens_total{{model_name=\"m\"}} {tokens}\n\
         sglang:num_requests_total{{model_name=\"m\"}} {finished}\n"
    ))
}

#[test]
fn one_sample_gives_the_gauges_and_two_give_rates_and_percentiles_per_pool() {
    let scraped = vec![
        Scraped {
            pool: "server".into(),
            role: Role::Router,
            first: Ok(router(1.0, 10.0)),
            second: Some(Ok(router(4.0, 30.0))),
        },
        Scraped {
            pool: "decode".into(),
            role: Role::Engine,
            first: Ok(engine(1.0, 0.2, 100.0, 5.0)),
            second: Some(Ok(engine(2.0, 0.4, 600.0, 15.0))),
        },
        Scraped {
            pool: "decode".into(),
            role: Role::Engine,
            first: Ok(engine(0.0, 0.0, 0.0, 0.0)),
            second: Some(Ok(engine(3.0, 0.6, 500.0, 5.0))),
        },
        Scraped {
            pool: "decode".into(),
            role: Role::Engine,
            first: Err("forbidden".into()),
            second: None,
        },
    ];
    let pools = pools(&scraped, BackendFramework::Sglang, Some(10.0));
    let server = &pools[0];
    assert_eq!((server.pods, server.answered), (1, 1));
    assert_eq!(server.in_flight, Some(4.0));
    assert_eq!(server.requests_per_second, Some(2.0));
    // 20 requests in the window, all between 0.5 and 1 s.
    assert_eq!(
        server.e2e,
        Some(Percentiles {
            p50: 0.75,
            p95: 0.975
        })
    );
    assert_eq!(server.running, None);
    let decode = &pools[1];
    assert_eq!((decode.pods, decode.answered), (3, 2));
    assert_eq!(decode.unanswered, ["forbidden"]);
    assert_eq!((decode.running, decode.waiting), (Some(5.0), Some(2.0)));
    assert!((decode.kv_usage.unwrap_or_default() - 0.5).abs() < 1e-9);
    assert_eq!(decode.tokens_per_second, Some(100.0));
    assert_eq!(decode.requests_per_second, Some(1.5));
    // The engines export no histograms here: no percentiles rather than zeros.
    assert_eq!((decode.ttft, decode.itl), (None, None));

    // One sample: the gauges only.
    let one: Vec<Scraped> = scraped
        .into_iter()
        .map(|s| Scraped { second: None, ..s })
        .collect();
    let pools = super::pools(&one, BackendFramework::Sglang, None);
    assert_eq!(pools[0].in_flight, Some(1.0));
    assert_eq!((pools[0].e2e, pools[0].requests_per_second), (None, None));
    assert_eq!(pools[1].running, Some(1.0));
    assert_eq!(pools[1].tokens_per_second, None);
}

#[test]
fn a_counter_that_went_back_is_a_restart_and_left_out_of_the_rate() {
    let scraped = vec![Scraped {
        pool: "worker".into(),
        role: Role::Engine,
        first: Ok(engine(0.0, 0.0, 900.0, 9.0)),
        second: Some(Ok(engine(0.0, 0.0, 50.0, 1.0))),
    }];
    let pools = pools(&scraped, BackendFramework::Sglang, Some(5.0));
    assert_eq!(pools[0].tokens_per_second, None);
}
