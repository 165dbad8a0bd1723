package synccmd_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// The Gemini CLI chats of goldens session_jsonl_subagent_parent.jsonl
// and session_jsonl_subagent_child.jsonl (written by hand from the
// CLI's source: testdata/golden/gemini/README.md): the session's
// invoke_agent call geminiCall started a codebase_investigator whose
// chat the CLI wrote to chats/<the session's full id>/<its own id>.jsonl
// (the session's own file named by the id's first 8 characters), the
// call's record naming it by its agentId. The session's tokens: 6400
// input (3048 cached), 150 output; the sub-agent's 3900 (1024 cached),
// 215 output.
const (
	geminiParentID = "5a1d2c3e-0f4b-4c6d-8e9f-0a1b2c3d4e5f"
	geminiChildID  = "9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
	geminiChats    = ".gemini/tmp/4f3e2d1c0b0a09080706050403020100ffeeddccbbaa99887766554433221100/chats/"
	geminiParent   = geminiChats + "session-2026-11-20T10-00-5a1d2c3e.jsonl"
	geminiChild    = geminiChats + geminiParentID + "/" + geminiChildID + ".jsonl"
	geminiCall     = "invoke_agent__invoke_agent_1795168802900_0"
)

// geminiLines reads a gemini golden input's lines.
func geminiLines(t *testing.T, golden string) [][]byte {
	t.Helper()
	return goldenLines(t, "gemini", golden)
}

// TestSyncGeminiSubAgent: a Gemini CLI sub-agent's chat, a file of its
// own in a directory named by its session's full id (the session's file
// holds only the id's first 8 characters, its first record the whole
// id), is archived by `twasm sync` as a child run of its session's run,
// linked in the agent step at the call whose record names it by its
// agentId (path agent.<the child's id>_<call id>), whether both files
// are there at once or the child is written after its session's run
// holds the call; written while the call ran (the session's file does
// not hold the call yet), it is linked at the session's latest part, and
// once the session's part brings the call and its result, the next sync
// archives the chat again as a child run linked at the call, superseding
// the first (before, it stayed at the part it began in, away from its
// call, for good). ls lists the session alone, its sub_run_usage the
// child's tokens, counted once in usage_in_all; tree counts the child
// run and its two calls; a second sync changes nothing; renormalize
// rebuilds the session's run with it. Before, the store's pattern
// (chats/session-*) did not reach the sub-agent's chat: its turns and
// tokens were in no run.
func TestSyncGeminiSubAgent(t *testing.T) {
	t.Parallel()
	parent := geminiLines(t, "session_jsonl_subagent_parent.jsonl")
	child := bytes.Join(geminiLines(t, "session_jsonl_subagent_child.jsonl"), nil)
	for _, c := range []struct {
		name string
		// running: the child is written, and synced, while the
		// session's file holds the call's response but not the call
		// (the CLI records a call once it completed); later: the
		// session is synced whole before the child is written.
		running, later bool
	}{
		{name: "session and sub-agent at once"},
		{name: "sub-agent written after its session was synced", later: true},
		{name: "sub-agent synced while its call ran", running: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, ".gemini", "tmp")
			runs := map[string]string{} // path -> run id
			loose := ""                 // the child's run linked before the call was recorded
			syncNew := func(what string, want int) {
				t.Helper()
				for p, id := range syncNewRuns(t, h, store, what, want) {
					runs[p] = id
				}
			}
			switch {
			case c.later:
				h.Put(geminiParent, bytes.Join(parent, nil), time.Hour)
				syncNew("sync of the session alone", 1)
				h.Put(geminiChild, child, 30*time.Minute)
				syncNew("sync after the sub-agent was written", 1)
			case c.running:
				h.Put(geminiParent, bytes.Join(parent[:5], nil), time.Hour) // up to the call's response
				h.Put(geminiChild, child, time.Hour)
				syncNew("sync while the call ran", 2)
				h.Put(geminiParent, bytes.Join(parent, nil), 30*time.Minute)
				got := syncWant(t, h, store, "sync of the session's second part", map[string]int{"grown": 1, "new": 1})
				loose = runs[filepath.Join(h.Dir, geminiChild)]
				runs[filepath.Join(h.Dir, geminiChild)] = got["new"][0]
			default:
				h.Put(geminiParent, bytes.Join(parent, nil), time.Hour)
				h.Put(geminiChild, child, time.Hour)
				syncNew("sync", 2)
			}
			parentRun, childRun := runs[filepath.Join(h.Dir, geminiParent)], runs[filepath.Join(h.Dir, geminiChild)]
			if parentRun == "" || childRun == "" {
				t.Fatalf("runs %v: want the session's and the sub-agent's", runs)
			}
			if c.running {
				// Linked at the latest part when it began (the first),
				// then, once the session's part brought the call,
				// archived again at the call (in the second part),
				// superseding that run.
				wantRelinked(t, h, parentRun, loose, childRun, geminiCall, "agent."+geminiChildID, "agent."+geminiChildID+"_"+geminiCall)
				// stats --all counts the sub-agent's 215 output tokens
				// once (the superseded run's agent step left out).
				var st struct {
					UsageInAll map[string]int64 `json:"usage_in_all"`
				}
				if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil || st.UsageInAll["output_tokens"] != 150+215 {
					t.Errorf("stats --all --json: usage_in_all %v (%v), want the session's 150 and the sub-agent's 215 output tokens, once", st.UsageInAll, err)
				}
			} else {
				// Named by the child's file: the call states no description.
				wantLinkedAt(t, h, parentRun, childRun, geminiCall, "agent."+geminiChildID+"_"+geminiCall, geminiChildID)
			}
			syncWant(t, h, store, "sync with nothing new", nothing)

			// ls: the session alone, the sub-agent's tokens (2876
			// uncached input, 215 output) its sub-runs', counted once;
			// tree: the child run and its two calls.
			wantSubAgentTotals(t, h, parentRun, [2]int64{2876, 215}, [2]int64{3352 + 2876, 150 + 215}, 1, 2)
		})
	}
}

// wantRelinked checks that run parent links run loose at path in its
// first part and run child at path2 in the part holding the call
// callID, the second, the second link superseding loose, which
// ended saying child superseded it; the three runs valid.
func wantRelinked(t *testing.T, h *clitest.Home, parent, loose, child, callID, path, path2 string) {
	t.Helper()
	if loose == "" || loose == child {
		t.Fatalf("child runs %q then %q: want two", loose, child)
	}
	for _, id := range []string{loose, child} {
		if got := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id))[0].ParentRunID; got != parent {
			t.Errorf("child run %s has parent %q, want %s", id, got, parent)
		}
	}
	type link struct {
		child, path, supersedes string
		iteration               int
	}
	var links []link
	callAt := -1
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, parent)) {
		switch {
		case ev.Type == transcript.ToolCall && ev.Tool() != nil && ev.Tool().CallID == callID:
			callAt = ev.Iteration
		case ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "":
			l := link{child: ev.ChildRunID, path: ev.Path, iteration: ev.Iteration}
			if sp := ev.Step(); sp != nil {
				_ = json.Unmarshal(sp.Extra[lifecycle.SupersedesField], &l.supersedes)
			}
			links = append(links, l)
		}
	}
	want := []link{{child: loose, path: path}, {child: child, path: path2, supersedes: loose, iteration: 1}}
	if callAt != 1 || !slices.Equal(links, want) {
		t.Errorf("links %+v, the call in part %d: want %+v, the call in part 1", links, callAt, want)
	}
	if by := supersededBy(t, h, loose); by != child {
		t.Errorf("the first child run ends superseded by %q, want run.completed superseded by %s", by, child)
	}
	for _, id := range []string{parent, loose, child} {
		h.OK("validate", id)
	}
}

// TestSyncGeminiSubAgentAlone: a Gemini CLI sub-agent's chat whose
// session's file is not in the store (deleted, or archived elsewhere) is
// archived as a session of its own, its tokens its own run's; when the
// session's file comes (restored), the next sync archives the chat again
// as a child run of the session's run, linked at the call, and ends the
// first run, superseded, so ls counts its tokens once.
func TestSyncGeminiSubAgentAlone(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	store := filepath.Join(h.Dir, ".gemini", "tmp")
	h.Put(geminiChild, bytes.Join(geminiLines(t, "session_jsonl_subagent_child.jsonl"), nil), time.Hour)
	runs := syncNewRuns(t, h, store, "sync", 1)
	id := runs[filepath.Join(h.Dir, geminiChild)]
	if id == "" {
		t.Fatalf("runs %v: want the sub-agent's", runs)
	}
	if row := lsRow(t, h, id); row.UsageInAll["output_tokens"] != 215 {
		t.Errorf("ls --json: %+v, want its 215 output tokens its own", row)
	}
	syncWant(t, h, store, "sync with nothing new", nothing)

	// The session's file comes (restored from a backup): the sub-agent's
	// chat is archived again, whole, as a child run of the session's,
	// and its first run ended, superseded by it.
	h.Put(geminiParent, bytes.Join(geminiLines(t, "session_jsonl_subagent_parent.jsonl"), nil), time.Hour)
	again := syncNewRuns(t, h, store, "sync after the session's file came", 2)
	parentRun, childRun := again[filepath.Join(h.Dir, geminiParent)], again[filepath.Join(h.Dir, geminiChild)]
	if parentRun == "" || childRun == "" || childRun == id {
		t.Fatalf("runs %v: want the session's and a new one of the sub-agent's", again)
	}
	wantLinkedAt(t, h, parentRun, childRun, geminiCall, "agent."+geminiChildID+"_"+geminiCall, geminiChildID)
	if evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id)); evs[len(evs)-1].Type != transcript.RunCompleted {
		t.Errorf("the sub-agent's first run %s was not ended: it ends %s", id, evs[len(evs)-1].Type)
	}
	if row := lsRow(t, h, parentRun); row.UsageInAll["output_tokens"] != 150+215 {
		t.Errorf("ls --json: %+v, want the session's 150 and its sub-agent's 215 output tokens, once", row)
	}
	syncWant(t, h, store, "sync with nothing new", nothing)
}

// TestSyncGeminiSubAgentSupersedesScope: a session's run in which the
// plugin made a child run of a sub-agent's call from the call itself (its
// prompt and result: the call's record named no agent when it was
// archived, as every record did for a twasm before the sub-agents' chats
// were read) is linked to the sub-agent's chat once its record names it:
// the chat's run, at the same call, supersedes the run made of the call,
// so the tree and ls count the sub-agent once, with its tokens.
func TestSyncGeminiSubAgentSupersedesScope(t *testing.T) {
	t.Parallel()
	parent := geminiLines(t, "session_jsonl_subagent_parent.jsonl")
	child := bytes.Join(geminiLines(t, "session_jsonl_subagent_child.jsonl"), nil)
	named := parent[5]
	unnamed := bytes.Replace(named, []byte(`"agentId":"`+geminiChildID+`",`), nil, 1)
	if bytes.Equal(named, unnamed) {
		t.Fatal("the golden's call record names no agentId")
	}
	h := clitest.NewHome(t)
	store := filepath.Join(h.Dir, ".gemini", "tmp")
	first := append(append(append([][]byte{}, parent[:5]...), unnamed), parent[6:]...)
	h.Put(geminiParent, bytes.Join(first, nil), time.Hour)
	runs := syncNewRuns(t, h, store, "sync of the session, its call naming no agent", 1)
	parentRun := runs[filepath.Join(h.Dir, geminiParent)]
	wantSubRuns(t, h, parentRun, 1, 0) // the call's prompt and result
	// The record appended again, naming the agent, and its chat.
	h.Put(geminiParent, bytes.Join(append(first, []byte("\n"), named), nil), 30*time.Minute)
	h.Put(geminiChild, child, 30*time.Minute)
	got := syncWant(t, h, store, "sync of the chat", map[string]int{"grown": 1, "new": 1})
	childRun := got["new"][0]
	wantSubAgentTotals(t, h, parentRun, [2]int64{2876, 215}, [2]int64{3352 + 2876, 150 + 215}, 1, 2)
	var supersedes string
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, parentRun)) {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == childRun {
			if ev.Path != "agent."+geminiChildID+"_"+geminiCall {
				t.Errorf("the chat's run linked at %s, want at the call %s", ev.Path, geminiCall)
			}
			if sp := ev.Step(); sp != nil {
				_ = json.Unmarshal(sp.Extra[lifecycle.SupersedesField], &supersedes)
			}
		}
	}
	if supersedes == "" {
		t.Error("the chat's run supersedes no run: the sub-agent is counted twice")
	}
	syncWant(t, h, store, "sync with nothing new", nothing)
}

// TestSyncGeminiHistoryWrittenAgain: the Gemini CLI's /chat resume (and
// /restore) hands GeminiChat.setHistory a checkpoint's messages, which it
// records again under new ids before it sets the session's messages
// (golden session_jsonl_chat_resume: written by hand from
// google-gemini/gemini-cli 5411f11). Synced, a session that resumed its
// own checkpoint counts its prompts once, and a new session that resumed
// it counts only its own prompt (the checkpoint's turns are injected
// context there); the tokens of each are its own. Before, the first run
// held the prompt twice and the second held the other session's prompt.
func TestSyncGeminiHistoryWrittenAgain(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	own := geminiLines(t, "session_jsonl_chat_resume.jsonl")
	// A new session, the next day, that resumes the first one's
	// checkpoint (its records as the first session's file holds them)
	// and asks one thing of its own.
	other := [][]byte{
		[]byte(`{"sessionId":"f3f3f3f3-0000-4000-8000-000000000bbb","projectHash":"ef56","startTime":"2026-07-04T08:00:00.000Z","lastUpdated":"2026-07-04T08:00:00.000Z","kind":"main"}` + "\n"),
		[]byte(`{"$set":{"messages":[{"id":"7d2e0f3a-0000-4000-8000-000000000001","timestamp":"2026-07-04T08:00:00.001Z","type":"user","content":[{"text":"<session_context>\nToday's date is Saturday, July 4, 2026.\nMy operating system is: linux\n</session_context>"}]}],"lastUpdated":"2026-07-04T08:00:00.001Z"}}` + "\n"),
	}
	other = append(other, own[7:13]...)
	other = append(other,
		[]byte(`{"id":"7d2e0f3a-0000-4000-8000-000000000002","timestamp":"2026-07-04T08:00:20.000Z","type":"user","content":[{"text":"Summarize the test run"}]}`+"\n"),
		[]byte(`{"id":"7d2e0f3a-0000-4000-8000-000000000003","timestamp":"2026-07-04T08:00:23.000Z","type":"gemini","content":"One package, all tests passed.","thoughts":[],"tokens":{"input":5200,"output":9,"cached":0,"thoughts":0,"tool":0,"total":5209},"model":"gemini-2.5-flash"}`+"\n"))
	const chats = ".gemini/tmp/ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56ef56/chats/"
	h.Put(chats+"session-2026-07-03T09-00-e2e2e2e2.jsonl", bytes.Join(own, nil), 2*time.Hour)
	h.Put(chats+"session-2026-07-04T08-00-f3f3f3f3.jsonl", bytes.Join(other, nil), time.Hour)
	runs := syncNewRuns(t, h, filepath.Join(h.Dir, ".gemini"), "sync", 2)
	want := map[string]struct {
		prompts []string
		output  int64
	}{
		"e2e2e2e2": {[]string{"Run the tests", "Now run the linter"}, 31},
		"f3f3f3f3": {[]string{"Summarize the test run"}, 9},
	}
	for path, id := range runs {
		w := want[filepath.Base(path)[len("session-2026-07-03T09-00-"):][:8]]
		var prompts []string
		var output int64
		for _, l := range bytes.Split([]byte(runText(t, h, id)), []byte("\n")) {
			ev, err := transcript.DecodeEvent(l)
			if err != nil || ev == nil {
				continue
			}
			if m := ev.Message(); ev.Type == transcript.MessageUser && m != nil {
				for _, b := range m.Blocks {
					if b.Origin == transcript.OriginPrompt {
						prompts = append(prompts, b.Text)
					}
				}
			}
			if s := ev.Step(); s != nil && ev.Type == transcript.StepCompleted {
				if r, err := s.AgentResult(); err == nil && r != nil && r.Usage != nil && r.Usage.OutputTokens != nil {
					output = *r.Usage.OutputTokens
				}
			}
		}
		if !slices.Equal(prompts, w.prompts) || output != w.output {
			t.Errorf("run of %s: prompts %q, %d output tokens; want %q, %d", filepath.Base(path), prompts, output, w.prompts, w.output)
		}
	}
}

// TestSyncGeminiSubAgentChatBefore037: Gemini CLI 0.31 to 0.36 wrote a
// sub-agent's chat (golden session_file_v036_subagent.json, written from
// the 0.36 source) as chats/session-<time>-<id>.json beside its
// session's, its header stating the session's own id and kind
// "subagent", and no call record naming it (the session's call states no
// agent id): nothing says which call started it, so `twasm sync`
// archives it as a run of its own, whose step says it is a sub-agent's
// chat, not a user's session; the session's run is not marked; a second
// sync changes nothing. Before, nothing told the two apart.
func TestSyncGeminiSubAgentChatBefore037(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	store := filepath.Join(h.Dir, ".gemini", "tmp")
	const chats = ".gemini/tmp/a1b2/chats/"
	sub := clitest.ReadFile(t, clitest.Golden("gemini", "session_file_v036_subagent.json"))
	var doc struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(sub, &doc); err != nil {
		t.Fatal(err)
	}
	parent := clitest.ReadFile(t, clitest.Golden("gemini", "session_file_subagents.json"))
	parent = bytes.Replace(parent, []byte(`"sessionId": "37b7abef-0000-4000-8000-000000000901"`), []byte(`"sessionId": "`+doc.SessionID+`"`), 1)
	if !bytes.Contains(parent, []byte(doc.SessionID)) {
		t.Fatal("the session's golden states another id")
	}
	h.Put(chats+"session-2026-03-10T09-02-"+doc.SessionID[:8]+".json", parent, time.Hour)
	h.Put(chats+"session-2026-03-10T09-15-"+doc.SessionID[:8]+".json", sub, time.Hour)
	runs := syncNewRuns(t, h, store, "sync", 2)
	for p, id := range runs {
		var marked []string
		for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id)) {
			if ev.Type != transcript.StepCompleted {
				continue
			}
			if res, err := ev.Step().AgentResult(); err == nil && res != nil {
				for _, w := range res.Warnings {
					if strings.Contains(w, `a sub-agent's chat (kind "subagent")`) && strings.Contains(w, "The call that started it cannot be named") {
						marked = append(marked, w)
					}
				}
			}
		}
		h.OK("validate", id)
		if want := strings.Contains(p, "T09-15-"); (len(marked) == 1) != want {
			t.Errorf("run %s of %s: warnings %q, want the sub-agent's marked: %v", id, p, marked, want)
		}
	}
	syncWant(t, h, store, "sync with nothing new", nothing)
}
