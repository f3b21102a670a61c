//! How fast a link sends ([`LinkSpeed`]): phits per cycles, a fraction, and what a
//! configuration writes for it.

use serde::Serialize;

/// How fast a link sends: `phits` phits every `cycles` cycles, a fraction in lowest terms.
/// The phit and the cycle stay the units of every network; a class of links at
/// [`LinkSpeed::ONE`] sends one phit a cycle, as every link did before speeds existed.
/// A link sends one packet at a time, so a packet of `S` phits holds it
/// [`serialization`](LinkSpeed::serialization) cycles: `ceil(S * cycles / phits)`, at least one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct LinkSpeed {
    /// Phits sent in `cycles` cycles.
    pub phits: u32,
    /// Cycles in which `phits` phits are sent.
    pub cycles: u32,
}

impl Default for LinkSpeed {
    fn default() -> Self {
        Self::ONE
    }
}

impl LinkSpeed {
    /// One phit a cycle.
    pub const ONE: LinkSpeed = LinkSpeed { phits: 1, cycles: 1 };
    /// The slowest and the fastest speed a link may have, in phits a cycle: speeds whose
    /// ratio a 16-bit buffer and a 32-bit time still hold.
    pub const RANGE: (f64, f64) = (1.0 / 1024.0, 1024.0);

    /// `phits` phits every `cycles` cycles, reduced; `None` if either is 0 or the speed is
    /// outside [`LinkSpeed::RANGE`].
    pub fn new(phits: u32, cycles: u32) -> Option<Self> {
        if phits == 0 || cycles == 0 {
            return None;
        }
        let g = gcd(phits, cycles);
        let speed = LinkSpeed { phits: phits / g, cycles: cycles / g };
        let rate = speed.phits_per_cycle();
        (Self::RANGE.0..=Self::RANGE.1).contains(&rate).then_some(speed)
    }

    /// This speed and `other` together (a link carrying both), capped at the fastest
    /// speed allowed.
    pub fn plus(self, other: LinkSpeed) -> LinkSpeed {
        let phits = self.phits as u64 * other.cycles as u64 + other.phits as u64 * self.cycles as u64;
        let cycles = self.cycles as u64 * other.cycles as u64;
        let g = gcd64(phits, cycles);
        let (phits, cycles) = (phits / g, cycles / g);
        let max = Self::RANGE.1 as u64;
        if phits > max * cycles || phits > u32::MAX as u64 || cycles > u32::MAX as u64 {
            return LinkSpeed { phits: max as u32, cycles: 1 };
        }
        LinkSpeed { phits: phits as u32, cycles: cycles as u32 }
    }

    /// Phits a cycle, as a float (for loads and reports).
    pub fn phits_per_cycle(&self) -> f64 {
        self.phits as f64 / self.cycles as f64
    }

    /// Cycles a packet of `size` phits holds the link: `ceil(size * cycles / phits)`, at
    /// least 1 (a link sends one packet at a time).
    #[inline]
    pub fn serialization(&self, size: u16) -> u64 {
        (size as u64 * self.cycles as u64).div_ceil(self.phits as u64).max(1)
    }

    /// A buffer of `phits` phits for a port at this speed: as many cycles of its traffic
    /// as `phits` holds at one phit a cycle, so `phits * speed` rounded up on links faster
    /// than one phit a cycle, and `phits` itself on slower ones (a packet must still fit).
    pub fn scaled_buffer(&self, phits: u32) -> u64 {
        if self.phits <= self.cycles {
            phits as u64
        } else {
            (phits as u64 * self.phits as u64).div_ceil(self.cycles as u64)
        }
    }

    /// A speed as a configuration gives it: a number of phits a cycle (`2`, `0.25`; a
    /// decimal fraction with a denominator up to 1,000) or a fraction as a string
    /// (`"1/3"`).
    pub fn parse(value: &toml::Value) -> Result<Self, String> {
        let allowed = || {
            format!(
                "a speed in phits a cycle from 1/1024 to 1024: a number (2, 0.25) or a fraction as a string (\"1/3\"), got {value}"
            )
        };
        let (phits, cycles) = match value {
            toml::Value::Integer(n) if (1..=u32::MAX as i64).contains(n) => (*n as u64, 1),
            toml::Value::Float(f) if f.is_finite() && *f > 0.0 => {
                let den = (1..=1000u64).find(|&d| (f * d as f64 - (f * d as f64).round()).abs() < 1e-9);
                match den {
                    Some(d) => ((f * d as f64).round() as u64, d),
                    None => {
                        return Err(format!(
                            "{}: {f} is no fraction with a denominator up to 1,000; write it as \"p/q\"",
                            allowed()
                        ))
                    }
                }
            }
            toml::Value::String(text) => {
                let parts = text.split_once('/').map_or((text.trim(), "1"), |(p, q)| (p.trim(), q.trim()));
                match (parts.0.parse::<u64>(), parts.1.parse::<u64>()) {
                    (Ok(p), Ok(q)) => (p, q),
                    _ => return Err(allowed()),
                }
            }
            _ => return Err(allowed()),
        };
        let fits = |x: u64| u32::try_from(x).ok();
        fits(phits).zip(fits(cycles)).and_then(|(p, c)| LinkSpeed::new(p, c)).ok_or_else(allowed)
    }
}

impl std::fmt::Display for LinkSpeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.cycles == 1 {
            write!(f, "{}", self.phits)
        } else {
            write!(f, "{}/{}", self.phits, self.cycles)
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    gcd64(a as u64, b as u64) as u32
}

fn gcd64(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd64(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_parse_reduce_and_serialize() {
        let parse = |text: &str| {
            LinkSpeed::parse(&toml::from_str::<toml::Table>(&format!("v = {text}")).unwrap()["v"])
        };
        assert_eq!(parse("2"), Ok(LinkSpeed { phits: 2, cycles: 1 }));
        assert_eq!(parse("0.25"), Ok(LinkSpeed { phits: 1, cycles: 4 }));
        assert_eq!(parse("2.5"), Ok(LinkSpeed { phits: 5, cycles: 2 }));
        assert_eq!(parse("\"6/9\""), Ok(LinkSpeed { phits: 2, cycles: 3 }));
        assert_eq!(parse("\"3\""), Ok(LinkSpeed { phits: 3, cycles: 1 }));
        for bad in ["0", "-1", "0.0001", "2000", "\"1/0\"", "\"a/b\"", "0.3333", "true"] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
        // ceil(S * cycles / phits), at least one cycle.
        let s = |phits, cycles, size| LinkSpeed::new(phits, cycles).unwrap().serialization(size);
        assert_eq!(
            (s(1, 1, 8), s(4, 1, 8), s(4, 1, 9), s(1, 2, 8), s(2, 3, 5), s(18, 1, 4)),
            (8, 2, 3, 16, 8, 1)
        );
        // Buffers grow on faster links only.
        let b = |phits, cycles| LinkSpeed::new(phits, cycles).unwrap().scaled_buffer(64);
        assert_eq!((b(1, 1), b(4, 1), b(5, 2), b(1, 4)), (64, 256, 160, 64));
        assert_eq!(LinkSpeed::new(3, 2).unwrap().to_string(), "3/2");
        let sum = LinkSpeed::new(1, 2).unwrap().plus(LinkSpeed::new(9, 1).unwrap());
        assert_eq!(sum, LinkSpeed { phits: 19, cycles: 2 });
        assert_eq!(LinkSpeed::new(1000, 1).unwrap().plus(LinkSpeed::new(1000, 1).unwrap()).phits, 1024);
    }
}
