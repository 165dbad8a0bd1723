// Package opencode is the normalizer of OpenCode (sst/opencode, now
// anomalyco/opencode) and of Kilo CLI (provider "kilo"), which keeps the
// same schema in $XDG_DATA_HOME/kilo/kilo.db (kilo-<channel>.db, or an
// opencode-<channel>.db an older build left there; the KILO_DB override
// names a file and is not followed). It reads four formats:
//
//   - "rows": OpenCode's SQLite store (opencode.db, $XDG_DATA_HOME/opencode
//     or ~/.local/share/opencode on every OS; opencode-<channel>.db for a
//     release channel), as the host reads it for `twasm sync` (abi 1.4,
//     abi.SQLiteSource, declared in the manifest as [Queries]): a facts
//     line, the session row, then per message, in order, one row per part
//     joined with its message's info. One session is one run. A later
//     sync hands the rows changed since; a part changed in place (a tool
//     going pending, running, completed; a text growing) comes again with
//     the same id and replaces what the message held: the message is
//     opened again with all of its blocks, in part-id order, and the
//     archive keeps its new version.
//     OpenCode's v2 runtime (packages/core) keeps a session's messages
//     in session_message instead, in the same database and session
//     table (core/src/session/sql.ts): one row a message whole (data the
//     message without its id and type, session/message.ts), rewritten
//     in place as it grows. The host reads its rows, after the message
//     and part rows, when the database has the table (abi.SQLiteNewer,
//     abi.SQLiteTable.IfTable: a database of an older build lacks it),
//     and leaves out those created at or before the session's last
//     message of the older tables (the runtime's copies of an older
//     session's messages, message-backfill.ts). The runtime's later
//     split (migration 20260804233008_loose_psylocke) moves its sessions
//     to session_v2: in the pre-split lineage (the migration row
//     20260730195856_optional_session_title present) it renames session
//     to session_v2, every session there, the older binary's history
//     left in message and part (and a history only they held converted
//     into session_message); otherwise it creates session_v2 beside the
//     older binary's session and recreates session_message keyed on it.
//     No later migration drops message, part or session. The host
//     chooses the sessions query by the tables the database has
//     (abi.SQLiteSource.Schemas): with session too, the sessions of both
//     (an id in both listed once, as session_v2's); without it, those of
//     session_v2. A session's row is read from whichever of the two
//     tables has it (abi.SQLiteTable.IfTable) and read alike: its
//     directory, version, parent and idle outcome (its token and cost
//     totals are not read: the usage is its messages'). A user message is the
//     prompt (its files named), a synthetic or system message injected
//     context, a shell message the command the user ran and its output
//     (injected context), a model or agent switch ignored, a compaction
//     a warning; an assistant message is one step: its content's text,
//     reasoning and tool items (a tool's state {status, input, content,
//     structured, error}, read as run --format json's of the v2 runtime
//     below; an error of type "aborted" cancelled), its finish, cost and
//     tokens (input the uncached input, output the visible output,
//     reasoning apart: twasm's output is output plus reasoning), its
//     error (type "aborted" the user's stop, as MessageAbortedError),
//     and its retry {attempt, at, error}, which the runtime sets while it
//     retries the step's provider call and clears when the step ends
//     (message-updater.ts): a store read meanwhile says so in a warning,
//     the step's outcome deciding the status. The session row of the v2
//     runtime states how its latest execution ended (projector.ts
//     projectIdle: idle_outcome succeeded, failed or interrupted, at
//     time_idle; later builds add idle_error_type and
//     idle_error_message): when it is the newest message's execution's
//     (time_idle at or after that message's creation), failed is an
//     error (the newest message's own error, listed once, else the row's
//     idle_error_message or the outcome: an execution that failed before
//     its first step, which no message states), interrupted a status
//     incomplete below the terminal level; succeeded leaves the messages
//     to say, as without it.
//   - "tree": OpenCode's older file tree (up to 1.1, in the storage
//     directory beside opencode.db: session/<project>/<id>.json,
//     message/<session>/<id>.json, part/<message>/<id>.json, one JSON
//     document each), as the host reads it (abi.StoreKindTree: the
//     session's info, then each message followed by its parts, each
//     document after a file line naming it; a document rewritten in
//     place comes again in the next stream). OpenCode 1.2's migration
//     (storage/json-migration.ts) copies each file into its row (the ids
//     out of the data into columns) and leaves the tree in place: the
//     data is the same, and so is the code that reads it (a message
//     document is the "message" column of a row without a part, a part
//     document a row's "data"); TestTreeReadsAsRows holds the two
//     equal. A session of the tree the database holds too is archived
//     once, from the database (the tree store's sessions are known by
//     their key, as the database's); the session's parentID makes a
//     sub-agent's session a child run, as parent_id does.
//   - "json": `opencode run --format json` (step_start, text, reasoning,
//     tool_use, step_finish and error events, each holding one part;
//     a later v1 run prints a done line last, {reason: "idle",
//     rejected}, once the session went idle: declared ignored, the
//     permissions it refused on its own, rejected, said in a warning).
//     The v2 runtime's client (cli/cmd/run/noninteractive.ts) prints a
//     text as it streams, each delta a text line of the same part id
//     holding that delta alone: a text line of a part id already seen
//     adds to its text, unless it repeats that text whole (the older
//     client printed each text once, whole, at its end, and one printed
//     again replaces it). Its error line holds a session error {type,
//     message}, whose type is the error's code.
//   - "export": the output of `opencode export [session]` (and `kilo
//     export`): the session as one document printed with
//     JSON.stringify(..., null, 2) (cli/cmd/export.ts), {info, messages:
//     [{info, parts}], todos}, reassembled from its lines by the SDK
//     (sdk.Plugin.Reassemble): the session's info, then each message's
//     info and its parts, read by the same code as the rows (a message's
//     info is a row's "message", a part its "data"). todos, the session's
//     plan, is not read. The document is one raw line to the host; an
//     export made while an answer ran reads incomplete, as the store
//     read mid-turn does (the session was exported while OpenCode wrote
//     it). The goldens export_* are written by hand from export.ts;
//     testdata/captures/opencode holds three real exports of OpenCode
//     1.2.5 (victoryforphil/dark-factory, MIT), and a detection of the
//     start of an export longer than detection's sample reads them
//     (internal/detect, exportPrefix).
//
// Parts: text and reasoning are text and thinking blocks (a synthetic
// text of a user message is injected context, a file attachment or a
// subtask a text block naming it; a user message's text marked ignored
// makes no block: OpenCode shows it to the user and never sends it to
// the model, session/message-v2.ts toModelMessages skipping it, as
// plugins use it for notes a noReply prompt posts, so it is neither the
// prompt nor context, and a message of such texts alone is no prompt
// left unanswered; an assistant's text is sent whatever its ignored
// says, and stays its text, but a run --format json part names no role,
// and OpenCode marks no text of the model's ignored, so an ignored text
// there is such a note too, never the assistant's answer); a tool part (paired by its callID,
// else by its own id: a part that names no call is the call and its
// result in one) is a tool_use block and,
// once it left pending (its input is known then), a tool.call, with a
// tool.result when completed (an error when bash exited non-zero, read
// from metadata.exit; cancelled when OpenCode killed the command, on its
// timeout or the user's abort, which it completes all the same with exit
// null and the reason in a closing <bash_metadata> block, or before 1.0
// a last line "(Command timed out after N ms)" or "(Command was
// aborted)"; an error when exit is null without a reason, a signal
// ended it; ok otherwise. The v2 runtime's run --format json states no
// metadata.exit: its shell tool's structured output, in
// metadata.structured, holds exit, signal (an error naming it) and
// timeout (cancelled, with the "Command exceeded timeout of N ms" line
// of the output), and the output ends with the tool's notice: "Command
// exited with code N." (read as the exit when nothing else states it),
// "Command timed out before completion." or "Command stopped by user."
// (cancelled)) or error (state.error: denied when
// it is OpenCode's answer to a call a person or a permission rule refused,
// "The user rejected permission to use this specific tool call..." or
// "The user has specified a rule which prevents you from using this
// specific tool call...", the v2 runtime's "Permission denied: <action>",
// or a dismissed question, "The user dismissed this question"; cancelled
// when it is "Tool execution aborted", the v2 runtime's "Tool execution
// interrupted", or metadata.interrupted is set, a call stopped
// unfinished, whose output is then metadata.output, what it had written
// by then; else an error); step-start, snapshot,
// patch and agent parts make no block. A step-finish's tokens and cost
// are the step's figures: the session's usage and cost are the sums over
// every step-finish, each counted once however often it is sent, with a
// stated cost of 0 kept; a message's usage is the sum of its steps (its
// own tokens when it has none: OpenCode keeps the last step's there).
// OpenCode's input leaves cached tokens out; twasm's input counts them
// (input + cache.read + cache.write). OpenCode on AI SDK 6 also writes
// the output less the reasoning (reasoning apart, the total the
// provider's, every token), where earlier builds wrote the output with
// the reasoning in it: a step whose total is input + cache + output +
// reasoning (reasoning above 0) has its reasoning added to twasm's
// output, every output token; otherwise the output is read as written,
// but in run --format json. There the client of OpenCode's v2 runtime
// (noninteractive.ts) prints a step_finish whose tokens are the v2
// runtime's (core session/usage.ts: output the visible output,
// reasoning apart, no total), a line OpenCode's v1 run before AI SDK 6
// printed the same, its output the provider's (the reasoning in it, for
// most providers): the line cannot tell them apart, the rest of the
// output can. A tool's metadata.providerResult (the v2 client's
// tool_use writes it, v1 the tool's own metadata), text lines adding
// deltas to one part id, an error {type, message} are the v2 client's
// alone: shown one, anywhere in the output, every step stating
// reasoning and no total has its reasoning added to its output (the
// messages closed before the sign are closed again at the end, the
// session's usage set again); shown none, the output is read as
// written and a warning says it may lack those reasoning tokens.
// A step-finish's reason is the AI SDK's finish reason: content-filter
// (the provider's filter stopped the model, which OpenCode records as no
// error) is a provider error, length (cut at the output token limit) a
// warning, each once.
// An assistant message's modelID is its model, and the latest is the
// step's (run --format json names none). A message's error ({name, data:
// {message}}) and a retry part's are provider errors, reported once
// (a message's when it closes, after all of its parts: every row of the
// message repeats its error, and a failed response's text on a later
// row would otherwise read as an answer after it, the session ok; the
// error is then listed at the next message's row, or at the end),
// except MessageAbortedError (the user stopped the response), a
// warning, and, on the session's newest answer, a status incomplete
// below the terminal level at the end (the turn was cut, as a Codex
// turn_aborted or a Pi response aborted is; a later answer makes the
// session ok again); a
// retry also a warning, a compaction part a warning. The store is a
// session log (no terminal event), and `opencode run --format json` has
// none either (it stops printing when the session goes idle; a run that
// ended on its last step's finish and one cut short after it print the
// same lines; the done line of later builds says the run completed, not
// that it succeeded): for every format the host derives the status. `twasm
// sync` often reads a store in the middle of a turn: OpenCode's
// processor sets an assistant message's time.completed when it stops
// working on it (answered, failed or aborted; session/processor.ts) and
// its finish at a step's end, so a session whose newest message (the
// rows come in the order of their creation) is an assistant's with
// neither, and no error, reports a status incomplete below the terminal
// level at its end: the turn has not finished (spec 6.7, a cut turn). A
// later sync, after it finished, hands the message's rows again with
// time.completed set, and the session is ok again. The same holds for
// the older file tree's message documents. `opencode run --format json`
// prints the parts alone, no message info: a run that ended on its last
// step's finish and one cut short after it print the same; one that
// stops inside a step (a step_start without its step_finish: the
// process cut, or the user aborting the response) reports, at its end,
// a status incomplete below the terminal level.
//
// A sub-agent session (parent_id set) is a child run of its parent
// session's run (the host links them, abi.SQLiteSource's "parent"
// column), whose warning names its parent; the parent's task call holds
// the sub-agent's result. The link is to the parent run, not yet to the
// task call that started it.
//
// The event table (event: id, aggregate_id, seq, type, data, and in
// later builds created; with event_sequence) is not read, by decision.
// OpenCode's v1 runtime (src/sync/index.ts) makes every change to a
// session, message or part a sync event whose projector writes it into
// the session, message and part tables, in the same transaction that
// would append the event row; it appends the row only when the
// experimental workspaces flag is on (to replay a session in another
// workspace). The v2 runtime (packages/core/src/event.ts,
// commitDurableEvent) appends every durable event whatever the flag, in
// the transaction whose projectors (session/projector.ts,
// message-updater.ts) write session_message: a step's start, end or
// failure, a text, reasoning or tool item's start, deltas and end, a
// tool's progress and result, a shell command, a compaction. So the
// tables read hold every event's outcome (an assistant message whole,
// its finish, tokens, cost and error, each tool's last state and error)
// whether the journal is filled or not. What the journal alone holds is
// the way there: a tool's intermediate states and progress, which the
// archive does not keep either (a message changed between two syncs
// comes once, in its new version); the execution events (succeeded,
// failed with an error, interrupted with a reason), whose failure a
// failed step's message states as its error, but not one that failed
// before any step began (the session row's idle_outcome, read, says it
// failed; its error only in later builds); and the v2 runtime's retries
// (session.retry.scheduled: attempt and provider error), which the
// projection sets on the assistant message and clears when the next
// step starts or the execution ends (read while set). But the journal is not a
// record: EventRetention (core/src/event/retention.ts) deletes a
// session's every event 48 hours after the session was last updated
// (event_journal.retention_hours) and, after 60 minutes idle, all but
// the newest of a part's updates, so reading it would make a session's
// archive depend on when it was synced, and sessions older than two
// days would read as if never retried. Reading both would also archive
// each change twice; reading the events alone would miss every v1
// session of a user without the flag.
//
// Forks. Session.fork (the API's /session/:id/fork, the apps' "fork
// from here") creates a new session, then writes the parent's messages
// up to the chosen one into it with new ids and their info as it was,
// time.created included, and their parts likewise (anomalyco/opencode
// packages/opencode/src/session/index.ts). Those turns, calls and tokens
// are the parent session's, which its own run holds: a message created
// (its info's time.created, else its row's time_created) before its
// session was (the session row's time_created, the session document's
// time.created) is declared ignored as "(forked history)", with all its
// parts, so the fork's run holds, and its usage and cost count, only the
// messages created after the fork. `opencode run --format json` names no
// session creation time: it is read whole.
//
// Place. The step result's cwd and project (ABI 1.6, spec §4): the
// session's directory, and an assistant message's path.root as the
// repository root (OpenCode's worktree; "/" outside a repository names
// none).
//
// keys (sdk.Plugin.Keys) lists every object key the normalizer reads, so
// that the host marks them in its tapes and Get matches them by number
// inside the sandbox; TestKeysCoverGets keeps the list complete. Each
// object a line is read from (the root, a row, a message's info, a part,
// a tool's state, a tokens object, an export's message) is read by one
// abi.Value.Lookup with all of keys, its members indexed by the k*
// constants (TestKeyNumbers keeps them in the list's order).
package opencode
