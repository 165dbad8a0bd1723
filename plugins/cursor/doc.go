// Package cursor is the bundled normalizer of Cursor's agent transcripts.
//
// # Store
//
// Cursor (the IDE's agent and the Agent CLI) writes one JSON Lines file
// per conversation, ~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl
// (<project> the workspace's path with "/" and "." turned into "-", or a
// window's number, or "empty-window"), its sub-agents' transcripts in
// subagents/<id>.jsonl below it (declared as the store's SubAgents: each is
// a child run of the conversation's run), and, before the per-conversation
// directories, agent-transcripts/<id>.jsonl (the store's pattern,
// */agent-transcripts/**/*.jsonl, takes both). The id is the
// file's name (Cursor's composerId): nothing in the file says it, so the
// plugin asks for the host's facts line (abi.SourceFacts) and takes it from
// there. The project is not read from the directory's name: the encoding
// loses "/", "_", "-" and "." alike (/src/my-app, /src/my/app and
// /src/my.app are all src-my-app), so no path is recovered from it, and
// none is guessed (a peer's reader tries each reading against the file
// system: a directory that exists now is not proof of the one Cursor
// ran in). A transcript's run has no cwd and no project: `twasm ls` and
// `twasm usage --by project` file it under none. The same conversation
// in the IDE's database has its workspace's folder (below), and is
// archived from there when the IDE holds it.
//
// The same id names the conversation in the IDE's state.vscdb
// (composerData:<id>), the plugin's other store, which states more
// (times, usage, model). The transcripts' store is declared keyed
// (abi.StoreSessionKey): a conversation both keep is archived from the
// IDE's database only (the transcript skipped, sync saying so), and a run
// archived from the transcript before the IDE held it is ended,
// superseded by the IDE's (package archive, "keyed file store").
//
// # Records
//
// A line is {"role", "message": {"content": [...]}} and nothing else: no
// type, id, time, model or usage. Roles: user (a prompt), assistant (one
// whole message: text, tool_use {name, input}, thinking where written),
// system (context the harness added: injected context). Cursor leaves
// the model's thinking out of these files and writes "[REDACTED]" in its
// place: after a blank line at the end of an assistant text, or as a
// text of its own where the turn only thought before its calls (a real
// transcript, testdata/captures/cursor, ends every assistant text so;
// peers reading transcripts from ~/.cursor say the same). The marker is
// nothing the model said: a thinking block marked redacted, never text
// or the answer; a text that ends with it without the blank line is the
// model's text as written. A call's id keeps the block's place in the
// line's content, whatever blocks a marker added. Cursor's own
// record {"type": "turn_ended", "status", "error"} ends a turn: "success",
// "aborted" (the user stopped it: a warning) or "error" (a provider error
// with its text).
//
// A user text wraps the prompt in <user_query>...</user_query> (up to the
// last closing tag: a pasted log may hold one); what comes before it is
// Cursor's (a <timestamp>, attached images' notes: injected context), and
// two continuations Cursor writes as queries after a sub-agent's or a
// background task's result are injected context too. A text without the
// tag (a sub-agent's first record, the parent's prompt) is the prompt.
//
// # What the format does not say
//
// The only times are the prompts' <timestamp>, "Friday, May 8, 2026, 6:05
// AM (UTC+5:30)": read to the minute with its offset (none: UTC) as the
// prompt's time; the assistant's messages are undated, and the host dates
// them, as every undated event of a store's file, by the file's
// modification time. No usage, no model, no cost: none is reported (never
// 0). tool_use blocks carry no id: a call's id is cursor-<message>-<slot>,
// the message's number in the file and the block's slot, the same on every
// read. The transcripts keep no tool results (peers' corpora hold none):
// a call stays without one, which is not a failure. A warning says so on
// every run. A tool_result block, should one be written, answers the call
// named by tool_use_id, else the oldest call still without a result, an
// error when is_error; it is never made ok. A tool_use block that does
// carry an id keeps it; no call or result is dropped here by its id, so
// an id reused after its call's result (ids unique per response, not per
// session) is told from the same call again by the host: each record is
// a message of its own, a reused id's call a new call with its own
// result, a result sent again not a second one.
//
// # Status
//
// A session log: a stream that ends on turn_ended has the status it
// states (success ok, whatever its calls' results; aborted incomplete;
// error error). One whose earlier turns end with turn_ended and whose
// last turn has none yet (`twasm sync` read it while the turn ran)
// reports, at its end, a status incomplete below the terminal level:
// "the turn has not finished"; read again once the turn ended, it has
// that turn's status. One with no turn_ended at all (a Cursor that
// writes none, or its first turn still running: the two cannot be told
// apart) gets the host's session rule, under which a call without a
// result leaves the run incomplete.
//
// # The IDE's database
//
// The IDE keeps its conversations in its global state.vscdb
// (~/.config/Cursor/User/globalStorage on Linux, $XDG_CONFIG_HOME first;
// ~/Library/Application Support/Cursor/... on macOS; %APPDATA%\Cursor\...
// on Windows), a store of kind sqlite (IDEQueries, format "ide-rows"): in
// its table cursorDiskKV, composerData:<id> is a conversation, one run,
// and bubbleId:<id>:<bubble> one message, read in the order of the
// composer's fullConversationHeadersOnly (a bubble no header names, or
// one a header names that has no row yet, is not read; one whose row
// holds no record, NULL as Cursor leaves a bubble it cleaned up, empty or
// not a JSON object, is left out with a warning naming it, so that the
// run does not read as whole without it). A composer that another's
// subComposerIds lists is a child run of that one's (the parent column).
// The rows have no time of change: the cursor is lastUpdatedAt with the
// composer's length and bubble count, and a session that moved is read
// whole again; the plugin ignores a row it read unchanged, and reports a
// changed bubble's message again, its call and its result each once, its
// usage counted once.
//
// A bubble of type 1 is the user's prompt, 2 the assistant's message:
// thinking.text, text, and toolFormerData, a tool_use block and a
// tool.call (toolCallId, else cursor-<bubble>; input rawArgs, else
// params) with a tool.result by its status: completed ok (an exitCode
// other than 0 in the result makes it an error), error an error,
// cancelled or aborted cancelled, rejected (or userDecision rejected)
// denied, loading or inProgress no result yet; a terminal's result
// {output, exitCode} gives the output and the exit code. Calls are told
// by bubble and toolCallId: a bubble read again names the call it named
// before, and its result is reported once; another bubble naming a
// toolCallId whose call has its result is a call of its own with a
// result of its own (model servers make ids unique per response, not
// per session: a local one names every call call_1), and one naming a
// call still without its result is that call. The images a user's
// bubble attached (context.selectedImages, else images) follow its text
// as texts naming each ("[image <path>]"): a screenshot pasted with no
// words is a turn of the user's too. A bubble with no text, thinking,
// tool or image is one of the empty states Cursor writes while it
// streams: ignored. The model is the bubble's modelInfo.modelName,
// else the composer's modelConfig.modelName ("default", Cursor's Auto,
// is none); usage is tokenCount, per message and added to the step once
// per bubble, when it is not {0, 0} (Cursor wrote zeros where it did not
// count). Cursor states no cost. A message's time is its bubble's own:
// createdAt, else (the bubbles an older Cursor kept inline have none) its
// timingInfo's epoch milliseconds, an answer's clientEndTime (then
// clientSettleTime, clientRpcSendTime, clientStartTime: when it was
// whole), a user's clientStartTime first (when it was sent); a value
// below 10^12 (a relative clock) is none. A bubble stating no time is
// dated by the host from its row (the composer's createdAt for an inline
// one).
//
// The working directory comes from the workspace map (table
// "workspace", ABI 1.7 related databases): each workspace's own
// workspaceStorage/<hash>/state.vscdb lists its composers (ItemTable
// composer.composerData, allComposers[].composerId) and workspace.json
// beside it names the workspace. The host reads them read-only (it still
// refuses ATTACH) and hands a composer's rows before its own. A folder
// workspace's folder, a local file URI, is the run's cwd (the first, if
// two workspaces list the composer); a multi-root workspace
// ({"workspace": a .code-workspace URI}), a remote folder or a missing
// workspace.json names no one directory: the cwd is left unset, never
// guessed, and the row is ignored with its reason. No project (a
// repository root) is stated: the index takes the cwd.
// Not read: composerHeaders, newer Cursors' index of the composers
// (a table composerHeaders {composerId, workspaceId, createdAt,
// lastUpdatedAt, value: the header's JSON} in the global database, where
// peers' readers look it up in sqlite_master before they query it, and
// ItemTable's composer.composerHeaders {allComposers} before it), whose
// subagentInfo names a sub-agent's parent. The store's queries are fixed
// in the manifest and a query naming a table an older database lacks
// would fail for every session; subComposerIds serves for sub-composers.
// Duplicates and forks (issue 28, open): a composer the user duplicated,
// and a sub-agent Cursor forked with its parent's conversation, are
// composers of their own, each one run, holding the bubbles they were
// given. Which bubbles a copy holds, under which ids and with which
// tokenCount, is in no public database or reader (the Cursor CLI's chat
// stores name a sub-agent's parent in their meta's subagentInfo
// {parentAgentId, rootParentAgentId, toolCallId, typeName}, peers show,
// but that is another store): a copied bubble's usage may count in both
// runs, and nothing here tells it apart.
// A conversation that is in both stores (the IDE writes turn_ended
// records to agent-transcripts/ too) is archived from the IDE's database
// only (the transcripts' store is keyed, above).
//
// # An older Cursor's workspace databases
//
// Before the global database held them (Cursor of 2024 to early 2025),
// the IDE kept each workspace's conversations inline in the workspace's
// own workspaceStorage/<hash>/state.vscdb, table ItemTable: the plugin's
// third store (kind sqlite, WorkspaceQueries, the same "ide-rows"
// format). composer.composerData's allComposers[] are the composers,
// each with its bubbles in conversation[] ({type 1 or 2, bubbleId,
// text}, read as the global database's bubbles are; no usage or model
// in them, and times only where a bubble has timingInfo: the run is dated
// by the composer's createdAt), and
// workbench.panel.aichat.view.aichat.chatdata's tabs[] the older chat
// tabs, each with its bubbles[] ({type "user" or "ai", id, text, an
// answer's rawText and modelType, its model: the latest answer's is
// the run's}; no time but the tab's lastSendTime, the run's date). Each composer holding a conversation
// and each tab holding bubbles is one session (keyed by composerId or
// tabId), its rows the table "composer" (one row: the composer with
// its conversation) or "chattab" (the tab). The empty bubble a tab ends
// on (the input box's draft) is ignored as an empty bubble. A
// composer's inline bubble is read as the global database's are, its
// toolFormerData a tool call should one be there; the real database of
// November 2024 holds none (its composers' answers keep their code
// blocks in the text, and a chat tab has no tools). The workspace.json beside the
// database names the workspace (the related table "workspace" on the
// database itself): a folder workspace's folder is the run's cwd, as
// for the global database's composers. The store is keyed
// (abi.StoreSessionKey): a composer a newer Cursor moved into its global
// database under the same id is archived from there only, and a run
// archived from the workspace database before is ended, superseded by
// that one, or, when it had ended already, named by that one's start as
// the run it holds again (package archive, "keyed"). The host reads a
// session's rows one session at a time, so a workspace's composers cost
// a read of its whole document each: the session's element is found by
// its text and parsed alone, else the document read as JSONB once
// (workspaceItem; 1.7 against 6.5 CPU-ms a session over 400 composers,
// BenchmarkWorkspaceSession), but the document is still read once per
// session. A workspace database of a newer
// Cursor, whose composer.composerData lists composers without their
// conversation, holds no session of this store; a database there
// without ItemTable (not VS Code's) is one this store cannot list: sync
// says so, as for any database it cannot read.
//
// # Stream
//
// `cursor-agent --print --output-format stream-json` (stream.go) writes
// one event a line, each with its session_id: system {subtype init,
// apiKeySource, cwd, model, permissionMode}, user {message {role,
// content}}, thinking {subtype delta (text) | completed}, assistant
// {message {role, content [text]}}, tool_call {subtype started |
// completed, call_id, tool_call {<kind>ToolCall {args, result}}} and
// result {subtype, is_error, result, duration_ms, request_id, usage
// {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens}} (the
// shapes of Cursor's CLI documentation and of the lines peers keep from
// it, and three real runs: see Captures). It is a step with a
// terminal event: the result (success without is_error ok, else an
// error with its result text), none when the stream was cut
// (incomplete). The init names the session, the model and the working
// directory. A user line is the prompt, read as a transcript's user
// line. Thinking deltas are one thinking block, written at their
// completed event (or at the next event). An assistant line is a segment
// of the answer (the text between two calls); with
// --stream-partial-output each segment comes as deltas (timestamp_ms, no
// model_call_id), then again whole (model_call_id), and the turn's text
// again at its end (neither): a segment is written once, from its whole
// re-send, else from its deltas, and a re-send of what was written adds
// only what it holds beyond it. A tool_call is a message holding its
// tool_use block and its tool.call at started (or at completed when
// started was not read), named by its kind less "ToolCall" (shell, read,
// edit, grep...; an MCP call by its tool's name), kinds as elsewhere
// (shell execute with its command); its result at completed, from the
// result's outcome member (a protobuf oneof: its first member named for
// a known outcome or whose value is an object or a string, whatever the
// members' order; flags beside it, such as the isBackground that
// cursor-agent writes after it, are no outcome): success and its
// variants (complete, registered, startSuccess, saveSuccess,
// discardSuccess) are ok with their output (a shell's interleavedOutput,
// else stdout and stderr; a file's content; an edit's diffString or
// message; an MCP call's texts; else its JSON), but a shell's non-zero
// exitCode an error "exit code N"; rejected is denied with its reason;
// approved, async, stillRunning and needsConfirmation leave the work
// undone: a warning, and the call stays without a result; any other
// (failure, error, timeout, spawnError, fileNotFound, ...) an error with
// its error, message or stderr (a string outcome is its own error text);
// a completed call whose result has no outcome is a warning and stays
// without one. The result's usage is the run's (inputTokens the
// uncached prompt: an example states 3705 in and 7040 read from the
// cache). A transcript's facts line before a stream (twasm import of a
// saved output) gives the session id only when the stream names none.
//
// # Captures
//
// No public repository with a licence holds a real agent transcript or a
// real global state.vscdb: the goldens and captures of those are written
// from peers' notes, parsers and test records of the formats (said in
// each .source.txt). An older Cursor's real workspace database (MIT,
// slevin48/cursor-history, November 2024) gives the ide_workspace_*
// captures, the rows as the host hands them; three real stream-json runs
// of cursor-agent (MIT, reifying/cursor-hack, February 2026) give
// stream_json_parallel_shell (two shell calls in parallel, each result
// {"success": {...}, "isBackground": false}), stream_json_sequential_shell
// (two in sequence after a long thinking) and
// stream_json_task_prompt_shell_instead (a sub-agent asked for, the shell
// run instead; the result's text is the two answer segments run together,
// not a third). The IDE goldens are the raw captures twasm sync wrote of
// a state.vscdb built from such records (TestSyncCursorIDE's, a second
// sync after a call's result and an answer were written).
//
// keys (sdk.Plugin.Keys) lists every object key the normalizer reads, so
// that the host marks them in its tapes and Get matches them by number
// inside the sandbox; TestKeysCoverGets keeps the list complete.
package cursor
