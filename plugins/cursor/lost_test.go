//go:build !wasip1

package cursor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cursor"
)

// TestIDELostBubble: a bubble the conversation's headers list whose row
// holds no record (NULL: Cursor cleaned it up, as 62 bubbles of a user's
// database reported in agentsview#1676; an empty value; text that is not
// JSON; JSON that is not an object) is left out, and the run says which
// message is lost, once, instead of reading as whole without it; the
// messages around it are kept. Rows as the host reads them (IDEQueries).
func TestIDELostBubble(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"null", `null`, "holds no record (NULL)"},
		{"empty", `""`, "holds an empty value"},
		{"not json", `"{\"bubbleId\":\"b2\",\"type\":2,\"text\":\"cut"`, "holds a value that is not JSON"},
		{"not an object", `[1]`, "holds a value that is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := strings.Join([]string{
				`{"$twasm":"source","store":"Cursor IDE","path":"state.vscdb","name":"state.vscdb","size":1,"mtime":"2026-01-01T10:01:00Z","session":"c","since":0,"cursor":1,"user_version":0,"schema_version":1}`,
				`{"$twasm":"row","table":"composer","key":"c","version":1,"row":{"id":"c","version":1,"created_ms":1767261600000,"value":{"composerId":"c","createdAt":1767261600000,"fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2},{"bubbleId":"b3","type":2}]}}}`,
				`{"$twasm":"row","table":"bubble","key":"b1","version":60,"row":{"id":"b1","pos":0,"version":60,"time_ms":1767261600000,"value":{"bubbleId":"b1","type":1,"text":"Fix the parser."}}}`,
				`{"$twasm":"row","table":"bubble","key":"b2","version":0,"row":{"id":"b2","pos":1,"version":null,"time_ms":null,"value":` + tt.value + `}}`,
				`{"$twasm":"row","table":"bubble","key":"b3","version":60,"row":{"id":"b3","pos":2,"version":60,"time_ms":1767261660000,"value":{"bubbleId":"b3","type":2,"text":"Fixed."}}}`,
			}, "\n") + "\n"
			r, err := sdktest.Run(context.Background(), cursor.Plugin, "cursor", []byte(rows))
			if err != nil {
				t.Fatal(err)
			}
			if r.SilentN != 0 {
				t.Errorf("%d raw lines accounted for by nothing: %v", r.SilentN, r.Silent)
			}
			want := "cursor: message b2 of the conversation " + tt.want + ": it is left out"
			n := 0
			for _, w := range r.Step.Warnings {
				if w == want {
					n++
				}
			}
			if n != 1 {
				t.Errorf("warnings %q: want %q once", r.Step.Warnings, want)
			}
			var texts []string
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil {
					for _, b := range m.Blocks {
						texts = append(texts, b.Text)
					}
				}
			}
			if got := strings.Join(texts, "|"); got != "Fix the parser.|Fixed." {
				t.Errorf("messages %q, want the prompt and the answer", got)
			}
		})
	}
}
