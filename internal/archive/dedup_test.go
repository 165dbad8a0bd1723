package archive

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/transcript"
)

// TestFilterCountsCallIDs: the filter of a grown session's part counts
// calls and results by call id (the earlier parts', and the stream's with
// the replay), so that a call id the provider reused in a later turn is
// kept while what the plugin emits again of an earlier part is dropped;
// the versions a plugin's stream marks revised (ABI 1.13) are counted
// apart, so that one archived is dropped when emitted again (before, it
// was one call more than the parts held, and kept twice).
func TestFilterCountsCallIDs(t *testing.T) {
	// ev is "c<id>:<input>" a call, "r<id>:<output>" a result; "C" and
	// "R" are the same marked revised.
	ev := func(s string) *transcript.Event {
		id, v, _ := strings.Cut(s[1:], ":")
		var extra map[string]json.RawMessage
		if s[0] == 'C' || s[0] == 'R' {
			extra = map[string]json.RawMessage{RevisedField: json.RawMessage("true")}
		}
		if s[0] == 'c' || s[0] == 'C' {
			in, _ := json.Marshal(map[string]string{"command": v})
			return &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "bash", CallID: id, Input: in, Extra: extra}}
		}
		return &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "bash", CallID: id, Output: v, HasOutput: true, Extra: extra}}
	}
	for _, c := range []struct {
		name                    string
		rewrite, sub            bool
		archived, replayed, fed string
		kept                    string
		changed                 []string
		revised                 string // of kept, those marked revised
	}{
		{name: "held by the replay, emitted again", archived: "ca:ls ra:x", fed: "ca:ls ra:x"},
		{name: "reused after the replay", archived: "ca:ls ra:x", replayed: "ca:ls ra:x", fed: "ca:ls ra:x", kept: "ca:ls ra:x"},
		{name: "the result of a call archived unanswered", archived: "ca:ls", replayed: "ca:ls", fed: "ra:x", kept: "ra:x"},
		{name: "rewrite: reused with the same content", rewrite: true, archived: "ca:ls ra:x", fed: "ca:ls ra:x ca:ls ra:x", kept: "ca:ls ra:x"},
		{name: "a revised version the stream made, after the replay", archived: "ca:ls ra:x", replayed: "ca:ls ra:x", fed: "Ca:pwd Ra:y", kept: "Ca:pwd Ra:y", revised: "Ca:pwd Ra:y"},
		{name: "a revised version archived, emitted again", archived: "ca:ls ra:x Ca:pwd Ra:y", fed: "ca:ls ra:x Ca:pwd Ra:y"},
		{name: "a revised version archived, another after the replay", archived: "ca:ls Ca:pwd", replayed: "ca:ls Ca:pwd", fed: "Ca:id", kept: "Ca:id", revised: "Ca:id"},
		{name: "reused after a revised version archived", archived: "ca:ls ra:x Ca:pwd", replayed: "ca:ls ra:x Ca:pwd", fed: "ca:id ra:y", kept: "ca:id ra:y"},
		{name: "rewrite: both generations unchanged", rewrite: true, archived: "ca:ls ra:x ca:pwd ra:y", fed: "ca:ls ra:x ca:pwd ra:y"},
		{name: "rewrite: a call changed", rewrite: true, archived: "ca:l", fed: "ca:ls", kept: "ca:ls", changed: []string{"call a"}, revised: "ca:ls"},
		{name: "rewrite: a result changed", rewrite: true, archived: "ca:ls ra:x", fed: "ca:ls ra:y", kept: "ra:y", changed: []string{"result of a"}, revised: "ra:y"},
		{name: "rewrite: a streaming call finished, its result new", rewrite: true, archived: "ca:l", fed: "ca:ls ra:x", kept: "ca:ls ra:x", changed: []string{"call a"}, revised: "ca:ls"},
		{name: "rewrite: a revised call archived is not one more call", rewrite: true, archived: "ca:l Ca:ls", fed: "ca:ls ca:pwd", kept: "ca:pwd"},
		{name: "rewrite: a revised result archived is not one more result", rewrite: true, archived: "ca:ls ra:x Ra:y", fed: "ca:ls ra:y ca:ls ra:z", kept: "ca:ls ra:z"},
		{name: "rewrite with replay: reused", rewrite: true, archived: "ca:ls ra:x", replayed: "ca:ls ra:x", fed: "ca:ls ra:x", kept: "ca:ls ra:x"},
		{name: "sub-agent: a call answered there", sub: true, archived: "ca:ls ra:x", fed: "ca:ls ra:x"},
		{name: "sub-agent: a call unanswered there, again with its result", sub: true, archived: "ca:ls", fed: "ca:ls ra:x", kept: "ca:ls ra:x"},
		{name: "sub-agent: reused after the replay", sub: true, archived: "ca:ls ra:x", replayed: "ca:ls ra:x", fed: "ca:ls ra:x", kept: "ca:ls ra:x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newArchived()
			s.rewrite = c.rewrite
			for _, e := range strings.Fields(c.archived) {
				s.note(ev(e))
			}
			for _, e := range strings.Fields(c.replayed) {
				s.replayed(ev(e))
			}
			filter := s.filter
			if c.sub {
				filter = s.filterSubAgent
			}
			kept, revised := []string{}, []string{}
			for _, e := range strings.Fields(c.fed) {
				if out := filter(ev(e)); out != nil {
					kept = append(kept, e)
					if out.Tool().Revised() {
						revised = append(revised, e)
					}
				}
			}
			assert.Equal(t, strings.Fields(c.kept), kept)
			assert.Equal(t, c.changed, s.changed)
			assert.Equal(t, append([]string{}, strings.Fields(c.revised)...), revised, "marked revised")
		})
	}
}
