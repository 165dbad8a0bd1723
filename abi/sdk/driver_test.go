package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// funcNorm is a Normalizer made of functions.
type funcNorm struct {
	line func(l *Line, out *Out) error
	end  func(out *Out) error
}

func (n *funcNorm) Line(l *Line, out *Out) error {
	if n.line == nil {
		return nil
	}
	return n.line(l, out)
}

func (n *funcNorm) End(out *Out) error {
	if n.end == nil {
		return nil
	}
	return n.end(out)
}

func plugin(n func(opts abi.BeginOptions) *funcNorm) Plugin {
	return Plugin{
		Manifest: abi.Manifest{Name: "test", Version: "1.0.0", Providers: []string{"p"}, Formats: []string{"jsonl"}},
		New:      func(o abi.BeginOptions) Normalizer { return n(o) },
	}
}

func batch(lines ...string) []byte {
	b := wire.AppendBatchHeader(nil, len(lines))
	for i, l := range lines {
		toks, _ := wire.BuildTape(nil, []byte(l))
		b = wire.AppendBatchLine(b, i+1, []byte(l), toks)
	}
	return b
}

// rec is a decoded record with its fields resolved: spans are marked so
// that a test can tell them from literals.
type rec struct {
	op     wire.Op
	fields map[wire.Tag]val
}

type val struct {
	kind wire.VKind
	s    string // VStr, VJSON: the bytes; VSpan: the raw span bytes
	mode wire.SpanMode
	i    int64
	b    bool
	f    float64
}

func decode(t testing.TB, out, input []byte) []rec {
	t.Helper()
	var recs []rec
	d := wire.NewDecoder(out)
	for {
		r, err := d.Next()
		require.NoError(t, err)
		if r == nil {
			return recs
		}
		x := rec{op: r.Op, fields: map[wire.Tag]val{}}
		for _, f := range r.Fields {
			v := val{kind: f.Kind, mode: f.Mode, i: f.Int, b: f.Bool, f: f.Float, s: string(f.Bytes)}
			if f.Kind == wire.VSpan {
				require.LessOrEqual(t, f.Off+f.N, len(input), "span inside the input")
				v.s = string(input[f.Off : f.Off+f.N])
			}
			x.fields[f.Tag] = v
		}
		recs = append(recs, x)
	}
}

func ops(recs []rec) []wire.Op {
	var o []wire.Op
	for _, r := range recs {
		o = append(o, r.op)
	}
	return o
}

func TestManifest(t *testing.T) {
	names := []string{"plain", `quo"te`, `back\slash`, "ctl\x00\x01\n\t\x1f", "unicode é 😀 \u2028", ""}
	for _, name := range names {
		p := Plugin{Manifest: abi.Manifest{Name: name, Version: name, Providers: []string{name, "x"}, Formats: nil, Description: name}}
		b := newDriver(p).manifest()
		require.True(t, json.Valid(b), "%q: %s", name, b)
		var m abi.Manifest
		require.NoError(t, json.Unmarshal(b, &m))
		assert.Equal(t, name, m.Name)
		assert.Equal(t, name, m.Version)
		assert.Equal(t, []string{name, "x"}, m.Providers)
		assert.Equal(t, []string{}, m.Formats)
		assert.Equal(t, name, m.Description)
		assert.Equal(t, sdkVersion, m.SDK)
	}
	b := newDriver(Plugin{Manifest: abi.Manifest{Name: "n", SDK: "tinygo-sdk/2"}}).manifest()
	var m abi.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, "tinygo-sdk/2", m.SDK)
	assert.NotContains(t, string(b), "description")
}

// TestManifestStores: the stores a plugin declares (ABI 1.4) reach the
// manifest whole, every field and every odd character, and a plugin that
// declares none writes no member.
func TestManifestStores(t *testing.T) {
	cases := []struct {
		name   string
		stores []abi.Store
		facts  bool
	}{
		{name: "none"},
		{name: "facts only", facts: true},
		{name: "full", facts: true, stores: []abi.Store{{
			Name: `Odd "store" \ é`, Provider: "p2", Kind: "file",
			Roots:     []abi.Root{{Env: "ODD_HOME"}, {Env: "XDG_DATA_HOME", Path: "odd"}, {Path: "~/.odd", OS: "linux"}, {Path: "~/Library/Odd", OS: "darwin"}},
			UnlessEnv: "NEW_ODD", Dir: "sessions", Pattern: "**/*.{json,jsonl}", Session: "content",
			SubAgents: `{stem}/sub "agents"/*.jsonl`, SubAgentCall: &abi.SidecarKey{File: "{stem}.meta.json", Key: `tool"Use"Id`}, SubAgentResult: `agent_id: "{dir}"`,
			RetentionDays: 30, RetentionFile: "settings.json", RetentionKey: "cleanupPeriodDays",
		}, {Name: "minimal", Roots: []abi.Root{{Path: "~"}}, Pattern: "*.jsonl"}, {Name: "no roots", Pattern: "x"},
			{Name: "sub-agent of", Roots: []abi.Root{{Path: "~/.c"}}, Pattern: "**/r-*.jsonl", SubAgentOf: &abi.SubAgentOf{
				Member: `/payload/odd "p"`, File: "**/r-*-{key}.jsonl", Result: map[string]string{`task "name"`: "/payload/path", "agent_id": "/payload/id"}}},
			{Name: "sub-agents by key", Roots: []abi.Root{{Path: "~/.g"}}, Dir: "tmp", Pattern: "*/chats/**/*.{json,jsonl}", SubAgents: "{stem}/*.{json,jsonl}",
				SubAgentsKey: &abi.SessionKey{Member: `/session "Id"`, Prefix: 8}, SubAgentCalls: &abi.RecordCalls{Calls: "/tool\"Calls\"", Agent: `agent"Id"`, ID: "id"}},
			{Name: "sub-agents by prompt", Roots: []abi.Root{{Path: "~/.k"}}, Pattern: "*/*.jsonl", SubAgents: "{stem}_sub_[1-9].jsonl",
				SubAgentPrompt: &abi.PromptMatch{Record: `/con"tent`, Input: "/prompt", Name: `Ta"sk`}},
			{Name: "sub-agents by prompt, any tool", Roots: []abi.Root{{Path: "~/.k"}}, Pattern: "*.jsonl", SubAgents: "{stem}_sub.jsonl",
				SubAgentPrompt: &abi.PromptMatch{Record: "/content", Input: "/prompt"}},
			{Name: "sub-agents by key, no prefix", Roots: []abi.Root{{Path: "~/.g"}}, Pattern: "*.jsonl", SubAgents: "{stem}/*.jsonl", SubAgentsKey: &abi.SessionKey{Member: "/id"}},
			{Name: "sub-agent of, no result", Roots: []abi.Root{{Path: "~/.c"}}, Pattern: "*.jsonl", SubAgentOf: &abi.SubAgentOf{Member: "/p", File: "*-{key}.jsonl"}},
			{Name: "folder", Kind: "folder", Roots: []abi.Root{{Path: "~/.f"}}, Pattern: "*", Files: []string{"ui_messages.json", `odd "name".json`, "*.jsonl"},
				Parent: &abi.StoreParent{File: "history_item.json", Member: `parent "Task" Id`, Result: `Subtask "{key}" completed.`}},
			{Name: "folder, by prompt", Kind: "folder", Roots: []abi.Root{{Path: "~/.f"}}, Pattern: "*", Files: []string{"ui_messages.json", "history_item.json"},
				Parent: &abi.StoreParent{File: "history_item.json", Member: "parentTaskId", Prompt: &abi.PromptMatch{File: `ui "messages".json`, Record: "/0/text", Input: `/mess"age`, Name: "new_task"}}},
			{Name: "folder, by prompt, any tool", Kind: "folder", Roots: []abi.Root{{Path: "~/.f"}}, Pattern: "*", Files: []string{"ui_messages.json", "history_item.json"},
				Parent: &abi.StoreParent{File: "history_item.json", Member: "parentTaskId", Prompt: &abi.PromptMatch{File: "ui_messages.json", Record: "/0/text", Input: "/message"}}},
			{Name: "tree", Kind: abi.StoreKindTree, Roots: []abi.Root{{Path: "~/.t"}}, Dir: "storage", Pattern: "session/*/*.json",
				Files: []string{"session/*/{key}.json", "message/{key}/*.json", "part/{*}/*.json"}, Parent: &abi.StoreParent{File: "session/*/{key}.json", Member: "parentID"}}}},
		{name: "sections", stores: []abi.Store{{
			Name: "aider", Kind: abi.StoreKindSections, Roots: []abi.Root{{Projects: true}, {Env: "X", Projects: true}}, Pattern: ".aider.chat.history.md",
			SessionStart: "# aider \"chat\" started at ",
		}}},
		{name: "list", stores: []abi.Store{{
			Name: "listed", Roots: []abi.Root{
				{Env: "L_HOME", List: &abi.RootList{File: `odd "list".json`, Array: "projects", Field: "data_dir", Project: `pa"th`}},
				{Path: "~/.l", OS: "linux", List: &abi.RootList{File: "l.json", Field: `d"ir`}},
				{Projects: true, List: &abi.RootList{File: "p.json", Field: "d"}},
			}, Pattern: "crush.db",
		}}},
		{name: "sqlite", stores: []abi.Store{{
			Name: "db", Kind: abi.StoreKindSQLite, Roots: []abi.Root{{Path: "~/.db"}}, Pattern: "a*.db",
			SQLite: &abi.SQLiteSource{Sessions: "SELECT id AS key, t AS cursor FROM s -- \"odd\"\n", Tables: []abi.SQLiteTable{
				{Table: "s", Query: "SELECT * FROM s WHERE id = :session", Key: "id", Version: "t"},
				{Table: "p", Query: "SELECT * FROM p WHERE 'é' <> :since", Key: "id", Version: "v", Time: "c", JSON: []string{"data", "m"}},
			}, Related: []abi.SQLiteRelated{
				{Table: "w", Glob: "../w/*/s.db", Query: "SELECT k FROM t -- \"odd\"", Key: "k", File: `w "s".json`},
				{Table: "x", Glob: "x.db", Query: "SELECT 1 AS k", Key: "k"},
			}},
		}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Plugin{Manifest: abi.Manifest{Name: "n", Version: "1", Providers: []string{"p1", "p2"}, Stores: c.stores, SourceFacts: c.facts}}
			b := newDriver(p).manifest()
			require.True(t, json.Valid(b), "%s", b)
			var m abi.Manifest
			require.NoError(t, json.Unmarshal(b, &m))
			want := c.stores
			for i := range want {
				if want[i].Roots == nil {
					want[i].Roots = []abi.Root{} // written as []
				}
			}
			assert.Equal(t, want, m.Stores)
			assert.Equal(t, c.facts, m.SourceFacts)
			if c.stores == nil {
				assert.NotContains(t, string(b), "stores")
			}
		})
	}
}

func TestDeclaredKeys(t *testing.T) {
	ks := abi.NewKeySet("type", `quo"te`, "id")
	var seen []string
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{line: func(l *Line, out *Out) error {
			root := l.JSON()
			if root.Doc().Keys != ks {
				t.Error("the line's document does not name the declared keys")
			}
			got := make([]abi.Value, len(ks.Names()))
			root.Lookup(ks, got)
			seen = append(seen, got[0].String()+"/"+root.Get("id").String()+"/"+root.Get("other").String())
			return nil
		}}
	})
	p.Keys = ks
	d := newDriver(p)
	var m abi.Manifest
	require.NoError(t, json.Unmarshal(d.manifest(), &m))
	assert.Equal(t, ks.Names(), m.Keys)

	// A keyed tape (a 1.2 host) and a plain one (an older host) read the
	// same.
	line := []byte(`{"other":"o","id":"i","type":"t"}`)
	keyed, _ := wire.BuildTapeKeys(nil, line, wire.NewKeySet(ks.Names()...))
	plain, _ := wire.BuildTape(nil, line)
	for _, toks := range [][]wire.Token{keyed, plain} {
		b := wire.AppendBatchLine(wire.AppendBatchHeader(nil, 1), 1, line, toks)
		st, msg := d.Begin([]byte(`{}`))
		require.Equal(t, wire.StatusOK, st, msg)
		st, msg = d.Feed(b)
		require.Equal(t, wire.StatusOK, st, msg)
	}
	assert.Equal(t, []string{"t/i/o", "t/i/o"}, seen)

	b := newDriver(plugin(func(abi.BeginOptions) *funcNorm { return &funcNorm{} })).manifest()
	assert.NotContains(t, string(b), "keys", "no keys declared, none listed")
}

func TestBeginOptions(t *testing.T) {
	var got []abi.BeginOptions
	p := plugin(func(o abi.BeginOptions) *funcNorm { got = append(got, o); return &funcNorm{} })
	d := newDriver(p)
	for _, in := range []string{`{"provider":"claude","format":"stream-json"}`, `{"provider":"a\"b"}`, ``, `garbage`, `{"provider":7}`} {
		st, msg := d.Begin([]byte(in))
		require.Equal(t, wire.StatusOK, st, msg)
	}
	assert.Equal(t, []abi.BeginOptions{
		{Provider: "claude", Format: "stream-json"},
		{Provider: `a"b`},
		{}, {},
		{Provider: "7"},
	}, got)

	st, msg := newDriver(Plugin{}).Begin([]byte(`{}`))
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, "no constructor")

	st, msg = newDriver(Plugin{New: func(abi.BeginOptions) Normalizer { panic("ctor") }}).Begin([]byte(`{}`))
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, "ctor")
}

func TestCallsBeforeBegin(t *testing.T) {
	d := newDriver(plugin(func(abi.BeginOptions) *funcNorm { return &funcNorm{} }))
	st, msg := d.Feed(batch(`{}`))
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, "before begin")
	st, msg = d.End()
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, "before begin")
	// End ends the stream: a second End needs a new Begin.
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	require.Equal(t, wire.StatusOK, first(d.End()))
	assert.Equal(t, wire.StatusFatal, first(d.End()))
}

func first(s wire.Status, _ string) wire.Status { return s }

func TestFeedMultiLine(t *testing.T) {
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				if !l.JSON().Exists() {
					out.Unmapped(S("banner"))
					return nil
				}
				v := l.JSON().Get("t")
				out.Final(Text(v), false)
				return nil
			},
			end: func(out *Out) error {
				out.Status(StatusOK, Str{}, LevelTerminal)
				return nil
			},
		}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin([]byte(`{}`))))
	in := batch(`{"t":"one"}`, `banner`, `{"t":"tw\"o"}`, `{"x":1}`)
	st, msg := d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	recs := decode(t, d.Output(), in)
	// Each line's first record is preceded by its line number, once.
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpFinal, wire.OpLine, wire.OpUnmapped, wire.OpLine, wire.OpFinal, wire.OpLine, wire.OpFinal}, ops(recs))
	assert.Equal(t, int64(1), recs[0].fields[wire.TLine].i)
	assert.Equal(t, int64(2), recs[2].fields[wire.TLine].i)
	assert.Equal(t, int64(3), recs[4].fields[wire.TLine].i)
	assert.Equal(t, val{kind: wire.VSpan, s: "one", mode: wire.SpanBytes}, recs[1].fields[wire.TText])
	assert.Equal(t, val{kind: wire.VSpan, s: `tw\"o`, mode: wire.SpanString}, recs[5].fields[wire.TText])
	assert.Equal(t, "banner", recs[3].fields[wire.TNative].s)
	_, ok := recs[7].fields[wire.TText]
	assert.False(t, ok, "a missing value is an unset field")

	st, _ = d.End()
	require.Equal(t, wire.StatusOK, st)
	recs = decode(t, d.Output(), nil)
	assert.Equal(t, []wire.Op{wire.OpStatus}, ops(recs), "no line record at End")
}

// Every mode of span resolves to the same bytes whether the value is in
// the host's input (a span) or in a document the plugin assembled (a
// literal resolved by the SDK) or kept across lines.
func TestSpansAndLiterals(t *testing.T) {
	const line = `{"plain":"abc","esc":"a\"b\\c\u00e9","num":12.5,"obj":{"k": [1, 2]},"jstr":"{\"x\": 1}","nstr":"not json","empty":"","bad":"\ud800x","null":null}`
	type mk struct {
		name string
		f    func(abi.Value) Str
		key  string
	}
	makers := []mk{
		{"text plain", Text, "plain"}, {"text escaped", Text, "esc"}, {"text number", Text, "num"},
		{"text object", Text, "obj"}, {"json object", JSON, "obj"}, {"json string with json", JSON, "jstr"},
		{"json string without json", JSON, "nstr"}, {"json number", JSON, "num"}, {"text empty", Text, "empty"},
		{"json empty", JSON, "empty"}, {"text lone surrogate", Text, "bad"}, {"json null", JSON, "null"},
	}
	var kept []Str
	var parsedDoc *abi.Doc
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				if l.No == 1 {
					// Same document, in the plugin's own memory.
					var ok bool
					parsedDoc, ok = Parse(append([]byte(nil), l.Raw...))
					require.True(t, ok)
					for _, m := range makers {
						s := m.f(l.JSON().Get(m.key))
						out.Warn(m.name)
						out.Final(s, true)                                // span
						out.Final(m.f(parsedDoc.Root().Get(m.key)), true) // literal
						kept = append(kept, s.Keep())
					}
					return nil
				}
				for i, m := range makers {
					out.Warn(m.name)
					out.Final(kept[i], true) // kept across lines
				}
				return nil
			},
		}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch(line, `{}`)
	st, msg := d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	recs := decode(t, d.Output(), in)

	// What the host makes of each (mirrors normalize's resolution).
	resolve := func(v val) (string, bool) {
		switch v.kind {
		case wire.VStr:
			return v.s, false
		case wire.VJSON:
			return compact(v.s)
		case wire.VSpan:
			switch v.mode {
			case wire.SpanString:
				if b, ok := wire.Unescape(nil, []byte(v.s)); ok {
					return string(b), false
				}
				return v.s, false
			case wire.SpanJSON:
				return compact(v.s)
			case wire.SpanJSONString:
				b, ok := wire.Unescape(nil, []byte(v.s))
				if !ok {
					return v.s, false
				}
				if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
					if c, ok := compact(string(b)); ok {
						return c, true
					}
				}
				return string(b), false
			}
			return v.s, false
		}
		return "", false
	}
	type result struct {
		s      string
		isJSON bool
		set    bool
	}
	get := func(r rec) result {
		v, ok := r.fields[wire.TText]
		if !ok {
			return result{}
		}
		s, j := resolve(v)
		return result{s, j, true}
	}
	var spans, lits, keeps []result
	// Records: line 1 = OpLine, then per maker Warn, Final(span),
	// Final(literal); line 2 = OpLine, then per maker Warn, Final(kept).
	k := 1
	for range makers {
		require.Equal(t, wire.OpWarning, recs[k].op)
		spans = append(spans, get(recs[k+1]))
		lits = append(lits, get(recs[k+2]))
		if v, ok := recs[k+2].fields[wire.TText]; ok {
			assert.NotEqual(t, wire.VSpan, v.kind, "a parsed document's value is a literal")
		}
		k += 3
	}
	require.Equal(t, wire.OpLine, recs[k].op)
	k++
	for range makers {
		require.Equal(t, wire.OpWarning, recs[k].op)
		keeps = append(keeps, get(recs[k+1]))
		if v, ok := recs[k+1].fields[wire.TText]; ok {
			assert.NotEqual(t, wire.VSpan, v.kind, "a kept value is a literal")
		}
		k += 2
	}
	for j, m := range makers {
		assert.Equal(t, spans[j], lits[j], "%s: span vs parsed literal", m.name)
		assert.Equal(t, spans[j], keeps[j], "%s: span vs kept", m.name)
	}
	// Spot checks on the span results themselves.
	assert.Equal(t, result{"abc", false, true}, spans[0])
	assert.Equal(t, result{`a"b\cé`, false, true}, spans[1])
	assert.Equal(t, result{"12.5", false, true}, spans[2])
	assert.Equal(t, result{`{"k": [1, 2]}`, false, true}, spans[3])
	assert.Equal(t, result{`{"k":[1,2]}`, true, true}, spans[4])
	assert.Equal(t, result{`{"x":1}`, true, true}, spans[5])
	assert.Equal(t, result{"not json", false, true}, spans[6])
	assert.Equal(t, result{"", false, true}, spans[8])
	assert.Equal(t, result{"null", true, true}, spans[11], "JSON(null) is the JSON null")
}

func compact(s string) (string, bool) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s, false
	}
	b, _ := json.Marshal(v)
	return string(b), true
}

func TestStrHelpers(t *testing.T) {
	assert.False(t, Str{}.IsSet())
	assert.True(t, Str{}.IsEmpty())
	assert.True(t, S("").IsSet())
	assert.True(t, S("").IsEmpty())
	assert.False(t, S("x").IsEmpty())
	assert.Equal(t, "x", S("x").String())
	assert.Equal(t, S("x"), S("x").Keep())
	assert.False(t, Opt("").IsSet(), "an empty optional field is unset")
	assert.Equal(t, S("x"), Opt("x"))

	d, ok := Parse([]byte(`{"a":"x\ty","e":"","n":null,"o":[1]}`))
	require.True(t, ok)
	r := d.Root()
	assert.Equal(t, "x\ty", Text(r.Get("a")).String())
	assert.True(t, Text(r.Get("e")).IsEmpty())
	assert.True(t, Text(r.Get("e")).IsSet())
	assert.False(t, Text(r.Get("n")).IsSet())
	assert.False(t, Text(r.Get("missing")).IsSet())
	assert.True(t, JSON(r.Get("n")).IsSet())
	assert.False(t, JSON(r.Get("missing")).IsSet())
	assert.Equal(t, "[1]", Text(r.Get("o")).String())
	_, ok = Parse([]byte(`nope`))
	assert.False(t, ok)

	n, set := IntOf(r.Get("o").Index(0)).Value()
	assert.True(t, set)
	assert.Equal(t, int64(1), n)
	_, set = IntOf(r.Get("a")).Value()
	assert.False(t, set)
	_, set = Int{}.Plus(Int{}).Value()
	assert.False(t, set)
	n, _ = N(2).Plus(Int{}).Value()
	assert.Equal(t, int64(2), n)
	n, _ = Int{}.Plus(N(3)).Value()
	assert.Equal(t, int64(3), n)
	n, _ = N(2).Plus(N(3)).Value()
	assert.Equal(t, int64(5), n)
	assert.True(t, Usage{}.isZero())
	assert.False(t, Usage{Reasoning: N(0)}.isZero())
	assert.True(t, Usage{Input: IntOf(abi.Value{})} == Usage{}, "an unset figure is the zero Int")
	sum := Usage{Input: N(1), CacheWrite: N(0)}.Plus(Usage{Input: N(2), Output: N(4)})
	assert.Equal(t, Usage{Input: N(3), CacheWrite: N(0), Output: N(4)}, sum, "a stated 0 stays stated; unset stays unset")
}

// TestUsageUncached: the uncached input a plugin does not state is
// derived from the whole input and its cached parts; one Split states is
// kept; parts above the whole leave it unknown.
func TestUsageUncached(t *testing.T) {
	tests := []struct {
		name string
		u    Usage
		want Int
	}{
		{"derived from the whole input", Usage{Input: N(100), CacheRead: N(60), CacheWrite: N(30)}, N(10)},
		{"no cache stated", Usage{Input: N(100)}, N(100)},
		{"stated by Split", Split(N(7), N(60), N(30)), N(7)},
		{"no input, no uncached", Usage{CacheRead: N(5), Output: N(3)}, Int{}},
		{"parts above the whole", Usage{Input: N(10), CacheRead: N(60)}, Int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.u.uncached())
		})
	}
	s := Split(N(7), N(60), Int{})
	assert.Equal(t, Usage{Input: N(67), Uncached: N(7), CacheRead: N(60)}, s, "Split: input is the sum of the stated parts")
}

func TestStaleSpanPanicsToFatal(t *testing.T) {
	var held Str
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				if !held.IsSet() {
					held = Text(l.JSON().Get("t")) // not kept
					out.Warn("first")
					return nil
				}
				out.Warn("before")
				out.Final(held, false)
				return nil
			},
		}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	st, msg := d.Feed(batch(`{"t":"x"}`))
	require.Equal(t, wire.StatusOK, st, msg)
	in := batch(`{"t":"y"}`)
	st, msg = d.Feed(in)
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, "plugin panic")
	assert.Contains(t, msg, "Keep()")
	recs := decode(t, d.Output(), in)
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpWarning}, ops(recs), "records before the panic stand, the half record is dropped")
	// The normalizer is gone: the host must begin again.
	assert.Equal(t, wire.StatusFatal, first(d.Feed(in)))
}

func TestPanicMidRecordKeepsOutputDecodable(t *testing.T) {
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				out.Warn("one")
				var bad Str = Text(l.JSON().Get("t"))
				bad.doc = &abi.Doc{} // a span of a document that is gone
				out.ToolCall(ToolCall{CallID: S("c"), Name: bad})
				return nil
			},
			end: func(out *Out) error {
				out.Warn("end")
				return nil
			},
		}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch(`{"t":"y"}`)
	st, _ := d.Feed(in)
	require.Equal(t, wire.StatusFatal, st)
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpWarning}, ops(decode(t, d.Output(), in)))

	// After a fresh Begin, End reports no stale line number.
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	require.Equal(t, wire.StatusOK, first(d.End()))
	assert.Equal(t, []wire.Op{wire.OpWarning}, ops(decode(t, d.Output(), nil)))
}

func TestRejectedKeepsEarlierRecords(t *testing.T) {
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				out.Warn(string(l.Raw))
				if strings.Contains(string(l.Raw), "bad") {
					return errors.New("cannot read " + string(l.Raw))
				}
				return nil
			},
			end: func(out *Out) error {
				out.Warn("end")
				return errors.New("end failed")
			},
		}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch(`a`, `bad1`, `c`, `bad2`)
	st, msg := d.Feed(in)
	assert.Equal(t, wire.StatusRejected, st)
	assert.Contains(t, msg, "line 2: cannot read bad1")
	assert.Contains(t, msg, "line 4: cannot read bad2")
	recs := decode(t, d.Output(), in)
	var texts []string
	for _, r := range recs {
		if r.op == wire.OpWarning {
			texts = append(texts, r.fields[wire.TText].s)
		}
	}
	assert.Equal(t, []string{"a", "bad1", "c", "bad2"}, texts)
	// The stream goes on.
	st, _ = d.Feed(batch(`d`))
	assert.Equal(t, wire.StatusOK, st)
	st, msg = d.End()
	assert.Equal(t, wire.StatusRejected, st)
	assert.Equal(t, "end failed", msg)
	assert.Equal(t, []wire.Op{wire.OpWarning}, ops(decode(t, d.Output(), nil)))
}

func TestMalformedBatchIsFatal(t *testing.T) {
	d := newDriver(plugin(func(abi.BeginOptions) *funcNorm { return &funcNorm{} }))
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	st, msg := d.Feed([]byte{9, 0, 0, 0})
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, wire.ErrBadBatch.Error())
}

func TestOutEveryRecord(t *testing.T) {
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{line: func(l *Line, out *Out) error {
			v := l.JSON()
			key := S("m")
			out.Meta(Meta{SessionID: Text(v.Get("sid")), Model: S("mod"), Override: true})
			out.Open(key, Message{ID: S("id"), Time: S("2024-01-01T00:00:00Z")})
			out.Open(key, Message{User: true, Scope: S("sc")})
			out.Block(key, -1, Block{Type: BlockToolUse, ToolName: S("Bash"), ToolID: S("t1"), ToolInput: JSON(v.Get("in")), Redacted: true, IsError: true, Origin: OriginPrompt})
			out.Append(key, 0, BlockText, S("delta"))
			out.Append(key, 0, BlockText, Str{}) // unset: nothing
			out.Close(key, MessageEnd{StopReason: S("end"), Usage: Usage{Input: N(1), CacheRead: N(2), CacheWrite: N(3), Output: N(4), Reasoning: N(5)}})
			out.ToolCall(ToolCall{CallID: S("t1"), Name: S("Bash"), Input: JSON(v.Get("in")), Kind: "execute", Command: S("ls")})
			out.ToolResult(ToolResult{CallID: S("t1"), Output: S("out"), IsError: true, ExitCode: N(2), Status: S("failed")})
			out.Usage(Usage{}, ModeAdd) // zero: nothing
			out.Usage(Usage{Input: N(7)}, ModeSet)
			out.Cost(0.5, ModeAdd)
			out.Status(StatusError, S("boom"), LevelError)
			out.Final(S("fin"), false)
			out.Unmapped(Str{})
			out.ScopeOpen(S("sc"), S("t1"), S("agent"), S("desc"))
			out.ScopeClose(S("sc"), StatusOK, Str{})
			out.Warn("w")
			return nil
		}}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch(`{"sid":"s1","in":{"cmd":"ls"}}`)
	st, msg := d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	recs := decode(t, d.Output(), in)
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpMeta, wire.OpMsgOpen, wire.OpMsgOpen, wire.OpBlock, wire.OpAppend, wire.OpMsgClose,
		wire.OpToolCall, wire.OpToolResult, wire.OpUsage, wire.OpCost, wire.OpStatus, wire.OpFinal, wire.OpUnmapped,
		wire.OpScopeOpen, wire.OpScopeClose, wire.OpWarning}, ops(recs))
	assert.True(t, recs[1].fields[wire.TOverride].b)
	assert.Equal(t, "assistant", recs[2].fields[wire.TRole].s)
	assert.Equal(t, "user", recs[3].fields[wire.TRole].s)
	assert.Equal(t, int64(-1), recs[4].fields[wire.TSlot].i)
	assert.Equal(t, val{kind: wire.VSpan, s: `{"cmd":"ls"}`, mode: wire.SpanJSON}, recs[4].fields[wire.TToolInput])
	assert.Equal(t, "prompt", recs[4].fields[wire.TOrigin].s)
	assert.Equal(t, int64(wire.TText), recs[5].fields[wire.TField].i)
	assert.Equal(t, int64(5), recs[6].fields[wire.TReasoningTokens].i)
	assert.Equal(t, "execute", recs[7].fields[wire.TKind].s)
	assert.Equal(t, int64(2), recs[8].fields[wire.TExitCode].i)
	assert.Equal(t, "set", recs[9].fields[wire.TMode].s)
	assert.Equal(t, 0.5, recs[10].fields[wire.TCost].f)
	assert.Equal(t, int64(LevelError), recs[11].fields[wire.TLevel].i)
	assert.Equal(t, "(unknown)", recs[13].fields[wire.TNative].s)
	_, hasErr := recs[15].fields[wire.TError]
	assert.False(t, hasErr)
}

// TestToolUse: Out.ToolUse writes the records a tool_use block and its
// tool.call written one by one give, the block's name, id and input the
// call's.
func TestToolUse(t *testing.T) {
	run := func(emit func(out *Out, key Str, c ToolCall)) []rec {
		p := plugin(func(abi.BeginOptions) *funcNorm {
			return &funcNorm{line: func(l *Line, out *Out) error {
				key := S("m")
				out.Open(key, Message{})
				emit(out, key, ToolCall{CallID: S("t1"), Name: S("Bash"), Input: JSON(l.JSON().Get("in")), Kind: "execute", Command: StringOf(l.JSON().Path("in", "cmd")), Time: Opt("")})
				out.Close(key, MessageEnd{})
				return nil
			}}
		})
		d := newDriver(p)
		require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
		in := batch(`{"in":{"cmd":"ls"}}`)
		st, msg := d.Feed(in)
		require.Equal(t, wire.StatusOK, st, msg)
		return decode(t, d.Output(), in)
	}
	want := run(func(out *Out, key Str, c ToolCall) {
		out.Block(key, 2, Block{Type: BlockToolUse, ToolName: c.Name, ToolID: c.CallID, ToolInput: c.Input})
		out.ToolCall(c)
	})
	got := run(func(out *Out, key Str, c ToolCall) { out.ToolUse(key, 2, c) })
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpMsgOpen, wire.OpBlock, wire.OpToolCall, wire.OpMsgClose}, ops(got))
	assert.Equal(t, want, got)
	assert.Equal(t, val{kind: wire.VSpan, s: `{"cmd":"ls"}`, mode: wire.SpanJSON}, got[2].fields[wire.TToolInput])
	assert.Equal(t, "ls", got[3].fields[wire.TCommand].s)
}

// feedLines runs a normalizer made by line over one batch of lines and
// decodes its records.
func feedLines(t *testing.T, line func(l *Line, out *Out) error, lines ...string) []rec {
	t.Helper()
	d := newDriver(plugin(func(abi.BeginOptions) *funcNorm { return &funcNorm{line: line} }))
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch(lines...)
	st, msg := d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	return decode(t, d.Output(), in)
}

// TestFinalText: the non-empty string texts of a line, joined with
// newlines (escapes unescaped), are the final answer, overriding; one
// text is its span of the line; none reports nothing.
func TestFinalText(t *testing.T) {
	for _, c := range []struct {
		line string
		want *val // nil: no final record
	}{
		{`{"t":[]}`, nil},
		{`{"t":["",7,null,{"a":"b"}]}`, nil},
		{`{"t":["one\tx"]}`, &val{kind: wire.VSpan, s: `one\tx`, mode: wire.SpanString}},
		{`{"t":["a","",1,"b\n","c"]}`, &val{kind: wire.VStr, s: "a\nb\n\nc"}},
	} {
		recs := feedLines(t, func(l *Line, out *Out) error {
			var f FinalText
			for it := l.JSON().Get("t").Iter(); it.Next(); {
				f.Add(it.Value())
			}
			f.Report(out)
			return nil
		}, c.line)
		var finals []rec
		for _, r := range recs {
			if r.op == wire.OpFinal {
				finals = append(finals, r)
			}
		}
		if c.want == nil {
			assert.Empty(t, finals, c.line)
			continue
		}
		require.Len(t, finals, 1, c.line)
		got := finals[0].fields[wire.TText]
		assert.Equal(t, *c.want, val{kind: got.kind, s: got.s, mode: got.mode}, c.line)
		assert.True(t, finals[0].fields[wire.TOverride].b, c.line)
	}
}

// TestLatestModel: a model is reported when it changes, the first
// plainly and each change overriding; "", a repeat and a non-string are
// not reported.
func TestLatestModel(t *testing.T) {
	var last string
	recs := feedLines(t, func(l *Line, out *Out) error {
		out.LatestModel(l.JSON().Get("model"), &last)
		return nil
	}, `{"model":""}`, `{"model":"a"}`, `{"model":"a"}`, `{"model":7}`, `{}`, `{"model":"b"}`, `{"model":"b"}`)
	var got []string
	for _, r := range recs {
		if r.op == wire.OpMeta {
			got = append(got, fmt.Sprintf("%s override=%v", r.fields[wire.TModel].s, r.fields[wire.TOverride].b))
		}
	}
	assert.Equal(t, []string{"a override=false", "b override=true"}, got)
	assert.Equal(t, "b", last)
}

func TestRegisterTwicePanics(t *testing.T) {
	saved := registered
	t.Cleanup(func() { registered = saved })
	registered = nil
	p := plugin(func(abi.BeginOptions) *funcNorm { return &funcNorm{} })
	Register(p)
	require.NotNil(t, registered)
	assert.PanicsWithValue(t, "twasm sdk: Register called twice", func() { Register(p) })
}

// TestEchoBuildsForWasm compiles the echo plugin for wasip1 (a compile
// check of the wasm exports; package host runs it).
func TestEchoBuildsForWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out := filepath.Join(t.TempDir(), "echo.wasm")
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", out, "./testdata/echo")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	wasm, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, []byte("\x00asm"), wasm[:4])
	for _, name := range []string{wire.ExportMarker, wire.ExportVersion, wire.ExportBuffer, wire.ExportManifest, wire.ExportBegin, wire.ExportFeed, wire.ExportEnd, wire.HostModule} {
		assert.Contains(t, string(wasm), name)
	}
}

type stringerValue struct{}

func (stringerValue) String() string { return "stringer value" }

func TestPanicText(t *testing.T) {
	var nilMap map[string]int
	runtimeErr := func() (err error) {
		defer func() { err = recover().(error) }()
		nilMap["x"] = 1
		return nil
	}()
	for _, tc := range []struct {
		value any
		want  string
	}{
		{"boom", "boom"},
		{errors.New("an error"), "an error"},
		{runtimeErr, "assignment to entry in nil map"},
		{stringerValue{}, "stringer value"},
		{42, "42"},
		{3.5, "(a value that is neither an error nor a string)"},
	} {
		assert.Equal(t, tc.want, panicText(tc.value))
	}
}

func TestLineErrorWrapsTheNormalizersError(t *testing.T) {
	cause := errors.New("bad shape")
	err := error(&lineError{no: 7, err: cause})
	assert.Equal(t, "line 7: bad shape", err.Error())
	assert.ErrorIs(t, err, cause)
}

// TestValueKeptAcrossCallsIsNeverAnotherLine: a plugin that keeps an
// abi.Value (not a Str) from an earlier call must never read, through it,
// the line of a later call: the documents of a call are not reused by the
// next one, so the value is missing or faults the call (which the host
// counts and says), never silently wrong. Reusing them made the claude
// plugin lose every message when lines arrived one call each, as from a
// live agent.
func TestValueKeptAcrossCallsIsNeverAnotherLine(t *testing.T) {
	var held abi.Value
	var seen []string
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				if held.Doc() == nil {
					held = l.JSON().Get("t")
					return nil
				}
				seen = append(seen, held.String())
				return nil
			},
		}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	require.Equal(t, wire.StatusOK, first(d.Feed(batch(`{"t":"first"}`))))
	st, msg := d.Feed(batch(`{"t":"second"}`))
	if st == wire.StatusOK {
		require.Len(t, seen, 1)
		assert.NotContains(t, seen[0], "second", "a value of call 1 read call 2's line")
		return
	}
	assert.Equal(t, wire.StatusFatal, st)
	assert.Contains(t, msg, "plugin panic")
	assert.Empty(t, seen)
}

// TestReassemble: a plugin that asks for it gets a pretty-printed document
// as one line, its lines declared ignored; the lines of one that never
// parses are counted unmapped, and a document open at the end of the
// stream reaches Line before End.
func TestReassemble(t *testing.T) {
	var seen []string
	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{
			line: func(l *Line, out *Out) error {
				seen = append(seen, strconv.Itoa(l.No)+":"+l.JSON().Get("a").String())
				return nil
			},
			end: func(out *Out) error { seen = append(seen, "end"); return nil },
		}
	})
	p.Reassemble = true
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch("{", `  "a": "x"`, "}", "[", `{"a":"y"}`, "{", `  "a": 1`)
	st, msg := d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	recs := decode(t, d.Output(), in)
	// "{" and its lines make one document (lines 1-3); "[" (4) is dropped
	// by the unindented JSON line 5, which is a line of its own; "{" (6)
	// stays open.
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpIgnored, wire.OpLine, wire.OpUnmapped}, ops(recs))
	assert.Equal(t, int64(3), recs[1].fields[wire.TCount].i)
	assert.Equal(t, "json_document", recs[1].fields[wire.TNative].s)
	assert.Equal(t, int64(1), recs[3].fields[wire.TCount].i)
	assert.Equal(t, "non_json", recs[3].fields[wire.TNative].s)
	assert.Equal(t, []string{"3:x", "5:y"}, seen)

	// At the end, the open document's text is not one: its two lines are
	// unmapped, then End runs.
	st, msg = d.End()
	require.Equal(t, wire.StatusOK, st, msg)
	recs = decode(t, d.Output(), nil)
	assert.Equal(t, []wire.Op{wire.OpUnmapped}, ops(recs))
	assert.Equal(t, int64(2), recs[0].fields[wire.TCount].i)
	assert.Equal(t, []string{"3:x", "5:y", "end"}, seen)

	// A new stream starts with nothing open; an indented JSON line is a
	// line of its own.
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	seen = nil
	in = batch("{", `  {"a": "z"}`)
	st, msg = d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	assert.Empty(t, seen, "inside an open document, an indented JSON line continues it")
	in = batch(`{"a":"w"}`, `  {"a": "z"}`)
	st, msg = d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	assert.Equal(t, []string{"1:w", "2:z"}, seen)
}

// TestUsageTier: TierOf reads a tier a response states (a provider's
// word as a constant, any other copied) and nothing from a missing, null
// or empty one; Plus keeps the tier both sides state, takes it from a
// side that is the only one with figures, and sums different tiers (or
// one stated, one not) as "mixed", as the host does; a usage of a tier
// alone is zero and is not reported; Out writes the tier beside the
// figures.
func TestUsageTier(t *testing.T) {
	doc, ok := Parse([]byte(`{"a":"flex","b":"ultra\u002dfast","c":null,"d":"","e":1}`))
	require.True(t, ok)
	r := doc.Root()
	for k, want := range map[string]string{"a": "flex", "b": "ultra-fast", "c": "", "d": "", "e": "", "missing": ""} {
		assert.Equal(t, want, TierOf(r.Get(k)), k)
	}
	one := func(tier string) Usage { return Usage{Output: N(1), Tier: tier} }
	assert.Equal(t, "flex", one("flex").Plus(one("flex")).Tier)
	assert.Equal(t, TierMixed, one("default").Plus(one("priority")).Tier)
	assert.Equal(t, TierMixed, one("standard").Plus(one("")).Tier)
	assert.Equal(t, "batch", Usage{}.Plus(one("batch")).Tier, "the only side with figures")
	assert.Equal(t, "batch", one("batch").Plus(Usage{Tier: "priority"}).Tier, "a side of no figure adds nothing")
	assert.True(t, Usage{Tier: "flex"}.isZero())

	p := plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{line: func(l *Line, out *Out) error {
			key := S("m")
			out.Open(key, Message{})
			out.Close(key, MessageEnd{Usage: Usage{Output: N(4), Tier: TierOf(l.JSON().Get("service_tier"))}})
			out.Usage(Usage{Tier: "flex"}, ModeAdd) // no figure: nothing
			out.Usage(Usage{Output: N(4), Tier: "flex"}, ModeAdd)
			return nil
		}}
	})
	d := newDriver(p)
	require.Equal(t, wire.StatusOK, first(d.Begin(nil)))
	in := batch(`{"service_tier":"flex"}`)
	st, msg := d.Feed(in)
	require.Equal(t, wire.StatusOK, st, msg)
	recs := decode(t, d.Output(), in)
	assert.Equal(t, []wire.Op{wire.OpLine, wire.OpMsgOpen, wire.OpMsgClose, wire.OpUsage}, ops(recs))
	assert.Equal(t, "flex", recs[2].fields[wire.TServiceTier].s)
	assert.Equal(t, "flex", recs[3].fields[wire.TServiceTier].s)
}
