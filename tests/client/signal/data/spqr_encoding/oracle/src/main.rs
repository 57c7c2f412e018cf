// Test-vector oracle: drives spqr v1.5.1's encoding module (copied in by gen_vectors.py).
#![allow(dead_code, unused)]
mod encoding;

mod sorted_vec {
    // Stand-in for sorted-vec 0.8's SortedSet: push replaces an equal element (per its docs).
    #[derive(Clone)]
    pub struct SortedSet<T: Ord> { v: Vec<T> }
    impl<T: Ord> SortedSet<T> {
        pub fn new() -> Self { Self { v: Vec::new() } }
        pub fn with_capacity(c: usize) -> Self { Self { v: Vec::with_capacity(c) } }
        pub fn push(&mut self, e: T) -> (usize, Option<T>) {
            match self.v.binary_search(&e) {
                Ok(i) => { let old = std::mem::replace(&mut self.v[i], e); (i, Some(old)) }
                Err(i) => { self.v.insert(i, e); (i, None) }
            }
        }
    }
    impl<T: Ord> std::ops::Deref for SortedSet<T> { type Target = [T]; fn deref(&self) -> &[T] { &self.v } }
}

mod proto {
    pub mod pq_ratchet {
        pub struct PolynomialEncoder { pub idx: u32, pub pts: Vec<Vec<u8>>, pub polys: Vec<Vec<u8>> }
        pub struct PolynomialDecoder { pub pts_needed: u32, pub polys: u32, pub pts: Vec<Vec<u8>>, pub is_complete: bool }
    }
}

use encoding::{Chunk, Decoder, Encoder};
use encoding::gf::GF16;
use encoding::polynomial::{PolyDecoder, PolyEncoder};
use std::io::BufRead;

fn hex(b: &[u8]) -> String { b.iter().map(|x| format!("{x:02x}")).collect() }

fn message(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed;
    (0..len).map(|_| { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (x >> 56) as u8 }).collect()
}

fn main() {
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() { continue; }
        match f[0] {
            "GF" => {
                let a: u16 = f[1].parse().unwrap();
                let b: u16 = f[2].parse().unwrap();
                let (x, y) = (GF16::new(a), GF16::new(b));
                println!("{} {} {}", (x * y).value, (x / y).value, x.const_div(&y).value);
            }
            "ENC" => {
                let seed: u64 = f[1].parse().unwrap();
                let len: usize = f[2].parse().unwrap();
                let msg = message(seed, len);
                match PolyEncoder::encode_bytes(&msg) {
                    Err(e) => println!("ERR {e:?}"),
                    Ok(mut enc) => {
                        let mut out = Vec::new();
                        for s in f[3].split(',') {
                            let idx: u16 = s.parse().unwrap();
                            out.push(hex(&enc.chunk_at(idx).data));
                        }
                        println!("{}", out.join(" "));
                    }
                }
            }
            "NEXT" => {
                // NEXT seed len count : next_chunk() indices and data
                let msg = message(f[1].parse().unwrap(), f[2].parse().unwrap());
                let mut enc = PolyEncoder::encode_bytes(&msg).unwrap();
                let n: usize = f[3].parse().unwrap();
                let mut out = Vec::new();
                for _ in 0..n { let c = enc.next_chunk(); out.push(format!("{}:{}", c.index, hex(&c.data))); }
                println!("{}", out.join(" "));
            }
            "DEC" => {
                // DEC len op op ... ; op = seed:msglen:idx:flippos:flipval
                let len: usize = f[1].parse().unwrap();
                match PolyDecoder::new(len) {
                    Err(e) => println!("ERR {e:?}"),
                    Ok(mut dec) => {
                        let mut out = Vec::new();
                        let mut encs: std::collections::HashMap<(u64, usize), PolyEncoder> = Default::default();
                        for op in &f[2..] {
                            let p: Vec<u64> = op.split(':').map(|v| v.parse().unwrap()).collect();
                            let enc = encs.entry((p[0], p[1] as usize)).or_insert_with(|| PolyEncoder::encode_bytes(&message(p[0], p[1] as usize)).unwrap());
                            let mut c = enc.chunk_at(p[2] as u16);
                            c.data[p[3] as usize] ^= p[4] as u8;
                            dec.add_chunk(&c);
                            out.push(match dec.decoded_message() { None => "-".to_string(), Some(m) => hex(&m) });
                        }
                        let pb = dec.into_pb();
                        let pts: Vec<String> = pb.pts.iter().map(|v| hex(v)).collect();
                        println!("{} | {}", out.join(" "), pts.join(","));
                    }
                }
            }
            _ => panic!("bad command"),
        }
    }
}
