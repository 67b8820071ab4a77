use super::*;
use crate::view::HeatRow;

#[test]
fn a_compact_heatmap_shows_squares_with_figures_in_tooltips() {
    let h = Heatmap {
        title: "t".into(),
        header: vec!["cpu".into(), "0".into(), "1".into()],
        rows: vec![HeatRow {
            label: "0".into(),
            cells: vec![None, Some(50.0)],
            reference: Some(25.0),
        }],
        lower_better: true,
        digits: 1,
        compact: true,
        by_range: false,
    };
    let html = heatmap_block(&h);
    assert!(html.contains("title=\"0 / 1: 50.0\"></td>"), "{html}");
    assert!(html.contains(&heat(50.0)), "{html}");
    assert!(!html.contains(">50.0<"), "{html}");
}

#[test]
fn by_range_colours_run_from_the_best_to_the_worst_cell_on_a_log_scale() {
    let h = Heatmap {
        rows: vec![HeatRow {
            label: "0".into(),
            cells: vec![Some(10.0), Some(100.0), Some(1000.0), None],
            reference: None,
        }],
        lower_better: true,
        by_range: true,
        ..Default::default()
    };
    let r = grid_range(&h);
    assert_eq!(r, Some((10.0, 1000.0)));
    let pct = |v| cell_pct(&h, Some(v), None, r).unwrap();
    assert_eq!(pct(10.0), 100.0);
    assert_eq!(pct(1000.0), 0.0);
    assert!((pct(100.0) - 100.0 * 0.5f64.sqrt()).abs() < 1e-9);
    assert_eq!(cell_pct(&h, None, None, r), None);
}
