//! libFuzzer target: the parser must not panic, and must give the same verdict
//! for the input fed whole and split at a fuzzer-chosen position.
#![no_main]

use bakeoff_load::ResponseParser;
use libfuzzer_sys::fuzz_target;

fn feed(parts: &[&[u8]]) -> String {
    let mut p = ResponseParser::new(true);
    let mut out = String::new();
    for part in parts {
        let mut d = *part;
        while !d.is_empty() {
            match p.parse(d) {
                Ok((used, Some(r))) => {
                    out.push_str(&format!("{r:?};"));
                    d = &d[used..];
                }
                Ok((_, None)) => break,
                Err(e) => return format!("{out}{e:?}"),
            }
        }
    }
    format!("{out}{:?}", p.finish())
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let split = data[0] as usize % data.len();
    let body = &data[1..];
    let split = split.min(body.len());
    assert_eq!(feed(&[body]), feed(&[&body[..split], &body[split..]]));
});
