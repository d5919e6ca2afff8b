//! The check macro of the in-guest test programs: each program runs its
//! checks in order and returns the number of the first that fails (0 when
//! all pass), printing what it got and what it wanted.

/// `expect!(number, got, want)`: returns `number` from the enclosing
/// function, after printing both values, unless `got == want`.
macro_rules! expect {
    ($number:expr, $got:expr, $want:expr) => {
        let (got, want) = ($got, $want);
        if !$crate::check::same(&got, &want) {
            sdk::println!("check {} failed: {:?} != {:?}", $number, got, want);
            return $number;
        }
    };
}

/// Equality that makes both sides one type, so that `Ok(..)` and `Err(..)`
/// literals infer their other half from the value they are compared with.
pub fn same<T: PartialEq>(got: &T, want: &T) -> bool {
    got == want
}
