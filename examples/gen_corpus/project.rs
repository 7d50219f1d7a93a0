//! Projects: working directories (some with spaces and non-ASCII characters), pi's cwd → folder
//! encoding, and each project's own file paths and identifiers, so that every project has words
//! that are common inside it and rare elsewhere.

use super::rng::Rng;
use super::text::{camel, pascal, Vocab};
use std::collections::HashSet;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Ts,
    Py,
    Go,
}

pub struct Project {
    pub cwd: String,
    /// `--<encoded cwd>--`, the folder under the sessions root.
    pub dir_name: String,
    pub lang: Lang,
    pub files: Vec<String>,
    pub fns: Vec<String>,
    pub types: Vec<String>,
    pub consts: Vec<String>,
    pub modules: Vec<String>,
    /// Relative popularity: how many sessions land in this project.
    pub weight: f64,
}

const USERS: &[&str] = &[
    "dev", "alice", "mario", "jürgen", "zoë", "mei", "ana", "sam", "kwame", "priya", "ops",
];
const REPO_NAMES: &[&str] = &[
    "pidx",
    "webshop",
    "infra",
    "dotfiles",
    "api-gateway",
    "billing",
    "data-pipeline",
    "site",
    "mobile-app",
    "ml-experiments",
    "compiler",
    "game-engine",
    "blog",
    "cli-tools",
    "monorepo",
    "auth-service",
    "search",
    "docs",
    "scraper",
    "dashboard",
];
/// Path patterns; `{u}` user, `{n}` repo name, `{o}` org or second name.
const CWD_PATTERNS: &[&str] = &[
    "/home/{u}/code/{n}",
    "/Users/{u}/Projects/{n}",
    "/home/{u}/src/github.com/{o}/{n}",
    "/Users/{u}/Developer/{n}",
    "/home/{u}/work/{o}/packages/{n}",
    "/Users/{u}/My Projects/{n}",
    "/Users/{u}/Documents/Side Projects/{n} v2",
    "/home/{u}/Projekte/{n}-über",
    "/Users/{u}/项目/{n}",
    "/srv/repos/{n}",
    "/home/{u}/code/{n}.worktrees/{o}",
    "/tmp/{n}-scratch",
    "/home/{u}/code/{o}/crates/{n}",
    "/Users/{u}/Library/Mobile Documents/com~apple~CloudDocs/{n}",
];

/// Builds `count` projects with distinct folder names, deterministic from `rng`.
pub fn make_projects(rng: &mut Rng, vocab: &Vocab, count: usize) -> Vec<Project> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let cwd = make_cwd(rng, vocab);
        let dir_name = pidx::pi::layout::encode_cwd(&cwd);
        if !seen.insert(dir_name.clone()) {
            continue;
        }
        let rank = out.len() as f64;
        out.push(make_project(
            rng,
            vocab,
            cwd,
            dir_name,
            1.0 / (rank + 1.0).powf(0.8),
        ));
    }
    out
}

fn make_cwd(rng: &mut Rng, vocab: &Vocab) -> String {
    let name = if rng.chance(0.3) {
        rng.pick(REPO_NAMES).to_string()
    } else {
        let w = ident_word(rng, vocab);
        if rng.chance(0.5) {
            format!("{w}-{}", ident_word(rng, vocab))
        } else {
            w.to_string()
        }
    };
    let org = ident_word(rng, vocab);
    let pat = CWD_PATTERNS[rng.zipf(CWD_PATTERNS.len())];
    pat.replace("{u}", rng.pick(USERS))
        .replace("{n}", &name)
        .replace("{o}", org)
}

/// An ASCII word for identifiers, skipping the most common short function words.
fn ident_word<'a>(rng: &mut Rng, vocab: &'a Vocab) -> &'a str {
    let skip = 60.min(vocab.ascii.len() - 1);
    &vocab.ascii[skip + rng.zipf(vocab.ascii.len() - skip)]
}

fn ident_words<'a>(rng: &mut Rng, vocab: &'a Vocab, lo: u64, hi: u64) -> Vec<&'a str> {
    (0..rng.range(lo, hi))
        .map(|_| ident_word(rng, vocab))
        .collect()
}

fn make_project(
    rng: &mut Rng,
    vocab: &Vocab,
    cwd: String,
    dir_name: String,
    weight: f64,
) -> Project {
    let lang = [Lang::Rust, Lang::Ts, Lang::Py, Lang::Go][rng.weighted(&[35.0, 35.0, 20.0, 10.0])];
    let modules: Vec<String> = (0..rng.range(5, 20))
        .map(|_| ident_word(rng, vocab).to_string())
        .collect();
    let fns = (0..rng.range(40, 250))
        .map(|_| {
            let w = ident_words(rng, vocab, 2, 3);
            if matches!(lang, Lang::Rust | Lang::Py) {
                w.join("_")
            } else {
                camel(&w)
            }
        })
        .collect();
    let types = (0..rng.range(15, 80))
        .map(|_| pascal(&ident_words(rng, vocab, 1, 3)))
        .collect();
    let consts = (0..rng.range(10, 60))
        .map(|_| ident_words(rng, vocab, 2, 3).join("_").to_uppercase())
        .collect();
    let files = make_files(rng, vocab, lang, &modules);
    Project {
        cwd,
        dir_name,
        lang,
        files,
        fns,
        types,
        consts,
        modules,
        weight,
    }
}

fn make_files(rng: &mut Rng, vocab: &Vocab, lang: Lang, modules: &[String]) -> Vec<String> {
    let (manifest, patterns): (&str, &[&str]) = match lang {
        Lang::Rust => (
            "Cargo.toml",
            &[
                "src/{m}/{w}.rs",
                "src/{m}.rs",
                "tests/{w}.rs",
                "crates/{m}/src/{w}.rs",
            ],
        ),
        Lang::Ts => (
            "package.json",
            &[
                "src/{m}/{c}.ts",
                "src/components/{P}.tsx",
                "test/{w}.test.ts",
                "src/{m}/index.ts",
            ],
        ),
        Lang::Py => (
            "pyproject.toml",
            &[
                "{m}/{w}.py",
                "{m}/{w}_{w}.py",
                "tests/test_{w}.py",
                "{m}/__init__.py",
            ],
        ),
        Lang::Go => (
            "go.mod",
            &[
                "{m}/{w}.go",
                "internal/{m}/{w}.go",
                "internal/{m}/{w}_test.go",
                "cmd/{m}/main.go",
            ],
        ),
    };
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for _ in 0..rng.range(30, 300) {
        let pat = rng.pick(patterns);
        let m = modules[rng.below(modules.len())].clone();
        let w = ident_words(rng, vocab, 2, 2);
        let f = pat
            .replacen("{m}", &m, 1)
            .replacen("{w}", w[0], 1)
            .replacen("{w}", w[1], 1)
            .replace("{c}", &camel(&w))
            .replace("{P}", &pascal(&w));
        if seen.insert(f.clone()) {
            files.push(f);
        }
    }
    // Zipf picks favour early entries: keep the project's own sources first.
    files.extend([
        "README.md".to_string(),
        manifest.to_string(),
        "AGENTS.md".to_string(),
    ]);
    files.push(format!("docs/{}.md", ident_word(rng, vocab)));
    files
}
