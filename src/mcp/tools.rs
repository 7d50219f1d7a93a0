//! The nine tools as a model sees them: one paragraph each saying when to use the tool and what
//! it returns, with its arguments' and answer's JSON Schemas (from schemars), and the list
//! `tools/list` answers with. The arguments are `args`'; what each tool does lives in `answer`.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;

use super::args::*;
use super::files;
use super::schema as out;

const SEARCH: &str = "Full-text search over every pi coding-agent session on this machine: what users asked, what the assistant said and thought, tool output and bash runs. Use it to find how something was done or decided before (an error message, a file name, a design choice). Words are ranked (bm25, prefix*, \"phrase\", -excluded, OR); set literal for exact text with punctuation, regex for a pattern; narrow with cwd, since/until, kinds, model, session or branch_only. Returns hits grouped by session (path, id, folder, title), each with the entry id, kind, role, time, a snippet and `by` (\"words\", \"meaning\" or \"both\": when the index holds embeddings, a hit may be similar in meaning without holding the words; an empty answer means nothing matched the words and nothing cleared the similarity floor); pass a session and an entryId to get_context (as leaf) to read the conversation around a hit.";
const LIST: &str = "Lists pi sessions newest first, as pi's /resume does: the sessions of one project folder (default: the folder this server runs in) or of every project (all). query filters and orders like pi's picker (fuzzy words over name, id, messages and folder). Each row is pi's SessionInfo: path, id, cwd, name, parentSessionPath, created, modified, messageCount, firstMessage. Use it to find a recent session, then get_session, get_context or get_tree with its id.";
const SESSION: &str = "Everything the index knows about one session, as `pidx show` prints it: path, header, id, folder, name, created and modified times, whether pi lists it (and why not), entry count, messages by role, labels, the current leaf entry, the parent session, pi's /session usage figures (tokens and cost) with a per-model breakdown, skipped lines, and agent-gateway metadata when there is any.";
const CONTEXT: &str = "The conversation pi would send to the model at a session's current leaf (or at a given leaf entry): pi's buildSessionContext, with compactions applied. By default each message is readable text (role, text, tool calls with arguments, tool results, bash runs, summaries) with long tool output, thinking and images elided behind markers; format=json gives pi's message objects exactly. Long contexts come in pages: from_end=true starts with the latest messages and pages backwards. Pass nextCursor to continue; a message longer than a page is split (from/to/total say which characters a piece holds).";
const TREE: &str = "The shape of a session's entry tree (pi's /tree): its branches as compact segments in depth-first order, each with the first and last entry id, the number of entries, a preview of its first message, labels, how many branches fork from its end, and whether it holds the current leaf. Use it to see where a conversation forked, then get_context with a segment's lastId as leaf to read that branch.";
const STATS: &str = "Usage figures over the indexed sessions, as `pidx stats` computes them: sessions, user and assistant messages, tool calls and errors, input/output/cache tokens, total tokens, cost, compactions and active days, grouped by day, week, month, project, model, provider, session, tool, agent or channel (several nest), over a time range and optionally one project.";
const SQL: &str = "Runs one read-only SQL SELECT against the pidx index (SQLite) for questions the other tools do not answer. Documented views: v_sessions (one row per session), v_entries (one row per entry), v_messages (messages with role, model, text), v_usage (tokens and cost per message), v_tool_calls (one row per tool call: session, entry, time, tool name), v_file_touches (one row per file a tool call touched: kind, path, status). Anything that would write is refused; a query has a time limit of 10 seconds; rows come max_rows at a time with a cursor.";

fn tool<T: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: &'static str,
) -> Tool {
    let annotations = ToolAnnotations::default()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    Tool::new(name, description, Arc::new(serde_json::Map::new()))
        .with_input_schema::<T>()
        .with_output_schema::<O>()
        .with_title(title)
        .with_annotations(annotations)
}

/// What `tools/list` returns.
pub fn list() -> Vec<Tool> {
    vec![
        tool::<SearchArgs, out::SearchOut>("search_sessions", "Search past sessions", SEARCH),
        tool::<ListArgs, out::ListOut>("list_sessions", "List sessions", LIST),
        tool::<SessionArgs, out::SessionOut>("get_session", "One session's facts", SESSION),
        tool::<ContextArgs, out::ContextOut>("get_context", "A session's conversation", CONTEXT),
        tool::<TreeArgs, out::TreeOut>("get_tree", "A session's branches", TREE),
        tool::<StatsArgs, out::StatsOut>("usage_stats", "Token and cost figures", STATS),
        tool::<SqlArgs, out::SqlOut>("sql_query", "Read-only SQL on the index", SQL),
        tool::<files::FileHistoryArgs, out::FileHistoryOut>(
            "file_history",
            "Sessions that touched a file",
            files::FILE_HISTORY,
        ),
        tool::<files::BlameArgs, out::BlameOut>(
            "blame",
            "Which session wrote each line",
            files::BLAME,
        ),
    ]
}

/// The arguments of a call as `T`, or one sentence saying what is wrong with them.
pub fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: serde_json::Map<String, serde_json::Value>,
) -> Result<T, String> {
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let at = e.path().to_string();
        let what = e.into_inner().to_string();
        if at == "." {
            format!("bad arguments for {tool}: {what}")
        } else {
            format!("bad arguments for {tool}: {at}: {what}")
        }
    })
}
