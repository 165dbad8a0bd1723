package transcript

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/vocab"
)

func TestToolStatusVocabulary(t *testing.T) {
	for word, want := range map[string]string{
		"ok": StatusOK, "completed": StatusOK, "success": StatusOK, "failed": StatusError, "error": StatusError,
		"declined": StatusDenied, "rejected": StatusDenied, "denied": StatusDenied,
		"interrupted": StatusCancelled, "canceled": StatusCancelled, "timed_out": StatusCancelled, "cancelled": StatusCancelled,
	} {
		got, ok := vocab.ToolStatus(word)
		eq(t, ok, true, word)
		eq(t, got, want, word)
	}
	_, ok := vocab.ToolStatus("bogus")
	eq(t, ok, false, "bogus")
	for _, tc := range []struct {
		p    ToolPayload
		want string
	}{
		{ToolPayload{Status: "failed"}, StatusError},
		{ToolPayload{Status: "declined", Error: "no"}, StatusDenied},
		{ToolPayload{}, StatusOK},
		{ToolPayload{ExitCode: new(0)}, StatusOK},
		{ToolPayload{ExitCode: new(2)}, StatusError},
		{ToolPayload{Error: "boom"}, StatusError},
		{ToolPayload{Status: "bogus"}, StatusOK},
		{ToolPayload{Status: "bogus", Error: "x"}, StatusError},
	} {
		eq(t, ToolOutcome(&tc.p), tc.want, tc.p.Status+"/"+tc.p.Error)
	}
	eq(t, validToolStatus(""), true, "empty")
	eq(t, validToolStatus("completed"), false, "an older word is not written")
}

// TestValidateToolStatus: writers emit the closed set only; an older
// word in a file is a warning (read as its equivalent), another word an
// error.
func TestValidateToolStatus(t *testing.T) {
	_, err := AppendEvent(nil, &Event{Seq: 1, RunID: runA, Type: ToolResult, Path: "a", Timestamp: mk(0, runA, RunStarted, "", 0).Timestamp,
		Payload: &ToolPayload{Name: "x", CallID: "c", Fidelity: FidelityAgentEmitted, Status: "completed"}})
	if err == nil || !strings.Contains(err.Error(), `status "completed"`) {
		t.Fatalf("writing an older word: %v", err)
	}
	good := raw(t, goodRun(runA))
	if !bytes.Contains(good, []byte(`"type":"tool.result"`)) {
		t.Skip("the good run has no tool.result")
	}
	with := func(status string) []byte {
		var out [][]byte
		for _, line := range bytes.Split(bytes.TrimSuffix(good, []byte("\n")), []byte("\n")) {
			if bytes.Contains(line, []byte(`"type":"tool.result"`)) {
				line = bytes.Replace(line, []byte(`"fidelity":`), []byte(`"status":"`+status+`","fidelity":`), 1)
				line = bytes.Replace(line, []byte(`,"status":"ok"`), nil, 1)
			}
			out = append(out, line)
		}
		return append(bytes.Join(out, []byte("\n")), '\n')
	}
	rep := Validate(bytes.NewReader(with("failed")), ValidateOptions{RunID: runA})
	eq(t, rep.OK(), true, "an older word is not an error")
	eq(t, strings.Contains(strings.Join(codes(rep.Warnings), " "), codeToolStatusLegacy), true, "it is a warning")
	rep = Validate(bytes.NewReader(with("bogus")), ValidateOptions{RunID: runA})
	eq(t, strings.Contains(strings.Join(codes(rep.Errors), " "), codeInvalidEvent), true, "another word is an error")
}
