// Package droid is the twasm normalizer for Factory's Droid CLI: its
// session store and droid exec's output. It is a plain Go package
// (tests, fuzzing and the native baseline run it through
// sdk.Plugin.Driver); plugins/droid/wasm is the two-line WebAssembly
// entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/droid/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi and golden; each
// plugins/<provider> package exports its normalizer. Everything else in the
// module is internal (README, Layout).
//
// Droid is closed source: the format below is what its session files hold
// as the public readers of them show it (Agent Sessions' and cass's
// fixtures, ccusage's Droid adapter, the shapes peers document), not what
// its code says; what no public file shows is said where it matters.
//
// # Format
//
// A session is a JSON Lines file, appended to: first
// {"type": "session_start", id, title, sessionTitle, owner, version, cwd},
// then {"type": "message", id, parentId, timestamp, message: {role,
// content}} whose content is Anthropic's blocks (text, thinking, tool_use
// {id, name, input}, tool_result {tool_use_id, content, is_error}). Beside
// it, <id>.settings.json is one JSON document Droid rewrites: the model,
// the provider it locked to, and tokenUsage {inputTokens, outputTokens,
// cacheCreationTokens, cacheReadTokens, thinkingTokens, totalTokens}, the
// session's totals so far. The messages state no usage of their own. The
// host hands both (a tree store, below): a line {"$twasm": "file", path,
// ...} before each file, the settings document compacted to one line,
// handed again whole when Droid rewrote it. A file given alone (twasm
// import of a session's JSONL) has no usage.
//
// Between the messages come Droid's own records, shown by peers' readers
// of the store (no licensed real session file holds them):
// {"type": "agent_turn_outcome", turnId, reason, resultKind} when a turn
// ends, {"type": "compaction_state", summaryText, summaryKind,
// anchorMessage, removedCount} when Droid compacted the conversation,
// {"type": "todo_state", todos} (the plan) and {"type": "session_end"}.
//
// A session log has no terminal record: the step is reported with
// NoTerminal and the host settles its status by the session rule of spec
// §6.7. A turn's outcome does not end the step either: one that went
// well (resultKind "success"; reason "completed" or "end_turn" without a
// resultKind) reports nothing, one whose resultKind or reason names an
// error ("provider_error", reason "error") is an error the provider
// reported (sdk.Out.Error), which that rule makes the step's status when
// no answer follows it, and any other is counted unmapped as
// "agent_turn_outcome/<resultKind>". `twasm sync` often reads a log in
// the middle of a turn: one that holds an agent_turn_outcome (this Droid
// writes them) and a new message after the last one reports, at its end,
// a status incomplete below the terminal level ("the turn has not
// finished"); read again after the turn's outcome, it is settled by the
// rule. A log without any outcome (an older Droid, or its first turn
// still running: they cannot be told apart) is left to the rule.
//
// # Format stream-json (droid exec)
//
// twasm record --provider droid -- droid exec --output-format stream-json
// "...": droid exec's events, one JSON object a line, as Factory's
// documentation of droid exec shows them and readers of it parse them
// (BloopAI/vibe-kanban's droid executor, among others; exec.go):
// {"type": "system", "subtype": "init", cwd, session_id, tools, model}
// first, then {"type": "message", role, id, text, timestamp, session_id}
// (the prompt the run was given, then the model's texts), {"type":
// "reasoning", id, text}, {"type": "tool_call", id, messageId, toolId,
// toolName, parameters}, {"type": "tool_result", id, messageId, toolId,
// isError, value | error: {type, message}}, {"type": "error", source,
// message} and, at the end, {"type": "completion", finalText, numTurns,
// durationMs, session_id, usage: {input_tokens, output_tokens,
// cache_read_input_tokens, cache_creation_input_tokens,
// thinking_tokens}}. Timestamps are epoch milliseconds (an RFC 3339
// string in some versions). --output-format debug, its earlier name,
// prints the same events without ids, session or completion: they are
// read alike (format "stream-json"). Some versions write the session's
// id as sessionId (camel case) on every event: read as session_id; the
// init event's cwd is the run's working directory.
//
// Each tool_call is a tool_use block in an assistant message of its own
// and the tool.call (its toolCallId, else its id, else one made from
// the line: "droid-call-l<line>": the versions that write toolCallId give
// id to the event); a tool_result answers the call its toolCallId names,
// else its id, and one naming neither (some versions left the id out)
// the earliest call still waiting, of the same tool when one is. Its
// value is the output (a string, else its JSON, whose exitCode is the
// exit code); isError, an error object (its message the error, with the
// exit code a failed Execute states) or a non-zero exit code make it an
// error; but one saying "Error: tool execution cancelled" (its error or
// its value) is of a call droid exec did not run: denied when the run
// lacked the permission it needed (an event before it, or the one right
// after it, says so: droid exec fails fast, "Exec ended early:
// insufficient permission to proceed. Re-run with --auto medium or
// --auto high.", a tool's "Insufficient permission to proceed", a
// result's permission_denials), else cancelled, stopped before it
// finished; reported at that next event (or the end), its output the
// value when one came. The completion is the terminal event: ok (an error when it says
// isError), finalText the final answer, its usage the run's (in 0.225
// the session's inclusive usage, getInclusiveTokenUsage: its Task
// sub-agents' calls included; their sessions are not children of a
// recorded run, which the archived session, once synced, supersedes:
// views.Superseded), as Anthropic
// names the figures (input_tokens the uncached input), thinking_tokens
// added to the output as its reasoning part (see Usage). An error event,
// or a log record the CLI printed among them ({level: "error", error:
// {name, message}}), is an error the provider reported: the step's
// status when no completion follows. A stream cut before its completion
// is incomplete (spec §6.7), as debug's always is.
//
// # Format json (droid exec)
//
// droid exec --output-format json prints one object when the run ends,
// pretty-printed or on one line (Reassemble): {"type": "result",
// "subtype": "success", is_error, duration_ms, num_turns, result,
// session_id}. It is the terminal event: ok, or an error (is_error, or a
// subtype other than success) whose text is the result; result is the
// final answer. Its usage and total_cost_usd, where it states them, are
// the run's. Factory's own GitHub action (Factory-AI/droid-action,
// base-action/src/run-droid.ts) reads such a result, with
// total_cost_usd and permission_denials, at the end of stream-json too:
// one there is read the same way.
//
// Detection (twasm import --provider auto): droid exec's message
// {role, text}, tool_call {toolName, parameters}, tool_result {isError or
// value} and completion {finalText} vote for Droid; its init and result
// share Claude Code's type names but not Claude's fields (MCP servers,
// permission mode, API time, per-model usage, a uuid, a usage of the
// Messages API's shape) and vote for neither, so that Claude Code's
// streams stay Claude's. A json result without those fields is Droid's,
// whatever cost (total_cost_usd) and usage in Anthropic's token names it
// states.
//
// # Decisions
//
// Messages. A user message's text blocks are its prompt; a text block
// that is only a <system-reminder> is context the CLI added (injected); a
// prompt that starts with one keeps it. An assistant message is one
// message.assistant, its blocks in order (redacted thinking marked so),
// each tool_use a tool.call; its line id is the message id, and a message
// read again (a line id seen before) is not reported twice. Its model is
// the settings' when the settings came before it. A user message marked
// "visibility": "user_only" is Droid's notice to the user ("Error:
// Connection error.", "No active subscription found."), not a prompt and
// nothing the model saw: a warning of the step, and an error the
// provider reported when its text starts "Error:". Droid also answers a
// prompt it does not run with such a notice ("Token limit reached. Use
// /limits to manage your usage preferences or visit
// https://app.factory.ai/settings/billing": two real sessions of an
// unlicensed repository, computermode/test-repo's Entire checkpoints,
// end on a prompt and that notice, parentId the prompt): a notice read
// while the last prompt has no answer (no assistant message or tool
// result after it) is held, and is the error that ended the turn when
// no answer of the model comes before the turn's outcome, the next
// prompt or the end of the log (reported there, at that record), a
// warning only when the model answers after it. One marked
// "visibility": "llm_only" is context Droid gave the model only (the
// open file, a notification): injected context, never a prompt.
//
// Tools. A tool_result is the call's result: its content (a string, or
// the text of its blocks joined by newlines), an error when is_error says
// so or when the output states a failed command ("Error: Command failed
// (exit code: N)", Droid's Execute, which does not always set is_error),
// that N its exit code. How Droid words a call the user refused is not
// known from a public file: such a result is an error, never ok. A
// second result for a call is not reported; a call naming the id of a
// call that has its result (a custom model's server may name every call
// call_1) is a new call with a result of its own. Kinds:
// Execute execute (the command from input.command), Read and LS read,
// Create, Edit, MultiEdit and ApplyPatch edit, Grep and Glob search,
// WebSearch and FetchUrl fetch, TodoWrite think, others (Task, MCP tools)
// other.
//
// Usage. The settings' tokenUsage, set (not added: each version holds
// every token before it) at each version that changed: inputTokens the
// uncached input, cacheReadTokens and cacheCreationTokens the cache read
// and write, outputTokens plus thinkingTokens every output token (Droid
// counts thinking apart; ccusage prices their sum as output) with
// thinkingTokens its reasoning part, totalTokens the total as stated.
// Droid states no cost. tokenUsage is the session's own calls: Droid adds
// each call's usage there (commitTurnTokenUsage) and keeps its Task
// sub-sessions' apart, childInclusiveTokenUsageBySessionId (each
// sub-session's inclusive usage) and inclusiveTokenUsage (the two
// summed), which are not read: a sub-session is a child run with its own
// tokenUsage, so each token counts once (TestSettingsUsageOwnCalls). So
// the @factory/cli 0.225 package's code reads (its bundled JavaScript,
// read, not copied: SessionService's commitTurnTokenUsage,
// recomputeInclusiveTokenUsage, applyChildInclusiveTokenUsage); no
// public document or peer says it, and no public settings file with the
// inclusive fields was found (a peer's Droid reader found by code search
// counts each settings file's tokenUsage as its session's, which
// agrees). An older Droid that
// wrote no inclusive fields is not known to have added a sub-session's
// usage to its parent's tokenUsage.
//
// Sub-agents. The Task tool runs a sub-agent in a session of its own: a
// file beside its parent's (the same working directory's directory),
// whose session_start names the session and the tool call that started
// it, {"callingSessionId": <the parent's id>, "callingToolUseId": <the
// Task call's id>}, and whose title starts "# Task Tool Invocation"
// (sessionTitle "<subagent type>: <description>"). That is what a
// Droid Worker session's session_start holds in entireio/cli's tests
// (cmd/entire/cli/agent/factoryaidroid, a line they say is verbatim);
// no licensed whole sub-session file is public. The store declares both
// (abi.Store.Parent, abi.Store.SubAgentCall: the first line of the
// session's JSONL): the host makes the sub-session's run a child run of
// its parent's, linked in the agent step at the Task call, so that its
// tokens count once, in the parent's totals; the parent keeps the Task
// call and its result. The plugin reads a sub-session as any session.
// A sub-session of a session that is not archived (or whose run has
// ended) is archived as a session of its own.
//
// Forks. Droid forks a session (the TUI's fork and "fork before this
// message", /btw's hidden side fork, a skill's creation; SessionService's
// forkSession in Droid's own code, as the @factory/cli 0.225 package
// ships it) into a new session file: its first line is the parent's
// session_start under the fork's id, with parent naming the parent
// session and forkedAtMessageId the last message it copied (null when it
// copied none); then the parent's lines as they were, up to the fork
// point (the whole transcript, the lines before a message, or up to the
// last completed turn), the outcome of a copied turn among them. Its
// settings document is the parent's with tokenUsage removed: its usage
// starts from zero and counts only its own turns. The copied history is
// the parent's, which its own run holds: every line after the fork's
// session_start up to the message forkedAtMessageId names, and an
// agent_turn_outcome naming a turn of those messages, is declared
// ignored as "(forked history)" (session_start still gives the session
// id and cwd), so the fork's run holds its prompts, calls and errors
// only from the fork on. A record Droid copied after that message other
// than a turn's outcome (a notice shown to the user only, a compaction,
// the plan) is read as the fork's: nothing in it says it was copied. No
// public session file holds a fork; the golden case is written from that
// code.
//
// Compaction. A compaction_state's summaryText, what the model sees of
// the earlier conversation from then on, is a message.user of injected
// context, with a warning that the earlier messages were replaced by it
// in the model's context; one without a summary, todo_state and
// session_end are declared ignored.
//
// Model and metadata. The session id is session_start's id; the model
// the settings' model.
//
// Unmapped. Text that is not JSON is counted as "non_json", a JSON value
// that is not an object as "non_object", an object without a type as
// "(no type)", a record of an unknown type by its type, a message of an
// unknown role as "message/<role>".
//
// # Store
//
// Droid keeps sessions under $DROID_SESSIONS_DIR, else ~/.factory/sessions,
// as <the working directory, "/" turned into "-">/<session id>.jsonl with
// <session id>.settings.json beside it, until the user deletes them. The
// manifest declares them as a tree store (abi.StoreKindTree): each
// session's key is its id, its files the JSONL and the settings document,
// read together, so sync and doctor find them without a sync.json entry,
// and the session a sub-session names is its parent (Sub-agents).
//
// The package uses no reflection and no goroutines; it builds for wasip1
// with Go and with TinyGo. keys (sdk.Plugin.Keys) lists every object key
// it reads; TestKeysCoverGets keeps the list complete.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4):
// session_start's cwd (droid exec's init event's); Droid names no
// repository root.
package droid
