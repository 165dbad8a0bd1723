//go:build !wasip1

package crush_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
)

// TestSummaryMessage: Crush 0.13 (charmbracelet/crush d7619a5c0) marks
// the message holding a summary of the conversation with
// is_summary_message; Crush 0.1 to 0.12 marked it only by the session's
// summary_message_id, and the migration that added is_summary_message
// set it 0 on every message already there, those summaries included.
// Either mark is the summary's warning; a session naming none has none.
func TestSummaryMessage(t *testing.T) {
	session := func(summary string) string {
		return `{"$twasm":"row","table":"sessions","key":"s","version":1,"row":{"id":"s","parent_session_id":null,"title":"t","message_count":3,"prompt_tokens":0,"completion_tokens":0,"cost":0,"updated_at":1,"created_at":1,"summary_message_id":` + summary + `}}`
	}
	msg := func(id, role, flag string) string {
		return `{"$twasm":"row","table":"messages","key":"` + id + `","version":1,"row":{"time_ms":1000,"id":"` + id + `","session_id":"s","role":"` + role + `","parts":[{"type":"text","data":{"text":"x"}}],"model":"m","provider":"p","created_at":1,"updated_at":1,"finished_at":1` + flag + `}}`
	}
	tests := []struct {
		name  string
		lines []string
		want  bool
	}{
		{"0.13 on: is_summary_message", []string{session("null"), msg("m1", "user", `,"is_summary_message":0`), msg("m2", "assistant", `,"is_summary_message":1`)}, true},
		{"before 0.13: the session's summary_message_id", []string{session(`"m2"`), msg("m1", "user", ""), msg("m2", "assistant", "")}, true},
		{"rows the migration set 0", []string{session(`"m2"`), msg("m1", "user", `,"is_summary_message":0`), msg("m2", "assistant", `,"is_summary_message":0`)}, true},
		{"no summary", []string{session("null"), msg("m1", "user", ""), msg("m2", "assistant", "")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, crush.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "crush"})
			got := strings.Contains(strings.Join(o.Result.Warnings, "|"), "the conversation was summarized here")
			if got != tt.want {
				t.Errorf("summary warning %v, want %v (warnings %q)", got, tt.want, o.Result.Warnings)
			}
		})
	}
}
