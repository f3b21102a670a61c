//! Process groups' members, from the two descriptions found in the sources (see the
//! module's documentation): PyTorch's `process_group:init` record, which Chakra's converter
//! keeps as a `METADATA_NODE` whose `inputs.values` is Python's `str()` of a list holding
//! one JSON text (`['[{"pg_name": "0", ..., "ranks": [], ...}]']`); and ASTRA-sim's
//! communicator-group file, which STAGE writes beside its traces (`{"1": [0, 1], ...}`).
//! Both are JSON, read here by a small parser: the crate has no JSON dependency.

use super::ProcessGroup;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<(usize, Json)>),
    Obj(Vec<(String, usize, Json)>),
}

/// A fault in a text: the byte where it is and what is wrong.
pub(super) type Fault = (usize, String);

/// Nesting deeper than this is refused (no description nests more than three deep).
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn fail<T>(&self, message: impl Into<String>) -> Result<T, Fault> {
        Err((self.at, message.into()))
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, Fault> {
        self.ws();
        if depth > MAX_DEPTH {
            return self.fail("nested too deep");
        }
        let Some(&c) = self.s.get(self.at) else {
            return self.fail("the text ends where a value is expected");
        };
        match c {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if self.eat(b'}') {
                    return Ok(Json::Obj(members));
                }
                loop {
                    self.ws();
                    let at = self.at;
                    let Json::Str(key) = self.value(depth + 1)? else {
                        return Err((at, "an object's key is not a string".into()));
                    };
                    if !self.eat(b':') {
                        return self.fail("expected ':' after an object's key");
                    }
                    self.ws();
                    let at = self.at;
                    members.push((key, at, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Ok(Json::Obj(members));
                    }
                    if !self.eat(b',') {
                        return self.fail("expected ',' or '}' in an object");
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Json::Arr(items));
                }
                loop {
                    self.ws();
                    let at = self.at;
                    items.push((at, self.value(depth + 1)?));
                    if self.eat(b']') {
                        return Ok(Json::Arr(items));
                    }
                    if !self.eat(b',') {
                        return self.fail("expected ',' or ']' in a list");
                    }
                }
            }
            b'"' => self.string().map(Json::Str),
            b't' | b'f' | b'n' => {
                for (word, v) in
                    [("true", Json::Bool(true)), ("false", Json::Bool(false)), ("null", Json::Null)]
                {
                    if self.s[self.at..].starts_with(word.as_bytes()) {
                        self.at += word.len();
                        return Ok(v);
                    }
                }
                self.fail("not a JSON value")
            }
            _ => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(|c| b"+-.eE0123456789".contains(c)) {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                match text.parse::<f64>() {
                    Ok(v) if !text.is_empty() => Ok(Json::Num(v)),
                    _ => Err((start, "not a JSON value".into())),
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, Fault> {
        self.at += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.at) else { return self.fail("the text ends inside a string") };
            self.at += 1;
            match c {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let Some(&e) = self.s.get(self.at) else {
                        return self.fail("the text ends inside a string");
                    };
                    self.at += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let hex =
                                self.s.get(self.at..self.at + 4).and_then(|h| std::str::from_utf8(h).ok());
                            let Some(code) = hex.and_then(|h| u32::from_str_radix(h, 16).ok()) else {
                                return self.fail("a \\u escape without four hex digits");
                            };
                            self.at += 4;
                            let ch = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        _ => return self.fail("an unknown escape in a string"),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

/// The JSON text `text`, whole.
fn parse(text: &str) -> Result<Json, Fault> {
    let mut p = Parser { s: text.as_bytes(), at: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.at < text.len() {
        return p.fail("more text after the JSON value");
    }
    Ok(v)
}

/// A list of ranks: non-negative integers below 2^32.
fn ranks(at: usize, v: &Json) -> Result<Vec<u32>, Fault> {
    let Json::Arr(items) = v else { return Err((at, "the ranks are not a list".into())) };
    items
        .iter()
        .map(|(at, r)| match r {
            Json::Num(x) if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(x) => Ok(*x as u32),
            _ => Err((*at, "a rank is not an integer from 0 to 2^32 - 1".into())),
        })
        .collect()
}

/// A group's name: a string, or a number written in decimal.
fn name(at: usize, v: &Json) -> Result<String, Fault> {
    match v {
        Json::Str(s) => Ok(s.clone()),
        Json::Num(x) if x.fract() == 0.0 => Ok(format!("{x}")),
        _ => Err((at, "a process group's name is neither a string nor an integer".into())),
    }
}

/// The groups PyTorch's `process_group:init` record lists, from a node's `inputs.values`
/// (`['[{"pg_name": ..., "ranks": [...], ...}, ...]']`, or the JSON list itself). Positions
/// in faults are bytes of `text`, or of the JSON text it quotes.
pub(super) fn pytorch(text: &str) -> Result<Vec<ProcessGroup>, Fault> {
    let t = text.trim();
    let json = if let Some(inner) = t.strip_prefix("['").and_then(|t| t.strip_suffix("']")) {
        // Python's repr of a string in single quotes: it escapes `\` and `'` only.
        parse(&inner.replace("\\'", "'").replace("\\\\", "\\"))?
    } else {
        match parse(t)? {
            Json::Arr(items) if items.len() == 1 && matches!(items[0].1, Json::Str(_)) => {
                let Json::Str(s) = &items[0].1 else { unreachable!() };
                parse(s)?
            }
            v => v,
        }
    };
    let Json::Arr(items) = json else { return Err((0, "not a list of process groups".into())) };
    let mut groups = Vec::new();
    for (at, item) in &items {
        let Json::Obj(members) = item else { return Err((*at, "a process group is not an object".into())) };
        let field = |key: &str| members.iter().find(|m| m.0 == key).map(|m| (m.1, &m.2));
        let Some((name_at, n)) = field("pg_name") else {
            return Err((*at, "a process group without pg_name".into()));
        };
        let Some((ranks_at, r)) = field("ranks") else {
            return Err((*at, "a process group without ranks".into()));
        };
        groups.push(ProcessGroup { name: name(name_at, n)?, ranks: ranks(ranks_at, r)? });
    }
    Ok(groups)
}

/// ASTRA-sim's communicator-group file: an object from group names to lists of ranks.
pub(super) fn astra_sim(text: &str) -> Result<Vec<ProcessGroup>, Fault> {
    let Json::Obj(members) = parse(text)? else {
        return Err((0, "not a JSON object from group names to lists of ranks".into()));
    };
    members.iter().map(|(n, at, r)| Ok(ProcessGroup { name: n.clone(), ranks: ranks(*at, r)? })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, ranks: &[u32]) -> ProcessGroup {
        ProcessGroup { name: name.into(), ranks: ranks.to_vec() }
    }

    #[test]
    fn pytorch_s_description_as_chakra_s_converter_keeps_it() {
        // The record of Chakra's test trace `1.0.2-chakra.0.0.4.json`, through Python's str().
        let text = concat!(
            r#"['[{"pg_name": "0", "backend_id": 82149104, "backend_config": "cuda:nccl", "#,
            r#""ranks": [], "group_size": 2, "group_count": 1}]']"#
        );
        assert_eq!(pytorch(text), Ok(vec![group("0", &[])]));
        let two = r#"[{"pg_name": "1", "ranks": [0, 2]}, {"pg_name": 2, "ranks": [1, 3]}]"#;
        assert_eq!(pytorch(two), Ok(vec![group("1", &[0, 2]), group("2", &[1, 3])]));
        let quoted = r#"["[{\"pg_name\": \"a b\", \"ranks\": [5]}]"]"#;
        assert_eq!(pytorch(quoted), Ok(vec![group("a b", &[5])]));
        assert!(pytorch(r#"[{"pg_name": "1", "ranks": [-1]}]"#).is_err());
        assert!(pytorch(r#"[{"ranks": [1]}]"#).is_err());
        assert!(pytorch("[[[[").is_err());
        assert!(pytorch(&"[".repeat(10_000)).is_err(), "deep nesting is refused, not a stack overflow");
    }

    #[test]
    fn astra_sim_s_communicator_group_file() {
        let text = "{\"1\": [0, 1, 2, 3],\n \"2\": [4, 5]}";
        assert_eq!(astra_sim(text), Ok(vec![group("1", &[0, 1, 2, 3]), group("2", &[4, 5])]));
        let (at, message) = astra_sim("{\"1\": [0, 1.5]}").unwrap_err();
        assert_eq!(at, 10, "{message}");
        assert!(astra_sim("[1]").is_err());
        assert!(astra_sim("{\"1\": [0]} x").is_err());
    }
}
