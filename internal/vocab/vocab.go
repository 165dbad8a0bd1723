package vocab

import (
	"fmt"
	"strings"
)

// TimeLayout is the layout of every timestamp in a transcript: RFC 3339,
// UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// BlockType reports whether s is one of the content block types (spec
// section 5).
func BlockType(s string) bool {
	switch s {
	case "text", "thinking", "tool_use", "tool_result", "command", "stream":
		return true
	}
	return false
}

// ToolKind reports whether s is empty (unset) or one of the tool kinds of
// the Agent Client Protocol.
func ToolKind(s string) bool {
	switch s {
	case "", "execute", "read", "edit", "search", "fetch", "think", "other":
		return true
	}
	return false
}

// Status reports whether s is empty or a step status: ok, error,
// incomplete or cancelled.
func Status(s string) bool {
	switch s {
	case "", "ok", "error", "incomplete", "cancelled":
		return true
	}
	return false
}

// Path reports whether p follows the path grammar: "" (run events) or
// dot-separated segments ("review", "fanout.branch_a", "per_file.lint"),
// each non-empty and free of whitespace and control characters. Loop and
// retry indexes are not part of the path: they are the iteration field.
func Path(p string) bool {
	if p == "" {
		return true
	}
	// Byte by byte, without splitting: every event is checked on the
	// recorder's hot path. Bytes of multi-byte runes are >= 0x80, so only
	// ASCII spaces, controls and DEL are refused.
	seg := 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '.':
			if seg == 0 {
				return false
			}
			seg = 0
		case c <= ' ' || c == 0x7f:
			return false
		default:
			seg++
		}
	}
	return seg > 0
}

// ToolStatus maps a tool status word that older writers (and providers)
// used to the closed set (ok, error, denied, cancelled): completed and
// success are ok, failed is error, declined and rejected are denied,
// interrupted, aborted and timed out are cancelled. ok is false for a
// word it does not know.
func ToolStatus(s string) (status string, ok bool) {
	switch strings.ToLower(s) {
	case "ok", "completed", "complete", "success", "succeeded", "successful", "done":
		return "ok", true
	case "error", "failed", "failure", "errored":
		return "error", true
	case "denied", "declined", "rejected", "refused", "forbidden":
		return "denied", true
	case "cancelled", "canceled", "interrupted", "aborted", "timeout", "timed_out", "timedout", "killed", "stopped":
		return "cancelled", true
	}
	return "", false
}

// StepPath says what is wrong with a step path given from outside
// (`twasm record --path`, `twasm run begin --path`), "" when nothing is:
// it must follow [Path] and not be empty, and it may hold no file path
// separator ('/', '\'), because a step's path also names its raw capture
// files.
func StepPath(path string) string {
	switch {
	case path == "":
		return "empty step path"
	case !Path(path):
		return fmt.Sprintf("step path %q: want dot-separated names, none empty, without whitespace or control characters", path)
	case strings.ContainsAny(path, `/\`):
		return fmt.Sprintf(`step path %q: '/' and '\' are not allowed (the path names files); use '.' between names`, path)
	}
	return ""
}
