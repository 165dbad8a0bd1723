// Package copilot is the twasm normalizer for the GitHub Copilot CLI. It is
// a plain Go package (tests, fuzzing and the native baseline run it through
// sdk.Plugin.Driver); plugins/copilot/wasm is the two-line WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/copilot/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
// Both formats are JSONL with the envelope {type, data, id, timestamp,
// parentId, ephemeral?}:
//
//   - json (copilot -p ... --output-format json): stdout, with ephemeral
//     events (deltas, usage, tools_updated) and a final result line.
//   - events-jsonl (~/.copilot/session-state/<id>/events.jsonl): the same
//     events minus the ephemeral ones, and no result line.
//
// The format is reported at the end of the stream: the format hint the
// host passed when it is one of these two (the recorder knows what it
// captured, and a cut stdout looks like a log), else "json" when a result
// line, an ephemeral event or a delta (stdout only) was seen, else
// "events-jsonl".
//
// # Decisions
//
// Replays. Every envelope has an id; an event whose id was already read
// is a replay of it (a log copied after itself, seen in a real
// recording) and is declared ignored, so nothing is counted twice.
//
// Messages. An assistant message is keyed by its messageId: message_delta
// chunks append to its text block, and the final assistant.message
// replaces that block with its content, so the text is written once. Its
// blocks sit in fixed slots, reasoning, then text, then one tool_use per
// toolRequests entry, whatever order deltas and the final message arrive
// in. The final message closes it; its outputTokens are the message's
// usage. A message that only got deltas is closed at the end of the stream.
// A messageId whose final message was written is not written again: a
// later delta or a replay of the message only adds tool calls not seen.
//
// Thinking. reasoningText is the message's thinking block.
// assistant.reasoning (and reasoning_delta) belongs to the message being
// streamed, else to the next message (it is emitted before the text it
// led to); a message's own reasoningText replaces it. A message that has
// only encryptedContent or reasoningOpaque gets an empty thinking block
// marked redacted: the model reasoned, but the text was withheld.
// Reasoning that no message followed is a message of its own.
//
// Tools. One tool.call per call (see Call ids), from toolRequests,
// tool.execution_start, tool.user_requested (a command the user ran
// himself, "!ls": local_shell) or external_tool.requested (a client-side
// tool the CLI asks the SDK's host to run), whichever comes first; arguments given as an
// object or as a JSON string both become a JSON object. One tool.result
// per call from tool.execution_complete: result.content (detailedContent
// when content is empty) is the output; its toolName (else the
// telemetry's tool) names a call the log never showed. An external
// tool's outcome is that completion too: external_tool.completed only
// tells the client to dismiss its prompt (ignored). The shell tools
// report success:true for a failed command and state the exit code as
// the output's last line ("<shellId: X completed with exit code N>",
// earlier "<exited with exit code N>"), and builds of 2026 also as
// shellExecution.exitCode (stated apart because the persisted output may
// be stripped; it wins): it is the result's exit code, and a non-zero one
// makes it an error ("exit code N: <last output line>").
// Statuses are the transcript's closed set: success is "ok";
// success:false carries error.message (else the code) as its error, with
// status "denied" for error.code "denied" or "rejected" (the user or a
// policy refused it), "cancelled" for a cancellation or timeout code, and
// "error" otherwise. A completion that arrives before its call is held
// until its agent's call of the id is reported (see Call ids); one whose
// call never comes is reported when its sub-agent ends, or at the end of
// the stream, in the scope of the agent that reported it, and the host
// synthesizes the call there. Kinds: bash, shell, powershell → execute (with arguments.command);
// view → read; edit, create, str_replace → edit; grep, glob → search;
// web_fetch → fetch; report_intent and the todo tools → think (they
// record the agent's plan); everything else → other. A call without a
// completion stays dangling, unless a permission.completed refused it
// (denied-by-rules, denied-interactively-by-user, ...: denied; cancelled:
// cancelled): then, when no completion came, that outcome is its result,
// reported at the end with the refusal and any feedback as its error. A
// call seen only in assistant.tool_call_delta
// (the stream was cut while the model wrote it: toolRequests never came)
// is reported at the end once its id and name are known (spec §6.12): a
// tool_use block in the message being streamed and a dangling tool.call
// whose input is the arguments streamed so far (whole, else their
// complete members, else the raw text), with a warning.
//
// Call ids. A model server may give calls of different responses one id
// (ids unique per response, not per session: a custom provider's server
// names every call call_1). A new message's toolRequests, or a
// tool.execution_start, naming the id of a call whose completion was read
// is a new call, with its own result or refusal, as the host reads it
// when its tool_use block is in another message (a tool.execution_start
// or tool.user_requested alone writes none: the host keeps such a call
// the first one, and its completion a second); a message read again (its
// messageId written already) and a repeat before the completion are the
// first call, and a completion sent again is left to the host, which
// keeps a call's first. What the log cannot tell apart stays the first
// call's: a completion of the new call that comes before the call is
// taken for a second completion of the first, and a new call cut while
// it streamed (assistant.tool_call_delta only) is not recorded from its
// deltas. Calls are kept by the agent that made them and their id: a
// sub-agent's call that reuses the id of a call of the main agent
// waiting for its completion (the task call that started it, or a call
// run beside it) is a call of the sub-agent's scope. A completion
// answers the call of its own agent (the line's agentId) of that id; one
// whose line names no agent, when the main agent made no call of the id,
// answers a sub-agent's call of that id still waiting for its completion
// (the oldest first), as builds that write no agentId on a sub-agent's
// completion need; one whose line names a sub-agent that made no call of
// the id yet is that sub-agent's, held for its call, never another
// agent's. A held completion is kept by its agent and id too: it
// answers its own agent's call, and one whose line named no agent a
// sub-agent's call of the id when the main agent's did not come first.
// A refusal (permission.completed) is matched as a completion is.
//
// User messages. user.message content is the prompt (origin "prompt").
// transformedContent is the prompt as the model received it, wrapped in
// context the CLI injected (<current_datetime>, <system_reminder>): the
// text around the prompt becomes injected_context blocks before and after
// the prompt block, so nothing the model saw is lost, the prompt is not
// repeated and the injected text is not taken for the user's; when the
// prompt is not found inside it, transformedContent is one
// injected_context block. A user.message the CLI wrote itself is
// injected context, all of it: one whose source names a skill's hidden
// context ("skill-pdf", content "<skill-context name=...>"), another
// agent ("agent-<id>"), a schedule, the system, retrieval or
// instructions, and autopilot's continuation (isAutopilotContinuation);
// any other source, or none, is the user's, and a sub-agent's first
// message is its prompt whatever its source. An empty content inside a
// transformedContent is no block. skill.invoked (a skill loaded: the
// user's slash command, the agent's skill tool, a custom agent's
// preloaded skills) is declared ignored: the CLI gives its content to
// the model as the skill-<name> user.message it writes right after it,
// which carries it. Should none come before the agent's next response
// (or its sub-agent's end, or the stream's), the content is written as
// that message's would have been: a message.user of one
// injected_context block, in the agent's scope, at the event's time.
// system.message is a message.user of its own
// whose block has origin system_prompt; system.notification (a
// background agent or shell finished) one whose block is
// injected_context: the CLI gave it to the model, the user did not
// write it. Attachments are not mapped.
//
// Sub-agents. A sub-agent (the task tool, a custom agent) writes its
// events into the same log, interleaved with the main agent's and with
// other sub-agents' running in parallel; each carries the envelope's
// agentId (older builds: data.parentToolCallId), and the events of the
// main agent have none. Each sub-agent is a scope of its own, so the host
// writes it to a child run (spec §6.10): subagent.started opens it,
// linked to its toolCallId (the call that started it), named by
// agentName, described by the call's description argument; its messages,
// tool calls and results go into it, a result always beside its call. Its
// message.user is the prompt the parent gave it: its own user.message,
// else (a sub-agent that failed before it ran) the call's prompt
// argument. subagent.completed closes it ok (cancelled when marked
// cancelled), subagent.failed with error and its error, which is also an
// error the provider reported, listed with the sub-agent's scope. A
// sub-agent still running when the stream ends is closed by the host with
// the step. An event naming a sub-agent whose start the log does not hold
// opens it then. A subagent.started naming a sub-agent that ended (the
// 1.0.7x builds name a sub-agent by its task call's id, and a call may
// reuse the id of one whose sub-agent ran) starts a sub-agent of its
// own, scope <id>#2 (#3, ...), to which the events naming the id go from
// then on. A sub-agent's answer is its parent call's result, not
// the step's final text, and its model does not name the step's.
//
// Metadata. session.start gives the session id (result.sessionId as a
// fallback) and copilotVersion as the provider version. A log holding a
// second session (a session.start or session.resume naming another id:
// a recorder that appended a second run's events.jsonl to the first) is
// read into the same step, the first session's, with a warning naming
// both ids. The model is the
// latest session.model_change, session.auto_mode_resolved chosenModel or
// session.shutdown currentModel (the model in use last; a model_change to
// "auto" names none), else the first model any other event names:
// session.start selectedModel, session.tools_updated, model.call_start,
// model.call_failure, assistant.usage, assistant.message, the first key
// of session.shutdown modelMetrics.
//
// Usage. Copilot states usage per API call (assistant.usage, ephemeral, so
// stdout only) and as totals per model at session.shutdown (modelMetrics).
// Those totals are the session's so far: a process resumed with --resume
// restores them, so its shutdown repeats the earlier figures plus its own
// (seen in real logs). Each model's shutdown figures therefore replace
// its earlier ones, unless one went down (a counter that started again:
// then they add); per-call figures count until a shutdown covers them,
// and stand when none does (a process that died). The sum is reported in
// "set" mode, so nothing is counted twice. inputTokens is every input
// token, cache reads and writes included. A shutdown's totals count the
// sub-agents' calls too (in real logs its outputTokens is the sum of
// every message's, the sub-agents' included), and each sub-agent's
// messages, with their outputTokens, are its child run's, counted there:
// their outputTokens are left out of the step's output, so the session
// counts them once (its input, cache and reasoning, which no message
// splits, stay the step's). A stream with neither gives the sum of the
// main agent's messages' outputTokens. premiumRequests is not a cost in USD
// and is not reported.
//
// Status and errors. session.error, model.call_failure,
// subagent.failed and an assistant.usage whose call the content filter
// blocked or cut (contentFilterTriggered, or finishReason
// content_filter: "content_filter: ...", as the OpenAI plugin reads a
// finish_reason content_filter) are errors the provider reported: each is reported with
// sdk.Out.Error, so the host lists it in the step's errors, with the
// errorType, statusCode and errorCode after the message ("... (rate_limit,
// 429)") and errorCode, else statusCode, else errorType as its code.
// assistant.turn_retry {turnId, reason, model} (model.turn_retry, its
// other name) is the CLI calling the model again for a turn whose call
// failed: the failed call is an error of the step, listed once (the
// model.call_failure or session.error before the retry when the log
// holds one, since model.call_failure is ephemeral and events.jsonl
// keeps only the retry; else the retry's own, its reason and status
// the text, "(copilot retried the turn)" after them), and a warning
// says the turn was retried. The status is the final outcome's: an
// answer after the retry leaves the session ok, the error still listed;
// a log that ends on the retry ends on an error. A HydraFusion turn's
// failures (experimental) are errors the provider reported, its reason
// the code: session.fusion_route_failed ("HydraFusion routing failed
// (reason): errorMessage; the turn fell back to fallbackModel") and
// assistant.fusion_phase_failed of status failed ("HydraFusion <kind>
// phase on <model> failed (reason): errorMessage; the turn went on in
// phase <degradedToPhaseId>"); an answer after one leaves the step ok,
// by the session rule, and a log that ends on one ends on an error. A
// phase cancelled is a warning. result is the terminal event of --output-format json: exitCode 0
// is ok, anything else an error whose text is the last provider error,
// else "copilot exited with code N"; a stdout cut before it has no
// terminal status (incomplete, or error when a provider error came). An
// events.jsonl log has no terminal event: it is reported with NoTerminal
// and the host settles it by the session rule of spec §6.7, whatever its
// routine session.shutdown says (a 429 that no answer followed is an
// error; a prompt without an answer or a call without its result is
// incomplete; else ok). `twasm sync` often reads the log in the middle
// of a turn: the CLI bounds each model turn with assistant.turn_start
// and assistant.turn_end, and a log whose last turn_start has no
// turn_end yet reports, at its end, a status incomplete below the
// terminal level ("the turn has not finished"), whatever came last (a
// call's result, a whole message); read again once the turn ended, it
// is settled as above. Only a log whose last event is a shutdown of type
// error (a crash) reports that as its terminal status (errorReason, else
// the type). Deltas (message, reasoning, tool call) exist on stdout only,
// so a stream holding them is json even without the ephemeral flag.
// session.warning is a warning of the step; abort leaves what was in
// flight unanswered or dangling, and one whose reason is
// autopilot_credit_limit (autopilot stopped at its --max-ai-credits
// limit) is also an error the provider reported, as Claude Code's
// error_max_budget_usd is. A session.task_complete (autopilot's
// task_complete call) with success true repeats the call's summary
// (ignored); with success false the CLI did not accept the completion
// and autopilot goes on working: a warning, and an error the provider
// reported at the stream's end only when no accepted completion came
// after it.
// A session.info of infoType rewind is a warning (the model sees the
// conversation from the rewound point on, and the shutdown's totals may
// leave out the requests it dropped, as a real log shows); other
// session.info notices are ignored. A session.compaction_complete's
// summaryContent, which replaces the conversation the model sees, is
// injected context of a message.user; a failed compaction is a warning.
// A session.truncation (the CLI dropped the oldest messages to fit the
// context window) and a session.context_cleared (the host cleared the
// conversation) are warnings, with the counts they state: the model no
// longer sees those messages; the transcript keeps them.
//
// Forks. The Copilot CLI's /fork (1.0.45; /branch is its alias since
// 1.0.64) and the SDK's sessions.fork RPC (experimental: sessionId, an
// optional toEventId the fork stops before, an optional name) make a new
// session holding the source session's events. Nothing public says how
// the fork's events.jsonl marks what it copied: the SDK's event schema
// (github/copilot-sdk nodejs/src/generated/session-events.ts at cc0438d,
// 2026-08-21) has no member naming a fork's source (session.start's
// detachedFromSpawningParentSessionId names the interactive session a
// detached remote-agent run continues, not a fork), its fork tests
// compare only the conversation the SDK reads back, and the CLI, whose
// source is not public, says only (changelog 1.0.47) that forked
// sessions show their origin in its sessions dialog. No public capture
// of a fork was found. So a fork is read as any session: what it copied,
// and any shutdown totals it repeats, count in both sessions' runs.
//
// Final text. The content of the last assistant.message with content.
//
// A hook.end with success false (a hook the user configured failed; a
// preToolUse hook's failure denies its call, which the completion says)
// is a warning naming the hook type and its error.message.
//
// Unmapped. Lifecycle markers and previews of what a later event carries
// whole are declared ignored (sdk.Out.Ignored): assistant.turn_start and
// turn_end, hook.start and a hook.end that succeeded, tool.execution_partial_result (execution_complete has the
// output), session.idle, permission.requested (the call is already
// recorded and stays dangling until it completes), permission.completed
// (see Tools), session.permissions_changed, session.usage_checkpoint,
// session.mode_changed, session.compaction_start, a user's abort, replayed
// events. So are the lines that repeat what an earlier
// line reported or that a later record carries (spec §6.8): a
// tool.execution_start of a call the assistant message's toolRequests
// reported, an assistant.message replayed with no new call, a
// message_delta of a message already complete, assistant.tool_call_delta
// (reassembled into the call its complete request, or the end of a cut
// stream, reports), reasoning held for the next message, a completion
// held until its call is reported, a skill.invoked whose skill-<name>
// user.message follows, a session.model_change to "auto" or
// to the model already reported, session.resume, session.tools_updated
// and assistant.usage restating what was reported, a routine
// session.shutdown with no totals, a system.message with no content. A
// shutdown that is not routine is a warning of its own (its error also
// decides the status at the end unless the log resumes). Everything else
// the transcript has no place for
// (session.mcp_server_status_changed, session.skills_loaded,
// mcp.tools.list_changed, subagent.selected,
// new types) is counted by type; text that is not JSON
// as "non_json"; a JSON value that is not an object as "non_object"; an
// object without a type as "(no type)".
//
// The package uses no reflection and no goroutines; it builds for wasip1
// with Go and with TinyGo. keys (sdk.Plugin.Keys) lists every object key
// it reads; TestKeysCoverGets keeps the list complete.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4):
// session.start's (or resume's) context.cwd, and context.gitRoot as the
// repository root.
package copilot
