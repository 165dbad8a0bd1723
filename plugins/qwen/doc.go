// Package qwen is the twasm normalizer for Qwen Code (QwenLM/qwen-code, a
// fork of the Gemini CLI). It is a plain Go package (tests, fuzzing and
// the native baseline run it through sdk.Plugin.Driver); plugins/qwen/wasm
// is the two-line WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/qwen/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi and golden; each
// plugins/<provider> package exports its normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
//   - session: a chat, JSONL, one file per session, one record per line,
//     appended to (ChatRecordingService): {uuid, parentUuid, sessionId,
//     timestamp, type, subtype?, cwd, version, gitBranch?, message?
//     {role, parts}, model?, usageMetadata?, toolCallResult?,
//     systemPayload?, agentId?, agentName?, isSidechain?}. type is user,
//     assistant, tool_result or system; message is the Gemini API's
//     Content as it was sent to or came from the model.
//
//   - session-file: the older chat, one JSON document {sessionId,
//     projectHash, messages[]} rewritten at every turn, which Qwen Code
//     kept as the Gemini CLI wrote it. It is read by the Gemini plugin's
//     normalizer (gemini.Plugin), which reads that document: a stream whose
//     first JSON object holds a messages array is handed to it whole, and
//     the step's format is its "session-file". Whether Qwen Code's builds
//     of that time named the model's records "gemini", as the Gemini CLI
//     did, is not known from a public file: records of another type would
//     be counted unmapped by that normalizer ("message/<type>"), never
//     read as conversation.
//
//   - stream-json: the output of qwen -p --output-format stream-json
//     (one message a line) or json (the same messages in one array),
//     written by packages/cli/src/nonInteractive/io
//     (BaseJsonOutputAdapter.ts) in Claude Code's shapes (headless.go):
//     system {subtype init, session_id, cwd, model, qwen_code_version},
//     assistant {message {id, model, content, usage},
//     parent_tool_use_id}, user {message {content}} (the prompt, or
//     tool_result blocks {tool_use_id, is_error, content}), result
//     {subtype, is_error, result, usage, error {message}} at the end;
//     stream_event (partial messages) and control messages are declared
//     ignored. Its usage is not Claude Code's: input_tokens is
//     promptTokenCount, every input token with cache_read_input_tokens
//     of them read from the cache (createUsage,
//     computeUsageFromMetrics), so it is the step's input as stated, the
//     cache inside it; a total_tokens above input and output holds
//     thoughts beside the candidates (usageOf), added to the output as
//     its reasoning. One response's blocks are split over several
//     messages of one kind of block each, its usage on the last (the
//     others state zeros): each message's usage is added, and the result
//     message's, the run's over every model call, sub-agents' included,
//     replaces the sum. A message with parent_tool_use_id is a
//     sub-agent's: a scope opened at its first message, closed by the
//     agent call's result. The last result message decides the status
//     (a sub-agent's failure is a result message too, before it): error
//     when is_error, with error.message; a stream cut before it is
//     incomplete. The API errors Qwen Code writes into the answer's text
//     ("[API Error: ...]") stay text; the result says the run failed.
//
// A chat has no terminal record: it is reported with NoTerminal and the
// host settles its status by the session rule of spec §6.7 (error when a
// provider error came after the last answer, incomplete when it ends on
// a prompt without an answer or on a call without a result, else ok).
// A chat read in the middle of a turn (`twasm sync` reads chats Qwen
// Code still writes) has nothing more to tell it by: an assistant record
// is written whole once the model's response ended, and the file marks
// no turn's end; so only those cases are incomplete (a log ending on a
// call's result reads ok, as the spec's rule has it, though the model
// may still be answering).
//
// # Decisions
//
// Messages. A user record is the prompt (its text parts; a part holding
// the files the CLI inlined for @path, "--- Content from referenced
// files ---", is injected context, and so is a part after the prompt's
// that is wholly a UserPromptSubmit hook's additional context,
// <qwen:user-prompt-submit-context>...</qwen:user-prompt-submit-context>,
// which systemPayload.hookContext repeats; a sole part is the user's); with a subtype (a notification, a
// cron prompt, a background task's completion, an agent's launch prompt)
// it is context the CLI sent in the user's role, a message.user of
// injected context, except mid_turn_user_message, which the user typed,
// and realtime_message, what the user said in a Realtime voice dialogue
// (its answer is an assistant record of that subtype, read as any other;
// Qwen Code keeps the dialogue out of the history it sends its model);
// a system record of one of those subtypes that holds a message is read
// the same way, a realtime_message one by its message's role (model: an
// answer), and one without a message holds nothing of the conversation
// and is declared ignored. Qwen Code's recordRealtimeConversation writes
// the dialogue as user and assistant records only.
// An assistant record is one model call: its parts in order, a thought
// part (thought: true) a thinking block, text a text block, a
// functionCall {id, name, args} a tool_use block and a tool.call. Its
// uuid is the message id. Qwen Code may write one message as several
// records in a row that share its uuid, and reads them back as one
// (SessionService.aggregateRecords: each fragment's parts after the
// earlier ones', the latest usageMetadata): the message is held open
// until a record of another uuid (a ui_telemetry record may come
// between), and each fragment's blocks and calls join it; its usage is
// its latest fragment's that states one. Inline data and file parts are not mapped (no
// block holds them; the raw capture keeps them).
//
// Tools. A tool_result record is the result sent back to the model: its
// functionResponse parts {id, name, response {output | error}} and the
// CLI's account, toolCallResult {callId, status, resultDisplay, error,
// errorType}. The output is response.output (the tool's llmContent; the
// whole response as JSON when it holds neither output nor error). Status
// success is ok; error is an error with response.error (else the
// account's error, its display, the output); cancelled is denied when
// the text says the user refused the call ("User did not allow tool
// call"), else cancelled, and an error whose text is the Gemini CLI's
// policy refusal ("Tool execution denied by policy.") is denied
// (gemini.FailedStatus), and so is an error Qwen Code wrote for a call
// it refused to run (errorType execution_denied, or its text: 'Qwen Code
// requires permission to use "X", but that permission was declined.',
// "is not listed in the active core tools allowlist", plan mode's
// block; refused), in the chats and in stream-json's tool_result alike; a response holding an
// error without a status is an error. A shell call (run_shell_command)
// states its exit code after its output as the Gemini CLI does ("Exit
// Code: N"): it is the result's exit code and a non-zero one makes a call
// the CLI marked success an error (gemini.ShellExit); a command that timed
// out or that the user cancelled ("Command timed out after", "Command was
// cancelled by user") is cancelled. A functionResponse part in a user
// record (a peer's test data writes results so) is read the same way. A
// second result for a call is not reported again; a call naming the id of
// a call that has its result is a new call with a result of its own
// (model servers make ids unique per response, not per session: a local
// one names every call call_1). Calls are kept by scope and id: a
// sidechain sub-agent's call (below) that reuses the id of a call of the
// session waiting for its result is a call of the sidechain's scope,
// answered there, and the session's result answers the session's call.
// Kinds: the Gemini CLI's
// tool names (gemini.ToolKind: run_shell_command execute, read_file and
// list_directory read, edit and write_file edit, glob and grep_search
// search, web_fetch and web_search fetch), Qwen Code's task-list and plan
// tools (todo_write, task_create, task_update, task_list, task_get,
// exit_plan_mode) think, lsp read, others (agent, skill, MCP tools) other.
//
// Sub-agents (spec §6.10). A call of the agent tool (task before it was
// renamed) runs a sub-agent: {description, prompt, subagent_type}. Its
// own turns are not in the chat (the CLI empties the display's toolCalls
// before it records the result), so its child run holds what the call
// states: the scope opens at the call, linked to it, named after the
// subagent type and described by the description, with the prompt as its
// message.user; the result closes it with resultDisplay.result (else the
// call's output) as its answer and resultDisplay.status as its status
// (completed ok; failed error, with terminateReason; cancelled
// cancelled; background or running incomplete: the agent went on after
// the call returned). A call that never got a result leaves its scope
// incomplete at the end of the input. The parent keeps the call and its
// result as for any tool. A scope is opened once per call (a call
// repeated while its scope is open is that call): an agent call that
// reuses the id of an earlier one opens a scope of its own, named by the
// id and a number (call_1#2, call_1#3, ...), which its own result
// closes. Records a background sub-agent wrote into the
// chat (isSidechain with its agentId and agentName) go to a scope of
// their own, opened at its first record, named after the agent; their
// usage stays on their messages, not in the step's totals.
//
// Branches. /branch (alias /fork; SessionService.forkSession) writes a
// new chat file holding the conversation so far: each copied record keeps
// its uuid, timestamp and message, takes the new session id, and carries
// forkedFrom {sessionId, messageUuid} naming the session and record it
// was copied from; the records the branch adds (its source, a title,
// file-history snapshots) and everything after carry none. The copied
// turns, tool calls and tokens are the parent session's, which its own
// run holds: a record with forkedFrom is declared ignored as "(forked
// history)", so the branch's run holds, and its usage counts, only what
// happened after the branch (its first record still gives the session id).
//
// Usage. An assistant record's usageMetadata is that call's:
// promptTokenCount is every input token (with toolUsePromptTokenCount
// when stated), cachedContentTokenCount the part read from the cache,
// candidatesTokenCount the output. thoughtsTokenCount is the reasoning:
// inside the candidates when the provider counts it so (the
// OpenAI-compatible APIs most Qwen Code users call: their completion
// tokens hold the reasoning, and totalTokenCount is prompt plus
// candidates) and beside them otherwise (Gemini's API: the total is
// prompt plus candidates plus thoughts); the total says which, and
// without a total the candidates are the whole output. The message
// carries its figures and the step's are their sum ("add"). Qwen Code
// states no cost.
//
// Model and metadata. The first record's sessionId is the session id.
// The step's model is the latest one that answered (an assistant
// record's model).
//
// System records. ui_telemetry records are events the CLI logged for
// /stats: qwen-code.api_error (a failed API call, logged for every
// failed attempt, retried or not) is an error the provider reported
// (its error_message, error in older builds, else its error_type; its
// status code as the code, else the error_type), so a session whose last
// call failed is "error" by the session rule; the others (an API
// response, whose tokens the assistant record states; a tool call, whose
// result the tool_result record states) are declared ignored. A
// chat_compression record is a warning (the token counts before and
// after, the number of messages the model now sees), and the summary
// that opens the compressed history (its summary field in older builds)
// a message.user of injected context; the turns it replaced stay in the
// transcript. A turn_result record (daemon sessions) that failed is an
// error the provider reported (its message and code); one the user
// cancelled a warning. rewind (the CLI dropped turns from the history it
// sends the model; the transcript keeps them), parent_session (a
// sub-session names its parent session: another file, another run) and
// an @ command that failed are warnings. The CLI's bookkeeping (a
// title, a slash command's output, snapshots, the model and approval
// mode it restores, notes, goals, branch checkpoints, managed-session
// records) is declared ignored.
//
// Glued records. A line holding records written one after another
// without their newline (`}{`: an append a killed process cut short,
// which Qwen Code's own reader recovers, jsonl-utils'
// recoverObjectsFromLine) is split into its objects (sdk.GluedObjects),
// each read as a record; what lies outside them is counted "non_json".
//
// Unmapped. Text that is not JSON is counted as "non_json", a JSON value
// that is not an object as "non_object", an object without a type as
// "(no type)", a record of a type not known here by its type, a system
// record of an unknown subtype as "system/<subtype>". A record read
// before byte for byte (a file copied after itself, each fragment of a
// message included) is declared ignored.
//
// # Store
//
// Qwen Code keeps one file per session under its runtime directory
// ($QWEN_RUNTIME_DIR when set, else ~/.qwen; Storage.getRuntimeBaseDir) as
// projects/<the project directory's path, every character but a letter
// or a digit replaced by ->/chats/<session id>.jsonl (sanitizeCwd; the
// first JSONL builds wrote there too, under ~/.qwen): pattern
// "*/chats/*.jsonl" under "projects". The older whole-document chats are
// tmp/<sha256 of the project path>/chats/session-*.json. Qwen Code keeps chats until the
// user deletes them (no retention). The manifest declares both stores
// (abi.Store), so sync and doctor find them without a sync.json entry.
//
// The package uses no reflection and no goroutines; it builds for wasip1
// with Go and with TinyGo. keys (sdk.Plugin.Keys) lists every object key
// it reads; TestKeysCoverGets keeps the list complete.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the first
// record's cwd; Qwen Code names no repository root (its projects directory
// is named by a hash).
package qwen
