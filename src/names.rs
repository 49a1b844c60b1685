//! Names of the closed sets of choices (algorithms, quantile methods, NaN policies, metrics,
//! ...): one way to read them, and one error for a name that names nothing.

use crate::error::{Error, Result};

/// Whether `given` is `name`, ignoring case, surrounding spaces and `_` against `-`.
fn same_name(given: &str, name: &str) -> bool {
    let fold = |b: u8| {
        if b == b'_' {
            b'-'
        } else {
            b.to_ascii_lowercase()
        }
    };
    let given = given.trim().as_bytes();
    given.len() == name.len()
        && given
            .iter()
            .zip(name.bytes())
            .all(|(&g, n)| fold(g) == fold(n))
}

/// The value `given` names among `names` (each value's names, the first of each its own),
/// compared by [`same_name`]; otherwise [`Error::UnknownName`] of `kind`, listing `known`
/// (the tests below show both).
pub(crate) fn parse<T>(
    given: &str,
    kind: &'static str,
    names: impl IntoIterator<Item = (&'static str, T)>,
    known: impl IntoIterator<Item = &'static str>,
) -> Result<T> {
    names
        .into_iter()
        .find(|(name, _)| same_name(given, name))
        .map(|(_, value)| value)
        .ok_or_else(|| Error::UnknownName {
            kind,
            given: given.to_string(),
            known: known.into_iter().collect(),
        })
}

/// `FromStr` for a closed set of choices by their names: `$ty`'s values `$all` (each with a
/// `name()`, the known names in that order), other accepted names after them
/// (`"alias" => value`), and `$kind`, what the error calls a name that names nothing. Names are
/// compared ignoring case, surrounding spaces and `_` against `-`.
macro_rules! parse_by_name {
    ($(#[$meta:meta])* $ty:ty, $kind:literal, $all:expr $(, $alias:literal => $value:expr)* $(,)?) => {
        $(#[$meta])*
        impl std::str::FromStr for $ty {
            type Err = $crate::error::Error;

            fn from_str(s: &str) -> $crate::error::Result<$ty> {
                let all = $all;
                $crate::names::parse(
                    s,
                    $kind,
                    all.iter().map(|v| (v.name(), *v)).chain([$(($alias, $value)),*]),
                    all.iter().map(|v| v.name()),
                )
            }
        }
    };
}
pub(crate) use parse_by_name;

/// `Display` as `name()` and [`parse_by_name`]'s `FromStr`, for a closed set of choices (the
/// arguments as `parse_by_name`'s).
macro_rules! named {
    ($ty:ty, $($parse:tt)*) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        $crate::names::parse_by_name!($ty, $($parse)*);
    };
}
pub(crate) use named;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_across_case_spaces_and_separators() {
        assert!(same_name(" Sort_Choose ", "sort-choose"));
        assert!(same_name("inner-product", "inner_product"));
        assert!(!same_name("sort", "sort-choose"));
        let choices = [("error", 0), ("omit", 1), ("skip", 1)];
        assert_eq!(
            parse("SKIP", "NaN policy", choices, ["error", "omit"]).unwrap(),
            1
        );
        match parse("drop", "NaN policy", choices, ["error", "omit"]) {
            Err(Error::UnknownName { kind, given, known }) => {
                assert_eq!((kind, given.as_str()), ("NaN policy", "drop"));
                assert_eq!(known, vec!["error", "omit"]);
            }
            other => panic!("{other:?}"),
        }
    }
}
