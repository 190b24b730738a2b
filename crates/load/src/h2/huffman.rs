//! HPACK's Huffman code (RFC 7541, Appendix B) and its decoder: a state machine over nibbles, built
//! once from the code's bit lengths, so a byte costs two table lookups.
//!
//! The code is canonical (codes assigned in order of length, then symbol), so the 257 lengths below
//! define it; `tests` checks codes the RFC lists against that rule.

use std::sync::OnceLock;

/// The bit length of each symbol's code: bytes 0-255, then EOS (256).
pub(crate) const CODE_LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, 6, 10,
    10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6,
    7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23,
    21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22,
    22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28,
    27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27,
    26, 30,
];

const EOS: u16 = 256;

/// One step of the decoder: from a state, four bits in.
#[derive(Clone, Copy, Default)]
struct Step {
    /// The state after the four bits.
    next: u8,
    /// The symbol completed within them, if any (a code is at least five bits: at most one).
    emit: Option<u8>,
    /// The bits reached EOS or left the code: the string is malformed.
    fail: bool,
}

/// The decoder's tables: a state per internal node of the code's tree (256 for 257 leaves).
struct Machine {
    steps: Vec<Step>,
    /// Whether a string may end in this state: the root, or padding of fewer than eight ones (a
    /// prefix of EOS, RFC 7541 5.2).
    may_end: Vec<bool>,
}

/// A node of the code's tree while it is built: children by bit, a leaf's symbol.
#[derive(Clone, Copy, Default)]
struct Node {
    child: [Option<u16>; 2],
    symbol: Option<u16>,
}

/// The canonical code of each symbol, `(code, length)`.
pub(crate) fn codes() -> Vec<(u32, u8)> {
    let mut order: Vec<u16> = (0..257).collect();
    order.sort_by_key(|&s| (CODE_LENGTHS[usize::from(s)], s));
    let mut codes = vec![(0u32, 0u8); 257];
    let (mut code, mut prev) = (0u32, CODE_LENGTHS[usize::from(order[0])]);
    for (k, &s) in order.iter().enumerate() {
        let len = CODE_LENGTHS[usize::from(s)];
        if k > 0 {
            code = (code + 1) << (len - prev);
            prev = len;
        }
        codes[usize::from(s)] = (code, len);
    }
    codes
}

fn machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(build)
}

fn build() -> Machine {
    // The tree: node 0 the root; internal nodes get state numbers in the order they are made.
    let mut nodes = vec![Node::default()];
    for (symbol, (code, len)) in codes().into_iter().enumerate() {
        let mut at = 0usize;
        for bit in (0..len).rev() {
            let b = ((code >> bit) & 1) as usize;
            at = match nodes[at].child[b] {
                Some(n) => usize::from(n),
                None => {
                    nodes.push(Node::default());
                    let n = nodes.len() - 1;
                    nodes[at].child[b] = Some(n as u16);
                    n
                }
            };
        }
        nodes[at].symbol = Some(symbol as u16);
    }
    let internal: Vec<usize> = (0..nodes.len()).filter(|&n| nodes[n].symbol.is_none()).collect();
    let mut state_of = vec![u8::MAX; nodes.len()];
    for (s, &n) in internal.iter().enumerate() {
        state_of[n] = u8::try_from(s).expect("256 internal nodes");
    }
    let mut steps = vec![Step::default(); internal.len() * 16];
    for (s, &start) in internal.iter().enumerate() {
        for nibble in 0..16u8 {
            let (mut at, mut step) = (start, Step::default());
            for bit in (0..4).rev() {
                match nodes[at].child[usize::from((nibble >> bit) & 1)] {
                    None => step.fail = true,
                    Some(n) => at = usize::from(n),
                }
                if step.fail {
                    break;
                }
                if let Some(symbol) = nodes[at].symbol {
                    if symbol == EOS {
                        step.fail = true;
                        break;
                    }
                    step.emit = Some(symbol as u8);
                    at = 0;
                }
            }
            step.next = if step.fail { 0 } else { state_of[at] };
            steps[s * 16 + usize::from(nibble)] = step;
        }
    }
    // Padding: the states reached from the root by one to seven ones.
    let mut may_end = vec![false; internal.len()];
    let mut at = 0usize;
    may_end[0] = true;
    for _ in 0..7 {
        match nodes[at].child[1] {
            Some(n) if nodes[usize::from(n)].symbol.is_none() => {
                at = usize::from(n);
                may_end[usize::from(state_of[at])] = true;
            }
            _ => break,
        }
    }
    Machine { steps, may_end }
}

/// The Huffman string in `input` decoded onto `out`; false if it is malformed (EOS, a code that
/// does not exist, or padding that is not a short run of ones).
pub(crate) fn decode(input: &[u8], out: &mut Vec<u8>) -> bool {
    let m = machine();
    let mut state = 0usize;
    for &byte in input {
        for nibble in [byte >> 4, byte & 0x0f] {
            let step = m.steps[state * 16 + usize::from(nibble)];
            if step.fail {
                return false;
            }
            if let Some(b) = step.emit {
                out.push(b);
            }
            state = usize::from(step.next);
        }
    }
    m.may_end[state]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes as RFC 7541 5.2 says: codes most significant bit first, padded with ones.
    fn encode(text: &[u8]) -> Vec<u8> {
        let codes = codes();
        let (mut out, mut acc, mut bits) = (Vec::new(), 0u64, 0u32);
        for &b in text {
            let (code, len) = codes[usize::from(b)];
            acc = (acc << len) | u64::from(code);
            bits += u32::from(len);
            while bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) as u8);
        }
        out
    }

    #[test]
    fn canonical_codes_are_the_rfcs() {
        let c = codes();
        // RFC 7541 Appendix B: '0' 00000, 'a' 00011, ' ' 010100, '%' 010101, EOS 30 ones.
        assert_eq!(c[usize::from(b'0')], (0b00000, 5));
        assert_eq!(c[usize::from(b'a')], (0b00011, 5));
        assert_eq!(c[usize::from(b' ')], (0b010100, 6));
        assert_eq!(c[usize::from(b'%')], (0b010101, 6));
        assert_eq!(c[256], (0x3fff_ffff, 30));
        assert_eq!(c[0], (0x1ff8, 13));
    }

    #[test]
    fn decodes_the_rfcs_examples_and_round_trips_every_byte() {
        // RFC 7541 C.4.1: "www.example.com".
        let input = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let mut out = Vec::new();
        assert!(decode(&input, &mut out));
        assert_eq!(out, b"www.example.com");
        let all: Vec<u8> = (0..=255).chain((0..=255).rev()).collect();
        out.clear();
        assert!(decode(&encode(&all), &mut out));
        assert_eq!(out, all);
    }

    #[test]
    fn refuses_eos_and_bad_padding() {
        let mut out = Vec::new();
        // Eight ones of padding: longer than the seven allowed.
        let mut bad = encode(b"a");
        bad.push(0xff);
        assert!(!decode(&bad, &mut out));
        // EOS itself (30 ones) inside the string.
        assert!(!decode(&[0xff, 0xff, 0xff, 0xff], &mut out));
        // Padding of zeros: not a prefix of EOS.
        assert!(!decode(&[0b0001_1000], &mut out));
    }
}
