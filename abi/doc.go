// Package abi is the whole contract between the twasm host and a
// normalizer plugin compiled to WebAssembly: names, memory ownership,
// status codes, the version handshake, the input batch and tape, the
// records a plugin reports and their meaning, and the limits. It does not
// import wazero; the host (package host) and the plugin SDK (package
// abi/sdk) both implement it, and nothing else needs to be read to write a
// plugin in another language.
//
// A plugin author reads this package's values (through abi/sdk) and
// writes records through abi/sdk; the tapes behind the values and the
// record encoding are internal/wire's, the only package it imports beyond
// the standard library. twasm's public packages are transcript,
// recorder, lifecycle, capture and host; a plugin author imports abi/sdk,
// abi and golden; each plugins/<provider> package exports its normalizer.
// Everything else in the module is internal (README, Layout).
//
// # Life cycle
//
// The names, versions, statuses and limits below are constants of
// internal/wire (contract.go), each documented with its value there: the
// host module is "twasm_v1", the marker export "twasm_abi_v1", the other
// exports "twasm_abi_version", "twasm_buffer", "twasm_manifest",
// "twasm_begin", "twasm_feed" and "twasm_end", the host functions
// "output", "fail" and "log".
//
// A plugin is a WASI reactor (Go: GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared; TinyGo: -target=wasip1 -buildmode=c-shared). The
// host, for each .wasm file:
//
//  1. compiles it (cached by content hash), checks that it exports
//     ExportMarker and the functions below with their exact signatures,
//     and that it imports nothing but HostModule functions and the
//     AllowedWASI functions (WASIAllowed checks one): a plugin that wants a file system, a socket
//     or a host function that does not exist is refused here;
//  2. instantiates it with no file system, no environment, no arguments,
//     stdout discarded, stderr captured (bounded), real clocks, and a
//     memory limit; runs ExportInitialize;
//  3. calls ExportVersion: a different Major is refused with a message
//     that says which version the plugin was built for;
//  4. calls ExportManifest: the plugin reports one JSON [Manifest]
//     through ImportOutput.
//
// Then, for each stream (one agent step's raw output), on an instance of
// its own that no other goroutine touches:
//
//	twasm_begin(options) ; twasm_feed(batch)* ; twasm_end()
//
// Begin resets every piece of per-stream state, so an instance is reused
// for the next stream.
//
// # Memory ownership
//
// The plugin owns all of its memory. Before a call that takes input, the
// host calls ExportBuffer with the input size and writes the input at the
// returned address; the plugin must not free or move that buffer until the
// next ExportBuffer call. The plugin passes (ptr, len) pairs to host
// functions; the host copies them before returning and never keeps a
// pointer into plugin memory. Out-of-bounds pointers or lengths fault the
// call.
//
// # Input: batches and tapes
//
// A feed's input is a batch of complete raw lines (layout in internal/wire, batch.go). The
// host never splits a line and never sends more than MaxBatchLines lines
// or MaxBatchBytes bytes in one call, except that a single line may be
// larger (up to MaxLineBytes). With each line comes its tape: the host
// has already parsed the line as JSON, natively, and hands the plugin a
// structural index (a token per value: kind, byte span, index of the next
// sibling; internal/wire, tape.go), so the plugin navigates ([Value])
// instead of scanning bytes. A line that is not one JSON object or array
// (a banner, a truncated last line, pretty-printed JSON split over lines)
// has an empty tape; a plugin that reassembles such text indexes it
// itself (sdk.Parse). SSE lines ("data: {...}") are indexed past the
// prefix.
//
// Object keys come matched (ABI 1.1 and 1.2). An unescaped key's token
// carries the hashed flag (2) and a 16-bit hash of the key, so
// a lookup skips most keys on one integer compare. A plugin that lists the keys it reads in
// [Manifest.Keys] (1.2) gets more: the host compares every key with that
// list, natively, and a key found there carries the keyed flag (4) and
// its number in the list instead of a hash (one not found carries both flags
// and its hash). Inside the sandbox, [Value.Lookup] with the declared
// [KeySet] then files each member by its number, and [Value.Get] compares
// numbers: no hashing and no byte compares, which cost far more inside
// WebAssembly than natively.
//
// # Stores (ABI 1.4)
//
// A plugin for an agent that keeps its history on disk declares where, in
// [Manifest.Stores]: each [Store] names the agent's data directory as a
// list of [Root] candidates (an override environment variable, then the
// defaults per OS, "~/..." in the home directory), the sessions'
// directory below it, a glob of session files, the kind of source ("file":
// one session per file), how sessions are told apart ("content": by the
// bytes they start with; "key", [StoreSessionKey], ABI 1.8: a file named by the
// key a SQLite store of the same provider keeps the same session under,
// archived from the database only) and the agent's retention (a number of days,
// and the settings file and key where the user changes it). `twasm sync`
// and `twasm doctor` read every store every loaded plugin declares,
// bundled or dropped into a plugin directory, with no rebuild and no
// configuration. The declaration is data the host checks, never trusts:
// a root outside the home directory or a variable's directory, a path
// with "..", a provider the plugin does not serve refuse the manifest.
// A kind the host does not know (a newer plugin's) is listed as
// unusable, not read.
//
// A store of kind "sqlite" ([StoreKindSQLite]) is a database of many
// sessions: the plugin declares, as data ([SQLiteSource]), a read-only
// query that lists the sessions with a cursor and the queries that read
// one session's rows changed since a cursor. The host runs them on a
// read-only connection, one session per run, and hands the plugin a
// [SourceFacts] line naming the database and the session, then one [Row]
// line per row ({"$twasm":"row","table":...,"key":...,"version":...,
// "row":{...}}, JSON text columns inlined). A later sync hands the rows
// changed since, a row changed in place again with the same key: the
// plugin replaces what it held under that key. A SQLite store may also
// declare related databases ([SQLiteRelated], ABI 1.7: Cursor's
// workspaces, which say which folder a composer belongs to): other
// databases beside it, each queried once, read-only, their rows (with a
// small JSON file beside each) handed in the stream of the session each
// names, before its own rows. Where the agent's schema changed, the
// store may choose its sessions query by the tables a database has
// ([SQLiteNewer], ABI 1.14: one newer table; [SQLiteSchema], ABI 1.15:
// the first of several whose tables the database all has) and run a row
// query only where its table is ([SQLiteTable].IfTable): a query naming
// a table the database lacks fails.
// A "folder" store keeps one session per directory (Cline's and Roo
// Code's task folders): Pattern matches the directories and
// [Store.Files] lists, in order, the files of one session. The host
// hands the plugin one stream per session: before each file a
// [SourceFile] line ({"$twasm":"file", ...}: its path in the directory,
// size and modification time), then its content, a JSON document
// compacted to one line, JSON Lines as they are. When the session
// changes, the next stream holds what changed: a JSON Lines file's new
// lines, a JSON document rewritten whole again whole (the plugin, which
// has read the earlier streams first, reports only what is new or
// changed). The session is the directory, wherever its files' bytes
// start.
// A "sections" store ([StoreKindSections], ABI 1.6: Aider's
// .aider.chat.history.md) keeps many sessions in one file, one after
// another, each starting with a line that starts with
// [Store.SessionStart]: the host splits the file there and hands the
// plugin each session's bytes as a stream of its own, one run per
// session, a session that grows at the end of the file as more of the
// same stream. A [Root] with Projects (ABI 1.6) puts a store in every
// project directory twasm knows (the sync configuration's projects and
// those of the runs it archived) instead of one data directory. A
// [Root] with List (ABI 1.7) stands for the directories a JSON file of
// the agent's lists ([RootList]: Crush's projects.json names each
// project's data directory): the host reads the list, read-only, at each
// sync and doctor; an entry may also name the project the directory
// holds the data of ([RootList.Project], ABI 1.8: the entry's "path"),
// which the host hands the plugin in the facts line below.
// A "tree" store ([StoreKindTree]: OpenCode's older file tree) spreads a
// session over files linked by name: Pattern matches each session's
// first file, whose name without extension is the session's key, and
// Files, relative to the store, name the rest ("{key}" the key, "{*}"
// each file the glob before matched); the plugin reads them as a
// folder's. Its sessions are known by key, as a SQLite store's are: one
// an agent keeps in both is archived once. A folder or tree store may
// declare where a session names its parent ([Store.Parent], a member of
// the first JSON value of one of its files) and where it names the call
// that started it ([Store.SubAgentCall]): the host makes the session's
// run a child run of its parent's, linked at that call. Since ABI 1.11 a
// folder store may also say how a parent's tool result names a session
// that names no parent ([StoreParent.Result]: Roo Code 3.35 to 3.48's
// "Subtask <id> completed."): the host links the session's run at the
// call that result answers. Since ABI 1.12 a folder store may say, for a
// session that nothing names, which of its files states the prompt it
// starts with and which member of a call's input states it
// ([StoreParent.Prompt]: Roo Code before 3.35, whose sub-task's first
// message is the new_task call's message): the host links the session's
// run at the one call stating it, when one session only states it; a
// host built for 1.11 or before leaves it a run of its own. A file store
// may declare how a session file names the session file it is a
// sub-agent of ([Store.SubAgentOf]: a JSON Pointer into its first JSON
// value, a glob of the parent's file with the key, the members of the
// spawning call's result that name it; Codex CLI's spawned threads):
// the host reads such a file as a sub-agent's, its run a child run of
// that session's, linked at that call. Since ABI 1.9 a file store's
// sub-agents' directory may be named by the id the session file states
// rather than by its name ([Store.SubAgentsKey]), and the session's own
// records may name the call that started each sub-agent
// ([Store.SubAgentCalls]; Gemini CLI's chats/<session id>/ and the
// agentId of its tool call records; Claude Code's toolUseResult.agentId
// on an Agent call's result, [RecordCalls.AgentIn]). Since ABI 1.11,
// where nothing names the call, a sub-agent's file may be linked at the
// one call of the session whose input states the prompt the file starts
// with ([Store.SubAgentPrompt]: the Kimi CLI's <uuid>_sub_N.jsonl before
// 0.59 and its Task call's prompt); a host built for 1.10 or before
// ignores the field and links the file at the session's latest part.
//
// A plugin may ask for the facts of its source ([Manifest.SourceFacts]):
// the host then hands it, as the first line of a stream it reads from a
// store, a [SourceFacts] object ({"$twasm":"source", ...}: the path
// relative to the store, the file's name, size and modification time),
// for the agents that keep the session id, the working directory or the
// only time there is in the path. A plugin that does not ask never sees
// one; a 1.3 plugin never asks. Since ABI 1.8 the facts line also names
// the project directory where the host knows it by where it found the
// store ([SourceFacts.Project]: the project directory of a store in
// every project, the project a list entry names): the agents that keep
// a store per project (Aider, Crush) say nothing of it in their bytes.
// A plugin reports it as the step's cwd or project (OpMeta) as its
// agent's store means it; a plugin built for 1.7 or before ignores the
// member, which it never read. Since ABI 1.10 the facts line of a new
// run's first part also says when the file's first lines are those
// another run holds ([SourceFacts.Copied]: a fork that copied its
// parent's journal with no mark, the Kimi CLI's /fork and /undo): the
// plugin counts their tokens in that run, not in this one. A plugin
// built for 1.9 or before ignores it and reads the copy as before.
//
// # Output: records
//
// A plugin reports what it understood as records (layout and field
// encoding in internal/wire), written through ImportOutput during feed and
// end calls. String fields are either literals or spans: byte ranges of
// the call's input that the host copies, unescapes (SpanString) or
// validates and compacts (SpanJSON, SpanJSONString) natively. Spans
// keep large values (tool outputs, file contents) from being copied or
// decoded inside the sandbox.
//
// Records, and what the host makes of them (a "scope" is a sub-agent; the
// empty scope is the step itself):
//
//   - OpLine No: the records that follow come from raw line No. The host
//     stamps raw_line on the events they produce.
//   - OpMeta: session id, model, provider version, format of the step.
//     The first value reported wins, unless Override is set. NoTerminal
//     (ABI 1.3) says the format has no terminal event (a session log): the
//     host then derives the status from what the stream held (below).
//     Cwd and Project (ABI 1.6) are the agent's working directory and
//     the repository root holding it, as the provider's data states them
//     (the step result's cwd and project, spec §4).
//   - OpMsgOpen Key, Role (assistant|user), ID, Model, Scope, Time: opens
//     a message. Opening an open Key again updates its empty fields (so a
//     plugin may open on every line of a split message). The message takes
//     its place in the output order when it is first opened: events
//     reported later are held back until it is closed, so a message is
//     always written before the tool calls it requested.
//   - OpBlock Key, Slot, BlockType and block fields: sets the block at
//     Slot (0-based) of message Key, replacing what the slot held (so a
//     repeated snapshot of the same block is written once); Slot -1
//     appends. Blocks are written in slot order.
//   - OpAppend Key, Slot, Field (the tag of TText, TThinking, TToolInput,
//     TToolContent, TCommand or TChunk), Value: appends to that field of the
//     block at Slot, creating a text or thinking block when the slot is
//     empty. Deltas are joined by the host. Appended tool input is parsed
//     as JSON when the message closes ("" is {}).
//   - OpMsgClose Key, StopReason, Model, ID, usage: closes the message;
//     the host writes message.assistant (or message.user) now. A message
//     with no block and no usage is dropped. Messages still open at the
//     end of the stream are closed by the host.
//   - OpToolCall CallID, Name, Input, Kind, Command, Scope, Time:
//     tool.call. A second call with the same CallID is the same call
//     and is ignored (report a call again freely: while it runs, when
//     its message is rewritten), unless the first is settled (it has its
//     result, or a user prompt, a text block of origin prompt, was
//     reported after it) and the CallID's latest tool_use or command
//     block (OpBlock ToolID) is in another message (Key) than the
//     first's: then it is a new call that reuses the id (providers
//     whose ids are unique per response, not per session, name every
//     turn's first call call_1), and its result is its own. The
//     transcript keeps the provider's id for both. Revised (ABI 1.13)
//     says the call is a new version of the latest call of its id,
//     changed in place (a task's conversation element rewritten and
//     read again under a new message key): the host writes it again,
//     answered or not, with its new input, marked revised
//     (transcript.RevisedField), and every reader counts it once, with
//     its latest input; with no call of its id reported before it is an
//     ordinary call. A host of 1.12 or before ignores the tag, and reads
//     the call by the rules above (a repeat before its result ignored,
//     one after it from another message a new call).
//   - OpToolResult CallID, Name, Output, Error, IsError, ExitCode,
//     Status, Scope, Time: tool.result. Output is what the tool
//     returned: set it, even empty, when the provider gives one, and
//     leave it out when the provider gives none (the line then has no
//     output, spec 4; nor has a denied result with an empty output: it
//     never ran). A result whose call was never
//     reported gets a call synthesized from it (and a warning), as does a
//     result after the id's block moved to another message (above); a
//     second result for the same call is ignored with a warning, unless
//     it is marked Revised (ABI 1.13): a new version of the result of
//     the id's latest call, changed in place, written marked revised,
//     its outcome replacing the earlier one (with no result of its id
//     before, an ordinary result). Calls with no result at the end are
//     dangling: listed in the step result.
//   - OpUsage usage fields, Mode (add|set), Scope: the step's token
//     totals; "set" for cumulative counters, so they are not double-added.
//     The usage fields are InputTokens (every input token), CacheReadTokens,
//     CacheWriteTokens, OutputTokens, ReasoningTokens and, since ABI 1.5,
//     UncachedInputTokens (the input neither read from nor written to a
//     cache), CacheWrite1hTokens (the one-hour part of the cache write) and
//     TotalTokens (the total the provider states). The SDK derives the
//     uncached input when a plugin leaves it out (sdk.Usage, sdk.Split);
//     a reader of a plugin older than 1.5 derives it the same way
//     (transcript.Usage.Uncached). Since ABI 1.9 the usage fields also
//     carry ServiceTier (OpMsgClose's usage and OpUsage's alike): the
//     service tier the provider states it served the request at, as it
//     names it (OpenAI's service_tier, Anthropic's usage.service_tier),
//     which the host's price table prices flex, priority and batch
//     requests by; left out where the provider states none. The host
//     keeps it only beside a figure, and a step's usage summed ("add")
//     over requests of different tiers has the tier "mixed". A plugin
//     built for 1.8 or before states no tier: its usage is priced at the
//     standard rates, as it was.
//   - OpCost Cost (USD), Mode.
//   - OpStatus Status (ok|error|incomplete), Error, Level (2: an error
//     field or a non-fatal error line; 3: the provider's terminal event;
//     1 is the host's, for a process exit code): the highest
//     level wins, a later report of the same level replaces an earlier
//     one. An "error" report with Error text is also one of the step's
//     errors (as OpError).
//   - OpError Text, Code, Scope (ABI 1.3): an error the provider reported
//     (a non-fatal error event, a rate limit, an overloaded or auth error,
//     an error item). The host lists it, in order, in the step result's
//     "errors" ({message, code, raw_line}) and it counts as an error field
//     for the status. Report every one: an error is never only counted in
//     unmapped.
//   - OpIgnored Native, Count (ABI 1.3): Count lines (default 1, ending
//     at the current line) of a native type the plugin knows and
//     deliberately ignores (a delta a later line repeats in full, a
//     heartbeat, a "$set" patch, the inner lines of a document it
//     reassembled). Spec 6.8: every raw line produces records, is declared
//     ignored, or is counted unmapped; the host counts a line that got no
//     record at all as unmapped "(no record)".
//   - OpFinal Text, Override: the final answer text.
//   - OpUnmapped Native, Count: a native line type the plugin did not
//     map (the drift signal). The raw line stays in the raw capture.
//   - OpScopeOpen Scope, ParentToolID, Name, Text: a sub-agent. Records
//     carrying this Scope are written to a child run linked to the step
//     (step.call_workflow.* with child_run_id, parent_run_id on every child
//     line). OpScopeClose Scope, Status, Error ends it; open scopes are
//     closed at the end of the stream.
//   - OpWarning Text: a warning for the step result.
//
// # Final status (spec 6.7)
//
// The host settles the step's status at the end of the stream, in this
// order:
//
//  1. a terminal report (level 3: the provider's terminal event) decides;
//  2. else, for a format marked NoTerminal (session logs): a provider
//     error (an error field, below) after the last answer (an assistant
//     message or a tool result) is "error"; a stream that ends on an
//     unanswered prompt (a user prompt with no assistant message or tool
//     call after it), on a response the provider says was cut short (an
//     OpStatus "incomplete" at level 2 on the last answer's raw line or
//     after it: Pi's stopReason aborted, as Codex's turn_aborted is a
//     terminal "incomplete"), on a dangling tool call (one no assistant
//     message came after, other than the one holding it) or on an
//     assistant message of thinking alone (the model's response cut off
//     before it said or did anything: thinking is no answer) is
//     "incomplete"; a non-zero exit code is "error"; anything else is
//     "ok", a log that ends on a tool result included (the call was
//     answered; spec 6.7 names no other case). "After" is
//     the order the plugin wrote its records in, so a document holding a
//     whole conversation on one raw line is judged as a log of lines is
//     (an error reported inside the message that carries it, or before
//     an assistant message of no block on its line, comes after it).
//     A call left without a result when the agent went on stays in the
//     step's dangling list without making the step incomplete;
//  3. else, an error field: any OpError, or an OpStatus "error" at
//     level 2, makes the step "error" (the last such text is its
//     error);
//  4. else, a non-zero process exit code (the host's own report, at
//     level 1) makes it "error";
//  5. else "incomplete": the stream stopped without a terminal event.
//
// So a plugin reports the terminal event where its format has one, every
// provider error as it sees it, and NoTerminal for session logs; it does
// not compute the session rule itself, and the same situation gets the
// same status in every plugin.
//
// # Status codes and faults
//
// Every call but ExportBuffer and ExportVersion returns a Status.
// StatusRejected keeps the records reported so far and the stream goes
// on; StatusFatal, a trap, a timeout, running out of memory or exceeding
// a limit discards the instance: the lines of that call are counted as
// failed, the plugin's captured stderr is attached to the error, the stream
// goes on with a fresh instance, and after repeated faults the plugin is
// disabled. Records reported before the fault stand.
package abi
