package cmdutil

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/transcript"
)

func TestStepOutcome(t *testing.T) {
	storage := t.TempDir()
	raw := func(name, body string) *transcript.RawRef {
		if err := os.WriteFile(filepath.Join(storage, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return &transcript.RawRef{Path: name}
	}
	five := raw("five.raw", "{}\n\n{}\n  \n{}\n{}\n{}")
	ten := raw("ten.raw", strings.Repeat("{}\n", 10))
	one := raw("one.raw", "{}\n")
	const run = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	line := func(seq int, typ, payload string) string {
		return `{"seq":` + strconv.Itoa(seq) + `,"run_id":"` + run + `","type":"` + typ + `","path":"agent","iteration":0,"timestamp":"2026-01-01T00:00:00.000Z","payload":` + payload + "}\n"
	}
	started := line(2, "step.started", `{"name":"agent","kind":"agent"}`)
	completed := line(4, "step.completed", `{"name":"agent","kind":"agent","status":"ok","result":{"provider":"p","status":"incomplete","raw":{"path":"five.raw","bytes":1,"sha256":""}}}`)
	emptyStep := filepath.Join(storage, "empty.jsonl")
	fullStep := filepath.Join(storage, "full.jsonl")
	if err := os.WriteFile(emptyStep, []byte(started+completed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fullStep, []byte(started+line(3, "tool.call", `{"name":"Bash","call_id":"c1","input":{}}`)+completed), 0o600); err != nil {
		t.Fatal(err)
	}
	exit3 := 3
	tests := []struct {
		name       string
		file       string
		res        transcript.AgentResult
		understood bool
		want       []string
	}{
		{"clean", "", transcript.AgentResult{Provider: "p", Status: "ok", Raw: five}, true, nil},
		{"fault", "", transcript.AgentResult{Provider: "p", Status: "ok", Raw: ten, FailedLines: 2, Unmapped: map[string]int{"b": 1, "a": 1, "c": 3, "d": 1, "e": 1}},
			true, []string{"7 unmapped line(s) (c 3, a 1, b 1, d 1, 1 more type(s))", "2 line(s) lost to a plugin fault"}},
		{"all lost", "", transcript.AgentResult{Provider: "p", Status: "incomplete", Raw: five, FailedLines: 5},
			false, []string{"the p plugin understood none of the 5 line(s)", "5 line(s) lost to a plugin fault"}},
		{"error", "", transcript.AgentResult{Provider: "p", Status: "error", Error: "no\nauth", ExitCode: &exit3, Raw: five, Dangling: []string{"x"}},
			true, []string{"status error: no auth (exit code 3)", "1 tool call(s) without a result"}},
		{"no raw", "", transcript.AgentResult{Provider: "p", Status: "incomplete", Lines: 2, Unmapped: map[string]int{"x": 2}},
			false, []string{"the p plugin understood none of the 2 line(s): the provider looks wrong"}},
		{"nothing produced", emptyStep, transcript.AgentResult{Provider: "p", Status: "incomplete", Raw: five},
			false, []string{"the p plugin recorded nothing from the 5 line(s)"}},
		{"only tool events", fullStep, transcript.AgentResult{Provider: "p", Status: "incomplete", Raw: five},
			true, []string{"status incomplete: the output ended without the provider's final event"}},
		// Unmapped counts native types, several a line: a body of the
		// provider's API with parts the plugin does not know is understood
		// by what it recorded (spec §6.8), never refused.
		{"unknown parts beside usage", "", transcript.AgentResult{Provider: "p", Status: "ok", Raw: one, Usage: &transcript.Usage{InputTokens: new(int64(3))},
			Unmapped: map[string]int{"object/response.preview": 1, "item/hologram_call": 1}},
			true, []string{"2 unmapped line(s)"}},
		{"unknown parts beside events", fullStep, transcript.AgentResult{Provider: "p", Status: "incomplete", Raw: five, Unmapped: map[string]int{"block/x": 6}},
			true, []string{"status incomplete", "6 unmapped line(s)"}},
		{"every line unmapped, a status", "", transcript.AgentResult{Provider: "p", Status: "ok", Raw: five, Unmapped: map[string]int{"x": 5}},
			false, []string{"the p plugin understood none of the 5 line(s)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := ReportStep(&b, "f", storage, cmp.Or(tc.file, filepath.Join(storage, "none.jsonl")), &tc.res)
			if tc.understood != (err == nil) || err != nil && (!errors.Is(err, ErrSilent) || !errors.Is(err, ErrNotUnderstood)) {
				t.Errorf("err %v, understood %v", err, tc.understood)
			}
			if len(tc.want) == 0 {
				if b.Len() != 0 {
					t.Errorf("said %q", b.String())
				}
				return
			}
			line := b.String()
			if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "twasm: f: ") {
				t.Errorf("not one line: %q", line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
	if ReportStep(&bytes.Buffer{}, "", storage, "", nil) != nil {
		t.Error("no result is no news")
	}
}

func TestWithInvocation(t *testing.T) {
	res := &transcript.AgentResult{Provider: "p", Status: "ok"}
	got := WithInvocation(res, []string{"agent", "--key", "SECRET"}, upperMasker{})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Provider string   `json:"provider"`
		Command  []string `json:"command"`
		Cwd      string   `json:"cwd"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if m.Provider != "p" || strings.Join(m.Command, " ") != "agent --key [MASKED]" || m.Cwd != wd {
		t.Errorf("%s", b)
	}
}

type upperMasker struct{}

func (upperMasker) MaskBytes(b []byte) []byte {
	return []byte(strings.ReplaceAll(string(b), "SECRET", "[MASKED]"))
}

func TestStdinInput(t *testing.T) {
	ios, in, _, errOut := iostreams.Test()
	in.WriteString("line\n")
	if r := StdinInput(context.Background(), ios); r != io.Reader(ios.In) || errOut.Len() != 0 {
		t.Fatal("a pipe is read as it is, silently")
	}
	ios.SetStdinTTY(true)
	pr, pw := io.Pipe()
	ios.In = pr
	ctx, cancel := context.WithCancel(context.Background())
	r := StdinInput(ctx, ios)
	if errOut.Len() != 0 {
		t.Fatalf("a notice before the first read: %q", errOut)
	}
	go func() { _, _ = pw.Write([]byte("abcdef")) }()
	buf := make([]byte, 4)
	n, err := r.Read(buf)
	if strings.Count(errOut.String(), "Ctrl-D") != 1 {
		t.Fatalf("notice: %q", errOut)
	}
	if err != nil || string(buf[:n]) != "abcd" {
		t.Fatalf("%q %v", buf[:n], err)
	}
	n, err = r.Read(buf)
	if err != nil || string(buf[:n]) != "ef" {
		t.Fatalf("the rest of a read is kept: %q %v", buf[:n], err)
	}
	cancel()
	if _, err := r.Read(buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled read: %v", err)
	}
	pw.Close()
}

func TestRunStartAndLatest(t *testing.T) {
	storage := t.TempDir()
	dir := filepath.Join(storage, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f := &Factory{StorageFlag: storage}
	if _, err := f.ResolveRun(LatestRun); err == nil || !strings.Contains(err.Error(), "no run in storage yet") {
		t.Fatalf("empty storage: %v", err)
	}
	line := func(id, ts string) string {
		return `{"seq":1,"run_id":"` + id + `","type":"run.started","path":"","iteration":0,"timestamp":"` + ts + `","payload":{"name":"n","kind":"workflow"}}` + "\n"
	}
	older, newer := "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	if err := os.WriteFile(filepath.Join(dir, newer+".jsonl"), []byte(line(newer, "2026-01-02T00:00:00.000Z")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, older+".jsonl"), []byte(line(older, "2026-01-01T00:00:00.000Z")), 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := f.ResolveRun(LatestRun)
	if err != nil || !strings.Contains(ref.Path, newer) {
		t.Fatalf("latest %q %v: written last is not started last", ref.Path, err)
	}
	// A child run (a sub-agent) started after its parent is not "latest":
	// the newest top-level run is; the child stays reachable by its id.
	child := "dddddddd-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	childLine := `{"seq":1,"run_id":"` + child + `","parent_run_id":"` + newer + `","type":"run.started","path":"","iteration":0,"timestamp":"2026-01-03T00:00:00.000Z","payload":{"name":"sub","kind":"workflow"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, child+".jsonl"), []byte(childLine), 0o600); err != nil {
		t.Fatal(err)
	}
	if ref, err = f.ResolveRun(LatestRun); err != nil || !strings.Contains(ref.Path, newer) {
		t.Fatalf("latest %q %v: a child run was taken for the newest run", ref.Path, err)
	}
	if ref, err = f.ResolveRun(child[:8]); err != nil || !strings.Contains(ref.Path, child) {
		t.Fatalf("child by id %q %v", ref.Path, err)
	}
	// A file without a run.started counts by its modification time.
	junk := filepath.Join(dir, "cccccccc-aaaa-4aaa-8aaa-aaaaaaaaaaaa.jsonl")
	if err := os.WriteFile(junk, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, ok := RunStart(junk); !ok || st.IsZero() {
		t.Fatal("no mtime fallback")
	}
	if _, ok := RunStart(filepath.Join(dir, "missing.jsonl")); ok {
		t.Fatal("a missing file has a start")
	}

	// A missing storage root points at ./storage when there is one.
	wd := t.TempDir()
	t.Chdir(wd)
	if err := os.MkdirAll(filepath.Join(LocalStorage, "transcripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	f = &Factory{StorageFlag: filepath.Join(wd, "nosuch")}
	if _, err := f.ListRuns(); !errors.Is(err, ErrNoStorage) || !strings.Contains(err.Error(), "--storage storage") {
		t.Fatalf("hint: %v", err)
	}
}

// The start of the raw capture is read for detection only when the plugin
// understood nothing: an understood step of a large capture makes no copy
// of its first 256 KiB (which every record and import made, in a buffer
// grown from nothing). Detection still sees the start when it runs.
func TestStepOutcomeReadsTheSampleOnlyForDetection(t *testing.T) {
	storage := t.TempDir()
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "claude", "stream-json.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"small.raw": 1, "large.raw": 1 << 20 / len(example)} {
		if err := os.WriteFile(filepath.Join(storage, name), bytes.Repeat(example, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	allocs := map[string]float64{}
	for _, name := range []string{"small.raw", "large.raw"} {
		res := &transcript.AgentResult{Provider: "p", Status: "ok", SessionID: "s", Raw: &transcript.RawRef{Path: name}}
		if o := StepOutcome(storage, "", res); !o.Understood || len(o.Problems) != 0 {
			t.Fatalf("%s: %+v", name, o)
		}
		allocs[name] = testing.AllocsPerRun(5, func() { StepOutcome(storage, "", res) })
	}
	if allocs["large.raw"] != allocs["small.raw"] {
		t.Errorf("%v allocations for a 1 MB capture, %v for 1 KB: the capture's start is copied", allocs["large.raw"], allocs["small.raw"])
	}
	// Not understood: detection reads the start and names what it saw.
	res := &transcript.AgentResult{Provider: "codex", Status: "incomplete", Raw: &transcript.RawRef{Path: "large.raw"}, Unmapped: map[string]int{"x": 1 << 20}}
	o := StepOutcome(storage, "", res)
	if o.Understood || len(o.Problems) == 0 || !strings.Contains(o.Problems[0], "detection says claude") {
		t.Errorf("not understood: %+v", o)
	}
}

// A step whose result shows what the plugin recorded is understood
// whatever the line counts say, so its raw capture is not read back
// (reading decompressed or scanned it whole after every record, import
// and synced part, through a 64 KiB buffer at least). The problems said
// are the same as before.
func TestStepOutcomeUnderstoodReadsNoCapture(t *testing.T) {
	storage := t.TempDir()
	if err := os.WriteFile(filepath.Join(storage, "large.raw"), bytes.Repeat([]byte("{}\n"), 1<<20/3), 0o600); err != nil {
		t.Fatal(err)
	}
	exit1 := 1
	tests := []struct {
		name string
		res  transcript.AgentResult
		want []string
	}{
		{"session", transcript.AgentResult{Provider: "p", Status: "ok", SessionID: "s"}, nil},
		{"model and unmapped", transcript.AgentResult{Provider: "p", Status: "ok", Model: "m", Unmapped: map[string]int{"x": 3}}, []string{"3 unmapped line(s) (x 3)"}},
		{"dangling, error, faults", transcript.AgentResult{Provider: "p", Status: "error", Error: "quota", ExitCode: &exit1, Dangling: []string{"c"}, FailedLines: 2},
			[]string{"status error: quota (exit code 1)", "1 tool call(s) without a result", "2 line(s) lost to a plugin fault"}},
		{"usage, incomplete", transcript.AgentResult{Provider: "p", Status: "incomplete", Usage: &transcript.Usage{InputTokens: new(int64(1))}},
			[]string{"status incomplete: the output ended without the provider's final event"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.res
			res.Raw = &transcript.RawRef{Path: "large.raw"}
			o := StepOutcome(storage, filepath.Join(storage, "none.jsonl"), &res)
			if !o.Understood || !slices.Equal(o.Problems, tc.want) {
				t.Errorf("%+v, want understood and %q", o, tc.want)
			}
			const runs = 5
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				StepOutcome(storage, "", &res)
			}
			runtime.ReadMemStats(&after)
			if n := (after.TotalAlloc - before.TotalAlloc) / runs; n >= 32<<10 {
				t.Errorf("%d bytes allocated by a call: the 1 MiB capture is read", n)
			}
		})
	}
}
