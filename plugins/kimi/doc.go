// Package kimi is the twasm normalizer for Moonshot AI's Kimi Code
// (MoonshotAI/kimi-code) and the older Kimi CLI (MoonshotAI/kimi-cli). It
// is a plain Go package (tests, fuzzing and the native baseline run it
// through sdk.Plugin.Driver); plugins/kimi/wasm is the two-line
// WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/kimi/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi and golden; each
// plugins/<provider> package exports its normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
// Both agents journal each agent's run to a wire.jsonl, appended to, whose
// first line is {"type": "metadata", "protocol_version", ...}. The plugin
// tells them apart by each line's shape.
//
//   - wire: Kimi Code's journal (agent-core-v2, protocol 1.1 to 1.5;
//     docs/wire-manifest.d.ts lists the record types), one record per line
//     {"type", ...payload, "time" (epoch milliseconds)}. turn.prompt and
//     turn.steer {input: [parts], origin} are the user's prompts (origin
//     "user", {kind: "user"} or none; any other origin, a skill, a hook's
//     result, a task's or cron job's notice, is context the agent sent in
//     the user's role). context.append_loop_event {event} carries the model
//     calls: step.begin {uuid} opens one (the message id), content.part
//     {part: {type: text|think}} adds a block, tool.call {toolCallId, name,
//     args} a tool_use block and a tool.call, step.end {finishReason,
//     usage, messageId} ends it; tool.result {toolCallId, result: {output
//     (a string or parts), isError, note}} is a tool's result, which may
//     come before or after its step's end. usage.record {model, usage} is
//     one model request's usage, as the agent counts it for /usage.
//     turn.ended {reason, error} ends a turn.
//
//   - legacy-wire: the Kimi CLI's wire log (kimi_cli/wire/file.py), one
//     record per line {"timestamp" (epoch seconds), "message": {"type",
//     "payload"}}, type the wire message's class: TurnBegin and SteerInput
//     {user_input: a string or parts}, StepBegin, ContentPart {type: text
//     |think} (the model's output streamed in pieces), ToolCall {id,
//     function: {name, arguments}} and ToolCallPart {arguments_part} (its
//     arguments streamed), ToolResult {tool_call_id, return_value:
//     {is_error, output, message}}, StatusUpdate {token_usage, message_id},
//     StepRetry, StepInterrupted, SubagentEvent, TurnEnd, and the approval,
//     hook and MCP bookkeeping.
//
//   - context: the Kimi CLI's context file before 0.59 (context.go), its
//     only record of a session then: sessions/<work dir hash>/<session
//     uuid>.jsonl, the model's context, one kosong Message a line {role,
//     content (a string or parts: text, think), tool_calls [{id,
//     function: {name, arguments}}], tool_call_id}, among the markers
//     {"role": "_checkpoint", "id"} (declared ignored) and {"role":
//     "_usage", "token_count"} (the context's size after a step, not a
//     usage: declared ignored). A user message is the prompt, or
//     injected context when all its text is the CLI's own
//     ("<system>CHECKPOINT N</system>"); an assistant message is one
//     model call, closed on its line; a tool message is its call's
//     result, an error when its first part is "<system>ERROR: <message>
//     </system>" (its message the error, the parts after it the output;
//     "The tool call is rejected by the user." denied). A compaction
//     (compaction.py) rotates the file to <uuid>_N.jsonl and leaves one
//     assistant message, "<system>Previous context has been compacted.
//     ...</system>" and the summary: injected context and a warning. The
//     file has no times, no model and no usage: none is reported. A
//     sub-agent's context is a file of its own (<uuid>_sub_N.jsonl, the
//     same format; its first prompt the Task call's prompt), a child
//     run of the session's linked at that call (Sub-agents below).
//     The Kimi CLI's print mode (kimi --print --output-format
//     stream-json) writes the same kosong messages, one a line, and
//     ends with "To resume this session: kimi -r <id>" (not JSON): that
//     line is the session's id (Meta), declared ignored.
//
// None has a terminal record: the step is reported with NoTerminal and
// the host settles its status by the session rule of spec §6.7. `twasm
// sync` often reads a log in the middle of a turn: a Kimi Code wire log
// whose last step.begin has no step.end (nor a turn.ended or turn.cancel
// after it: a model call streaming), and a Kimi CLI wire log whose last
// TurnBegin of the session (not a sub-agent's, inside SubagentEvent) has
// no TurnEnd, report, at the end, a status incomplete below the terminal
// level: "the turn has not finished"; read again once it ended, the log
// is settled by the rule. Kimi Code's turn.prompt is not paired with a
// turn.ended in every log read (the public samples stop after a step's
// end), so its turns are not held to one. The context file (before 0.59)
// cannot tell: it holds whole messages and no turn bounds.
//
// # Decisions
//
// Messages. One model call is one message.assistant: in Kimi Code the
// step between step.begin and step.end (its uuid the message id: the
// message is open under it by the time step.end states the provider's
// messageId, which is not used), in the Kimi CLI the parts between
// StepBegin (or the prompt) and the StatusUpdate that states the call's
// usage (its message_id the message id). Consecutive pieces of one type
// (text, think) are one block, joined. The Kimi CLI's own text, a
// text ContentPart of a turn whose model it has not called (no
// StepBegin, thinking or call since its TurnBegin: a prompt a hook
// blocked, an unknown slash command, a slash command's output), is not
// an assistant message. Where the prompt is not a slash command, or the
// wire server's HookResolved {event "UserPromptSubmit", action "block"}
// came before it, it is the reason a UserPromptSubmit hook blocked the
// prompt (kimisoul.py): the turn failed, a status error below the
// terminal level with that reason, listed in the step's errors (as Kimi
// Code's turn.ended reason blocked), so a session whose last turn it is
// is "error" and a later answered turn makes it ok; after a slash
// command it is a warning; a log without StepBegin (peers'
// test data) is read as the model's once it thinks or calls a tool. A message closes at its usage, at the next step or prompt, at
// the turn's end or at the end of the input.
// context.append_message copies what the loop events already said into the
// model's context: the user's prompt after its turn.prompt or turn.steer
// (a message of the same text; a steer's comes once its turn ends) and an answer
// after loop events are not reported again; a user message of another
// origin is injected context; an assistant message or a tool result no
// loop event stated (a build that journals only messages) is reported from
// the message.
//
// Tools. A call is reported once, with its arguments as JSON (the Kimi
// CLI's arguments string parsed, the streamed pieces joined first: its
// tool.call is reported when its result arrives or its message closes).
// A result with is_error or isError is an error, its text the tool's
// message (the Kimi CLI's return_value.message, Kimi Code's note) else its
// output; a result saying the user or a permission rule refused the call
// is denied (the Kimi CLI's "The tool call is rejected by the user",
// ToolRejectedError; Kimi Code's 'Tool "X" was not run because the user
// rejected the approval request.', '... was denied by permission policy.'
// or '... by permission rule.'; the Kimi CLI's error whose brief is "Hook
// blocked", a PreToolUse hook's refusal with the hook's reason as its
// message, soul/toolset.py at 4a550ef, 1.49), one whose approval request was cancelled
// ('... was not run because the approval request was cancelled.') or
// that the user stopped while it ran ('The user manually interrupted "X"
// ...', 'Tool "X" was aborted') cancelled, and so is a command the shell
// tool stopped ("Command killed by timeout (60s)", both agents; Kimi
// Code's "Interrupted by user" and "Aborted before command started", as
// the message's first or last line); the exit code of a
// failed command is the one its message or output states ("Command failed
// with exit code: N.", both agents' shell tools). Output is the
// output string, or the text of its parts joined by newlines; an output
// the tool states empty is kept empty. Kinds: Shell and Bash execute (the
// command from args.command), ReadFile, Read, ReadMediaFile read,
// WriteFile, StrReplaceFile, Write, Edit edit, Glob and Grep search,
// SearchWeb, FetchURL, WebSearch, WebFetch fetch, Think, SetTodoList and
// TodoWrite think, others (Agent, Task, MCP tools) other.
//
// Call ids. A model server may give calls of different responses one id
// (ids unique per response, not per session: a custom provider's server
// names every call call_1). A call naming the id of a call that has its
// result is a new call, with its own name and result (the host reads it
// so: its tool_use block is in another message); a call repeated before
// its result is that call again (reported again, the host keeps one). A
// second result for the id's latest call
// is not reported (a warning says so), and a result's copy in the model's
// context (context.append_message, role tool) is not reported again: the
// k-th copy naming an id is taken for the copy of the k-th result, even
// when it comes after a later call that reuses the id. Calls are kept by
// scope and id: a legacy sub-agent's call (in a SubagentEvent) that
// reuses the id of a call of the session waiting for its result (its
// own Agent call, or a call run beside it) is a call of the sub-agent's
// scope, answered there, and the session's result answers the session's
// call. A legacy sub-agent's scope is named by its Agent call's id; an
// Agent call reusing the id of one whose sub-agent ran starts a scope of
// its own, named by the id and a number (call_1#2, call_1#3, ...), at
// its sub-agent's first record; a record of a sub-agent whose scope
// closed, with no later call of its id, is declared ignored as late
// (SubagentEvent/late). No capture shows these cases. A closed sub-agent
// scope is never written to again: its calls' tallies and its own
// sub-agents' entries are dropped at its close, and a new scope's number
// follows the last one its name had (no search over the scopes so far),
// so a log whose Agent calls keep reusing one id keeps bounded state and
// bounded work per line (TestPluginMemoryFlat).
//
// Sub-agents (spec §6.10). The Kimi CLI nests a sub-agent's own wire
// records in the session's log as SubagentEvent {parent_tool_call_id,
// agent_id, subagent_type, event} (builds before 1.25: {task_tool_call_id,
// event}, read the same way): they go to a scope of their own, a
// child run opened at the first of them, linked at the Agent call that
// started it and named after the subagent type; the call's result closes
// it (ok, or error when the result is one), a call without a result leaves
// it incomplete. Their usage stays on their messages, not in the step's
// totals. The Kimi CLI (1.x) also writes each sub-agent's records to
// <session>/subagents/<agent id>/wire.jsonl (subagents/runner.py sends
// every one of them to the session's wire as a SubagentEvent too): the
// store's pattern does not reach them, so they are not read, and counted
// once. Kimi Code writes each sub-agent's journal to a file of its own
// beside the main agent's (agents/agent-N/wire.jsonl): the store declares
// them (abi.Store.SubAgents "../agent-*/wire.jsonl") and the host makes
// each a child run of the session's. No file beside a sub-agent's journal
// names the Agent call that started it, but that call's result does: its
// output starts "agent_id: agent-0". The store declares it
// (abi.Store.SubAgentResult "agent_id: {dir}", {dir} the journal's
// directory), and the host links the run at that call, in the part that
// holds it, named by the call's description. A foreground Agent call's
// result is written once the sub-agent answered (agentTool.ts,
// formatForegroundAgentSuccess): a sub-agent synced while it ran is
// linked at the session's latest part, and archived again at its call by
// the sync that finds the result in the session's run (the first run
// ended, superseded). A sub-agent no result of the session names (a
// sub-agent's own sub-agent, whose Agent call is in the sub-agent's
// journal, in the same directory) stays linked at the session's latest
// part: which call started it is not guessed. The Kimi CLI before 0.59 kept each
// sub-agent's context in <session uuid>_sub_N.jsonl beside the session's
// (tools/multiagent/task.py: next_available_rotation of <uuid>_sub.jsonl,
// N from 1 in the order the Task calls ran): the store declares them
// (abi.Store.SubAgents "{stem}_sub_N.jsonl", N one to four digits) and
// the host makes each a child run of the session's. Nothing names the
// Task call that started it: the sub-agent's file states no call id, the
// call's result is the sub-agent's last answer
// (ToolOk(output=final_response)); a Task call refused before it ran
// ("Subagent not found") made no file, so N is not the N-th Task call
// either, and the calls of one step run at once. But the sub-agent runs
// on the call's prompt argument as given (run_soul(soul, prompt): its
// file's first user message, a string, after the checkpoint lines and,
// for an agent with the SendDMail tool, a checkpoint user message whose
// content is an array). The store declares that (abi.Store.SubAgentPrompt
// {record "/content", input "/prompt", name "Task"}, ABI 1.11): the host
// links the run at the one Task call whose prompt the file starts with,
// in the part that holds it, named by the call's description. The CLI
// writes a step's message, its Task call with it, to the session's file
// only once its tools returned (kimisoul.py _grow_context), so a
// sub-agent synced while it ran is linked at the session's latest part,
// and archived again at its call by the sync that finds the session's
// run holding it (the first run ended, superseded). Two Task calls with
// the same prompt say nothing of which started which file: such a file
// is linked at the session's latest part, and the sync says why. One
// whose prompt a compaction removed (compact_context rotates the file and
// starts it again with the summary, no user message) is linked at the
// session's latest part too.
//
// Side questions. The Kimi CLI's /btw asks a side question while the
// agent works (soul/btw.py): a separate model call answers it from the
// conversation so far, every tool call refused, and neither question nor
// answer joins the main conversation. Its BtwBegin {id, question} and
// BtwEnd {id, response | error} records (Wire 1.9) are a child run of
// their own, scope "btw-<id>" named btw: the question its message.user,
// the response its message.assistant (never the step's answer), closed ok,
// or error with BtwEnd's error, or left incomplete when the log ends
// before its BtwEnd. btw.py sends no StatusUpdate for it: its usage is not
// in the log, and none is counted.
//
// Usage. Every figure as the agent states it: input_other (inputOther) is
// the input neither read from nor written to the cache, input_cache_read
// and input_cache_creation the cache read and write, output every output
// token. Each model call's usage is its message's and adds to the step's:
// the Kimi CLI's StatusUpdate after each step, Kimi Code's usage.record
// after the step.end that states the same figures (counted once: the
// record's when it follows, else step.end's). A usage.record that follows
// no step (a compaction's request) adds to the step alone. Neither agent
// states a cost.
//
// Forks. Kimi Code's /fork copies the session's directory, each agent's
// wire.jsonl whole, then appends {"type":"forked","time"} to every
// agent's journal; the fork goes on after it (SessionStore.fork,
// MoonshotAI/kimi-code packages/agent-core/src/session/store). The
// lines before the last marker are the parent session's history, which
// its own run counts; they are read before the marker is, so their
// turns, calls and errors stay in the fork's run, but at the marker the
// step's usage is set back to 0 (each figure stated so far) and a
// warning says so: the fork's tokens are only those after it. A fork of
// a session that wrote nothing since starts with all of that session's
// bytes, and sync archives its file as more of that session's run (the
// part's facts line names the fork's session, the first the parent's):
// the copy is then the part the run held already, and nothing is reset
// (the fork's turns are that run's). The Kimi CLI's /fork and /undo
// (session_fork.py fork_session) write the parent's wire.jsonl lines,
// up to a turn, into a new session's journal with no marker, and nothing
// in the new session names its parent (its state.json only titles it
// "Fork: ..."). When the parent went on after it, sync makes the fork a
// run of its own, and the host, which finds the lines the two files
// share, names them in the facts line of the fork's first part
// (abi.SourceFacts.Copied, ABI 1.10: the run holding them and how many
// lines): the plugin reads them as at Kimi Code's marker, their turns
// shown, their tokens set back to 0 at the first line after them (or
// the stream's end), the copy's open messages closed first, and a
// warning names that run. A Kimi CLI fork synced by a host before 1.10
// is read whole: its copied tokens count in both runs.
//
// Model and metadata. The model is the latest llm.request's (the model
// the request was sent to, as the provider names it: kimi-k2.7-code),
// else, in builds that journal no request, the latest usage.record's
// (the alias the user chose: moonshot-ai/kimi-k2.7-code) or step.end's;
// the Kimi CLI's log names none. The session id is the session's directory, from the facts
// line the host hands the plugin (Manifest.SourceFacts): the Kimi CLI's
// <work dir hash>/<session>/wire.jsonl, Kimi Code's <work
// dir>/<session>/agents/<agent>/wire.jsonl.
//
// Errors. How a Kimi Code turn ended (turn.ended's reason: completed,
// cancelled, failed or blocked; packages/agent-core-v2 loopService.ts)
// settles a session whose last turn it is, by the session rule: a failed
// turn is an error the provider reported (its error's message and code),
// so the session is "error"; a blocked one (a UserPromptSubmit hook
// refused the prompt) is a status error below the terminal level, so
// "error" too, its reason the error; a cancelled one is a warning and a
// status incomplete below the terminal level, so "incomplete". A step.end
// with finishReason "error" (the model call threw, its retries spent) is
// an error the provider reported; the failed turn.ended that follows it
// states the same error with its message, so the step's is listed only
// when no failed turn.ended follows (a retried step: reported at the next
// step.begin, else at the next prompt, turn end or the end of the
// input). A step.end with finishReason "interrupted" (the turn or the
// step aborted while the model answered) or "max_tokens" (the output cut
// at the token limit, also a warning) is, once its message closed, a
// status incomplete below the terminal level: a session whose last
// answer it is is "incomplete"; a later answer makes it ok again, as it
// does after a cancelled, failed or blocked turn. The Kimi CLI's
// StepRetry (a model call retried after an API error, its error_type
// and status_code) and a Notification of severity error are
// errors the provider reported. A StepInterrupted is an error too: every
// Kimi CLI that logs its wire (0.59 on) sends it only when the step raised
// an error, the API call's once its retries are spent (the user's
// interruption sends none), and the log does not state which; so a
// session whose last step failed is "error". A Kimi CLI turn that ends
// right after a tool result ending on the CLI's dead-end reminder ("You
// are stuck in a dead end and have repeatedly made the same function
// call without progress.", appended from the eighth identical call in a
// row; at the twelfth the CLI stops the turn, stop reason
// tool_call_repeat: soul/toolset.py, kimisoul.py at 4a550ef) is an error
// the CLI stated (a status error below the terminal level), so a session
// whose last turn it is is "error" (deadEnd). A compaction is a warning,
// and so is turn.cancel (the user's request to cancel; its turn.ended
// says how the turn ended).
//
// The print mode (kimi --print) says on stdout, after the messages, how
// a run that did not end well ended (ui/print/__init__.py at 4a550ef, exit
// code 1), or says only that when the run failed before any message:
// "Interrupted by user" (the user stopped it) is a status incomplete
// below the terminal level, "Max number of steps reached: N", "Unknown
// error: ...", "LLM not set" and "LLM model '<name>' does not support
// required ..." are errors the CLI reported, and so is any other text
// line after its messages or before any record, a provider's error as
// ChatProviderError states it ("Error code: 429 - ...", exit code 75 or
// 1), but one that opens as JSON does (a message cut short). It prints
// them with rich, which wraps a message wider than the console (80
// columns with no terminal) over several lines: the text lines that
// follow are the rest of it, one error with the lines' text (failure,
// reported at the next line or the end, its raw line then the end's).
// Text before the first record followed by a record is not the print
// mode's: counted unmapped. Its JSON printer (visualize.py) also writes a Notification
// {id, category, type, source_kind, title, body, severity, ...}, read
// as the wire log's (one of severity error an error the CLI reported,
// others declared ignored), and a PlanDisplay {content, file_path},
// declared ignored. A tool result ending on the dead-end reminder
// followed by the user's next prompt or nothing (the print mode exits
// 0 after a turn the CLI stopped) is the same error as in the wire log;
// a model call after it means the turn went on.
//
// Unmapped. Text that is not JSON (but the print mode's resume hint and
// the lines failure reads) is counted as "non_json", a JSON value
// that is not an object as "non_object", an object without a type as
// "(no type)", a record of a type not known here by its type, a loop event
// of an unknown type as "context.append_loop_event/<type>". The agents'
// configuration and bookkeeping records are declared ignored.
//
// # Store
//
// Kimi Code keeps its sessions under $KIMI_CODE_HOME, else ~/.kimi-code
// (bootstrap.ts), as sessions/<work dir>/<session>/agents/<agent
// id>/wire.jsonl, the main agent's id "main", a sub-agent's "agent-N"
// (agentLifecycleService.ts). The Kimi CLI kept them under
// $KIMI_SHARE_DIR, else ~/.kimi (share.py), as sessions/<md5 of the work
// directory>/<session>/wire.jsonl (metadata.py, session.py), with the
// model's context.jsonl beside it (not read: the wire log holds the
// conversation); before 0.59 (50a663a9) as sessions/<md5 of the work
// directory>/<uuid4>.jsonl, the context alone, which the store "Kimi CLI
// context files (before 0.59)" declares by a glob of the uuid's shape,
// with the sub-agents' <uuid>_sub_N.jsonl (contextPattern), leaving out
// the copies a revert or compaction rotated to <uuid>_N.jsonl and
// <uuid>_sub_N_M.jsonl. Neither agent
// deletes sessions. The manifest declares the three stores (abi.Store),
// so sync and doctor find them without a sync.json entry.
//
// The package uses no reflection and no goroutines; it builds for wasip1
// with Go and with TinyGo. keys (sdk.Plugin.Keys) lists every object key
// it reads; TestKeysCoverGets keeps the list complete. A line's object is
// read in one pass (abi.Value.Lookup of lineKeys; TestLookupKeysDeclared
// keeps them in keys).
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): Kimi Code's
// profile.bind environmentDisclosure.cwd, or a config.update's cwd
// (whichever comes first); the Kimi CLI's log names none. A tool's own
// cwd (Bash's args and display) is not the session's.
package kimi
