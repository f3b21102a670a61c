//! The GOAL reader: streams the text line by line (one line in memory at a time, besides
//! the current rank's labels) into a [`ScheduleBuilder`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::error::GoalError;
use crate::graph::{Op, OpId, Schedule, ScheduleBuilder, Source, TagMatch};

/// The longest line read (a guard against reading a file that is not text into memory).
const MAX_LINE: u64 = 1 << 20;
/// The most ranks a schedule may declare (each rank costs 24 bytes even when empty).
pub const MAX_RANKS: u32 = 1 << 24;

/// Reads a GOAL schedule from `input`; `file` names it in errors. Streams: one line is in
/// memory at a time, plus the labels of the current rank.
///
/// # Errors
/// [`GoalError::Syntax`] at the first line that is not GOAL (see [`crate::goal`] for the
/// grammar), naming the file, the line, the rank and what was expected; [`GoalError::Io`]
/// when reading fails.
pub fn read_goal<R: BufRead>(mut input: R, file: &str) -> Result<Schedule, GoalError> {
    let mut r = Reader::new(file);
    let mut buf = Vec::new();
    let mut toks = Vec::new();
    loop {
        buf.clear();
        let n = (&mut input)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|source| GoalError::Io { file: file.to_string(), source })?;
        if n == 0 {
            break;
        }
        r.line += 1;
        if buf.len() as u64 > MAX_LINE {
            return Err(r.error(format!("line longer than {MAX_LINE} bytes")));
        }
        if !r.in_comment {
            r.comment_line = r.line;
        }
        r.in_comment = lex(&buf, r.in_comment, &mut toks);
        r.read_line(&buf, &toks)?;
    }
    r.finish()
}

/// Reads the GOAL file at `path` (see [`read_goal`]); errors name the path.
///
/// # Errors
/// As [`read_goal`]; also when the file cannot be opened.
pub fn read_goal_file(path: &Path) -> Result<Schedule, GoalError> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|source| GoalError::Io { file: name.clone(), source })?;
    read_goal(BufReader::with_capacity(1 << 16, f), &name)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Word,
    /// Digits; `value` is `None` when they overflow 64 bits.
    Int,
    /// `-1`: any source, any tag.
    AnyMark,
    Colon,
    Open,
    Close,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
    value: Option<u64>,
}

/// Splits `line` into `toks`, leaving out comments; `in_comment`: whether the line starts
/// inside a `/* */` comment. Returns whether it ends inside one.
fn lex(line: &[u8], mut in_comment: bool, toks: &mut Vec<Tok>) -> bool {
    toks.clear();
    let mut i = 0;
    while i < line.len() {
        if in_comment {
            match line[i..].windows(2).position(|w| w == b"*/") {
                Some(p) => {
                    i += p + 2;
                    in_comment = false;
                    continue;
                }
                None => return true,
            }
        }
        let c = line[i];
        let rest = &line[i..];
        let tok = |kind, len| Tok { kind, start: i, end: i + len, value: None };
        let t = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if rest.starts_with(b"//") {
            break;
        } else if rest.starts_with(b"/*") {
            in_comment = true;
            i += 2;
            continue;
        } else if c.is_ascii_alphabetic() {
            let len = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
            tok(Kind::Word, len)
        } else if c.is_ascii_digit() {
            let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let value =
                rest[..len].iter().try_fold(0u64, |v, d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')));
            Tok { value, ..tok(Kind::Int, len) }
        } else if rest.starts_with(b"-1") && !rest.get(2).is_some_and(u8::is_ascii_digit) {
            tok(Kind::AnyMark, 2)
        } else {
            let kind = match c {
                b':' => Kind::Colon,
                b'{' => Kind::Open,
                b'}' => Kind::Close,
                _ => Kind::Other,
            };
            tok(kind, 1)
        };
        i = t.end;
        toks.push(t);
    }
    in_comment
}

/// The tokens of one line and a cursor.
struct Line<'a> {
    text: &'a [u8],
    toks: &'a [Tok],
    at: usize,
}

impl<'a> Line<'a> {
    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.at).copied()
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.peek();
        self.at += usize::from(t.is_some());
        t
    }

    fn text(&self, t: Tok) -> &'a [u8] {
        &self.text[t.start..t.end]
    }

    /// Whether `t` is the word `w`.
    fn is(&self, t: Option<Tok>, w: &str) -> bool {
        t.is_some_and(|t| t.kind == Kind::Word && self.text(t) == w.as_bytes())
    }

    /// `'token'`, or `end of line`, for messages.
    fn show(&self, t: Option<Tok>) -> String {
        match t {
            Some(t) => format!("'{}'", self.text(t).escape_ascii()),
            None => "end of line".to_string(),
        }
    }
}

/// A dependency naming a label not (yet) defined, resolved at the rank's `}`.
struct Pending {
    line: u64,
    start: bool,
    b: Vec<u8>,
    a: Vec<u8>,
}

struct Reader {
    file: String,
    line: u64,
    in_comment: bool,
    /// The line a still open `/*` comment began on.
    comment_line: u64,
    num_ranks: Option<u32>,
    /// The rank whose block is open.
    rank: Option<u32>,
    b: ScheduleBuilder,
    labels: HashMap<Vec<u8>, OpId>,
    pending: Vec<Pending>,
}

impl Reader {
    fn new(file: &str) -> Reader {
        Reader {
            file: file.to_string(),
            line: 0,
            in_comment: false,
            comment_line: 0,
            num_ranks: None,
            rank: None,
            b: ScheduleBuilder::new(),
            labels: HashMap::new(),
            pending: Vec::new(),
        }
    }

    fn error(&self, message: impl Into<String>) -> GoalError {
        GoalError::Syntax {
            file: self.file.clone(),
            line: self.line,
            rank: self.rank,
            message: message.into(),
        }
    }

    fn read_line(&mut self, text: &[u8], toks: &[Tok]) -> Result<(), GoalError> {
        let mut l = Line { text, toks, at: 0 };
        while l.peek().is_some() {
            if self.rank.is_some() {
                self.statement(&mut l)?;
            } else {
                self.top(&mut l)?;
            }
        }
        Ok(())
    }

    /// The integer after `what`, which must fit in `max`.
    fn int(&self, l: &mut Line<'_>, what: &str, max: u64) -> Result<u64, GoalError> {
        let t = l.next();
        match t {
            Some(Tok { kind: Kind::Int, value: Some(v), .. }) if v <= max => Ok(v),
            Some(Tok { kind: Kind::Int, .. }) => {
                Err(self.error(format!("{} is too large for {what}", l.show(t))))
            }
            _ => Err(self.error(format!("expected {what}, got {}", l.show(t)))),
        }
    }

    /// `num_ranks N` or `rank N {`.
    fn top(&mut self, l: &mut Line<'_>) -> Result<(), GoalError> {
        let t = l.next();
        if l.is(t, "num_ranks") {
            if self.num_ranks.is_some() {
                return Err(self.error("'num_ranks' is given twice"));
            }
            let n = self.int(l, "a number of ranks after 'num_ranks'", u64::from(MAX_RANKS))?;
            if n == 0 {
                return Err(self.error("'num_ranks' must be at least 1"));
            }
            self.num_ranks = Some(n as u32);
            Ok(())
        } else if l.is(t, "rank") {
            let Some(num_ranks) = self.num_ranks else {
                return Err(self.error("expected 'num_ranks' before the first rank"));
            };
            let r = self.int(l, "a rank number after 'rank'", u64::from(u32::MAX))? as u32;
            if r >= num_ranks {
                return Err(self.error(format!("rank {r} is out of range: num_ranks is {num_ranks}")));
            }
            if r < self.b.num_ranks() {
                return Err(self.error(format!(
                    "rank {r} comes too late: ranks must be in increasing order, each once"
                )));
            }
            let open = l.next();
            if open.map(|t| t.kind) != Some(Kind::Open) {
                return Err(self.error(format!("expected '{{' after 'rank {r}', got {}", l.show(open))));
            }
            while self.b.num_ranks() <= r {
                self.b.add_rank();
            }
            self.rank = Some(r);
            Ok(())
        } else {
            Err(self.error(format!("expected 'num_ranks' or 'rank', got {}", l.show(t))))
        }
    }

    /// One statement in a rank's block: an op, a dependency or `}`.
    fn statement(&mut self, l: &mut Line<'_>) -> Result<(), GoalError> {
        let t = l.next();
        match t.map(|t| t.kind) {
            Some(Kind::Close) => return self.close_rank(),
            Some(Kind::Word) if ["send", "recv", "calc"].iter().any(|w| l.is(t, w)) => {
                return self.op(l, t, None);
            }
            Some(Kind::Word) => {}
            _ => {
                return Err(
                    self.error(format!("expected an operation, a dependency or '}}', got {}", l.show(t)))
                )
            }
        }
        let label = l.text(t.expect("a word"));
        let next = l.next();
        if next.map(|t| t.kind) == Some(Kind::Colon) {
            let op = l.next();
            if !["send", "recv", "calc"].iter().any(|w| l.is(op, w)) {
                let got = l.show(op);
                return Err(
                    self.error(format!("expected 'send', 'recv' or 'calc' after the label, got {got}"))
                );
            }
            return self.op(l, op, Some(label));
        }
        let start = l.is(next, "irequires");
        if !start && !l.is(next, "requires") {
            let got = l.show(next);
            return Err(
                self.error(format!("expected ':', 'requires' or 'irequires' after a label, got {got}"))
            );
        }
        let a = l.next();
        if a.map(|t| t.kind) != Some(Kind::Word) {
            return Err(self.error(format!(
                "expected a label after '{}', got {}",
                l.text(next.unwrap()).escape_ascii(),
                l.show(a)
            )));
        }
        let end = l.next();
        if end.is_some() {
            return Err(self.error(format!("expected end of line after the dependency, got {}", l.show(end))));
        }
        self.dependency(Pending { line: self.line, start, b: label.to_vec(), a: l.text(a.unwrap()).to_vec() })
    }

    fn dependency(&mut self, d: Pending) -> Result<(), GoalError> {
        match (self.labels.get(&d.b), self.labels.get(&d.a)) {
            (Some(&b), Some(&a)) if d.start => self.b.irequires(b, a),
            (Some(&b), Some(&a)) => self.b.requires(b, a),
            _ => self.pending.push(d),
        }
        Ok(())
    }

    /// `}`: resolves the dependencies on labels defined after them.
    fn close_rank(&mut self) -> Result<(), GoalError> {
        for d in std::mem::take(&mut self.pending) {
            let undefined = [&d.b, &d.a].into_iter().find(|l| !self.labels.contains_key(*l));
            if let Some(label) = undefined {
                let message = format!(
                    "a dependency names label '{}', which this rank never defines",
                    label.escape_ascii()
                );
                return Err(GoalError::Syntax {
                    file: self.file.clone(),
                    line: d.line,
                    rank: self.rank,
                    message,
                });
            }
            self.dependency(d)?;
        }
        self.labels.clear();
        self.rank = None;
        Ok(())
    }

    fn finish(mut self) -> Result<Schedule, GoalError> {
        if self.in_comment {
            self.line = self.comment_line;
            return Err(self.error("this '/*' comment never ends"));
        }
        if let Some(r) = self.rank {
            return Err(self.error(format!("the file ends inside rank {r}'s block: expected '}}'")));
        }
        let Some(num_ranks) = self.num_ranks else {
            return Err(self.error("the file has no 'num_ranks' line"));
        };
        while self.b.num_ranks() < num_ranks {
            self.b.add_rank();
        }
        Ok(self.b.build())
    }
}

impl Reader {
    /// An op after its keyword `kw`: `send Sb to R ...`, `recv Sb from R ...` or `calc T ...`.
    fn op(&mut self, l: &mut Line<'_>, kw: Option<Tok>, label: Option<&[u8]>) -> Result<(), GoalError> {
        let keyword = kw.map(|t| l.text(t)).unwrap_or_default();
        let mut op = if keyword == b"calc" {
            Op::Calc { time: self.int(l, "a time after 'calc'", u64::MAX)? }
        } else {
            let send = keyword == b"send";
            let what = if send { "a size after 'send'" } else { "a size after 'recv'" };
            let bytes = self.int(l, what, u64::MAX)?;
            let b = l.next();
            if !l.is(b, "b") {
                return Err(self.error(format!("expected 'b' after the size, got {}", l.show(b))));
            }
            let dir = if send { "to" } else { "from" };
            let d = l.next();
            if !l.is(d, dir) {
                return Err(self.error(format!("expected '{dir}' after the size, got {}", l.show(d))));
            }
            if send {
                let to = self.int(l, "a rank after 'to'", u64::from(u32::MAX))? as u32;
                Op::Send { to, bytes, tag: 0, comm: 0 }
            } else if l.peek().map(|t| t.kind) == Some(Kind::AnyMark) {
                l.next();
                Op::Recv { from: Source::Any, bytes, tag: TagMatch::Tag(0), comm: 0 }
            } else {
                let from = self.int(l, "a rank or -1 after 'from'", u64::from(u32::MAX))? as u32;
                Op::Recv { from: Source::Rank(from), bytes, tag: TagMatch::Tag(0), comm: 0 }
            }
        };
        let (cpu, nic) = self.clauses(l, &mut op)?;
        if self.b.ops_in_rank() == u32::MAX - 1 {
            return Err(self.error(format!("a rank holds at most {} ops", u32::MAX - 1)));
        }
        let id = self.b.op(op);
        if cpu != 0 || nic != 0 {
            self.b.place(id, cpu, nic);
        }
        if let Some(label) = label {
            if self.labels.insert(label.to_vec(), id).is_some() {
                return Err(self.error(format!("label '{}' is defined twice", label.escape_ascii())));
            }
            self.b.label(id, &String::from_utf8_lossy(label));
        }
        Ok(())
    }

    /// The optional clauses that end an op, in this order: `tag` and `comm` (sends and
    /// receives), `cpu`, `nic`. Returns the CPU and NIC.
    fn clauses(&self, l: &mut Line<'_>, op: &mut Op) -> Result<(u8, u8), GoalError> {
        let names: &[&str] =
            if matches!(op, Op::Calc { .. }) { &["cpu", "nic"] } else { &["tag", "comm", "cpu", "nic"] };
        let (mut cpu, mut nic, mut from) = (0, 0, 0);
        while let Some(t) = l.next() {
            let Some(p) = names[from..].iter().position(|w| l.is(Some(t), w)) else {
                let expected: Vec<String> = names[from..].iter().map(|w| format!("'{w}'")).collect();
                let got = l.show(Some(t));
                return Err(self.error(format!("expected {} or end of line, got {got}", expected.join(", "))));
            };
            let name = names[from + p];
            from += p + 1;
            let any = l.peek().map(|t| t.kind) == Some(Kind::AnyMark);
            match (name, &mut *op) {
                ("tag", Op::Recv { tag, .. }) if any => {
                    l.next();
                    *tag = TagMatch::Any;
                }
                ("tag", Op::Recv { tag, .. }) => {
                    *tag = TagMatch::Tag(self.int(l, "a tag or -1 after 'tag'", u64::from(u32::MAX))? as u32)
                }
                ("tag", Op::Send { .. }) if any => {
                    return Err(self.error("a send's tag cannot be -1 (any tag)"))
                }
                ("tag", Op::Send { tag, .. }) => {
                    *tag = self.int(l, "a tag after 'tag'", u64::from(u32::MAX))? as u32
                }
                ("comm", Op::Send { comm, .. } | Op::Recv { comm, .. }) => {
                    *comm = self.int(l, "a communicator after 'comm'", u64::from(u32::MAX))? as u32
                }
                ("cpu", _) => cpu = self.int(l, "a CPU number (0 to 255) after 'cpu'", 255)? as u8,
                _ => nic = self.int(l, "a NIC number (0 to 255) after 'nic'", 255)? as u8,
            }
        }
        Ok((cpu, nic))
    }
}
