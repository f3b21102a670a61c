//! Big-endian reads from a trace file's bytes, with errors that name the file, the rank and
//! the offset.

use super::DumpiError;

/// A position in one rank's file.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a str,
    rank: u32,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8], file: &'a str, rank: u32) -> Cursor<'a> {
        Cursor { bytes, at: 0, file, rank }
    }

    pub(super) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub(super) fn offset(&self) -> u64 {
        self.at as u64
    }

    /// The error `message` at byte `offset`.
    pub(super) fn error_at(&self, offset: u64, message: impl Into<String>) -> DumpiError {
        DumpiError {
            file: self.file.to_string(),
            rank: Some(self.rank),
            offset,
            line: None,
            message: message.into(),
        }
    }

    pub(super) fn seek(&mut self, to: u64) -> Result<(), DumpiError> {
        if to > self.len() {
            return Err(self.error_at(self.offset(), format!("a section at byte {to}, past the end")));
        }
        self.at = to as usize;
        Ok(())
    }

    /// The next `n` bytes.
    fn take(&mut self, n: u64) -> Result<&'a [u8], DumpiError> {
        let end = self.at as u64 + n;
        if end > self.len() {
            return Err(self.error_at(
                self.offset(),
                format!("the file ends here ({} bytes), in the middle of a value of {n} bytes", self.len()),
            ));
        }
        let s = &self.bytes[self.at..end as usize];
        self.at = end as usize;
        Ok(s)
    }

    pub(super) fn skip(&mut self, n: u64) -> Result<(), DumpiError> {
        self.take(n).map(|_| ())
    }

    pub(super) fn u8(&mut self) -> Result<u8, DumpiError> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u16(&mut self) -> Result<u16, DumpiError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }

    pub(super) fn u32(&mut self) -> Result<u32, DumpiError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    pub(super) fn i32(&mut self) -> Result<i32, DumpiError> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    pub(super) fn u64(&mut self) -> Result<u64, DumpiError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// An array of `i32` with its `u32` length; a length the rest of the file cannot hold is
    /// an error, not an allocation.
    pub(super) fn i32s(&mut self) -> Result<Vec<i32>, DumpiError> {
        let at = self.offset();
        let n = u64::from(self.u32()?);
        if n * 4 > self.len() - self.offset() {
            return Err(
                self.error_at(at, format!("an array of {n} numbers, more than the rest of the file holds"))
            );
        }
        (0..n).map(|_| self.i32()).collect()
    }

    /// Bytes with a `u32` length, skipped.
    pub(super) fn skip_bytes(&mut self) -> Result<(), DumpiError> {
        let n = u64::from(self.u32()?);
        self.skip(n)
    }
}
