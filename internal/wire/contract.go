package wire

import (
	"sort"
	"time"
)

// Version of the contract. A plugin whose major version differs from the
// host's is refused at load; a newer minor version on either side is
// compatible (fields and ops are only ever added).
const (
	Major = 1
	// Minor 1: key tokens carry a hash (FlagHashed).
	// Minor 2: a plugin may declare the object keys it reads
	// (Manifest.Keys); the host marks them in its tapes (FlagKeyed).
	// Minor 3: OpError (the step result's errors), OpIgnored (lines
	// deliberately ignored, spec 6.8) and OpMeta's NoTerminal (a format
	// without a terminal event: the host derives the status, spec 6.7).
	// Minor 4: a plugin may declare the native session stores it reads
	// (Manifest.Stores: sync and doctor look there) and ask for a facts
	// line at the start of a store's stream (Manifest.SourceFacts).
	// Minor 5: usage carries the uncached input, the one-hour part of
	// the cache write and the provider's stated total
	// (TUncachedInputTokens, TCacheWrite1hTokens, TTotalTokens).
	// Minor 6: a store of many sessions per file (Store.Kind
	// "sections", Store.SessionStart) and a root in each project
	// directory (Root.Projects); OpMeta carries the agent's working
	// directory and the repository root holding it (TCwd, TProject).
	// Minor 7: a root whose directories a JSON file lists (Root.List:
	// Crush's projects.json); a SQLite store's related databases, whose
	// rows are about its sessions (SQLiteSource.Related: Cursor's
	// workspaces).
	// Minor 8: the facts line names the project directory the host
	// knows a session belongs to by where it found the store
	// (SourceFacts.Project: a projects root's directory, or the project
	// a list entry names beside the directory, RootList.Project: Crush's
	// projects.json "path"). Also of 1.8, added after 7 without a bump
	// of their own: a file store keyed by a SQLite store's session key
	// (Store.Session "key") and how a sub-agent's call's result names it
	// (Store.SubAgentResult).
	// Minor 9: usage carries the service tier the provider states it
	// served the request at (TServiceTier: OpenAI's service_tier,
	// Anthropic's usage.service_tier), so a flex, priority or batch
	// request is priced at its tier. Also of 1.9, added after it
	// without a bump of their own: a sub-agents' directory named by the
	// id a session file states (Store.SubAgentsKey) and the session's
	// records naming the call that started a sub-agent
	// (Store.SubAgentCalls).
	// Minor 10: the facts line of a new run's first part names the run
	// that holds the file's first lines already (SourceFacts.Copied: a
	// fork that copied its parent's journal with no mark). Also of 1.10,
	// added after it without a bump of their own: a record that names
	// the sub-agent beside its one call, the file's name by a part of it
	// (RecordCalls.AgentIn and Prefix: Claude Code's).
	// Minor 11: a sub-agent's file linked at the call whose input states
	// the prompt the file starts with (Store.SubAgentPrompt: the Kimi
	// CLI's <uuid>_sub_N.jsonl before 0.59), and a folder store's session
	// linked at the call whose result in another session's run names it
	// (StoreParent.Result: Roo Code 3.35 to 3.48's sub-tasks).
	// Minor 12: a folder store's session that names no parent linked at
	// the one call of another session's run whose input states the
	// prompt the session starts with (StoreParent.Prompt: Roo Code's
	// sub-tasks before 3.35, Kilo Code's before 4.135).
	// Minor 13: a tool call or result may say it is a new version of
	// the one of its call id reported before (TRevised: an element of
	// a Cline or Roo Code task's conversation changed in place, read
	// again under a new message key): the host writes it as a revised
	// version (transcript.RevisedField) of that call or result, counted
	// once, rather than a new call reusing the id or a repeat ignored.
	// A host of 1.12 or before ignores the tag.
	// Minor 14: a SQLite store may read a table a newer schema of the
	// agent's database added (SQLiteSource.Newer, SQLiteTable.IfTable:
	// OpenCode's v2 runtime's session_message). A host of 1.13 or
	// before ignores both and runs the older queries only (a row query
	// naming the new table then fails on a database without it); the
	// bump also makes a host re-read a manifest cached by an older one,
	// which dropped the fields (host registry's HostMinor).
	// Minor 15: a SQLite store may choose its sessions query among
	// several by the tables the database has (SQLiteSource.Schemas: the
	// first whose tables all exist; OpenCode's session_v2, beside the
	// older binary's session table or renamed from it). A host of 1.14
	// or before ignores the field and runs Newer or Sessions, which
	// list none of session_v2's sessions.
	Minor = 15
)

// HostModule is the import module of the host functions. It carries the
// major version, so a plugin built for another major version fails to link
// with a message naming the module it wanted.
const HostModule = "twasm_v1"

// WASIModule is the only other module a plugin may import from, and only
// the functions in AllowedWASI.
const WASIModule = "wasi_snapshot_preview1"

// Exported functions of a plugin. All are namespaced so that they cannot
// clash with a toolchain's own malloc/free exports.
const (
	// ExportInitialize is the reactor initializer the toolchain provides;
	// the host runs it once per instance before anything else.
	ExportInitialize = "_initialize"
	// ExportMarker is never called: its presence identifies a twasm
	// plugin of major version 1 before anything is instantiated.
	ExportMarker = "twasm_abi_v1"
	// ExportVersion: () -> i32, Major<<16 | Minor.
	ExportVersion = "twasm_abi_version"
	// ExportBuffer: (size i32) -> i32. Returns the address of a
	// guest-owned buffer of at least size bytes, where the host writes
	// the input of the next call. The buffer is reused; its address is
	// valid until the next ExportBuffer call.
	ExportBuffer = "twasm_buffer"
	// ExportManifest: () -> i32 status. The plugin writes its manifest
	// (JSON, see abi.Manifest) through the output import.
	ExportManifest = "twasm_manifest"
	// ExportBegin: (len i32) -> i32 status. The buffer holds the begin
	// options (JSON, see abi.BeginOptions). Resets all per-stream state.
	ExportBegin = "twasm_begin"
	// ExportFeed: (len i32) -> i32 status. The buffer holds a batch (see
	// batch.go). The plugin reports records through the output import.
	ExportFeed = "twasm_feed"
	// ExportEnd: () -> i32 status. End of stream: flush pending records.
	ExportEnd = "twasm_end"
)

// Host functions, in HostModule. All take (ptr, len) pairs into the
// plugin's memory, which the host copies before returning.
const (
	// ImportOutput: (ptr i32, len i32). A chunk of records (internal/wire).
	// Chunks are concatenated; a record never spans two chunks.
	ImportOutput = "output"
	// ImportFail: (ptr i32, len i32). The error message of the current
	// call; the call then returns StatusRejected or StatusFatal.
	ImportFail = "fail"
	// ImportLog: (level i32, ptr i32, len i32). A debug message; the host
	// rate-limits it. Level follows log/slog (-4 debug .. 8 error).
	ImportLog = "log"
)

// Status is the result of every exported call but ExportBuffer and
// ExportVersion.
type Status uint32

// The statuses.
const (
	// StatusOK: the call succeeded.
	StatusOK Status = 0
	// StatusRejected: the input was rejected (message via fail); the
	// records reported before the failure stand and the stream goes on.
	StatusRejected Status = 1
	// StatusFatal: the plugin is in an undefined state (a recovered
	// panic); the host discards the instance.
	StatusFatal Status = 2
)

// allowedWASI lists the WASI functions a plugin may import: what the Go
// and TinyGo runtimes need for memory, clocks, randomness, stdout/stderr
// and exit. Anything else (files, sockets, environment) is refused at
// load, before the plugin runs. It is unexported because the sandbox
// trusts it: no package may widen it at run time. Read it through
// WASIAllowed and AllowedWASI.
var allowedWASI = map[string]bool{
	"args_get": true, "args_sizes_get": true,
	"environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true,
	"fd_write": true, "fd_close": true, "fd_fdstat_get": true, "fd_fdstat_set_flags": true, "fd_prestat_get": true, "fd_prestat_dir_name": true,
	"poll_oneoff": true, "proc_exit": true, "random_get": true, "sched_yield": true,
}

// WASIAllowed reports whether a plugin may import the WASI function name
// (module WASIModule).
func WASIAllowed(name string) bool { return allowedWASI[name] }

// AllowedWASI returns the WASI functions a plugin may import, sorted. The
// slice is a copy: changing it changes nothing the host checks.
func AllowedWASI() []string {
	names := make([]string, 0, len(allowedWASI))
	for name := range allowedWASI {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Limits the host enforces. A plugin that exceeds one is faulted for that
// call (the instance is discarded) with a message naming the limit.
const (
	// MaxLineBytes: a longer raw line is not sent to the plugin: it is
	// counted as unmapped "oversized_line" and kept in the raw capture.
	MaxLineBytes = 32 << 20
	// MaxBatchLines and MaxBatchBytes bound one feed call.
	MaxBatchLines = 64
	MaxBatchBytes = 1 << 20
	// MaxOutputFactor and MinOutputBytes bound the output of one call:
	// max(MinOutputBytes, MaxOutputFactor × input bytes).
	MaxOutputFactor = 8
	MinOutputBytes  = 8 << 20
	// MaxFailBytes bounds a fail message; longer ones are cut.
	MaxFailBytes = 4 << 10
	// MaxManifestBytes bounds the manifest.
	MaxManifestBytes = 64 << 10
	// DefaultMemoryLimit is an instance's memory limit unless the user
	// raises it (host.Options.MemoryLimit, twasm's --plugin-memory).
	DefaultMemoryLimit = 128 << 20
	// DefaultCallTimeout is a call's time limit per MiB of its input,
	// started, unless the user raises it (host.Options.CallTimeout,
	// twasm's --plugin-timeout).
	DefaultCallTimeout = 5 * time.Second
)
