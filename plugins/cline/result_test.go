//go:build !wasip1

package cline

import "testing"

// TestParseTextResult reads the headers Cline and Roo Code write above a
// tool's output, including Roo's that run over several lines or say more
// than "for 'x'" (new_task, switch_mode, a multi-line command).
func TestParseTextResult(t *testing.T) {
	for _, c := range []struct {
		in, name, body string
		ok             bool
	}{
		{"[read_file for 'a.go'] Result:\npackage a", "read_file", "package a", true},
		{"[attempt_completion] Result:", "attempt_completion", "", true},
		{"[list_files for '.'] Result: a b", "list_files", "a b", true},
		{"[new_task in 💻 Code mode: 'Write\nthe tests'] Result:\nSuccessfully created", "new_task", "Successfully created", true},
		{"[switch_mode to 'debug' because: it fails] Result:", "switch_mode", "", true},
		{"[execute_command for 'go test\n./...'] Result:\nExit code: 1", "execute_command", "Exit code: 1", true},
		{"[new_task completed] Result: Added parser_test.go.", "", "", false}, // the sub-task's report
		{"[WIP] fix the parser", "", "", false},
		{"[] Result: x", "", "", false},
		{"[read_file", "", "", false},
		{"[a.b] Result: x", "", "", false},
		{"plain text", "", "", false},
	} {
		name, body, ok := parseTextResult(c.in)
		if name != c.name || body != c.body || ok != c.ok {
			t.Errorf("parseTextResult(%q) = %q, %q, %v; want %q, %q, %v", c.in, name, body, ok, c.name, c.body, c.ok)
		}
	}
}
