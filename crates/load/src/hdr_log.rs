//! The HdrHistogram interval log (V2, deflate) of a run's per-second histograms: `--hdr-log`.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;

use crate::runner::StepDetail;

/// Writes an HdrHistogram interval log (V2, deflate): one interval per
/// measured second per step, tagged with the step label. Values are
/// microseconds; the max column is in milliseconds (divisor 1000).
pub fn write_hdr_log(path: &Path, details: &[StepDetail], start: SystemTime) -> std::io::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut ser = V2DeflateSerializer::new();
    let mut b = IntervalLogWriterBuilder::new();
    b.add_comment("bakeoff-load latency log; values in microseconds (corrected for coordinated omission on open schedules)");
    b.with_start_time(start).with_base_time(start).with_max_value_divisor(1000.0);
    let mut w = b.begin_log_with(&mut file, &mut ser)?;
    for d in details {
        let tag: String = d.label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
        for (i, h) in d.seconds.iter().enumerate() {
            let start = Duration::from_secs_f64(d.start_offset_s + i as f64);
            w.write_histogram(h, start, Duration::from_secs(1), Tag::new(&tag)).map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        }
    }
    drop(w);
    file.flush()
}
