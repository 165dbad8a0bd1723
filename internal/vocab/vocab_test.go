package vocab

import "testing"

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"status empty", Status(""), true},
		{"status incomplete", Status("incomplete"), true},
		{"status unknown", Status("x"), false},
		{"path empty", Path(""), true},
		{"path nested", Path("fanout.branch_a"), true},
		{"path non-ASCII", Path("é.ü"), true},
		{"path trailing dot", Path("a."), false},
		{"path leading dot", Path(".a"), false},
		{"path tab", Path("a\tb"), false},
		{"path DEL", Path("a\x7fb"), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for word, want := range map[string]string{
		"ok": "ok", "Completed": "ok", "success": "ok", "failed": "error", "error": "error",
		"declined": "denied", "rejected": "denied", "denied": "denied",
		"interrupted": "cancelled", "canceled": "cancelled", "timed_out": "cancelled", "cancelled": "cancelled",
	} {
		if got, ok := ToolStatus(word); !ok || got != want {
			t.Errorf("ToolStatus(%q) = %q, %v; want %q", word, got, ok, want)
		}
	}
	if _, ok := ToolStatus("bogus"); ok {
		t.Error("ToolStatus(bogus) is known")
	}
}
