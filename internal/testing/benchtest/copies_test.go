package benchtest

import (
	"strings"
	"testing"
)

// TestCopies: the first copy is the corpus; a later one has its own
// ids, each reference to an id the same as the id, the session's id
// untouched.
func TestCopies(t *testing.T) {
	one := `{"type":"assistant","session_id":"s1","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1"}]},"uuid":"u1","parentUuid":"u0"}` + "\n" +
		`{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}` + "\n"
	c := NewCopies([]byte(one))
	if got := string(c.Append(nil, 0)); got != one {
		t.Errorf("copy 0 = %q, want the corpus", got)
	}
	want := strings.NewReplacer(`"msg_1"`, `"msg_1~7"`, `"toolu_1"`, `"toolu_1~7"`, `"u1"`, `"u1~7"`, `"u0"`, `"u0~7"`).Replace(one)
	if got := string(c.Append([]byte("x"), 7)); got != "x"+want {
		t.Errorf("copy 7 = %q, want %q", got, "x"+want)
	}
	if c.Len() != len(one) {
		t.Errorf("Len = %d, want %d", c.Len(), len(one))
	}
}
