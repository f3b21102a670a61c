//! The protobuf wire format, read by hand: keys (field number and wire type), varints,
//! 64- and 32-bit fixed values and length-delimited bytes, each error carrying the byte
//! offset where it was found (see the module's documentation for why there is no code
//! generator).
//!
//! Facts from protobuf's encoding guide (`docs/programming-guides/encoding.md` of
//! protocolbuffers/protobuf): a key is the varint `field << 3 | wire type`; wire types are
//! 0 varint, 1 64-bit, 2 length-delimited, 3 and 4 start and end of a group (deprecated,
//! unused by Chakra's schema), 5 32-bit; a varint holds at most 64 bits in at most ten
//! bytes, seven bits a byte, least significant first.

use std::fmt;

/// What went wrong, and at which byte of the (decompressed) file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Fault {
    pub(super) offset: u64,
    pub(super) message: String,
}

pub(super) type Result<T> = std::result::Result<T, Fault>;

/// The fault `message` at byte `offset`.
pub(super) fn fault(offset: usize, message: impl Into<String>) -> Fault {
    Fault { offset: offset as u64, message: message.into() }
}

/// The four wire types Chakra's messages use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wire {
    Varint,
    I64,
    Len,
    I32,
}

impl fmt::Display for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Wire::Varint => "0 (varint)",
            Wire::I64 => "1 (64-bit)",
            Wire::Len => "2 (length-delimited)",
            Wire::I32 => "5 (32-bit)",
        })
    }
}

/// One field's key: its number, its wire type and where the key starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Key {
    pub(super) field: u64,
    pub(super) wire: Wire,
    pub(super) at: usize,
}

impl Key {
    /// Fails unless the field has wire type `wire`; `what` names the field in the message.
    pub(super) fn expect(&self, wire: Wire, what: &str) -> Result<()> {
        if self.wire == wire {
            Ok(())
        } else {
            Err(fault(
                self.at,
                format!(
                    "field {} ({what}) has wire type {}, where the schema has {wire}",
                    self.field, self.wire
                ),
            ))
        }
    }
}

/// A position in a message: bytes `at..end` of the file remain to be read. Offsets are
/// the file's, whatever message the reader is in.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    end: usize,
}

impl<'a> Reader<'a> {
    /// The whole of `bytes`.
    pub(super) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0, end: bytes.len() }
    }

    pub(super) fn offset(&self) -> usize {
        self.at
    }

    pub(super) fn is_empty(&self) -> bool {
        self.at >= self.end
    }

    /// The bytes left, as a slice of the file.
    pub(super) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..self.end]
    }

    pub(super) fn varint(&mut self) -> Result<u64> {
        let start = self.at;
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.bytes[..self.end].get(self.at) else {
                return Err(fault(start, "the message ends inside a varint"));
            };
            self.at += 1;
            if i == 9 && byte > 1 {
                return Err(fault(start, "a varint of more than 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(fault(start, "a varint of more than ten bytes"))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.end - self.at < n {
            return Err(fault(
                self.at,
                format!("the message ends {} bytes on, inside {what} of {n} bytes", self.end - self.at),
            ));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    pub(super) fn fixed64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8, "a 64-bit value")?.try_into().expect("8 bytes")))
    }

    pub(super) fn fixed32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, "a 32-bit value")?.try_into().expect("4 bytes")))
    }

    /// A length-delimited value (its varint length, then its bytes), as a reader of its own.
    pub(super) fn delimited(&mut self) -> Result<Reader<'a>> {
        let start = self.at;
        let len = self.varint()?;
        let left = (self.end - self.at) as u64;
        if len > left {
            return Err(fault(
                start,
                format!("a length-delimited value of {len} bytes, but its message has {left} bytes left"),
            ));
        }
        let sub = Reader { bytes: self.bytes, at: self.at, end: self.at + len as usize };
        self.at += len as usize;
        Ok(sub)
    }

    /// The next field's key.
    pub(super) fn key(&mut self) -> Result<Key> {
        let at = self.at;
        let key = self.varint()?;
        let field = key >> 3;
        let wire = match key & 7 {
            0 => Wire::Varint,
            1 => Wire::I64,
            2 => Wire::Len,
            5 => Wire::I32,
            w @ (3 | 4) => {
                return Err(fault(
                    at,
                    format!(
                        "field {field} has wire type {w} ({} group), which Chakra's schema never uses",
                        if w == 3 { "start of a" } else { "end of a" }
                    ),
                ))
            }
            w => {
                return Err(fault(
                    at,
                    format!("field {field} has wire type {w}, which protobuf does not define"),
                ))
            }
        };
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(fault(at, format!("field number {field} is not a protobuf field number")));
        }
        Ok(Key { field, wire, at })
    }

    /// Reads past the value of a field of wire type `wire` (an unknown field).
    pub(super) fn skip(&mut self, wire: Wire) -> Result<()> {
        match wire {
            Wire::Varint => self.varint().map(drop),
            Wire::I64 => self.fixed64().map(drop),
            Wire::I32 => self.fixed32().map(drop),
            Wire::Len => self.delimited().map(drop),
        }
    }

    /// A string field's value (invalid UTF-8 is replaced, as names are only shown).
    pub(super) fn string(&mut self) -> Result<String> {
        Ok(String::from_utf8_lossy(self.delimited()?.rest()).into_owned())
    }

    /// The values of a repeated `uint64` field: one unpacked value (a varint) or a packed
    /// run of them (length-delimited), both of which protobuf parsers accept.
    pub(super) fn uint64s(&mut self, key: Key, what: &str, into: &mut Vec<u64>) -> Result<()> {
        match key.wire {
            Wire::Varint => into.push(self.varint()?),
            Wire::Len => {
                let mut packed = self.delimited()?;
                while !packed.is_empty() {
                    into.push(packed.varint()?);
                }
            }
            _ => key.expect(Wire::Len, what)?,
        }
        Ok(())
    }
}

/// The messages of a Chakra file: each a varint length and that many bytes. Yields
/// `(offset of the length, the message)`.
pub(super) struct Stream<'a> {
    r: Reader<'a>,
}

impl<'a> Stream<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Stream<'a> {
        Stream { r: Reader::new(bytes) }
    }

    pub(super) fn next_message(&mut self) -> Option<Result<(usize, Reader<'a>)>> {
        if self.r.is_empty() {
            return None;
        }
        let at = self.r.offset();
        let len = match self.r.varint() {
            Ok(len) => len,
            Err(f) => return Some(Err(fault(at, format!("{}, a message's length: truncated", f.message)))),
        };
        let left = (self.r.end - self.r.at) as u64;
        if len > left {
            let m = format!(
                "a message of {len} bytes starts here, but {left} bytes follow its length: truncated"
            );
            return Some(Err(fault(at, m)));
        }
        let m = Reader { bytes: self.r.bytes, at: self.r.at, end: self.r.at + len as usize };
        self.r.at += len as usize;
        Some(Ok((at, m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_seven_bits_a_byte_least_significant_first() {
        assert_eq!(Reader::new(&[0x96, 0x01]).varint(), Ok(150));
        assert_eq!(Reader::new(&[0x80, 0x80, 0x40]).varint(), Ok(1 << 20));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Reader::new(&max).varint(), Ok(u64::MAX));
        let over = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(Reader::new(&over).varint().is_err());
        assert_eq!(Reader::new(&[0x80]).varint().unwrap_err().offset, 0);
    }

    #[test]
    fn group_wire_types_are_refused() {
        let e = Reader::new(&[0x0b]).key().unwrap_err();
        assert!(e.message.contains("wire type 3"), "{}", e.message);
        let e = Reader::new(&[0x0c]).key().unwrap_err();
        assert!(e.message.contains("wire type 4"), "{}", e.message);
    }

    #[test]
    fn a_truncated_stream_names_where_its_last_message_starts() {
        // One whole message of 2 bytes, then one announcing 5 with 3 left.
        let bytes = [2, 8, 1, 5, 8, 1];
        let mut s = Stream::new(&bytes);
        assert_eq!(s.next_message().unwrap().unwrap().0, 0);
        let f = s.next_message().unwrap().unwrap_err();
        assert_eq!(f.offset, 3);
        assert!(f.message.contains("5 bytes") && f.message.contains("truncated"), "{}", f.message);
    }
}
