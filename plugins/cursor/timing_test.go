//go:build !wasip1

package cursor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cursor"
)

// TestIDEBubbleTimes: a message is dated by its bubble's own time, its
// createdAt, else its timingInfo (an older Cursor's inline bubbles have
// no createdAt; their timingInfo holds clientStartTime ... clientEndTime
// in epoch milliseconds): an answer's end, a user's start; a relative
// value is none, and a bubble stating no time is left for the host to
// date from its row (the composer's createdAt). Written for the test
// from the shape public readers of state.vscdb document.
func TestIDEBubbleTimes(t *testing.T) {
	tests := []struct {
		name, bubble, want string
	}{
		{"answer's end", `{"type":2,"bubbleId":"a","text":"done","timingInfo":{"clientStartTime":1731798730100,"clientSettleTime":1731798741000,"clientEndTime":1731798741200}}`, "2024-11-16T23:12:21.200Z"},
		{"answer settled", `{"type":2,"bubbleId":"a","text":"done","timingInfo":{"clientStartTime":1731798730100,"clientSettleTime":1731798741000}}`, "2024-11-16T23:12:21.000Z"},
		{"user's start", `{"type":1,"bubbleId":"u","text":"go","timingInfo":{"clientStartTime":1731798730000,"clientEndTime":1731798741200}}`, "2024-11-16T23:12:10.000Z"},
		{"createdAt first", `{"type":2,"bubbleId":"a","text":"done","createdAt":"2025-01-02T03:04:05.678Z","timingInfo":{"clientEndTime":1731798741200}}`, "2025-01-02T03:04:05.678Z"},
		{"relative clock", `{"type":2,"bubbleId":"a","text":"done","timingInfo":{"clientStartTime":12345.5}}`, ""},
		{"none", `{"type":2,"bubbleId":"a","text":"done"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := `{"$twasm":"source","store":"Cursor IDE","path":"state.vscdb","name":"state.vscdb","size":1,"mtime":"2024-11-18T01:30:00Z","session":"c","since":0,"cursor":1,"user_version":0,"schema_version":1}` + "\n" +
				`{"$twasm":"row","table":"composer","key":"c","version":1,"row":{"id":"c","version":1,"created_ms":1731798728424,"value":{"composerId":"c","createdAt":1731798728424,"conversation":[` + tt.bubble + `]}}}` + "\n"
			r, err := sdktest.Run(context.Background(), cursor.Plugin, "cursor", []byte(rows))
			if err != nil {
				t.Fatal(err)
			}
			got := "(no message)"
			for _, e := range r.Events {
				if e.Event.Message() != nil {
					got = e.Event.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z")
				}
			}
			if strings.HasPrefix(got, "1970-") { // no time of its own: the host dates it
				got = ""
			}
			if got != tt.want {
				t.Errorf("time %q, want %q", got, tt.want)
			}
		})
	}
}
