// Package opencode is the normalizer of OpenCode (sst/opencode, now
// anomalyco/opencode) and of Kilo CLI (provider "kilo"), which keeps the
// same schema in $XDG_DATA_HOME/kilo/kilo.db (kilo-<channel>.db, or an
// opencode-<channel>.db an older build left there; the KILO_DB override
// names a file and is not followed). It reads two formats:
//
//   - "rows": OpenCode's SQLite store (opencode.db, $XDG_DATA_HOME/opencode
//     or ~/.local/share/opencode on every OS; opencode-<channel>.db for a
//     release channel), as the host reads it for `twasm sync` (abi 1.4,
//     abi.SQLiteSource, declared in the manifest as [Queries]): a facts
//     line, the session row, then per message, in order, one row per part
//     joined with its message's info. One session is one run. A later
//     sync hands the rows changed since; a part changed in place (a tool
//     going pending, running, completed; a text growing) comes again with
//     the same id and replaces what the message held: the message is
//     opened again with all of its blocks, in part-id order, and the
//     archive keeps its new version.
//   - "json": `opencode run --format json` (step_start, text, reasoning,
//     tool_use, step_finish and error events, each holding one part).
//
// Parts: text and reasoning are text and thinking blocks (a synthetic
// text of a user message is injected context, a file attachment or a
// subtask a text block naming it); a tool part is a tool_use block and,
// once it left pending (its input is known then), a tool.call, with a
// tool.result when completed (an error when bash exited non-zero, read
// from metadata.exit) or error (state.error); step-start, snapshot,
// patch and agent parts make no block. A step-finish's tokens and cost
// are the step's figures: the session's usage and cost are the sums over
// every step-finish, each counted once however often it is sent, with a
// stated cost of 0 kept; a message's usage is the sum of its steps (its
// own tokens when it has none: OpenCode keeps the last step's there).
// OpenCode's input leaves cached tokens out; twasm's input counts them
// (input + cache.read + cache.write). A message's error ({name, data:
// {message}}) and a retry part's are provider errors, reported once; a
// retry also a warning, a compaction part a warning. The store is a
// session log (no terminal event): the host derives the status.
//
// A sub-agent session (parent_id set) is a child run of its parent
// session's run (the host links them, abi.SQLiteSource's "parent"
// column), whose warning names its parent; the parent's task call holds
// the sub-agent's result. The link is to the parent run, not yet to the
// task call that started it. The event table of newer versions and the
// legacy JSON file tree (storage/session, message, part) are not read
// yet.
package opencode
