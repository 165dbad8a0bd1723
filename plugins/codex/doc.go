// Package codex is the twasm normalizer for the OpenAI Codex CLI.
//
// It reads the three machine-readable formats the CLI has produced and
// detects, line by line, which one it is reading:
//
//   - exec-json: `codex exec --json`, the thread.*/turn.*/item.* events
//     (also the item_type/assistant_message spelling of builds before
//     0.44);
//   - legacy-json: the older `{"id","msg":{...}}` event stream, with its
//     untyped config and prompt echoes on the first lines (also accepted
//     inside the app server's `{"method":"codex/event","params":{"msg"}}`);
//   - rollout: session files under ~/.codex/sessions, one
//     `{timestamp,type,payload}` record per line (and the bare response
//     items of the earliest rollouts).
//
// Detection is per line rather than once per stream, so that a stream
// whose first line is a banner, or a resumed session that appends in
// another format, still normalizes every line it can.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/codex/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Decisions
//
// Messages. Every Codex item or response item is one provider message:
// exec-json items keep their id as the message id; the other formats,
// which have none, get synthesized keys. Legacy deltas are joined and the
// final agent_message / agent_reasoning replaces them, so each text is
// there once. A rollout records texts twice (response items and event
// messages, in either order); each is reported once, from whichever
// comes first, and an event without its response item still counts.
// A task_complete whose last_agent_message no message carried becomes a
// message, so no model text is lost.
//
// Tools. Call ids are the provider's (item.id in exec-json, call_id
// elsewhere). Names are the native ones ("command_execution",
// "file_change", "exec_command", "apply_patch", "shell", "server.tool"
// for MCP); the kind (execute, edit, fetch, think, other) is what
// compares across formats. A command the CLI ran (command_execution,
// legacy exec_command_begin) is a command block; a model-authored call
// (function_call, custom_tool_call, MCP, file changes) is a tool_use
// block. Inputs Codex does not send as one object are built from the
// item's fields ({"command"}, {"changes"}, {"query","action"}). Rollout
// results come from the *_output response items only; the *_end events
// repeat them, but what they say about the outcome (declined, failed,
// the exit code) is kept for the output item that follows them, and so
// is a guardian_assessment's verdict on the call it reviewed
// (target_item_id): denied, the call did not run (denied, with the
// reviewer's rationale); timed_out or aborted, it did not run
// (cancelled); in_progress and approved say nothing. Rollouts of
// current builds do not persist the event (rollout/src/policy.rs); the
// output's rejection text says the same. A
// tool_search_call (a search of the tools the session defers) is a call
// named tool_search, kind search, its input the arguments; the
// tool_search_output of its call_id (else, a server-executed search
// naming none, the last search's) is its result, the tools found its
// output.
//
// A legacy exec_approval_request or apply_patch_approval_request is the
// call waiting for the user's approval (spec §6.12): recorded when it
// arrives (dangling if nothing follows); the begin event that follows an
// approval adds nothing.
//
// Tool statuses are the transcript's closed set (ok, error, denied,
// cancelled); Codex's words (completed, failed, declined) are mapped.
// Every result that is not ok carries error text: the provider's, else
// "exit code N: <last line of the output>", else the output's first
// line. A rollout output is read in every form Codex writes (see
// classify): the JSON {output, metadata:{exit_code}}, the "Exit code: N"
// and "Process exited with code N" headers, "failed in sandbox ... exit
// code: N" and "execution error: ..." (error, with the exit code it
// states), "... rejected by user", a tool policy's "rejected this
// action" and the auto-reviewer's (guardian's) "This action was rejected
// due to unacceptable risk.\nReason: ..." (denied, with its reason), a
// user's PreToolUse hook's refusal ("Command blocked by PreToolUse hook:
// <reason>. Command: <command>", the call not run: denied),
// "aborted", "aborted by user", "command timed out after" and an
// auto-review that "did not finish before its deadline" (cancelled), "apply_patch verification failed: ..." and
// "<tool> failed: ..." and a
// multi-agent tool's refusal ("collab spawn failed: ...", "collab tool
// failed: ...", "agent with id ... not found" or "is closed": the
// rollout keeps no success flag beside it) (error), an MCP {content, isError}, content items
// (code-mode exec: the {"exit_code": N} results its script printed). Exit codes are read
// only from the header lines before "Output:", never from a command's
// own output. A web_search has no output (the query is its input, not
// its result); a file_change's output is its list of changes (exec-json
// states paths and kinds, and builds on the app server since
// 2026 each change's diff, kept as stated), never its status word; a legacy
// patch_apply_end without stdout gives the changes (with their diffs)
// of the patch when it applied, nothing when it did not. A failed MCP
// call with error:null reports the text of its result content as the
// error; an MCP error that says it timed out is cancelled. A client's
// dynamic tool (the app server's) answers in a function_call_output of
// content items only: the dynamic_tool_call_response an early-2026
// rollout with extended history holds beside it says whether it
// succeeded, so success false makes the result an error (its error,
// else its content's first text).
//
// Sub-agents (spec §6.10). exec-json streams only the parent thread: a
// collab_tool_call (spawn_agent, wait, send_input, close_agent) is a tool
// call, and each sub-agent thread a spawn_agent names
// (receiver_thread_ids) is a scope linked to that call, whose child run
// holds the spawn's prompt (message.user), the final message a later
// call reports for it (agents_states[thread].message) and its status:
// completed ok, errored or not_found error, shutdown or interrupted
// cancelled. The sub-agent's own messages and tool calls are in its own
// thread, not in this stream. A sub-agent first seen in a call's
// agents_states (spawned before a resumed stream) opens there, unnamed;
// one whose outcome never came is closed incomplete when the turn ends.
//
// The legacy event stream ({"id","msg"}, the app server's codex/event
// notifications) has no items: it reports the multi-agent tools only by
// their protocol events, collab_*_begin and collab_*_end (see
// collabBegin, collabEnd). The begin (or, without one, the end) is the
// call, named as the model calls the tool (spawn_agent, send_input,
// wait, close_agent, resume_agent), its input what the event states
// (prompt, receivers, model); the end is its result (a spawn without a
// new_thread_id, a receiver not_found: an error). A spawned thread is a
// scope linked to the spawn call, as exec-json's: its prompt, what
// send_input sent it, and the final message or error a wait's or
// close's AgentStatus reports ({"completed": message}, {"errored":
// message}, shutdown and interrupted cancelled, not_found an error); a
// close of one still running is cancelled; one never reported is
// closed incomplete when the turn ends.
//
// A rollout with extended history (early 2026) also keeps the
// multi-agent tools' end events (collab_agent_spawn_end,
// collab_agent_interaction_end, collab_waiting_end, collab_close_end,
// collab_resume_end), beside its call's function_call_output (before it,
// as the v1 handlers send the event before they return the output): echoes
// of that result, declared ignored, whose outcome completes an output
// read after it (noteEnd; one read after the output changes nothing):
// a spawn without a new_thread_id, or a receiver whose status is
// not_found, fails the call; a receiver's other status (errored,
// completed) is the sub-agent's own outcome, recorded in its own
// rollout, not the call's. They link nothing: a spawned sub-agent's run
// is linked at its spawn_agent call by that call's output (below).
//
// In rollouts, a spawned sub-agent (multi-agent v2) is a thread of its
// own, recorded in a rollout of its own, whose session_meta names its
// parent thread and its agent path (source.subagent.thread_spawn:
// parent_thread_id, agent_path; agent_path). The stores declare that
// link (abi.Store.SubAgentOf): the sub-agent's rollout is read as a
// sub-agent's file, its run a child run of its parent's rollout's run
// (the rollout whose name ends with the parent's thread id, in
// whichever day's directory it started), linked at the spawn_agent
// call whose result names it (multi-agent v1's {"agent_id": <thread
// id>}, v2's {"task_name": <agent path>}), so that its tokens and calls
// count once, in the parent's totals; a sub-agent whose parent's
// rollout is not in the store is a session of its own, named as that
// thread's sub-agent. The plugin reads a sub-agent's rollout as any
// rollout, except the history one spawned with its parent's
// (multi-agent v1's fork_context, v2's fork_turns other than "none")
// copied into it: Codex writes, after the sub-agent's session_meta
// (which names the thread it was forked from, forked_from_id), the
// parent's rollout as read at the spawn (its session_meta unless
// fork_turns cut it, messages, event messages, every token_count; the
// calls and the commentary items left out), then the sub-agent's own
// first turn, and starts the sub-agent's running token total from the
// parent's last (last_token_info_from_rollout). The parent's run
// records that history: its lines are declared ignored ("(forked
// history)"), none is a message of the sub-agent's, and its token
// counts are read without a report, so that the sub-agent's usage is
// what its own counts add to the parent's last (or, where its first own
// count restarts from 0, its own counts). The copy ends inside the
// parent's turn that called spawn_agent, which it never ends: the first
// task_started while a copied turn is open (a copied session_meta
// starts outside any; a copy without one, inside one) starts the
// sub-agent's own lines. A parent turn that a killed process left open
// and a resume in the same process's file (no session_meta between)
// followed would end the copy early: the parent's lines after it would
// count as the sub-agent's. A rollout a user forked (codex fork, the
// app-server's thread/fork, the TUI's backtrack: forked_from_id with no
// thread_spawn source) starts its running token total from its
// parent's last (last_token_info_from_rollout), whether or not it holds
// the parent's history: 0.158+ forks reference it (history_base,
// forked_from_ordinal_exclusive) and hold only their own turns after a
// thread_settings_applied, so its usage is what its own counts add (its
// first count's total_token_usage less that count's last_token_usage is
// what it inherited; 0 where the total was not carried over). A fork
// that copied the parent's history (Codex before the referenced forks,
// and the copying path since) holds it after its session_meta (the
// parent's session_meta first, every line written again with a new
// timestamp), then whatever the fork itself wrote at its start (the
// initial context some builds append, thread_settings_applied), then
// its own turns; no line marks where the copy ends, but the turns
// themselves do: a build that stamps every turn it starts (0.125 and
// later, as the real rollouts of 0.125 to 0.158 show: a UUIDv7 turn id
// in task_started and turn_context, task_started's started_at) keeps
// those stamps in the lines it copies, and the fork's own id is a
// UUIDv7 made when the fork was. So, in a rollout whose own
// session_meta names such a build (cli_version), from the parent's
// session_meta (id forked_from_id) on, the lines are read as forked
// history, as a sub-agent's copy is (declared ignored "(forked
// history)", their token counts read without a report and the step's
// usage what the fork's own counts add to them), up to the first
// task_started or turn_context of a turn started at or after the
// fork's creation: its turn id's time (to the millisecond), else its
// started_at (to the second); a copied turn that states neither was
// written by an older build than the fork's, which stamps its own. The
// lines the fork wrote at its start before its first turn (its
// initial context) are read with the copy: they hold no turn and no
// token. A fork of a fork holds its grandparent's session_meta inside
// the copy, read with it. A turn of the parent started in the same
// millisecond as the fork was made (the same second, by started_at)
// would be taken for the fork's first, so that the rest of the copy
// would count in both runs. A copying fork that an older build wrote
// (or whose id is no UUIDv7) is read whole, the parent's history
// included, so its copied tokens count in both runs (issue 28); a
// warning says so at the copy's first line, the parent's session_meta.
// (The copy read as forked history counts in the parent's run only: a
// parent whose rollout was deleted before it was archived counts it
// nowhere, as for the other agents' forks.) In the parent's rollout the
// spawn_agent, send_message and wait calls are tool calls like any; sub_agent_activity repeats them (declared
// ignored), except an interrupted sub-agent, which is a warning. Messages
// between agents (the agent_message response item {author, recipient,
// content}; the older inter_agent_communication record, and the
// assistant-role message holding its JSON that builds before it gave the
// model) are the input of the turn of the thread they reach: a
// message.user, the prompt when a sub-agent's parent sent it, injected
// context otherwise (a child's completion notice, a peer's message). A
// sub-agent turn whose task the model never answered is therefore an
// error (see Status), like any unanswered turn. A message the thread
// itself wrote (its author is the thread's own path, "/root" for a
// thread that is no sub-agent) is an assistant message, not input. An
// encrypted message is a warning (its text is not in the rollout); the
// inter_agent_communication_metadata beside a message (its delivery
// flag) is declared ignored.
//
// Model. exec-json names none; the legacy config echo and
// session_configured do; a rollout's turn_context states each turn's
// model, and the step's model is the latest (a /model switch mid-session
// changes it), while each message keeps the model of its turn.
//
// Usage. exec-json turn.completed usage and token_count
// total_token_usage are running totals of one process. A total that
// goes down, or that equals the response's own last_token_usage after
// earlier counts (a second process: `codex exec resume`, a resumed
// session appended to the same rollout), starts a new segment, and the
// step's usage is the sum of every segment's last total, reported with
// sdk.ModeSet. A repeated snapshot changes nothing; a token_count with
// only last_token_usage adds it. A user's fork leaves out the running
// total it inherited from its parent (see Sub-agents). Every figure
// stated is kept, 0 included
// (cache_write_input_tokens). The old legacy token_count is per response
// (sdk.ModeAdd).
//
// 0.158+ rollouts also write a token_usage_record for every model
// response that reported usage, before the token_count that adds it to
// the running total (that count's last_token_usage states the same
// figures). Not every response gets that count: a remote compaction's
// (compact_remote_v2: the response is recorded, the running total only
// recomputed, the count after it repeats the total), an isolated image
// analysis's and a provider handoff's have their record alone. A record
// stays pending until a count whose total moved states its usage as
// last_token_usage; one still pending when the next record comes, the
// turn ends (task_complete, turn_aborted) or the input ends is added to
// the step's usage. Each response is so counted once, from the count or
// from its record, however a resumed process starts its counters. The
// records' turn and thread totals are not read (the thread total holds
// what the counts hold and more: adding it would count usage twice); a
// record whose response id was read before, or of another thread (a
// one-shot delegate's, such as a review's, forwarded to its parent),
// counts nothing (a delegate's usage, which Codex keeps out of the
// parent's totals, is so left out: it may be counted again from a
// rollout of the delegate's own), and the copy in a compacted record
// (latest_token_usage_record) is not read. exec-json has no records:
// its turn.completed usage is the thread's token_count total (exec's
// processor reports the last ThreadTokenUsage total, which the
// app-server builds from token_count), so a remote compaction's tokens
// are missing from it and the plugin cannot recover them.
//
// Status and errors. turn.completed, turn.failed, task_complete,
// turn_aborted and the legacy error event are terminal. An error event
// ends its turn: the task_complete Codex writes after it keeps the turn
// an error. exec-json top-level error lines ("Reconnecting...") and
// stream_error events are errors the provider reported that do not end
// the turn: reported with sdk.Out.Error (code: the API error type or
// HTTP status when the message holds the API's JSON error body), so the
// host lists them in the step's errors without their deciding the
// status. Codex's warnings (EventMsg::Warning: the warning event, and
// exec-json's error items, "a non-fatal error surfaced as an item" in
// exec_events.rs, which also carry the app server's config warnings,
// deprecation notices and model reroutes) are warnings ("codex
// warning: ..."), never an error: an exec run interrupted after one
// (TurnStatus::Interrupted writes no turn event) is incomplete, as any
// run without its terminal event is. A turn that starts after a terminal event
// makes the step incomplete again until it ends; in a rollout every
// task_started does, so a log cut inside a turn is incomplete. Codex
// writes no error event to a rollout (its persistence policy,
// should_persist_event_msg, leaves Error and StreamError out): a turn
// that failed ends with the task_complete of one that succeeded, its
// last_agent_message null. Builds of mid-2026 on write both (openai/codex
// codex-rs/rollout/src/turn_lifecycle.rs at 9285b7b, an Error event that
// affects_turn_status ends the turn; the newest policy.rs persists it):
// the error event, read as above, and a task_complete stating the turn's
// error (TurnCompleteEvent.error {message, codex_error_info}, which
// Codex's own agent status reads as errored even after a partial
// answer): that turn is an error with the error's message, whatever it
// answered before (completionError; the legacy stream's task_complete
// likewise). A rollout turn whose model input (a prompt,
// an image, a message from another agent, a call or its result) no
// assistant message (nor a review's findings, nor a generated image)
// answered before
// such a task_complete is therefore an error ("the turn ended without
// an answer from the model; the rollout does not say why"), and so is a
// turn that recorded nothing before it (its input is recorded after the
// compaction a turn may run first: a compaction that failed, or a hook
// that stopped the prompt, leaves an empty turn); an interrupted one
// ends with turn_aborted (incomplete); a turn that asked the model
// nothing but recorded what it did (a /compact, a user's shell command)
// is ok. A rollout
// is a session log (NoTerminal): one written before turn events existed
// is settled by the host's session rule (spec §6.7), and its error events
// are error fields for that rule, not terminal. A stream with no
// terminal event reports none, so the host makes it incomplete (error
// when a provider error came). An error message holding the API's JSON
// error body is shown as its message, status and type. A rollback
// (thread_rolled_back, num_turns) is a warning: those user turns left the
// conversation the model sees; they stay in the transcript. So is an
// /undo (undo_completed, early 2026): the working tree was restored from
// the snapshot taken before a turn (or, success false, was not), so the
// files no longer hold what the edits before it made; its turn, which
// asks the model nothing, is ok.
//
// Hooks. The end of a run of a user's hook (hook_completed {turn_id,
// run: {event_name, status, status_message, entries [{kind, text}]}},
// persisted by the newest policy.rs, and streamed as a legacy event):
// a hook that completed is declared ignored (the context it added is a
// developer message of its own); one that blocked (a call, a prompt),
// stopped the turn or failed is a warning, "codex hook <event_name>
// <status>: <what it said>". What it blocked says so itself: the call's
// output (denied, above), a prompt's empty turn (an error, above); a
// hook's run is not the turn's input. Another status is unmapped
// ("event_msg/hook_completed", "hook_completed").
//
// Bytes. Values reach the host as spans of the input, so NUL, control
// bytes, ANSI escapes and invalid UTF-8 survive as they are. A line made
// invalid by a raw control byte inside a string is repaired by the host
// (the byte escaped) before the plugin sees it, and read like any other.
//
// Known records with nothing for the transcript are declared ignored
// (sdk.Out.Ignored): the *_begin
// and output-delta echoes, dynamic_tool_call_request,
// view_image_tool_call and the multi-agent collab_*_end events
// (collab_agent_spawn_end, collab_agent_interaction_end,
// collab_waiting_end, collab_close_end, collab_resume_end: echoes of a
// function_call and its output, persisted with extended history, whose
// outcome completes the output, above), thread_name_updated
// (the name a user gave the thread), context_compacted, ghost_snapshot (an undo
// commit), world_state, a 0.158+ token_usage_record whose usage a token_count
// states (see Usage), additional_tools (tool
// definitions), thread_goal_updated and entered_review_mode (state and a
// marker), model_verification and hook_started (state; legacy stream too), and the 0.147+ event_msg item_completed mirrors
// of response items (an error item among them is a provider error), a
// token_count with no info (rate limits only) or repeating the last
// total, the early record_type marker, the legacy display hints. So are
// the lines that repeat what an earlier line reported: a rollout text
// (response item or event message) already reported from its twin, a
// rollout *_end event (its outcome is kept for the output item that
// records the result), an exec-json action item's item.started /
// item.updated after its call was reported (progress the completed item
// repeats in full), a compacted record with neither summary nor
// replacement history, and the
// first turn.started / legacy task_started of a stream (a marker that
// changes nothing; a later one reopens the step). Unmapped native types are counted as "<type>" (exec-json, legacy),
// "item/<type>", "response_item/<type>", "event_msg/<type>", and
// "non-json" / "json-array" / "untyped-object" for lines that are no
// Codex record.
//
// Compaction. A compaction's summary (compacted.message) is injected
// context of a user message; a compaction without a readable summary
// (a compacted record holding only its replacement history, the
// server's encrypted compaction and context_compaction response items)
// has nothing to inject. Either way a warning, once per turn, says the
// model sees the summary in place of the conversation before it, which
// the transcript keeps; the turn's other lines of the same compaction
// are declared ignored.
//
// Review. A /review's end states the reviewer's findings (review_output:
// its explanation, each finding's title, file, lines and body, its
// verdict), in an exited_review_mode event (rollout, legacy stream) or a
// rollout's item_completed whose item is an ExitedReviewMode (builds that
// record turn items), whatever else of the review the input holds: an
// assistant message, once, the answer of the review's turn; Codex's own
// rendering of them, the assistant message it records right after (a
// legacy stream's agent_message), is declared ignored, and the
// <user_action> message it records before is injected context. A review
// that ended without findings (review_output null) is a warning, and its
// turn an error unless it was aborted (turn_aborted: incomplete); Codex's
// "Review was interrupted" that follows is its rendering, not an answer.
// So is one whose output says nothing (no explanation, no findings: the
// reviewer's last message was empty, which Codex renders "Reviewer failed
// to output a response."). codex exec --json (codex exec review) writes
// no item for a review's start or end, only the assistant message Codex
// records after it: one that is exactly Codex's text for a failed review
// ("Review was interrupted. ...", "Reviewer failed to output a
// response.") makes the turn an error, whatever turn.completed says.
// The legacy stream's entered_review_mode is a marker (declared ignored).
//
// Notices. The legacy stream's background_event (Codex's word on what it
// does in the background: an MCP server starting, history trimmed) and
// deprecation_notice ({summary, details}) are warnings; a background
// event that is an early build's retry of the model stream ("stream
// error: ...; retrying N/M in ...", sent as stream_error since) is an
// error the provider reported, as stream_error is. Rollouts do not
// persist either (rollout/policy.rs); one that did would be read alike.
//
// Model reroute. A model_reroute (the server answered with another model
// than the one requested, ModelRerouteEvent {from_model, to_model,
// reason}; rollout and legacy stream) makes to_model the model of the
// messages after it and the step's, with a warning; a later turn_context
// states the model requested again.
//
// Images. An image_generation_call (the Responses API's built-in tool) is a
// call named image_generation, kind other, its input the revised
// prompt, its result the image (base64) once completed, an error when
// failed; a generated image is the model's output, as a message is. The
// image_generation_end event repeats the item (declared ignored).
//
// The package builds natively (tests, fuzzing, benchmarks) and for
// wasip1 through the entry point in ./wasm. It uses no reflection, no
// encoding/json and no fmt, so that it also builds with TinyGo.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4):
// session_meta's cwd, else (a rollout whose session_meta is cut) the first
// turn_context's; its git member names a commit, branch and remote, never
// the repository's root.
package codex
