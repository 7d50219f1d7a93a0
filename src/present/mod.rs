//! Presentation shared by the front doors that print for a person: the output sink and its
//! neutralising helpers (`output`), tables, numbers, charts by period, a session, its context
//! and tree as terminal text (`render`), and the HTML report (`report`). It knows nothing of
//! where a request came from: the command line, the picker and the MCP server use it alike.

pub mod chart;
pub mod numbers;
pub mod output;
pub mod render;
pub mod report;
pub mod table;
