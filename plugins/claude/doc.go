// Package claude is the twasm normalizer for Claude Code and the Anthropic
// Messages API. It is a plain Go package (tests, fuzzing and the native
// baseline run it directly through sdk.Driver); plugins/claude/wasm is the
// two-line WebAssembly entry point.
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
//
// Pretty-printed JSON is reassembled with sdk.DocBuffer: a non-JSON line
// that opens an object or array starts an accumulation that ends when the
// brackets balance (the text is then indexed) or when an unindented JSON
// line arrives (the accumulated lines are then counted as "non_json").
//
// # Decisions
//
// Status. A result line is the terminal event: subtype "success" with
// is_error false is ok; is_error true or any other subtype is an error
// whose text is the result text (falling back to errors[] and the
// subtype). Several init…result cycles (background agents) are read to the
// end; the last result's status wins. A top-level "error" on an assistant
// line (authentication_failed, ...) is an error at abi.LevelError. A stream
// with no result reports no terminal status (the host makes it
// "incomplete"), except: a session log has no result record by design, so
// a session log is reported ok at the end (error, at the terminal level,
// when it carried an error field); an Anthropic response object, or an SSE
// stream that reached message_stop, is ok; an SSE "error" event is a
// terminal error.
//
// Usage. Every assistant message carries its own usage (input_tokens is
// input + cache_creation + cache_read; the last figure reported for a
// message wins, since message_delta counters are cumulative). The step's
// usage is the sum of the result lines' usage (each result covers its own
// cycle); messages closed after the last result (a cut stream, a session
// log, an API response) are added at the end. Sub-agent messages are not
// added to the step total: Claude's result.usage does not include them
// either; they carry their usage on their own messages. total_cost_usd is
// cumulative over the process, so it is reported in "set" mode.
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
// of server tools; status is "completed", "failed" (is_error),
// "interrupted" (Bash tool_use_result.interrupted) or "declined" (the
// CLI's rejection text). A tool_result that is an array of text items is
// joined with newlines; an array holding anything else (images) is kept as
// its JSON text. Tool results are not repeated as message.user blocks:
// tool.result already carries them, and large outputs would be stored
// twice.
//
// Thinking. A thinking block whose text is empty but that carries a
// signature (newer models omit the text) is kept as a thinking block
// marked redacted, since the reasoning exists but is withheld;
// redacted_thinking is a redacted thinking block.
//
// User messages. A user prompt is a message.user with origin "prompt".
// isMeta, isSynthetic and isCompactSummary records, and the CLI's echoes
// of local commands (<command-name>, <local-command-stdout>), have origin
// "injected_context". A user line holding only tool results produces no
// message.user.
//
// Sub-agents. A line with a non-null parent_tool_use_id belongs to the
// scope named by that tool id (opened on first sight with the sub-agent
// type and description from the line, the Task/Agent call or
// system/task_started). A session-log sidechain (isSidechain) is attached
// to the Task/Agent call whose prompt matches its first record, else to
// the latest Task/Agent call without a result; later records follow their
// parentUuid. A scope closes with its tool's result, or, for background
// agents (async launch), with system/task_notification.
//
// Memory. The state kept across lines does not grow with the stream: a
// text or thinking block written from a snapshot is counted, not kept (a
// message id that keeps coming back does not accumulate them), and only
// the latest 1024 closed messages, answered tool calls (other than Task
// and Agent) and sidechain record uuids are remembered. A message id that
// comes back after leaving that window is written as a new message under
// its first key, tool blocks included; a tool_use id that comes back after
// its window is reported again and the assembler drops the repeat.
//
// Unmapped. Lines that carry nothing the transcript has a place for are
// counted by native type: "system/<subtype>" for hook_started,
// hook_response, status, api_retry, compact_boundary, task_progress,
// task_updated and unknown subtypes; "rate_limit_event"; control_*;
// session-log bookkeeping records (summary, file-history-snapshot,
// queue-operation, attachment, last-prompt, ai-title); "stream_event/<t>"
// for unknown stream payloads; "block/<t>" for unknown content blocks;
// "non_json" for text that is not JSON. Blank lines and SSE framing
// (event:, id:, retry:, comments, data: [DONE]) are not counted: they are
// the wire format, not content.
package claude
