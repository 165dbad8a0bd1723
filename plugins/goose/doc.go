// Package goose is the normalizer of Goose (block/goose). It reads five
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
//     (<id>.jsonl in the same directory, named by the session's id; the
//     first Goose with sessions.db imports each into it under that id,
//     import_legacy, and leaves the file: the store is keyed,
//     abi.StoreSessionKey, so a session in both is archived from the
//     database only, its turns and tokens counted once): a
//     metadata line (working_dir, description, the token counters), then
//     one message a line, of the same shape as a message row's
//     content (which a session file may hold as a string: the list
//     encoded as JSON, or the text itself).
//     The first Goose CLI (late 2024) kept such files, messages only
//     ({role, created, content}, no metadata line), under
//     ~/.config/goose/sessions (goose-cli's session/session_file.rs), a
//     store of its own; their content items have no type (serde untagged,
//     session/message_serialize.rs): {text}, {id, tool_name, arguments}
//     (a tool request; the first version wrote no id, and its call gets
//     goose-<message>-<slot>, unpaired), {id, tool_result} (the response:
//     the JSON text of its content list, ok, or {"error": "..."}, an
//     error, written without escaping the message so not always JSON)
//     and {mime_type} (an image, its data not kept). A request Goose could
//     not parse was written as a text "Tool Request Error: ...": kept,
//     with a warning.
//   - "stream-json": the output of goose run --output-format stream-json
//     (goose-cli's session/mod.rs, StreamEvent, tagged on type in
//     snake_case; stream.go), what `twasm record -- goose run ...` reads:
//     message {message}, a message as above, as the agent yields it;
//     notification {extension_id, log or progress, or message in 1.25},
//     an MCP server's notice, declared ignored; error {error}, an error
//     the agent loop reported, a provider error; complete, the run's end,
//     with the session's counters as Goose stores them (total_tokens,
//     input_tokens, output_tokens, and in 1.44 cache_read_input_tokens
//     and cache_write_input_tokens; null or absent when Goose kept none),
//     set as the step's usage, input counting cached tokens as above (a
//     run that resumed a session counts its earlier runs too: the stream
//     does not say so). Goose yields a streamed answer a chunk a message,
//     each with the response's id and the chunk alone: a message with the
//     id and role of the one before continues it (its text or thinking
//     appended to that message's last block of the type, its other items
//     the next blocks), so one response is one message, its text whole.
//     complete states no status: the run is ok, or error when an error
//     came (Goose can print error and then complete); a run cut before
//     complete is incomplete, by the host's rule for a terminal format.
//     The events name no session, working directory or prompt (goose run
//     prints neither its -t text nor the session id there); without
//     --quiet a text banner precedes them (session/output.rs
//     display_session_info), which names both: "    session id: <id>"
//     and "    working directory: <dir>" under "starting session |
//     provider: ... model: ..." ("resuming session |", "running without
//     session |") (2025), or "    <id> · <dir>" (the directory alone for
//     a run without a session) under "  ● new session · <provider>
//     <model>" in later builds. Those lines are the run's session id and
//     working directory (Meta, escape sequences left out); the banner's
//     header is known, its provider and model not read. goose run writes the
//     same session into sessions.db (unless --no-session): a run whose
//     banner named the session states its id, which ties it to the run
//     twasm sync archives from the database, and the host counts the
//     session once, there (views.Superseded). A stream with no banner
//     (--quiet) names nothing to tie them: where its complete states the
//     counters (its usage), a warning says both runs count them
//     (twiceWarning). A resumed session's counters hold its earlier
//     runs' too: a warning says so (resumedWarning). The json output
//     reports no usage, so counts nothing twice.
//   - "json": goose run --output-format json (session/mod.rs,
//     JsonOutput), one pretty-printed document printed when the run ends
//     (reassembled, sdk.Plugin.Reassemble): {messages, metadata:
//     {total_tokens, status}}; messages are read as a session file's,
//     status "completed" ends the run ok and any other in error (a fork
//     of Goose writes "failed" with an error code, kept in the message);
//     total_tokens is the session's plain counter, the last model call's
//     (as a sessions row's): no usage is reported, a warning gives it.
//   - "export": goose session export --format json (goose-cli's
//     commands/session.rs: serde_json::to_string_pretty of the session
//     get_session returns with its messages), reassembled from its lines
//     by the SDK (sdk.Plugin.Reassemble): the session's record as a
//     sessions row holds it (id, working_dir, the counters,
//     model_config instead of model_config_json) and conversation, its
//     messages in order, each read as a session file's (a copy's
//     messages from before it was created left out, as below). Goose
//     since block/goose#9752 (2026-06, cache tokens tracked; 1.4x)
//     serializes the counters as objects, usage (the last call's) and
//     accumulated_usage (the session's), named as the stream's complete
//     names them (input_tokens, output_tokens, total_tokens,
//     cache_read_input_tokens, cache_write_input_tokens), while
//     sessions.db keeps its flat columns: accumulated_usage is then the
//     session's usage, and usage alone only the warning's figures. The
//     document is one raw line to the host. --format yaml and markdown
//     are not read.
//
// A message ({role, created, content, metadata}; created in seconds, or
// milliseconds past 10^10 where a build wrote those) is one message; its
// content items are its blocks, in their slots: text (in a user message
// the prompt, or injected context when metadata.userVisible is false),
// thinking (and an older Goose's reasoning item, {text}, which Goose
// itself now reads as thinking), redactedThinking (a redacted thinking
// block), image (a text
// naming it). A toolRequest (or frontendToolRequest) is a tool_use block
// and a tool.call; a request Goose could not parse ({status: error}) is
// a call named invalid_tool_call, with a warning. A toolResponse is a
// tool_result block and a tool.result: {status: error} and a result the
// tool marked isError are failures, never ok, and any other response is
// ok (its content is the text of its MCP content list, {content,
// isError} or, before rmcp, the list alone: the items Goose sends the
// model, so an item whose annotations' audience is the user alone, the
// screen's copy Goose's own tools return beside the model's, is left out
// unless no item is the model's; the exit code is its structuredContent's
// exit_code, else the "Command exited with code N" Goose's shell tool
// ends a failed command's text with, and a result ending "Command timed
// out after N seconds" is cancelled: the tool killed the command,
// platform_extensions/developer/shell.rs), except Goose's own answer to
// a call that never ran, which is denied: "The user has declined to run
// this tool." (the user or a permission rule refused it; older Goose
// wrote it as a plain list, not marked isError) and "Let the user know
// the tool call was skipped in ..." (chat mode; agents/tool_execution.rs).
// A response Goose stored before the message that requested it (a real
// export holds one, 8 s before its request) answers that request: its
// result is written after the call, when the request comes, or at the
// end, where the host makes a call of it, when none does.
// An error item (an error Goose showed in the conversation) is a provider
// error. So are the turns Goose ends on a failed provider request
// (agents/agent.rs): a creditsExhausted systemNotification (code
// credits_exhausted), an inline one beginning "Unable to continue:" (the
// context still too long after compacting: context_length_exceeded), and
// the assistant texts Goose writes in place of an answer, each
// recognised by its whole template: "Ran into this error: E.\n\nPlease
// retry if ..." (message E), "E\n\nPlease resend your message to try
// again." (network_error), "The provider refused this request. ...
// likely to be refused again." (refusal); the text stays a text block.
// toolConfirmationRequest and actionRequired (questions put to the user)
// and a thinking systemNotification are declared ignored; any other
// inline systemNotification and the older conversationCompacted are
// warnings; other items are counted unmapped.
//
// Model: an assistant message's is the one its metadata.inference names
// (resolvedModel, the model the provider answered with, else
// requestedModel; block/goose 865e4a0, conversation/message/mod.rs),
// else the session's model_config_json model_name (the model configured
// last), which is also the step's.
//
// Usage is as Goose states it, for the whole session: the session's
// accumulated counters (input, which counts cached tokens, output, cache
// read and write) and accumulated_cost, set (not added) from each session
// record. Where the total counts tokens beyond the input and output,
// the output is left out with a warning: Goose's Google format
// (providers/formats/google.rs get_usage) counts a call's output as the
// answer's tokens (candidatesTokenCount) and its total as the API's
// (totalTokenCount), so a thinking Gemini model's thoughts are in the
// total alone and every output token is not stated (as for the
// stream's complete event and an export; TestCountersThoughtsUnstated). The plain counters (total_tokens, input_tokens,
// output_tokens) are the last model call's: Goose overwrites them with
// each call's usage (update_session_metrics), and an older Goose (its
// session files before the accumulated counters) kept only those. A
// record without accumulated input or output so states no session usage:
// none is reported, and a warning gives the last call's figures.
// Goose keeps no usage per message. A session whose parent_session_id is
// set (a sub-agent's) is a child run of its parent's run (the host links
// them, abi.SQLiteSource's "parent" column) and says so in a warning.
// Sub-agents' tokens count once. Since sub-agents have sessions of their
// own in sessions.db (subagent_handler.rs: create_session, then the
// sub-agent's reply with a SessionConfig naming that session), each
// model call's usage is added to the counters of the session whose reply
// made it (update_session_metrics(session_config.id, ...) in
// reply_parts.rs, agent/reply.rs), so a parent's counters and cost hold
// its own calls only, and the usage reports add the child runs' to them
// (Goose's own client sums a parent and its sub-agents the same way:
// block/goose#7359). Goose's stated cost is the session's own, not
// Claude Code's process total (views.StatedCostCountsSubRuns is false
// for goose). Before sessions.db (session files, mid-2025) a sub-agent
// had no session: its calls were added to the parent session's file
// counters (session/storage.rs update_session_metrics_subagent, called
// from agents/subagent.rs with the parent's SessionConfig), so they are
// in the parent's run, once; a sub-agent run without a parent session
// stored its usage nowhere, which no store can give back. The
// store is a session log (no terminal event): the host derives the
// status. A store read in the middle of a turn (`twasm sync` reads it
// while Goose writes) cannot be told from a finished one beyond that
// rule: a message row marks no finish (its metadata holds only who sees
// it), the session row no turn's end. (Goose's input counts cached tokens: its providers build usage
// with Usage::from_cache_exclusive_input.) The goldens were written from Goose's source (session_manager.rs,
// conversation/message.rs): no public capture of a Goose store was found.
// The stream-json goldens (testdata/golden/goose/stream_json_*) are
// written by hand too: the format from goose-cli's session/mod.rs as
// peers' notes on it describe it, the events' shapes after two peers'
// tests that quote real Goose 1.25 and 1.44 output (unlicensed: read,
// not copied, as the commit that added them says).
// testdata/captures/goose holds three real messages of a session file of
// April 2025 (a prompt, an MCP tool call and its response, the list
// alone), which a peer's test quotes (the file's metadata line is not
// quoted), and two real session exports of April 2026 (Goose with
// developer, todo and an MCP server's tools).
//
// Copies. copy_session (goose session --resume --fork, the desktop's
// Duplicate, and its fork of a session at an edited message) creates a
// new session, then writes the original's conversation into it as it
// was: each message keeps its message_id and created_timestamp, and the
// token counters are not copied (block/goose session_manager.rs,
// copy_session and replace_conversation). Those turns and calls are the
// original session's, which its own run holds: a message created in a
// second before its session was (the row's created_at, UTC) is declared
// ignored as "(forked history)", so the copy's run holds only what it did
// itself, and its usage, its own counters, was never the original's. Only
// a session create_session named ("<date>_<n>") is read so: a session
// imported from a session file of Goose before sessions.db
// (import_legacy_session) is named by the file and dated by its creation,
// else its last change, which may follow its messages. An export
// imported back (import_session) is dated now but carries the exported
// session's counters: beside the original, its tokens count in both
// runs, and nothing in the row says it was imported.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the
// session's working_dir; Goose names no repository root.
//
// keys (sdk.Plugin.Keys) lists every object key the normalizer reads, so
// that the host marks them in its tapes and Get matches them by number
// inside the sandbox; TestKeysCoverGets keeps the list complete. A line's
// object and a messages row are read in one pass each (abi.Value.Lookup
// of lineKeys, rowKeys; TestLookupKeysDeclared keeps them in keys).
package goose
