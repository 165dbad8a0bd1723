package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// The captures harness: every real capture, capturedRun through the built
// binary's wasm plugins both as `record --input` and as `import`, then
// checked against the hand-written expectations beside it
// (testdata/captures/README.md), against twasm validate, against spec §6.8
// and against each other.

// capture is one raw capture to run.
type captureCase struct {
	provider string // directory name, passed to --provider unless the expectations say otherwise
	name     string // file name without its extension
	input    string // the raw capture
	expect   string // its .expect.json, or ""
}

// sideFile reports whether a file of a capture directory is not a raw
// capture itself but one of the files that describe one.
func sideFile(name string) bool {
	for _, suf := range []string{".source.txt", ".expect.json", ".stderr.txt", ".md"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return strings.HasPrefix(name, ".")
}

// captureName is a capture's file name without its extension (the last
// one: names hold versions, "stream_json_v2.1.59.jsonl").
func captureName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// findCaptures lists the captures: testdata/captures/<provider>/<name>.*
// that have a <name>.expect.json, and every file of the shared fixtures
// (../shared/fixtures/<provider>/), with the expectations written for it
// under testdata/captures/<provider>/<name>.expect.json when there are.
func findCaptures(t *testing.T) []captureCase {
	t.Helper()
	var cases []captureCase
	seen := map[string]bool{}
	own := filepath.Join(root, "testdata", "captures")
	expects, _ := filepath.Glob(filepath.Join(own, "*", "*.expect.json"))
	expectOf := map[string]string{}
	for _, e := range expects {
		provider := filepath.Base(filepath.Dir(e))
		expectOf[provider+"/"+strings.TrimSuffix(filepath.Base(e), ".expect.json")] = e
	}
	files, _ := filepath.Glob(filepath.Join(own, "*", "*"))
	for _, f := range files {
		// A markdown file is a note, unless expectations name it: an
		// Aider chat history is markdown.
		md := strings.HasSuffix(f, ".md") && expectOf[filepath.Base(filepath.Dir(f))+"/"+captureName(f)] != ""
		if sideFile(filepath.Base(f)) && !md {
			continue
		}
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			continue
		}
		provider, name := filepath.Base(filepath.Dir(f)), captureName(f)
		key := provider + "/" + name
		if expectOf[key] == "" {
			continue
		}
		seen[key] = true
		cases = append(cases, captureCase{provider: provider, name: name, input: f, expect: expectOf[key]})
	}
	shared := filepath.Join(root, "..", "shared", "fixtures")
	files, _ = filepath.Glob(filepath.Join(shared, "*", "*"))
	for _, f := range files {
		if sideFile(filepath.Base(f)) {
			continue
		}
		provider, name := filepath.Base(filepath.Dir(f)), captureName(f)
		key := provider + "/" + name
		if seen[key] {
			t.Errorf("%s: the capture is both in testdata/captures and in the shared fixtures", key)
			continue
		}
		seen[key] = true
		cases = append(cases, captureCase{provider: provider, name: name, input: f, expect: expectOf[key]})
	}
	for key, e := range expectOf {
		if !seen[key] {
			t.Errorf("%s: expectations without a capture (no %s.* beside it and none in ../shared/fixtures)", e, key)
		}
	}
	sort.Slice(cases, func(i, j int) bool {
		return cases[i].provider+"/"+cases[i].name < cases[j].provider+"/"+cases[j].name
	})
	return cases
}

// expectations is the schema of <name>.expect.json (see
// testdata/captures/README.md). A key present is checked exactly; a key
// absent is not checked.
type expectations struct {
	Provider           string           `json:"provider"`
	Status             *string          `json:"status"`
	SessionID          *string          `json:"session_id"`
	Model              *string          `json:"model"`
	Usage              map[string]int64 `json:"usage"`
	Tools              *[]expectTool    `json:"tools"`
	Dangling           *[]string        `json:"dangling"`
	TextsOnce          []string         `json:"texts_once"`
	UserPromptContains *string          `json:"user_prompt_contains"`
	ErrorsContains     []string         `json:"errors_contains"`
	MinErrors          *int             `json:"min_errors"`
	Children           *[]expectChild   `json:"children"`
	UnmappedMax        *int             `json:"unmapped_max"`
	Format             *string          `json:"format"`
	ErrorContains      *string          `json:"error_contains"`
	MessagesOnce       *bool            `json:"messages_once"`
	CostUSD            *float64         `json:"cost_usd"`
	WarningsContains   []string         `json:"warnings_contains"`
	PromptsOnce        []string         `json:"prompts_once"`
	InjectedOnce       []string         `json:"injected_once"`
	Sessions           *int             `json:"sessions"`
	Cwd                *string          `json:"cwd"`
	Project            *string          `json:"project"`
}

type expectTool struct {
	CallID         *string `json:"call_id"`
	Name           *string `json:"name"`
	Result         *bool   `json:"result"`
	Status         *string `json:"status"`
	ExitCode       *int    `json:"exit_code"`
	ErrorContains  *string `json:"error_contains"`
	OutputContains *string `json:"output_contains"`
	NoOutput       *bool   `json:"no_output"`
	Kind           *string `json:"kind"`
}

type expectChild struct {
	NameContains   *string          `json:"name_contains"`
	PromptContains *string          `json:"prompt_contains"`
	Tools          *int             `json:"tools"`
	Status         *string          `json:"status"`
	Usage          map[string]int64 `json:"usage"`
}

func readExpectations(t *testing.T, path string) *expectations {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e expectations
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("%s: %v (keys are listed in testdata/captures/README.md)", path, err)
	}
	if e.Provider == "" {
		t.Fatalf("%s: \"provider\" is required", path)
	}
	return &e
}

// stepResult is an agent step's result as written, with the keys the
// harness reads that transcript.AgentResult may not have.
type stepResult struct {
	transcript.AgentResult
	Errors []struct {
		Message string `json:"message"`
		Code    string `json:"code"`
		RawLine int    `json:"raw_line"`
	} `json:"errors"`
}

// capturedRun is one transcript written from a capture, with its child runs.
type capturedRun struct {
	storage  string // set for the top run of a recording
	file     string
	events   []*transcript.Event
	result   *stepResult
	children []*capturedRun // in the order the parent links them
	link     string         // the parent's call_workflow step path to it
	canon    [][]string     // canonicalRuns, once computed (record is compared with three others)
}

// readRecorded reads a run file and, recursively, its child runs.
func readRecorded(t *testing.T, storage, file string) *capturedRun {
	t.Helper()
	r := &capturedRun{file: file, events: readRun(t, file)}
	for _, ev := range r.events {
		switch ev.Type {
		case transcript.StepCallWorkflowStarted:
			if ev.ChildRunID != "" {
				c := readRecorded(t, storage, transcriptPath(storage, ev.ChildRunID))
				c.link = ev.Path
				r.children = append(r.children, c)
			}
		case transcript.StepCompleted:
			p := ev.Step()
			if p.Kind != transcript.KindAgent || len(p.Result) == 0 {
				continue
			}
			var res stepResult
			if err := json.Unmarshal(p.Result, &res); err != nil {
				t.Fatalf("%s: agent result: %v", file, err)
			}
			r.result = &res
		}
	}
	return r
}

// files lists the run file and its children's.
func (r *capturedRun) files() []string {
	out := []string{r.file}
	for _, c := range r.children {
		out = append(out, c.files()...)
	}
	return out
}

func TestCaptures(t *testing.T) {
	cases := findCaptures(t)
	if len(cases) == 0 {
		t.Skip("no captures (testdata/captures is empty and ../shared/fixtures is absent)")
	}
	for _, c := range cases {
		t.Run(c.provider+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			var exp *expectations
			provider := c.provider
			if c.expect != "" {
				exp = readExpectations(t, c.expect)
				provider = exp.Provider
			}
			rec, recSilent := recordCapture(t, provider, c.input)
			imp := importCapture(t, provider, c.input)
			ren := renormalizeCapture(t, rec)
			live := liveCapture(t, provider, c.input)
			var files []string
			files = append(files, rec.files()...)
			files = append(files, imp.files()...)
			files = append(files, ren.files()...)
			files = append(files, live.files()...)
			validate(t, files...)
			if rec.result == nil || imp.result == nil || ren.result == nil {
				t.Fatalf("no agent step result (record: %v, import: %v, renormalize: %v)", rec.result != nil, imp.result != nil, ren.result != nil)
			}
			checkAccounted(t, rec, recSilent)
			if d := diffRuns(rec, imp); d != "" {
				t.Errorf("record --input and import of the same bytes differ (ids and recording times aside):\n%s", d)
			}
			if d := diffRuns(rec, live); d != "" {
				t.Errorf("record --input and record -- CMD of an agent writing the same bytes line by line differ (ids, recording times and the command aside):\n%s", d)
			}
			if d := diffRuns(rec, ren); d != "" {
				t.Errorf("record --input and renormalize of its raw capture differ (ids and recording times aside):\n%s", d)
			}
			if exp != nil {
				checkExpectations(t, exp, rec)
				if exp.Sessions != nil {
					checkSessions(t, provider, c.input, *exp.Sessions, promptTexts(rec.events))
				}
			}
		})
	}
}

// checkSessions imports a file that holds many sessions (a sections
// store's, as Aider's chat history) without --whole: it must become want
// runs, FILE#1 to FILE#want, each valid, whose prompts together are the
// whole file's (no prompt lost or read twice at a session's edge).
func checkSessions(t *testing.T, provider, input string, want int, prompts string) {
	t.Helper()
	storage := t.TempDir()
	r := twasm(t, "--storage", storage, "import", "--provider", provider, "--json", input)
	if r.code != 0 {
		t.Fatalf("twasm import --provider %s %s: %v", provider, input, r)
	}
	var got []string
	var files []string
	for i, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		var s struct {
			File       string `json:"file"`
			Transcript string `json:"transcript"`
			Action     string `json:"action"`
			Error      string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil || s.Transcript == "" || s.Error != "" || s.Action != "new" {
			t.Fatalf("import --json, line %d: %v\n%s", i+1, err, r.out)
		}
		if w := fmt.Sprintf("%s#%d", input, i+1); s.File != w {
			t.Errorf("sessions: session %d imported as %q, want %q", i+1, s.File, w)
		}
		run := readRecorded(t, storage, s.Transcript)
		files = append(files, run.files()...)
		got = append(got, promptTexts(run.events))
	}
	if len(got) != want {
		t.Fatalf("sessions: import made %d runs, want %d\n%s", len(got), want, r.out)
	}
	validate(t, files...)
	if all := strings.Join(got, ""); all != prompts {
		t.Errorf("sessions: the sessions' prompts together differ from the whole file's:\n sessions: %q\n whole:    %q", all, prompts)
	}
}

// silentLines is what record --json says of the raw lines the plugin
// reported nothing about.
type silentLines struct {
	N     int   `json:"silent_lines"`
	First []int `json:"silent_first"`
}

func recordCapture(t *testing.T, provider, input string) (*capturedRun, silentLines) {
	t.Helper()
	return recordInput(t, provider, input, 0)
}

// recordInput runs twasm record --json on input, which must exit with
// code (1 when the plugin understood none of the lines, say), and reads
// the transcript it wrote.
func recordInput(t *testing.T, provider, input string, code int) (*capturedRun, silentLines) {
	t.Helper()
	storage := t.TempDir()
	r := twasm(t, "--storage", storage, "record", "--provider", provider, "--input", input, "--json")
	if r.code != code {
		t.Fatalf("twasm record --provider %s --input %s: want exit %d: %v", provider, input, code, r)
	}
	var s struct {
		Transcript string `json:"transcript"`
		silentLines
	}
	if err := json.Unmarshal([]byte(r.out), &s); err != nil || s.Transcript == "" {
		t.Fatalf("record --json: %v\n%s", err, r.out)
	}
	run := readRecorded(t, storage, s.Transcript)
	run.storage = storage
	return run, s.silentLines
}

func importCapture(t *testing.T, provider, input string) *capturedRun {
	t.Helper()
	storage := t.TempDir()
	// --whole: a file of many sessions (Aider's) is one run here, as
	// record --input makes of it (checkSessions imports it per session).
	r := twasm(t, "--storage", storage, "import", "--provider", provider, "--whole", "--json", input)
	if r.code != 0 {
		t.Fatalf("twasm import --provider %s %s: %v", provider, input, r)
	}
	var s struct {
		Transcript string `json:"transcript"`
		Error      string `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.out), &s); err != nil || s.Transcript == "" || s.Error != "" {
		t.Fatalf("import --json: %v\n%s", err, r.out)
	}
	return readRecorded(t, storage, s.Transcript)
}

// liveCapture records the capture as `record -- CMD` does, from a fake
// agent that writes it line by line with a pause after each line, so the
// plugin sees the lines in separate calls as it does while an agent runs.
func liveCapture(t *testing.T, provider, input string) *capturedRun {
	t.Helper()
	storage := t.TempDir()
	r := start(t, nil, fakeEnv(fakeInput, input, fakeDelay, "1ms"), "--storage", storage, "record", "--provider", provider, "--json", "--", fake).wait(t, hangBound)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("twasm record -- (fake agent replaying %s): %v", input, r)
	}
	var s struct {
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(r.out), &s); err != nil || s.Transcript == "" {
		t.Fatalf("record -- CMD --json: %v\n%s", err, r.out)
	}
	return readRecorded(t, storage, s.Transcript)
}

// renormalizeCapture rebuilds a recorded run from its raw capture.
func renormalizeCapture(t *testing.T, rec *capturedRun) *capturedRun {
	t.Helper()
	r := twasm(t, "--storage", rec.storage, "renormalize", "--json", rec.file)
	if r.code != 0 {
		t.Fatalf("twasm renormalize %s: %v", rec.file, r)
	}
	var s struct {
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(r.out), &s); err != nil || s.Transcript == "" {
		t.Fatalf("renormalize --json: %v\n%s", err, r.out)
	}
	return readRecorded(t, rec.storage, s.Transcript)
}

// errorLike matches a native type that names an error or a failure.
var errorLike = regexp.MustCompile(`(?i)error|fail|exception|denied|overloaded`)

// checkAccounted checks spec §6.8: every raw line produced records, was
// declared ignored or was counted unmapped (silent counts the others); an
// error is never only counted in unmapped (in the run and in every
// child), and no raw line was lost to a plugin fault.
func checkAccounted(t *testing.T, r *capturedRun, silent silentLines) {
	t.Helper()
	if silent.N > 0 {
		t.Errorf("§6.8: %d raw line(s) produced no record and were neither declared ignored (sdk Out.Ignored) nor counted unmapped: lines %v", silent.N, silent.First)
	}
	for _, res := range r.results() {
		for native, n := range res.Unmapped {
			if errorLike.MatchString(native) {
				t.Errorf("§6.8: %d line(s) of native type %q only counted in unmapped: an error must become a record (errors, status or a tool result)", n, native)
			}
		}
		if res.FailedLines > 0 {
			t.Errorf("§6.8: %d raw line(s) lost to a plugin fault: %v", res.FailedLines, res.Warnings)
		}
	}
}

// results returns the agent results of the run and its children.
func (r *capturedRun) results() []*stepResult {
	var out []*stepResult
	if r.result != nil {
		out = append(out, r.result)
	}
	for _, c := range r.children {
		out = append(out, c.results()...)
	}
	return out
}

// diffRuns compares two recordings of the same bytes, event by event,
// with run ids replaced by their order of appearance, timestamps of
// recording, the run's own name, what import says of the file it read
// (source) and the raw capture's path (named after the run) left out. It returns "" when they agree.
func diffRuns(a, b *capturedRun) string {
	fa, fb := a.files(), b.files()
	if len(fa) != len(fb) {
		return fmt.Sprintf("%d run files against %d", len(fa), len(fb))
	}
	ca, cb := a.canonical(), b.canonical()
	var sb strings.Builder
	for i := range ca {
		if len(ca[i]) != len(cb[i]) {
			fmt.Fprintf(&sb, "run file %d: record has %d events, the other %d\n", i, len(ca[i]), len(cb[i]))
		}
		for j := 0; j < len(ca[i]) && j < len(cb[i]); j++ {
			if ca[i][j] != cb[i][j] {
				fmt.Fprintf(&sb, "run file %d, line %d:\n  record: %s\n  other:  %s\n", i, j+1, ca[i][j], cb[i][j])
				if sb.Len() > 4000 {
					return sb.String()
				}
			}
		}
	}
	return sb.String()
}

// canonical is canonicalRuns(r), computed once: the files do not change
// once recorded.
func (r *capturedRun) canonical() [][]string {
	if r.canon == nil {
		r.canon = canonicalRuns(r)
	}
	return r.canon
}

// canonicalRuns returns every run file of r as canonical JSON lines.
func canonicalRuns(r *capturedRun) [][]string {
	ids := map[string]string{}
	alias := func(id string) string {
		if id == "" {
			return ""
		}
		if ids[id] == "" {
			ids[id] = fmt.Sprintf("run%d", len(ids)+1)
		}
		return ids[id]
	}
	var out [][]string
	var walk func(r *capturedRun)
	walk = func(r *capturedRun) {
		b, err := os.ReadFile(r.file)
		if err != nil {
			out = append(out, []string{err.Error()})
			return
		}
		var lines []string
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				lines = append(lines, string(line))
				continue
			}
			for _, k := range []string{"run_id", "parent_run_id", "child_run_id"} {
				if s, ok := m[k].(string); ok {
					m[k] = alias(s)
				}
			}
			delete(m, "timestamp")
			if p, ok := m["payload"].(map[string]any); ok {
				if (m["type"] == string(transcript.RunStarted) || m["type"] == string(transcript.RunCompleted)) && m["parent_run_id"] == nil {
					delete(p, "name")              // "record <provider>", "import <file>", "renormalize <run>"
					delete(p, "renormalized_from") // the original run's id
					delete(p, "source")            // import: the file archived
				}
				delete(p, "duration_ms")
				if res, ok := p["result"].(map[string]any); ok {
					delete(res, "source") // import: the part of the file archived
					// record -- CMD: the process's exit code (0 from the
					// fake agent), its command line and directory.
					delete(res, "exit_code")
					delete(res, "command")
					delete(res, "cwd")
					if raw, ok := res["raw"].(map[string]any); ok {
						delete(raw, "path")
						delete(raw, "stderr")
					}
				}
			}
			c, _ := json.Marshal(m)
			lines = append(lines, string(c))
		}
		out = append(out, lines)
		for _, c := range r.children {
			walk(c)
		}
	}
	walk(r)
	return out
}

// checkExpectations checks every key of exp against the recording.
func checkExpectations(t *testing.T, exp *expectations, r *capturedRun) {
	t.Helper()
	res := r.result
	fail := func(key string, want, got any) {
		t.Helper()
		t.Errorf("%s: expected %v, got %v", key, show(want), show(got))
	}
	if exp.Status != nil && *exp.Status != res.Status {
		fail("status", *exp.Status, res.Status+errorSuffix(res.Error))
	}
	if exp.ErrorContains != nil && !strings.Contains(res.Error, *exp.ErrorContains) {
		fail("error_contains", *exp.ErrorContains, res.Error)
	}
	if exp.SessionID != nil && *exp.SessionID != res.SessionID {
		fail("session_id", *exp.SessionID, res.SessionID)
	}
	if exp.Model != nil && *exp.Model != res.Model {
		fail("model", *exp.Model, res.Model)
	}
	if exp.Format != nil && *exp.Format != res.Format {
		fail("format", *exp.Format, res.Format)
	}
	if exp.Cwd != nil && *exp.Cwd != res.Cwd {
		fail("cwd", *exp.Cwd, res.Cwd)
	}
	if exp.Project != nil && *exp.Project != res.Project {
		fail("project", *exp.Project, res.Project)
	}
	for _, k := range sortedKeys(exp.Usage) {
		want := exp.Usage[k]
		got := usageField(res.Usage, k)
		if got == nil || *got != want {
			fail("usage."+k, want, got)
		}
	}
	if exp.CostUSD != nil {
		// The provider's figures are binary floats summed in some order:
		// equal to a millionth of a cent.
		if res.CostUSD == nil || math.Abs(*res.CostUSD-*exp.CostUSD) > 1e-8 {
			fail("cost_usd", *exp.CostUSD, res.CostUSD)
		}
	}
	for _, s := range exp.WarningsContains {
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, s) }) {
			fail("warnings_contains", s, res.Warnings)
		}
	}
	if exp.Tools != nil {
		checkTools(t, *exp.Tools, r.events)
	}
	if exp.Dangling != nil {
		want, got := slices.Clone(*exp.Dangling), slices.Clone(res.Dangling)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			fail("dangling", want, got)
		}
	}
	texts := assistantTexts(r.events)
	for _, s := range exp.TextsOnce {
		if n := strings.Count(texts, s); n != 1 {
			t.Errorf("texts_once: %q appears %d times in the assistant's text blocks, expected once", s, n)
		}
	}
	prompts := promptTexts(r.events)
	for _, s := range exp.PromptsOnce {
		if n := strings.Count(prompts, s); n != 1 {
			t.Errorf("prompts_once: %q appears %d times in the user's prompts (message.user text blocks of origin prompt), expected once", s, n)
		}
	}
	injected := injectedTexts(r.events)
	for _, s := range exp.InjectedOnce {
		if n := strings.Count(injected, s); n != 1 {
			t.Errorf("injected_once: %q appears %d times in the injected context (message.user text blocks of origin injected_context), expected once", s, n)
		}
	}
	if exp.UserPromptContains != nil && !strings.Contains(userTexts(r.events), *exp.UserPromptContains) {
		fail("user_prompt_contains", *exp.UserPromptContains, userTexts(r.events))
	}
	var msgs []string
	for _, e := range res.Errors {
		msgs = append(msgs, e.Message)
	}
	for _, s := range exp.ErrorsContains {
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, s) }) {
			fail("errors_contains", s, msgs)
		}
	}
	if exp.MinErrors != nil && len(res.Errors) < *exp.MinErrors {
		fail("min_errors", fmt.Sprintf("at least %d", *exp.MinErrors), msgs)
	}
	if exp.Children != nil {
		checkChildren(t, *exp.Children, r.children)
	}
	if exp.MessagesOnce != nil && *exp.MessagesOnce {
		checkMessagesOnce(t, r)
	}
	if exp.UnmappedMax != nil {
		total := 0
		for _, n := range res.Unmapped {
			total += n
		}
		if total > *exp.UnmappedMax {
			fail("unmapped_max", fmt.Sprintf("at most %d", *exp.UnmappedMax), res.Unmapped)
		}
	}
}

func errorSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " (error: " + s + ")"
}

// show prints a value of an expectation or of the recording readably.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case *int64:
		if x == nil {
			return "(absent)"
		}
		return fmt.Sprint(*x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// usageField returns the usage figure named by its JSON key.
func usageField(u *transcript.Usage, key string) *int64 {
	if u == nil {
		return nil
	}
	b, _ := json.Marshal(u)
	var m map[string]int64
	_ = json.Unmarshal(b, &m)
	v, ok := m[key]
	if !ok {
		return nil
	}
	return &v
}

func checkTools(t *testing.T, want []expectTool, evs []*transcript.Event) {
	t.Helper()
	// Calls pair with results by transcript.Pairer's rule: a provider may
	// reuse an id once its call is settled (normalize's rule).
	var calls, answers []*transcript.ToolPayload
	pairs := transcript.PairEvents(evs)
	for _, ev := range evs {
		if ev.Type == transcript.ToolCall {
			var res *transcript.ToolPayload
			if r := pairs[ev]; r != nil {
				res = r.Tool()
			}
			calls, answers = append(calls, ev.Tool()), append(answers, res)
		}
	}
	var got []string
	for _, c := range calls {
		got = append(got, c.CallID+" "+c.Name)
	}
	if len(calls) != len(want) {
		t.Errorf("tools: expected %d tool.call events, got %d: %v", len(want), len(calls), got)
	}
	for i := 0; i < len(want) && i < len(calls); i++ {
		w, c, res := want[i], calls[i], answers[i]
		key := func(k string) string { return fmt.Sprintf("tools[%d] (call %s).%s", i, c.CallID, k) }
		check := func(k string, want, got any) {
			t.Helper()
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s: expected %s, got %s", key(k), show(want), show(got))
			}
		}
		if w.CallID != nil {
			check("call_id", *w.CallID, c.CallID)
		}
		if w.Name != nil {
			check("name", *w.Name, c.Name)
		}
		if w.Kind != nil {
			check("kind", *w.Kind, string(c.Kind))
		}
		if w.Result != nil {
			check("result", *w.Result, res != nil)
		}
		needResult := w.Status != nil || w.ExitCode != nil || w.ErrorContains != nil || w.OutputContains != nil || w.NoOutput != nil
		if res == nil {
			if needResult {
				t.Errorf("%s: expected a tool.result, got none (dangling)", key("result"))
			}
			continue
		}
		if w.Status != nil {
			check("status", *w.Status, res.Status)
		}
		if w.ExitCode != nil {
			if res.ExitCode == nil {
				t.Errorf("%s: expected %d, got none", key("exit_code"), *w.ExitCode)
			} else {
				check("exit_code", *w.ExitCode, *res.ExitCode)
			}
		}
		if w.ErrorContains != nil && !strings.Contains(res.Error, *w.ErrorContains) {
			check("error_contains", *w.ErrorContains, res.Error)
		}
		if w.OutputContains != nil && !strings.Contains(res.Output, *w.OutputContains) {
			check("output_contains", *w.OutputContains, res.Output)
		}
		if w.NoOutput != nil {
			// Spec section 4: a result the provider gave no output for
			// has no output field; "output":"" is an empty output.
			check("no_output", *w.NoOutput, !res.HasOutput)
		}
	}
}

func checkChildren(t *testing.T, want []expectChild, children []*capturedRun) {
	t.Helper()
	if len(want) != len(children) {
		var names []string
		for _, c := range children {
			names = append(names, c.events[0].Step().Name)
		}
		t.Errorf("children: expected %d child runs, got %d: %v", len(want), len(children), names)
	}
	for i := 0; i < len(want) && i < len(children); i++ {
		w, c := want[i], children[i]
		name := c.events[0].Step().Name
		if w.NameContains != nil && !strings.Contains(name, *w.NameContains) && !strings.Contains(c.link, *w.NameContains) {
			t.Errorf("children[%d].name_contains: expected %q in the child run's name or its link's path, got %q and %q", i, *w.NameContains, name, c.link)
		}
		if w.PromptContains != nil {
			if got := userTexts(c.events); !strings.Contains(got, *w.PromptContains) {
				t.Errorf("children[%d] (%s).prompt_contains: expected %q, got %q", i, name, *w.PromptContains, got)
			}
		}
		if w.Tools != nil {
			if n := len(ofType(c.events, transcript.ToolCall)); n != *w.Tools {
				t.Errorf("children[%d] (%s).tools: expected %d tool.call events, got %d", i, name, *w.Tools, n)
			}
		}
		for _, k := range sortedKeys(w.Usage) {
			// The sub-run's usage as the views show it (twasm tree, view,
			// stats): the sum of its messages' usage.
			got := usageField(views.BuildRun(&views.Run{Events: c.events}).Usage, k)
			if got == nil || *got != w.Usage[k] {
				t.Errorf("children[%d] (%s).usage.%s: expected %d, got %v", i, name, k, w.Usage[k], show(got))
			}
		}
		if w.Status != nil {
			got := ""
			if last := c.events[len(c.events)-1]; last.Type == transcript.RunCompleted {
				got = last.Step().Status
			}
			if got != *w.Status {
				t.Errorf("children[%d] (%s).status: expected %q, got %q", i, name, *w.Status, got)
			}
		}
	}
}

// checkMessagesOnce checks spec §6.1 in the run and in every child: a
// provider message is one message.assistant, however its raw lines were
// interleaved with others.
func checkMessagesOnce(t *testing.T, r *capturedRun) {
	t.Helper()
	seen := map[string]int{}
	for _, ev := range ofType(r.events, transcript.MessageAssistant) {
		if id := ev.Message().ID; id != "" {
			if seen[id]++; seen[id] == 2 {
				t.Errorf("messages_once: message %s is written as more than one message.assistant (%s)", id, filepath.Base(r.file))
			}
		}
	}
	for _, c := range r.children {
		checkMessagesOnce(t, c)
	}
}

// assistantTexts joins the text blocks of the run's assistant messages.
func assistantTexts(evs []*transcript.Event) string {
	return blockTexts(evs, transcript.MessageAssistant)
}

// userTexts joins the text blocks of the run's user messages.
func userTexts(evs []*transcript.Event) string {
	return blockTexts(evs, transcript.MessageUser)
}

// promptTexts is the text of the user's prompts: message.user text
// blocks of origin prompt (or none), injected context left out.
func promptTexts(evs []*transcript.Event) string {
	return userTextsOf(evs, func(o transcript.Origin) bool { return o == transcript.OriginPrompt || o == "" })
}

// injectedTexts is the text of the context the agent injected:
// message.user text blocks of origin injected_context.
func injectedTexts(evs []*transcript.Event) string {
	return userTextsOf(evs, func(o transcript.Origin) bool { return o == transcript.OriginInjected })
}

// userTextsOf joins the message.user text blocks whose origin keep takes.
func userTextsOf(evs []*transcript.Event, keep func(transcript.Origin) bool) string {
	var sb strings.Builder
	for _, ev := range ofType(evs, transcript.MessageUser) {
		for _, b := range ev.Message().Blocks {
			if b.Type == transcript.BlockText && keep(b.Origin) {
				sb.WriteString(b.Text)
				sb.WriteString("\n\x00\n")
			}
		}
	}
	return sb.String()
}

func blockTexts(evs []*transcript.Event, typ transcript.EventType) string {
	var sb strings.Builder
	for _, ev := range ofType(evs, typ) {
		for _, b := range ev.Message().Blocks {
			if b.Type == transcript.BlockText {
				sb.WriteString(b.Text)
				sb.WriteString("\n\x00\n") // a separator no substring spans
			}
		}
	}
	return sb.String()
}
