//! `pidx team`: people on the team server. `add-member` gives a person a login role of their
//! own (a member who pushes and may write only their own sources, or a reader limited to
//! chosen sources and projects) and prints the SQL, or runs it with `--admin URL`.

use anyhow::{bail, Result};
use clap::{Args, Subcommand};

use super::Found;
use crate::app::env::Env;
use crate::present::output::Out;
use crate::team::pg::{self, rights};

#[derive(Subcommand, Debug)]
pub enum TeamCommand {
    /// A login role for one person: with --writes, a member who pushes as those sources and
    /// can write nothing else (row-level security, so hand-written SQL is held to it too);
    /// with --reader, a role that only reads, limited by --reads and --reads-project.
    #[command(
        after_help = "Examples:\n  pidx team add-member alice --writes alice@laptop\n  pidx team add-member alice --writes alice@laptop --admin postgresql://postgres@db.example/pidx\n  pidx team add-member auditor --reads-project /home/alice/code/app\n  pidx team add-member ci --reader\n\nWithout --admin the SQL is printed, to run with psql as the tables' owner. Give the role a\npassword (ALTER ROLE ... PASSWORD) or another way to log in; it then pushes with\n`pidx push --pg postgresql://alice@db.example/pidx --source alice@laptop`."
    )]
    AddMember(AddMember),
    /// Take a role's rights away (the role itself stays: DROP ROLE it by hand).
    RemoveMember {
        /// The role.
        name: String,
        /// Run it on the server with this administrator URL, instead of printing the SQL.
        #[arg(long, value_name = "URL")]
        admin: Option<String>,
    },
    /// The members and limited readers (needs the administrator URL).
    Members {
        #[arg(long, value_name = "URL")]
        admin: String,
    },
}

#[derive(Args, Debug)]
pub struct AddMember {
    /// The role (the name the person logs in with).
    pub name: String,
    /// A source this member pushes as and may write (repeatable).
    #[arg(long = "writes", value_name = "SOURCE", conflicts_with = "reader")]
    pub writes: Vec<String>,
    /// Only read: no push, no writes; everything unless --reads / --reads-project limit it.
    #[arg(long)]
    pub reader: bool,
    /// Read only this source's sessions (repeatable; implies --reader).
    #[arg(long = "reads", value_name = "SOURCE", conflicts_with = "writes")]
    pub reads: Vec<String>,
    /// Read only sessions of this project folder and the folders under it (repeatable;
    /// implies --reader).
    #[arg(long = "reads-project", value_name = "DIR", conflicts_with = "writes")]
    pub projects: Vec<String>,
    /// Run it on the server with this administrator URL (a role that may create roles and owns
    /// pidx's tables), after migrating the schema, instead of printing the SQL.
    #[arg(long, value_name = "URL")]
    pub admin: Option<String>,
}

pub fn run(env: &Env, cmd: &TeamCommand, out: &mut Out) -> Result<Found> {
    match cmd {
        TeamCommand::AddMember(a) => {
            let member = if a.reader || !a.reads.is_empty() || !a.projects.is_empty() {
                rights::Member::Reader {
                    sources: a.reads.clone(),
                    projects: a.projects.clone(),
                }
            } else {
                rights::Member::Writer {
                    sources: a.writes.clone(),
                }
            };
            let sql = rights::add_member_sql(&a.name, &member)?;
            let what = match &member {
                rights::Member::Writer { sources } => format!("writes {}", sources.join(", ")),
                rights::Member::Reader { sources, projects } => {
                    if sources.is_empty() && projects.is_empty() {
                        "reads everything".into()
                    } else {
                        format!(
                            "reads {}",
                            [sources.clone(), projects.clone()].concat().join(", ")
                        )
                    }
                }
            };
            apply_or_print(
                env,
                a.admin.as_deref(),
                &sql,
                out,
                &format!("{}: {what}", a.name),
            )
        }
        TeamCommand::RemoveMember { name, admin } => apply_or_print(
            env,
            admin.as_deref(),
            &rights::remove_member_sql(name),
            out,
            &format!("{name}: no rights left"),
        ),
        TeamCommand::Members { admin } => {
            let mut client = pg::connect(admin)?;
            let rows = rights::members(&mut client)?;
            if env.global.json {
                let v: Vec<_> = rows
                    .iter()
                    .map(|(r, w)| serde_json::json!({"role": r, "rights": w}))
                    .collect();
                out.json(&v)?;
            } else {
                out.lines(rows.iter().map(|(r, w)| {
                    format!("{}  {}", crate::term::one_line(r), crate::term::one_line(w))
                }))?;
            }
            Ok(!rows.is_empty())
        }
    }
}

fn apply_or_print(
    env: &Env,
    admin: Option<&str>,
    sql: &str,
    out: &mut Out,
    done: &str,
) -> Result<Found> {
    let Some(url) = admin else {
        out.line(sql.trim_end())?;
        crate::term::say(
            "pidx: run this with psql as the owner of pidx's tables, after `pidx pg migrate` (or pass --admin URL)",
        );
        return Ok(true);
    };
    if env.global.pg.is_some() {
        bail!("--admin names the server; leave --pg out");
    }
    let mut client = pg::connect(url)?;
    pg::migrate::migrate(&mut client)?;
    rights::apply(&mut client, sql)?;
    if env.global.json {
        out.json(&serde_json::json!({"done": done}))?;
    } else {
        out.line(&crate::term::one_line(done))?;
    }
    Ok(true)
}
