//! Deterministic fuzzing of the response parser: random and mutated inputs, split at every
//! position; no panic, no hang, and the same verdict however the bytes are split.

use bakeoff_load::{ParseError, Response, ResponseParser};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

type Outcome = (Vec<Response>, Result<Option<Response>, ParseError>);

fn feed(parts: &[&[u8]], total: usize) -> Outcome {
    let mut p = ResponseParser::new(true);
    let mut out = Vec::new();
    let mut steps = 0usize;
    for part in parts {
        let mut d = *part;
        while !d.is_empty() {
            steps += 1;
            assert!(steps <= total + parts.len() + 1, "parser made no progress");
            match p.parse(d) {
                Ok((used, Some(r))) => {
                    assert!(used <= d.len());
                    assert!(r.body_len <= total as u64);
                    out.push(r);
                    d = &d[used..];
                }
                Ok((used, None)) => {
                    assert_eq!(used, d.len(), "an incomplete parse consumes everything");
                    break;
                }
                Err(e) => return (out, Err(e)),
            }
        }
    }
    (out, p.finish())
}

const SEEDS: &[&[u8]] = &[
    b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n7;a=b\r\n World!\r\n0\r\nT: x\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Err\r\nContent-Length: 3\r\n\r\nabc",
    b"HTTP/1.0 200 OK\r\n\r\nuntil close",
    b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
];

const TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\r\n\r\n",
    b"0\r\n\r\n",
    b"Content-Length: ",
    b"Transfer-Encoding: chunked\r\n",
    b"HTTP/1.1 200 OK\r\n",
    b"ffff",
    b";",
    b":",
    b"\n",
    b"\0",
];

fn mutate(r: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + r.below(4) {
        let pos = r.below(v.len() + 1);
        match r.below(6) {
            0 if !v.is_empty() => {
                let i = r.below(v.len());
                v[i] ^= 1 << r.below(8);
            }
            1 if !v.is_empty() => {
                let i = r.below(v.len());
                v[i] = r.next() as u8;
            }
            2 => v.insert(pos, r.next() as u8),
            3 if pos < v.len() => {
                let end = (pos + 1 + r.below(8)).min(v.len());
                v.drain(pos..end);
            }
            4 => {
                let t = TOKENS[r.below(TOKENS.len())];
                v.splice(pos..pos, t.iter().copied());
            }
            _ => v.truncate(pos),
        }
    }
    v
}

#[test]
fn fuzz_parser_split_consistency() {
    let mut r = Rng(0x5eed_1234_abcd_0001);
    let mut cases = 0usize;
    let mut complete = 0usize;
    for n in 0..6000 {
        let input: Vec<u8> = match n % 4 {
            // pure random bytes
            0 => (0..r.below(120)).map(|_| r.next() as u8).collect(),
            // mutated pipelines of valid responses
            _ => {
                let mut base = Vec::new();
                for _ in 0..1 + r.below(3) {
                    base.extend_from_slice(SEEDS[r.below(SEEDS.len())]);
                }
                mutate(&mut r, &base)
            }
        };
        let whole = feed(&[&input], input.len());
        complete += whole.0.len();
        for i in 0..=input.len() {
            let (a, b) = input.split_at(i);
            assert_eq!(feed(&[a, b], input.len()), whole, "input {input:?} split at {i}");
            cases += 1;
        }
        // and a random three-way split
        let i = r.below(input.len() + 1);
        let j = i + r.below(input.len() - i + 1);
        assert_eq!(feed(&[&input[..i], &input[i..j], &input[j..]], input.len()), whole);
    }
    assert!(cases > 300_000, "{cases}");
    // the mutations must not all be rejected: many still parse
    assert!(complete > 1000, "{complete}");
}
