//! Plain-text tables with aligned columns, for the terminal.

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// Renders `rows` under `header`, each column as wide as its widest cell,
/// two spaces apart, with a dashed rule under the header. Every line ends
/// in `\n` and has no trailing spaces.
pub fn render(header: &[(&str, Align)], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header
        .iter()
        .map(|(title, _)| title.chars().count())
        .collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let padded: Vec<String> = cells
            .zip(header)
            .zip(&widths)
            .map(|((cell, (_, align)), width)| match align {
                Align::Left => format!("{cell:<width$}"),
                Align::Right => format!("{cell:>width$}"),
            })
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&mut header.iter().map(|(title, _)| *title));
    let rule: Vec<String> = widths.iter().map(|width| "-".repeat(*width)).collect();
    out.push_str(&(rule.join("  ") + "\n"));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_left_and_numbers_right() {
        let table = render(
            &[("name", Align::Left), ("median", Align::Right)],
            &[
                vec!["null_syscall".into(), "31".into()],
                vec!["floor".into(), "4".into()],
            ],
        );
        assert_eq!(
            table,
            "name          median\n\
             ------------  ------\n\
             null_syscall      31\n\
             floor              4\n"
        );
    }
}
