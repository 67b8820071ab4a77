//! The topology in any format: the terminal view ([`topo_text`]) as text,
//! the model itself as JSON, its tables ([`topo_tables`]) otherwise.

use super::render::Format;
use super::{tables, topo_tables, topo_text};
use crate::topology::Topology;

/// The topology in `format`: the terminal view as text, the model itself
/// as JSON, tables otherwise.
pub(crate) fn render(t: &Topology, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Text => Ok(topo_text::render(t)),
        Format::Json => Ok(format!("{}\n", crate::text::json_pretty(t)?)),
        f => tables::render(&title(t), &topo_tables::sections(t), f),
    }
}

fn title(t: &Topology) -> String {
    format!("numabench topo: {} ({})", t.hostname, t.cpu_model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    #[test]
    fn the_tables_formats_draw_every_section() {
        let t = fixture("two-node");
        let md = render(&t, Format::Markdown).unwrap();
        assert!(md.starts_with("# numabench topo: ") && md.contains("## distances"));
        let csv = render(&t, Format::Csv).unwrap();
        assert!(
            csv.starts_with("table,row,column,value\nnodes,0,cpus,"),
            "{csv}"
        );
    }
}
