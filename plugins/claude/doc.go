// Package claude is the twasm normalizer for Claude Code and the Anthropic
// Messages API. It is a plain Go package (tests, fuzzing and the native
// baseline run it directly through sdk.Plugin.Driver); plugins/claude/wasm is the
// two-line WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/claude/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
// The format is detected per line, so a stream may mix them:
//
//   - stream-json (claude -p --output-format stream-json --verbose):
//     system/init, assistant lines split per content block that share one
//     message.id, user lines with tool results, result. Reported format
//     "stream-json".
//   - stream-json-partial (the same with --include-partial-messages):
//     stream_event lines wrapping Anthropic SSE payloads. The per-block
//     assistant snapshots repeat blocks already built from deltas; a
//     snapshot replaces the slot its deltas built (matched by tool id, or
//     by type in stream order), and deltas that arrive after a snapshot
//     are ignored, so every block is written once.
//   - json (--output-format json): one result object, or a JSON array of
//     every line (--verbose), either on one line or pretty-printed over
//     many lines.
//   - session-log (~/.claude/projects/<slug>/<session>.jsonl).
//   - anthropic-messages: a Messages API response object (often
//     pretty-printed) and anthropic-sse: the streaming payloads, with
//     event:/data: framing or one payload per line.
//   - message-batch-results: the results of a Message Batch
//     (/v1/messages/batches/{id}/results), a line per request {custom_id,
//     result: {type, message | error}}: a succeeded request's message is
//     read as an API response; an errored, canceled or expired one is an
//     error the provider reported (with the error's type as its code).
//     Anthropic bills these requests at its batch rate, which the format
//     tells the usage reports.
//
// Pretty-printed JSON is reassembled by the SDK (sdk.Plugin.Reassemble): a non-JSON line
// that opens an object or array starts an accumulation that ends when the
// brackets balance (the text is then indexed) or when an unindented JSON
// line arrives (the accumulated lines are then counted as "non_json").
//
// # Decisions
//
// Status. A result line is the terminal event: subtype "success" with
// is_error false is ok, unless its stop_reason is refusal (the last turn
// was refused: an error, as for an API response) or the turn was
// interrupted (terminal_reason aborted_streaming or aborted_tools, or a
// top-level assistant message of the turn flagged aborted: incomplete,
// with no final answer) or its terminal_reason says the loop ended some
// other way than completed: a hook ended the turn (hook_stopped,
// stop_hook_prevented), a call was deferred to the host (tool_deferred),
// the turn went to the background (background_requested) or a reason
// not known here is incomplete, with no final answer; a limit or a
// failure (max_turns, budget_exhausted, prompt_too_long, api_error,
// model_error, image_error, blocking_limit, rapid_refill_breaker,
// malformed_tool_use_exhausted, structured_output_retry_exhausted,
// tool_deferred_unavailable, turn_setup_failed) is an error whose text is
// the result text followed by "(terminal_reason X)", even when a message
// of the turn was flagged aborted; is_error true or any
// other subtype is an error whose text is the result text (falling back
// to errors[], its strings joined by "; ", and the subtype). Several init…result cycles (background agents) are read to the
// end; the last result's status wins. Errors the provider reports on the
// way are each reported with Out.Error (listed in the step's errors): a
// top-level "error" on an assistant line (authentication_failed,
// rate_limit, ... as its code; an error object's message) or
// isApiErrorMessage (session logs: "API Error: 529 ... overloaded"), with
// apiErrorStatus as the code when stated; system/api_retry (a failed
// request the CLI retries, even when a retry then succeeds; also a
// client's side request's retry, control_request_progress with status
// api_retry) and its
// session-log twin system/api_error of 2.1.1xx builds (the API's status,
// error type and message, and the attempt); a
// rate_limit_event whose status is "rejected". The CLI's synthetic message
// about an API error is written before its error, so the error is the
// last word of that line. A stream with no result reports no terminal
// status (the host decides: error fields make it an error, else it is
// incomplete), except: an Anthropic response object, or an SSE stream
// that reached message_stop, is ok, or incomplete when its stop_reason
// says the answer was cut (max_tokens, model_context_window_exceeded) or
// the server paused the turn for the client to send back (pause_turn, and
// compaction: pause_after_compaction), or an error for a refusal (with
// the category and explanation its stop_details give); an SSE "error" event (overloaded_error,
// api_error, ...) and an error object are terminal errors. A session log
// has no result record by design: it is reported NoTerminal and the host
// settles it by the session rule of spec §6.7, as for every plugin; the
// CLI's marker of an interruption in the session's own records ("[Request
// interrupted by user]", "... for tool use]": the user stopped the turn)
// is reported as a status incomplete below the terminal level, so a log
// whose last answer it follows is incomplete (as Codex's turn_aborted and
// Pi's aborted response are), and a later answer makes it ok again. A
// log read in the middle of a turn (`twasm sync` reads logs Claude Code
// still writes) is incomplete where it ends on a prompt, a call without
// its result or the model's thinking alone; one ending on an answer's
// text block or a call's result reads ok, though the turn may go on:
// the per-block lines carry no stop_reason while they stream, and
// system/turn_duration is no turn's end marker (the captures hold turns
// without one: irrlicht v2.1.143's last three prompts, spotter
// v2.1.39's).
//
// Messages. The lines of one message (one per content block, sharing
// message.id) may have other lines between them: a hook's progress, the
// result of a tool the message already asked for (Claude runs a tool as
// soon as its block is complete), a sub-agent's first records. A message
// stays open until its scope's next message, a prompt, a result or the
// end, so it is one message.assistant with each block once, written
// before the tool calls and results it holds back (the host queues them
// behind it). So that a message nothing more comes to does not hold back
// the stream, it is closed once idleClose lines (48; real logs have at
// most a dozen between two lines of a message) passed without one about
// it; a line of it that comes after that continues it under a new key.
//
// Usage. Every assistant message carries its own usage (input_tokens is
// input + cache_creation + cache_read, uncached_input_tokens Anthropic's
// input_tokens as stated, cache_write_1h_tokens its
// cache_creation.ephemeral_1h_input_tokens; the last figure reported for a
// message wins, since message_delta counters are cumulative and a
// session log repeats the message's figures, growing, on its lines; a
// continued message adds to the step what its later figures add to the
// ones written with it). A message
// whose request made several model calls (a server-side compaction
// before the answer) lists them in usage.iterations and states only the
// last at the top: its usage is the sum of the iterations (a result
// line's iterations are its last message's and are not read). An
// iteration run on another model than the message's (an advisor_message,
// the advisor tool's sub-inference; the message entry of a hop a
// server-side fallback declined, on the requested model) is not added to
// the message: it is written, once, as an assistant message of its own
// model with no blocks and its usage (the request's service tier), so
// that each call is priced at its model's rates; the step's total is
// the same. The step's
// usage is the sum of the result lines' usage (each result covers its own
// cycle) and of what the cycle's messages' iterations state beyond their
// top-level figures (their other calls, the advisor's): a result's usage
// is the main loop's, the sum of the messages' top-level figures (the
// Agent SDK: "main-loop-only and per-turn"), so the calls iterations list
// beyond the top level would otherwise be lost; messages closed after the
// last result (a cut stream, a session log, an API response) are added
// at the end. A result without messages (--output-format json without
// --verbose) adds what its modelUsage (cumulative over the process,
// every call, sub-agents' and side calls' included, for which there are
// no runs then) counts beyond its usage. Sub-agent messages are not
// added to the step total: Claude's result.usage does not include them
// either; they carry their usage on their own messages. total_cost_usd is
// cumulative over the process, so it is reported in "set" mode; it is
// stated, never derived, and counts every call the process made, the
// sub-agents' included (their child runs' cost: a 2.1.198 capture states
// $0.1662723, the parent's messages at Anthropic's rates $0.1118133 plus
// its sub-agent's $0.054459, and modelUsage counts both runs' tokens), so
// the usage reports do not price those child runs again
// (views.StatedCostCountsSubRuns); a
// conversation_reset (/clear in a process that goes on) restarts it from
// zero, so what the results before it stated is added to the later
// ones'. So is a
// session log's cost-state record (2.1.28x: the CLI's cost tracker,
// written when a process ends): its totalCostUSD is the step's cost, its
// sub-agents' included as well, and
// one without it is declared ignored; its per-model token counts repeat
// the messages' and are not read.
//
// Service tier (ABI 1.9). A usage's service_tier ("standard" in Claude
// Code's logs and streams and the Messages API, "batch" in a Message
// Batch's results, "priority" at the Priority Tier) is reported as the
// message's tier, the last a message's lines state winning; the step's
// is its messages' and result lines' (the SDK's sum: "mixed" when they
// differ). A usage that states none leaves it unset, never "standard".
// usage.speed (Claude Code's fast mode) is not read.
//
// Compaction. A compaction content block (server-side compaction: the
// API summarized the conversation before answering, streamed as
// compaction_delta) is not the model's answer: its summary, which the
// model sees in place of what came before it, is a message.user of
// injected context beside the response (written when the block stops,
// once: a later snapshot of the message repeats it), with a warning that
// the conversation was replaced by a summary in the model's context.
//
// Tools. Every tool_use and server_tool_use becomes a tool.call (kind:
// Bash → execute with its command; Read, NotebookRead, LS → read; Edit,
// Write, MultiEdit, NotebookEdit → edit; Grep, Glob, ToolSearch → search;
// WebFetch, WebSearch and the web server tools → fetch; TodoWrite, the
// Task* list tools, EnterPlanMode and ExitPlanMode → think, because they
// record the agent's plan rather than act on the world; Task, Agent, MCP
// and everything else → other). Streamed tool input (input_json_delta) is
// joined inside the plugin, since the tool.call needs the whole value; it
// is the one place where the plugin copies provider text. Tool results
// come from tool_result items of user lines and from *_tool_result blocks
// of server tools. Their status is one of the spec's four words: "ok";
// "error" (is_error; the exit code is read from the CLI's "Exit code N"
// text, and a Bash result not marked is_error whose text states a
// non-zero one is an error too); "denied" (the CLI's texts for a refusal by the user or a
// permission rule: "The user doesn't want to proceed...", "Claude
// requested permissions...", toolUseResult "User rejected tool use"; a
// call a PreToolUse hook blocked, whose result is the CLI's
// "PreToolUse:<tool> hook error: ..."; a
// call the SDK's can_use_tool callback denied, or that was asked about
// and never allowed; a result's permission_denials); "cancelled" (Bash
// tool_use_result.interrupted, "[Request interrupted by user...]", and
// "Sibling tool call errored": a parallel call never run because another
// failed first). A stream-json user line's tool_result_meta (2.1.216+:
// [{id, non_execution_kind}]) says why a call never ran and outranks its
// text: permission-rule (a rule, a PreToolUse hook, the SDK's callback,
// whatever text it gave) and user-rejected are denied, interrupted and
// cancelled cancelled. A code execution server tool's result
// (code_execution_result, bash_code_execution_result,
// encrypted_code_execution_result) states the program's return_code: its
// exit code, and an error when not zero, as for Bash. A server tool's
// error object ({type: web_search_tool_result_error, error_code:
// max_uses_exceeded}, with error_message where the tool states one) is
// an error whose text is its type and code (and message), the object
// kept as the output.
// Anything not ok carries error text. A tool_result whose call is not in
// the input (a sub-agent's tool in a stream without its messages) gets a
// synthesized tool.call named after the kind its result shows (execute,
// search, read, edit, fetch) or "unknown", with a warning that says so;
// a server tool's result without its call (a response that continues a
// turn the server paused, stop_reason pause_turn: the call was the
// previous response's) names it after its block type
// (web_search_tool_result: web_search). A
// can_use_tool control_request for a call that never appears otherwise
// is a dangling tool.call. A tool_result that is an array of text items is
// joined with newlines; an array holding anything else (images) is kept as
// its JSON text. Tool results are not repeated as message.user blocks:
// tool.result already carries them, and large outputs would be stored
// twice.
//
// Call ids. A call id is the provider's. Anthropic's are unique, but a
// model server behind a proxy may give calls of different responses one
// id (ids unique per response, not per session: one names every call
// call_1). Calls are kept by scope and id: a sub-agent's call that
// reuses the id of a call of the step's scope waiting for its result (its
// own Task call, or a call run beside it) is a call of the sub-agent's
// scope, answered by the result in that scope, and the result in the
// step's scope answers the step's call (the host pairs by scope and id
// too). A tool_use block in another message that names the id of a call
// of its scope with its result is a new call, with its own name, input
// and result, as the host reads it (internal/normalize); the same block
// again (a snapshot after its deltas, the message repeated, or back after
// its window under its first key) and a repeat before the result are the
// first call, and a result sent again is left to the host, which keeps a
// call's first. A sub-agent's scope is named by the id of the Task or
// Agent call that started it; a Task or Agent call that reuses the id of
// one whose sub-agent's scope was opened already starts a scope of its
// own, named by the id and a number (call_1#2, call_1#3, ...), and the
// records naming that id as their parent go to the latest such call's
// scope (no capture shows such a case). A result's permission denial,
// which names a call by its id alone, is the step's call of that id,
// else that of a sub-agent still running. A can_use_tool request names
// it by its id and, when a sub-agent asks (newer SDKs), agent_id: it is
// the step's call of the id, unless a sub-agent asks or that call is a
// Task or Agent call whose sub-agent already runs (it was allowed before
// it started), else a running sub-agent's call of the id; a request for
// a call not in the input yet is that of the first call of its id that
// shows up, in any scope (one that never shows up is a dangling call of
// the step's, unless a call of its id is known, the running Task call a
// sub-agent's request named). What the request and the SDK's answer say is
// kept with that call, by scope and id as calls are, so the result of
// another call of the id is never taken for a refused one.
//
// Answer. --output-format json without --verbose holds only the result
// object: when no assistant message was seen, a successful result's text
// is written as the message.assistant (spec §6.11), and its
// permission_denials as denied tool calls.
//
// Thinking. A thinking block whose text is empty but that carries a
// signature (newer models omit the text) is kept as a thinking block
// marked redacted, since the reasoning exists but is withheld;
// redacted_thinking is a redacted thinking block.
//
// User messages. A user prompt is a message.user with origin "prompt".
// isMeta, isSynthetic and isCompactSummary records, the CLI's echoes
// of local commands (<command-name>, <local-command-stdout>), its
// interruption marker and its notices that a background task ended
// (<task-notification>), have origin "injected_context". A user line holding only tool results produces no
// message.user.
//
// Attachments. A session log's attachment record is something the CLI
// adds to the conversation on its own; its attachment.type decides:
//
//   - queued_command: input queued while the agent worked, for which the
//     CLI writes no user record: commandMode "prompt" is the user's
//     prompt (a message.user), "task-notification" (a background task
//     ended) injected context. Its prompt is a string, or, when the
//     message holds an image, a list of content blocks: the text blocks
//     are the message's, in order; the image is counted unmapped as
//     "block/image", as in a user record.
//   - A hook's outcome that is not a success is a warning of the step
//     naming the hook and what it said: hook_blocking_error (exit code 2:
//     the hook blocked what it guards, a tool call before it runs, the
//     end of a turn, a prompt, and its stderr went to the model),
//     hook_non_blocking_error (any other exit code: shown to the user,
//     the agent goes on; with the exit code and stderr),
//     hook_error_during_execution, hook_cancelled and
//     hook_stopped_continuation (continue: false: the hook stopped the
//     agent, with its stopReason). They are not errors the provider
//     reported: the run goes on, or ends as the hook chose, and its
//     status is the run's. The tool call a PreToolUse hook blocked is
//     denied by its own result (Tools).
//   - Text the model was given is a message.user of injected context in
//     the record's scope: the attachment's rendered content when the log
//     keeps it (2.1.28x: rendered[].content, the system reminder as sent,
//     for any attachment type); hook_additional_context's content (a
//     hook's additionalContext, a list of texts); a hook_success's
//     content when its hookEvent is SessionStart or UserPromptSubmit,
//     whose stdout Claude Code adds to the model's context, unless it
//     is a JSON object, the hook's answer, whose additionalContext comes
//     as hook_additional_context (any other hook's success is ignored:
//     its output is shown to the user only). The stream's
//     system/memory_recall (memories recalled into the turn) is the same
//     kind of context: each memory's content, where the record has it.
//     So are the texts these attachments keep, which Claude Code's
//     normalizeAttachmentForAPI sends the model inside a sentence of its
//     own (the sentence is the CLI's rendering and is not written; each
//     text is a block, as the record keeps it): a CLAUDE.md or rules
//     file loaded for the files the agent touched (nested_memory:
//     content.content), the instruction files loaded for the session
//     (instructions: each of files[].content, the user's and the
//     project's CLAUDE.md, rules and the auto-memory MEMORY.md; later
//     ones hold only the files new or changed, and one naming only
//     files removed has no text), memories recalled (relevant_memories), the
//     skills invoked before a compaction, for the model to go on
//     following (invoked_skills: each skill's content), a file changed
//     outside the agent, by the user or a linter, since it read it
//     (edited_text_file: the changed lines, its snippet), the lines the
//     user selected in the IDE (selected_lines_in_ide), a file the user
//     named with @ (file: the text the Read tool gave, content.file.content;
//     an image keeps none), a directory listing (directory), a plan
//     file's contents (plan_file_reference), an MCP resource's text
//     (mcp_resource), teammates' messages (teammate_mailbox), a
//     critical_system_reminder, and an asynchronous hook's
//     systemMessage and additionalContext (async_hook_response). Such
//     a record with no text (no skill invoked) is ignored, as the CLI
//     sends nothing for it.
//   - A notice for the user, not text for the model, is a warning of the
//     step: a hook's systemMessage (hook_system_message: "<hook> says:
//     ..."), max_turns_reached (the agent stopped at its maxTurns:
//     a session log records it nowhere else), and repetition_breaker
//     (the turn was ended because the model made the same call,
//     toolName, streak times in a row with the same outcome: "the
//     repetition breaker ended the turn: <tool> called N times in a row
//     with the same failure (<cause>)"; its shape is known only from a
//     public Claude Code-derived source's Attachment type: Claude Code
//     2.1.332's own code, read for this, names no such type, and no
//     session log that holds one is public).
//   - Ignored, when the log does not keep their rendered text: what the
//     model may use (deferred_tools_delta, skill_listing,
//     agent_listing_delta, mcp_instructions_delta, command_permissions,
//     skill_discovery, dynamic_skill), the CLI's reminders and notices
//     built from state it tracks itself or that the transcript records
//     elsewhere (task_reminder and todo_reminder repeat the lists the
//     Task and TodoWrite calls wrote; total_tokens_reminder, token_usage,
//     budget_usd, output_token_usage, date, date_change, environment,
//     model, output_style, auto_mode, auto_mode_exit, plan_mode,
//     plan_mode_reentry, plan_mode_exit, goal_status, companion_intro,
//     agent_mention, task_status, team_context, compaction_reminder,
//     ultrathink_effort, ultra_effort_enter and _exit,
//     workflow_reminder, workflow_keyword_request, verify_plan_reminder,
//     memory_update, read_truncation_notice, bash_output_audience_note:
//     the CLI's fixed sentence, after a long Bash result, that the user
//     saw only a few of its lines; batching_reminder_sent, the mark that
//     a batching reminder went out, which Claude Code renders as nothing
//     for the model), the IDE's state and the
//     files the CLI names for the model (opened_file_in_ide,
//     diagnostics, compact_file_reference, pdf_reference): their text
//     as the model got it is not in the log, so writing it would be the
//     plugin's own rendering. Also ignored: what the CLI sends the model
//     nothing for (already_read_file, edited_image_file,
//     structured_output, hook_permission_decision: the call's result
//     says what the hook decided; context_efficiency,
//     current_session_memory, pen_mode_enter and _exit,
//     teammate_shutdown_batch: the UI's line for N in-process teammates
//     that shut down gracefully), 2.1.28x's
//     prompt_snapshot, session_context and remote_session_change
//     without rendered text, and the types older builds wrote that the
//     CLI reads as nothing (autocheckpointing, background_task_status,
//     todo, task_progress, ultramemory).
//   - Any other type is counted unmapped as "attachment/<type>".
//
// Results before their calls. Claude Code appends a tool's result record
// and the assistant record that holds its call apart, and can write the
// result first (2.1.9x session logs: the result's parentUuid names the
// assistant record after it, whose timestamp is earlier). A session log's
// result whose call is not in the input yet waits while assistant records
// follow (its line is declared ignored as "(tool result before its
// call)"); when one of them reports the call, the result is reported
// right after it (with that line's raw_line), the call's result like any
// other. At the first other record, or at the end of the log, a result
// still waiting gets a call synthesized from what it shows, as a result
// whose call is not in the input at all does (a log that starts
// mid-session), with the warning.
//
// Forks. /branch (and --fork-session in the builds that stamp it) writes
// the conversation so far into the new session's file: each copied record
// keeps its uuid, timestamp and message, takes the new sessionId, and
// carries forkedFrom {sessionId, messageUuid} naming the session and
// record it was copied from. Those turns, tool calls and tokens are the
// parent session's, which its own run holds: a record with forkedFrom is
// declared ignored as "(forked history)" (it still gives the session id,
// version and cwd), so the fork's run holds, and its usage counts, only
// what happened after the fork. A fork's copy that carries no forkedFrom
// (a build that did not stamp it) is read as the session's own.
//
// Sub-agents. A line with a non-null parent_tool_use_id belongs to the
// scope of the latest Task/Agent call of that tool id (see Call ids; the
// id itself when no such call is in the input), opened on first sight
// with the sub-agent type and description from the line, the Task/Agent
// call or system/task_started. A session-log progress record of type
// agent_progress (Claude Code 2.1.x) carries one message of a sub-agent's
// conversation in data.message: it belongs to the scope of its
// parentToolUseID, and is read as a line of that scope would be (a
// message a later record repeats, by uuid, is written once). A
// session-log sidechain (isSidechain) is attached to the Task/Agent call
// whose prompt matches its first record, else to the latest Task/Agent
// call without a result; later records follow their parentUuid. A scope
// opens with the prompt the parent gave (the call's prompt input,
// task_started.prompt or agent_progress data.prompt) as its first
// message.user; the sub-agent's own first user record, when it repeats
// that prompt, is not written again. The short description names the
// child run (the host names the run after it). A scope closes with its
// tool's result, or, for background agents (async launch), with
// system/task_notification (completed: ok; stopped, by TaskStop or the
// user: cancelled; else an error with its summary), or with a
// system/task_updated whose patch.status is killed (cancelled) or failed
// (an error), since the CLI may send no notification then (the task is
// known by the task_id its task_started gave); a sidechain scope opened without a starting
// call (a subagents/agent-*.jsonl file imported on its own) ends, ok,
// with the log. A task_started whose task_type is not an
// agent's (local_bash: a background shell) is not a sub-agent: it belongs
// to the Bash call that started it.
//
// The store. Claude Code keeps a session's sub-agents' conversations in
// files of their own, <session>/subagents/**/agent-<agentId>.jsonl (the
// manifest's SubAgents): the host archives each as a child run of the
// session's run, linked at the Agent (Task) call that started it. The
// call is the one a meta.json beside the file names (toolUseId: a key
// many versions' sidecars, 2.1.101's among them, do not write), else
// the one whose result's record in the session log names the sub-agent
// (toolUseResult.agentId beside the tool_result block's tool_use_id,
// for foreground and background agents alike: SubAgentCalls with
// AgentIn "/toolUseResult" and Prefix "agent-"). A foreground agent's
// result is written when it ends: a file synced while it runs is linked
// at the session's latest part, without its call, and archived again at
// its call by the sync that finds the result (the archive package's
// loose links).
//
// Memory. The state kept across lines does not grow with the stream: a
// text or thinking block written from a snapshot is counted, not kept (a
// message id that keeps coming back does not accumulate them), and only
// the latest 1024 closed messages, answered tool calls (other than Task
// and Agent) and sidechain record uuids are remembered. A message id that
// comes back after leaving that window is written as a new message under
// its first key, tool blocks included; a tool_use id that comes back after
// its window is reported again and the assembler drops the repeat. The
// latest 1024 agent_progress message uuids are remembered (a repeat after
// that window would be written again). Per sub-agent, its prompt is kept
// until its first user record or its end; per pending SDK permission
// request, its tool id until the call's result: both grow with open
// sub-agents and open requests, not with lines. A Task or Agent call is
// kept while its sub-agent may still have records to come: until its
// result, and after it while its scope is open (a background agent, until
// its task_notification or a task_updated that ends it); then it is an
// answered call like any other, in the window of 1024, and out of it the
// latest-call entry of its id and its scope id's copy go with it (a
// record naming the id as its parent after that goes to the scope named
// after the id, the sub-agent's unless the id was reused by another Task
// call). A sub-agent scope's name stays taken for the stream (one map
// entry a sub-agent), so that a call reusing the id gets a scope of its
// own. A call without its result is kept whole, however long: its result
// may come late, and otherwise the host lists it dangling (spec 6.3).
// The field cache (fields.go) is reset at every
// call: the SDK reuses a call's document slots in the next.
//
// Ignored and unmapped (spec §6.8). Lines of a known type that carry
// nothing the transcript has a place for are ignored deliberately:
// system/ status, hook_started, a successful hook_response, task_progress,
// task_updated other than an open background agent's kill or failure,
// compact_boundary, turn_duration, stop_hook_summary,
// local_command (a session log's echo of a local slash command),
// informational below level warning, notification,
// background_tasks_changed, session_state_changed, files_persisted,
// elicitation_complete, local_command_output, permission_denied (the
// call's result, with its tool_result_meta, says so), plugin_install
// other than a failure, scheduled_task_fire (a session log's notice
// that a scheduled task fired: the prompt it delivers is a user record
// of its own), thinking_tokens (a live estimate for a spinner, not the
// billed usage the message states), a memory_recall whose memories are
// named by path alone (read for the model; the record holds no text);
// the SDK's
// tool_progress, tool_use_summary
// (the UI's summary of calls the transcript holds), prompt_suggestion,
// auth_status without an error, conversation_reset (read for the cost); a
// task_started or task_notification of a background shell; a
// rate_limit_event that is not a rejection; control_request lines other
// than can_use_tool and control_response lines that answer nothing
// pending, control_cancel_request, keep_alive; session-log bookkeeping
// (summary, file-history-snapshot, file-history-delta, queue-operation,
// last-prompt, ai-title, custom-title, tag, pr-link, bridge-session,
// teleported-from, continued-in, task-summary, attribution-snapshot,
// speculation-accept, content-replacement, marble-origami-commit and
// -snapshot, and the settings records permission-mode, mode,
// agent-name, agent-color, agent-setting, worktree-state, atis-latch);
// system/away_summary (the CLI's note that the user was away); progress records other than
// agent_progress (hook, bash, MCP and search progress of a tool whose
// result follows). Everything else unknown is counted by native type:
// "system/<subtype>" for unknown subtypes; "attachment/<type>" for an
// attachment of a type not named under Attachments; "stream_event/<t>" for unknown
// stream payloads; "block/<t>" for unknown content blocks, and for each
// delta of one streamed (whatever the delta's type: a text_delta of an
// unknown block is not the model's text; the message keeps its other
// blocks and its usage, spec §6.8); "delta/<t>" for unknown deltas of a
// known block; "non_json" for
// text that is not JSON. SSE framing (event:, id:, retry:, comments,
// data: [DONE]), ping, stream deltas whose content is written when their
// block or message closes (input_json_delta, signature_delta,
// citations_delta, content_block_stop, message_delta), a
// container_upload block (a file put in the code execution container), a
// repeated init, a
// repeated agent_progress message, can_use_tool requests and their
// answers, and the lines of a pretty-printed document are declared
// ignored too (Out.Ignored), so that every raw line is accounted for.
// Those stream events also reopen the message being streamed (which
// only refreshes it): the host closes a message no record has named for
// 64 raw lines, and a tool's input may stream as hundreds of
// input_json_delta events before its block stops.
//
// Notices. Warnings of the step, not errors of the provider (the run's
// own records say how it ended): a session log's <task-notification> (a user
// record or a queued command: the notice the model gets when a
// background agent or shell ended) whose <status> is not completed
// (killed, failed: "background task <task-id> ended <status>: <summary>";
// a session log keeps no other record of it, the task's own file ends
// with its log whatever happened); an assistant message flagged aborted
// (SDK 0.3.214: truncated by an interrupt, no stop_reason received, its
// text may end mid-word; the message's stop reason is "aborted"); a
// system/status whose compact_result
// is failed (a compaction that failed, with its compact_error); a
// stream-json hook_response
// (--include-hook-events) whose outcome is not success (the hook's name,
// outcome, exit code and stderr, as the session log's hook attachments);
// a session log's hook_system_message and max_turns_reached attachments;
// a system/informational notice at level warning or error ("Usage limit
// reached ..."); the SDK's mirror_error (a batch its session store could
// not append); a session_writes_lost (the CLI could not write its
// session log or config for lack of disk space: ENOSPC or EDQUOT, and
// what it lost); a system/plugin_install whose status is failed (a
// marketplace plugin that did not install: its name and error); an
// auth_status error; the CLI's model_refusal_fallback,
// model_refusal_no_fallback and model_fallback (the model that refused,
// the refusal's category and explanation, the model retried on); and a
// Messages API fallback block
// (the requested model declined, trigger and category, and another model
// answered: no part of the answer).
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the first
// cwd a line states (every session-log line, the stream's init line);
// Claude names no repository root (gitBranch says only that there is one).
package claude
