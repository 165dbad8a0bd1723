// Package gemini is the twasm normalizer for the Google Gemini CLI. It is a
// plain Go package (tests, fuzzing and the native baseline run it through
// sdk.Plugin.Driver); plugins/gemini/wasm is the two-line WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/gemini/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
// The format is detected from the shape of each document:
//
//   - stream-json (gemini --output-format stream-json): one event per line,
//     init, message (user, or assistant deltas), tool_use, tool_result,
//     error, result.
//   - json (--output-format json): one object {session_id, response,
//     stats}, pretty-printed over many lines, or {session_id, error} on a
//     fatal error.
//   - session-file (~/.gemini/tmp/<hash>/chats/session-*.json): one
//     document {sessionId, messages[]}, usually pretty-printed; the JSONL
//     variant of newer builds (a header record, then one message record
//     per line) is read record by record. A sub-agent's chat (0.37 and
//     later, chats/<session id>/<sub-agent id>.json, then .jsonl; its
//     header's kind "subagent") is the same format.
//
// Pretty-printed JSON is reassembled by the SDK (sdk.Plugin.Reassemble): a non-JSON line
// that opens an object or array starts an accumulation that ends when the
// brackets balance (the text is then indexed) or when an unindented JSON
// line arrives (the accumulated lines are then counted as "non_json"). Events
// made from a reassembled document carry the raw line on which it closed;
// the document's lines are declared ignored (accounted for by it).
//
// # Decisions
//
// Messages (stream-json). Assistant text arrives only as delta chunks;
// consecutive deltas are appended to one text block. An assistant message
// spans everything the model emits until the next tool_result, user
// message, error or result event: the CLI runs tools only after the
// model's response has ended, so the first tool_result marks the end of
// the response that requested the calls. A message therefore holds its
// text and then its tool_use blocks (parallel calls included), in the
// order they arrived; text that follows a tool_use inside the same
// response becomes a second text block. No capture shows an assistant
// message without delta:true; should one come, it replaces the text block
// when it starts with the text streamed so far (a snapshot), and is
// appended otherwise (a chunk), so text is neither repeated nor lost. The
// stream has no message ids; keys are synthetic.
//
// Deprecation notice. The "--prompt (-p) flag has been deprecated" notice
// that 2025-12 builds streamed as an assistant delta (and that can appear
// as a plain stdout line) is the CLI talking, not the model: it is kept out
// of the text and counted as unmapped "deprecation_notice" (it stays in the
// raw capture).
//
// Tools. tool_use is a tool.call (and a tool_use block) keyed by tool_id;
// tool_result is its tool.result. tool_result.output is the CLI's display
// string, not the tool's return value: it is recorded as it is, "" when
// empty and absent when the CLI omitted it. The CLI marks a shell command
// that ran "success" whatever it returned, and displays its output; only a
// command that printed nothing displays how it ended (shell.ts): "Command
// exited with code: N" is then an error with exit code N, "Command
// terminated by signal: S" an error, "Command cancelled by user."
// cancelled (a failed command that printed something cannot be told from
// a successful one in the stream). Result statuses are the
// spec's words: "success" is ok; "error" is error with error.message; a
// "cancelled" call is denied when the CLI says the user refused it ("User
// did not allow tool call") and cancelled otherwise (an abort, "User
// cancelled tool execution"); a call the CLI refused to run, its
// policy engine or a BeforeTool hook (stream-json error.type
// "policy_violation"; the error "Tool execution denied by policy.",
// 'Policy denied execution of tool "X".' or "Tool execution blocked:
// <reason>", in stream-json and session files), is denied; anything not
// ok carries error text. The CLI writes a call it cancelled "success" too
// (only a call whose status is error is written "error"), and a run the
// user cancels ends at the next model call with the result of
// FatalCancellationError, right after the results of the calls it
// cancelled: a batch's results are therefore reported at the next event
// (their raw_line is that event's), and when that event is the
// cancellation, the batch's ok results are cancelled ("the run was
// cancelled right after this call"); a failed one stays an error. Kinds: run_shell_command → execute (with its
// command); read_file, read_many_files, list_directory → read; write_file,
// replace, edit → edit; glob, search_file_content, grep → search;
// web_fetch, google_web_search → fetch; update_topic, write_todos,
// save_memory → think (they record the agent's plan, not an action);
// everything else (MCP tools) → other. A call without a result stays
// dangling. Session files carry the real return value
// (functionResponse.response.output, or .error, of the parts that name
// the call: some builds write in each call of a response the responses
// of all its calls, each naming its own), with the same statuses,
// except that a shell call (run_shell_command) whose output or error
// states "Exit Code: N" on a line of its own (the CLI's trailer, after
// the command's output: the last such line) has that exit code, and a
// non-zero one makes a call the CLI marked "success" an error, "exit
// code N: <the Error: line, else the output's last line>" (spec §4);
// calls saved while still scheduled, executing or awaiting approval have
// no result. JSONL session files append a record again when it
// changes: a record whose id was seen only adds the tool results it now
// has. A call id reused after its call's result (model servers make ids
// unique per response, not per session: a local one behind a proxy names
// every call call_1) is a call of its own with a result of its own: a
// result is reported once per call of a record (by the record's id and
// the call's), so a record written again, or a whole document read
// again at the next turn, adds no second result to the first call and
// never gives an earlier record's result to the later call; the host
// tells the calls apart by their records' messages (a record without an
// id keys its calls by their ids alone). In stream-json each tool_use
// and tool_result is reported as it comes: the host pairs a reused id
// with its own call (the response that reuses it is another message),
// keeps one result per call, and keeps the first call of a repeat before
// its result. JSONL files' {"$set": {...}} patches (lastUpdated,
// summary, sessionId) are ignored, except for the history one sets
// (messages): the history the CLI sends the model from then on, written
// when it rewrites it (the session's start, a /rewind, a /compress or an
// automatic compression).
// A rewrite is not conversation: a message whose id was seen is not
// reported again, nor is a copy under a new id of a message reported (a
// compression keeps the recent turns so: the same type and text, and
// every call or call result in it reported). The rest is history the CLI
// wrote (its <session_context>, a compression's <state_snapshot> summary
// and its canned reply "Got it. Thanks for the additional context!"):
// one message.user of injected context holds it, never a prompt or an
// assistant message, and when turns were recorded before, a warning says
// the model's view was rewritten: compressed when it keeps turns under
// new ids or writes a summary (the turns it replaced stay in the
// transcript), else rewritten (a resumed session's new context). A /rewind's {"$rewindTo": id} marker is a warning (the
// CLI drops that message and the ones after it from the history it
// sends the model; the transcript keeps them); another "$" patch this
// plugin does not know is counted unmapped by its name ("$patch"), never
// read as conversation. A user record or a message written again is
// reported once. A second header naming the same session is ignored;
// one naming another session (two sessions in one file) is a warning,
// and its records are read into the same step.
//
// A history written again (replay.go). GeminiChat.setHistory, given
// messages without ids (a checkpoint's history on /chat resume, a tool
// call's checkpoint on /restore, a history the CLI masked, trimmed or
// compressed), records each as a message of its own under a new id
// (recordSyntheticMessage, since google-gemini/gemini-cli 055e0f6: a
// user or gemini record, the model's without model or tokens, its
// content the message's parts), then the $set patch of that history.
// Those records are no turns of the session: a user record that opens
// with the session context or a compression's summary starts such a
// history, and so does a gemini record without model whose content is a
// list of parts (the CLI records an answer with its model and its text);
// the user and such gemini records after it belong to it until the $set
// patch or a record of another kind. A record of it that repeats a
// message already reported (its type and text, every call in it reported;
// a user record of nothing but results of reported calls) is that
// message, declared ignored; the others (another session's checkpoint, a
// summary) are history the CLI wrote, each a message.user of injected
// context; a warning counts both. A resumed session's prompts, answers,
// calls and tokens so count once, and a checkpoint of another session
// resumed in this one adds none of its turns here. A history written
// again that opens with neither (none the CLI writes today) is read as
// before: its user records as prompts.
//
// Sub-agents (spec §6.10). The CLI runs a sub-agent as one tool call of
// the parent: delegate_to_agent {agent_name, objective, ...} (builds of
// early 2026), invoke_agent {agent_name, prompt} (0.39 and later), or a
// tool named after the agent (codebase_investigator, generalist, or any
// tool whose result, known at the call in a session file, is a
// sub-agent's report "... finished.\nTermination Reason:").
//
// Since 0.37 (google-gemini/gemini-cli 104587b, 2026-03-26) the CLI
// writes each sub-agent's conversation to a chat of its own
// (ChatRecordingService of kind "subagent": chats/<the session's full
// id>/<the sub-agent's id>.json, .jsonl since 0.39, f744913), whose
// header states its own id (sessionId, the file's stem), kind
// "subagent" and the workspace's directories, and names no parent: the
// directory does. Since 0.39 (7d1de3b, 2026-04-10) the parent's record of
// the call states that id (toolCalls[].agentId, from the invocation's
// result data); the call is recorded once it completed, with its result.
// The parent's tokens are its own model calls' only: the sub-agent's are
// in its chat. The store declares both (abi.Store.SubAgents
// "{stem}/*.{json,jsonl}", SubAgentsKey "/sessionId" with prefix 8: the
// session's own file is named session-<time>-<the id's first 8
// characters>; SubAgentCalls toolCalls/agentId/id), so the host archives
// a sub-agent's chat as a child run of its session's run, linked at the
// call whose record names it, its turns and tokens counted once, in the
// session's totals (a chat synced while its call ran, before the record,
// is linked at the session's latest part, then archived again at the
// call by the sync that finds the session's run holding it, superseding
// the first: Entry.LooseAt in internal/archive). Such a call (its record states an agentId) opens no
// scope: the chat's run is the child. A call whose record names no agent
// (builds before 0.39, a stream) opens one, as follows; a run an older
// twasm made of such a scope is superseded by the chat's run when the
// host links the chat at its call.
//
// Before 0.39 nothing names which call started a chat, so the scope
// stays beside it. In 0.37 and 0.38 (local-executor.ts at v0.38.2:
// agentId six random characters, line 312; the executor's context
// promptId that id and parentSessionId the session's, lines 129-130;
// chatRecordingService.ts lines 178-237: the chat chats/<session
// id>/<agentId>.json, its header stating the agentId as sessionId and
// kind "subagent") the host links the chat at the session's latest
// part, and the call's scope is a second child holding its prompt and
// answer (its tokens are the chat's only: counted once). Nothing ties
// the chat to the call: the call's id reaches the executor
// (parentCallId, from the tool call's context, line 275) but only the
// scheduler's requests for the sub-agent's own tool calls carry it
// (scheduler.ts line 319), and GeminiChat.recordCompletedToolCalls
// (geminiChat.ts lines 1029-1055) records a call's id, name, args,
// result, status, timestamp, resultDisplay and description, not it; the
// parent's record of the call states no agentId (from 0.39 on it does:
// geminiChat.ts line 1053 at v0.39.0), and its result and resultDisplay
// (SubagentProgress: agentName, recentActivity, state, result,
// terminateReason; each activity's id randomUUID(), local-invocation.ts
// lines 144, 170, 249 and 344) name nothing of the chat, which names
// neither the agent nor the call. Its first user message is the agent's
// query template filled with the call's arguments (local-executor.ts at
// v0.38.2 line 597: templateString(promptConfig.query,
// augmentedInputs), else DEFAULT_QUERY_STRING, "Get Started!"): the generalist's "${request}" states the call's request
// as it is, but codebase_investigator's wraps the objective in its own
// words and an agent without a query states nothing of the call, so the
// prompt match the Kimi CLI's sub-agents are linked by
// (abi.Store.SubAgentPrompt: equal strings, in a JSON Lines file's
// first records) does not hold for them, and these chats are
// pretty-printed JSON documents besides; only times (the chat's
// startTime between the call's message and its record) would tie the
// rest, which is not a link to rely on.
// In 0.31 to 0.36 the sub-agent's GeminiChat recorded under the
// session's id (chatRecordingService.ts line 140 at v0.31.0:
// config.getSessionId(); at v0.36.0 line 174, the caller's promptId,
// which local-executor.ts line 124 keeps the session's), so its chat is
// chats/session-<UTC minute>-<the id's first 8 characters>.json beside
// the session's (chatRecordingService.ts lines 180-187 at v0.34.0: the
// session's own file name when the sub-agent starts in the minute the
// session's chat was made, the two then writing one file in turn),
// stating the session's own id and kind "subagent": the host, which
// keys a file's sub-agents by a directory or by a member without a
// condition (abi.Store.SubAgentOf), cannot tell it from the session's
// file, and archives it as a run of its own. Every chat of kind
// "subagent" says in a warning that it is a sub-agent's, not a user's
// session (sessionMeta); one written as a whole JSON document (every
// chat before 0.39: JSON Lines came with f744913 in 0.39, the agentId
// with 7d1de3b) says too that the call that started it cannot be
// named, one of JSON Lines that its session's record of the call names
// it.
// Otherwise its own turns are in neither the stream nor the session
// file, so its child run holds what the call states: the scope opens at the call,
// linked to it and named after the agent, with the objective (else its
// first other text input, else its inputs as JSON) as its message.user;
// the call's result closes it, its text after "Result:" as the child's
// answer, and its status: the call's when the call failed (denied counts
// as cancelled: it never ran), else the "Termination Reason:" the output
// states (GOAL ok; ABORTED, TIMEOUT cancelled; ERROR, MAX_TURNS and any
// other reason error). A call that never got a result leaves its scope
// incomplete at the end of the input. The parent keeps the call and its
// result as for any tool. A scope is opened once per call: a session
// record appended again or a document read again opens none (the call is
// known by its record and id), nor does a stream's tool_use repeated
// while its scope is open; a sub-agent call that reuses the id of an
// earlier one (ids unique per response, not per session) opens a scope
// of its own, named by the id and a number (call_1#2, call_1#3, ...),
// which its own result closes. A stream's scope is forgotten at its
// close (a count per id names the next), so a stream whose calls keep
// reusing an id keeps bounded state (TestPluginMemoryFlat); a session
// record's is kept, as its record may be read again.
//
// Status. result is the terminal event: status "success" is ok; a
// cancellation (error.type FatalCancellationError, "Operation
// cancelled.": the user stopped the run) is incomplete, "the run was
// cancelled (Operation cancelled.)"; anything
// else an error whose text is error.message, else the message of the last
// error event, else "gemini result status <s>". Gemini 0.44 often ends a
// complete answer with an error event and a result with status "error" and
// no error object: the step is an error, because that is what the CLI said
// (and what its exit code says), but the streamed answer is kept as the
// final text and a warning notes it. error events are non-fatal: severity
// "error" is reported at sdk.LevelError (a later result decides the step),
// severity "warning" becomes a warning. Two decide it, since the CLI
// writes them when it stopped the run itself and follows with a result
// "success" (stopOf): "Maximum session turns exceeded" (severity error),
// when the client's session turn limit stops a run
// (GeminiEventType.MaxSessionTurns, the agent session's agent_end with
// reason max_turns), and "Loop detected, stopping execution" (severity
// warning), when its loop detection finds a loop a second time in the
// prompt and ends every later turn (GeminiEventType.LoopDetected;
// google-gemini/gemini-cli client.ts, nonInteractiveCli.ts and
// nonInteractiveCliAgentSession.ts at 5411f11, 2026-08-21): the run
// stopped before its work was done, an error (as Claude Code's max_turns
// is) with the event among the step's errors, and so is a json object
// whose warnings hold either. A result "success" whose run's last request
// to the model (the prompt, or its calls' results) got no answer (no
// assistant message or call after it), and a json object whose response
// is "" (the text of the run's last turn) with no error, are errors too:
// the CLI ends its loop with a success on a turn that yields nothing,
// which happens when it did not call the model, the request being
// about to overflow the context window (client.ts processTurn yields only
// ContextWindowWillOverflow, which nonInteractiveCli.ts does not read;
// the chat file records nothing of the request), or a hook stopping the
// run (a BeforeAgent hook's "Agent execution stopped: ..." among the json
// object's warnings, a tool result of error type stop_execution: named
// in the error); a model's empty answer is an InvalidStream, an error
// result of its own. The agent session's run throws the overflow as a
// fatal error ("Context window will overflow ..."), a result "error".
// A stream with no result is
// incomplete. The json object is terminal: ok, or error with its error
// object (incomplete for a FatalCancellationError, as in a stream). A session file has no terminal record by design (it is the whole
// record): it is reported NoTerminal, and the host settles its status by
// the session rule of spec §6.7 (error when an "error" record came after
// the last answer, incomplete when it ends on a call without a result or
// on a prompt without an answer, else ok), as for every session log.
// The CLI records every error it shows as an error record
// (useHistoryManager: a history item of type error), a slash command's
// usage ("Please provide a file path to export the session to") as well
// as a turn's API error: one that comes after an answer (a gemini record
// with text and no calls) with no prompt or call since (a shell-mode
// record starts no turn) is about no turn, a warning; any other is the
// session's error, as before. A
// session file read in the middle of a turn has nothing more to tell
// it by: the CLI records a gemini message whole once its stream ended
// (its thoughts with it), a call once it completed, and no turn's end.
//
// Final text size. The stream's answer is copied (from its deltas) for the
// final text, and that copy is cut at 1 MiB on a UTF-8 boundary with a
// warning: the message itself keeps every byte (the deltas go to the host
// as they come), and neither the plugin's memory nor the output of the
// call that reports the result grows with the answer (the host takes at
// most 8 MiB a call: a final text that size would lose the result).
//
// Final text. The text of the last assistant message that had text (for
// json, the response field). It is reported for incomplete streams too.
//
// Usage. The usage figures follow the transcript's rules: input_tokens
// counts cached tokens. stream-json result.stats: input_tokens, cached →
// cache_read, output_tokens, total_tokens, reported in "set" mode (the
// result is the run's total; summed over stats.models where only those
// are stated). Its output_tokens are the model's candidates only
// (gemini-cli's convertToStreamStats, packages/core/src/output/
// stream-json-formatter.ts at 5411f11, 2026-08: tokens.candidates; the
// stats have no thoughts or tool field), while total_tokens is the API's
// total, thoughts and tool-use prompt included: where the total exceeds
// input + output, the run's output (every output token, reasoning
// included) is not stated, so output_tokens is left out, a warning gives
// the stream's figures, and the usage reports price it as unknown
// (prices: "output not stated"), never as the answer alone. The gap is
// not taken as thoughts: it mixes them with tool-use prompt tokens,
// billed as input. Where the total adds up (a model that did not think)
// or is not stated, output_tokens is kept as stated. The session file of
// the same run (synced later) states each call's thoughts. The
// json stats are summed over stats.models: prompt + tool → input, cached
// → cache_read, candidates + thoughts → output, thoughts → reasoning. A
// session file's per-message tokens (input + tool, cached, output +
// thoughts, thoughts) are the message's usage and are added to the step.
// "tool" is the API's toolUsePromptTokenCount, the prompt of a tool the
// model used (search grounding, code execution), which promptTokenCount
// leaves out and Google bills as input (the API's total is prompt +
// candidates + tool-use prompt + thoughts); the CLI writes it as "tool"
// in its chats and stats, as Qwen Code's usageMetadata keeps it. There is no
// cost anywhere.
//
// Model. init.model, which is often an alias ("auto", "auto-gemini-3"): a
// concrete name learned later replaces an alias, taken from the per-model
// stats (the model in the "main" role, else the only one, else the one that
// read the most input tokens: the router model reads a short
// classification prompt). The json output names models only in its stats;
// session files name one per message.
//
// User messages. The prompt (stream-json user message, session user
// record) is a message.user with origin "prompt"; a part holding the files
// the CLI inlined for @path references ("--- Content from referenced files
// ---"), the CLI's "<session_context>" (the date, the OS, the
// workspace's files), its "<system_note>" on an agent the user picked
// (@generalist) or its record of a command the user ran in shell mode
// ("!cmd": "I ran the following shell command: ... This produced the
// following result: ...", which no answer follows: not a prompt left
// unanswered) has origin "injected_context". A functionResponse
// part (0.46 JSONL files write each tool's result again as a user record
// sent back to the model) is a tool_result block, never the prompt.
//
// Thinking. stream-json never carries thoughts. Session-file thoughts
// become thinking blocks "subject\ndescription", before the message's text
// and tool calls; parts marked thought:true are thinking blocks too,
// unless the record lists its thoughts: builds that write the model's
// response as its parts (thoughts, text, functionCall) state each
// thought in both, once. A functionCall part is the call its record's
// toolCalls state (its tool_use block follows the text), else a tool_use
// block and a tool.call of its own; never text.
//
// Unmapped. Unknown stream-json event types are counted by type;
// session-file records other than user, gemini, error, warning and info
// (the CLI's notices, ignored) as "message/<type>"; text that is not JSON as
// "non_json"; a JSON value that is not an object as "non_object"; the
// deprecation notice as "deprecation_notice". Blank lines are not counted.
//
// # Shared with Qwen Code
//
// Qwen Code is a fork of the Gemini CLI: its chats hold the same parts
// (functionCall, functionResponse, thought), its shell tool writes the
// same trailer, its tools have the same names and statuses. What this
// package knows of them is exported for plugins/qwen, not copied there:
// [ToolKind], [ShellExit], [FailedStatus], [ErrText] and
// [InjectedContext]; plugins/qwen reads Qwen Code's older
// whole-document chats, the Gemini CLI's session file, with [Plugin]'s
// normalizer.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): none: a
// session names its project only by projectHash, a hash of the directory,
// which cannot be turned back into a path.
//
// keys (sdk.Plugin.Keys) lists every object key the normalizer reads, so
// that the host marks them in its tapes and Get matches them by number
// inside the sandbox; TestKeysCoverGets keeps the list complete. A line's
// object is read in one pass (abi.Value.Lookup of docKeys;
// TestLookupKeysDeclared keeps them in keys).
package gemini
