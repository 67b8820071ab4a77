//! The bandwidth-class flags shared by `matrix`, `model` and `pcie`.

use crate::analysis::classes::ClassOptions;
use crate::error::usage;
use anyhow::Result;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClassArgs {
    /// Class tolerance: bandwidths within PCT percent share a class.
    ///
    /// Bandwidths within PCT percent of a class's best share the class,
    /// with no gap between neighbouring values wider than PCT/2 (the
    /// thesis' rule) [default: 10; `model`: as recorded with the results].
    #[arg(long, value_name = "PCT")]
    pub tolerance: Option<f64>,
    /// Then merge adjacent classes whose best values are within the tolerance.
    ///
    /// Then merge adjacent classes whose best values are within the
    /// tolerance of each other: fewer, coarser classes (not the thesis'
    /// rule, which keeps e.g. 5.8 and 5.3 GB/s apart).
    #[arg(long)]
    pub merge_close_classes: bool,
}

impl ClassArgs {
    /// `--tolerance` as a fraction, checked; `None` when left out.
    pub fn tolerance_fraction(&self) -> Result<Option<f64>> {
        match self.tolerance {
            Some(t) if !(0.0..=100.0).contains(&t) => Err(usage(format!(
                "--tolerance {t}: give a percentage from 0 to 100"
            ))),
            t => Ok(t.map(|t| t / 100.0)),
        }
    }

    /// The options given, the default where a flag is left out.
    pub fn options(&self) -> Result<ClassOptions> {
        Ok(ClassOptions {
            tolerance: self
                .tolerance_fraction()?
                .unwrap_or(ClassOptions::default().tolerance),
            merge_close: self.merge_close_classes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_over_a_base() {
        let none = ClassArgs::default();
        assert_eq!(none.options().unwrap(), ClassOptions::default());
        assert_eq!(none.tolerance_fraction().unwrap(), None);
        let given = ClassArgs {
            tolerance: Some(5.0),
            merge_close_classes: true,
        };
        let o = given.options().unwrap();
        assert_eq!((o.tolerance, o.merge_close), (0.05, true));
        for bad in [-1.0, 100.5, f64::NAN] {
            let e = ClassArgs {
                tolerance: Some(bad),
                merge_close_classes: false,
            }
            .options()
            .unwrap_err()
            .to_string();
            assert!(e.contains("0 to 100"), "{e}");
        }
    }
}
