//! The canonical JSON of a payload: RFC 8785, the JSON Canonicalization Scheme (JCS), so that
//! two texts of one JSON value (members in another order, other whitespace, `\u0041` for `A`,
//! `1.0` for `1`) have one canonical text, and so one wallet id.
//!
//! JCS is what `JSON.stringify` writes for the value `JSON.parse` reads, members sorted by their
//! names' UTF-16 code units:
//! - no whitespace; strings escape only `"`, `\` and the controls below U+0020 (`\b \t \n \f \r`,
//!   else `\u00xx`), every other character as itself;
//! - numbers are IEEE 754 doubles written as ECMAScript's `Number.prototype.toString` does (the
//!   shortest digits that read back to the same double; `1e+21`, `0.000001`, `1e-7`; `-0` is
//!   `0`), so integers past 2^53 lose digits as they do in JavaScript.
//!
//! serde_json with sorted keys would differ: it writes `1.0` and `1e21` where JCS writes `1` and
//! `1e+21`, keeps integers exact, sorts by UTF-8 bytes (U+FB01 before U+1F600; JCS after, by its
//! surrogates), and its default float reading may miss the nearest double by one unit.
//!
//! RFC 8785 calls some valid JSON out of scope (I-JSON); a link accepts it, so it is given the
//! canonical text JavaScript's reference implementation, `canonicalize(JSON.parse(text))`, gives
//! it: a repeated member name keeps its last value, a lone surrogate is written `\udxxx`, and a
//! number beyond the double range (`1e400`) is written `null`.

use std::fmt::Write;

use crate::links::MAX_PAYLOAD_DEPTH;

/// Why a text has no canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    #[error("the payload is not JSON")]
    Syntax,
    #[error("the payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels")]
    TooDeep,
}

/// The JCS text of the JSON value `json`.
pub fn canonical_json(json: &str) -> Result<String, CanonicalError> {
    let mut parser = Parser { json, pos: 0 };
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.pos != json.len() {
        return Err(CanonicalError::Syntax);
    }
    let mut out = String::with_capacity(json.len());
    write_value(&value, &mut out);
    Ok(out)
}

enum Node {
    Literal(&'static str),
    Number(f64),
    String(Vec<u16>),
    Array(Vec<Node>),
    /// Members sorted by name (code units), each name once.
    Object(Vec<(Vec<u16>, Node)>),
}

struct Parser<'a> {
    json: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.json.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), CanonicalError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(CanonicalError::Syntax)
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, CanonicalError> {
        self.skip_whitespace();
        match self.peek().ok_or(CanonicalError::Syntax)? {
            b'{' | b'[' if depth == MAX_PAYLOAD_DEPTH => Err(CanonicalError::TooDeep),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(Node::String),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            _ => self.number(),
        }
    }

    fn literal(&mut self, word: &'static str) -> Result<Node, CanonicalError> {
        if self.json[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(Node::Literal(word))
        } else {
            Err(CanonicalError::Syntax)
        }
    }

    /// Continues after `open` until `close`: empty, or `item`s separated by commas.
    fn list(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), CanonicalError>,
    ) -> Result<(), CanonicalError> {
        self.pos += 1;
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(byte) if byte == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(CanonicalError::Syntax),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Node, CanonicalError> {
        let mut items = Vec::new();
        self.list(b']', |parser| {
            items.push(parser.value(depth)?);
            Ok(())
        })?;
        Ok(Node::Array(items))
    }

    fn object(&mut self, depth: usize) -> Result<Node, CanonicalError> {
        let mut members = Vec::new();
        self.list(b'}', |parser| {
            parser.skip_whitespace();
            if parser.peek() != Some(b'"') {
                return Err(CanonicalError::Syntax);
            }
            let name = parser.string()?;
            parser.expect(b':')?;
            members.push((name, parser.value(depth)?));
            Ok(())
        })?;
        // A stable sort keeps repeated names in their order: the last one is kept.
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let mut unique: Vec<(Vec<u16>, Node)> = Vec::with_capacity(members.len());
        for member in members {
            match unique.last_mut() {
                Some(last) if last.0 == member.0 => *last = member,
                _ => unique.push(member),
            }
        }
        Ok(Node::Object(unique))
    }

    /// A string's UTF-16 code units (a lone surrogate escape kept as it is).
    fn string(&mut self) -> Result<Vec<u16>, CanonicalError> {
        self.pos += 1;
        let mut units = Vec::new();
        loop {
            let byte = self.peek().ok_or(CanonicalError::Syntax)?;
            self.pos += 1;
            match byte {
                b'"' => return Ok(units),
                b'\\' => units.push(self.escape()?),
                0..=0x1f => return Err(CanonicalError::Syntax),
                _ => {
                    let start = self.pos - 1;
                    let c = self.json[start..]
                        .chars()
                        .next()
                        .ok_or(CanonicalError::Syntax)?;
                    self.pos = start + c.len_utf8();
                    let mut buffer = [0; 2];
                    units.extend_from_slice(c.encode_utf16(&mut buffer));
                }
            }
        }
    }

    fn escape(&mut self) -> Result<u16, CanonicalError> {
        let byte = self.peek().ok_or(CanonicalError::Syntax)?;
        self.pos += 1;
        Ok(match byte {
            b'"' => 0x22,
            b'\\' => 0x5c,
            b'/' => 0x2f,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => 0x0a,
            b'r' => 0x0d,
            b't' => 0x09,
            b'u' => {
                let hex = self
                    .json
                    .get(self.pos..self.pos + 4)
                    .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .ok_or(CanonicalError::Syntax)?;
                self.pos += 4;
                u16::from_str_radix(hex, 16).map_err(|_| CanonicalError::Syntax)?
            }
            _ => return Err(CanonicalError::Syntax),
        })
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, read as the nearest double.
    fn number(&mut self) -> Result<Node, CanonicalError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(CanonicalError::Syntax),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.required_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.required_digits()?;
        }
        // Rust's float parsing rounds to nearest, as JavaScript's does.
        self.json[start..self.pos]
            .parse()
            .map(Node::Number)
            .map_err(|_| CanonicalError::Syntax)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn required_digits(&mut self) -> Result<(), CanonicalError> {
        let start = self.pos;
        self.digits();
        if self.pos == start {
            Err(CanonicalError::Syntax)
        } else {
            Ok(())
        }
    }
}

fn write_value(value: &Node, out: &mut String) {
    match value {
        Node::Literal(word) => out.push_str(word),
        Node::Number(number) => write_number(*number, out),
        Node::String(units) => write_string(units, out),
        Node::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            for (index, (name, value)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(name, out);
                out.push(':');
                write_value(value, out);
            }
            out.push('}');
        }
    }
}

fn write_string(units: &[u16], out: &mut String) {
    out.push('"');
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\t') => out.push_str("\\t"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\u{c}') => out.push_str("\\f"),
            Ok('\r') => out.push_str("\\r"),
            Ok(c) if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            Ok(c) => out.push(c),
            Err(lone) => {
                let _ = write!(out, "\\u{:04x}", lone.unpaired_surrogate());
            }
        }
    }
    out.push('"');
}

/// ECMAScript's `Number.prototype.toString` (ECMA-262, Number::toString), from the shortest
/// digits Rust's `{:e}` finds: `digits` × 10^(`n` - `k`), `k` digits.
fn write_number(number: f64, out: &mut String) {
    if number == 0.0 {
        out.push('0');
        return;
    }
    if !number.is_finite() {
        out.push_str("null");
        return;
    }
    if number < 0.0 {
        out.push('-');
    }
    let magnitude = number.abs();
    let shortest = format!("{magnitude:e}");
    // `{:e}` finds the fewest digits, but of two as near it takes the upper; ECMAScript takes
    // the nearer to the double, the even one on a tie (1424953923781206.25 is `...206.2`):
    // that is the exact value rounded to as many digits, when it reads back to the double.
    let precision = shortest.find('e').map_or(0, |e| e.saturating_sub(2));
    let nearest = format!("{magnitude:.precision$e}");
    let scientific = if nearest.parse() == Ok(magnitude) {
        nearest
    } else {
        shortest
    };
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits = mantissa.replace('.', "");
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let zeros = |count: i64| "0".repeat(usize::try_from(count).unwrap_or(0));
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.push_str(&zeros(n - k));
    } else if 0 < n && n <= 21 {
        let (int, fraction) = digits.split_at(usize::try_from(n).unwrap_or(0));
        let _ = write!(out, "{int}.{fraction}");
    } else if -6 < n && n <= 0 {
        let _ = write!(out, "0.{}{digits}", zeros(-n));
    } else {
        let (first, rest) = digits.split_at(1);
        let sign = if n > 0 { '+' } else { '-' };
        let dot = if rest.is_empty() { "" } else { "." };
        let _ = write!(out, "{first}{dot}{rest}e{sign}{}", (n - 1).abs());
    }
}

#[cfg(test)]
mod tests;
