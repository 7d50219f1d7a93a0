//! Tables that fit the terminal: each column knows how it may be cut (text at its end, paths in
//! the middle or from the left, ids never), and the columns that may shrink give up width in
//! turn until the table fits. Cells are neutralised text; widths are display columns.

use std::borrow::Cow;

use unicode_width::UnicodeWidthStr;

/// How a cell that is too wide is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Keep the start: `a long messa…`.
    End,
    /// Keep both ends (a path's folder and file): `/home/me/…/app`.
    Middle,
    /// Keep the end: `…/code/app`.
    Start,
    /// Never cut (ids a person copies).
    Never,
}

/// One column: its header, alignment, how it is cut and how narrow it may get.
pub struct Column {
    pub header: &'static str,
    pub right: bool,
    pub cut: Cut,
    pub min: usize,
}

impl Column {
    pub fn text(header: &'static str, cut: Cut, min: usize) -> Column {
        Column {
            header,
            right: false,
            cut,
            min,
        }
    }

    pub fn number(header: &'static str) -> Column {
        Column {
            header,
            right: true,
            cut: Cut::Never,
            min: 0,
        }
    }
}

/// The table's lines: a header, then one line per row, at most `width` columns wide when the
/// columns that may be cut can give up enough (`None`: no limit). Columns are shrunk in order,
/// the first listed in `shrink` first.
pub fn render(
    cols: &[Column],
    rows: &[Vec<String>],
    width: Option<usize>,
    shrink: &[usize],
) -> Vec<String> {
    let cell_widths = rows.iter().map(|r| r.iter().map(|c| c.width()));
    let widths = layout(cols, cell_widths, width, shrink);
    lines(
        cols,
        rows.iter().map(|r| r.iter().map(String::as_str)),
        &widths,
    )
}

/// The width of each column, as [`render`] gives it, from the width of every cell (a row at a
/// time): the widest cell or header, then shrunk to fit `width`.
pub fn layout<R: IntoIterator<Item = usize>>(
    cols: &[Column],
    cell_widths: impl IntoIterator<Item = R>,
    width: Option<usize>,
    shrink: &[usize],
) -> Vec<usize> {
    let mut widths: Vec<usize> = cols.iter().map(|c| c.header.width()).collect();
    for row in cell_widths {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell);
        }
    }
    if let Some(limit) = width {
        for &i in shrink {
            if total(&widths) <= limit {
                break;
            }
            // Shrinking never widens a column whose cells are narrower than its floor.
            let floor = cols[i].min.max(cols[i].header.width()).min(widths[i]);
            widths[i] = widths[i].saturating_sub(total(&widths) - limit).max(floor);
        }
    }
    widths
}

/// How wide a table of columns `widths` wide is, with the two spaces between columns.
pub fn total(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// The table's lines at column `widths` ([`layout`]): a header, then one line per row.
pub fn lines<'r, R: IntoIterator<Item = &'r str>>(
    cols: &[Column],
    rows: impl IntoIterator<Item = R>,
    widths: &[usize],
) -> Vec<String> {
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::with_capacity(total(widths) + 16);
        for (i, (cell, (col, &w))) in cells.zip(cols.iter().zip(widths)).enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let (cell, cell_width) = fitted(cell, w, col.cut);
            let fill = w.saturating_sub(cell_width);
            if col.right {
                out.extend(std::iter::repeat_n(' ', fill));
                out.push_str(&cell);
            } else {
                out.push_str(&cell);
                out.extend(std::iter::repeat_n(' ', fill));
            }
        }
        out.truncate(out.trim_end().len());
        out
    };
    let mut out = vec![line(&mut cols.iter().map(|c| c.header))];
    out.extend(rows.into_iter().map(|r| line(&mut r.into_iter())));
    out
}

/// `s`'s display width: printable ASCII is a column a byte (measured by `unicode-width`
/// character by character, from the end, a 10,000-row table spent a tenth of its time here).
pub fn width(s: &str) -> usize {
    if printable_ascii(s) {
        s.len()
    } else {
        s.width()
    }
}

/// Whether every byte of `s` is printable ASCII (a fold, not a search that stops early, so
/// the compiler checks many bytes at a time).
fn printable_ascii(s: &str) -> bool {
    s.as_bytes().chunks(64).all(|c| {
        c.iter()
            .fold(true, |ok, &b| ok & (b.wrapping_sub(0x20) < 0x5f))
    })
}

/// [`cut`], with the display width of what it gives.
fn fitted(s: &str, w: usize, how: Cut) -> (Cow<'_, str>, usize) {
    let full = width(s);
    if how == Cut::Never || w == 0 || full <= w {
        return (Cow::Borrowed(s), full);
    }
    let cell = cut(s, w, how);
    let cell_width = width(&cell);
    (cell, cell_width)
}

/// `s` cut to at most `w` display columns as `how` says, the cut marked with `…`.
pub fn cut(s: &str, w: usize, how: Cut) -> Cow<'_, str> {
    if how == Cut::Never || w == 0 || width(s) <= w {
        return Cow::Borrowed(s);
    }
    if printable_ascii(s) {
        // Printable ASCII: one column a byte, cut by slicing (the loop below measures the
        // string taken so far at every character: a 1000-character title cost a millisecond).
        let room = w - 1;
        return Cow::Owned(match how {
            Cut::Start => format!("…{}", &s[s.len() - room..]),
            Cut::Middle => {
                let head = room / 2;
                format!("{}…{}", &s[..head], &s[s.len() - (room - head)..])
            }
            _ => format!("{}…", &s[..room]),
        });
    }
    let take = |chars: &mut dyn Iterator<Item = char>, budget: usize| {
        let mut out = String::new();
        for c in chars {
            if out.width() + c.to_string().width() > budget {
                break;
            }
            out.push(c);
        }
        out
    };
    let room = w - 1;
    Cow::Owned(match how {
        Cut::End => format!("{}…", take(&mut s.chars(), room)),
        Cut::Start => {
            let tail: String = take(&mut s.chars().rev(), room).chars().rev().collect();
            format!("…{tail}")
        }
        Cut::Middle => {
            let head = take(&mut s.chars(), room / 2);
            let tail: String = take(&mut s.chars().rev(), room - head.width())
                .chars()
                .rev()
                .collect();
            format!("{head}…{tail}")
        }
        Cut::Never => s.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_cut_where_the_information_is_not() {
        assert_eq!(cut("a long message", 7, Cut::End), "a long…");
        assert_eq!(cut("/home/me/code/app", 10, Cut::Start), "…/code/app");
        assert_eq!(cut("/home/me/code/app", 9, Cut::Middle), "/hom…/app");
        assert_eq!(cut("019cb679-40", 4, Cut::Never), "019cb679-40");
        assert_eq!(cut("日本語テキスト", 5, Cut::End), "日本…");
        // Printable ASCII is cut by slicing, as the general loop cuts it.
        let s = "0123456789abcdefghij";
        for how in [Cut::End, Cut::Start, Cut::Middle] {
            for w in 1..=21 {
                let wide = s.replace('j', "ј"); // Cyrillic: the general loop
                let general = cut(&wide, w, how).replace('ј', "j");
                assert_eq!(cut(s, w, how), general, "{how:?} {w}");
            }
        }
    }

    #[test]
    fn widths_are_unicode_widths() {
        let every_byte: String = (0u8..128).map(char::from).collect();
        for s in [
            every_byte.as_str(),
            "plain",
            "",
            "日本語",
            "a\u{7f}b",
            "a\r\nb",
            "é x",
            "~ !",
        ] {
            assert_eq!(width(s), s.width(), "{s:?}");
        }
        for b in 0u8..128 {
            let s = format!("x{}y", char::from(b));
            assert_eq!(width(&s), s.width(), "{b}");
        }
    }

    #[test]
    fn tables_shrink_the_columns_that_may_shrink_until_they_fit() {
        let cols = [
            Column::text("SESSION", Cut::End, 10),
            Column::number("MSGS"),
            Column::text("ID", Cut::Never, 0),
        ];
        let rows = vec![vec!["x".repeat(100), "1,234".into(), "019cb679-40".into()]];
        let lines = render(&cols, &rows, Some(40), &[0]);
        assert!(lines.iter().all(|l| l.width() <= 40), "{lines:?}");
        assert!(lines[1].ends_with("019cb679-40"));
        let wide = render(&cols, &rows, None, &[0]);
        assert!(wide[1].contains(&"x".repeat(100)));
    }
}
