package endings

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/natives"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/transcript"
)

// kind is what one event of a situation is.
type kind int

const (
	prompt   kind = iota // the user's prompt
	answer               // the model's text answer, its turn finished
	call                 // a tool call (the model's request)
	resultOK             // the call's result, a success
	failed               // the call's result, a failure the tool reports
	provErr              // a provider error: a rate limit, overloaded or auth error
)

// ev is one event of a situation: its kind and its text (the prompt's
// or answer's words, the call's id).
type ev struct {
	k    kind
	text string
}

// The words every renderer puts where a situation says so; the checks
// look for them.
const (
	callID  = "call_e1"
	errText = "rate limit exceeded"
	failOut = "no such file: missing.txt"
)

// situation is one row of the spec's table: the events of a session log
// and what the step must say about it.
type situation struct {
	name string
	evs  []ev
	want func(t *testing.T, o *outcome)
}

var situations = []situation{
	{"unanswered_prompt", []ev{{prompt, "Fix the test"}, {answer, "Fixed."}, {prompt, "Now the docs"}}, func(t *testing.T, o *outcome) {
		o.status(t, transcript.StatusIncomplete)
		o.noDangling(t)
	}},
	{"dangling_call", []ev{{prompt, "Fix the test"}, {call, callID}}, func(t *testing.T, o *outcome) {
		o.status(t, transcript.StatusIncomplete)
		if d := o.res.Dangling; len(d) != 1 || !o.isCall(d[0]) {
			t.Errorf("dangling %q, want the one call %s", d, callID)
		}
	}},
	{"error_after_answer", []ev{{prompt, "Fix the test"}, {answer, "Fixed."}, {prompt, "Now the docs"}, {provErr, errText}}, func(t *testing.T, o *outcome) {
		o.status(t, transcript.StatusError)
		o.errorKept(t)
	}},
	{"error_then_answer", []ev{{prompt, "Fix the test"}, {provErr, errText}, {answer, "Fixed."}}, func(t *testing.T, o *outcome) {
		o.status(t, transcript.StatusOK)
		o.errorKept(t)
	}},
	{"tool_failed", []ev{{prompt, "Fix the test"}, {call, callID}, {failed, failOut}, {answer, "The file is missing."}}, func(t *testing.T, o *outcome) {
		o.status(t, transcript.StatusOK)
		o.resultStatus(t, transcript.StatusError)
	}},
	{"finished", []ev{{prompt, "Fix the test"}, {call, callID}, {resultOK, "ok"}, {answer, "Fixed."}}, func(t *testing.T, o *outcome) {
		o.status(t, transcript.StatusOK)
		o.noDangling(t)
		o.resultStatus(t, transcript.StatusOK)
		if len(o.res.Errors) != 0 {
			t.Errorf("errors %+v, want none", o.res.Errors)
		}
	}},
}

// format is how a plugin writes a session: render turns a situation's
// events into the plugin's input; cannot names, by situation, why the
// format cannot express it.
type format struct {
	// Native is the plugin, named once (natives.Named): its directory
	// under plugins/ names its bundled module, and the provider the
	// input is read as.
	natives.Native
	format string // which of the plugin's formats, when it has a row for several
	render func(evs []ev) string
	cannot map[string]string
	// anyID: the format names no call id (the plugin makes one): any
	// call is the situation's call.
	anyID bool
	// errWords are the words the provider error's listed message must
	// hold where the format states no error text (errText when empty).
	errWords string
}

// outcome is what one run gave.
type outcome struct {
	res      *transcript.AgentResult
	items    []normalize.Collected
	anyID    bool
	errWords string
}

// isCall says whether id is the situation's call.
func (o *outcome) isCall(id string) bool { return o.anyID || strings.HasSuffix(id, callID) }

func (o *outcome) status(t *testing.T, want string) {
	t.Helper()
	if o.res.Status != want {
		t.Errorf("status %s (%q), want %s", o.res.Status, o.res.Error, want)
	}
}

func (o *outcome) noDangling(t *testing.T) {
	t.Helper()
	if len(o.res.Dangling) != 0 {
		t.Errorf("dangling %q, want none", o.res.Dangling)
	}
}

// errorKept: the provider's error is in the step's errors, with its text.
func (o *outcome) errorKept(t *testing.T) {
	t.Helper()
	words := errText
	if o.errWords != "" {
		words = o.errWords
	}
	for _, e := range o.res.Errors {
		if strings.Contains(strings.ToLower(e.Message), words) {
			return
		}
	}
	t.Errorf("errors %+v: want one saying %q", o.res.Errors, words)
}

// resultStatus: the one call has one tool.result, of status want.
func (o *outcome) resultStatus(t *testing.T, want string) {
	t.Helper()
	var got []string
	for _, it := range o.items {
		if it.Event == nil || it.Event.Type != transcript.ToolResult {
			continue
		}
		if tp := it.Event.Tool(); tp != nil && o.isCall(tp.CallID) {
			got = append(got, tp.Status)
		}
	}
	if len(got) != 1 || got[0] != want {
		t.Errorf("tool.result statuses of %s: %q, want [%s]", callID, got, want)
	}
}

// TestEndings runs every situation through every plugin that can express
// it, natively and through both toolchains' wasm modules.
func TestEndings(t *testing.T) {
	for _, f := range formats {
		name := f.Name
		if f.format != "" {
			name += "/" + f.format
		}
		t.Run(name, func(t *testing.T) {
			runners := runnersFor(t, f)
			for _, s := range situations {
				t.Run(s.name, func(t *testing.T) {
					if why, ok := f.cannot[s.name]; ok {
						t.Skipf("%s cannot express it: %s", f.Name, why)
					}
					raw := f.render(s.evs)
					for _, r := range runners {
						t.Run(r.name, func(t *testing.T) {
							o := run(t, r.p, f.Name, raw)
							o.anyID, o.errWords = f.anyID, f.errWords
							if len(o.res.Unmapped) != 0 || o.res.FailedLines != 0 {
								t.Errorf("unmapped %v, failed lines %d: want every line read", o.res.Unmapped, o.res.FailedLines)
							}
							s.want(t, o)
							if t.Failed() {
								t.Logf("input:\n%s", raw)
							}
						})
					}
				})
			}
		})
	}
}

// runner is one way of running a plugin.
type runner struct {
	name string
	p    capture.Plugin
}

// run normalizes raw through a fresh instance of p.
func run(t *testing.T, p capture.Plugin, provider, raw string) *outcome {
	t.Helper()
	ctx := context.Background()
	inst, err := p.NewInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer normalize.Close(inst)
	var c normalize.Collector
	res, err := normalize.Run(ctx, inst, bytes.NewReader([]byte(raw)), &c, normalize.Options{Provider: provider})
	if err != nil {
		t.Fatal(err)
	}
	return &outcome{res: res, items: c.Items}
}

var (
	rtOnce sync.Once
	rt     *host.Runtime
	rtErr  error
)

// runnersFor is the plugin natively, its bundled wasm module
// (internal/bundled/wasm, which make builds before the tests) and the
// other toolchain's (bin/wasm-<toolchain>, which `make golden` builds;
// skipped when absent), both loaded through wazero as bundled plugins.
func runnersFor(t *testing.T, f format) []runner {
	t.Helper()
	rs := []runner{{"native", capture.NativePlugin(f.Plugin)}}
	rtOnce.Do(func() {
		rt, rtErr = host.New(context.Background(), host.Options{Bundled: []host.Bundled{}, PluginPath: []string{}})
	})
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	root := repoRoot(t)
	bundled := filepath.Join(root, "internal", "bundled", "wasm", f.Name+".wasm")
	wasm, err := os.ReadFile(bundled)
	if err != nil {
		t.Fatalf("the bundled module (run make): %v", err)
	}
	rs = append(rs, runner{"wasm", load(t, wasm, bundled)})
	others, _ := filepath.Glob(filepath.Join(root, "bin", "wasm-*", f.Name+".wasm"))
	if len(others) == 0 {
		t.Logf("no %s.wasm of the other toolchain in bin/wasm-*/ (make golden builds it): not run", f.Name)
	}
	for _, path := range others {
		wasm, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, runner{filepath.Base(filepath.Dir(path)), load(t, wasm, path)})
	}
	return rs
}

// loaded are the modules loaded so far, by path: a plugin with rows for
// several of its formats is compiled once (wazero's compile is most of
// the test's time under -race).
var loaded = map[string]*host.Plugin{}

func load(t *testing.T, wasm []byte, path string) *host.Plugin {
	t.Helper()
	if p := loaded[path]; p != nil {
		return p
	}
	p, err := rt.Load(context.Background(), wasm, host.Source{Path: path, Bundled: true})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	loaded[path] = p
	return p
}

// repoRoot is the repository's root, the directory holding go.mod
// above the test's.
func repoRoot(t *testing.T) string {
	t.Helper()
	root := plugintest.RepoRoot(t)
	if root == "" {
		t.Fatal("no go.mod above the test's directory")
	}
	return root
}

// TestEveryPlugin: the table has a row for every bundled plugin
// (natives.Plugins, which lists plugins/*/ with a wasm entry point), so a
// new one joins it.
func TestEveryPlugin(t *testing.T) {
	rows := map[string]bool{}
	for _, f := range formats {
		rows[f.Name] = true
	}
	all := natives.Plugins()
	for _, n := range all {
		if !rows[n.Name] {
			t.Errorf("plugin %s has no row in the table (formats_test.go)", n.Name)
		}
	}
	if len(rows) != len(all) {
		t.Errorf("rows for %d plugins, %d plugins", len(rows), len(all))
	}
}
