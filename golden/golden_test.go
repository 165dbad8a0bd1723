package golden

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// textPlugin: a JSON line {"text":..,"scope":..} becomes a message; other
// lines are unmapped.
type textPlugin struct{}

func (textPlugin) Line(l *sdk.Line, out *sdk.Out) error {
	if l.JSON().Get("boom").Exists() {
		panic("boom")
	}
	t := l.JSON().Get("text")
	if !t.Exists() {
		out.Unmapped(sdk.S("other"))
		return nil
	}
	key := sdk.S("m")
	sc := sdk.Text(l.JSON().Get("scope"))
	if sc.IsSet() {
		out.ScopeOpen(sc, sc, sdk.S("agent"), sdk.S("desc"))
	}
	out.Open(key, sdk.Message{Scope: sc})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(t)})
	out.Close(key, sdk.MessageEnd{})
	out.ToolCall(sdk.ToolCall{CallID: sdk.S("c1"), Name: sdk.S("T")})
	return nil
}

func (textPlugin) End(out *sdk.Out) error {
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	return nil
}

var textP = capture.NativePlugin(sdk.Plugin{Manifest: abi.Manifest{Name: "text"}, New: func(abi.BeginOptions) sdk.Normalizer { return textPlugin{} }})

// noInstance is a plugin whose instances cannot be made.
type noInstance struct{}

func (noInstance) Identity() transcript.PluginRef { return transcript.PluginRef{Name: "none"} }
func (noInstance) NewInstance(context.Context) (normalize.Instance, error) {
	return nil, errors.New("no wasm")
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
}

func TestRender(t *testing.T) {
	got, err := Normalize(context.Background(), textP, []byte(`{"text":"hi"}`+"\nbanner\n"+`{"text":"sub","scope":"s1"}`), Options{Provider: "prov"})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.Len(t, lines, 6, "the second call c1 is a duplicate")
	for _, l := range lines {
		assert.True(t, json.Valid([]byte(l)), l)
	}
	assert.Contains(t, lines[0], `"run_id":"golden"`)
	assert.Contains(t, lines[0], `"seq":1`)
	assert.Contains(t, lines[0], `"timestamp":"1970-01-01T00:00:00.000Z"`)
	assert.Contains(t, lines[1], `"seq":2`)
	assert.Equal(t, `{"scope_open":{"description":"desc","name":"agent","parent_tool_id":"s1","scope":"s1"}}`, lines[2])
	assert.Contains(t, lines[3], `"run_id":"golden:s1"`)
	assert.Contains(t, lines[3], `"seq":1`, "seq per scope")
	assert.Equal(t, `{"scope_close":{"error":"","scope":"s1","status":"ok"}}`, lines[4])
	var res struct{ Result transcript.AgentResult }
	require.NoError(t, json.Unmarshal([]byte(lines[5]), &res))
	assert.Equal(t, "prov", res.Result.Provider)
	assert.Equal(t, map[string]int{"other": 1}, res.Result.Unmapped)

	// An event that cannot be written is an error.
	_, err = render([]normalize.Collected{{Event: &transcript.Event{Type: "bogus"}}}, nil)
	assert.Error(t, err)
	out, err := render(nil, &transcript.AgentResult{Dangling: []string{}})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "dangling")
}

func TestListCases(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.jsonl", "a.txt", "a.golden.jsonl", "README.md", "readme", ".hidden", "c.d.sse"} {
		write(t, dir, n, "")
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	cases, err := Cases(dir)
	require.NoError(t, err)
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"a", "b", "c.d"}, names)
	assert.Equal(t, filepath.Join(dir, "a.txt"), cases[0].Input)
	assert.Equal(t, filepath.Join(dir, "a.golden.jsonl"), cases[0].Golden)

	write(t, dir, "a.jsonl", "")
	_, err = Cases(dir)
	assert.ErrorContains(t, err, `two inputs named "a"`)

	_, err = Cases(filepath.Join(dir, "missing"))
	assert.Error(t, err)
	_, err = Check(context.Background(), filepath.Join(dir, "missing"), textP, Options{Provider: "p"})
	assert.Error(t, err)
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "one.jsonl", `{"text":"hi"}`+"\n")
	outs, err := Check(ctx, dir, textP, Options{Provider: "p"})
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.ErrorIs(t, outs[0].Err, errMissing)
	assert.False(t, outs[0].OK())

	outs, err = Check(ctx, dir, textP, Options{Provider: "p", Update: true})
	require.NoError(t, err)
	assert.True(t, outs[0].Updated)
	assert.True(t, outs[0].OK())
	want, err := os.ReadFile(filepath.Join(dir, "one"+suffix))
	require.NoError(t, err)
	assert.Contains(t, string(want), `"text":"hi"`)

	outs, err = Check(ctx, dir, textP, Options{Provider: "p"})
	require.NoError(t, err)
	assert.True(t, outs[0].OK())
	assert.Empty(t, outs[0].Diff)
	assert.False(t, outs[0].Updated)

	// A changed input shows a diff, and update rewrites it.
	write(t, dir, "one.jsonl", `{"text":"bye"}`+"\n")
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p"})
	assert.False(t, outs[0].OK())
	assert.Contains(t, outs[0].Diff, "~1/+1: event message.assistant seq 1\n")
	assert.Contains(t, outs[0].Diff, `event.payload.blocks[0].text: "hi" → "bye"`)
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p", Update: true})
	assert.True(t, outs[0].Updated)

	// Only a missing trailing newline differs: still a failure.
	b, _ := os.ReadFile(filepath.Join(dir, "one"+suffix))
	write(t, dir, "one"+suffix, strings.TrimSuffix(string(b), "\n"))
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p"})
	assert.False(t, outs[0].OK(), "a trailing newline difference is a difference")
	assert.NotEmpty(t, outs[0].Diff)

	// An instance that cannot be made.
	outs, _ = Check(ctx, dir, noInstance{}, Options{Provider: "p"})
	assert.ErrorContains(t, outs[0].Err, "no wasm")
}

func TestDiff(t *testing.T) {
	assert.Equal(t, "", showDiff([]byte("a\nb\n"), []byte("a\nb\n")))
	assert.Equal(t, "+2: x\n", showDiff([]byte("a\nb\n"), []byte("a\nx\nb\n")))
	assert.Equal(t, "-2: b\n", showDiff([]byte("a\nb\nc\n"), []byte("a\nc\n")))
	assert.Equal(t, "-2: b\n+2: y\n", showDiff([]byte("a\nb\nc\n"), []byte("a\ny\nc\n")))
	assert.Equal(t, "+1: a\n", showDiff(nil, []byte("a\n")))
	assert.Equal(t, "-1: a\n", showDiff([]byte("a\n"), nil))
	assert.NotEmpty(t, showDiff([]byte("a\n"), []byte("a")), "trailing newline")
	assert.NotEmpty(t, showDiff([]byte("a"), []byte("a\n")), "trailing newline")

	// Large inputs: first difference only.
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		a.WriteString("same\n")
		b.WriteString("same\n")
	}
	big := a.String()
	d := showDiff([]byte(big+"x\n"), []byte(big+"y\n"))
	assert.Equal(t, "first difference at line 3001:\n-3001: x\n+3001: y\n", d)
	d = showDiff([]byte(big), []byte(big+"extra\n"))
	assert.Contains(t, d, "first difference at line 3001")
	assert.Contains(t, d, "+3001: extra")
	assert.NotEmpty(t, showDiff([]byte(big), []byte(strings.TrimSuffix(big, "\n"))))
}

// TestDiffFields: a changed field of a long JSON line shows as that field
// (path, old and new value), never as the whole line.
func TestDiffFields(t *testing.T) {
	long := strings.Repeat("x", 1000)
	want := `{"event":{"seq":3,"type":"tool.result","payload":{"output":"` + long + `","exit_code":0,"status":"ok"}}}` + "\n"
	got := `{"event":{"seq":3,"type":"tool.result","payload":{"output":"` + long + `","exit_code":1,"status":"error","error":"failed"}}}` + "\n"
	d := showDiff([]byte(want), []byte(got))
	assert.Equal(t, "~1/+1: event tool.result seq 3\n"+
		"    event.payload.error: (absent) → \"failed\"\n"+
		"    event.payload.exit_code: 0 → 1\n"+
		"    event.payload.status: \"ok\" → \"error\"\n", d)
	assert.NotContains(t, d, long)

	// Lines that are not JSON, or only on one side, are cut.
	d = showDiff([]byte(long+"\n"), []byte("short\n"+long+"y\n"))
	assert.Less(t, len(d), 500)
	assert.Contains(t, d, "(1000 bytes)")
	assert.Contains(t, d, "(1001 bytes)")
	d = showDiff([]byte(`{"a":[1,2]}`+"\n"), []byte(`{"a":[1]}`+"\n"))
	assert.Equal(t, "~1/+1: a\n    a[1]: 2 → (absent)\n", d)
}

// TestNoCases: a directory with no case, its parent included, fails.
func TestNoCases(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(parent, "claude"), 0o755))
	write(t, filepath.Join(parent, "claude"), "a.jsonl", `{"text":"hi"}`+"\n")
	for dir, want := range map[string]string{
		t.TempDir(): "want <case>.<ext> inputs",
		parent:      "subdirectories (claude)",
	} {
		_, err := Check(ctx, dir, textP, Options{Provider: "p"})
		assert.ErrorIs(t, err, ErrNoCases)
		assert.ErrorContains(t, err, want)
	}
	orphan := t.TempDir()
	write(t, orphan, "a.jsonl", "")
	write(t, orphan, "gone"+suffix, "")
	_, err := Cases(orphan)
	assert.ErrorContains(t, err, "gone"+suffix+" in ")
}

// TestFault: an expectation may pin a plugin fault only when the case's
// .fault file says why; update refuses to write one otherwise.
func TestFault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "f.jsonl", `{"text":"hi"}`+"\n"+`{"boom":1}`+"\n")
	outs, err := Check(ctx, dir, textP, Options{Provider: "p", Update: true})
	require.NoError(t, err)
	assert.ErrorIs(t, outs[0].Err, errFault)
	assert.ErrorContains(t, outs[0].Err, "f.fault")
	_, err = os.Stat(filepath.Join(dir, "f"+suffix))
	assert.ErrorIs(t, err, os.ErrNotExist, "update wrote a golden pinning a fault")

	write(t, dir, "f"+faultSuffix, "  \n")
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p", Update: true})
	assert.ErrorContains(t, outs[0].Err, "is empty")

	write(t, dir, "f"+faultSuffix, "tests how a fault is reported\n")
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p", Update: true})
	require.NoError(t, outs[0].Err)
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p"})
	assert.True(t, outs[0].OK())
	b, _ := os.ReadFile(filepath.Join(dir, "f"+suffix))
	// The batch is resent line by line after the fault: only the
	// faulting line is lost, not the innocent one before it.
	assert.Contains(t, faultOf(b), "1 line(s) lost to a plugin fault")

	// The fault is gone: the .fault file must go too, and a golden that
	// still pins the fault is reported.
	write(t, dir, "f.jsonl", `{"text":"hi"}`+"\n")
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p"})
	assert.ErrorContains(t, outs[0].Err, "allows a fault but the case has none")
	require.NoError(t, os.Remove(filepath.Join(dir, "f"+faultSuffix)))
	outs, _ = Check(ctx, dir, textP, Options{Provider: "p"})
	assert.ErrorIs(t, outs[0].Err, errFault)
	assert.NotEmpty(t, outs[0].Diff)
}
