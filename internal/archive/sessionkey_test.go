package archive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/plugins/claude"
)

// geminiStore is the gemini plugin's declaration (plugins/gemini).
var geminiStore = abi.Store{
	Name: "Gemini CLI chats", Dir: "tmp", Pattern: "*/chats/**/*.{json,jsonl}",
	SubAgents:     "{stem}/*.{json,jsonl}",
	SubAgentsKey:  &abi.SessionKey{Member: "/sessionId", Prefix: 8},
	SubAgentCalls: &abi.RecordCalls{Calls: "/toolCalls", Agent: "agentId", ID: "id"},
}

// TestSubAgentsByKey: a Gemini CLI sub-agent's chat, in a directory
// named by its session's full id, is a sub-agent's file whose session
// is the chat beside that directory whose first record states the id
// (its name holds the id's first 8 characters): found by Scan (sync)
// and by SubAgentFile (import), and listed by SubAgentFiles of the
// session; of two files stating the id (a chat the CLI copied to JSON
// Lines on a resume), the one modified last. A chat whose name holds
// the prefix but whose record states another id is not the session, nor
// is a pretty-printed document whose sessionId differs; a sub-agent
// whose session no file states is a session of its own (SubAgentFile:
// none). Before, the store's pattern reached no sub-agent's chat.
func TestSubAgentsByKey(t *testing.T) {
	const id, other = "5a1d2c3e-0f4b-4c6d-8e9f-0a1b2c3d4e5f", "5a1d2c3e-ffff-4c6d-8e9f-000000000000"
	tmp := filepath.Join(t.TempDir(), ".gemini", "tmp")
	chats := filepath.Join(tmp, "h1", "chats")
	put := func(rel, body string, age time.Duration) string {
		p := filepath.Join(chats, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := func(sid string) string { return `{"sessionId":"` + sid + `","projectHash":"h","kind":"main"}` + "\n" }
	// A session whose id shares the prefix, in a file of the same form.
	put("session-2026-11-20T09-00-5a1d2c3e.jsonl", header(other), 3*time.Hour)
	// The chat before a resume (a document) and its JSON Lines copy.
	doc := put("session-2026-11-20T10-00-5a1d2c3e.json", "{\n  \"sessionId\": \""+id+"\",\n  \"messages\": []\n}\n", 2*time.Hour)
	if got := firstString(doc, "/sessionId"); got != id {
		t.Fatalf("the document states %q, want %s", got, id)
	}
	session := put("session-2026-11-20T10-00-5a1d2c3e.jsonl", header(id), time.Hour)
	sub := put(id+"/9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d.jsonl", `{"sessionId":"9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d","kind":"subagent"}`+"\n", time.Hour)
	orphan := put("7f000000-0000-4000-8000-000000000000/0a000000-0000-4000-8000-000000000001.jsonl", `{"sessionId":"0a000000-0000-4000-8000-000000000001","kind":"subagent"}`+"\n", time.Hour)

	declared := []Declared{{Provider: "gemini", Plugin: "gemini", Store: geminiStore}}
	loc := declaredLocation(declared[0], compileStore(declared[0]), filepath.Dir(tmp), "test")
	_, found := Scan([]Location{loc}, time.Time{})
	parents := map[string]string{}
	for _, s := range found {
		parents[s.Path] = s.Parent
	}
	if len(found) != 5 || parents[sub] != session || parents[orphan] != "" || parents[session] != "" {
		t.Errorf("Scan: %d files, parents %v; want 5, the sub-agent's session %s, the orphan's none", len(found), parents, session)
	}
	if s, ok := SubAgentFile(declared, "gemini", sub); !ok || s.Parent != session || s.Loc == nil || s.Loc.Dir != tmp {
		t.Errorf("SubAgentFile(sub-agent) = %+v, %v; want the session %s in store %s", s, ok, session, tmp)
	}
	for what, p := range map[string]string{"the session": session, "the orphan": orphan} {
		if s, ok := SubAgentFile(declared, "gemini", p); ok {
			t.Errorf("SubAgentFile(%s) = %+v, want none", what, s)
		}
	}
	if got := SubAgentFiles(declared, "gemini", session, nil); len(got) != 1 || got[0].Path != sub || got[0].Parent != session {
		t.Errorf("SubAgentFiles(session) = %+v, want the sub-agent alone", got)
	}
}

// TestRecordCall: the call that started a sub-agent is the one of the
// session's records whose calls array holds a call naming the
// sub-agent's stem in the declared member: the last such record's (a
// record appended again as it changed), past a line longer than the
// reader's buffer; a call naming another agent, a record whose calls
// are not an array or a line that is not JSON names none.
func TestRecordCall(t *testing.T) {
	rc := geminiStore.SubAgentCalls
	rec := func(calls string) string { return `{"id":"g1","type":"gemini","toolCalls":` + calls + `}` }
	call := func(id, agent string) string {
		return `{"id":"` + id + `","name":"invoke_agent","agentId":"` + agent + `"}`
	}
	long := `{"id":"u1","type":"user","content":[{"text":"` + strings.Repeat("x", 200<<10) + ` \"a-1\""}]}`
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"one record", []string{rec(`[` + call("c1", "a-1") + `]`)}, "c1"},
		{"among others", []string{rec(`[` + call("c0", "a-0") + `,` + call("c1", "a-1") + `]`)}, "c1"},
		{"the last record", []string{rec(`[` + call("c1", "a-1") + `]`), long, rec(`[` + call("c2", "a-1") + `]`)}, "c2"},
		{"after a long line", []string{long, rec(`[` + call("c1", "a-1") + `]`)}, "c1"},
		{"another agent", []string{rec(`[` + call("c1", "a-2") + `]`)}, ""},
		{"calls not an array", []string{`{"toolCalls":{"agentId":"a-1","id":"c1"}}`}, ""},
		{"not json", []string{`"a-1" c1`}, ""},
		{"a record cut short", []string{strings.TrimSuffix(rec(`[`+call("c1", "a-1")+`]`), "}]}")}, ""},
	} {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(p, []byte(strings.Join(tc.lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := recordCall(p, "a-1", rc); got != tc.want {
			t.Errorf("%s: recordCall = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := recordCall(filepath.Join(t.TempDir(), "gone.jsonl"), "a-1", rc); got != "" {
		t.Errorf("a file that is gone: recordCall = %q", got)
	}
}

// TestRecordCallClaude: Claude Code names a sub-agent on the record of
// its Agent (Task) call's result, toolUseResult.agentId beside
// message.content's tool_result block (the file agent-<agentId>.jsonl;
// the claude plugin's declaration, abi.RecordCalls.AgentIn and Prefix):
// the call is that block's tool_use_id, for a sub-agent run in the
// foreground (status completed) or in the background (async_launched),
// the last record naming it winning. A record naming another agent, a
// result whose toolUseResult states no agentId, a record holding two results (which
// one is not said), a prompt that quotes the id and a file whose name
// lacks the prefix name none. Before, the plugin declared no record
// calls and every such sub-agent was linked at its session's latest
// part (Irrlicht's 13-full-lifecycle-continue, Claude Code 2.1.101).
func TestRecordCallClaude(t *testing.T) {
	rc := claude.Plugin.Manifest.Stores[0].SubAgentCalls
	if rc == nil {
		t.Fatal("the claude plugin declares no sub_agent_calls")
	}
	result := func(callIDs []string, toolUseResult string) string {
		var blocks []string
		for _, id := range callIDs {
			blocks = append(blocks, `{"tool_use_id":"`+id+`","type":"tool_result","content":[{"type":"text","text":"done"}]}`)
		}
		r := `{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":[` + strings.Join(blocks, ",") + `]}`
		if toolUseResult != "" {
			r += `,"toolUseResult":` + toolUseResult
		}
		return r + `,"uuid":"u","timestamp":"2026-04-11T18:53:32.667Z","sessionId":"s","version":"2.1.101"}`
	}
	done := func(agent string) string {
		return `{"status":"completed","prompt":"list the files","agentId":"` + agent + `","agentType":"Explore","content":[{"type":"text","text":"95 files"}],"totalTokens":25402}`
	}
	async := `{"isAsync":true,"status":"async_launched","agentId":"a0ecfa598b8d3e4cb","description":"List Go files","prompt":"list"}`
	prompt := `{"type":"user","message":{"role":"user","content":"what did agent a0ecfa598b8d3e4cb find? \"a0ecfa598b8d3e4cb\""},"uuid":"u2"}`
	for _, tc := range []struct {
		name, stem string
		lines      []string
		want       string
	}{
		{"foreground", "agent-a0ecfa598b8d3e4cb", []string{result([]string{"toolu_1"}, done("a0ecfa598b8d3e4cb"))}, "toolu_1"},
		{"background", "agent-a0ecfa598b8d3e4cb", []string{result([]string{"toolu_2"}, async)}, "toolu_2"},
		{"among others", "agent-a0ecfa598b8d3e4cb", []string{result([]string{"toolu_0"}, done("ae04f393030f3393b")), prompt, result([]string{"toolu_1"}, done("a0ecfa598b8d3e4cb")), result([]string{"toolu_3"}, `{"stdout":"a0ecfa598b8d3e4cb"}`)}, "toolu_1"},
		{"the last record", "agent-a0ecfa598b8d3e4cb", []string{result([]string{"toolu_1"}, async), result([]string{"toolu_2"}, done("a0ecfa598b8d3e4cb"))}, "toolu_2"},
		{"another agent", "agent-a0ecfa598b8d3e4cb", []string{result([]string{"toolu_1"}, done("ae04f393030f3393b"))}, ""},
		{"two results", "agent-a0ecfa598b8d3e4cb", []string{result([]string{"toolu_1", "toolu_2"}, done("a0ecfa598b8d3e4cb"))}, ""},
		{"a prompt quoting it", "agent-a0ecfa598b8d3e4cb", []string{prompt}, ""},
		{"no prefix", "a0ecfa598b8d3e4cb", []string{result([]string{"toolu_1"}, done("a0ecfa598b8d3e4cb"))}, ""},
		{"prefix alone", "agent-", []string{result([]string{"toolu_1"}, done(""))}, ""},
	} {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(p, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := recordCall(p, tc.stem, rc); got != tc.want {
			t.Errorf("%s: recordCall = %q, want %q", tc.name, got, tc.want)
		}
	}
}
