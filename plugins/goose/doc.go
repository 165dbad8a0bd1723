// Package goose is the normalizer of Goose (block/goose). It reads two
// formats:
//
//   - "rows": Goose's SQLite store, sessions.db in its sessions
//     directory ($GOOSE_PATH_ROOT/data/sessions when that is set; else
//     %APPDATA%\Block\goose\data\sessions on Windows and
//     $XDG_DATA_HOME/goose/sessions, ~/.local/share/goose/sessions,
//     elsewhere, macOS included: Goose's config/paths.rs and etcetera's
//     app strategy), as the host reads it for `twasm sync` (abi.SQLiteSource,
//     declared in the manifest as [Queries]): a facts line, the session's
//     row, then its messages rows in order. One session is one run; a
//     later sync hands the session row again and the messages from the
//     last one read on (the last comes again and replaces itself, by its
//     message_id).
//   - "session": a session file of Goose before sessions.db
//     (<id>.jsonl in the same directory, named by the session's id): a
//     metadata line (working_dir, description, the token counters), then
//     one message a line, of the same shape as a message row's
//     content (which a session file may hold as a string: the list
//     encoded as JSON, or the text itself).
//
// A message ({role, created, content, metadata}; created in seconds, or
// milliseconds past 10^10 where a build wrote those) is one message; its
// content items are its blocks, in their slots: text (in a user message
// the prompt, or injected context when metadata.userVisible is false),
// thinking, redactedThinking (a redacted thinking block), image (a text
// naming it). A toolRequest (or frontendToolRequest) is a tool_use block
// and a tool.call; a request Goose could not parse ({status: error}) is
// a call named invalid_tool_call, with a warning. A toolResponse is a
// tool_result block and a tool.result: {status: error} and a result the
// tool marked isError are failures, never ok, and any other response is
// ok (its content is the text of its MCP content list, {content,
// isError} or, before rmcp, the list alone). An error item (an error Goose showed in the conversation) is
// a provider error. toolConfirmationRequest and actionRequired (questions put to
// the user) and a thinking systemNotification are declared ignored; an
// inline systemNotification and the older conversationCompacted are
// warnings; other items are counted unmapped.
//
// Usage is as Goose states it, for the whole session: the session's
// accumulated counters (input, which counts cached tokens, output, cache
// read and write) and accumulated_cost, set (not added) from each session
// record; the plain counters when a record has no accumulated ones.
// Goose keeps no usage per message. A session whose parent_session_id is
// set (a sub-agent's) is a child run of its parent's run (the host links
// them, abi.SQLiteSource's "parent" column) and says so in a warning. The
// store is a session log (no terminal event): the host derives the
// status. (Goose's input counts cached tokens: its providers build usage
// with Usage::from_cache_exclusive_input.) The goldens were written from Goose's source (session_manager.rs,
// conversation/message.rs): no public capture of a Goose store was found.
// testdata/captures/goose holds three real messages of a session file of
// April 2025 (a prompt, an MCP tool call and its response, the list
// alone), which a peer's test quotes (the file's metadata line is not
// quoted).
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the
// session's working_dir; Goose names no repository root.
package goose
