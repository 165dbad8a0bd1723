package cline

import (
	"strings"
	"unicode/utf8"
)

// xmlTools are the tools older Cline and Roo Code called with XML tags
// in the model's text (<read_file><path>x</path></read_file>): a tag of
// another name is text.
var xmlTools = map[string]bool{
	"execute_command": true, "read_file": true, "write_to_file": true, "replace_in_file": true,
	"apply_diff": true, "insert_content": true, "search_and_replace": true, "search_files": true,
	"list_files": true, "list_code_definition_names": true, "browser_action": true, "use_mcp_tool": true,
	"access_mcp_resource": true, "ask_followup_question": true, "attempt_completion": true,
	"plan_mode_respond": true, "new_task": true, "load_mcp_documentation": true, "web_fetch": true,
	"web_search": true, "switch_mode": true, "fetch_instructions": true, "codebase_search": true,
	"update_todo_list": true, "condense": true, "summarize_task": true, "report_bug": true, "new_rule": true,
}

// xmlUse is one XML tool call in a text: bytes [start, end) of it.
type xmlUse struct {
	start, end int
	name       string
	params     [][2]string
}

// xmlToolUses finds the XML tool calls in s: an opening tag of a known
// tool at the start of a line, up to its closing tag (or the end of the
// text, for a response cut short), with its parameters.
func xmlToolUses(s string) []xmlUse {
	var out []xmlUse
	pos := 0
	for pos < len(s) {
		i := strings.IndexByte(s[pos:], '<')
		if i < 0 {
			break
		}
		i += pos
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		name := s[i+1 : i+j]
		atLine := i == 0 || s[i-1] == '\n'
		if !atLine || !xmlTools[name] {
			pos = i + 1
			continue
		}
		bodyStart := i + j + 1
		closeTag := "</" + name + ">"
		end := len(s)
		body := s[bodyStart:]
		if k := strings.Index(body, closeTag); k >= 0 {
			body = body[:k]
			end = bodyStart + k + len(closeTag)
		}
		out = append(out, xmlUse{start: i, end: end, name: name, params: xmlParams(body)})
		pos = end
	}
	return out
}

// xmlParams reads <name>value</name> pairs (the value as written, one
// outer newline trimmed each side).
func xmlParams(body string) [][2]string {
	var out [][2]string
	pos := 0
	for pos < len(body) {
		i := strings.IndexByte(body[pos:], '<')
		if i < 0 {
			break
		}
		i += pos
		j := strings.IndexByte(body[i:], '>')
		if j < 0 {
			break
		}
		name := body[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, " /<\n") {
			pos = i + 1
			continue
		}
		vs := i + j + 1
		k := strings.Index(body[vs:], "</"+name+">")
		if k < 0 {
			out = append(out, [2]string{name, trimNL(body[vs:])})
			break
		}
		out = append(out, [2]string{name, trimNL(body[vs : vs+k])})
		pos = vs + k + len(name) + 3
	}
	return out
}

func trimNL(s string) string {
	s = strings.TrimPrefix(s, "\n")
	return strings.TrimSuffix(s, "\n")
}

// param returns the value of parameter name.
func (u xmlUse) param(name string) (string, bool) {
	for _, p := range u.params {
		if p[0] == name {
			return p[1], true
		}
	}
	return "", false
}

// inputJSON is the call's parameters as a JSON object of strings (a
// parameter given twice: the first).
func (u xmlUse) inputJSON() string {
	b := []byte{'{'}
	seen := map[string]bool{}
	for _, p := range u.params {
		if seen[p[0]] {
			continue
		}
		seen[p[0]] = true
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendQuoted(b, p[0])
		b = append(b, ':')
		b = appendQuoted(b, p[1])
	}
	return string(append(b, '}'))
}

// appendQuoted appends s as a JSON string (invalid UTF-8 replaced).
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			// utf8.AppendRune, not string(r): TinyGo allocates the
			// string of each rune.
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
