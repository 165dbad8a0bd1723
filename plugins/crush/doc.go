// Package crush is the twasm normalizer for Crush (charmbracelet/crush),
// whose sessions live in a SQLite database per project,
// <project>/.crush/crush.db. It is a plain Go package (tests, fuzzing and
// the native baseline run it through sdk.Plugin.Driver); plugins/crush/wasm
// is the two-line WebAssembly entry point. [Plugin] is the package's
// public face, as for every plugins/<provider> package.
//
// # Store
//
// The manifest declares two stores of kind "sqlite", read with the same
// queries ([Queries]):
//
//   - "Crush": the database .crush/crush.db under Crush's global data
//     directory ($CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else
//     %LOCALAPPDATA%\crush on Windows and ~/.local/share/crush
//     elsewhere: config.GlobalConfigData). That is the data directory of
//     a Crush run whose project is that directory (crush server's
//     workspace).
//   - "Crush projects": crush.db in the data directory of every project
//     Crush ran in, as projects.json in the same global directory lists
//     them ({"projects": [{"path", "data_dir", "last_accessed"}]},
//     internal/projects; data_dir is absolute, <project>/.crush unless
//     configured). The host reads the list (a list root, ABI 1.7) at
//     each sync and doctor: a project Crush ran in since is found without
//     a new plugin; a list missing or malformed is a warning. The entry's
//     path (the directory Crush ran in, projects.Register's workingDir)
//     is declared as the list's project (abi.RootList.Project, ABI 1.8):
//     the host hands it in each session's facts line, and it is the
//     run's cwd (the index takes it as the project). A data directory
//     two entries name with different paths gives no cwd: which
//     project a session was is not known.
//
// A session of the first store (the global data directory's) has no
// cwd: nothing names the directory Crush ran in.
//
// twasm import cannot read a database. No retention: Crush keeps a
// session until the user deletes it.
//
// # Format "rows"
//
// The host hands the session's row (with children_cost, the sum of its
// child sessions' cost) and its message rows (parts inlined as JSON),
// after a facts line (abi.SourceFacts) naming the database (and, ABI
// 1.8, the project: the session's cwd, above).
//
//   - sessions: the session id; parent_session_id says the session is a
//     sub-agent's (the agent and agentic_fetch tools' sessions, named
//     <message id>$$<tool call id>, and the one that titles a session,
//     title-<id>): a warning, and the store's parent column makes its
//     run a child run of its parent's. Cost: Crush adds a child
//     session's cost to its parent's (coordinator.updateParentSessionCost)
//     when the sub-agent ended, not when it failed or still runs, so the
//     session's own cost is cost minus children_cost, the cost of the
//     children whose call's result in the parent says they ended ([Queries]:
//     neither an error nor empty; the children's runs state theirs). prompt_tokens and completion_tokens
//     are not usage: Crush sets them to the last request's input plus
//     cache read and its output (updateSessionTokenCounters), the
//     context the session fills; no token figure is reported, as the
//     database holds no per-request usage.
//   - messages: role user (the prompt), assistant (model and provider
//     per message), tool (the tool results, written as a user message of
//     tool_result blocks). Parts {type, data}: text; reasoning
//     (thinking; a signature, Google's thought_signature or provider
//     data without text is redacted); image_url and binary (an attachment, a text naming it,
//     injected context); tool_call {id, name, input: a JSON string, cut
//     short while streaming: then kept whole under "input"}, a tool_use
//     block and a tool.call; tool_result {tool_call_id, name (empty in
//     older versions: the call's), content, metadata, is_error}, a
//     tool_result block and a tool.result: is_error an error, "User
//     denied permission" (or "Permission denied" before 2025-09) denied,
//     an agent or agentic_fetch call's empty result without is_error
//     an error (Crush before 2025-11 wrote a tool's Go error so: the
//     sub-agent failed),
//     "Tool execution canceled by user" (now "Error: user cancelled
//     assistant tool calling", what agent.go writes for a call the user's
//     cancel left without a result) cancelled, "Tool call blocked by
//     hook. Reason: ..." and "Turn halted by hook. Reason: ..." (a
//     PreToolUse hook refused the call, internal/agent/hooked_tool.go)
//     denied, a bash output whose
//     last line is "Exit code N" an error with that exit code (Crush does
//     not set is_error for it), one ending "Command was aborted before
//     completion" cancelled, both read before the "<cwd>DIR</cwd>" line
//     the bash tool writes after an output; shell_command {command,
//     output, exit_code}, a command the user ran in bang mode, a call and
//     its result;
//     finish {reason, time, message, details}: error and content_filter
//     are provider errors (message and details), canceled, max_tokens and
//     other reasons warnings, end_turn, tool_use, stop and
//     permission_denied (the refused call's result says it) nothing. A
//     summary message (is_summary_message, or, for Crush before
//     0.13 and the rows it wrote, the session's summary_message_id) is
//     said in a warning.
//
// A session log has no terminal event: NoTerminal, and the host settles
// the status by the session rule (spec §6.7). `twasm sync` often reads
// the database while Crush streams an answer, which it rewrites in
// place and finishes with a finish part and finished_at
// (message.AddFinish: ended, failed or cancelled): a session whose
// newest message (the rows come in the order of their creation) is an
// assistant's with neither reports, at its end, a status incomplete
// below the terminal level: the turn has not finished. A later sync
// reads the message again, finished, and the session is settled as
// any other. A newest answer whose finish reason is canceled (the user
// stopped it) is likewise incomplete (a cut turn, as a Codex
// turn_aborted is), besides its warning. Times are seconds (the
// schema's comments say milliseconds; a figure past 10^11 is read as
// milliseconds).
//
// # Sources
//
// Read from Crush's source (internal/db/migrations, internal/message,
// internal/agent, internal/agent/tools, internal/projects, at
// 37f36e9), and judged on real databases committed to public
// repositories (testdata/captures/crush: databases of August and
// October 2025 from six repositories, failed sub-agents among them, and
// one Crush 0.96.1 wrote against a fake model). The goldens are written from the
// source: a parent session with an agent call, a failed bash command and
// a bang command; its sub-agent's session; a summarized session with a
// provider error, a refused call and an output cut at the token limit;
// bad lines.
//
// keys (sdk.Plugin.Keys) lists every object key the normalizer reads, so
// that the host marks them in its tapes and Get matches them by number
// inside the sandbox; TestKeysCoverGets keeps the list complete.
package crush
