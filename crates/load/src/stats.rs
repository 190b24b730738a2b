//! Histograms and per-thread recording: HDR in microseconds, summaries, trimmed means, (de)serialization.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::report::{ErrorCounts, ErrorKind, LatencyStats, TimelinePoint};

/// Highest trackable latency: 2 minutes, comfortably above the 60 s timeout
/// cap, so no recorded value is ever clamped.
pub const MAX_TRACKABLE_US: u64 = 120_000_000;

/// Main histograms: 1 µs .. 120 s at 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_US, 3).expect("valid histogram bounds")
}

/// Per-second timeline histograms: 2 significant digits (1%) is plenty for
/// a p50/p99 trace and keeps one second per thread at ~20 KB instead of ~150 KB.
pub fn new_timeline_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_US, 2).expect("valid histogram bounds")
}

/// Summary statistics of a histogram in microseconds (all zero if empty).
pub fn latency_stats(h: &Histogram<u64>) -> LatencyStats {
    if h.is_empty() {
        return LatencyStats::default();
    }
    let q = |x: f64| h.value_at_quantile(x) as f64;
    LatencyStats {
        min_us: h.min() as f64,
        mean_us: h.mean(),
        stddev_us: h.stdev(),
        p50_us: q(0.50),
        p75_us: q(0.75),
        p90_us: q(0.90),
        p95_us: q(0.95),
        p99_us: q(0.99),
        p999_us: q(0.999),
        p9999_us: q(0.9999),
        max_us: h.max() as f64,
        tm99_us: trimmed_mean(h, 99.0),
        tm999_us: trimmed_mean(h, 99.9),
        count: h.len(),
    }
}

/// perf-gauge's trimmed mean tm(x): the mean of the samples lying between the
/// p(100-x) and p(x) percentiles, both included. Computed from the histogram
/// buckets, each bucket counted at its median-equivalent value (as `mean`).
pub fn trimmed_mean(h: &Histogram<u64>, x: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let lo = h.value_at_quantile(1.0 - x / 100.0);
    let hi = h.value_at_quantile(x / 100.0);
    let (mut sum, mut n) = (0.0f64, 0u64);
    for v in h.iter_recorded() {
        let at = v.value_iterated_to();
        if at >= lo && at <= hi {
            let c = v.count_at_value();
            sum += h.median_equivalent(at) as f64 * c as f64;
            n += c;
        }
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// base64 (standard alphabet) of the V2-deflate serialization.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut buf).expect("in-memory serialization");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// A stored histogram that does not read back.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The text is not base64.
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// The bytes are not an HDR V2 histogram.
    #[error("histogram is not a valid V2 serialization: {0:?}")]
    Hdr(hdrhistogram::serialization::DeserializeError),
}

/// Reads back `StepReport::histogram` (V2 or V2-deflate, base64).
pub fn decode_histogram(b64: &str) -> Result<Histogram<u64>, DecodeError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64.trim())?;
    Deserializer::new().deserialize(&mut &bytes[..]).map_err(DecodeError::Hdr)
}

/// One second of the timeline (per thread, merged later).
#[derive(Debug, Clone)]
pub struct Second {
    pub requests: u64,
    pub errors: u64,
    pub hist: Histogram<u64>,
}

/// Everything one worker thread measures in one step. Owned by the thread,
/// merged by the coordinator after join: no sharing on the request path.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub latency: Histogram<u64>,
    pub service: Option<Histogram<u64>>,
    pub errors: ErrorCounts,
    pub requests: u64,
    pub bytes: u64,
    pub timeline: Vec<Second>,
    /// Start of the measured window (after warmup), worker clock in ns.
    pub measure_start_ns: u64,
    /// Events before this are warmup and are dropped.
    pub max_lag_ns: u64,
    /// With a deck, one per kind (indexed by kind); empty without one.
    pub kinds: Vec<KindRecorder>,
}

/// What one kind of a deck measured on one thread: only what the step report shows per kind.
#[derive(Debug, Clone)]
pub struct KindRecorder {
    pub requests: u64,
    pub errors: ErrorCounts,
    pub latency: Histogram<u64>,
}

impl KindRecorder {
    fn new() -> KindRecorder {
        KindRecorder { requests: 0, errors: ErrorCounts::default(), latency: new_histogram() }
    }
}

const MAX_TIMELINE_SECONDS: u64 = 7 * 24 * 3600;

impl Recorder {
    /// A recorder for a step whose measured window starts at `measure_start_ns`, with `kinds`
    /// per-kind recorders (0 without a deck).
    pub fn new(open: bool, measure_start_ns: u64, kinds: usize) -> Recorder {
        Recorder {
            latency: new_histogram(),
            service: open.then(new_histogram),
            errors: ErrorCounts::default(),
            requests: 0,
            bytes: 0,
            timeline: Vec::new(),
            measure_start_ns,
            max_lag_ns: 0,
            kinds: (0..kinds).map(|_| KindRecorder::new()).collect(),
        }
    }

    #[inline]
    pub fn measuring(&self, now: u64) -> bool {
        now >= self.measure_start_ns
    }

    #[inline]
    fn second(&mut self, now: u64) -> Option<&mut Second> {
        let s = (now - self.measure_start_ns) / 1_000_000_000;
        if s >= MAX_TIMELINE_SECONDS {
            return None;
        }
        let s = s as usize;
        while self.timeline.len() <= s {
            // One allocation per second, never per request.
            self.timeline.push(Second { requests: 0, errors: 0, hist: new_timeline_histogram() });
        }
        Some(&mut self.timeline[s])
    }

    /// A completed response: latency from `intended`, service time from `sent`.
    #[inline]
    pub fn response(&mut self, now: u64, intended: u64, sent: u64, ok: Option<ErrorKind>) {
        if !self.measuring(now) {
            return;
        }
        let lat_us = (now.saturating_sub(intended) / 1000).max(1);
        self.requests += 1;
        // Values are bounded by the timeout (<= 60 s) so these never fail.
        let _ = self.latency.record(lat_us);
        if let Some(s) = &mut self.service {
            let _ = s.record((now.saturating_sub(sent) / 1000).max(1));
        }
        let failed = ok.is_some();
        if let Some(kind) = ok {
            self.errors.add(kind, 1);
        }
        if let Some(sec) = self.second(now) {
            sec.requests += 1;
            sec.errors += failed as u64;
            let _ = sec.hist.record(lat_us);
        }
    }

    #[inline]
    pub fn error(&mut self, now: u64, kind: ErrorKind, n: u64) {
        if n == 0 || !self.measuring(now) {
            return;
        }
        self.errors.add(kind, n);
        if let Some(sec) = self.second(now) {
            sec.errors += n;
        }
    }

    /// A completed response of deck kind `kind`, recorded after [`Self::response`] (which counts
    /// it in the totals).
    #[inline]
    pub fn kind_response(&mut self, kind: u16, now: u64, intended: u64, ok: Option<ErrorKind>) {
        if !self.measuring(now) {
            return;
        }
        let k = &mut self.kinds[usize::from(kind)];
        k.requests += 1;
        let _ = k.latency.record((now.saturating_sub(intended) / 1000).max(1));
        if let Some(err) = ok {
            k.errors.add(err, 1);
        }
    }

    /// `n` failed requests of deck kind `kind`, counted in the totals by [`Self::error`].
    #[inline]
    pub fn kind_error(&mut self, kind: u16, now: u64, err: ErrorKind, n: u64) {
        if n > 0 && self.measuring(now) {
            self.kinds[usize::from(kind)].errors.add(err, n);
        }
    }

    #[inline]
    pub fn bytes(&mut self, now: u64, n: usize) {
        if self.measuring(now) {
            self.bytes += n as u64;
        }
    }

    pub fn merge(&mut self, o: &Recorder) {
        let _ = self.latency.add(&o.latency);
        if let (Some(a), Some(b)) = (&mut self.service, &o.service) {
            let _ = a.add(b);
        }
        self.errors.merge(&o.errors);
        self.requests += o.requests;
        self.bytes += o.bytes;
        self.max_lag_ns = self.max_lag_ns.max(o.max_lag_ns);
        if self.kinds.len() < o.kinds.len() {
            self.kinds.resize_with(o.kinds.len(), KindRecorder::new);
        }
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.requests += b.requests;
            a.errors.merge(&b.errors);
            let _ = a.latency.add(&b.latency);
        }
        for (i, s) in o.timeline.iter().enumerate() {
            if self.timeline.len() <= i {
                self.timeline.push(Second { requests: 0, errors: 0, hist: new_timeline_histogram() });
            }
            let d = &mut self.timeline[i];
            d.requests += s.requests;
            d.errors += s.errors;
            let _ = d.hist.add(&s.hist);
        }
    }

    pub fn timeline_points(&self) -> Vec<TimelinePoint> {
        self.timeline
            .iter()
            .enumerate()
            .map(|(i, s)| TimelinePoint {
                second: i as u32,
                requests: s.requests,
                errors: s.errors,
                p50_us: if s.hist.is_empty() { 0.0 } else { s.hist.value_at_quantile(0.5) as f64 },
                p99_us: if s.hist.is_empty() { 0.0 } else { s.hist.value_at_quantile(0.99) as f64 },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_on_known_data() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let s = latency_stats(&h);
        assert_eq!(s.count, 10_000);
        assert_eq!(s.min_us, 1.0);
        let close = |a: f64, b: f64| (a - b).abs() / b < 0.002;
        assert!(close(s.p50_us, 5000.0), "{}", s.p50_us);
        assert!(close(s.p90_us, 9000.0));
        assert!(close(s.p99_us, 9900.0));
        assert!(close(s.max_us, 10_000.0));
        assert!(close(s.mean_us, 5000.5));
        // Uniform data: trimming 1% at each end keeps the mean in the middle.
        assert!(close(s.tm99_us, 5000.5), "{}", s.tm99_us);
        assert!((s.stddev_us - 2886.75).abs() < 10.0, "{}", s.stddev_us);
    }

    #[test]
    fn trimmed_mean_drops_outliers() {
        let mut h = new_histogram();
        h.record_n(100, 990).unwrap();
        h.record_n(1_000_000, 10).unwrap();
        // p99 = 100, so the outliers above p99 are excluded.
        assert!((trimmed_mean(&h, 99.0) - 100.0).abs() < 0.5);
        // tm99.9 includes them: p99.9 is the outlier bucket.
        let m = trimmed_mean(&h, 99.9);
        assert!(m > 10_000.0, "{m}");
        assert!((h.mean() - m).abs() / m < 0.01);
        assert_eq!(trimmed_mean(&new_histogram(), 99.0), 0.0);
        assert_eq!(latency_stats(&new_histogram()), LatencyStats::default());
    }

    #[test]
    fn long_latencies_are_not_capped() {
        let mut h = new_histogram();
        h.record(59_000_000).unwrap();
        h.record(10).unwrap();
        let s = latency_stats(&h);
        assert!((s.max_us - 59_000_000.0).abs() / 59e6 < 0.001);
    }

    #[test]
    fn histogram_roundtrip() {
        let mut h = new_histogram();
        for v in [1u64, 50, 50, 1234, 99_999] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(latency_stats(&back), latency_stats(&h));
        assert!(decode_histogram("!!!").is_err());
        assert!(decode_histogram("AAAA").is_err());
    }

    #[test]
    fn recorder_drops_warmup_and_merges() {
        let mut a = Recorder::new(true, 1_000_000_000, 0);
        a.response(500, 0, 0, None); // warmup
        a.error(600, ErrorKind::Read, 1); // warmup
        a.response(1_500_000_000, 1_400_000_000, 1_450_000_000, None);
        a.response(2_600_000_000, 2_500_000_000, 2_500_000_000, Some(ErrorKind::Status(500)));
        assert_eq!(a.requests, 2);
        assert_eq!(a.errors.total(), 1);
        let mut b = Recorder::new(true, 1_000_000_000, 0);
        b.merge(&a);
        b.merge(&a);
        assert_eq!(b.requests, 4);
        assert_eq!(b.errors.status[&500], 2);
        let t = b.timeline_points();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].requests, 2);
        assert_eq!(t[1].errors, 2);
        assert_eq!(b.service.as_ref().unwrap().len(), 4);
        // Latency from intended (100 ms), service from sent (50 ms).
        assert!((b.latency.value_at_quantile(0.25) as f64 - 100_000.0).abs() < 100.0);
        assert!((b.service.as_ref().unwrap().value_at_quantile(0.25) as f64 - 50_000.0).abs() < 100.0);
    }
}
