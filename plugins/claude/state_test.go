package claude

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/plugintest"
)

// TestStateBounded feeds streams in which one message id keeps coming
// back with new text blocks, and checks that every block is written while
// the state the plugin keeps for the message does not grow with the
// number of blocks: text and thinking blocks written from a snapshot are
// counted, not kept.
func TestStateBounded(t *testing.T) {
	const n = 2000
	partial := func(ev string) string {
		return `{"type":"stream_event","event":` + ev + `,"parent_tool_use_id":null,"session_id":"s"}`
	}
	tests := []struct {
		name string
		// lines of the i-th repetition; each writes the text "part i"
		// once (and "thought i" for thinking).
		lines    func(i int) []string
		thinking bool
	}{
		{"closed message comes back", func(i int) []string {
			return []string{
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_R","role":"assistant","content":[{"type":"text","text":"part %d"}]},"parent_tool_use_id":null,"session_id":"s"}`, i),
				fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"next %d"},"parent_tool_use_id":null,"session_id":"s"}`, i),
			}
		}, false},
		{"open message keeps growing", func(i int) []string {
			return []string{
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_O","role":"assistant","content":[{"type":"thinking","thinking":"thought %d","signature":"x"},{"type":"text","text":"part %d"}]},"parent_tool_use_id":null,"session_id":"s"}`, i, i),
			}
		}, true},
		{"snapshot before its deltas, repeated", func(i int) []string {
			return []string{
				partial(`{"type":"message_start","message":{"id":"msg_S","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1}}}`),
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_S","role":"assistant","content":[{"type":"text","text":"part %d"}]},"parent_tool_use_id":null,"session_id":"s"}`, i),
				partial(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				partial(fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"part %d"}}`, i)),
				partial(`{"type":"content_block_stop","index":0}`),
				partial(`{"type":"message_stop"}`),
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw strings.Builder
			for i := range n {
				for _, l := range tt.lines(i) {
					raw.WriteString(l + "\n")
				}
			}
			var got *normalizer
			p := Plugin
			p.New = func(o abi.BeginOptions) sdk.Normalizer { got = newNormalizer(o); return got }
			out := plugintest.Run(t, p, []byte(raw.String()), normalize.Options{Provider: "claude"})
			if out.Result.FailedLines != 0 {
				t.Fatalf("failed lines %d: %q", out.Result.FailedLines, out.Result.Warnings)
			}

			seen := map[string]int{}
			for _, s := range out.Texts(plugintest.Assistant) {
				seen[s]++
			}
			for i := range n {
				want := []string{fmt.Sprintf("part %d", i)}
				if tt.thinking {
					want = append(want, fmt.Sprintf("thought %d", i))
				}
				for _, w := range want {
					if seen[w] != 1 {
						t.Fatalf("%q written %d times, want once", w, seen[w])
					}
				}
			}

			if len(got.byID) != 1 {
				t.Fatalf("%d messages kept by id, want 1", len(got.byID))
			}
			for id, m := range got.byID {
				if len(m.slots) > 2 || len(m.idx) > 1 {
					t.Errorf("message %s keeps %d slots and %d stream indexes after %d repetitions", id, len(m.slots), len(m.idx), n)
				}
			}
		})
	}
}
