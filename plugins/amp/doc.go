// Package amp is the twasm normalizer for Amp (Sourcegraph's coding
// agent, ampcode.com). It is a plain Go package (tests, fuzzing and the
// native baseline run it through sdk.Plugin.Driver); plugins/amp/wasm is
// the two-line WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/amp/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi and golden; each
// plugins/<provider> package exports its normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Format
//
// A thread is one JSON document, T-<uuid>.json, which Amp rewrites whole
// at every turn: {v, id, created (epoch ms), title?, env {initial {trees
// [{displayName, uri}]}}, meta {traces}, usageLedger?, messages [...]}.
// Each message is {role (user, assistant or info), messageId (a number
// counted up per thread), content [...], meta? {sentAt (epoch ms)},
// state? {type, stopReason, error}, usage?}. Content blocks are Anthropic's
// shapes with Amp's own tool result: text, thinking, redacted_thinking,
// tool_use {id, name, input}, and tool_result {toolUseID, run {status,
// result, progress, error {message}, reason}}. The shape was read from the
// readers of public peers (agentsview's internal/parser/amp.go, casr's Amp
// provider, ccusage's apps/amp) and Amp's own bundled code where public
// excerpts show it; no thread file under a licence that allows committing
// it was found (testdata/captures has none for Amp).
//
// Stream. `amp --execute --stream-json` writes Claude Code's stream
// shapes, one line each (ampcode.com/news/streaming-json, the manual's
// "Stream JSON Output"): system {subtype init, cwd, session_id (the
// thread, T-<uuid>), tools, mcp_servers}, user {message {role, content
// [text | tool_result {tool_use_id, content, is_error}]}}, assistant
// {message {content [text | thinking | tool_use], stop_reason, usage
// {input_tokens, cache_creation_input_tokens, cache_read_input_tokens,
// output_tokens, max_tokens, service_tier}}}, result {subtype, is_error,
// result, error?, num_turns, duration_ms}, each with parent_tool_use_id
// and session_id (stream.go). The init names the session and the working
// directory (Meta, format stream-json); a user line's texts are the
// prompt and its tool_result blocks the calls' results (ok, or an error
// when is_error, the content's text blocks joined); an assistant line is
// one model call, its tool_use blocks its calls (a Task call opens its
// sub-agent's scope, as in a thread); the result line is the terminal
// event: subtype success (or none) without is_error is ok, anything else
// an error whose text is its error, else its result text, else its
// subtype. A stream without a result is incomplete. Each assistant line's
// usage is its call's and the step's are their sum; a result that states
// a usage (none of Amp's examples does) is the run's total. input_tokens
// is the uncached prompt in a real output of amp 0.0.1775837683 and in
// the manual's tool usage example, but the announcement's example states
// the whole prompt there (12783 = 367 written + 12416 read): a figure
// equal to the two cache figures' sum is read as the whole prompt, so the
// cache is not counted twice. A line whose parent_tool_use_id names a
// Task call is its sub-agent's: its messages, calls and results go to
// that call's scope, its prompt (the call's, which the scope holds) is
// not repeated, and its tokens are its messages' (the child run's), not
// added to the step's. Amp names no model in its stream. No real stream
// under a licence that allows committing it was found (the real outputs
// read are an AGPL-3.0 project's test data and a peer's notes of the
// manual): testdata/golden/amp/stream_json_announcement is the
// announcement's example.
//
// The host reassembles a pretty-printed document into one line; a file
// rewritten in place is read again whole as a newer part of the same run
// (internal/archive), and message keys are the messageIds, so the
// messages a version repeats are the same messages. Within one stream
// (versions of a thread concatenated) a message is reported once: a later
// version of it adds only the results and calls it holds now (a run that
// ended since), never the message again. A thread has no
// terminal record: it is reported with NoTerminal and the host settles its
// status by the session rule of spec §6.7 (error when a provider error
// came after the last answer, incomplete when it ends on a prompt without
// an answer or on a call without a result, else ok). Amp writes an
// answer into the thread while it streams (the assistant message's
// state {type: "streaming"}, until complete, cancelled or error), and
// `twasm sync` often reads it then: a thread whose last message is
// still streaming reports, at its end, a status incomplete below the
// terminal level ("the turn has not finished"). A streaming message's
// usage is not reported (not final); a later version of it in the same
// stream is reported again whole, as a new version of the message (its
// id the same), with its usage; a later sync reads the new version of
// the document whole, which the archive keeps as the message revised.
// Nor are its calls (a tool_use block's input is what Amp wrote so
// far): each is reported once, from the message's finished version,
// or, when the input ends while the message still streams, at the end
// with the input last read (dangling: no result can have come).
//
// # Decisions
//
// Messages. A user message is the prompt (its text blocks, origin
// prompt; images are not mapped: no block holds them, the raw capture
// keeps them) and the tool results sent back to the model; its time is
// meta.sentAt. An info message holds Amp's own notes: a summary block
// (the thread was compacted, or continues from another thread) is a
// message.user of injected context; the others are not sent to the model
// and are not reported. An assistant message is one model call: its
// blocks in order, its time usage.timestamp (else meta.sentAt), its model
// usage.model, its stop reason state.stopReason. A message whose state is
// {type: "error"} is an error the provider reported (state.error.message),
// so a thread whose last call failed is "error"; one whose state is
// cancelled (the user stopped it) is a warning, and, as the thread's
// last message, a status incomplete below the terminal level (a cut
// turn, as a Codex turn_aborted is). The step's model is the
// latest that answered. Message keys are "m<messageId>" (the index in
// the array when there is none); a message of a role not known here is a
// warning.
//
// Tools. A tool_use block is a tool.call (its id, name and input; a Bash
// call's command is input.cmd). A tool_result block is that call's
// result, by run.status, as Amp's tool runner sets it: done is ok, with
// the result as its output (a string as it is; an object's output, content
// or diff string, else its JSON; run.progress when there is no result);
// a Bash result {output, exitCode} with a
// non-zero exit code is an error ("exit code N"), as every shell result
// in the transcript; error is an error with run.error.message;
// cancelled is cancelled and rejected-by-user denied, with run.reason
// when stated. A run still in-progress, queued or blocked-on-user when
// the document was written has no result yet (a later version holds it;
// at the end the host marks the call dangling); an unknown status is a
// warning, never read as success. A result in Anthropic's own shape
// {tool_use_id, content, is_error} (a thread converted from another
// agent) is ok, or an error when is_error. A second result for a call is not
// reported again. A call id reused after its call's result (model
// servers make ids unique per response, not per session: a local one
// names every call call_1) is a call of its own with a result of its
// own: calls and results are told per message and call id, so a thread
// read again whole at the next turn, whose earlier messages name the id
// too, gives the later call neither an earlier message's call nor its
// result; another message naming a call still without its result is
// that call. A Task call opens a scope once per id (a Task call reusing
// an id is the parent's call only). Kinds: Bash execute; Read, list_directory,
// get_diagnostics, read_mcp_resource, read_thread, todo_read read;
// edit_file, create_file, undo_edit, format_file, apply_patch edit; Grep,
// glob, codebase_search_agent (finder), find_thread search;
// read_web_page, web_search fetch; todo_write think; others (Task,
// oracle, MCP tools) other.
//
// Sub-agents (spec §6.10). A Task call runs a sub-agent: {description,
// prompt}. Its own turns are not in the parent thread, so its child run
// holds what the call states: the scope opens at the call, linked to it,
// named Task and described by the description, with the prompt as its
// message.user; the result closes it, its text the child's answer and its
// status the scope's (error, cancelled for a cancelled or rejected call).
// A Task without a result when the input ends leaves its scope
// incomplete. A scope is opened once per call (a later version of the
// thread opens none): a Task call that reuses the id of an earlier one
// (ids unique per response, not per session) opens a scope of its own,
// named by the id and a number (call_1#2, call_1#3, ...), which its own
// result closes.
//
// Forks. Amp forks a thread into a new thread file (ThreadService's
// forkThread and createForkedThread in Amp's own code, as the npm
// package @sourcegraph/amp 0.0.1767830505 ships it in dist/main.js):
// originThreadID names the parent, forkPointIndex is the index of the
// last message copied, relationships [{threadID: <parent>, type: "fork",
// role: "child", messageIndex, createdAt}] links it to the parent, and
// messages 0 to forkPointIndex are deep copies of the parent's, their
// usage with them; the parent gains {threadID: <fork>, type: "fork",
// role: "parent", ...}. The copied messages are the parent's, which its
// own run holds: a thread's messages up to its forkPointIndex are not
// reported (no prompt, call, result or usage of theirs), in every version
// of the thread read, so the fork's run holds and counts only what it did
// after the fork. A thread whose fork relationship names its parent
// (role "child") but states no forkPointIndex is read whole, with a
// warning, once per parent, that its copy counts in both runs. Threads
// linked otherwise copy no message (a handoff, createHandoffThread: a new
// thread whose draft prompt Amp wrote from this one, linked with type
// "handoff"; a mention); those links are not read. A
// fork whose messages were later edited back past its fork point is not
// known from Amp's code: such a thread would lose its new messages up to
// that index.
//
// Usage. An assistant message's usage is that call's: inputTokens the
// uncached prompt, cacheCreationInputTokens the part written to the
// cache, cacheReadInputTokens the part read from it (totalInputTokens is
// their sum, used only when none of them is stated), outputTokens the
// output. Amp's quirk: for OpenAI models (gpt-*, o1/o3/o4…) it states
// inputTokens 0 and files the whole uncached prompt under
// cacheCreationInputTokens; OpenAI bills no cache write, so for those
// models that figure is read as uncached input and no cache write is
// reported (the input total is unchanged). The evidence is agentsview's
// (kenn-io/agentsview 5386007, MIT: docs/internal/session-format-sources.md
// and internal/parser/amp.go, from real threads): totalInputTokens was
// the three buckets' sum in 172 of 172 usage records of four threads
// and three model families, and an OpenAI call's cacheCreationInputTokens
// is the prompt's uncached remainder beside its cacheReadInputTokens
// (17920, OpenAI's 128-token blocks, + 735 = 18655 in its gpt-5 fixture),
// not the whole prompt: the input is the three summed, cached tokens
// once (TestOpenAIPromptBuckets). Amp's manual and its CLI guide state
// no usage semantics; no licensed thread file was found to commit. The
// same source says a thread holds its main agent's calls only: the
// oracle's, the librarian's and sub-agents' calls are in no thread
// document, so a Task's child run states none of their tokens (unknown,
// not counted twice). The message carries its
// figures and the step's are their sum ("add"). Amp's credits
// (usage.credits, usageLedger) are not US dollars: no cost is reported.
//
// Unmapped. Text that is not JSON is counted as "non_json", a JSON value
// that is not an object as "non_object", an object without a messages
// array or a stream line's type as "(no messages)", a stream line of
// another type by its type. A document that reports nothing new (no
// message yet, or the same messages again) is declared ignored.
//
// # Store
//
// Amp keeps its threads in its data directory, $XDG_DATA_HOME/amp when
// set, else ~/.local/share/amp, on every OS (the CLI does not use the
// macOS or Windows application-data folders; peers read the same path
// everywhere), under threads/: pattern "T-*.json" under "threads". Before
// the threads were moved there, the VS Code extension kept them in the
// editor's globalStorage/sourcegraph.amp/threads3; that store is not
// declared (a sync.json entry reads it). Amp keeps threads until the user
// deletes them. The manifest declares the store (abi.Store), so sync and
// doctor find it without a sync.json entry.
//
// The package uses no reflection and no goroutines; it builds for wasip1
// with Go and with TinyGo. keys (sdk.Plugin.Keys) lists every object key
// it reads; TestKeysCoverGets keeps the list complete.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the
// thread's workspace tree (env.initial.trees[].uri, a file URI decoded)
// when it names exactly one; Amp names no repository root apart.
package amp
