//! The command line's names for the library's choices of how a trace is read (`--format`,
//! `--key`, `--csv-time-unit`): clap's value enums live here, with the flags, so that
//! the libraries do not depend on clap. Each converts into the library's type; the help
//! of each value is the library's own description (`Format::describe`,
//! `FlowKeyKind::describe`), and the tests check that every library value has its name
//! here, spelled as the library's own `name()` and serde names spell it.

use rbf_data::ingest::csv::TimeUnit;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::Format;

/// Trace formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    #[value(help = Format::Auto.describe())]
    Auto,
    #[value(help = Format::Jedi.describe())]
    Jedi,
    #[value(help = Format::Lines.describe())]
    Lines,
    #[value(help = Format::Pcap.describe())]
    Pcap,
    #[value(help = Format::Csv.describe())]
    Csv,
    #[value(help = Format::Binary.describe())]
    #[value(alias = "oracle-general")]
    Binary,
    #[value(help = Format::Lcs.describe())]
    Lcs,
    #[value(help = Format::Rbfs.describe())]
    Rbfs,
    #[value(help = Format::Zeek.describe())]
    Zeek,
    #[value(help = Format::NfdumpCsv.describe())]
    NfdumpCsv,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Auto => Format::Auto,
            FormatArg::Jedi => Format::Jedi,
            FormatArg::Lines => Format::Lines,
            FormatArg::Pcap => Format::Pcap,
            FormatArg::Csv => Format::Csv,
            FormatArg::Binary => Format::Binary,
            FormatArg::Lcs => Format::Lcs,
            FormatArg::Rbfs => Format::Rbfs,
            FormatArg::Zeek => Format::Zeek,
            FormatArg::NfdumpCsv => Format::NfdumpCsv,
        }
    }
}

/// The header fields that make up a message key.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKeyArg {
    #[value(help = FlowKeyKind::FiveTuple.describe())]
    FiveTuple,
    #[value(help = FlowKeyKind::FiveTupleVlan.describe())]
    FiveTupleVlan,
    #[value(help = FlowKeyKind::SrcDst.describe())]
    SrcDst,
    #[value(help = FlowKeyKind::Dst.describe())]
    Dst,
    #[value(help = FlowKeyKind::DstPrefix.describe())]
    DstPrefix,
    #[value(help = FlowKeyKind::SrcPrefix.describe())]
    SrcPrefix,
}

impl From<FlowKeyArg> for FlowKeyKind {
    fn from(k: FlowKeyArg) -> FlowKeyKind {
        match k {
            FlowKeyArg::FiveTuple => FlowKeyKind::FiveTuple,
            FlowKeyArg::FiveTupleVlan => FlowKeyKind::FiveTupleVlan,
            FlowKeyArg::SrcDst => FlowKeyKind::SrcDst,
            FlowKeyArg::Dst => FlowKeyKind::Dst,
            FlowKeyArg::DstPrefix => FlowKeyKind::DstPrefix,
            FlowKeyArg::SrcPrefix => FlowKeyKind::SrcPrefix,
        }
    }
}

/// Unit of a numeric time column.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnitArg {
    /// Seconds (a decimal fraction is allowed).
    S,
    Ms,
    Us,
    Ns,
}

impl From<TimeUnitArg> for TimeUnit {
    fn from(u: TimeUnitArg) -> TimeUnit {
        match u {
            TimeUnitArg::S => TimeUnit::S,
            TimeUnitArg::Ms => TimeUnit::Ms,
            TimeUnitArg::Us => TimeUnit::Us,
            TimeUnitArg::Ns => TimeUnit::Ns,
        }
    }
}

/// clap's parser for a value enum `A`, giving the library's `L` (the possible values
/// and their help are `A`'s, so `--help` lists them as a value enum field would).
pub fn parser<A, L>() -> impl clap::builder::TypedValueParser<Value = L>
where
    A: clap::ValueEnum + Clone + Send + Sync + 'static,
    L: From<A> + Clone + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser;
    clap::builder::EnumValueParser::<A>::new().map(L::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// The name the command line accepts for each library value, found by parsing.
    fn names<A: ValueEnum + Copy, L: From<A> + PartialEq + Copy>(l: L) -> Vec<String> {
        A::value_variants()
            .iter()
            .filter(|a| L::from(**a) == l)
            .filter_map(|a| a.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect()
    }

    /// Every library value has exactly one name on the command line, the library's own
    /// (`name()`, the serde name): a value added to the library and not here fails.
    #[test]
    fn every_library_value_has_its_own_name() {
        // Every command-line value maps to its own library value, and as many as the
        // library has: a value added to the library and not here fails.
        assert_eq!(FormatArg::value_variants().len(), Format::ALL.len());
        for f in Format::ALL {
            assert_eq!(names::<FormatArg, _>(f), [f.name()], "{f:?}");
            let serde_name = serde_json::to_string(&f).expect("a name");
            assert_eq!(serde_name, format!("\"{}\"", f.name()));
        }
        for k in FlowKeyKind::ALL {
            assert_eq!(names::<FlowKeyArg, _>(k), [k.name()], "{k:?}");
        }
        for u in [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns] {
            match u {
                TimeUnit::S | TimeUnit::Ms | TimeUnit::Us | TimeUnit::Ns => {}
            }
            let serde_name = serde_json::to_string(&u).expect("a name");
            assert_eq!(
                names::<TimeUnitArg, _>(u)
                    .iter()
                    .map(|n| format!("\"{n}\""))
                    .collect::<Vec<_>>(),
                [serde_name],
                "{u:?}"
            );
        }
    }
}
