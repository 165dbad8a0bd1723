package abi

// Manifest describes a plugin. It is JSON on the wire.
type Manifest struct {
	// Name is the plugin's name, e.g. "claude".
	Name string `json:"name"`
	// Version is the plugin's own version (semver).
	Version string `json:"version"`
	// Providers are the provider names it serves, e.g. ["claude",
	// "anthropic"]; a provider name belongs to one plugin.
	Providers []string `json:"providers"`
	// Formats are the input formats it reads, e.g. ["stream-json",
	// "json", "session-log"].
	Formats []string `json:"formats"`
	// Description is one line for `twasm plugins list`.
	Description string `json:"description,omitempty"`
	// SDK names the SDK and version that built the plugin.
	SDK string `json:"sdk,omitempty"`
	// Keys (ABI 1.2, optional) are the object keys the plugin reads, at
	// most 255 distinct names. The host then marks every unescaped
	// key of its tapes as keyed: a declared key carries its 1-based
	// number in this list instead of a hash, so that the plugin matches it
	// without hashing or comparing bytes (see Doc.Keys). A host that
	// predates 1.2 ignores the field and sends hashed keys.
	Keys []string `json:"keys,omitempty"`
	// Stores (ABI 1.4, optional) are the agent's native session stores
	// the plugin reads: `twasm sync` and `twasm doctor` look in every
	// store every loaded plugin declares, bundled or dropped in. A host
	// that predates 1.4 ignores the field.
	Stores []Store `json:"stores,omitempty"`
	// SourceFacts (ABI 1.4, optional) asks for a facts line at the start
	// of every stream the host reads from a store: the first line handed
	// to the plugin is then a [SourceFacts] object saying where the bytes
	// come from. A plugin that does not ask never sees one.
	SourceFacts bool `json:"source_facts,omitempty"`
}

// StoreSessionKey is Store.Session for a store whose sessions go by the
// key another SQLite store of the same provider keeps the same session
// under: a file store's files named by that key, or a SQLite store's
// session keys.
const StoreSessionKey = "key"

// Store is one native session store of an agent (ABI 1.4): where the
// agent keeps its sessions, which files are sessions, and how long the
// agent keeps them. Every path is data the host checks: a store lies in
// the user's home directory or under a directory an environment variable
// names, never elsewhere.
type Store struct {
	// Name says which store it is, for people ("Claude Code projects").
	Name string `json:"name"`
	// Provider is the provider its sessions are normalized as; empty:
	// the plugin's first provider. It must be one of the plugin's.
	Provider string `json:"provider,omitempty"`
	// Kind is the kind of source: "file" (the default: one session per
	// file, JSON Lines the agent appends to, or, for a .json file, one
	// JSON document it rewrites whole), "folder" (one session per
	// directory: Pattern matches the directories, Files the files of
	// one that the plugin reads; see [SourceFile]), or "sqlite" (a SQLite
	// database holding many sessions: Pattern matches the database file,
	// SQLite says what to read of it), or "sections" (ABI 1.6: a file
	// of many sessions the agent appends one after another, each
	// starting with a line that starts with SessionStart; see
	// [StoreKindSections]).
	Kind string `json:"kind,omitempty"`
	// SessionStart (ABI 1.6, kind "sections") is the prefix of the line
	// that starts a session in the file (Aider: "# aider chat started
	// at "): the host splits the file there, one run per session.
	SessionStart string `json:"session_start,omitempty"`
	// SQLite (ABI 1.4, with Kind "sqlite") declares, as data, the
	// read-only queries that list the database's sessions and read the
	// rows of one.
	SQLite *SQLiteSource `json:"sqlite,omitempty"`
	// Roots are the candidates for the agent's data directory, in
	// order: the first that applies is the store's root (an override
	// environment variable first, then the defaults per OS).
	Roots []Root `json:"roots"`
	// UnlessEnv: when this environment variable is set, the store is not
	// looked at (an older layout the variable replaced).
	UnlessEnv string `json:"unless_env,omitempty"`
	// Dir is the sessions' directory, relative to the root ("" : the
	// root itself).
	Dir string `json:"dir,omitempty"`
	// Pattern is a glob over slash-separated paths relative to Dir that
	// matches the session files: "*" and "?" stay within one name, "**/"
	// crosses any number of directories, "[...]" is a class and
	// "{a,b}" alternatives. For a "folder" store it matches the session
	// directories.
	Pattern string `json:"pattern"`
	// Files (kind "folder") are globs, relative to a session directory,
	// of the files of one session, in the order the plugin reads them:
	// the files one glob matches come in name order before those of the
	// next glob, each once. A file named *.json is one JSON document the
	// agent rewrites whole; any other holds JSON Lines it appends to. A
	// directory none of whose files match is not a session.
	Files []string `json:"files,omitempty"`
	// Session says how one session is told from another: "content" (the
	// default: by the bytes it starts with, wherever they are found). A
	// "tree" store's sessions are known by their provider and key, the
	// name of the session's first file without its extension, as a
	// SQLite store's are by theirs: a session an agent keeps in both (the
	// same key in its database and in its older file tree) is archived
	// once. A "file" store whose Session is "key" (StoreSessionKey, ABI
	// 1.8) has its sessions known by their provider and key, the file's name
	// without its extension, too: a session a SQLite store of the same
	// provider holds under that key is archived from the database only,
	// and a run archived from the file before is ended, superseded by the
	// database's (a host that does not read the value archives both).
	// A "sqlite" store whose Session is "key" (an older Cursor's
	// workspace databases) keeps some of its sessions under the key
	// another database of the same provider keeps them under too: such a
	// session is archived from the other database only, and a run
	// archived from the keyed one before is ended, superseded by the
	// other's, whichever of the two a sync sees first. The keyed stores'
	// sessions are synced after every other store's. On a folder store
	// the value is ignored (its sessions are told by their directory).
	Session string `json:"session,omitempty"`
	// Parent (optional, kinds "folder" and "tree") says where a session
	// names the session it was started from (a sub-agent's, a sub-task's):
	// its run is then a child run of that session's, as for a SQLite
	// store's "parent" column.
	Parent *StoreParent `json:"parent,omitempty"`
	// SubAgents (kind "file", optional) is a glob, relative to the
	// directory of a session file, of the files in which the agent keeps
	// that session's sub-agents' conversations, one file per sub-agent;
	// "{stem}" in it stands for the session file's name without its
	// extension (Claude Code: "{stem}/subagents/agent-*.jsonl"). Such a
	// file is not a session of its own: its run is a child run of the
	// session's, linked in the session's agent step (spec §6.10), so that
	// its tokens and tool calls count once, in the session's totals. A
	// host that does not read the field archives the files as sessions.
	// The glob may start with "../" segments: the sub-agents'
	// files are then beside the session file's directory, not below it
	// (Kimi Code: "../agent-*/wire.jsonl", each agent's journal in a
	// directory of its own); the session file is then the one file in
	// the directories as far below the common ancestor that the store's
	// Pattern matches and the glob does not (SubAgentsGlob).
	SubAgents string `json:"sub_agents,omitempty"`
	// SubAgentCall (with SubAgents, or with Parent; optional) says where
	// the host reads the id of the tool call that started a sub-agent, so
	// that its run is linked at that call (in the agent step of the
	// session's run that holds the call, named by the call's
	// description; at the session's latest part when no part holds it):
	// a file beside the sub-agent's, and the top-level key of the first
	// JSON value in it (within its first 64 KiB: a small JSON document,
	// or the first line of a JSON Lines file) whose string value is the
	// call's id. With SubAgents, "{stem}" is the sub-agent file's name
	// without its extension (Claude Code 2.1.68 and later: {"file":
	// "{stem}.meta.json", "key": "toolUseId"}). With Parent (a folder or
	// tree store whose sessions name their parent), the file is beside
	// the session's first file, "{stem}" that file's name without its
	// extension (a tree store), or in the session's directory, "{stem}"
	// the directory's name (a folder store), and may be the session's
	// own file (Factory Droid: {"file": "{stem}.jsonl", "key":
	// "callingToolUseId"}, its session_start line); a session
	// `twasm import` is given alone is linked so too. A missing file,
	// key or non-string value names no call: the run is linked as
	// without the declaration (SubAgentResult, the log's copy of the
	// sub-agent, else the session's latest part).
	SubAgentCall *SidecarKey `json:"sub_agent_call,omitempty"`
	// SubAgentResult (ABI 1.8, with SubAgents, optional) says how the result of
	// the tool call that started a sub-agent names it, when no sidecar
	// does: a whole line of the result's output (among its first eight),
	// "{dir}" standing for the name of the sub-agent file's directory and
	// "{stem}" for the file's name without its extension (Kimi Code:
	// "agent_id: {dir}", its Agent call's result starting "agent_id:
	// agent-0" for agents/agent-0/wire.jsonl). The sub-agent's run is
	// then linked at that call; one archived before the result was
	// written (Kimi Code writes a foreground Agent call's once the
	// sub-agent answered) is archived again at the call by a later sync
	// (a host of ABI 1.11 and later). A host that does not read it links
	// the run at the session's latest part.
	SubAgentResult string `json:"sub_agent_result,omitempty"`
	// SubAgentsKey (ABI 1.9, with SubAgents, optional) says that
	// "{stem}" in SubAgents stands for the session's id, which the
	// session file states, not for the file's name without its
	// extension: the agent keeps a session's sub-agents' files in a
	// directory named by the id while it names the session's file
	// otherwise (Gemini CLI 0.37 and later:
	// chats/<session id>/<sub-agent id>.jsonl beside
	// chats/session-<time>-<the id's first 8 characters>.jsonl;
	// SubAgents "{stem}/*.{json,jsonl}", SubAgentsKey {"member":
	// "/sessionId", "prefix": 8}). When several session files state the
	// id (a chat the agent copied to another file), the one modified last
	// is the session. A host that does not read the field looks for a
	// directory named by the session file's stem, finds none, and
	// archives the sub-agents' files the store's Pattern matches as
	// sessions of their own.
	SubAgentsKey *SessionKey `json:"sub_agents_key,omitempty"`
	// SubAgentCalls (ABI 1.9, with SubAgents, optional) says where the
	// session's own file, JSON Lines, names the tool call that started
	// each sub-agent, when no sidecar does (SubAgentCall): a record
	// holding an array of calls, one of which names the sub-agent's file
	// by its stem (Gemini CLI 0.39 and later: a gemini message's
	// toolCalls, the sub-agent's call stating its agentId; {"calls":
	// "/toolCalls", "agent": "agentId", "id": "id"}), or by a member of
	// another object of the record, the file's name by a part of it
	// (RecordCalls.AgentIn and Prefix: Claude Code's toolUseResult.agentId
	// on an Agent call's result, its file agent-<agentId>.jsonl). The sub-agent's
	// run is then linked at that call (the last record naming the
	// sub-agent wins: an agent may append a record again as it changes).
	// A host that does not read it links the run as without it.
	SubAgentCalls *RecordCalls `json:"sub_agent_calls,omitempty"`
	// SubAgentPrompt (ABI 1.11, with SubAgents, optional) says how a
	// sub-agent's file and the tool call that started it state the same
	// prompt, for an agent whose files name the call nowhere (the Kimi
	// CLI before 0.59: <uuid>_sub_N.jsonl starts with the Task call's
	// prompt argument as its first user message; the call's result is
	// the sub-agent's last answer). The sub-agent's run is then linked
	// at the one call of the session's run whose input states that
	// prompt; when none does yet (the agent writes the call once it
	// returned), at the session's latest part, archived again at the
	// call by the sync that finds the session's run holding it (as for
	// SubAgentCalls); when several do, at the session's latest part. A
	// host that does not read it links the run as without it.
	SubAgentPrompt *PromptMatch `json:"sub_agent_prompt,omitempty"`
	// SubAgentOf (kind "file", optional) says how a session file names
	// the session file of the same store it is a sub-agent of, for an
	// agent that keeps a sub-agent's conversation as a session of its
	// own (Codex CLI: a spawned thread's rollout, whose session_meta
	// names its parent thread). Such a file is read as a sub-agent's
	// file (as [Store.SubAgents] are): its run a child run of that
	// session's, linked at the call that started it when the call's
	// result names it. A host that does not read the field archives the
	// file as a session of its own.
	SubAgentOf *SubAgentOf `json:"sub_agent_of,omitempty"`
	// RetentionDays is how long the agent keeps a session before
	// deleting it (0: it does not, as far as known). RetentionFile and
	// RetentionKey name a JSON settings file (relative to the root) and
	// the top-level key in it where the user changed that number.
	RetentionDays int    `json:"retention_days,omitempty"`
	RetentionFile string `json:"retention_file,omitempty"`
	RetentionKey  string `json:"retention_key,omitempty"`
}

// SubAgentsGlob splits a store's sub-agent glob (Store.SubAgents) into
// how many directories it climbs from the session file's ("../" at its
// start) and the glob below the directory it climbs to.
func SubAgentsGlob(glob string) (up int, rest string) {
	for len(glob) > 3 && glob[:3] == "../" {
		up++
		glob = glob[3:]
	}
	return up, glob
}

// SidecarKey names one string member of a small JSON file beside a
// store's file ([Store.SubAgentCall]): File is relative to that file's
// directory, "{stem}" standing for the file's name without its
// extension; Key is a top-level key of the object it holds. The host
// reads at most 64 KiB of it.
type SidecarKey struct {
	File string `json:"file"`
	Key  string `json:"key"`
}

// SessionKey says where a session file states its id
// ([Store.SubAgentsKey], ABI 1.9).
type SessionKey struct {
	// Member is a JSON Pointer (RFC 6901) into the session file's first
	// JSON value (the first line of a JSON Lines file, a JSON document
	// read up to 1 MiB) to the string that is the id.
	Member string `json:"member"`
	// Prefix (optional) says the session file's name holds the id's
	// first Prefix characters: the host reads the id of such files only
	// (0: of every session file beside the sub-agents' directory).
	Prefix int `json:"prefix,omitempty"`
}

// RecordCalls says where the records of a session's JSON Lines file
// name the tool calls that started its sub-agents ([Store.SubAgentCalls],
// ABI 1.9).
type RecordCalls struct {
	// Calls is a JSON Pointer (RFC 6901) into a record (one line) to an
	// array of call objects.
	Calls string `json:"calls"`
	// Agent is the member of a call object whose string value names the
	// sub-agent the call started: its file's name without extension.
	Agent string `json:"agent"`
	// ID is the member of that call object holding the call's id.
	ID string `json:"id"`
	// AgentIn (ABI 1.10, optional) is a JSON Pointer into the record to the
	// object whose Agent member names the sub-agent, for a record whose
	// call objects do not: the record then names the sub-agent of its
	// one call (the one object of its array holding an ID; none when
	// several do). Claude Code: the record of an Agent (Task) call's
	// result, whose toolUseResult states the agentId and whose
	// message.content holds the tool_result block with the call's
	// tool_use_id ({"calls": "/message/content", "agent": "agentId",
	// "id": "tool_use_id", "agent_in": "/toolUseResult", "prefix":
	// "agent-"}). A host that does not read it finds no call object
	// naming the sub-agent and links the run as without SubAgentCalls.
	AgentIn string `json:"agent_in,omitempty"`
	// Prefix (ABI 1.10, optional) is what the sub-agent file's name holds before
	// the name the Agent member states (Claude Code: "agent-", its
	// files agent-<agentId>.jsonl); "" when the member states the
	// file's whole name without its extension.
	Prefix string `json:"prefix,omitempty"`
}

// PromptMatch says how a sub-agent's file and the call that started it
// state the same prompt ([Store.SubAgentPrompt], ABI 1.11), or a folder
// store's session and the call of another session's run that started it
// ([StoreParent.Prompt], ABI 1.12).
type PromptMatch struct {
	// File (StoreParent.Prompt only) is the session's file holding the
	// prompt: one of the store's Files globs, exactly as listed there.
	File string `json:"file,omitempty"`
	// Record is a JSON Pointer into the records (lines) of the
	// sub-agent's JSON Lines file: the first of its first 16 lines,
	// within its first MiB, in which it names a string holds the prompt
	// (Kimi CLI: "/content", its first user message; the checkpoint
	// lines before it have none, or, for an agent with the SendDMail
	// tool, a user message whose content is an array). With
	// StoreParent.Prompt, into File's first JSON value.
	Record string `json:"record"`
	// Input is a JSON Pointer into the input of a tool call of the
	// session's run, as its plugin reported the call, to the string
	// that equals the prompt (Kimi CLI: "/prompt"; a host of ABI 1.12
	// and later compares the two with white space trimmed from both
	// ends).
	Input string `json:"input"`
	// Name (optional) is the tool's name: the calls of that name only
	// (Kimi CLI: "Task").
	Name string `json:"name,omitempty"`
}

// SubAgentOf says how a session file of a "file" store names the
// session it is a sub-agent of ([Store.SubAgentOf]).
type SubAgentOf struct {
	// Member is a JSON Pointer (RFC 6901: "/a/b" is member b of the
	// object that is member a) into the file's first JSON value (the
	// first line of a JSON Lines file, read up to 1 MiB) to the string
	// that is the parent's key; absent or empty: the file is a session.
	// Codex: "/payload/source/subagent/thread_spawn/parent_thread_id".
	Member string `json:"member"`
	// File is a glob, relative to the store's directory, that matches
	// the parent's session file, "{key}" (once, in its last element)
	// standing for the parent's key. Codex:
	// "**/rollout-*-{key}.jsonl", the thread id ending the file's name
	// in whichever day's directory it was started.
	File string `json:"file"`
	// Result (optional) says how the result of the parent's tool call
	// that started the sub-agent names it: a member of the result's
	// output, when that output is a JSON object, and the JSON Pointer
	// into the sub-agent file's first JSON value of the string the
	// member equals. The sub-agent's run is then linked at that call,
	// else at the parent's latest part. Codex: {"agent_id":
	// "/payload/id"} (multi-agent v1's spawn_agent returns the thread
	// id), {"task_name": "/payload/source/subagent/thread_spawn/agent_path"}
	// (v2 returns the agent's path).
	Result map[string]string `json:"result,omitempty"`
}

// StoreKindSQLite is the kind of a store that is a SQLite database of
// many sessions ([Store.SQLite]).
const StoreKindSQLite = "sqlite"

// StoreKindSections is the kind of a store whose files each hold many
// sessions appended one after another (ABI 1.6; Aider's
// .aider.chat.history.md in each repository): a line starting with
// [Store.SessionStart] starts a session, which runs to the next such
// line or the end of the file. The host hands the plugin each session's
// bytes as a stream of their own, one run per session (bytes before the
// first such line belong to the first session; a blank line right before
// a start line is the new session's, unless the run of the session
// before already holds it): a session the agent
// goes on writing at the end of the file grows its run, a session
// appended after it is a new run. A session is told from another by its
// bytes, as a file store's sessions are: its first lines (the start
// line, with its date) are its identity.
const StoreKindSections = "sections"

// StoreKindTree is the kind of a store whose sessions are each spread
// over a tree of files linked by name (OpenCode's older storage:
// session/<project>/<id>.json, message/<id>/<message>.json,
// part/<message>/<part>.json). Pattern matches the sessions' first files,
// relative to Dir; a session's key is that file's name without its
// extension. Files are globs relative to Dir (not to a session
// directory), read in order as a folder store's are, in which "{key}"
// stands for the session's key and "{*}", in a glob, for the name
// without extension of each file the glob before it matched: the files
// it matches for one come right after that file (a message, then its
// parts). A key holding a glob character or a slash is not a session.
const StoreKindTree = "tree"

// StoreParent says where a session of a "folder" or "tree" store names
// the session it was started from.
type StoreParent struct {
	// File is the session's file that names it: one of Files' globs,
	// exactly as listed there. The host reads the first file it matches
	// (a tree store: with "{key}" replaced by the session's key, relative
	// to the store; a folder store: in the session's directory) and in it
	// the first JSON value, within its first MiB: a JSON document, or the
	// first line of a JSON Lines file (Factory Droid's session_start).
	// When File is a tree store's first Files glob, `twasm import` of one
	// session file finds its parent too: the file of the parent's key
	// beside it, with the same extension.
	File string `json:"file"`
	// Member is the top-level member of that value holding the
	// parent's key (a string; empty, absent, not a plain name or the
	// session's own key: no parent): the parent is the session of the
	// same store with that key (a "folder" store: the directory of that
	// name beside the session's). Sync archives a parent before its
	// children; a child whose parent's run is ended or not archived is a
	// run of its own.
	Member string `json:"member"`
	// Result (ABI 1.11, optional, a folder store) says how the parent
	// names a session when the session names no parent: a line, among
	// the first eight of the output of a tool result in the parent's
	// run, "{key}" standing for the session's key (Roo Code 3.35 to
	// 3.48, whose sub-task's folder names no parent while the parent's
	// new_task call gets the result "Subtask <child id>
	// completed.\n\nResult:\n..." once the sub-task ends: "Subtask {key}
	// completed."). The sync that archives the part of a session whose
	// results name another of the store's sessions (the directory of that
	// name beside it) makes that session's run a child run of its run,
	// linked at the call the result answers: a session archived before as
	// a run of its own is archived again, whole, as the child run, which
	// supersedes it. A host that does not read it leaves such a session a
	// run of its own.
	Result string `json:"result,omitempty"`
	// Prompt (ABI 1.12, optional, a folder store) says how a session that
	// names no parent (nor does a result, Result) and the tool call of
	// another session's run that started it state the same prompt, when
	// only that text ties them (Roo Code before 3.35, Kilo Code before
	// 4.135: the sub-task's first message is the new_task call's
	// message; {"file": "ui_messages.json", "record": "/0/text",
	// "input": "/message", "name": "new_task"}). Its File is one of
	// Files' globs, exactly as listed there, and Record a JSON Pointer
	// into the first JSON value of the first file it matches in the
	// session's directory (read as a stream: the value may be larger
	// than a MiB, the prompt within its first MiB). The two are equal
	// once white space is trimmed from both ends. The sync that archives
	// a part of a session whose run holds such a call links the one
	// other session of the store (the directory beside it) that names no
	// parent and states that prompt as a child run of that run, at that
	// call, as Result does (superseding a run of its own archived
	// before); only when one call of that run and one such session state
	// it: none or several, the session stays a run of its own. A host
	// that does not read it leaves such a session a run of its own.
	Prompt *PromptMatch `json:"prompt,omitempty"`
}

// SQLiteSource is what the host reads of a SQLite store (ABI 1.4). Every
// query is one read-only SELECT (or WITH ... SELECT): the host refuses a
// declaration with more than one statement, ATTACH, DETACH, PRAGMA,
// VACUUM, load_extension or a statement that writes, and runs the
// queries on a read-only connection with query_only on, in one read
// transaction, under a time limit.
//
// One session is one run. Sessions lists them: each row's "key" column
// (text) names a session and its "cursor" column (an integer that grows
// whenever anything of the session changes: a max(time_updated) or
// max(seq) over its rows) says whether it changed since the last sync. An
// optional "parent" column names the session a sub-agent session was
// started from (NULL or empty: none): its run is then a child run of the
// parent's, linked by a step.call_workflow at path "subagent" of the
// parent run (the parent listed first: list sessions by creation).
// For a session whose cursor moved, each of Tables is run in order with
// the parameters :session (the key) and :since (the cursor the previous
// sync read up to; 0 the first time), and each row becomes one [Row]
// line handed to the plugin after a [SourceFacts] line. A query selects
// the rows changed at or after :since (>=: a row written in the same
// tick as the previous cursor is read again, never lost): a row changed
// in place comes again, as a newer version with the same key, and the
// plugin replaces what it held under that key.
type SQLiteSource struct {
	// Sessions lists the sessions: columns "key" and "cursor".
	Sessions string `json:"sessions"`
	// Newer (ABI 1.14), optional, is the sessions query of a newer schema: when the
	// database has its Table, its Sessions is run instead of Sessions
	// (OpenCode's v2 runtime keeps its messages in session_message, a
	// table a database of an older build lacks, and a query naming a
	// table the database lacks fails).
	Newer *SQLiteNewer `json:"newer,omitempty"`
	// Schemas (ABI 1.15), optional, are the sessions queries of newer
	// schemas, in order: the first whose Tables the database all has is
	// run instead of Newer and Sessions (OpenCode's split of its v2
	// runtime's sessions into session_v2 keeps the older binary's
	// session table in one lineage and renames it in the other: which
	// query may name which table depends on more than one table).
	Schemas []SQLiteSchema `json:"schemas,omitempty"`
	// Tables are read per session, in order.
	Tables []SQLiteTable `json:"tables"`
	// Related (ABI 1.7) are other databases of the agent whose rows say
	// something of this database's sessions (Cursor's workspaces say
	// which folder a composer belongs to): each is read, read-only, when
	// a session is read, and a session's related rows come before its
	// own rows in its stream.
	Related []SQLiteRelated `json:"related,omitempty"`
}

// SQLiteNewer is the sessions query of a newer schema of a SQLite
// store ([SQLiteSource.Newer]).
type SQLiteNewer struct {
	// Table is a table the newer schema added.
	Table string `json:"table"`
	// Sessions lists the sessions as [SQLiteSource.Sessions] does.
	Sessions string `json:"sessions"`
}

// SQLiteSchema is the sessions query of one newer schema of a SQLite
// store ([SQLiteSource.Schemas], ABI 1.15).
type SQLiteSchema struct {
	// Tables are the tables the schema has (1 to 8): the query is run
	// when the database has every one.
	Tables []string `json:"tables"`
	// Sessions lists the sessions as [SQLiteSource.Sessions] does.
	Sessions string `json:"sessions"`
}

// SQLiteRelated is a set of other databases whose rows are about a
// SQLite store's sessions (ABI 1.7, [SQLiteSource.Related]): Cursor's
// workspaceStorage/<hash>/state.vscdb lists the composers of one
// workspace, and workspace.json beside it names the workspace's folder.
type SQLiteRelated struct {
	// Table names the rows in their [Row] line ("workspace").
	Table string `json:"table"`
	// Glob matches the databases, relative to the directory of the
	// store's database; each "../" at its start climbs one directory
	// (at most two).
	Glob string `json:"glob"`
	// Query is one read-only SELECT, run once on each database found;
	// Key names its column that holds the key of the session a row is
	// about (the row is handed in that session's stream, with version 0).
	Query string `json:"query"`
	Key   string `json:"key"`
	// File, optional, is a JSON file in each database's directory,
	// handed in each of its rows as the column "file" (null when it is
	// missing, not JSON or larger than 64 KiB).
	File string `json:"file,omitempty"`
}

// SQLiteTable is one query of a session's rows (ABI 1.4).
type SQLiteTable struct {
	// Table names the rows in their [Row] line ("part").
	Table string `json:"table"`
	// Query selects the session's rows changed at or after :since, in
	// the order they are handed over.
	Query string `json:"query"`
	// Key and Version name the columns that identify a row and order its
	// versions (an integer).
	Key     string `json:"key"`
	Version string `json:"version"`
	// Time, optional, names an integer column of milliseconds since
	// 1970 that dates the row: the host dates the run and its parts by
	// it (the plugin dates its events itself).
	Time string `json:"time,omitempty"`
	// JSON names the text columns that hold JSON: their value is inlined
	// as JSON in the row (so the tape indexes it); one that does not
	// parse stays a string.
	JSON []string `json:"json,omitempty"`
	// IfTable (ABI 1.14), optional, names a table the query reads that a newer
	// schema added: on a database without it the query is not run and
	// reads no rows.
	IfTable string `json:"if_table,omitempty"`
}

// RowType is the value of the "$twasm" member that marks a row line of a
// SQLite store (ABI 1.4).
const RowType = "row"

// Row is one row of a SQLite store as the host hands it to the plugin
// (ABI 1.4): one JSON object on one line,
//
//	{"$twasm":"row","table":"part","key":"prt_01","version":1767312000123,"row":{"id":"prt_01","data":{"type":"text","text":"hi"}}}
//
// Row holds the columns by name: integers and reals as JSON numbers,
// text as strings, a JSON column ([SQLiteTable.JSON]) inlined, NULL as
// null, a blob as a base64 string. A session's stream starts with a
// [SourceFacts] line naming the database; each later sync of the session
// hands a new facts line and the rows changed since. The lines are the
// run's raw capture: renormalize rebuilds the run from them after the
// database is gone.
type Row struct {
	Type    string  `json:"$twasm"`
	Table   string  `json:"table"`
	Key     string  `json:"key"`
	Version int64   `json:"version"`
	Row     RawJSON `json:"row"`
}

// RawJSON is JSON text kept as it is (encoding/json's RawMessage,
// without the import, so that a plugin built with this package does not
// link encoding/json).
type RawJSON []byte

// MarshalJSON returns r itself ("null" when empty).
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// Root is one candidate for a store's root directory (ABI 1.4).
type Root struct {
	// Env names an environment variable: the root applies when it is
	// set and not empty, and is its value joined with Path.
	Env string `json:"env,omitempty"`
	// Path is, with Env, relative to the variable's value; without it, a
	// path in the home directory written "~/..." (or "~").
	Path string `json:"path,omitempty"`
	// OS restricts the root to one GOOS ("linux", "darwin", "windows");
	// empty: every OS.
	OS string `json:"os,omitempty"`
	// Projects (ABI 1.6), without Env and Path: the store is in every
	// project directory twasm knows (an agent that keeps its history in
	// each repository, Aider): the projects the sync configuration file
	// lists and those of the runs twasm archived. Such a store's Pattern
	// is matched in the project directory and the directories below it
	// that it names, never in the whole tree ("**" is refused).
	Projects bool `json:"projects,omitempty"`
	// List (ABI 1.7) makes the root stand for the directories a JSON
	// file lists (Crush's projects.json, the data directory of every
	// project it ran in): the file is List.File in the root's directory
	// (Env, Path and OS as any root's, the first that applies), and each
	// directory it names is a store directory, in which Dir and Pattern
	// are matched. The host reads the list itself, read-only; a list
	// missing or malformed, or an entry that is not an absolute path,
	// is a warning of doctor and sync, never a failure. A 1.6 host
	// ignores the member and takes the root for the list's directory.
	List *RootList `json:"list,omitempty"`
}

// RootList says where a JSON file lists a store's directories (ABI 1.7,
// [Root.List]): {"projects": [{"path": "/src/app", "data_dir":
// "/src/app/.crush"}]} is File "projects.json", Array "projects", Field
// "data_dir".
type RootList struct {
	// File is the list's path, relative to the root's directory.
	File string `json:"file"`
	// Array is the top-level member that holds the list, an array of
	// objects; empty, the document itself is that array.
	Array string `json:"array,omitempty"`
	// Field is the member of each object that names a directory: an
	// absolute path.
	Field string `json:"field"`
	// Project (ABI 1.8, optional) is the member of each object that
	// names the project whose data the listed directory holds (Crush:
	// "path", the directory it ran in): an absolute path, which the host
	// hands the plugin in the facts line of every session it reads there
	// ([SourceFacts.Project]). An entry without it, or one of several
	// entries naming the same directory with different projects, gives
	// no project. A 1.7 host ignores the member.
	Project string `json:"project,omitempty"`
}

// SourceFactsType is the value of the "$twasm" member that marks a
// facts line (ABI 1.4).
const SourceFactsType = "source"

// SourceFacts is the facts line the host hands a plugin that asked for
// it ([Manifest.SourceFacts]) before the bytes of a store's session
// (ABI 1.4): one JSON object on one line,
//
//	{"$twasm":"source","store":"Claude Code projects","path":"-home-me-proj/1f3e.jsonl","name":"1f3e.jsonl","size":5120,"mtime":"2026-11-02T10:04:05.123Z"}
//
// Path is relative to the store's directory (slash-separated), Name its
// last element, Size and MTime the file's when it was read. The line is
// part of the stream: it is kept in the raw capture, so renormalize hands
// the plugin the same input, and the plugin accounts for it like any
// line (records, or OpIgnored). A stream that continues a session (a
// session that grew) gets a new facts line before the new bytes.
//
// For a SQLite store, Path and Name are the database file's, and the line
// also names the session (its key), the cursors the rows that follow were
// read between (Since, exclusive of nothing: rows changed at or after it,
// up to Cursor), the database's user_version and schema_version, and the
// sha256 of the declared queries (QuerySHA256), so that what the raw
// capture holds says where it came from after the database is gone:
//
//	{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":4096,"mtime":"...","session":"ses_1","since":0,"cursor":1767312000123,"user_version":0,"schema_version":12,"query_sha256":"..."}
//
// Project (ABI 1.8) is the project directory the host knows the session
// belongs to by where it found the store, not by the session's bytes:
// the project directory a store in every project was found in
// ([Root.Projects]: Aider's history is in the repository it ran in), or
// the directory the list entry that named the store's directory names
// ([RootList.Project]: Crush's projects.json entry's "path"). It is
// absent where the place says nothing (a store in the agent's own data
// directory, or one named by a directory whose encoding loses
// characters: the host never guesses a path). A plugin built for 1.7 or
// before does not read it and works as before.
//
// Copied (ABI 1.10) is set in the facts line of a new run's first part
// when the file's first Lines lines are bytes another run (Run) holds of
// its session, beyond the first lines both start with: the two files
// have the same head and diverge after those lines, as a fork that
// copied its parent's journal with no mark does (the Kimi CLI's /fork
// and /undo write the parent's wire.jsonl lines up to a turn into a new
// session). Lines counts every line (blank ones too) up to the last
// line end the two share; the plugin's stream numbers them as the file
// does, after the facts lines (sdk.Line.No less the facts lines before
// it). Those lines are Run's: a plugin counts their tokens there, not in
// this run (it may show them, as the context this session started
// from, and should say so). The line is kept in the raw capture, so a
// later part replays it and renormalize reads it again. Either run may
// be the parent: the copy counts in the run archived first. A plugin
// built for 1.9 or before ignores the member.
type SourceFacts struct {
	Type  string `json:"$twasm"`
	Store string `json:"store,omitempty"`
	Path  string `json:"path"`
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	MTime string `json:"mtime"`
	// SQLite stores only.
	Session       string `json:"session,omitempty"`
	Since         *int64 `json:"since,omitempty"`
	Cursor        *int64 `json:"cursor,omitempty"`
	UserVersion   *int64 `json:"user_version,omitempty"`
	SchemaVersion *int64 `json:"schema_version,omitempty"`
	QuerySHA256   string `json:"query_sha256,omitempty"`
	// Project (ABI 1.8): see above.
	Project string `json:"project,omitempty"`
	// Copied (ABI 1.10): see above.
	Copied *SourceCopy `json:"copied,omitempty"`
}

// SourceCopy says which first lines of a session's file another run
// holds ([SourceFacts.Copied]).
type SourceCopy struct {
	Run   string `json:"run"`
	Lines int64  `json:"lines"`
}

// SourceFileType is the value of the "$twasm" member that marks a file
// line (ABI 1.4).
const SourceFileType = "file"

// SourceFile is the line the host hands a plugin before each file of a
// session read from a "folder" store ([Store.Files]): one JSON object on
// one line,
//
//	{"$twasm":"file","path":"api_conversation_history.json","size":5120,"mtime":"2026-11-02T10:04:05.123Z","document":true}
//
// then the file's content: for a JSON document (Document), the document
// compacted to one line; for JSON Lines, its complete lines as they are,
// from byte From (0: the whole file; more: the file grew, and only its
// new lines follow, after the earlier ones a previous stream of the same
// session held). A JSON document the agent rewrote is handed again whole,
// with a new file line: a plugin that keeps what it reported of the
// earlier version reports only what changed (an agent's messages without
// ids: by index and content). Path is relative to the session directory
// (slash-separated), Size and MTime the file's when it was read. A JSON
// document is read once it has not changed for a while (the agent may be
// writing it); one that is still not JSON then is handed as its lines
// (Document false), for the plugin to count. JSON Lines are handed up to
// their last complete line, the last one too once the file has not
// changed for a while.
//
// The line is part of the stream: kept in the raw capture with the
// content after it, so renormalize hands the plugin the same input, and
// the plugin accounts for it like any line (records, or OpIgnored). A
// plugin of a folder store that asks for [Manifest.SourceFacts] gets the
// facts line first, naming the session directory.
type SourceFile struct {
	Type     string `json:"$twasm"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	MTime    string `json:"mtime"`
	From     int64  `json:"from,omitempty"`
	Document bool   `json:"document,omitempty"`
}

// BeginOptions are the per-stream options, JSON on the wire.
type BeginOptions struct {
	// Provider is the provider name the stream was recorded for.
	Provider string `json:"provider"`
	// Format is a format hint ("" = detect).
	Format string `json:"format,omitempty"`
}
