// Package pi is the twasm normalizer for the Pi coding agent (pi-mono's
// coding-agent), and for the agents that write its session format: OMP
// and Prime (format-compatible forks) and OpenClaw (which embeds Pi). It
// is a plain Go package (tests, fuzzing and the native baseline run it
// through sdk.Plugin.Driver); plugins/pi/wasm is the two-line WebAssembly
// entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/pi/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
//   - session: the session file, JSONL, one per session. Its first line
//     is the header {type: session, version, id, timestamp, cwd,
//     parentSession?} (version 1 files name provider, modelId and
//     branchedFrom there, and their entries have no id); OMP puts a
//     rewritable {type: title} line before it. Every other line is an
//     entry {type, id (8 hex digits), parentId, timestamp, ...}: message,
//     model_change, thinking_level_change, compaction, branch_summary,
//     custom, custom_message, label, session_info. The entries form a
//     tree by parentId; Pi only appends.
//   - json: `pi --mode json` on stdout: the same header, then the agent's
//     events (agent_start, turn_*, message_start/update/end,
//     tool_execution_*, auto_compaction_*, auto_retry_*, agent_end).
//     message_end carries every message whole (the prompt, each response,
//     each tool result), so it is the one mapped; the others are declared
//     ignored, except agent_end (the terminal event: error when the last
//     response ended in an error, else ok), a failed auto_retry_end (an
//     error the provider reported) and auto_compaction_end (as a
//     compaction entry).
//
// The format is the content's: agent events exist on stdout only, so a
// stream holding one is json; else the format the host passed, else
// session. A session file has no terminal event: it is reported with
// NoTerminal and the host settles its status by the session rule of spec
// §6.7. A session file read in the middle of a turn (`twasm sync`
// reads files Pi still writes) has nothing more to tell it by: Pi
// appends a message whole once it ended (message_end) and writes no
// turn's end (agent_end is on --mode json's stdout only), so only the
// rule's cases, a response the user aborted and a log ending on
// thinking are incomplete (a log ending on a call's result reads ok).
//
// # Decisions
//
// Branches. The conversation is the active branch, the chain of parents
// back from the last entry; an entry whose parent is not the entry read
// before it shows that the user went back in the tree (/tree, /fork in
// place) and went on from an earlier entry, leaving the entries after it
// as a branch. The transcript is append-only and written as the session
// is read, and the entry that leaves a branch comes after the branch
// itself, often in a later sync (sync archives a growing session part by
// part, and `record`, `import` and `sync` of the same bytes must write the
// same transcript). So the branch's messages, tool calls and results stay
// where they happened, in the order Pi wrote them, and the entry that
// leaves the branch adds a warning that names it: the entry the
// conversation goes on from, and the first and last entry ids of the
// branch with its counts of entries and messages; every message carries
// its entry id as its id, so the warning marks them. Moving the branch
// into a child run instead would need the whole session held until its
// end (in the sandbox's memory, however long the session) and would still
// differ between a whole import and a sync that had already written the
// branch as the conversation. A branch_summary entry (the summary Pi asks
// the model to write of the branch left) is a message.user of injected
// context: the model sees it, the user did not write it. An entry whose
// parent the file does not hold before it is a warning. The plugin sees
// the parts archived before replayed (capture.Agent.Replay), so a branch
// is seen whichever part its entries fall into. An entry read a second
// time (a file copied after itself) is declared ignored.
//
// Compaction. A compaction entry's summary replaced the conversation
// before firstKeptEntryId in the model's context: it is a message.user of
// injected context, with a warning naming the first entry kept and the
// tokens of context it replaced (tokensBefore). The turns it summarizes
// are the ones above it, and no turn is made up from it. Version 1 names
// the first entry kept by its index among the file's lines (a warning
// says which line).
//
// Forks and sub-agents. A header naming the session it was forked from
// (parentSession, v1 branchedFrom: a file path or a session id) is a
// warning; a fork copies the parent's entries into the new file
// (SessionManager.createBranchedSession for /fork, forkFrom for a session
// forked from another project: the entries as they were, their
// timestamps kept, after a new header dated when the fork was made), so
// the entries dated before the header's timestamp, up to the first that
// is not, are the parent's turns repeated as context: they are declared
// ignored as "(forked history)" (they stay in the tree the fork's own
// entries go on from), counted and named in a warning, and the fork's
// messages, calls and usage are only what it did itself. The parent is another
// file, hence another run: a plugin has no way to link two runs, so the
// link is the warning's (the host could resolve it once stores declare
// their sessions; see "Store" below). A sub-agent whose conversation the
// session holds is a child run (spec §6.10): Pi's subagent extension keeps
// each agent it ran in its tool result's details.results[] ({agent, task,
// exitCode, messages, stopReason, errorMessage}); each is a scope linked
// to the call, named after the agent, described by its task, with its
// messages (its first, the prompt, else the task as its message.user),
// tool calls and results (the extension keeps a result twice: once is
// written; a call reusing the id after its result, below, has its own),
// closed ok, or error when it exited non-zero or its response
// ended in an error or was aborted. Its usage stays on its messages, not
// in the step's totals (as Claude's sub-agents); its errors are the step's
// errors with its scope. OMP's sub-agents in files of their own are runs
// of their own.
//
// Messages. The message roles: user (a string or text and image parts)
// is the prompt; assistant is a message.assistant with its text,
// thinking (an empty thinking with a thinkingSignature, or one marked
// redacted, is a redacted thinking block: the model reasoned, the text is
// withheld) and toolCall parts (a tool_use block each, then a tool.call);
// toolResult is a tool.result (below); bashExecution, a command the user
// ran himself ("!cmd"), is a tool.call named bash with its tool.result
// (exit code, output, cancelled); custom (an extension's message in the
// model's context), branchSummary and compactionSummary are message.user
// of injected context; system (the system prompt, later versions) a
// message.user of origin system_prompt: its content, or, where that is
// empty, its sections (the prompt's named parts, {preamble, cwd, docs,
// rules, tools, ...}), one block each in their order; a system message
// stating only tools added or removed (their schemas) makes none.
// custom_message entries are
// injected context too. Images are not mapped (the transcript has no
// block for them); the raw capture keeps them. A message's id is its
// entry id (none in version 1 files and --mode json).
//
// Tools. A toolResult's output is its text parts joined by newlines. Its
// status: error when Pi marked it isError; the bash tool states a failed
// command's exit code as the output's last line ("Command exited with
// code N"), which is the result's exit_code and, when not 0, makes it an
// error whatever isError says ("exit code N: <the line before>"); a
// command aborted ("Command aborted") or timed out ("Command timed out
// after N seconds") is cancelled, and so is a call Pi skipped for the
// user's queued message ("Skipped due to queued user message."); a call
// an extension blocked without a reason ("Tool execution was blocked",
// agent-loop.ts) is denied; one blocked with a reason stays an error, its
// text the reason: it is the same block (prepareToolCall writes
// createErrorToolResult(reason || "Tool execution was blocked"), isError
// true), but the session keeps only the reason as the result's text,
// with details {}, the same shape as a tool that threw, a tool not
// found or arguments that failed validation (pi-mono 83378aa, and the
// later 02c72186 the code index holds), so the log cannot tell it from a
// failure and calling it denied would be a guess. Another error's text is the output's first line. Pi runs no tool of a response that ended in an error or was
// aborted: such calls get a cancelled result saying so, unless a result
// for one follows at once. Call ids: model servers make them unique per
// response, not per session (a local one names every call call_1), so a
// call naming the id of a call that has its result is a call of its own
// with a result of its own. Apart from a sub-agent's result kept twice
// (the second dropped while no call names the id between them), the
// plugin drops no call or result by its id (a replayed entry is dropped
// by its entry id): every assistant message is a message of its own,
// its tool_use blocks naming the ids, which is how the host tells a
// reused id from the same call again, pairs each result with its call,
// keeps a call's first result and takes a call repeated before its
// result for the same call. Kinds: bash → execute (with its command);
// read, ls → read; edit, write → edit; grep, find → search; everything else
// (extensions' tools, subagent) → other.
//
// Usage and cost. Every assistant message states its usage: input (read
// neither from nor written to a cache), output, cacheRead, cacheWrite. The
// transcript's input_tokens is every input token, input + cacheRead +
// cacheWrite; the message carries its own figures and the step's are their
// sum ("add"). The cost Pi states for each call (usage.cost.total, USD,
// from the model's prices) is added to the step's cost, 0 included.
//
// Model and metadata. The header gives the session id. The step's model
// is the latest one named: a model_change entry (the model the next
// responses come from) or an assistant message's model (the one that
// answered); a v1 header's modelId until then.
//
// Status and errors. A response that ended with stopReason error is an
// error the provider reported (its errorMessage), so a session whose last
// answer failed is "error" by the session rule; one aborted by the user
// (stopReason aborted) is a warning, as a cut response is no provider
// failure, and a status incomplete below the terminal level, so a
// session whose last answer it is is "incomplete" by the session rule,
// as a Codex turn ending in turn_aborted is (a later answer makes it ok
// again); one cut at the output token limit (stopReason length) is a
// warning.
// A compaction that failed (--mode json) is a warning.
//
// Unmapped. thinking_level_change, session_info (a display name), label
// (a bookmark), custom (an extension's state, outside the model's
// context), OMP's title line, a replayed entry and the lifecycle events
// of --mode json are declared ignored. Text that is not JSON is counted
// as "non_json", a JSON value that is not an object as "non_object", an
// object without a type as "(no type)", an entry or event of a type not
// known here by its type (an entry's place in the tree is kept), a
// message of an unknown role as "message/<role>".
//
// # Store
//
// Pi keeps one file per session under ~/.pi/agent/sessions/ (the agent
// directory is $PI_CODING_AGENT_DIR when set, else ~/.pi/agent; builds
// renamed by their package use <NAME>_CODING_AGENT_DIR and ~/.<name>/agent),
// as sessions/--<cwd with / and : replaced by ->--/<ISO time with : and .
// replaced by ->_<session uuid>.jsonl: pattern "*/*.jsonl". OMP keeps the
// same layout under ~/.omp/agent/sessions/ and its sub-agents as
// <session>/<agent>.jsonl beside <session>.jsonl; OpenClaw under
// ~/.openclaw/agents/*/sessions/*.jsonl. Pi keeps sessions until the user
// deletes them (no retention). The manifest declares these three stores
// (abi.Store), so sync and doctor find them without a sync.json entry.
//
// The package uses no reflection and no goroutines; it builds for wasip1
// with Go and with TinyGo. keys (sdk.Plugin.Keys) lists every object key
// it reads; TestKeysCoverGets keeps the list complete.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the session
// header's cwd; Pi names no repository root.
package pi
