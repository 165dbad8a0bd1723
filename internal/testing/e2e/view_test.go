package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestViewShowsJSONAnswer: the answer of Claude's --output-format json
// (a result object and no message stream) is in the view.
func TestViewShowsJSONAnswer(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	for _, in := range []string{"json_result.json", "json_pretty_result.json"} {
		b, err := os.ReadFile(golden("claude", in))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Result string `json:"result"`
		}
		_ = jsonUnmarshal(b, &res)
		id := recordID(t, storage, "claude", golden("claude", in))
		out := twasmOK(t, "--storage", storage, "view", id).out
		first := strings.SplitN(strings.TrimSpace(res.Result), "\n", 2)[0]
		if first == "" || !strings.Contains(out, first) {
			t.Errorf("%s: the answer %q is not in the view:\n%s", in, first, out)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
