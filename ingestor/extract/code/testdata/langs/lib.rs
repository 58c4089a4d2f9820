//! Crate docs.

use std::fmt;

/// A parsed value.
#[derive(Debug, Clone)]
pub struct Value<'a> {
    raw: &'a str,
}

const LIMIT: usize = 10;

mod util;

impl<'a> Value<'a> {
    /// Makes a value.
    pub fn new(raw: &'a str) -> Self {
        Value { raw }
    }

    fn len(&self) -> usize {
        let s = r#"
fn fake() {}
"#;
        s.len() + self.raw.len()
    }
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.raw)
    }
}

pub fn parse(input: &str) -> Result<Value<'_>, String> {
    let c = '"';
    if input.is_empty() {
        return Err(format!("empty {c}"));
    }
    Ok(Value::new(input))
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

/* block /* nested */
fn hidden() {}
*/

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert!(parse("x").is_ok());
    }
}
