//! Everything pidx knows about pi's files, pure: JavaScript semantics and collation, the folder
//! layout and cwd encoding, line splitting and the lenient JSON parse, entry folding with the
//! v1/v2 migrations, text extraction, raw JSON passthrough, tree-path facts and gateway session
//! keys. No SQL and no I/O beyond what a caller hands in; `docs/pi-format.md` is the reference.

pub mod collate;
pub mod entry;
pub mod gateway;
pub mod huge;
pub mod images;
pub mod js;
pub mod layout;
pub mod line;
pub mod message;
pub mod model;
pub mod paths;
pub mod picker;
pub mod rawjson;
pub mod shown;
pub mod text;
pub mod touches;
