// Package copilot is the twasm normalizer for the GitHub Copilot CLI. It is
// a plain Go package (tests, fuzzing and the native baseline run it through
// sdk.Driver); plugins/copilot/wasm is the two-line WebAssembly entry point.
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
// line or an ephemeral event was seen, else "events-jsonl".
//
// # Decisions
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
// Tools. One tool.call per toolCallId, from toolRequests or
// tool.execution_start, whichever comes first; arguments given as an
// object or as a JSON string both become a JSON object. One tool.result
// per id from tool.execution_complete: result.content (detailedContent
// when content is empty) is the output; success:false is an error whose
// text is error.message, with status "declined" for error.code "denied"
// and "failed" otherwise. A completion that arrives before its call is
// held until the call is reported (at the end, the host synthesizes the
// call). Kinds: bash, shell, powershell → execute (with arguments.command);
// view → read; edit, create, str_replace → edit; grep, glob → search;
// web_fetch → fetch; report_intent and the todo tools → think (they
// record the agent's plan); everything else → other. A call without a
// completion stays dangling.
//
// User messages. user.message content is the prompt (origin "prompt").
// transformedContent is the prompt as the model received it, wrapped in
// context the CLI injected (<current_datetime>, <system_reminder>): the
// text around the prompt becomes injected_context blocks before and after
// the prompt block, so nothing the model saw is lost, the prompt is not
// repeated and the injected text is not taken for the user's; when the
// prompt is not found inside it, transformedContent is one
// injected_context block. system.message is a message.user of its own
// whose block has origin system_prompt. Attachments are not mapped.
//
// Metadata. session.start gives the session id (result.sessionId as a
// fallback) and copilotVersion as the provider version. The model is the
// latest session.model_change (the model that produced what followed),
// else the first assistant.message model.
//
// Usage. Copilot states usage per API call (assistant.usage, ephemeral, so
// stdout only) and as totals per process (session.shutdown modelMetrics,
// summed over models). A process's shutdown totals replace the per-call
// sum of that process, and a log resumed with --resume (session.resume)
// adds one segment per process; the plugin keeps the sum and reports it in
// "set" mode, so nothing is counted twice. inputTokens is taken as every
// input token, cached included. A stream with neither gives the sum of the
// messages' outputTokens. premiumRequests is not a cost in USD and is not
// reported.
//
// Status. result is the terminal event: exitCode 0 is ok, anything else an
// error whose text is the last session.error message, else "copilot exited
// with code N". events.jsonl has no result line: session.shutdown ends a
// complete log, ok for shutdownType "routine", else an error
// (errorReason, else the shutdown type); after a result line a shutdown
// does not change the status. session.error is an error at
// abi.LevelError. A log that stops before its shutdown is incomplete.
//
// Final text. The content of the last assistant.message with content.
//
// Unmapped. Lifecycle markers and previews of what a later event carries
// whole are consumed without a record: assistant.turn_start/turn_end,
// assistant.tool_call_delta (toolRequests has the arguments),
// tool.execution_partial_result (execution_complete has the output),
// session.idle. Everything else the transcript has no place for
// (session.tools_updated, session.mcp_server_status_changed,
// session.skills_loaded, mcp.tools.list_changed, session.compaction_*,
// new types) is counted by type; text that is not JSON as "non_json"; a
// JSON value that is not an object as "non_object"; an object without a
// type as "(no type)".
package copilot
