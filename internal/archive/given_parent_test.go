package archive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
)

// TestNamedSubSessions: a Factory Droid session file given by itself
// whose session_start names the session that started it
// (callingSessionId) is that session's sub-agent file (SubAgentFile),
// the session the file of that id beside it, read as a file store's
// with the store's declaration of the call (callingToolUseId, the file's
// own first line); the session's file lists it (SubAgentFiles). A
// session that names none, names itself or a key that is not a plain
// name (a path), its settings document, or a first line that is not
// JSON, is none; the session's file whose first line (its header)
// is longer than what is read of it names none either.
func TestNamedSubSessions(t *testing.T) {
	declared := []Declared{{Provider: "droid", Plugin: "droid", Store: abi.Store{
		Name: "Factory Droid sessions", Kind: abi.StoreKindTree, Pattern: "*/*.jsonl",
		Files:        []string{"*/{key}.jsonl", "*/{key}.settings.json"},
		Parent:       &abi.StoreParent{File: "*/{key}.jsonl", Member: "callingSessionId"},
		SubAgentCall: &abi.SidecarKey{File: "{stem}.jsonl", Key: "callingToolUseId"},
	}}}
	dir := filepath.Join(t.TempDir(), "sessions", "-home-me-proj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	put := func(name, first string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(first+"\n"+`{"type":"message","id":"m1"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	session := put("p.jsonl", `{"type":"session_start","id":"p"}`)
	sub := put("w.jsonl", `{"type":"session_start","id":"w","callingSessionId":"p","callingToolUseId":"toolu_1"}`)
	others := map[string]string{
		"names itself":       put("self.jsonl", `{"type":"session_start","id":"self","callingSessionId":"self"}`),
		"names a path":       put("up.jsonl", `{"type":"session_start","id":"up","callingSessionId":"../p"}`),
		"settings document":  put("w2.settings.json", `{"callingSessionId":"p"}`),
		"not JSON":           put("junk.jsonl", `not json`),
		"header not read":    put("long.jsonl", `{"type":"session_start","title":"`+strings.Repeat("x", maxParentFile)+`","callingSessionId":"p"}`),
		"names none":         session,
		"number, not a name": put("n.jsonl", `{"type":"session_start","callingSessionId":7}`),
	}
	s, ok := SubAgentFile(declared, "droid", sub)
	if !ok || s.Path != sub || s.Parent != session || s.Loc == nil || s.Loc.Kind != KindFile || s.Loc.Dir != dir {
		t.Fatalf("SubAgentFile(w.jsonl) = %+v, %v; want a file of the store in its directory, session p.jsonl", s, ok)
	}
	if got := sidecarString(dir, "w", s.Loc.SubAgentCall); got != "toolu_1" {
		t.Errorf("the call it names: %q, want toolu_1", got)
	}
	for what, p := range others {
		if s, ok := SubAgentFile(declared, "droid", p); ok {
			t.Errorf("%s: SubAgentFile = %+v, want none", what, s)
		}
	}
	if _, ok := SubAgentFile(declared, "claude", sub); ok {
		t.Error("another provider's file is a droid sub-session")
	}
	got := SubAgentFiles(declared, "droid", session, nil)
	if len(got) != 1 || got[0].Path != sub || got[0].Parent != session {
		t.Errorf("SubAgentFiles(p.jsonl) = %+v, want w.jsonl alone", got)
	}
}
