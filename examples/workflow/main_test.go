package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-storage", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr.String())
	}
	paths := strings.Fields(stdout.String())
	if len(paths) != 3 {
		t.Fatalf("want the run, its child and grandchild, got %q", paths)
	}
	runID := strings.TrimSuffix(filepath.Base(paths[0]), ".jsonl")
	if !strings.Contains(stderr.String(), "run id: "+runID) {
		t.Errorf("stderr %q does not name run %s", stderr.String(), runID)
	}

	kinds := map[transcript.StepKind]bool{}
	var sawSystem, sawPrompt, sawTool bool
	parents := map[string]string{} // run id -> parent run id
	for _, p := range paths {
		if filepath.Dir(p) != filepath.Join(dir, "transcripts") {
			t.Errorf("%s is not under the storage directory", p)
		}
		rep, err := transcript.ValidateFile(os.DirFS(filepath.Dir(p)), filepath.Base(p), transcript.ValidateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || !rep.Finished {
			t.Errorf("%s: finished %v, errors %v", p, rep.Finished, rep.Errors)
		}
		for i, ev := range readEvents(t, p) {
			if ev.Seq != uint64(i+1) {
				t.Errorf("%s line %d: seq %d", p, i+1, ev.Seq)
			}
			parents[ev.RunID] = ev.ParentRunID
			if s := ev.Step(); s != nil {
				kinds[s.Kind] = true
			}
			if m := ev.Message(); m != nil && ev.Type == transcript.MessageUser {
				for _, b := range m.Blocks {
					sawSystem = sawSystem || b.Origin == transcript.OriginSystemPrompt
					sawPrompt = sawPrompt || b.Origin == transcript.OriginPrompt
				}
			}
			if tp := ev.Tool(); tp != nil && tp.Fidelity == transcript.FidelityRouter {
				sawTool = true
			}
		}
	}
	for _, k := range []transcript.StepKind{
		transcript.KindWorkflow, transcript.KindAgent, transcript.KindCommand, transcript.KindOperation,
		transcript.KindTerminal, transcript.KindParallel, transcript.KindForEach, transcript.KindWhile,
		transcript.KindCallWorkflow, "webhook",
	} {
		if !kinds[k] {
			t.Errorf("no %s step recorded", k)
		}
	}
	if !sawSystem || !sawPrompt || !sawTool {
		t.Errorf("system prompt %v, prompt %v, routed tool %v", sawSystem, sawPrompt, sawTool)
	}
	child := strings.TrimSuffix(filepath.Base(paths[1]), ".jsonl")
	grand := strings.TrimSuffix(filepath.Base(paths[2]), ".jsonl")
	if parents[runID] != "" || parents[child] != runID || parents[grand] != child {
		t.Errorf("links: %v", parents)
	}
}

func TestRunErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-nope"}, &stdout, &stderr); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"-storage", blocked}, &stdout, &stderr); code != 1 {
		t.Errorf("unwritable storage: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "workflow: ") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestReadFileTool(t *testing.T) {
	if _, err := readFile(context.Background(), []byte(`{"path":"missing.go"}`)); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := readFile(context.Background(), []byte(`[`)); err == nil {
		t.Error("bad input: no error")
	}
}

func readEvents(t *testing.T, p string) []*transcript.Event {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []*transcript.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := transcript.DecodeEvent(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
