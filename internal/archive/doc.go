// Package archive archives agents' native session logs into twasm runs:
// it finds the stores, and turns each session file into one run, growing
// the run as the session grows. `twasm sync`, `twasm doctor` and `twasm
// import` are its command-line faces.
//
// # Stores
//
// The stores are those the plugins declare in their manifests (ABI 1.4,
// abi.Store; the host lists them, [Declared]), bundled or dropped in: the
// bundled plugins declare Claude Code's projects, Codex's sessions,
// Gemini CLI's chats, Copilot CLI's session state, Pi's (and OMP's and
// OpenClaw's) sessions, OpenCode's database and older file tree,
// Cline's, Roo Code's and Kilo Code's task folders, Qwen Code's chats,
// Goose's sessions.db and older session files, Amp's threads, Kimi
// Code's and the Kimi CLI's wire logs, Factory Droid's sessions (with
// their settings.json), Crush's crush.db, Cursor's agent transcripts and
// its IDE's state.vscdb, Aider's chat history in each project, and
// nothing here names an agent. A store is of kind "file" (a session per file),
// "folder" (a session per directory, [KindFolder]), "tree" (a session
// spread over files linked by name, [KindTree]), "sqlite" (a database
// of sessions) or "sections" (a file of many sessions, [KindSections]). [Discover] resolves each for the OS and the
// environment (the first root that applies: an override variable, then
// the defaults), reads the agent's retention setting where one is
// declared, and adds the stores of the sync config file (sync.json: extra
// directories no plugin knows). A store of a kind this package does not
// read, or with a pattern that does not parse, is listed as unusable and
// not walked.
// A pattern's "{a,b}" alternatives may each be a glob within one name
// ("*", "?", a class; no "/", "**" or nested braces: the Kimi CLI's
// <uuid>{,_sub_[1-9],_sub_[1-9][0-9],...}.jsonl); a twasm before this
// read only plain names there, and lists such a store as unusable.
//
// # SQLite stores
//
// A store of kind "sqlite" (abi.SQLiteSource) is a database of many
// sessions: Walk finds the database file, [Archiver.SyncDatabase] reads
// it. One session is one run, known by the path "<database>#<key>" (the
// ledger's Path; its Offset is the session's cursor, its Head the hash of
// provider and key). In one read transaction, the sessions query lists
// every session with its cursor; a session whose cursor equals its run's
// is unchanged and nothing more is read of it (a second sync with nothing
// changed archives nothing). For one whose cursor moved, the row queries
// read the rows changed at or after the previous cursor, in the same
// transaction. A store may read a table a newer schema of the agent
// added (abi.SQLiteNewer, abi.SQLiteTable.IfTable: OpenCode's v2
// session_message): on a database that has it, the newer sessions query
// lists the sessions and the row query runs; on one without it, the
// older sessions query does and the row query reads nothing (a query
// naming a table the database lacks would fail). A store may also
// choose among several sessions queries by the tables the database has
// (abi.SQLiteSource.Schemas, ABI 1.15: the first schema whose tables it
// all has, else Newer, else Sessions; OpenCode's session_v2 beside its
// older binary's session, or renamed from it). The transaction then ends, and only then are the sessions'
// parts archived (plugin, transcript writes, fsyncs): a reader's snapshot
// held that long would keep the agent from checkpointing and resetting its
// write-ahead log, which grows meanwhile. The rows are read in batches of
// about DefaultSQLiteBatch bytes (a session's rows whole, so one larger
// session is a batch alone): once a batch is read its sessions are
// archived, and a new read transaction lists the sessions again, whose
// cursors the rest are read by (a session no longer listed then is
// pending). Options.SQLiteLimit bounds each read transaction. The part fed
// to the plugin is a facts line (database, session, cursors, user and
// schema version, the queries' hash) and one abi.Row line per row: that
// is also the part's raw capture, so renormalize needs no database. The
// run's raw capture so far is replayed first (output dropped), and since
// a row changed in place comes again as a newer version, the filter works
// as for a rewritten document (what is unchanged is dropped, a message,
// call or result that changed is kept in its new version, "revised").
// A session the database no longer lists ends its run as a deleted file
// does, once the listing was whole. A session the listing names a parent
// of (a sub-agent's) starts its run as a child run of the parent
// session's open run (runctl.BeginChild: a step.call_workflow at path
// "subagent" in the parent, parent_run_id on every line of the child).
//
// The database is never written, locked against the agent or added to:
// the queries are checked (package sqlguard) and run on a read-only
// connection with query_only on, under Options.SQLiteLimit. With the
// agent's write-ahead log present, the connection is mode=ro (a WAL
// reader blocks no writer; it notes its read mark in the agent's -shm, as
// every reader does). With no log or -shm present (the agent is not
// running, or it uses a rollback journal), mode=ro would create -wal and
// -shm and leave them, or take a shared lock the agent's commit waits
// for, so the database is opened immutable (no lock) and checked after
// every read (size, mtime, header with its change counter, no log
// appeared, no journal in use): a database that changed is not archived
// from that read (pending, read again next sync). A rollback journal in
// use (a write in progress: its header is SQLite's journal magic) means
// the file may hold half a commit, so the database is not read at all
// that sync (pending). [ExpandDatabases] lists the sessions for doctor
// the same way.
// A store's related databases (abi.SQLiteSource.Related, ABI 1.7:
// Cursor's workspaces) are found by their glob beside the database once
// a session of it has rows to archive, each opened read-only as the
// database is and its query run once (relatedRows); the rows about a
// session, each with the JSON file beside its database, come after the
// session's facts line, before its own rows. The glob may name the
// database itself (for the file beside it: an older Cursor's workspace
// database and its workspace.json). One that cannot be read is logged,
// and the others are read.
//
// # Sections stores
//
// A store of kind "sections" (abi.StoreKindSections: Aider's
// .aider.chat.history.md) keeps many sessions in one file, appended one
// after another, each starting with a line that starts with the store's
// SessionStart. Walk finds the files (a pattern without "**" is looked
// up, not walked: such a store is usually in every project directory,
// abi.Root.Projects, and a project's tree is never walked);
// [Archiver.SyncSections] reads each up to its last complete line (all
// of it once settled), splits it at the start lines (splitSections:
// bytes before the first are the first session's, so every byte is in
// one session; the blank line right before a start line is the new
// session's unless the run before holds it already, placeBlanks) and archives each session as a session file of its own,
// known by the path "<file>#<n>" (n from 1) and by its content like any
// file's (its head: its first lines, the dated start line among them).
// So a session that grows at the end of the file grows its run, a
// session appended is a new run, a sync with nothing new archives
// nothing, and a file rewritten with other sessions is archived anew
// (the sessions it no longer holds end their runs, as deleted files
// do). A session's raw capture holds exactly its bytes. The date after
// the prefix (RFC 3339, or "2006-01-02 15:04:05" in the local zone)
// dates the session's run. A part a killed sync left unfinished is
// continued by splitting the file again (Resume.SessionStart).
//
// A file that grew is not split from its first byte (sectionsKnown):
// when the ledger knows its sessions 1 to k, each before the k-th held
// whole by its run, the file still starts with the first one's head and
// still holds the k-th one's archived bytes where it starts (the sum of
// the lengths before it), the split starts there, and the sessions
// before it are unchanged without being read. So a sync reads a few
// times the bytes from the last session known, however long the
// history. Anything else (the file rewritten or cut, a ledger that does
// not know its sessions, a run's part pending, an import that may end
// unchanged runs) splits it whole. An edit in place that keeps every
// earlier session's length, the first session's head and the last one's
// bytes is not seen then.
//
// A store whose root is abi.Root.Projects is looked for in every project
// directory: those the sync config file lists ("projects") and those
// the caller adds (Config.Seen: `twasm sync` adds the projects of the
// runs in its search index), one location per project.
//
// A store whose root is a list (abi.Root.List, ABI 1.7: Crush's
// projects.json) is looked for in each directory the list names:
// Discover reads the JSON file in the root's directory (the first list
// root that applies), read-only, at each sync and doctor, one location
// per directory (listedLocations, listDirs). An entry that names no
// absolute directory is a note on the store (Location.Notes, reported as
// its problems); a list missing beside the agent's files, malformed or
// naming no directory is one unusable location that says why, so doctor
// and sync warn and go on; a list whose directory is not there is a store
// not found, as any. A file another store already found is not read
// again through a list (Scan).
//
// Such a store's place names the sessions' project, which nothing in an
// agent's bytes may say (ABI 1.8, Location.Project): a store in a project
// directory is that project's (Aider's history is in its repository), and
// a listed directory is the project its entry names
// (abi.RootList.Project: Crush's projects.json "path"; none when the
// entry names no absolute path, or when entries naming the directory
// name different projects, a note then). Every facts line of a session
// read there names it (abi.SourceFacts.Project), the plugin reports it
// as the step's cwd or project, and a part continued after a kill names
// it again (Resume.Project). A directory whose name encodes a path with
// losses (Cursor's agent transcripts) names no project: none is guessed.
//
// # Model
//
// A session is identified by content, not path: its Head is the sha256 of
// its first complete lines (at least 64 bytes of them, so that a
// pretty-printed document's "{" does not make all sessions alike), and a
// run holds the session's first Offset bytes, whose sha256 it keeps. A
// file whose first Offset bytes hash to a run's is that session: the same size means nothing is new (synced twice, or the
// same bytes found again at another path); a longer file has grown, and
// only bytes [Offset, end) become a new part. The run's entry follows
// the file it was last read from; the other files found holding the
// start of the session (the file it grew from, a copy, a copy made
// before it grew) are kept in the entry (Entry.Also, the last eight)
// with their size, mtime and the bytes they hold, so that a later sync
// finds each unchanged by a stat, or by the hash of those bytes when it
// was touched, and never archives them again as a run of their own. A
// shorter copy found only after the session grew past it (never read
// at the length it has) is not recognized and makes a run of its own.
//
// A new session of a store that asks for facts lines whose file starts
// with more of a run's session than the head (the same first lines, and
// more whole lines after them, then different bytes: a fork that copied
// its parent's journal with no mark, as the Kimi CLI's /fork and /undo
// do, and the parent went on; or such a shorter copy) gets, in the facts
// line of its first part, the run that holds those lines and how many
// there are (abi.SourceFacts.Copied, copiedFrom): the plugin counts
// their tokens in that run, not in the new one, and the outcome says so.
// The run's session is read from the file it was last read from, or one
// of the files it was found at (Entry.Also), as far as that file still
// starts with the bytes the run holds; the run sharing the most lines
// wins; a first part that a kill cut short and a later sync continues
// in the same run is read so again. The facts line is kept in the raw
// capture, so later parts and renormalize read the same. Either session may be the parent: the
// shared lines count in the run archived first.
//
// A whole JSON document that the agent rewrites in place at every turn
// (Gemini CLI's session-*.json chats: it never grows by bytes) is the
// same session when it has the same head at the same path and its run is
// open: the new version is one more part of that run, read whole (not
// replayed), with a raw capture of its own, so every version's bytes are
// kept. A filter compares it with what the run holds, by the provider's
// ids: what is unchanged is dropped, a message that gained blocks keeps
// the new ones, and a message, call or result whose content differs is
// kept whole in its new version, marked "revised" (RevisedField,
// transcript.RevisedField: a message replaces the one with the same id
// for later comparisons; a call or result is read by every reader as a
// new version of the earlier one of its call id, transcript.Pairer, not
// one more, and the filter counts it no more), named in the part's
// "source.changed" and in the outcome's reason (a rewrite that is not a
// pure append), as is a message the new version no longer holds. Any
// other file that no longer starts with what its run holds (a JSON Lines
// log rewritten, whose lines have no ids to compare by) is archived as a
// new run, and the outcome says so.
//
// A session of a "folder" store (abi.Store.Files: Cline's and Roo
// Code's task folders) is a directory, identified by its path relative
// to the store (a store that moved keeps its sessions), not by a head:
// its run's ledger entry keeps, for each of its files, the size and
// mtime last seen and how many of its bytes the run holds with their
// hash (FileState; the part results' "source" keeps them too, so a
// ledger rebuilt from the transcripts knows them). A part is a stream
// of what changed (folderSource): each changed file after a line
// naming it (abi.SourceFile), in the declared order, a JSON document
// compacted to one line and read again whole when rewritten (a file
// only touched is not), a JSON Lines file from where the run left it
// (from 0 again, and said, when it no longer starts with those bytes).
// A JSON document changed within Options.Settle makes the whole folder
// wait. The stream extends the run's raw capture, and the plugin reads
// the raw capture first (output dropped): a document the agent rewrote
// whole, whose messages have no ids (Cline's arrays), is compared by
// the plugin with the version it read before, by index and content, so
// only what is new or changed is written; the raw capture then rebuilds
// the run alone (renormalize). A call or result of a message changed in
// place the plugin marks revised itself (ABI 1.13), and the filter
// counts such versions apart from the id's calls and results (one the
// earlier parts hold, emitted again, is dropped). A folder deleted ends
// its run.
//
// A session of a "tree" store (abi.StoreKindTree: OpenCode's older
// storage) is read the same way, its files listed by treeFiles: the
// globs are relative to the store, "{key}" the session's key (its first
// file's name without extension) and "{*}" each file the glob before
// matched (a message's parts right after the message). Its identity is
// its provider and key, the same as a SQLite store's session of that
// key (sessionHead): a session the database holds too is archived from
// the database only (the tree's outcome is "unchanged", naming it, and
// doctor counts it archived), and a session archived from the tree
// before the database held it goes on in the same run from the database
// (treeRun: every row read, what the run holds filtered out; its ledger
// entry moves to the database's path).
//
// A "file" store may declare its sessions keyed (abi.StoreSessionKey:
// Cursor's agent transcripts, each named by its conversation's id, the
// IDE's composerData id): a session file's name without its extension is
// the key a SQLite store of the same provider keeps the same session
// under, and the database's copy is the one kept, since it states more.
// A sync archives the keyed files last, in the databases' chain
// (keyedLast, chainsOf), so a session both keep is archived from the
// database first; a keyed file (or a sub-agent's file of one) whose key
// a database session's run holds is then not archived: it is "skipped",
// the outcome naming the database's session and run, and noted in that
// run's entry (Entry.Also, holding none of its bytes) so that the next
// sync finds it unchanged by a stat and says nothing. A run archived
// from the file before the database held the session is ended,
// superseded by the database's run (lifecycle.SupersededByField: stats
// and the index leave it and its sub-runs out, so nothing is counted
// twice), and the file is not read again. Doctor counts such files
// archived, and says they are archived from the database
// ([ArchivedElsewhere]).
//
// A SQLite store may be keyed too (an older Cursor's workspace
// databases, whose composers a newer Cursor moved to its global
// database under the same id): its databases are synced after every
// other (keyedLast), and a session whose provider and key another
// database's run holds (not superseded) is not archived from it
// ("skipped", naming that run, then "unchanged" while its cursor stays:
// noted in that run's entry, Entry.Also); a run archived from it before
// is ended, superseded by the other (syncKeyedDB). Doctor counts such
// sessions archived, from elsewhere. A new run of a store
// that is not keyed, of a provider that declares a keyed SQLite store,
// ends the open runs other databases hold the same key in, superseded
// by it (supersedeKeyedDB: a workspace database that no longer lists
// the composer is not read again, and would keep it twice); the runs
// other databases hold the key in that had ended already (imported, or
// closed when the workspace stopped listing the composer), whose end can
// no longer name it, are named by the new run's start instead
// (lifecycle.SupersedesRunsField, endedKeyedDB), which ls, stats, usage
// and the index read: the session is counted once either way.
//
// A folder or tree store may say where a session names the session it
// was started from (abi.Store.Parent: a member of one of its JSON
// files, Roo Code's parentTaskId, OpenCode's parentID; of the first
// line of a JSON Lines file, Factory Droid's session_start
// callingSessionId: the first JSON value of the file is read). A sync
// orders the sessions so that a parent comes before the sessions it
// started (parentsFirst), and a session's new run is then a child run
// of its parent's open run (runctl.BeginChild at path "subagent", the
// next iteration free there), as a SQLite store's "parent" column does.
// When the store also says where the session names the tool call that
// started it (abi.Store.SubAgentCall beside the session's first file:
// Droid's session_start callingToolUseId), the link is made at that
// call as a sub-agent file's is: in the agent step holding it, at path
// "agent.<key>_<call id>", named by the call's description
// (parentLink).
//
// A folder store may say how a parent names a session that names no
// parent (abi.StoreParent.Result, ABI 1.11: a line among the first
// eight of a tool result's output in the parent's run, "{key}" the
// session's key; Roo Code 3.35 to 3.48's new_task result "Subtask <child
// id> completed.", written into the parent's conversation once the
// sub-task ended, subtasks.go). A part of a session whose stream holds
// the line's words before "{key}" is noted (noteNaming); once every
// session of the sync is done, one goroutine (linkNamed) reads each
// noted session's run for such lines and, for each directory of that
// name beside the session's whose run is not a child run (or is one of a
// run since superseded), archives it, whole, as a child run of the
// namer's run linked at the call the result answers (at path
// "agent.<key>_<call id>", in the part holding the call), superseding
// the run it was archived in before as a run of its own (ended, as a
// sub-agent file's legacy run is); the parts these links archive are
// looked at in turn (a sub-task's sub-tasks, which follow their parent's
// new run). A named session the sync could not read then (its files not
// settled, or not there yet) is left to be archived as a run of its own:
// nothing names it again. The open runs of such stores an earlier twasm
// archived (whose parts are not new to this sync) are looked at once per
// storage, as if just archived (noteArchivedNamers; the file
// archive/subtasks-checked beside the ledger marks it done).
//
// A folder store may also say how a session that nothing names is tied
// to the call that started it by its first prompt (abi.StoreParent.Prompt,
// ABI 1.12: Roo Code before 3.35, whose sub-task's first message, the
// first of ui_messages.json, is the new_task call's message; prompt.go).
// A part whose stream holds the call's tool name is noted as above; for
// the noted run, linkNamed reads the prompts its calls state (a call whose
// result is an error or a denial left out) and, once per store directory
// and linkNamed, the first prompt of every session folder of the store
// that names no parent (folderPrompt: the declared file's first JSON
// value walked only as far as the pointer needs, an array's element by
// its index, within its first MiB); a prompt one call of the run and one
// session state (white space at either end not counting) links that
// session as a result naming it would, at that call. Two calls or two
// sessions stating it, or none, link nothing: the session stays a run of
// its own. Runs archived before a twasm that links by prompt are looked at
// once per storage (archive/subtasks-prompts-checked).
//
// Each part is one agent step of the run, at path "agent" with the part
// number as iteration, written through package capture: its bytes extend
// the run's one raw capture (capture.Options.ContinueRaw), and the part
// already archived is replayed into the plugin first, output dropped
// (capture.Agent.Replay), so a call from an earlier part pairs with its
// result in this one. What the plugin had not closed at the boundary
// (the rest of a message, a call it flushed as dangling) comes out again
// once the next line arrives; a filter drops calls, results and message
// blocks an earlier part already holds, by the provider's ids (calls and
// results counted by id, the replayed part included: the n-th call of an
// id is archived when an earlier part holds n of them, so a call id the
// provider reused in a later turn is a call of its own). A part's
// step result holds its share of the session's figures (usage, cost,
// unmapped, lines): the session's totals after the part minus those after
// the previous one, so summing a run's steps counts every token once.
// Each part's bytes begin a zstd frame of the raw capture (so that a
// killed part is cut back at its frame boundary, rawfile.Cut), and a
// session archived a little at every sync had its capture in small
// frames, each compressed alone; once its run has ended (run.completed
// written, and the ledger entry saying so), a run of several parts has
// its capture sealed (rawfile.Seal): rewritten in whole frames, the same
// bytes, renamed over the capture, so a crash leaves it whole either
// way. The ledger line that ends the run marks its capture to be sealed
// (Entry.Seal), a line written once sealed clears the mark: a kill
// while the copy is written (which may leave it beside the capture,
// "<capture>.sealing", never read) or a sync cancelled first leaves the
// mark, and the next sync's Recover seals the capture again from itself,
// removing the copy first (a copy is never taken); doctor names such
// runs. A copy no mark names (left by a twasm before the mark, or found
// after the ledger was rebuilt) is looked for once per storage and after
// every rebuild: one stat per ended run of several parts. Nothing
// extends an ended run's capture (a session that grows again is
// continued in a new run), so no Cut needs its old boundaries. A plain
// capture an older twasm wrote is left as it is.
//
// Runs carry the session's times: run.started is dated at the session's
// first timestamp, step brackets at the first and last timestamps of
// their part, events without their own time at the latest session time
// fed before them.
//
// # Sub-agents' files
//
// A file store may declare where an agent keeps its sub-agents'
// conversations, one file per sub-agent, relative to a session file
// (abi.Store.SubAgents; Claude Code:
// "{stem}/subagents/**/agent-*.jsonl"), or beside it when the glob climbs
// from the session file's directory (Kimi Code: "../agent-*/wire.jsonl",
// each agent's journal in a directory of its own; the session file is
// then the one file the store's pattern matches, and the glob does not,
// as far below the directory the glob climbs to; or, when the store
// says "{stem}" is the id the session file states, abi.Store.SubAgentsKey,
// the file beside the glob's directory of that name whose first JSON
// value states the id, of those whose name holds its first characters,
// the one modified last of several: Gemini CLI's
// chats/<session id>/<sub-agent id>.jsonl beside
// chats/session-<time>-<the id's first 8 characters>.jsonl, sessionkey.go;
// a scan looks at a directory's names once per session, not per
// sub-agent file, and reads the first line of such a candidate once, not
// of every session file), or where a session
// file of the store names the session file it is a sub-agent of
// (abi.Store.SubAgentOf: a JSON Pointer into its first JSON value, the
// parent's file a glob of the store with the key in its name; Codex
// CLI's spawned thread, whose rollout's session_meta names its parent
// thread, the parent's rollout found by the thread id ending its name,
// in whichever day's directory; a sync reads the first line of a file
// it will archive only, not of one its ledger saw unchanged,
// namedSubAgents; doctor reads every one's, NameSubAgents, to count it
// as a sub-agent file, not a session). Such a file is not a session:
// [withSubAgents] names its session (Session.Parent) and orders a sync
// so that every session comes before its sub-agents' files (a session
// --since leaves out is added for a sub-agent that changed). The first
// part of a sub-agent file's run begins it as a child run of the
// session's open run (runctl.BeginChildAt: a step.call_workflow in the
// session's agent step, parent_run_id on every line of the child, as
// spec §6.10 links a sub-agent), so that views, stats and ls count its
// tokens and calls once, in the session's: at the tool call that
// started it when the store's sidecar names the call
// (abi.Store.SubAgentCall: its part's iteration, the call's description
// naming the link), or the session file's records do (abi.Store.SubAgentCalls:
// the last line holding the sub-agent's stem as a JSON string whose array
// of calls holds one naming it; Gemini CLI's toolCalls[].agentId; or,
// with AgentIn, whose object there names it and whose array holds one
// call, the stem less the declared Prefix: Claude Code's
// toolUseResult.agentId beside its tool_result's tool_use_id, for
// agent-<agentId>.jsonl; read from the session's file once, when the
// sub-agent's run begins; a run linked at the latest part because the
// records named no call of the session's run yet, Gemini CLI recording a
// call once it completed, Claude Code writing a foreground agent's
// result when it ends, is noted loose, Entry.LooseAt, and a sync that
// finds the session's run grown reads the records again, looseOf: once
// they name a call the run holds, the file is archived again, whole, as
// a child run linked at the call, whose link supersedes the first, which
// is ended superseded by it, as a legacy run below; else the parts looked
// at are noted, so the file is read again only when the session's run
// grows again), or when a line among the first eight of a tool
// result's output in the session's run names the file as the store
// declares (abi.Store.SubAgentResult, "{dir}" the file's directory's
// name: Kimi Code's "agent_id: agent-0", which its foreground Agent call
// returns once the sub-agent answered: a file linked before is noted
// loose and looked for again as above; or abi.SubAgentOf.Result, a
// member of an output that is a JSON object equal to a string of the
// file's first JSON value: Codex's spawn_agent's {"agent_id": <thread
// id>} or {"task_name": <agent path>}), at the call it answers
// (transcript.Pairer: a provider may reuse a call id once its call is
// answered, and the result answers its own call), or when one call only
// of the session's run states, in its input, the prompt the file starts
// with (abi.Store.SubAgentPrompt, ABI 1.11, prompt.go: the string a JSON
// Pointer names in the first of the file's first 16 lines that holds
// one, equal to the string another names in the input of a call of the
// declared tool; the Kimi CLI's <uuid>_sub_N.jsonl before 0.59 and its
// Task call's prompt), at that call: a file whose prompt no call states
// yet (the CLI writes the call once the sub-agent answered) is noted
// loose and looked for again as above, one whose prompt several calls
// state is linked at the session's latest part, the outcome saying so;
// a sidecar naming a
// call id the run holds several calls of names the latest of them made
// at or before the file's first record's time (an RFC 3339 "timestamp"
// among its first lines; the latest of the id when none is stated),
// since a sub-agent begins after its call and before a later call could
// reuse the id (sessionLinks.callOf, as parentLink does for Droid's
// sub-sessions); else, when the session's log carried the
// sub-agent's conversation too (Claude Code before 2.1.68: agent_progress
// records, of which the plugin made a child run of the part), at that
// child run's part, superseding it (lifecycle.SupersedesField: the file
// holds the whole conversation, the log's copy lacks its last answer); a
// carried run is recognised by the call id in its link's path (with the
// number capture adds to a name taken already) when one link only names
// it, else by its first message id in the file's first MiB, among the
// links naming the call when several do; else at the session's latest
// part. A sub-agent file whose session is not archived yet waits for it
// (pending), except when every run is ended at once (Options.CloseIdle 0,
// import: the session's run could not take it later); one whose session
// is gone (or, named by its key, not in the store), or whose session's
// run has ended, is a run of its own named
// "<provider> sub-agent <stem> of session <session stem>", and the
// outcome says so; one whose session is found by the id it states
// (abi.Store.SubAgentsKey) and no file states it is a session of its
// own (a later sync that finds the session archives it again as its
// child run, ending the first: below). SubAgentFile finds a file's session for import, and
// the store's directory by where the store's pattern finds the session
// (a file naming its session by key: the first of its directory and the
// maxParentClimb above it where the parent glob finds the session);
// StoreFile finds the store of a session file given to import whose
// plugin reads the facts of its source, so that import feeds the facts
// line sync feeds.
// An import given a session's file with its sub-agents' files holds the
// session's run open ([Archiver.Hold]) while they are archived into it,
// then ends it as its part would have ([Archiver.EndHeld]).
// [SubAgentFiles] lists a session file's sub-agents' files on disk (the
// glob's start directory walked, each file's session found as
// SubAgentFile finds it; for files that name their session by key, the
// session's own directory: a Codex sub-agent started the next day is
// linked by a sync, or an import given it), so that an import of the
// session alone takes them with it. The ledger notes a held run (Resume.Held, on an entry
// no longer pending) until EndHeld ends it: an import killed, or
// interrupted, before leaves it, and a ledger loaded with the note finds
// the run interrupted (doctor says an import held it); the next sync or
// import settles it after the other interrupted runs (a sub-agent's part
// cut short is continued first), links the session's sub-agents' files
// found on disk into it (through Options.Declared), and ends it as the
// import would have. So the session's run is complete, never half: no
// sub-agent's file is left to become a run of its own. A ledger rebuilt
// from the transcripts has lost the note: such a run is then a session's
// open run, as a sync leaves it. A child run
// ended at once (import) completes its link in the session's run, as
// its end by a sync does (runctl.End). Later parts grow the
// child run as any session's. A sub-agent file an older twasm archived as
// a session of its own (its ledger entry names no parent) is archived
// again, whole, as a child run, and the old run is ended as superseded
// by it (lifecycle.SupersededByField): stats and the index leave it out
// (views.Superseded), so no token is counted twice; ls still lists it,
// ended. Its ledger entry notes the run that supersedes it
// (Entry.SupersededBy), so a sync never matches the file to it again: a
// sub-agent file that grows grows its child run, whichever of the two
// run ids sorts first. The new run's ledger entry notes the run it
// archives again (Resume.Supersedes) from its first line on, and keeps
// the note once its part is written until that run is ended
// (supersede), whatever its status (an agent's error or incomplete
// status included); so a sync or import killed at any point of the
// re-link leaves the next one (Recover) to finish it: killed while the
// new run's part was written, the part is settled as any and the new
// run, holding nothing, is ended cancelled, superseded by the old run
// (relinkCut), which the same sync then archives again at the call (a
// sub-agent file's run by legacyOf or looseOf, a named Roo sub-task's by
// linkNamed, which looks at the new run's parent again:
// namedParts.again); killed after it and before the old run's end was
// written or noted, the old run is ended, superseded by the new one, its
// end written once. The file is then held live by one run. A ledger
// rebuilt from the transcripts has lost the note, and finds it again in
// the new run's run.started, whose "source" names the run it supersedes
// (SourceRef.Supersedes), when that run is still open: the next sync or
// import ends it, once (a rebuild that finds it ended notes nothing),
// after settling the new run when the kill cut its first part short
// (Interrupted.Supersedes: ended superseded by the old run when it
// holds nothing, as above). A rebuild reads the new run's link too,
// which names the old run (lifecycle.SupersedesField) for a sub-agent
// linked again at its call or a named sub-task, for the runs a twasm
// before SourceRef.Supersedes began; the link of a file an older twasm
// archived as a session of its own names no run, or the run made of
// the log's copy of a Claude Code sub-agent (before 2.1.68), so that
// the run.started alone names it. A link to a sub-agent's run that is still open is not an
// interrupted part ([Ledger.Interrupted] looks for open steps), and
// settling an interrupted part of the session leaves such runs alone.
//
// A sub-agent still running when a part was archived comes again in the
// next part (the plugin replays the earlier bytes and emits what it had
// not closed), in a child run of that part: the filter leaves out what
// the earlier parts' sub-agent runs hold (capture.Options.SubAgentFilter:
// message blocks, and usage beyond what the archived versions of a
// message state; calls answered there), so a sub-agent's tokens are
// counted once; a call left unanswered at the boundary is written again
// with its result, so each run stays valid.
//
// # Status of a session that may still grow
//
// A session log has no terminal event and its agent may resume it at any
// time, so a synced run stays open (no run.completed: the spec admits
// nothing after it) for as long as its file exists, however long it is
// idle (sync passes a negative Options.CloseIdle); a session that grows
// later gets one more part in the same run. It is ended, dated at its
// last event, only when the agent deleted the file from a store that is
// still there, or at once when Options.CloseIdle says so (import: the
// file given is complete). The truthful status of an open run is not
// "running" (nothing may be running) but its latest part's agent status,
// which spec §7 judges from the log alone: error after a provider error
// that follows the last answered prompt, incomplete on an unanswered
// prompt, a dangling call, a response the provider says was aborted or a
// model message of thinking alone, else ok. Each part's step result states it
// for the log up to the part's end; the views (views.RunNode.Open), the
// index and the exports show it, marked open. A run ended later (its file
// deleted, idle, a killed import's end settled) ends with that status:
// an incomplete session's run ends incomplete, not in error. A later part updates it by
// a new step.completed, never by changing a line. A session that grows
// after its run ended continues in a new run whose run.started "source"
// names the old one ("continues").
//
// # Sessions in parallel
//
// SyncStores archives several sessions at once, on Options.Workers
// goroutines (GOMAXPROCS by default), each with its own plugin instance.
// Two sessions may touch the same run only when they have the same
// content head (one session found at two paths, or grown between them),
// the same path, a head the ledger knows for that path, or when one is a
// sub-agent's file of the other; a SQLite, folder or tree store's
// sessions are linked by key (a sub-agent's session, a tree session the
// database holds). The sessions are cut into chains by those links
// (chainsOf; each file's head is read once more for it, from the page
// cache): a chain's sessions are archived one after the other in the
// sync's order by one worker, different chains at once, touching
// different runs and ledger entries (the ledger takes a lock). So,
// whatever the workers' timing, a sync does what it would do on one
// worker: the same runs, the same session archived once (the first found
// is new, a later find grows it or is the same bytes), the outcomes
// reported in the sessions' order as soon as every session before them
// is done, and a ledger that a sync which wrote in parallel rewrites at
// its end, one line per run by run id. A database's sessions are read
// in one read transaction per batch (one chain), then, the transaction
// ended, archived on the workers as well, each a run of its own, a
// sub-agent's session after its parent's (writeRows: wave by wave, the
// sessions whose parent the batch does not write first): the outcomes
// and the ledger are the same as one after the other. A sync cancelled
// stops starting sessions; the parts in flight are cancelled as a single
// part is.
//
// # Invariants
//
//   - The agents' files are only ever opened read-only, a session
//     folder's files as a session file's.
//   - A store's own directory may be a link to a directory (a history
//     moved to another disk and linked back): the walk follows that one
//     link, as find -H does, never one below it, and the sessions keep
//     their paths under the store's directory as configured.
//   - Only complete lines are read from a file that may still be written
//     (a tail without LF waits for the next sync, unless the file has not
//     changed for Options.Settle or Options.Whole says it is complete; a
//     whole JSON document is read only once it has not changed for
//     Options.Settle).
//     Nothing between two syncs is lost: the next part starts at the
//     previous part's Offset.
//   - The transcripts are the truth: run.started's "source" (provider,
//     path, head, the run it continues or supersedes) and each part's result "source" (from, to, the sha256
//     of the first To bytes, the session totals) say what a run holds.
//     The ledger (<storage>/archive/ledger.jsonl) is a cache of them for
//     speed: an unchanged file is recognised by path, size and mtime
//     without being read, or even opened in a sync of the stores (the
//     stat of the store's walk decides; a file that changes after the
//     walk is seen by the next sync). A missing or unreadable ledger is rebuilt from
//     the transcripts. In memory the ledger holds a fixed record of
//     each run (the hashes of its run id, path and head, the run id's 16
//     bytes, size, mtime, parts, state, and where its line is in the
//     file: about 120 bytes a run with its lookups, against 500 packed
//     and 1.1 KiB as Go values) and reads an entry from its line when
//     asked, so that a sync's heap grows little with the history it
//     holds; the file's lines are unchanged. An entry is written (pending, with what the part
//     is to do: Resume) before its part and again after; a pending entry
//     found on load is settled from the transcript, so a sync killed
//     between the two archives nothing twice. The pending line is
//     synced before the run is written; the line after a part that
//     leaves its run open with nothing more to do (no Resume, no seal)
//     is not synced on its own but by the next line's fsync or the
//     ledger's Close: a crash that loses it leaves the pending line,
//     settled the same way (a first sync makes one fsync of the ledger
//     a session, not two).
//   - A session is archived once, however a sync or import is killed
//     (see Interrupted archives below).
//   - One sync or import at a time per storage root: an flock on
//     <storage>/archive/sync.lock ([AcquireLock]); the other waits or
//     says which process is running.
//
// # Interrupted archives
//
// A sync or import interrupted (Ctrl-C, SIGTERM: its context cancelled)
// before a part's bytes were all read leaves the part as a kill does,
// not as a whole part: its step completed as cancelled with no result
// (it claims none of the bytes; before, its result claimed them all
// while the run and its raw capture held only those read), the run
// neither ended nor its ledger entry noted done, so the next sync or
// import finds it interrupted (the entry pending, its last part cut:
// readTranscript) and settles it below; a part not begun yet is not
// begun. A sync or import killed while it writes a part (kill -9, a
// crash, a power loss) leaves a run whose part never completed: run.started with
// no part at all, or a step.started with some of the part's events and
// no step.completed, and a raw capture extended by some of the part's
// bytes. The ledger finds it on load ([Ledger.Interrupted]: a pending
// entry whose transcript has a step open or no part, or that was to end
// its run and did not; with a rebuilt ledger, any unfinished session
// run with a step open or no part), and doctor reports it. The next sync
// or import settles it first, under the archive lock ([Archiver.Recover],
// which every Sync call runs before anything else): it closes what the
// part left open (sub-runs ended, steps completed) as cancelled, with an
// error that says so; cuts the raw capture back to the size and sha256
// the last completed part's result gives (what no completed part holds
// was never archived; a framed capture at the frame boundary where that
// part ended, a frame the kill cut short included: rawfile.Cut); and continues the session in the same run, from
// the last completed part's offset (0 when there is none), as the
// killed command would have (read whole or up to its last complete line,
// the run ended after the part or left open: the pending entry's Resume,
// else the settling command's own options). The new part leaves out what
// the cancelled step holds: calls, results and messages by the
// provider's ids, as for any part, and the messages without an id by
// content, in order, from the first (the part reads the same bytes from
// the same offset, so it emits them first). So the session stays one
// run, every message in it once, the raw capture holds each byte once,
// and no step is left open: ls, the index, stats and search count the
// session once, and a run is never shown "running". A run that holds no
// part and whose session cannot be read again (deleted, rewritten, or
// archived in another run) is ended as cancelled, saying why; it holds
// no session, so the session is archived afresh when it is seen again.
// One whose continuation failed (a plugin that did not load) is left
// open, its steps closed, for the next sync or import to continue. The
// runs an older twasm left interrupted and dropped from its ledger
// (archiving the session again in another run) are looked for once per
// storage (archive/orphans-checked marks it done; only the first line of
// a run the ledger does not know is read) and settled the same way:
// they are ended as cancelled, naming the run that holds the session.
// A run whose transcript a kill left without one complete line (created,
// run.started not written: with workers, a kill timed on one session
// lands where another's run is being begun) is forgotten with its
// pending entry and its file removed when the ledger is opened
// (removeUnbegun), so the session is archived afresh. Except a child
// run (a sub-agent file's) whose link its parent's transcript already
// holds (the link is written between the child's pending entry and its
// transcript): its entry is kept, and the part that continues it begins
// the run under that link, with the id the link names (a file gone
// meanwhile: begun and ended as cancelled), so that no link names a run
// without a transcript and no sub-agent is linked twice
// (Interrupted.Unbegun).
// An interrupted run that cannot be settled (its raw capture does not
// start with what its last part holds) gets nothing more until it is:
// every part for it fails with [ErrInterrupted], naming it.
//
// The sub-runs of a cancelled step (a sub-agent's messages) are ended as
// cancelled and kept; the new part makes each sub-agent's run again,
// whole, and that run supersedes the cancelled one: the new link's
// step.call_workflow.started names it (lifecycle.SupersedesField; the
// sub-runs are matched by name, capture.Options.Supersede). So each
// sub-agent has one sub-run that is not superseded, and the index, which
// leaves superseded runs out of searches, finds its messages once. A run
// ended because its session is archived in another run (the orphans
// above) says so in its run.completed (lifecycle.SupersededByField),
// and the index leaves it, and its sub-runs, out too.
//
// # Damaged raw captures
//
// A twasm before 2873b2b wrote a wrong raw capture for a session with a
// line longer than a read of 256 KiB (feedDated built a chunk in the
// array of the line's cut-short carry, and moving the next carry to its
// front overwrote the chunk's first bytes: a line end lost, the lines
// around it merged), and the plugin read the same wrong bytes, so the
// run's transcript is wrong too. [CheckRaw] finds such runs, and any
// capture changed on disk since: every part's result states the sha256
// of the source's bytes it read (hashed from the agent's file, or of the
// stream a folder's or database's part is) and the raw capture's size
// and sha256 after it (transcript.RawRef), so each part's bytes in the
// capture (a file's after the facts line fed before them) are checked
// against their source whether the agent's file is still there or not.
// Masked runs are checked against what was written only. For a damaged
// run of a session folder, its files are hashed as the run's FileStates
// say; for one of a session file, the agent's file is opened read-only:
// where its first bytes still hash as the ledger says, the capture is
// compared with it and the first byte that differs is given; otherwise
// the first line of the capture that is not JSON. `twasm doctor` reports
// each (an error).
//
// [Archiver.Repair] marks the damaged runs whose file still holds the
// bytes archived to be archived again by the next SyncStores (`twasm
// sync --repair`): the file is read whole into a new run, as if no run
// held it (its sub-agent files' runs are archived again with it, as
// child runs of the new run, since a superseded run's sub-runs are left
// out of every count), and the damaged run is then ended as cancelled,
// superseded by the new one (lifecycle.SupersededByField; its ledger
// entry's SupersededBy, which keeps a sync from matching a file to it
// again, rebuilt from the transcript). A damaged run that had ended
// before (an import's; a sync's whose file was gone and is back) can no
// longer say so in its end: the new run's run.started names it among the
// ended runs it holds again (lifecycle.SupersedesRunsField, as for a
// keyed database's copy, endedReplaced), and readers leave it out the
// same way. A damaged sub-agent file's run is
// repaired by archiving its session so: a sub-agent's run is counted in
// its session's tree, and a new child run beside the old one would count
// it twice. So stats, usage and the index count the session once; ls
// still lists the old run, ended. A run whose file is gone or changed,
// or whose sub-agent files' runs could not be archived again, is kept as
// it is and reported (ActionDamaged); the agents' files are only read.
// A repair is killable at any moment, and the next sync finishes it, a
// plain one as much as a repair: the new run's run.started names the
// damaged run it supersedes (SourceRef.Supersedes, SourceRef.Repair) and
// its ledger entry notes it (Resume.Supersedes, Resume.Repair) until
// that run is ended, so that a kill after the new run's part and before
// the damaged run's end, the ledger kept or rebuilt, leaves the next
// sync or import to end it as the repair would have (Recover,
// supersede: its sub-agent files' runs first, superseded by the new
// run), once. A sub-agent file whose run a repair ended, superseded by
// its session's new run, before the kill let it archive the file again
// is held by no run of its own (orphanedOf): the next sync archives it
// again, whole, as a child run of its session's run; a sub-task's folder
// so (a Roo Code or Cline task store's) the same way, linked as a first
// sync links it: by the parent it names (parentLink), or, when its
// parent's result or call names it (abi.StoreParent.Result, Prompt),
// once its parent's new run is read for the sub-tasks it names
// (linkNamed). Such a named sub-task is archived again by a repair only
// that way, never first as a run of its own, which a kill could leave
// unlinked. A kill before the
// new run's first part completed leaves it holding nothing: it is ended
// as cancelled, superseded by the damaged run, which stays as it was
// until a repair. The next repair finishes one too, without archiving
// the session a third time (holderOf).
// A session folder is repaired the same way when each of its files still
// holds what the run read of it (a JSON document: unchanged since), its
// files read whole into the new run; database, older file tree and
// sections sessions are checked, not repaired.
//
// # Threat model
//
// A store's declaration is untrusted input (the host checks its paths
// stay under the home directory or a variable's directory, with no ".."):
// this package only walks it and opens regular files in it read-only. Session files are untrusted input: they reach the transcript only
// through the sandboxed plugin; this package reads bytes, hashes them and
// scans them for timestamps and message ids, nothing more, except a
// sub-agent's sidecar (abi.SidecarKey): at most 64 KiB of JSON, of which
// one string is read and used only as a step path segment (sanitised to
// the path grammar) and to find a tool call. Paths in the ledger or in a
// transcript's "source" are only compared, stat'ed and read (CheckRaw),
// never opened for writing; a raw capture path a transcript names is
// opened only under the run's own raw directory (rawOf). A store directory may vanish while it is walked: it is
// reported, and closes no run.
package archive
