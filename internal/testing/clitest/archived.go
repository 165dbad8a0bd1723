package clitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/transcript"
)

// ClaudeSession is a Claude Code session log of turns turns (a
// prompt, a tool call, its result and an answer each; every fifth prompt
// is "continue", so that equal messages without an id occur), named by
// tag, large enough that archiving it takes thousands of transcript
// lines.
func ClaudeSession(tag string, turns int) []byte {
	var b bytes.Buffer
	sid := "5e55104e-0000-4000-8000-0000000000" + fmt.Sprintf("%02d", len(tag))
	prev := any(nil)
	ts := func(i int) string {
		return time.Date(2025, 10, 26, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z")
	}
	line := func(v map[string]any) {
		v["isSidechain"], v["userType"], v["cwd"], v["sessionId"], v["version"] = false, "external", "/w", sid, "2.0.27"
		j, _ := json.Marshal(v)
		b.Write(j)
		b.WriteByte('\n')
	}
	for i := range turns {
		prompt := fmt.Sprintf("%s prompt %d: run the command", tag, i)
		if i%5 == 4 {
			prompt = "continue"
		}
		id := fmt.Sprintf("%s-%d", tag, i)
		line(map[string]any{"parentUuid": prev, "type": "user", "uuid": "u-" + id, "timestamp": ts(4 * i),
			"message": map[string]any{"role": "user", "content": prompt}})
		line(map[string]any{"parentUuid": "u-" + id, "type": "assistant", "uuid": "a-" + id, "timestamp": ts(4*i + 1),
			"message": map[string]any{"id": "msg_a" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content":     []any{map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": "Bash", "input": map[string]any{"command": "echo " + id}}},
				"stop_reason": "tool_use", "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}})
		line(map[string]any{"parentUuid": "a-" + id, "type": "user", "uuid": "r-" + id, "timestamp": ts(4*i + 2),
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_" + id, "content": id}}}})
		line(map[string]any{"parentUuid": "r-" + id, "type": "assistant", "uuid": "b-" + id, "timestamp": ts(4*i + 3),
			"message": map[string]any{"id": "msg_b" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content":     []any{map[string]any{"type": "text", "text": "done " + id}},
				"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 12, "output_tokens": 3}}})
		prev = "b-" + id
	}
	return b.Bytes()
}

// ArchivedRun is one run of an archived session (ArchivedSessions): its
// messages (type, role, id, blocks), sorted; its last part's raw
// capture; whether it ended.
type ArchivedRun struct {
	ID       string
	Messages []string
	Raw      *transcript.RawRef
	Finished bool
}

// ArchivedSessions reads every transcript of a storage root: per session
// source file's name, its runs.
func ArchivedSessions(t testing.TB, stor string) map[string][]ArchivedRun {
	t.Helper()
	return ArchivedOf(t, StorageRuns(t, stor))
}

// StorageRuns reads every transcript of a storage root once, by path,
// each with ReadRun (a line that does not decode fails the test), for
// ArchivedOf and a caller's own reading.
func StorageRuns(t testing.TB, stor string) map[string][]*transcript.Event {
	t.Helper()
	return storageRuns(t, stor, false)
}

// StorageRunsKilled is StorageRuns of a storage root read right after a
// process writing it was killed: a transcript's last line may be torn
// (cut mid-write, no trailing LF: transcript.ErrTruncated), and is left
// out; any other problem fails the test, as in StorageRuns.
func StorageRunsKilled(t testing.TB, stor string) map[string][]*transcript.Event {
	t.Helper()
	return storageRuns(t, stor, true)
}

// storageRuns reads every transcript of stor (readRun: torn allows a
// torn last line), each with at least one event.
func storageRuns(t testing.TB, stor string, torn bool) map[string][]*transcript.Event {
	t.Helper()
	runs := map[string][]*transcript.Event{}
	paths, _ := filepath.Glob(filepath.Join(stor, "transcripts", "*.jsonl"))
	for _, p := range paths {
		evs := readRun(t, p, torn)
		if len(evs) == 0 {
			t.Fatalf("%s: empty", p)
		}
		runs[p] = evs
	}
	return runs
}

// ArchivedOf is ArchivedSessions of the runs read from a storage root.
func ArchivedOf(t testing.TB, runs map[string][]*transcript.Event) map[string][]ArchivedRun {
	t.Helper()
	out := map[string][]ArchivedRun{}
	for _, p := range slices.Sorted(maps.Keys(runs)) {
		evs := runs[p]
		sp := evs[0].Step()
		if sp == nil || sp.Extra["source"] == nil {
			continue
		}
		var src struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(sp.Extra["source"], &src); err != nil {
			t.Fatal(err)
		}
		r := ArchivedRun{ID: evs[0].RunID}
		for _, ev := range evs {
			if m := ev.Message(); m != nil {
				b, _ := json.Marshal(m.Blocks)
				r.Messages = append(r.Messages, string(ev.Type)+" "+m.Role+" "+m.ID+" "+string(b))
			}
			if ev.Type == transcript.StepCompleted {
				if res, err := ev.Step().AgentResult(); err == nil && res != nil && res.Raw != nil {
					r.Raw = res.Raw
				}
			}
			r.Finished = r.Finished || ev.Type == transcript.RunCompleted
		}
		sort.Strings(r.Messages)
		out[filepath.Base(src.Path)] = append(out[filepath.Base(src.Path)], r)
	}
	return out
}

// DamageRaw changes the first old in the raw capture of run runID under
// the storage root stor (its one capture file) to new, on disk, as a
// disk or a wrong write might: its bytes are no longer those its part
// states.
func DamageRaw(t testing.TB, stor, runID, old, new string) {
	t.Helper()
	dir := filepath.Join(stor, "raw", runID)
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("raw captures of %s: %v %v", runID, ents, err)
	}
	p := filepath.Join(dir, ents[0].Name())
	b, err := rawfile.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s holds no %q (%v)", p, old, err)
	}
	b = bytes.Replace(b, []byte(old), []byte(new), 1)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	w, err := rawfile.Create(p)
	if err == nil {
		_, err = w.Write(b)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}
