//! `pidx status`: where the index is, what it holds, and who keeps it fresh.

use anyhow::Result;

use super::Found;
use crate::app::env::Env;
use crate::present::output::{one_line, Out};
use crate::present::render;
use crate::store::Store;

pub fn run(env: &Env, out: &mut Out) -> Result<Found> {
    let store = match Store::open(&env.db) {
        Ok(store) => store,
        Err(e) => env.read_as_it_is(e)?,
    };
    // The counts read every session row once.
    crate::store::small_cache(&store.conn)?;
    let status = crate::query::status::status(&store, &env.roots)?;
    if env.global.json {
        out.line(&serde_json::to_string(&status)?)?;
    } else {
        for line in render::status_lines(&status) {
            out.line(&one_line(&line))?;
        }
    }
    Ok(true)
}
