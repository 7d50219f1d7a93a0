//! Enter: which session was picked and how to resume it, unless its file is gone or its cwd
//! needs a question first.

use std::path::Path;

use super::app::{App, Choice, Effect, Mode};
use super::keys::Action;

impl App {
    /// Enter: the selected session, unless its file is gone or its cwd needs a question.
    pub(super) fn choose(&mut self) -> Effect {
        let Some(target) = self.target() else {
            self.status = Some("nothing to resume: no session matches".into());
            return Effect::Stay;
        };
        if !Path::new(&target.path).exists() {
            self.status = Some(format!(
                "that session's file no longer exists (deleted since the picker opened): {}",
                crate::present::output::one_line(&target.path)
            ));
            return Effect::Stay;
        }
        let info = self
            .every
            .as_deref()
            .into_iter()
            .chain(self.this.as_ref())
            .flatten()
            .find(|s| s.file_id == target.file_id);
        let cwd = match self.mode {
            Mode::List => info.map(|s| s.cwd.clone()).unwrap_or_default(),
            Mode::Text => self.hits[self.hit_rows[self.selected]].cwd.clone(),
        };
        let gateway_key = info.and_then(|s| s.gateway.as_ref()).map(|g| {
            g.session_key
                .clone()
                .unwrap_or_else(|| format!("(agent {}, no session key)", g.agent_id))
        });
        let choice = Choice {
            entry_id: target.entry_id,
            path: target.path,
            here: false,
            cwd,
            gateway_key,
        };
        if !self.print && choice.gateway_key.is_none() && !Path::new(&choice.cwd).is_dir() {
            self.confirm = Some(choice);
            return Effect::Stay;
        }
        Effect::Chosen(choice)
    }

    /// The answer to "resume in the current directory?".
    pub(super) fn answer(&mut self, action: Action) -> Effect {
        match action {
            Action::Type('y' | 'Y') | Action::Enter => {
                let mut choice = self.confirm.take().expect("a question is open");
                choice.here = true;
                Effect::Chosen(choice)
            }
            Action::Quit => Effect::Quit,
            Action::Type('n' | 'N') | Action::Escape => {
                self.confirm = None;
                Effect::Stay
            }
            _ => Effect::Stay,
        }
    }
}
