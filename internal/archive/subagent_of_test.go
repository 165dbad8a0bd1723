package archive

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
)

// codexSubAgentOf is the codex plugin's declaration (plugins/codex).
var codexSubAgentOf = &abi.SubAgentOf{
	Member: "/payload/source/subagent/thread_spawn/parent_thread_id",
	File:   "**/rollout-*-{key}.jsonl",
	Result: map[string]string{"agent_id": "/payload/id", "task_name": "/payload/source/subagent/thread_spawn/agent_path"},
}

// TestSubAgentOfFiles: a Codex rollout given by itself whose
// session_meta names its parent thread is a sub-agent's file
// (SubAgentFile): its session the rollout whose name ends with that
// thread id, found in another day's directory of the store (climbing
// to the sessions directory), or, when none is, named by the glob and
// the key (a file that is not there). A rollout that names no parent,
// names one in a member the pointer does not reach, or whose first line
// is not JSON, is none. The parent's file lists the sub-agents beside
// it (SubAgentFiles), not those of another day's directory.
func TestSubAgentOfFiles(t *testing.T) {
	declared := []Declared{{Provider: "codex", Plugin: "codex", Store: abi.Store{
		Name: "Codex sessions", Dir: "sessions", Pattern: "**/rollout-*.jsonl", SubAgentOf: codexSubAgentOf,
	}}}
	sessions := filepath.Join(t.TempDir(), ".codex", "sessions")
	put := func(rel, first string) string {
		p := filepath.Join(sessions, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(first+"\n"+`{"type":"event_msg","payload":{"type":"task_started"}}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	meta := func(id, source string) string {
		return `{"type":"session_meta","payload":{"id":"` + id + `","source":` + source + `}}`
	}
	spawned := func(id, parent string) string {
		return meta(id, `{"subagent":{"thread_spawn":{"parent_thread_id":"`+parent+`","depth":1,"agent_path":"/root/w"}}}`)
	}
	parent := put("2026/11/20/rollout-2026-11-20T23-59-00-p-1.jsonl", meta("p-1", `"cli"`))
	sameDay := put("2026/11/20/rollout-2026-11-20T23-59-30-c-1.jsonl", spawned("c-1", "p-1"))
	nextDay := put("2026/11/21/rollout-2026-11-21T00-00-01-c-2.jsonl", spawned("c-2", "p-1"))
	orphan := put("2026/11/21/rollout-2026-11-21T00-00-02-c-3.jsonl", spawned("c-3", "gone"))
	others := map[string]string{
		"a session":        parent,
		"a review":         put("2026/11/21/rollout-2026-11-21T00-00-03-r.jsonl", meta("r", `{"subagent":"review"}`)),
		"not json":         put("2026/11/21/rollout-2026-11-21T00-00-04-j.jsonl", `not json`),
		"parent not named": put("2026/11/21/rollout-2026-11-21T00-00-05-n.jsonl", meta("n", `{"subagent":{"thread_spawn":{"depth":1}}}`)),
		"a path as key":    put("2026/11/21/rollout-2026-11-21T00-00-06-k.jsonl", spawned("k", "../p-1")),
	}
	for what, c := range map[string]struct{ path, parent string }{
		"same day": {sameDay, parent},
		"next day": {nextDay, parent},
		"orphan":   {orphan, filepath.Join(sessions, "**", "rollout-*-gone.jsonl")},
	} {
		s, ok := SubAgentFile(declared, "codex", c.path)
		if !ok || s.Parent != c.parent || s.Loc == nil || s.Loc.SubAgentOf == nil {
			t.Errorf("%s: SubAgentFile = %+v, %v; want the session %s", what, s, ok, c.parent)
		}
	}
	for what, p := range others {
		if s, ok := SubAgentFile(declared, "codex", p); ok {
			t.Errorf("%s: SubAgentFile = %+v, want none", what, s)
		}
	}
	keys := NewNamedKeys()
	for _, k := range []*NamedKeys{nil, keys, keys} { // remembered the second time
		if got := SubAgentFiles(declared, "codex", parent, k); len(got) != 1 || got[0].Path != sameDay || got[0].Parent != parent {
			t.Errorf("SubAgentFiles(parent) = %+v, want the same day's sub-agent alone", got)
		}
	}
	if len(keys.keys) == 0 {
		t.Error("the keys of the files beside the session are not remembered")
	}
}

// TestResultCall: the call that started a sub-agent is the one whose
// result's output, a JSON object, holds a member the store names equal
// to the sub-agent file's string at the member's pointer: Codex's
// multi-agent v1 spawn_agent returns the thread id (agent_id), v2 the
// agent's path (task_name). An output that is not a JSON object, a
// member of another name or value, or a pointer to nothing names none;
// the first call naming it is kept.
func TestResultCall(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(child, []byte(`{"type":"session_meta","payload":{"id":"c-1","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p","agent_path":"/root/w"}}}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		outputs []string // results of calls 0, 1, ...
		want    int      // -1: none
	}{
		{"v1 agent_id", []string{`{"agent_id":"c-0","nickname":null}`, `{"agent_id":"c-1","nickname":"Hume"}`}, 1},
		{"v2 task_name", []string{`{"task_name":"/root/w","nickname":"Hume"}`}, 0},
		{"v2 hidden metadata, spaces", []string{"  {\"task_name\": \"/root/w\"}\n"}, 0},
		{"first naming it kept", []string{`{"task_name":"/root/w"}`, `{"task_name":"/root/w"}`}, 0},
		{"text naming it", []string{`agent_id: c-1`, `spawned /root/w`}, -1},
		{"another member", []string{`{"id":"c-1","path":"/root/w"}`}, -1},
		{"another value", []string{`{"task_name":"/root/w2"}`}, -1},
		{"a number", []string{`{"agent_id":1}`}, -1},
	} {
		in := sessionLinks{members: map[string]int{}}
		for i, o := range tc.outputs {
			in.addMembers(o, i)
		}
		got, ok := resultCall(codexSubAgentOf, child, in)
		if !ok {
			got = -1
		}
		if got != tc.want {
			t.Errorf("%s: call %d, want %d", tc.name, got, tc.want)
		}
	}
	if _, ok := resultCall(&abi.SubAgentOf{Member: "/p", File: "{key}.jsonl", Result: map[string]string{"agent_id": "/payload/missing"}}, child,
		sessionLinks{members: map[string]int{memberKey("agent_id", ""): 0}}); ok {
		t.Error("a pointer to nothing names a call")
	}
}

// TestPointerAt: a JSON Pointer reaches nested members, "~1" and "~0"
// standing for "/" and "~"; a member missing on the way, or one that is
// not an object, reaches nothing; of a member written twice, at any
// depth, the last is taken, as JSON.parse and encoding/json take it.
func TestPointerAt(t *testing.T) {
	doc := []byte(`{"a":{"b/c":{"d~e":"x"},"s":"y"},"n":3}`)
	for ptr, want := range map[string]string{
		"/a/b~1c/d~0e": `"x"`, "/a/s": `"y"`, "/n": "3",
		"/a/s/x": "", "/n/x": "", "/z": "", "/a/b~1c/x": "", "a/s": "", "": "",
	} {
		if got := string(pointerAt(doc, ptr)); got != want {
			t.Errorf("%q: %s, want %s", ptr, got, want)
		}
	}
	for _, c := range []struct{ doc, ptr, want string }{
		{`{"n":1,"n":2}`, "/n", "2"},
		{`{"a":{"b":1},"a":{"c":2}}`, "/a/b", ""},
		{`{"a":{"b":1},"a":{"c":2}}`, "/a/c", "2"},
		{`{"a":{"b":1,"b":{"c":3}}}`, "/a/b/c", "3"},
		{`{"a":{"b":"x"},"z":[1,{"a":0}],"a" : {"b":"y"}}`, "/a/b", `"y"`},
	} {
		got := string(pointerAt([]byte(c.doc), c.ptr))
		if got != c.want {
			t.Errorf("%s %s: %s, want %s", c.doc, c.ptr, got, c.want)
		}
		if dec := decodedAt(t, c.doc, c.ptr); dec != c.want {
			t.Errorf("%s %s: encoding/json finds %s, the walk %s", c.doc, c.ptr, dec, c.want)
		}
	}
	if got := pointerString(doc, "/n"); got != "" {
		t.Errorf("a number as a string: %q", got)
	}
	if !strings.Contains(missingParent(&Location{Dir: "/s", SubAgentOf: codexSubAgentOf}, "k"), "rollout-*-k.jsonl") {
		t.Error("missingParent does not name the key")
	}
}

// decodedAt is the value ptr (no escapes) names in doc as encoding/json
// decodes it into a generic value (a member written twice: its last, as
// JSON.parse), written again as JSON; "" for none.
func decodedAt(t *testing.T, doc, ptr string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		m, _ := v.(map[string]any)
		v = m[tok]
	}
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLinePointer: the value a JSON Pointer names in a file's first
// line, walked without decoding the line, is the one the file's first
// JSON value gives (pointerAt of firstValue), as decoding it finds it
// (of a member written twice, the last): through
// strings holding braces, quotes and escapes, arrays, numbers and
// member names written with escapes; none when a member on the way is
// missing or no object. A first line that holds no whole object (a
// document over many lines, a line longer than what is read, no line
// end, text that is no JSON) is left to firstObject.
func TestLinePointer(t *testing.T) {
	const ptr = "/payload/source/subagent/thread_spawn/parent_thread_id"
	dir := t.TempDir()
	put := func(b string) string {
		f, err := os.CreateTemp(dir, "*.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(b); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return f.Name()
	}
	walked := map[string]string{
		"codex":                `{"timestamp":"t","type":"session_meta","payload":{"id":"c","base_instructions":{"text":"a } \" { [ ] \\\" \\\\"},"source":{"subagent":{"thread_spawn":{"depth":1,"parent_thread_id":"p-1","agent_path":"/root/w"}}}}}`,
		"arrays, numbers":      `{"payload":{"dynamic_tools":[{"a":[1,2.5e3,-4]},"}",null,true],"n":-0.5,"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-2"}}}}}`,
		"escaped name":         `{"payload":{"sour\u0063e":{"subagent":{"thread_spawn":{"parent_thread_id":"p-3"}}}}}`,
		"spaces":               ` { "payload" : { "source" : {"subagent":{"thread_spawn":{"parent_thread_id" : "p-4" } } } } } `,
		"cli session":          `{"type":"session_meta","payload":{"id":"p","source":"cli","x":{"y":"}"}}}`,
		"review":               `{"payload":{"source":{"subagent":"review"}}}`,
		"no payload":           `{"type":"event_msg"}`,
		"a number":             `{"payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":7}}}}}`,
		"last of a twice":      `{"payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-5"}}}},"payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-8"}}}}}`,
		"twice, the last none": `{"payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-5"}}}},"payload":{}}`,
		"twice within":         `{"payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-5","parent_thread_id":"p-9"}}}}}`,
	}
	wantOf := map[string]string{"last of a twice": `"p-8"`, "twice, the last none": "", "twice within": `"p-9"`}
	walked["after the first bytes read"] = `{"payload":{"base_instructions":{"text":"` + strings.Repeat("x", 3*linePrefix) + `"},"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-6"}}}}}`
	walked["cut in a number at the first bytes' end"] = `{"payload":{"pad":"` + strings.Repeat("x", linePrefix-len(`{"payload":{"pad":"","n":1`)) + `","n":12345,"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-7"}}}}}`
	for name, line := range walked {
		p := put(line + "\n" + `{"type":"event_msg"}` + "\n")
		v, done := linePointer(p, maxParentFile, ptr)
		if !done {
			t.Errorf("%s: not walked", name)
			continue
		}
		if want := pointerAt(firstValue(p, maxParentFile), ptr); string(v) != string(want) {
			t.Errorf("%s: %s, want %s as the first value gives it", name, v, want)
		}
		// As JSON.parse, and encoding/json into a generic value, decode
		// the line (into a struct, encoding/json would merge the two).
		if want, ok := wantOf[name]; ok {
			if got := decodedAt(t, line, ptr); string(v) != want || got != want {
				t.Errorf("%s: %s, encoding/json %s, want %s", name, v, got, want)
			}
		}
	}
	// A first line still being written (no line end) is walked as far
	// as it goes, as firstObject decodes it.
	if v, done := linePointer(put(`{"payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}}}`), maxParentFile, ptr); !done || string(v) != `"p"` {
		t.Errorf("no line end: %s, %v; want \"p\"", v, done)
	}
	for name, c := range map[string]struct {
		b     string
		limit int
	}{
		"document over lines": {"{\n  \"payload\": {\"source\": {\"subagent\": {\"thread_spawn\": {\"parent_thread_id\": \"p\"}}}}\n}\n", maxParentFile},
		"longer than read":    {`{"payload":{"text":"` + strings.Repeat("x", 200) + `","source":{}}}` + "\n", 100},
		"not json":            {"not json\n", maxParentFile},
		"cut in a string":     {`{"payload":{"text":"abc` + "\n", maxParentFile},
		"array":               {`[{"payload":{}}]` + "\n", maxParentFile},
	} {
		if v, done := linePointer(put(c.b), c.limit, ptr); done {
			t.Errorf("%s: walked to %s, want it left to firstObject", name, v)
		}
	}
}
