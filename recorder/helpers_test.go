package recorder

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// A re-executed child: no leak check, it exits from its test.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// text200 is the 200-byte text block of the awf-baseline event.
var text200 = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)[:200]

// assistantEvent is the benchmark/test event: message.assistant with one
// 200-byte text block, as in shared/research/awf-baseline.md.
func assistantEvent(text string) *transcript.Event {
	return &transcript.Event{
		Type: transcript.MessageAssistant,
		Path: "review",
		Payload: &transcript.MessagePayload{
			Role:   "assistant",
			Blocks: []transcript.Block{transcript.TextBlock(text)},
		},
	}
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func fixedClock() func() time.Time {
	return func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC) }
}

// checkFile reads path with transcript's tolerant Reader and checks the
// transcript invariants: the file ends with an LF, every line decodes
// without error or warning, seqs are exactly 1..N in file order and every
// line carries runID. It returns the events.
func checkFile(t testing.TB, path, runID string) []*transcript.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("%s: last line has no LF", path)
	}
	var evs []*transcript.Event
	rd := transcript.NewReader(bytes.NewReader(data))
	for rd.Next() {
		n := len(evs) + 1
		if p := rd.Problems(); len(p) > 0 {
			t.Fatalf("event %d: %v: %.120q", n, p, rd.Line())
		}
		ev := rd.Event()
		if want := uint64(n); ev.Seq != want {
			t.Fatalf("event %d has seq %d, want %d", n, ev.Seq, want)
		}
		if ev.RunID != runID {
			t.Fatalf("event %d has run id %q", n, ev.RunID)
		}
		evs = append(evs, ev)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(data, []byte("\n")); lines != len(evs) {
		t.Fatalf("%d lines for %d events: blank lines in the file", lines, len(evs))
	}
	return evs
}

// checkValidate runs transcript.Validate on path and fails on any error
// about lines, seqs or run ids (the lifecycle checks, such as run.started
// first, do not apply to these synthetic files).
func checkValidate(t testing.TB, path, runID string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep := transcript.Validate(f, transcript.ValidateOptions{RunID: runID})
	for _, is := range rep.Errors {
		switch is.Code {
		case "missing_run_started", "missing_path", "step_unclosed":
		default:
			t.Fatalf("validate: %s", is)
		}
	}
}
