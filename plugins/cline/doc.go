// Package cline is the twasm normalizer for Cline's task folders, and
// for Roo Code's, which share their shape, and for the machine-readable
// output of the Cline CLI and of Roo Code's CLI. It is a plain Go package
// (tests, fuzzing and the native baseline run it through
// sdk.Plugin.Driver); plugins/cline/wasm is the two-line WebAssembly
// entry point. [Plugin] is the package's public face, as for every
// plugins/<provider> package.
//
// # Stores
//
// A task is a folder, so the manifest declares folder stores (ABI 1.4,
// abi.Store kind "folder"): Cline's ~/.cline/data/tasks/<id>/ (the CLI,
// and the extension since it moved there; $CLINE_DATA_DIR, else
// $CLINE_DIR/data), the VS Code extension's global storage
// (saoudrizwan.claude-dev/tasks/<id>/ under VS Code, Cursor, VSCodium and
// Windsurf, per OS), the newer ~/.cline/data/sessions/<id>/ with
// <id>.messages.json ($CLINE_SESSION_DATA_DIR), Roo Code's
// rooveterinaryinc.roo-cline/tasks/<id>/, and Kilo Code's
// kilocode.kilo-code/tasks/<id>/ (provider "kilocode": its extension
// before the rewrite on Kilo CLI, a fork of Roo Code keeping the same
// folders; Kilo CLI's database is the opencode plugin's). No retention: a task is kept
// until the user deletes it. The host reads a folder's files in the
// declared order (ui_messages.json, api_conversation_history.json or
// <id>.messages.json, task_metadata.json, Roo's history_item.json),
// each after a file line (abi.SourceFile), each JSON document compacted
// to one line; the facts line names the folder, whose name is the task
// id (the session id).
//
// # Format "task"
//
//   - api_conversation_history.json: the conversation as the model saw
//     it, an Anthropic MessageParam[] with Cline's ts (epoch ms, newer
//     versions), modelInfo {modelId, providerId, mode} and metrics.
//     Assistant content: text, thinking (a signature without text is
//     redacted), redacted_thinking, Roo Code's reasoning ({text,
//     summary}, or {summary, encrypted_content}: thinking, withheld when
//     only encrypted; 3.31.2 kept the encrypted one as an item of its own
//     before the answer, read as the answer's) and reasoning_details on
//     the message (OpenRouter's reasoning.text, reasoning.summary,
//     reasoning.encrypted), its thoughtSignature block (no content:
//     skipped), tool_use (native tool calls); before
//     native tool calls, the tools were XML tags in the text
//     (<read_file><path>x</path></read_file>), each of a known tool at
//     the start of a line a call with the parameters as a JSON object of
//     strings and the id cline-<message>-x<n>. User content: the task and
//     the user's feedback (prompts), Cline's environment details and
//     notices (injected context), and the tool results: text "[name for
//     'x'] Result:" then the output (in one block, or, in older versions,
//     the output in the next block), paired with the oldest call of that
//     name still waiting, or tool_result blocks (newer versions and the
//     sessions folder's {messages: [...]}) by id. The header's name is
//     the tool's, up to a space or the bracket; the rest may run over
//     several lines up to "] Result:" (Roo Code's "[new_task in Code
//     mode: '<message>']", "[switch_mode to 'x' because: y]", a
//     multi-line command). A header that names no waiting call while one
//     call waits is that call's result (use_subagents' result is
//     "[subagents] Result:"). Cline states a command's outcome on the
//     output's first line, "Command executed successfully (exit code
//     0)." or "Command failed with exit code 1.": the exit code, and an
//     error when it is not 0 (execute_command; attempt_completion's
//     command writes it in the block after "[attempt_completion] Result:
//     Done", which joins that result); an execute_command's "Command
//     timed out after N seconds. Running in background." (Cline stopped
//     waiting, the command goes on: no outcome yet) is cancelled, never
//     ok, and so is "Command was cancelled by the user." (the user
//     stopped the command: CommandExecutor, cline/cline 60d3048aa0 on,
//     the output so far after it). "Task was interrupted before this
//     tool call could be completed." (the result Cline and Roo write for
//     the calls of the last message when a task is resumed) is
//     cancelled; newer Cline writes no result and only "[TASK
//     RESUMPTION] This task was interrupted ...": the calls still
//     waiting then are cancelled with those words as the error, and no
//     output. "[new_task completed] Result: ..." is the
//     sub-task's report that Roo (before 3.35) hands its parent: under
//     the XML protocol a user text after the call's own result
//     ("Successfully created new task..."), injected context; under the
//     native one the call's tool_result itself. An
//     execute_command output stating a non-zero "Exit code: N" above
//     "Output:" (Roo Code) is an error with that exit code. A result "The tool
//     execution failed with the following error: <error>...</error>" is
//     an error with that text; "The user denied this operation" is
//     denied. Any other result is ok, as Cline writes every failure of
//     a tool it runs so, except where the result does not state the
//     outcome: a command's without an exit code (older Cline's "Command
//     executed.", a completion's command), an MCP server's (its failure
//     flag is not in the text), use_subagents' when it counts failed
//     sub-agents; those have no status. Cline runs one tool per message: the other calls of a
//     message get a text "Tool [name] was not executed because a tool has
//     already been used in this message..." (or "... was interrupted and
//     not executed due to user rejecting a previous tool"), the result of
//     the oldest call of that name still waiting, an error (the tool did
//     not run), never the user's prompt. A task folder's metrics are not
//     read: the UI's requests state its figures (older Cline's metrics,
//     {tokens: {prompt, completion, cached}, cost}: their "cached" is the
//     cache writes in one sample and not said anywhere, while the UI's
//     figures are named).
//     A sessions folder's session is a session of the Cline SDK, its
//     assistant messages naming the model as modelInfo {id, provider} and
//     stating metrics {inputTokens, outputTokens, cacheReadTokens,
//     cacheWriteTokens, cost}: the usage of the one request that wrote the
//     message (usageDelta, sdk/packages/agents/src/agent-runtime.ts at
//     cline/cline 21cb8d2: the run's usage after the request less
//     before), inputTokens the whole prompt, the cache read and written
//     included (as in the SDK's usage events), cost the SDK's. Each
//     message's metrics count once (the message told by its id, else its
//     ts, else its index), the step's usage and cost their sum; no UI
//     messages state those requests there (a stream that also holds UI
//     messages does not read the metrics). The SDK's compaction (basic-compaction.ts) strips every
//     message's metrics and keeps their sum, added to the earlier
//     compactions', in the first message's metadata {kind "compaction",
//     usageBefore}: what it states beyond what was counted before (the
//     requests compacted before a sync read them) counts, as one
//     request's, with a warning.
//     A sessions folder's session id is Date.now() in milliseconds, "_"
//     and a random suffix (createSessionId; the CLI's own ids end
//     "_cli"). The CLI's /fork
//     (forkCurrentSession, apps/cli at cline/cline 21cb8d2) starts a new
//     session with the forked session's messages as they were, each with
//     its ts, and names the forked session only in its manifest
//     (<id>.json, metadata.fork), which the store does not read: a
//     message dated before its session started is one of those, that
//     session's, which its own run holds. It is not reported, and a
//     warning counts the copied messages; the fork's run holds what
//     followed the fork. A message without ts, and a session whose id
//     states no start, are read whole.
//   - ui_messages.json: ClineMessage[] {ts, type ask|say, ask|say, text,
//     partial}. say api_req_started's text is a JSON object that Cline
//     completes when the request ends: {tokensIn, tokensOut, cacheWrites,
//     cacheReads, cost, cancelReason, streamingFailedMessage}. Its figures
//     are the step's usage and its stated cost (0 included), each request
//     counted once, when it holds them: input_tokens is tokensIn +
//     cacheWrites + cacheReads (Cline keeps the three disjoint: its SDK's
//     message translator subtracts the cache reads and writes from the
//     provider's input before writing tokensIn), except where tokensIn
//     is the whole prompt, the cache included: Cline's over the providers
//     whose handlers pass the OpenAI-style prompt_tokens on beside the
//     cached part (openai, xai, litellm, lmstudio, qwen, doubao,
//     fireworks, hicap, zai: the request's modelInfo.providerId, Cline
//     3.x; src/core/api/providers/openai.ts reads usage.prompt_tokens and
//     prompt_tokens_details.cached_tokens), Roo Code's and Kilo Code's
//     (which state apiProtocol) over the OpenAI protocol, and over the
//     Anthropic protocol from Roo Code 3.29.5 (released 2025-11-01,
//     RooCodeInc/Roo-Code#8954: tokensIn is calculateApiCostAnthropic's
//     totalInputTokens) and Kilo Code 4.119.0 (2025-11-12). The record
//     names no version: a tokensIn below the cache read and written is the
//     uncached rest (a whole prompt holds its cache), and so is an
//     Anthropic-protocol request dated before the release (the facts
//     line's store says Kilo Code); a request of an older version made
//     after it whose uncached input exceeds its cache is read as a whole
//     prompt. Older versions wrote the figures in a separate
//     say api_req_finished, read the same way; a request that failed
//     while streaming is a provider error. Newer versions state on every
//     message the model then configured (modelInfo {modelId, providerId,
//     mode}): a request's is the model it went to, and the latest
//     request's the step's model (the conversation file's, read after,
//     names the same). say subagent_usage ({source: "subagents",
//     tokensIn, tokensOut, cacheWrites, cacheReads, cost}:
//     the sum over the sub-agents a use_subagents call ran, said when
//     the last ended) counts once too, the same way, in the step: Cline
//     makes no request message for a sub-agent's requests (its
//     SubagentRunner says nothing to the task; the SDK's message
//     translator drops a sub-agent's events, and writes the whole prompt
//     as tokensIn, the cache parts as 0) and keeps no task of theirs, so
//     these are the only figures of them and the task's run the only run
//     that holds them, as Cline's own task total (getApiMetrics) counts
//     them. say error, ask api_req_failed
//     and ask mistake_limit_reached are provider errors, but a say error
//     right after a tool's message (say or ask tool, use_mcp_server:
//     Cline's and Roo Code's handleError and their tools' own checks
//     show a tool's failure so) is that call's failure, which the call's
//     result in the conversation states (read from the UI's messages
//     alone: that call's result, an error); say error_retry and Roo's
//     api_req_retry_delayed (the error, then the countdown) warnings, as
//     the older say api_req_retried (no error stated) and Roo's
//     condense_context_error; Roo's condense_context (the context
//     summarized by a request of the task's model, which no
//     api_req_started states) is a warning, and its contextCondense.cost
//     counts once in the step's cost, as Roo's task total adds it (its
//     tokens are stated nowhere); Roo's api_req_deleted, its sum of what
//     a checkpoint restore cut away, is read as Cline's deleted_api_reqs
//     (below; its tokensIn the whole prompt after Roo 3.29.5, the cache
//     taken out); an error_retry that states its
//     errorMessage, its retries not spent, is a provider error too (a
//     failure Cline retried: listed even when the retry answered), once
//     with the failed request's own streamingFailedMessage, and so is
//     every api_req_retry_delayed (its text up to the countdown or the
//     blank line: the error's status and message); say completion_result the final text. The rest is the
//     screen's copy of the conversation.
//   - task_metadata.json (files in context, models used) and Roo's
//     history_item.json (the UI's totals again) are declared ignored,
//     except the parentTaskId of a Roo (or Kilo Code) sub-task, started
//     by its parent's new_task call, said once in a warning. The stores
//     declare it (abi.StoreParent: history_item.json's parentTaskId, the
//     parent's folder name), so the host makes the sub-task's run a child
//     run of its parent's (at path "subagent"). Roo Code wrote
//     history_item.json from 3.49 (RooCodeInc/Roo-Code b598efb, the
//     per-task history store); before, a task's HistoryItem
//     (parentTaskId, rootTaskId, childIds, number) was kept only in the
//     editor's global state (state.vscdb, taskHistory), and nothing in a
//     sub-task's folder names its parent. From 3.35 (9b5f639, delegation)
//     to 3.48 the parent's conversation names it: the new_task call's
//     result becomes "Subtask <child id> completed.\n\nResult:\n..." once
//     the child ends (ClineProvider.reopenParentFromDelegation, a
//     tool_result appended to api_conversation_history.json; "Delegated to
//     child task <id>", the result the call gave, is pushed after the
//     parent was flushed and closed, delegateParentAndOpenChild, so as far
//     as the source shows it is not saved); under the XML tool protocol
//     (no tool_use to answer) the same words are a user text, read as
//     the result of the new_task call waiting for it (subtaskResult; with
//     none waiting, Roo's injected context, not a prompt). The stores
//     declare that line
//     (abi.StoreParent.Result "Subtask {key} completed.", ABI 1.11): the
//     sync that archives the parent's result makes the sub-task's run a
//     child run of the parent's, linked at the new_task call, and archives
//     again, whole, a sub-task synced before as a run of its own (the usual
//     order: the sub-task runs, and ends, before its parent's result is
//     written), which the child run supersedes; the tasks a twasm before
//     this archived are looked at once, by the first sync after it. A
//     sub-task whose folder that sync could not read (changed in the
//     last seconds, or put there later) stays a run of its own. Before
//     3.35 (RooCodeInc/Roo-Code v3.34.8) neither task names the other.
//     The call's result is "Successfully created new task in <mode> mode
//     with message: <message> and <n> todo items" under the XML protocol
//     (NewTaskTool.ts line 156), or, under the native one, "[new_task
//     completed] Result: <the sub-task's completion result>" once the
//     sub-task ended (Task.completeSubtask, Task.ts lines 1959-2000; the
//     XML protocol gets the same words as a user text, Roo's injected
//     context); the sub-task's folder holds api_conversation_history.json,
//     ui_messages.json and task_metadata.json (the files in context,
//     FileContextTracker), none naming a parent: its HistoryItem's
//     parentTaskId and rootTaskId went to the editor's global state only
//     (Task.saveClineMessages, ClineProvider.updateTaskHistory). Only
//     text ties them: the sub-task's first message (say text, and
//     "<task>\n...\n</task>" in the conversation, Task.ts lines 1485 and
//     1495) is the call's message ("\\@" made "\@", NewTaskTool.ts line
//     97), its completion_result the words after "[new_task
//     completed] Result:", and its ask tool {"tool":"finishTask"}
//     (presentAssistantMessage.ts line 604) says it returned to a parent.
//     The stores declare that tie (abi.StoreParent.Prompt, ABI 1.12:
//     ui_messages.json's "/0/text" and the new_task call's "/message";
//     Roo trims an XML parameter, parseAssistantMessage.ts, and the host
//     compares the two with white space at either end trimmed): the
//     host links the sub-task's run at the call when that call is the
//     one of the parent's run stating the message and the sub-task the
//     one task naming no parent that starts with it (a message holding
//     "\\@", which Roo makes "\@", states other words: not linked).
//     The parent's step says, for each new_task call whose result has
//     one of those two shapes, that its sub-task is linked by that match
//     only, a run of its own otherwise (unnamedSubTask): the plugin cannot
//     know which. The same tie links a 3.35 to 3.48 sub-task as soon as
//     its parent's call is archived. Kilo Code's legacy extension (its task files
//     api_conversation_history.json, ui_messages.json,
//     task_metadata.json; no history_item.json through its last release,
//     5.10.4) shares the declaration: it merged Roo's delegation
//     (9b5f639) in 4.135.0, whose results name the sub-task as Roo's do
//     (ClineProvider.reopenParentFromDelegation, "Subtask ${childTaskId}
//     completed.\n\nResult:\n...", src/core/webview/ClineProvider.ts
//     lines 3889, 3904 and 3918 at Kilo-Org/kilocode-legacy v4.135.0,
//     4108 and 4123 at 5.10.4), so its sub-tasks are linked where they
//     do; before 4.135.0 it wrote Roo's older results (Task.ts lines
//     2160 and 2169 at v4.134.0; NewTaskTool.ts line 147), and such
//     sub-tasks are runs of their own, with the warning.
//
// A file read alone (import of api_conversation_history.json or
// ui_messages.json) is told by its shape. A task whose conversation file
// is missing (only ui_messages.json, as some users keep them) is read
// from the UI's copy of the conversation (uiconv.go), written at the end
// of the stream (the UI's file comes first, and only the end says no
// conversation file followed): the task (say task, or, as Roo Code, Kilo
// Code and Cline's first versions show it, the say text before the first
// API request) and the user's feedback are prompts; say text, reasoning,
// a followup question and a plan-mode answer the model's; completion_result
// its message; say or ask tool (named as the UI names it), command and
// use_mcp_server calls (ids cline-ui-<index>). The UI states few
// outcomes: a command's command_output messages, joined by newlines, are
// its result without a status (no exit code is shown), cancelled when
// they end on "Command(s) cancelled by user." (the notice Cline's
// CommandExecutor appends to the last output of a command the user
// cancelled), an MCP server's response the result of its use, without a
// status, and command_permission_denied a denial; any other call has no
// result, and a warning counts them. Cline changes a message in place
// under its ts (a partial one completed, the command marked
// commandCompleted, that cancellation notice): a later version of a
// message not written yet replaces it; a call's message (a tool, a
// command, an MCP use) an earlier part wrote is written again as a
// version of its call (sdk.ToolCall.Revised, ABI 1.13: counted once,
// with its latest input), and a command whose output changed or grew
// after an earlier part wrote it is written again with its whole output,
// the call and its result revised. A prompt, text, reasoning or
// completion changed after an earlier part wrote it is not written again
// (the ABI has no new version of a message): a warning names it and says
// the transcript keeps its earlier version (staleMessage). The usage, cost and errors are the UI's, as above:
// an error in the tail (after the model's last request or answer, a
// request still running not counting: see Order) comes
// after this conversation, so the session rule sees it after the last
// answer (status error); an error the task went on after (a later request
// or answer) comes before it and does not decide the status. A task has
// no terminal event: NoTerminal, and the host settles the status by the
// session rule (spec §6.7). A task whose last API request is still
// running (its api_req_started without figures or cancelReason: Cline
// completes it once the response is in) was read in the middle of a
// turn, as `twasm sync` often reads one: a status incomplete below the
// terminal level at the end makes it incomplete ("the turn has not
// finished"); read again once the request completed, it is settled
// as any other. An error the UI ended on before that request (held
// back, above) does not decide it: the task went on past the error
// (Cline asks the model again, the error in its request), so the
// status incomplete is said at the terminal level, the error listed.
// Nor does a failed request being retried: Cline retries a request
// that failed in the same api_req_started (attemptApiRequest, cline/cline
// src/core/task/index.ts), saying error_retry {attempt, maxAttempts}
// before each automatic retry (failed: true once they are spent, then
// the ask api_req_failed) and api_req_retried once the user chose to
// retry: UI messages that end on either (not on a spent error_retry or
// the ask, where the task waits for the user), or on Roo Code's
// api_req_retry_delayed (it retries until the user stops it;
// Task.backoffAndAnnounce, RooCodeInc/Roo-Code src/core/task/Task.ts),
// are a retry running, incomplete at the terminal level, the failure
// listed. A task whose last request the user cancelled
// (cancelReason user_cancelled) is likewise incomplete (a cut turn, as
// a Codex turn_aborted is), besides its warning. A request that failed while streaming (cancelReason
// streaming_failed, its streamingFailedMessage) and the ask
// api_req_failed after it (retry?) are one failure, one error: the
// ask's place, the request's message, code streaming_failed (read
// before the ask was written, the request reports it and the ask,
// when it comes, is ignored as the same failure); where the task ends
// on such a request without the ask, its error is held back as one in
// the tail is. An error text the UI keeps as a JSON object
// ({"message": ...}: say error, ask api_req_failed,
// streamingFailedMessage) is its message. A UI message is told by its ts (its index
// where it has none): after a rewind (below) the task's next messages
// come at indices messages cut away had, and are written too. Each
// message of the UI's conversation has its key as its id: ui-<index>,
// and, where a message cut away had that index, ui-<index>@<ts> (its
// calls cline-ui-<index>[@<ts>]). A new part of a task (a facts line
// after the task was read) first writes the UI conversation the earlier
// part held back: sync and renormalize replay the archived parts with
// their output dropped, and the host's filter of what the earlier parts
// hold leaves it out (by those ids) when it comes after the replay,
// while a whole raw capture read at once (twasm import of it) keeps it,
// where it lost every part's conversation but the last. The errors an
// earlier part ended on were its step's, and are not reported again.
// End's warning of the calls without outcome counts every part's.
//
// # Format "json"
//
// The Cline CLI's --json output (twasm record --provider cline -- cline
// task "..." --yolo --json), told by its first line: one JSON object per
// line, each message a ClineMessage as ui_messages.json holds it, written
// once when whole. The structured output (schemaVersion 1) wraps them:
// {"event":"start","taskId"} (the session), {"event":"message", ...the
// ClineMessage's fields, role, messageType}, and a terminal
// {"event":"complete","status","exitCode","result"|"error"} or
// {"event":"error","status","exitCode","message"}: success is ok, timeout
// and aborted (stopped before the end) incomplete, anything else an error.
// The earlier output is {"type":"task_started","taskId"}, the bare
// messages, and {"type":"error","message"}; it has no terminal event, so
// the host settles the status by the session rule. The task's first
// message, say "text" (or "task"), and the user's feedback are prompts;
// say text, reasoning, a followup question and a plan-mode answer the
// model's; say tool ({tool, path, content, diff, ...}, named as the UI
// names it: readFile, editedExistingFile, searchFiles, ...), command
// (Cline's approval marker "REQ_APP" cut off) and use_mcp_server are tool
// calls, ids cline-ui-<n>; completion_result the final answer (without the
// "HAS_CHANGES" flag Cline appends for its changes button, in either
// format). The stream states no tool outcome: a command's output comes
// without its exit status, a file tool's result not at all, so the calls
// have no tool.result and a warning says so and points to the task folder,
// which sync reads with the results; only command_permission_denied
// answers the last command, denied. The CLI prints each ts once
// (cli/src/utils/plain-text-task.ts, processedMessages); a tool's
// message of a ts printed again is a version of its call, written
// revised (counted once, with its latest input), any other message but
// a request's usage passed over. api_req_started comes only with
// --verbose and as it was when the request started: figures it holds are
// counted as the UI's are, and a stream without them has no usage (never
// 0); a deleted_api_reqs counts what it sums beyond the requests the
// stream counted (Decisions, Rewritten documents). Errors (say error, ask
// api_req_failed, whose text is {"message"}) are provider errors, retries
// warnings; an ask api_req_failed after a request printed with
// cancelReason streaming_failed is that failure, reported once; a say
// error right after a tool's message (say or ask tool, use_mcp_server) is
// that call's result, an error (the tool's failure, as the SDK-based
// Cline's message translator writes a tool_call_end with an error: say
// tool, then say error).
//
// # Format "agent-events"
//
// The Cline CLI's --json output since it runs on the Cline SDK (cline
// 3.x, the repository's apps/cli), told by its first line: every line
// has an ISO "ts" and a "type". agent_event wraps the SDK's AgentEvent:
// iteration_start and iteration_end bound one model request and its
// tools (one assistant message, closed at iteration_end); content_start
// text and reasoning are deltas (appended), content_end text and
// reasoning the whole text of the turn (it replaces them; the SDK writes
// the text's before the reasoning's, so a block keeps the slot of its
// first delta; one with no text, as the hub's may be, leaves the deltas
// standing); content_start tool is a call (toolCallId, toolName,
// input; run_commands' single command is its command line),
// content_update a tool's progress (ignored: content_end holds the
// output), content_end tool its outcome: "error" (the SDK's JSON
// {"error": reason}) an error, denied when the reason is a refusal (a
// person, a policy, a hook, "requires approval in a TTY session");
// otherwise the SDK's results {query, result, error, success}: an
// operation with success false (a command that exited non-zero, "Command
// exited with code N", its exit code when the call ran one command; a
// file that could not be read) makes it an error, else ok; content_end
// media (generated media) a warning, the transcript has no block for it.
// usage states the request's figures (on its message) and the run's
// totals (the step's, set); the SDK's inputTokens is the whole prompt,
// the cache read and written included (its providers' usage is
// normalized so), and totalCost the cost it computed. error events are
// provider errors (code errorClass, or "recoverable" for the retries and
// mistakes the run went on after); notice recovery and stop warnings,
// notice status (compaction) ignored. done (reason completed, aborted,
// max_iterations, mistake_limit, error) is the terminal event; run_result,
// which the CLI prints after it, states it again with the session's usage
// and cost and the model, and replaces it (the usage and cost are the
// step's unless it had a sub-agent: the CLI's figure, aggregateUsage when
// it writes one, holds the sub-agents' requests, which their runs'
// messages hold, so the step keeps its own usage events' totals and a
// warning quotes the CLI's): completed is ok (its text the final
// answer), aborted incomplete (and run_aborted, which follows, gives the
// reason), anything else an error (the CLI exits 1 and prints the text as
// the error). A sub-agent's events (spawn_agent, a configured agent) come
// inside its call, unmarked: an iteration that starts while one of the
// step's calls runs opens a sub-agent scope linked to that call (the
// child run, its prompt the call's task), closed at the call's
// content_end with the sub-agent's done reason or the finishReason its
// call returned (incomplete when the output ends first); with several
// calls running at once the stream does not say whose it is, and a
// warning says so. run_start (with --verbose)
// names the model; zen_dispatched (zen mode: the session goes on in the
// hub) is incomplete; the stderr lines (error, zen_error), when they are
// recorded with stdout, provider errors; in team_event (an agent team's
// teammates, whose output the CLI prints apart), a teammate agent's
// error, a teammate task ending in an error and a failed team run are
// provider errors, the rest (the teammates' output, not linked to any
// call of the step) stays in the raw capture; team_restored and
// hook_event are ignored. The stream names no session id (run_start's is
// read before the session starts), working directory or provider
// version: the step has none.
//
// # Format "roo-stream-json"
//
// Roo Code's CLI with --output-format stream-json (RooCliStreamEvent,
// provider roo), told by its first line, {"type":"system","subtype":
// "init","protocol":"roo-cli-stream"}. Every other event has an id, its
// ClineMessage's ts (the message's time). user (the prompt's echo, the
// user's feedback), assistant and thinking stream deltas while partial
// and the whole text with "done"; an assistant event with a subtype is a
// ClineMessage the UI shows (read when done): followup the model's
// question, api_req_failed and mistake_limit_reached provider errors,
// diff_error, rooignore_error and the UI's other warnings warnings, the
// rest the screen's. tool_use (subtype tool: the UI's tool object, command:
// execute_command, mcp: the server's tool) streams its input and is a
// call when done (a call cut off while it streamed is reported at the end,
// dangling; the CLI writes a message whole once, seenMessageIds: one done
// again is a version of the call, written revised, its latest input
// counted). tool_result states a command's outcome only: its output by
// delta and, on done, its exitCode where the CLI learned it (non-zero is
// an error); a command that ended with no exit code, a file tool and an
// MCP response (which has no status) get no result, and a warning says so.
// error events are provider errors, but one right after a tool_use of a
// tool or MCP server done (say error: Roo Code's handleError and its
// tools' own checks) is that call's result, an error; after a tool_use
// still streaming it stays a provider error (the CLI's own error event
// may come then). result is the terminal event of a
// task (success true ok, false an error), its content the final answer
// (and the model's message when it was not the last text); its "cost" is
// the last API request's figures, not the task's, so the step has no
// usage (a warning quotes them). With --stdin-prompt-stream, control and
// queue lines frame the tasks: a start command's control done ends its
// task (task_completed ok, task_aborted incomplete, else an error),
// control error is a provider error, the taskId the session id; a prompt
// after a task's result makes the step incomplete until its own result.
// Without a terminal line (the CLI failed: its error line), the host
// settles the status from the errors and the exit code; a stream that is
// only that error line ({"type":"error","id","content"}, the CLI failed
// before it started) is read as this format.
//
// # Format "roo-json"
//
// Roo Code's CLI with --output-format json: one pretty-printed document
// the CLI writes when the task completes (the plugin has the SDK
// reassemble it: Plugin.Reassemble), {"type":"result","success",
// "content","cost","events"}, its events those of stream-json, each
// whole (a command's tool_result holds the whole output so far, not a
// delta). They are read as above, then the result. A CLI that fails
// writes no document, only its error line.
//
// # Decisions
//
// Rewritten documents. Cline rewrites both arrays whole at every turn,
// and their elements have no ids. The plugin keeps a content hash of
// each element of the last version of each file it read, and maps only
// the elements whose index is new or whose content changed (a message
// changed in place is written again, in its new version, under a key of
// its own, m<index>.<version>, with a warning; a shorter array is said
// in a warning). The calls and results of a conversation message changed
// in place (its ts the same as the version read before, or neither
// stating one) are reported revised (sdk.ToolCall.Revised,
// sdk.ToolResult.Revised, ABI 1.13): the host writes each as a new
// version of the call or result of its id, counted once with its latest
// input and outcome, rather than a second call reusing the id (left
// dangling) or a repeat before the result ignored (its new input lost).
// A message of another ts at an index read before (the history cut back,
// then a new request) is another request: its calls are not revised,
// and a call of it whose id its index made (XML tools) is a new call
// reusing the id. A changed result written as text whose call is no
// longer waiting cannot be tied to it: a call is synthesized for it, as
// before. A host of ABI 1.12 or before ignores the mark. The host hands it the
// run's raw capture first when a task grew, so a sync writes only the new
// turn, and the raw capture alone, read whole, gives the same transcript
// (renormalize). An api_req_started element is counted once, when it
// first holds figures: Cline writes it when the request starts and again
// when it ends. A request is told by its ts (by its index where it has
// none): a checkpoint restore, or a message deleted or edited, cuts the
// UI's messages back (Roo Code's MessageManager.performRewind), and the
// task's next request comes at an index a request cut away had; both
// were made, and both count. Older Cline, after a checkpoint restore
// of the task (TaskCheckpointManager.handleSuccessfulRestore, cline/cline
// 864419d8b0), cuts the UI's messages back to the one restored to and
// says deleted_api_reqs, {tokensIn, tokensOut, cacheWrites, cacheReads,
// cost}: the sum (getApiMetrics) of the usage messages cut away, all
// dated between the one restored to (the element before it) and it:
// api_req_started, subagent_usage (a use_subagents call's sub-agents)
// and an earlier deleted_api_reqs. What it sums that twasm read before
// (a request's figures, a subagent_usage's, an earlier sum's remainder,
// each as counted) is taken off, and the rest, the requests cut
// away before a sync read them, counts once, as one request's, with a
// warning: a task read before and after the restore, or only after it,
// counts every request once. A subagent_usage cut away unread is in that
// rest (the sum does not part it). In the CLI's --json stream, which does
// not say which message the restore went back to, every request whose
// figures the stream printed before it is taken off: nothing counts
// twice, and a restore that kept requests the stream printed figures for
// while it cut requests it printed none for counts less than was made.
//
// Order. The UI's messages come first in the stream, so what they say
// happened after the conversation's last message is reported after the
// conversation: an error the UI's messages end on (after the last request
// or answer; a request Cline started and never completed, without
// figures or a reason it ended, does not count: nothing answered it) is
// held back and reported after the conversation, so the session rule
// sees it after the last answer (status error); the errors before it are
// reported in place and do not decide the status. A
// completion the UI showed for the conversation's last attempt_completion
// call is that call's result (the tool ran: it presents the result);
// the user's reply to it, "[attempt_completion] Result: ... <feedback>",
// is then the user's prompt.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): Roo Code's
// history_item.json workspace; Cline's own task files name no directory.
package cline
