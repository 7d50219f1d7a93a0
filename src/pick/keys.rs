//! The picker's keys in one table, shown by the help screen (`?`; docs/guide.md's table lists the
//! same keys), and `Action::of`, which maps a key event to what it does.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Every key, as the help screen lists it.
pub const HELP: &[(&str, &str)] = &[
    (
        "type",
        "filter as `pidx list -q` (fuzzy words, \"phrases\", re:REGEX)",
    ),
    ("Enter", "resume the session in pi, in its directory"),
    ("Esc, Ctrl-C", "leave (Esc also closes this help)"),
    ("↑ ↓, Ctrl-P Ctrl-N", "move"),
    ("PgUp PgDn", "move a page"),
    ("Tab", "this project / all projects"),
    ("Ctrl-F", "full-text mode (`pidx search`) / session list"),
    ("Ctrl-S", "sort: threaded / recent / relevance"),
    ("Ctrl-O", "only named sessions / all"),
    ("Ctrl-T", "preview: conversation / tree"),
    ("Shift-↑ Shift-↓", "scroll the preview"),
    (
        "Backspace, Ctrl-W, Ctrl-U",
        "delete a character / a word / everything typed",
    ),
    ("?, F1", "every key (`?` when nothing is typed)"),
];

/// What a key does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Type(char),
    Backspace,
    DeleteWord,
    Clear,
    Up,
    Down,
    PageUp,
    PageDown,
    ScrollUp,
    ScrollDown,
    Scope,
    Mode,
    Sort,
    Named,
    Tree,
    Help,
    Enter,
    Escape,
    Quit,
    Nothing,
}

impl Action {
    pub fn of(key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Char(c) if ctrl => match c.to_ascii_lowercase() {
                'c' => Action::Quit,
                'p' | 'k' => Action::Up,
                'n' | 'j' => Action::Down,
                'f' => Action::Mode,
                's' => Action::Sort,
                'o' => Action::Named,
                't' => Action::Tree,
                'w' => Action::DeleteWord,
                'u' => Action::Clear,
                _ => Action::Nothing,
            },
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::ALT) => Action::Type(c),
            KeyCode::Up if shift => Action::ScrollUp,
            KeyCode::Down if shift => Action::ScrollDown,
            KeyCode::Up => Action::Up,
            KeyCode::Down => Action::Down,
            KeyCode::PageUp => Action::PageUp,
            KeyCode::PageDown => Action::PageDown,
            KeyCode::Tab | KeyCode::BackTab => Action::Scope,
            KeyCode::Backspace => Action::Backspace,
            KeyCode::Enter => Action::Enter,
            KeyCode::Esc => Action::Escape,
            KeyCode::F(1) => Action::Help,
            _ => Action::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_keys_are_commands_and_letters_are_typed() {
        let k = |code, m| Action::of(KeyEvent::new(code, m));
        assert_eq!(k(KeyCode::Char('f'), KeyModifiers::CONTROL), Action::Mode);
        assert_eq!(k(KeyCode::Char('f'), KeyModifiers::NONE), Action::Type('f'));
        assert_eq!(
            k(KeyCode::Char('F'), KeyModifiers::SHIFT),
            Action::Type('F')
        );
        assert_eq!(k(KeyCode::Up, KeyModifiers::SHIFT), Action::ScrollUp);
        assert_eq!(k(KeyCode::Tab, KeyModifiers::NONE), Action::Scope);
    }
}
