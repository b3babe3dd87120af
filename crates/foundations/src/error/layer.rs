//! A layer's own error enum, carried across crate boundaries inside [`Error::Layer`]
//! (the pattern of `std::io::Error::other` with `get_ref().downcast_ref()`, typed).

use std::any::Any;

use super::{Error, Kind};

/// An error enum of one layer (`rbf_data::ingest::SeriesError`, ...): displayed as
/// itself and of a [`Kind`]. `?` converts it into [`Error`]; [`Error::layer`] gets it
/// back. `Error` itself does not implement this trait, which is what lets one blanket
/// `From` cover every layer.
pub trait LayerError: std::error::Error + Send + Sync + 'static {
    fn kind(&self) -> Kind;

    /// Self as `Any`, for [`Error::layer`]'s downcast.
    fn as_any(&self) -> &dyn Any;

    /// The library error this one wraps, if any (a config's refused value): lets
    /// [`Error::setting_error`] find a bad setting inside.
    fn wrapped(&self) -> Option<&Error> {
        None
    }
}

/// Implements [`LayerError`] for a layer's enum whose variants are all of one kind:
/// `layer_error!(SeriesError => Kind::Request);` (an enum whose variants differ in kind,
/// or that wraps a library error, implements the trait itself).
#[macro_export]
macro_rules! layer_error {
    ($ty:ty => $kind:expr) => {
        impl $crate::error::LayerError for $ty {
            fn kind(&self) -> $crate::error::Kind {
                $kind
            }
            fn as_any(&self) -> &dyn ::std::any::Any {
                self
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::error::{exit_status, Error, Kind, Result};

    #[derive(Debug, thiserror::Error, PartialEq)]
    enum Shard {
        #[error("point {0} appears twice")]
        Twice(u64),
    }
    crate::layer_error!(Shard => Kind::Input);

    fn merge() -> Result<()> {
        Err(Shard::Twice(3))?
    }

    #[test]
    fn a_layer_error_crosses_the_boundary_and_comes_back() {
        let e = merge().unwrap_err();
        assert_eq!(e.to_string(), "point 3 appears twice");
        assert_eq!(e.kind(), Kind::Input);
        assert_eq!(e.exit_status(), exit_status::DATA);
        assert_eq!(e.layer::<Shard>(), Some(&Shard::Twice(3)));
        assert!(Error::Interrupted.layer::<Shard>().is_none());
    }
}
