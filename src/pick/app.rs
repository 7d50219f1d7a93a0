//! The picker's state and what each key does to it: the typed text, mode (session list or full
//! text), scope (this project or all), sort, filters, the selection and the preview. Drawing is
//! `ui`'s; reading the index is `data`'s; leaving (exec, print) is `mod`'s.

use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::data::{Loaded, Part, Source};
use super::keys::Action;
use super::preview::{Preview, Previewer, Target};
use super::rows::{self, SessionRow, Sort};
use crate::query::list::SessionInfo;
use crate::query::picker::{self, Compact, Memo};
use crate::query::search::Hit;

/// The session Enter picked, and how to resume it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub path: String,
    pub cwd: String,
    /// A gateway transcript's session key (pi cannot resume those).
    pub gateway_key: Option<String>,
    /// Resume in the current directory (the session's own is gone).
    pub here: bool,
    /// A full-text hit's entry, to resume at (`--pidx-entry`, when pi has the pidx package).
    pub entry_id: Option<String>,
}

/// What the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Sessions, filtered as `pidx list --query`.
    List,
    /// Matching entries, as `pidx search`.
    Text,
}

/// What a key asks the loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Stay,
    Quit,
    Chosen(Choice),
}

/// How much of every project's list is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Have {
    /// Nothing, or the first screenful (enough for the first paint).
    Page,
    /// Every session.
    List,
    /// Every session with pi's `allMessagesText` (what typed text is matched against).
    Text,
}

/// Rows a first paint of every project reads before the rest is loaded.
const FIRST_PAGE: usize = 200;

/// Full-text answers kept for queries asked again.
const SEARCHES_KEPT: usize = 16;

/// Everything on screen.
pub struct App {
    pub query: String,
    pub mode: Mode,
    pub all: bool,
    pub sort: Sort,
    pub named_only: bool,
    pub tree: bool,
    pub help: bool,
    /// Enter on a session whose cwd is gone: asking whether to resume here.
    pub confirm: Option<Choice>,
    /// `--print`: Enter prints the path, so a missing cwd does not matter.
    pub print: bool,
    pub selected: usize,
    /// The first session row on screen.
    pub offset: usize,
    /// Preview lines scrolled away from where it opens (its focus).
    pub scroll: isize,
    /// A one-line message for the status bar.
    pub status: Option<String>,
    /// This project's sessions, once needed.
    pub this: Option<Vec<SessionInfo>>,
    /// Every project's sessions: a first page, then all.
    pub every: Option<Arc<Vec<SessionInfo>>>,
    /// Search texts (what typed text is matched against) by file id, compact.
    texts: std::collections::HashMap<i64, Compact>,
    pub have: Have,
    loading: Option<Receiver<Loaded>>,
    pub session_rows: Vec<SessionRow>,
    pub hits: Vec<Hit>,
    pub hit_rows: Vec<usize>,
    pub preview: Option<(Target, Preview)>,
    /// Builds previews on its own thread, once one is needed.
    previewer: Option<Previewer>,
    /// The preview asked for and not built yet.
    asked: Option<Target>,
    /// Handles (shortest unique id prefixes) of sessions that were on screen, by file id.
    pub handles: std::collections::HashMap<i64, String>,
    /// Earlier keystrokes' matches in the list of one scope (forgotten when a list changes).
    narrowing: (bool, Vec<(String, Vec<usize>)>),
    /// Typed words' scores in that list (forgotten with it).
    memo: Memo,
    /// Recent full-text queries (text, all projects) and their hits, oldest first (forgotten
    /// when the index is read again).
    searched: Vec<(String, bool, Vec<Hit>)>,
    /// The list pane's height, for paging (set by the drawing code).
    pub page: usize,
    /// The current directory: "this project".
    pub cwd: String,
}

impl App {
    /// The picker over `source`, this project first (all projects when it has no session).
    ///
    /// # Errors
    /// Index errors.
    pub fn new(source: &Source, query: String, print: bool, all: bool) -> anyhow::Result<App> {
        let this = if all {
            None
        } else {
            Some(source.sessions(false, None)?)
        };
        let mut app = App {
            query,
            mode: Mode::List,
            all: this.as_ref().is_none_or(Vec::is_empty),
            sort: Sort::Threaded,
            named_only: false,
            tree: false,
            help: false,
            confirm: None,
            print,
            selected: 0,
            offset: 0,
            scroll: 0,
            status: None,
            this,
            every: None,
            texts: std::collections::HashMap::new(),
            have: Have::Page,
            loading: None,
            session_rows: Vec::new(),
            hits: Vec::new(),
            hit_rows: Vec::new(),
            preview: None,
            previewer: None,
            asked: None,
            narrowing: (false, Vec::new()),
            memo: Memo::default(),
            searched: Vec::new(),
            handles: std::collections::HashMap::new(),
            page: 50,
            cwd: source.cwd.clone(),
        };
        if app.all {
            app.every = Some(Arc::new(source.sessions(true, Some(FIRST_PAGE))?));
        }
        app.refilter(source);
        Ok(app)
    }

    /// Starts loading every session, then their messages' text, on a thread (after the first
    /// paint, so the two do not compete for the CPU), unless that is done or under way.
    pub fn start_loading(&mut self, source: &Source) {
        if self.loading.is_none() && self.have < Have::Text {
            self.loading = Some(source.load_all());
        }
    }

    fn typed(&self) -> &str {
        crate::pi::js::js_trim(&self.query)
    }

    /// The loaded list in scope.
    pub fn sessions(&self) -> &[SessionInfo] {
        let list = if self.all {
            self.every.as_deref()
        } else {
            self.this.as_ref()
        };
        list.map_or(&[], Vec::as_slice)
    }

    /// Rows in the list.
    pub fn len(&self) -> usize {
        match self.mode {
            Mode::List => self.session_rows.len(),
            Mode::Text => self.hit_rows.len(),
        }
    }

    /// Whether the list shown is still a first page.
    pub fn partial(&self) -> bool {
        self.all && self.mode == Mode::List && self.have == Have::Page
    }

    /// Takes what the loader sent; blocks until it holds `wait` when given (or the loader
    /// ended). True when anything arrived.
    fn take_loaded(&mut self, wait: Option<Have>) -> bool {
        let mut arrived = false;
        while let Some(rx) = &self.loading {
            let got = if wait.is_some_and(|w| self.have < w) {
                rx.recv().ok()
            } else {
                match rx.try_recv() {
                    Ok(l) => Some(l),
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(_) => None,
                }
            };
            let Some(loaded) = got else {
                self.loading = None;
                break;
            };
            arrived = true;
            self.forget();
            match loaded {
                Ok(Part::List(every, handles)) => {
                    self.every = Some(every);
                    self.handles.extend(handles);
                    self.have = Have::List;
                }
                Ok(Part::Text(texts)) => {
                    self.texts.extend(texts);
                    self.have = Have::Text;
                    self.loading = None;
                }
                Err(e) => {
                    self.status = Some(format!("cannot load every session: {e}"));
                    self.loading = None;
                }
            }
        }
        arrived
    }

    /// Makes sure what the rows need is loaded: this project's list, every session, and for
    /// typed text the messages' text (waiting for the loader when it must).
    fn ensure_loaded(&mut self, source: &Source) {
        if !self.all && self.this.is_none() {
            self.forget();
            match source.sessions(false, None) {
                Ok(this) => self.this = Some(this),
                Err(e) => self.status = Some(format!("cannot list this project: {e}")),
            }
        }
        if self.all && self.every.is_none() {
            self.forget();
            // A first page now; the rest comes from the loader.
            match source.sessions(true, Some(FIRST_PAGE)) {
                Ok(page) => self.every = Some(Arc::new(page)),
                Err(e) => self.status = Some(format!("cannot list every project: {e}")),
            }
            self.start_loading(source);
        }
        if self.mode == Mode::Text || self.typed().is_empty() {
            return;
        }
        if let (false, Some(this)) = (self.all, &self.this) {
            // This project alone: its own text is quicker to read than everybody's.
            let texts = &mut self.texts;
            let missing = this.iter().filter(|s| !texts.contains_key(&s.file_id));
            match source.texts(missing) {
                Ok(more) if more.is_empty() => {}
                Ok(more) => {
                    texts.extend(more);
                    self.narrowing.1.clear();
                    self.memo.clear();
                }
                Err(e) => self.status = Some(format!("cannot read this project's text: {e}")),
            }
            return;
        }
        self.start_loading(source);
        self.take_loaded(Some(Have::Text));
    }

    /// Forgets what earlier keystrokes matched (the list changed).
    fn forget(&mut self) {
        self.narrowing.1.clear();
        self.memo.clear();
    }

    /// Applies the loader's answer when it arrived; true when the list changed.
    pub fn poll_loaded(&mut self, source: &Source) -> bool {
        let before = self.selected_path();
        if self.take_loaded(None) {
            self.refilter_keeping(source, before);
            return true;
        }
        false
    }

    /// Reads the lists again after the background sync changed the index.
    pub fn reload(&mut self, source: &mut Source) {
        let before = self.selected_path();
        if let Err(e) = source.refresh_scope() {
            self.status = Some(format!("cannot reload: {e}"));
            return;
        }
        self.this = None;
        self.every = None;
        self.texts.clear();
        self.handles.clear();
        self.searched.clear();
        self.forget();
        self.have = Have::Page;
        self.loading = None;
        self.preview = None;
        self.start_loading(source);
        self.refilter_keeping(source, before);
    }

    /// Recomputes the rows for the typed text; the selection goes to the first row.
    pub fn refilter(&mut self, source: &Source) {
        self.selected = 0;
        self.scroll = 0;
        match self.mode {
            Mode::List => {
                self.ensure_loaded(source);
                let ranked = self.rank();
                self.session_rows = rows::session_rows(
                    self.sessions(),
                    ranked,
                    &self.query,
                    self.sort,
                    self.named_only,
                );
            }
            Mode::Text => {
                self.hits = if self.typed().is_empty() {
                    Vec::new()
                } else {
                    self.search(source)
                };
                self.hit_rows = rows::hit_rows(&self.hits, self.sort, self.named_only);
            }
        }
    }

    /// `pidx search` of the typed text in the scope; a query asked again (Backspace) is
    /// answered from the last [`SEARCHES_KEPT`] ones.
    fn search(&mut self, source: &Source) -> Vec<Hit> {
        let asked = |(q, all, _): &&(String, bool, Vec<Hit>)| *q == self.query && *all == self.all;
        if let Some((_, _, hits)) = self.searched.iter().find(asked) {
            return hits.clone();
        }
        match source.search(&self.query, self.all) {
            Ok(hits) => {
                if self.searched.len() >= SEARCHES_KEPT {
                    self.searched.remove(0);
                }
                self.searched
                    .push((self.query.clone(), self.all, hits.clone()));
                hits
            }
            Err(e) => {
                self.status = Some(e.to_string());
                Vec::new()
            }
        }
    }

    /// The sessions matching the typed text, in pi's order; a keystroke that only adds to the
    /// text looks only at what matched before it (memoised per text typed, for Backspace).
    fn rank(&mut self) -> Vec<usize> {
        if self.narrowing.0 != self.all {
            self.narrowing.0 = self.all;
            self.forget();
        }
        let sessions = if self.all {
            self.every.as_deref()
        } else {
            self.this.as_ref()
        };
        let sessions = sessions.map_or(&[][..], Vec::as_slice);
        let (query, cached) = (&self.query, &self.narrowing.1);
        if let Some((_, hits)) = cached.iter().rev().find(|(q, _)| q == query) {
            return hits.clone();
        }
        let before = cached.iter().rev().find(|(q, _)| picker::narrows(q, query));
        // In any order: the ranking orders by score, time, then index.
        let among = match before {
            Some((_, m)) => m.clone(),
            None => (0..sessions.len()).collect(),
        };
        let texts = &self.texts;
        let ranked = picker::rank_memo(
            query,
            among,
            sessions.len(),
            |i| sessions[i].modified_ms,
            |i| i,
            |i| texts.get(&sessions[i].file_id),
            &mut self.memo,
        );
        let cached = &mut self.narrowing.1;
        if cached.len() >= 64 {
            cached.remove(0);
        }
        cached.push((self.query.clone(), ranked.clone()));
        ranked
    }

    /// Recomputes the rows, keeping the selected session selected when it is still listed.
    /// (`before`: the selected path, taken before the state changed.)
    fn refilter_keeping(&mut self, source: &Source, before: Option<String>) {
        self.refilter(source);
        if let Some(path) = before {
            if let Some(i) = (0..self.len()).find(|&i| self.path_at(i) == Some(path.as_str())) {
                self.selected = i;
            }
        }
    }

    fn path_at(&self, row: usize) -> Option<&str> {
        match self.mode {
            Mode::List => self
                .session_rows
                .get(row)
                .and_then(|r| self.sessions().get(r.index))
                .map(|s| s.path.as_str()),
            Mode::Text => self.hit_rows.get(row).map(|&h| self.hits[h].path.as_str()),
        }
    }

    fn selected_path(&self) -> Option<String> {
        self.path_at(self.selected).map(str::to_string)
    }

    /// The session (or hit) the preview shows.
    pub fn target(&self) -> Option<Target> {
        let (file_id, path, entry_id) = match self.mode {
            Mode::List => {
                let s = self
                    .sessions()
                    .get(self.session_rows.get(self.selected)?.index)?;
                (s.file_id, s.path.clone(), None)
            }
            Mode::Text => {
                let h = &self.hits[*self.hit_rows.get(self.selected)?];
                (h.file_id, h.path.clone(), h.entry_id.clone())
            }
        };
        Some(Target {
            file_id,
            path,
            entry_id,
            tree: self.tree,
        })
    }

    /// Whether the preview shows something else than the selected row.
    pub fn preview_stale(&self) -> bool {
        self.preview.as_ref().map(|(t, _)| t) != self.target().as_ref()
    }

    /// Asks for the preview of the selected row unless it is there or asked for (it is built
    /// on the previewer's thread; [`App::take_preview`] shows it).
    pub fn update_preview(&mut self, source: &Source) {
        let Some(target) = self.target() else {
            self.preview = None;
            return;
        };
        if self.preview.as_ref().is_some_and(|(t, _)| *t == target)
            || self.asked.as_ref() == Some(&target)
        {
            return;
        }
        let previewer = self.previewer.get_or_insert_with(|| source.previewer());
        previewer.ask(target.clone());
        self.asked = Some(target);
    }

    /// Whether a preview asked for has not come yet.
    pub fn preview_pending(&self) -> bool {
        self.asked.is_some()
    }

    /// Shows the preview built for the selected row, if it came; true when it did.
    pub fn take_preview(&mut self) -> bool {
        let Some((target, p)) = self.previewer.as_ref().and_then(Previewer::take) else {
            return false;
        };
        if self.asked.as_ref() == Some(&target) {
            self.asked = None;
        }
        if self.target().as_ref() != Some(&target) {
            return false;
        }
        self.preview = Some((target, p));
        true
    }

    /// Looks up the handles of the sessions that can be on screen (a page either side of the
    /// selection); only those, as each costs three index lookups.
    pub fn update_handles(&mut self, source: &Source) {
        let from = self.selected.saturating_sub(self.page + 1);
        let list = self.sessions();
        let missing: Vec<&SessionInfo> = self
            .session_rows
            .iter()
            .skip(from)
            .take(2 * self.page + 2)
            .filter_map(|r| list.get(r.index))
            .filter(|s| !self.handles.contains_key(&s.file_id))
            .collect();
        if missing.is_empty() {
            return;
        }
        match source.handles(&missing) {
            Ok(h) => self.handles.extend(h),
            Err(e) => self.status = Some(format!("cannot name sessions: {e}")),
        }
    }

    /// Does what `action` says.
    pub fn act(&mut self, action: Action, source: &Source) -> Effect {
        if self.confirm.is_some() {
            return self.answer(action);
        }
        if self.help {
            self.help = matches!(action, Action::Nothing);
            return if action == Action::Quit {
                Effect::Quit
            } else {
                Effect::Stay
            };
        }
        self.status = None;
        match action {
            Action::Quit | Action::Escape => return Effect::Quit,
            Action::Enter => return self.choose(),
            Action::Help => self.help = true,
            Action::Type('?') if self.query.is_empty() => self.help = true,
            Action::Up | Action::Down | Action::PageUp | Action::PageDown => self.go(action),
            Action::ScrollUp => self.scroll -= 3,
            Action::ScrollDown => self.scroll += 3,
            Action::Tree => {
                self.tree = !self.tree;
                self.scroll = 0;
            }
            _ => self.edit(action, source),
        }
        Effect::Stay
    }

    /// Typing and the toggles that change the rows.
    fn edit(&mut self, action: Action, source: &Source) {
        let before = self.query.clone();
        match action {
            Action::Type(c) => self.query.push(c),
            Action::Backspace => {
                self.query.pop();
            }
            Action::Clear => self.query.clear(),
            Action::DeleteWord => {
                let kept = self.query.trim_end().len();
                let cut = self.query[..kept].rfind(' ').map_or(0, |i| i + 1);
                self.query.truncate(cut);
            }
            Action::Scope => {
                let before = self.selected_path();
                self.all = !self.all;
                return self.refilter_keeping(source, before);
            }
            Action::Mode => {
                self.mode = match self.mode {
                    Mode::List => Mode::Text,
                    Mode::Text => Mode::List,
                };
                return self.refilter(source);
            }
            Action::Sort => {
                let before = self.selected_path();
                self.sort = self.sort.next();
                return self.refilter_keeping(source, before);
            }
            Action::Named => {
                let before = self.selected_path();
                self.named_only = !self.named_only;
                return self.refilter_keeping(source, before);
            }
            _ => return,
        }
        if self.query != before {
            self.refilter(source);
        }
    }

    fn go(&mut self, action: Action) {
        let last = self.len().saturating_sub(1) as isize;
        let page = self.page.max(1) as isize;
        let step = match action {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -page,
            _ => page,
        };
        self.selected = (self.selected as isize + step).clamp(0, last.max(0)) as usize;
        self.scroll = 0;
    }
}
