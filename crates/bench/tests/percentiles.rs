//! Nearest-rank percentiles, the method the reference harness uses.

use std::time::Duration;

use connecta_bench::stats::{Distribution, percentile};

#[test]
fn one_to_a_hundred() {
    let values: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(percentile(&values, 0.50), Some(50.0));
    assert_eq!(percentile(&values, 0.95), Some(95.0));
    assert_eq!(percentile(&values, 0.99), Some(99.0));
    assert_eq!(percentile(&values, 1.0), Some(100.0));
    assert_eq!(percentile(&values, 0.0), Some(1.0));
}

#[test]
fn small_samples_round_up_to_a_real_sample() {
    let values = [1.0, 2.0, 3.0];
    // ceil(3 × 0.5) = 2nd value; ceil(3 × 0.95) = 3rd.
    assert_eq!(percentile(&values, 0.50), Some(2.0));
    assert_eq!(percentile(&values, 0.95), Some(3.0));
    assert_eq!(percentile(&[7.0], 0.99), Some(7.0));
    assert_eq!(percentile(&[], 0.5), None);
}

#[test]
fn distributions_sort_their_input_and_ignore_non_finite_values() {
    let d = Distribution::from_ms(vec![5.0, 1.0, f64::NAN, 3.0, 2.0, 4.0]).expect("samples");
    assert_eq!(d.samples, 5);
    assert_eq!(d.min_ms, 1.0);
    assert_eq!(d.p50_ms, 3.0);
    assert_eq!(d.p95_ms, 5.0);
    assert_eq!(d.max_ms, 5.0);
    assert_eq!(d.mean_ms, 3.0);
    assert_eq!(Distribution::from_ms(Vec::new()), None);
}

#[test]
fn durations_are_reported_in_milliseconds() {
    let d = Distribution::from_durations(&[Duration::from_micros(250), Duration::from_micros(750)])
        .expect("samples");
    assert_eq!(d.p50_ms, 0.25);
    assert_eq!(d.max_ms, 0.75);
}

#[test]
fn a_tail_shows_in_p99_not_in_p50() {
    let mut values = vec![1.0; 990];
    values.extend(vec![100.0; 10]);
    let d = Distribution::from_ms(values).expect("samples");
    assert_eq!(d.p50_ms, 1.0);
    assert_eq!(d.p99_ms, 1.0);
    let mut values = vec![1.0; 980];
    values.extend(vec![100.0; 20]);
    let d = Distribution::from_ms(values).expect("samples");
    assert_eq!(d.p99_ms, 100.0);
}
