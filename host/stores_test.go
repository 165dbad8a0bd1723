package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// TestDeclaredStores: the stores plugins declare in their manifests (ABI
// 1.4) are listed by Runtime.Stores without compiling a plugin whose
// manifest is known (recorded by the build for a bundled plugin, cached
// for an external one), with the provider each is read as; a store whose
// provider another plugin won is left out.
func TestDeclaredStores(t *testing.T) {
	madeup := plugin(t, "madeup")
	old := plugin(t, "abiv13")
	want := DeclaredStore{Store: abi.Store{Name: "Madeup sessions", Roots: []abi.Root{{Env: "MADEUP_HOME"}, {Path: "~/.madeup"}},
		Dir: "sessions", Pattern: "*/*.log.jsonl", RetentionDays: 14}, Provider: "madeup", Plugin: "madeup"}

	t.Run("external", func(t *testing.T) {
		dir := t.TempDir()
		path := writeFile(t, dir, "madeup.wasm", madeup)
		writeFile(t, dir, "old.wasm", old)
		for i := range 2 { // the second New reads the manifest cache
			rt := newRuntime(t, set(testOptions(), func(o *Options) { o.PluginPath = []string{dir} }))
			w := want
			w.Origin = path
			if got := rt.Stores(); !slices.EqualFunc(got, []DeclaredStore{w}, storeEqual) {
				t.Fatalf("run %d: %+v", i, got)
			}
		}
	})

	t.Run("bundled, recorded", func(t *testing.T) {
		m := abi.Manifest{Name: "madeup", Version: "0.0.1", Providers: []string{"madeup"}, Stores: []abi.Store{want.Store}}
		// A recorded manifest with a record that does not match the bytes
		// would fail at load: listing the stores must not load it.
		rt := newRuntime(t, set(testOptions(), func(o *Options) {
			o.Bundled = []Bundled{{File: "madeup.wasm", Manifest: &m, SHA256: strings.Repeat("0", 64), Size: len(madeup),
				Wasm: func() ([]byte, error) { t.Error("the module was read"); return madeup, nil }}}
		}))
		w := want
		w.Origin = "bundled"
		if got := rt.Stores(); !slices.EqualFunc(got, []DeclaredStore{w}, storeEqual) {
			t.Fatalf("%+v", got)
		}
	})

	t.Run("provider won by another plugin", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "madeup.wasm", madeup)
		m := abi.Manifest{Name: "other", Version: "1", Providers: []string{"madeup"}}
		rt := newRuntime(t, set(testOptions(), func(o *Options) {
			o.Bundled = []Bundled{{File: "other.wasm", Manifest: &m, SHA256: strings.Repeat("0", 64), Size: 1, Wasm: func() ([]byte, error) { return nil, os.ErrNotExist }}}
			o.PluginPath = []string{dir}
		}))
		if got := rt.Stores(); len(got) != 0 {
			t.Fatalf("the external plugin's store is listed though the bundled plugin keeps its provider: %+v", got)
		}
	})
}

func storeEqual(a, b DeclaredStore) bool {
	return a.Name == b.Name && a.Provider == b.Provider && a.Plugin == b.Plugin && a.Origin == b.Origin && a.Dir == b.Dir &&
		a.Pattern == b.Pattern && a.RetentionDays == b.RetentionDays && slices.Equal(a.Roots, b.Roots) && a.SourceFacts == b.SourceFacts
}

// TestManifestCacheOfAnOlderHost: a manifest cached by a host older than
// this ABI minor (one that did not know the stores, and dropped them) is
// not trusted: the plugin is loaded again and its stores are listed.
func TestManifestCacheOfAnOlderHost(t *testing.T) {
	madeup := plugin(t, "madeup")
	dir := t.TempDir()
	writeFile(t, dir, "madeup.wasm", madeup)
	opts := set(testOptions(), func(o *Options) { o.PluginPath = []string{dir} })
	newRuntime(t, opts) // caches the manifest (compiled code is shared with the other tests)
	files := []string{filepath.Join(opts.CacheDir, "manifests", contentKey(madeup)+".json")}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// What a 1.3 host wrote: no stores, no host_minor.
	older := strings.Replace(string(b), `"stores":`, `"dropped":`, 1)
	older = strings.Replace(older, fmt.Sprintf(`,"host_minor":%d`, wire.Minor), ``, 1)
	if older == string(b) || strings.Contains(older, "host_minor") {
		t.Fatalf("cached record: %s", b)
	}
	if err := os.WriteFile(files[0], []byte(older), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := newRuntime(t, opts).Stores(); len(got) != 1 {
		t.Fatalf("stores after an older host's cache: %+v", got)
	}
}

// TestABI13PluginWorks: a plugin built for ABI 1.3 (its version, its
// manifest's shape) loads in this host, declares no store and normalizes
// as it did.
func TestABI13PluginWorks(t *testing.T) {
	rt := newRuntime(t, testOptions())
	p := load(t, rt, "abiv13", false)
	if m := p.manifest; m.Name != "old" || len(m.Stores) != 0 || m.SourceFacts {
		t.Fatalf("manifest %+v", m)
	}
	ctx := context.Background()
	in, err := p.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if err := in.Begin(ctx, abi.BeginOptions{Provider: "old"}); err != nil {
		t.Fatal(err)
	}
	b := batch(1, `{"text":"hello"}`)
	out, err := in.Feed(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(t, out, b); !slices.Contains(got, `block:{"text":"hello"}`) {
		t.Fatalf("feed records %q", got)
	}
}

// TestCheckStoreSubAgents: a store's sub-agent glob is relative to the
// session file's directory; it may climb from it by "../" at its start
// (an agent that keeps each agent's journal in a directory of its own,
// Kimi Code's), never elsewhere, and never out of nothing but climbs.
func TestCheckStoreSubAgents(t *testing.T) {
	for _, tc := range []struct {
		glob string
		ok   bool
	}{
		{"{stem}/subagents/**/agent-*.jsonl", true},
		{"../agent-*/wire.jsonl", true},
		{"../../x/{stem}.jsonl", true},
		{"a/../b.jsonl", false},
		{"../", false},
		{"..", false},
		{"/abs/*.jsonl", false},
		{"./agent-*.jsonl", false},
	} {
		st := abi.Store{Name: "s", Roots: []abi.Root{{Path: "~/.s"}}, Pattern: "*/*.jsonl", SubAgents: tc.glob}
		got := checkStore(st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("sub_agents %q: problems %q, want ok %v", tc.glob, got, tc.ok)
		}
	}
}

// TestCheckStoreSubAgentCall: a store says where a sub-agent names the
// call that started it (sub_agent_call: a file beside the sub-agent's
// and a key) for its sub-agents' files (sub_agents), or, for a folder or
// tree store, for its sessions that name their parent (parent: Factory
// Droid's session_start); with neither it says nothing, and is refused.
func TestCheckStoreSubAgentCall(t *testing.T) {
	call := &abi.SidecarKey{File: "{stem}.jsonl", Key: "callingToolUseId"}
	tree := func(parent *abi.StoreParent, c *abi.SidecarKey) abi.Store {
		return abi.Store{Name: "s", Kind: abi.StoreKindTree, Roots: []abi.Root{{Path: "~/.s"}}, Pattern: "*/*.jsonl",
			Files: []string{"*/{key}.jsonl", "*/{key}.settings.json"}, Parent: parent, SubAgentCall: c}
	}
	parent := &abi.StoreParent{File: "*/{key}.jsonl", Member: "callingSessionId"}
	for _, tc := range []struct {
		name string
		st   abi.Store
		ok   bool
	}{
		{"tree store with parent", tree(parent, call), true},
		{"tree store without parent", tree(nil, call), false},
		{"tree store with parent, call in another directory", tree(parent, &abi.SidecarKey{File: "x/{stem}.jsonl", Key: "k"}), false},
		{"tree store with parent, no key", tree(parent, &abi.SidecarKey{File: "{stem}.jsonl"}), false},
		{"file store with sub_agents", abi.Store{Name: "s", Roots: []abi.Root{{Path: "~/.s"}}, Pattern: "*/*.jsonl",
			SubAgents: "{stem}/subagents/agent-*.jsonl", SubAgentCall: &abi.SidecarKey{File: "{stem}.meta.json", Key: "toolUseId"}}, true},
		{"file store without sub_agents", abi.Store{Name: "s", Roots: []abi.Root{{Path: "~/.s"}}, Pattern: "*/*.jsonl", SubAgentCall: call}, false},
	} {
		got := checkStore(tc.st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, got, tc.ok)
		}
	}
}

// TestCheckStoreSubAgentOf: a file store may say how a session names the
// session it is a sub-agent of (sub_agent_of: JSON Pointers into its
// first line, the parent's file a glob with {key} in its name); another
// kind of store, a member that is no pointer, a glob that climbs or
// holds {key} in a directory, or a result member without a pointer is
// refused.
func TestCheckStoreSubAgentOf(t *testing.T) {
	ok := abi.SubAgentOf{Member: "/payload/source/subagent/thread_spawn/parent_thread_id", File: "**/rollout-*-{key}.jsonl",
		Result: map[string]string{"agent_id": "/payload/id", "task_name": "/payload/source/subagent/thread_spawn/agent_path"}}
	store := func(kind string, mod func(*abi.SubAgentOf)) abi.Store {
		p := ok
		if mod != nil {
			mod(&p)
		}
		return abi.Store{Name: "s", Kind: kind, Roots: []abi.Root{{Path: "~/.s"}}, Pattern: "**/rollout-*.jsonl", Files: []string{"x.json"}, SubAgentOf: &p}
	}
	for _, tc := range []struct {
		name string
		st   abi.Store
		ok   bool
	}{
		{"file store", store("", nil), true},
		{"file store, no result", store("file", func(p *abi.SubAgentOf) { p.Result = nil }), true},
		{"escaped pointer", store("", func(p *abi.SubAgentOf) { p.Member = "/a~1b/c~0d" }), true},
		{"folder store", store("folder", nil), false},
		{"member not a pointer", store("", func(p *abi.SubAgentOf) { p.Member = "parent_thread_id" }), false},
		{"member an empty name", store("", func(p *abi.SubAgentOf) { p.Member = "/payload//id" }), false},
		{"member a bad escape", store("", func(p *abi.SubAgentOf) { p.Member = "/a~2" }), false},
		{"file climbs", store("", func(p *abi.SubAgentOf) { p.File = "../{key}.jsonl" }), false},
		{"file without key", store("", func(p *abi.SubAgentOf) { p.File = "**/rollout-*.jsonl" }), false},
		{"key in a directory", store("", func(p *abi.SubAgentOf) { p.File = "{key}/x.jsonl" }), false},
		{"result not a pointer", store("", func(p *abi.SubAgentOf) { p.Result = map[string]string{"agent_id": "id"} }), false},
	} {
		got := checkStore(tc.st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, got, tc.ok)
		}
	}
}

// TestCheckStoreSubAgentsKey: a file store whose sub-agents' directory
// is named by the id its session file states (sub_agents_key: a JSON
// Pointer into the file's first value, a prefix of the id its name
// holds) and whose records name the call that started each sub-agent
// (sub_agent_calls: a pointer to an array, two member names, optionally
// a pointer to the object naming the agent and a file name's prefix)
// declares them with a sub-agent glob ({stem} in it, for the key);
// without one, with a member that is no pointer, a negative or too long
// prefix, a member name that is none or a file name's prefix holding a
// separator or a wildcard, it is refused.
func TestCheckStoreSubAgentsKey(t *testing.T) {
	key := &abi.SessionKey{Member: "/sessionId", Prefix: 8}
	calls := &abi.RecordCalls{Calls: "/toolCalls", Agent: "agentId", ID: "id"}
	store := func(glob string, k *abi.SessionKey, c *abi.RecordCalls) abi.Store {
		return abi.Store{Name: "s", Roots: []abi.Root{{Path: "~/.s"}}, Dir: "tmp", Pattern: "*/chats/**/*.{json,jsonl}", SubAgents: glob, SubAgentsKey: k, SubAgentCalls: c}
	}
	for _, tc := range []struct {
		name string
		st   abi.Store
		ok   bool
	}{
		{"gemini", store("{stem}/*.{json,jsonl}", key, calls), true},
		{"key without a prefix", store("{stem}/*.jsonl", &abi.SessionKey{Member: "/id"}, nil), true},
		{"calls alone", store("{stem}/*.jsonl", nil, calls), true},
		{"key without sub_agents", store("", key, nil), false},
		{"key, glob without {stem}", store("agents/*.jsonl", key, nil), false},
		{"key member not a pointer", store("{stem}/*.jsonl", &abi.SessionKey{Member: "sessionId"}, nil), false},
		{"negative prefix", store("{stem}/*.jsonl", &abi.SessionKey{Member: "/id", Prefix: -1}, nil), false},
		{"prefix too long", store("{stem}/*.jsonl", &abi.SessionKey{Member: "/id", Prefix: 65}, nil), false},
		{"calls without sub_agents", store("", nil, calls), false},
		{"calls not a pointer", store("{stem}/*.jsonl", nil, &abi.RecordCalls{Calls: "toolCalls", Agent: "agentId", ID: "id"}), false},
		{"calls without agent", store("{stem}/*.jsonl", nil, &abi.RecordCalls{Calls: "/toolCalls", ID: "id"}), false},
		{"calls without id", store("{stem}/*.jsonl", nil, &abi.RecordCalls{Calls: "/toolCalls", Agent: "agentId"}), false},
		{"claude: agent in another object, a prefix", store("{stem}/subagents/**/agent-*.jsonl", nil, &abi.RecordCalls{Calls: "/message/content", Agent: "agentId", ID: "tool_use_id", AgentIn: "/toolUseResult", Prefix: "agent-"}), true},
		{"agent_in not a pointer", store("{stem}/*.jsonl", nil, &abi.RecordCalls{Calls: "/c", Agent: "agentId", ID: "id", AgentIn: "toolUseResult"}), false},
		{"prefix a path", store("{stem}/*.jsonl", nil, &abi.RecordCalls{Calls: "/c", Agent: "agentId", ID: "id", Prefix: "sub/agent-"}), false},
		{"prefix a glob", store("{stem}/*.jsonl", nil, &abi.RecordCalls{Calls: "/c", Agent: "agentId", ID: "id", Prefix: "agent-*"}), false},
	} {
		got := checkStore(tc.st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, got, tc.ok)
		}
	}
}

// TestCheckStoreSubAgentPrompt: a file store whose sub-agents' files
// and calls state the same prompt (sub_agent_prompt, ABI 1.11: a
// pointer into the file's records, one into the call's input,
// optionally the tool's name) declares it with a sub-agent glob; without
// one, with a member that is no pointer or a name that is none, it is
// refused.
func TestCheckStoreSubAgentPrompt(t *testing.T) {
	store := func(glob string, p *abi.PromptMatch) abi.Store {
		return abi.Store{Name: "s", Roots: []abi.Root{{Path: "~/.s"}}, Dir: "sessions", Pattern: "*/*.jsonl", SubAgents: glob, SubAgentPrompt: p}
	}
	for _, tc := range []struct {
		name string
		st   abi.Store
		ok   bool
	}{
		{"kimi", store("{stem}_sub_[1-9].jsonl", &abi.PromptMatch{Record: "/content", Input: "/prompt", Name: "Task"}), true},
		{"any tool", store("{stem}_sub_[1-9].jsonl", &abi.PromptMatch{Record: "/content", Input: "/prompt"}), true},
		{"without sub_agents", store("", &abi.PromptMatch{Record: "/content", Input: "/prompt"}), false},
		{"record not a pointer", store("{stem}_sub.jsonl", &abi.PromptMatch{Record: "content", Input: "/prompt"}), false},
		{"input not a pointer", store("{stem}_sub.jsonl", &abi.PromptMatch{Record: "/content", Input: "prompt"}), false},
		{"a name that is none", store("{stem}_sub.jsonl", &abi.PromptMatch{Record: "/content", Input: "/prompt", Name: " Task"}), false},
	} {
		got := checkStore(tc.st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, got, tc.ok)
		}
	}
}

// TestCheckStoreParentPrompt: a folder store may declare the file and
// pointer of a session's first prompt and the pointer of the call's
// input stating it (parent.prompt, ABI 1.12: Roo Code before 3.35's
// ui_messages.json "/0/text" and new_task's "/message"); a file not
// among the store's files, a pointer without its "/", a tree store, or a
// file on a sub_agent_prompt (a file store's) is refused.
func TestCheckStoreParentPrompt(t *testing.T) {
	roo := abi.PromptMatch{File: "ui_messages.json", Record: "/0/text", Input: "/message", Name: "new_task"}
	store := func(kind string, edit func(*abi.PromptMatch)) abi.Store {
		pm := roo
		edit(&pm)
		st := abi.Store{Name: "s", Kind: kind, Roots: []abi.Root{{Path: "~/.s"}}, Dir: "tasks", Pattern: "*",
			Files: []string{"ui_messages.json", "history_item.json"}, Parent: &abi.StoreParent{File: "history_item.json", Member: "parentTaskId", Prompt: &pm}}
		return st
	}
	kimi := abi.Store{Name: "s", Kind: "file", Roots: []abi.Root{{Path: "~/.s"}}, Pattern: "*.jsonl", SubAgents: "{stem}_sub_*.jsonl",
		SubAgentPrompt: &abi.PromptMatch{File: "x.jsonl", Record: "/content", Input: "/prompt"}}
	for _, tc := range []struct {
		name string
		st   abi.Store
		ok   bool
	}{
		{"roo", store("folder", func(*abi.PromptMatch) {}), true},
		{"no tool name", store("folder", func(p *abi.PromptMatch) { p.Name = "" }), true},
		{"a file not the store's", store("folder", func(p *abi.PromptMatch) { p.File = "task_metadata.json" }), false},
		{"no file", store("folder", func(p *abi.PromptMatch) { p.File = "" }), false},
		{"a record without /", store("folder", func(p *abi.PromptMatch) { p.Record = "0/text" }), false},
		{"an input without /", store("folder", func(p *abi.PromptMatch) { p.Input = "message" }), false},
		{"a tree store", store(abi.StoreKindTree, func(*abi.PromptMatch) {}), false},
		{"a file on a sub_agent_prompt", kimi, false},
	} {
		got := checkStore(tc.st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, got, tc.ok)
		}
	}
}

// TestCheckStoreParentResult: a folder store may declare the line of a
// tool result by which a parent names its sub-task (parent.result, ABI
// 1.11: Roo Code's "Subtask {key} completed."): one line holding {key}
// once; on a tree store, without {key}, with it twice or over two lines,
// it is refused.
func TestCheckStoreParentResult(t *testing.T) {
	store := func(kind, result string) abi.Store {
		st := abi.Store{Name: "s", Kind: kind, Roots: []abi.Root{{Path: "~/.s"}}, Dir: "tasks", Pattern: "*",
			Files: []string{"ui_messages.json", "history_item.json"}, Parent: &abi.StoreParent{File: "history_item.json", Member: "parentTaskId", Result: result}}
		if kind == abi.StoreKindTree {
			st.Files = []string{"history_item.json"}
		}
		return st
	}
	for _, tc := range []struct {
		name string
		st   abi.Store
		ok   bool
	}{
		{"roo", store("folder", "Subtask {key} completed."), true},
		{"none", store("folder", ""), true},
		{"a tree store", store(abi.StoreKindTree, "Subtask {key} completed."), false},
		{"without {key}", store("folder", "Subtask completed."), false},
		{"{key} twice", store("folder", "{key} {key}"), false},
		{"two lines", store("folder", "Subtask {key}\ncompleted."), false},
	} {
		got := checkStore(tc.st, map[string]bool{"s": true})
		if (len(got) == 0) != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, got, tc.ok)
		}
	}
}
