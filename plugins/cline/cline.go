package cline

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Cline (and Roo Code) normalizer: task folders and the
// CLIs' machine-readable output.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "cline",
		Version:     "0.1.0",
		Providers:   []string{"cline", "roo", "kilocode"},
		Formats:     []string{fmtTask, fmtJSON, fmtAgentEvents, fmtRooStream, fmtRooJSON},
		Description: "Cline, Roo Code and Kilo Code task folders (api_conversation_history.json, ui_messages.json), the Cline CLI's --json output (its three envelopes) and Roo Code's CLI --output-format stream-json and json",
		SourceFacts: true,
		// Cline and Roo keep a task until the user deletes it (no
		// retention); doc.go, "Stores".
		Stores: stores,
	},
	New:  func(abi.BeginOptions) sdk.Normalizer { return newNormalizer() },
	Keys: keys,
	// Roo Code's CLI --output-format json is one pretty-printed document.
	Reassemble: true,
}

// fmtTask is the format of a task folder's stream (and of its files read
// alone).
const fmtTask = "task"

// The files of a task folder, as the stores declare them.
const (
	fileAPI      = "api_conversation_history.json"
	fileUI       = "ui_messages.json"
	fileMetadata = "task_metadata.json"
	fileHistory  = "history_item.json" // Roo Code
)

// taskFiles are the files of a task folder the plugin reads, in order:
// the UI's messages (the usage, the errors Cline showed, the completion),
// then the conversation, then the metadata. The UI comes first so that
// what it says happened after the conversation's last message (the
// completion shown, the error the task ended on) is reported after it.
// The newer sessions folder keeps the conversation as
// <id>.messages.json.
var taskFiles = []string{fileUI, fileAPI, "*.messages.json", fileMetadata, fileHistory}

// vscodeStores are the stores of a VS Code extension's task folders
// (extension id ext) in the global storage of VS Code and the forks its
// users run it in: one store per editor, each with its tasks. parent
// says where a sub-task names its parent task (nil: the extension has
// none).
func vscodeStores(name, ext, provider string, parent *abi.StoreParent) []abi.Store {
	var out []abi.Store
	for _, app := range []string{"Code", "Cursor", "VSCodium", "Windsurf"} {
		rel := app + "/User/globalStorage/" + ext
		out = append(out, abi.Store{Name: name + " (" + app + ")", Provider: provider, Kind: "folder",
			Roots: []abi.Root{{Path: "~/.config/" + rel, OS: "linux"}, {Path: "~/Library/Application Support/" + rel, OS: "darwin"}, {Env: "APPDATA", Path: rel, OS: "windows"}},
			Dir:   "tasks", Pattern: "*", Files: taskFiles, Parent: parent})
	}
	return out
}

// subTask is where Roo Code (and Kilo Code, its fork) names a sub-task's
// parent: history_item.json's parentTaskId, the parent's folder name.
// The host makes the sub-task's run a child run of its parent's. Before
// history_item.json (Roo Code 3.35 to 3.48) only the parent names the
// sub-task: its new_task call's result, "Subtask <child id>
// completed.\n\nResult:\n...", once the sub-task ended (ABI 1.11).
// Before 3.35 (Kilo Code before 4.135) neither names the other: the
// sub-task's first message, the first of ui_messages.json (Task.startTask,
// say "text"), is the new_task call's message, which ties them when no
// other call of the parent and no other task state it (ABI 1.12).
var subTask = &abi.StoreParent{File: fileHistory, Member: "parentTaskId", Result: "Subtask {key} completed.",
	Prompt: &abi.PromptMatch{File: fileUI, Record: "/0/text", Input: "/message", Name: "new_task"}}

// stores are the task folders of Cline (its CLI and, since 2026, its
// extension keep them under ~/.cline/data; older extensions under the
// editor's global storage) and Roo Code.
var stores = append(append([]abi.Store{
	{Name: "Cline tasks", Kind: "folder", Roots: []abi.Root{{Env: "CLINE_DATA_DIR"}, {Env: "CLINE_DIR", Path: "data"}, {Path: "~/.cline/data"}},
		Dir: "tasks", Pattern: "*", Files: taskFiles},
	{Name: "Cline sessions", Kind: "folder", Roots: []abi.Root{{Env: "CLINE_SESSION_DATA_DIR"}, {Env: "CLINE_DATA_DIR", Path: "sessions"}, {Env: "CLINE_DIR", Path: "data/sessions"}, {Path: "~/.cline/data/sessions"}},
		Pattern: "*", Files: []string{"*.messages.json"}},
}, vscodeStores("Cline tasks", "saoudrizwan.claude-dev", "cline", nil)...), append(vscodeStores("Roo Code tasks", "rooveterinaryinc.roo-cline", "roo", subTask),
	// Kilo Code's extension before its rewrite on Kilo CLI kept Roo
	// Code's task folders (it is Roo's fork) under its own id.
	vscodeStores("Kilo Code tasks", "kilocode.kilo-code", "kilocode", subTask)...)...)

// Kinds of file in a task folder.
const (
	kindUnknown = iota
	kindAPI
	kindUI
	kindMetadata
	kindOther
)

// fileKind is the kind of a task folder's file by its name.
func fileKind(path string) int {
	name := path[strings.LastIndexByte(path, '/')+1:]
	switch {
	case name == fileAPI:
		return kindAPI
	case name == fileUI || strings.HasSuffix(name, ".ui_messages.json"):
		return kindUI
	case strings.HasSuffix(name, ".messages.json"):
		return kindAPI
	case name == fileMetadata || name == fileHistory:
		return kindMetadata
	}
	return kindOther
}

// normalizer is the per-stream state. Everything kept across lines is a
// Go string or a number: spans die with their line.
type normalizer struct {
	file    string // the current file's path ("" before a file line)
	kind    int    // its kind
	sawTask bool   // something of a task was read
	taskID  string // the session: the folder's name
	// kilo says the folder is Kilo Code's (the facts line's store),
	// whose UI messages changed what tokensIn counts later than Roo
	// Code's (grossInput).
	kilo    bool
	cwdSent bool // a history item's workspace was reported
	api, ui []uint64
	// apiAt is, by api index, the versions of the message there written
	// and the ts of the one read last (0 none): a slice, not maps
	// (TinyGo's maps cost a wasm build most of a message's own work);
	// revising says the message being written is a version of the one
	// read there before, changed in place (changedInPlace).
	apiAt    []apiSlot
	revising bool
	keyBuf   []byte // apiHistory's message key, written for each message
	// started is when the session of a sessions folder started, as its
	// id states it (epoch ms; 0 when not known): a message dated before
	// it was copied from the session this one was forked from (see
	// forkStart). forked says that was said.
	started int64
	forked  bool
	// reasoningNext: an encrypted reasoning item (Roo Code 3.31.2) came
	// before the next assistant message, whose thinking it is.
	reasoningNext bool
	// counted are the API requests whose figures were reported: by
	// their ts, else (none stated) by their index (apiRequest).
	counted   map[int]bool
	countedTs map[int64]bool
	// sums are the figures of the UI's usage messages read, by ts, as
	// a later deleted_api_reqs sums them (deletedRequests).
	sums map[int64]figures
	// metered are the sessions folder's messages whose metrics were
	// counted, by id (else ts, else index).
	metered map[string]bool
	// meteredSum is what the sessions folder's metrics and compactions
	// counted (compaction).
	meteredSum figures
	// sessionDoc: the conversation is a sessions folder's document
	// ({messages: [...]}); sawUI: the task has UI messages.
	sessionDoc, sawUI bool
	// pending are the calls of the last assistant message not yet
	// answered, in order.
	pending []pendingCall
	// sawUsage: an api_req_started stated figures.
	sawUsage bool
	model    string
	// completion is the text of the completion the UI showed last, when
	// nothing but the user's turn followed it (at completionTime);
	// completed the attempt_completion call it answered.
	completion, completionTime, completed string
	// deferred are the errors the UI's messages end on: reported after
	// the conversation that comes after them in the stream, so that the
	// status rule sees them after the last answer.
	deferred []uiError
	// streamFail: the last request failed while streaming (apiRequest).
	streamFail streamFail
	// uiRunning: the last API request of the UI's messages read last is
	// still running (uiMessages); uiCancelled: the user cancelled it.
	uiRunning, uiCancelled bool
	// uiRetry, when set, says why the UI's messages read last end on a
	// failed request's retry: Cline retrying it (say error_retry, its
	// retries not spent) or the user's retry running (say
	// api_req_retried). Both go on in the same api_req_started.
	uiRetry string
	// heldBack: errors the UI's messages ended on were reported after
	// the conversation (deferred, settle), for the status at the end.
	heldBack bool
	// parent is the task this one is a sub-task of (Roo Code).
	parent string
	// uiStash are the UI's conversation elements not written yet, for a
	// task read from its UI messages alone (uiconv.go); uiMapped the
	// messages written, uiAt which one was first written at an index;
	// uiFirst the index of the UI's first API request.
	uiStash  []uiItem
	uiMapped map[int64]bool // by uiKey
	uiAt     map[int]int64
	uiFirst  int
	// uiStashAt is the place in uiStash of each element stashed: a
	// later version of it replaces it there (stash).
	uiStashAt map[uiSlot]int
	// uiStale are the messages (not calls: those are written again,
	// revised) that changed in place after an earlier part wrote them,
	// by uiKey, in order: the transcript keeps their earlier version, and
	// uiConversation says so.
	uiStale []uiStale
	// uiWriting: uiConversation is writing (its messages carry ids);
	// uiCalls and uiResults count the calls it wrote and those the UI
	// stated an outcome for (uiAnswered, by call id), across parts.
	uiWriting          bool
	uiCalls, uiResults int
	uiAnswered         map[string]bool
	// The CLI's --json output (stream.go): stream once a line of it was
	// read, structured for the schemaVersion envelope; streamMsgs
	// messages read, calls made and command outputs passed over;
	// lastCommand the last command's call, which a permission denial
	// answers; lastTool the call of the message read last, when it
	// showed a tool's use, which a say error right after it answers.
	stream, structured bool
	streamMsgs, calls  int
	// streamSeen is, by ts, each message of the stream read: the call it
	// made ("" none), streamTs the ts of the one being read (0 none).
	streamSeen  map[int64]string
	streamTs    int64
	outputs     int
	lastCommand string
	lastTool    pendingCall
	// agent is the state of the SDK CLI's --json output (agentevents.go),
	// roo of Roo Code's CLI stream-json (roostream.go): set once a line
	// of it was read.
	agent *agentState
	roo   *rooState
	// elems, todo and spare are diff's buffers, kept across documents:
	// the elements of the document read (read by index without walking
	// the array again), the indices of the new or changed ones, and the
	// hashes of a version no longer needed, reused for the next.
	elems []abi.Value
	todo  []int
	spare []uint64
}

type uiError struct{ msg, code string }

// streamFail is the last request read, when it failed while streaming
// (cancelReason streaming_failed): its message, and whether it was
// reported with the request (else the ask api_req_failed after it
// reports it).
type streamFail struct {
	set, reported bool
	msg           string
}

type pendingCall struct{ id, name string }

// apiSlot is what is known of an index of the conversation (apiAt).
type apiSlot struct {
	versions int   // versions written
	ts       int64 // the ts of the message read there last (0 none)
}

// slot is the apiSlot of index i, made when there is none yet.
func (n *normalizer) slot(i int) *apiSlot {
	if i >= len(n.apiAt) {
		n.apiAt = append(n.apiAt, make([]apiSlot, i+1-len(n.apiAt))...)
	}
	return &n.apiAt[i]
}

func newNormalizer() *normalizer {
	return &normalizer{counted: map[int]bool{}, uiMapped: map[int64]bool{}}
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	if !v.Exists() {
		if len(sdk.TrimSpace(l.Raw)) > 0 {
			out.Unmapped(sdk.S("non_json"))
		}
		return nil
	}
	if v.Kind() == abi.KindObject {
		if t := v.Get("$twasm"); t.Exists() {
			n.twasm(v, t, out)
			return nil
		}
	}
	kind := n.kind
	if (kind == kindUnknown || kind == kindOther) && n.agent == nil && n.roo == nil && !n.stream {
		// Once a line of the CLIs' output was read, the cases below go
		// to it whatever the kind: a file's shape is not looked for (its
		// Gets walked every member of every line).
		kind = detectKind(v)
	}
	switch {
	case n.agent != nil || !n.stream && n.roo == nil && n.file == "" && kind == kindOther && isAgentEventLine(v):
		n.agentLine(v, out)
		return nil
	case n.roo != nil || !n.stream && n.file == "" && kind == kindOther && isRooStreamLine(v):
		n.rooLine(v, out)
		return nil
	case n.stream || n.file == "" && kind == kindOther && isStreamLine(v):
		n.streamLine(v, out)
		return nil
	}
	switch kind {
	case kindAPI:
		msgs := v
		if v.Kind() == abi.KindObject {
			// The newer sessions folder: {"messages": [...], ...}.
			msgs = v.Get("messages")
		}
		if msgs.Kind() != abi.KindArray {
			out.Unmapped(sdk.S("api_conversation_history/(not an array)"))
			return nil
		}
		if v.Kind() == abi.KindObject && n.started == 0 {
			id := v.Get("sessionId").String()
			if id == "" {
				id = n.taskID
			}
			n.started = forkStart(id)
		}
		n.sawTask = true
		n.sessionDoc = v.Kind() == abi.KindObject
		n.apiHistory(msgs, out)
	case kindUI:
		if v.Kind() != abi.KindArray {
			out.Unmapped(sdk.S("ui_messages/(not an array)"))
			return nil
		}
		n.sawTask = true
		n.sawUI = true
		n.uiMessages(v, out)
	case kindMetadata:
		// files_in_context, model_usage, environment_history; Roo's
		// history item repeats the UI's totals: what the step holds
		// comes from the conversation and the UI's requests. What it
		// adds is the task's parent: a sub-task started by new_task.
		// Roo's history item also names the workspace the task ran in.
		said := n.parentTask(v, out)
		if ws := sdk.StringOf(v.Get("workspace")); ws.IsSet() && !n.cwdSent {
			n.cwdSent = true
			out.Meta(sdk.Meta{Cwd: ws})
			said = true
		}
		if !said {
			out.Ignored(sdk.S("task_metadata"))
		}
	default:
		out.Unmapped(sdk.S("(unknown file)"))
	}
	return nil
}

// twasm handles the host's lines: the facts of the folder (its name is
// the task id), and the file line before each file.
func (n *normalizer) twasm(v, t abi.Value, out *sdk.Out) {
	switch {
	case t.Is(abi.SourceFileType):
		n.file = v.Get("path").String()
		n.kind = fileKind(n.file)
		out.Ignored(sdk.S("twasm_file"))
	case t.Is(abi.SourceFactsType):
		if n.sawTask {
			n.uiContinued(out)
		}
		// Views of the line (no copy), the name copied once kept.
		n.kilo = strings.HasPrefix(sdk.View(v.Get("store")), "Kilo Code")
		if id := sdk.View(v.Get("name")); id != "" && n.taskID == "" {
			n.taskID = strings.Clone(id)
			out.Meta(sdk.Meta{SessionID: sdk.S(n.taskID)})
			return
		}
		out.Ignored(sdk.S("twasm_source"))
	default:
		out.Unmapped(sdk.S("twasm_" + sdk.TypeName(t)))
	}
}

// parentTask says, once, that the task is a sub-task (Roo Code's
// history_item.json names its parentTaskId): the host makes its run a
// child run of its parent's (the store's abi.StoreParent), whose
// new_task call started it.
func (n *normalizer) parentTask(v abi.Value, out *sdk.Out) bool {
	p := v.Get("parentTaskId")
	if p.Kind() != abi.KindString || p.Is("") || n.parent != "" {
		return false
	}
	n.parent = p.String()
	out.Warn("a sub-task of task " + clip(n.parent) + " (a child run of its run, whose new_task call started it)")
	return true
}

// forkStart is when a session of the Cline SDK started, as its id says
// (createSessionId, sdk/packages/shared/src/session: Date.now() in
// milliseconds, "_", a random suffix; the CLI's own ids the same with
// "_cli" after), or 0 for an id of another shape. /fork
// (forkCurrentSession, apps/cli/src/runtime/interactive/session-runtime.ts
// at cline/cline 21cb8d2) starts a new session with the forked session's
// messages as they were, each with its ts: a message dated before its
// session started is one of those.
func forkStart(id string) int64 {
	ms, rest, ok := strings.Cut(id, "_")
	if !ok || len(ms) != 13 || rest == "" {
		return 0
	}
	v, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// detectKind tells a file read without its file line by its shape: the
// conversation's messages have a role, the UI's a type ask or say.
func detectKind(v abi.Value) int {
	if v.Kind() == abi.KindObject {
		if v.Get("messages").Kind() == abi.KindArray {
			return kindAPI
		}
		if v.Get("files_in_context").Exists() || v.Get("model_usage").Exists() {
			return kindMetadata
		}
		return kindOther
	}
	if v.Kind() != abi.KindArray || v.Len() == 0 {
		return kindOther
	}
	first := v.Index(0)
	switch {
	case first.Get("role").Kind() == abi.KindString:
		return kindAPI
	case first.Get("type").Is("say") || first.Get("type").Is("ask"):
		return kindUI
	}
	return kindOther
}

// hashOf is the content hash of an element of a document, to tell an
// element read before from a new or changed one (Cline's messages have
// no ids: index and content are all there is). Kept in memory only.
func hashOf(v abi.Value) uint64 { return sdk.Hash64(v.Raw()) }

// diff compares the elements of a document's new version with the hashes
// of the last one read: it returns the new hashes and the indices of
// what is new or changed, and warns of what changed in place (when
// warnChanged: the UI's messages change as requests complete) or went.
// The document's elements are in n.elems, by index, until the next
// diff; the caller hands old back with n.reuse once it holds the new
// hashes.
func (n *normalizer) diff(doc abi.Value, old []uint64, file string, warnChanged bool, out *sdk.Out) (hashes []uint64, todo []int) {
	changed := 0
	hashes, todo, elems := n.spare[:0], n.todo[:0], n.elems[:0]
	n.spare = nil // hashes owns it now
	// The iterator declared outside the loop: one declared in the for
	// statement is a new variable on every iteration, which TinyGo
	// allocates on the heap (abi.Iter).
	it := doc.Iter()
	for i := 0; it.Next(); i++ {
		e := it.Value()
		elems = append(elems, e)
		h := hashOf(e)
		hashes = append(hashes, h)
		if i < len(old) {
			if old[i] == h {
				continue
			}
			changed++
		}
		todo = append(todo, i)
	}
	if changed > 0 && warnChanged {
		out.Warn(file + ": " + strconv.Itoa(changed) + " element(s) read before changed in place: their new version is written after the earlier one, which the transcript keeps")
	}
	if len(hashes) < len(old) {
		out.Warn(file + ": the new version holds " + strconv.Itoa(len(hashes)) + " elements, fewer than the " + strconv.Itoa(len(old)) + " read before: the transcript keeps the ones it no longer holds")
	}
	n.todo, n.elems = todo, elems
	return hashes, todo
}

// reuse keeps the hashes of a version no longer needed for the next diff.
func (n *normalizer) reuse(old []uint64) { n.spare = old[:0] }

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.uiOnly() {
		// A task read from its UI messages alone (its conversation file
		// is missing): the UI's copy of the conversation, written before
		// the errors held back so that the session rule sees them after
		// the last answer.
		n.uiConversation(out)
		n.uiWarn(out)
	}
	n.settle(out)
	if !n.stream && n.agent == nil && n.roo == nil {
		switch {
		case n.uiRetry != "":
			// A request failed and is being retried (Cline's
			// attemptApiRequest retries in the same api_req_started):
			// the turn goes on, whatever the error it retries. Said at
			// the terminal level, so that the error held back, which
			// stays listed, does not decide the status (spec 6.7:
			// incomplete, still running).
			out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: "+n.uiRetry), sdk.LevelTerminal)
		case n.uiRunning && n.heldBack:
			// An error, then a request still running: the task went on
			// past the error (Cline asks the model again, the error in
			// its request), so the turn is going on.
			out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the task's last API request, made after an error, is still running (its api_req_started has no figures and no cancelReason yet)"), sdk.LevelTerminal)
		case n.uiRunning:
			// After the errors held back: a request that failed and
			// was retried, the retry still running, is a turn going on.
			out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the task's last API request is still running (its api_req_started has no figures and no cancelReason yet)"), sdk.LevelError)
		case n.uiCancelled:
			// The user cancelled the task's last request: the turn was
			// cut, as a Codex turn_aborted is (a warning too).
			out.Status(sdk.StatusIncomplete, sdk.S("the task's last API request was cancelled by the user"), sdk.LevelError)
		}
	}
	switch {
	case n.agent != nil:
		n.agentEnd(out)
		return nil
	case n.roo != nil:
		n.rooEnd(out)
		return nil
	}
	if n.stream {
		n.streamDone(out)
		return nil
	}
	if !n.sawTask {
		return nil
	}
	// A task has no terminal event (the user may resume it): the host
	// settles the status by the session rule (spec §6.7).
	out.Meta(sdk.Meta{Format: sdk.S(fmtTask), NoTerminal: true})
	return nil
}

// msTime is an epoch-milliseconds "ts" as RFC 3339 (unset when v is not
// one).
func msTime(v abi.Value) sdk.Str {
	ms, ok := v.Int()
	if !ok || ms <= 0 {
		if f, okf := v.Float(); okf && f > 0 {
			ms, ok = int64(f), true
		} else if s := v.String(); v.Kind() == abi.KindString && s != "" {
			// Some tools write "ts" as a string of digits.
			p, err := strconv.ParseInt(s, 10, 64)
			if err != nil || p <= 0 {
				return sdk.Str{}
			}
			ms, ok = p, true
		} else {
			return sdk.Str{}
		}
	}
	return sdk.S(sdk.RFC3339Millis(ms))
}

// clip bounds a value quoted in a warning.
func clip(s string) string { return sdk.Clip(s, 200) }
