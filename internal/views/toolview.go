package views

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twasm/twasm/internal/linediff"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/transcript"
)

// Failed reports whether a tool status is a failure of any kind: error,
// denied, cancelled (or a word of older files that means one of them), or
// any other word that is not ok.
func Failed(status string) bool {
	if st, ok := vocab.ToolStatus(status); ok {
		return st != transcript.StatusOK
	}
	return status != ""
}

// toolIndex pairs the tool events of one run, so that the view shows each
// call once with its result beside it.
type toolIndex struct {
	calls   map[string]bool                         // call ids that have a tool.call event
	results map[string]bool                         // call ids that have a tool.result event
	answer  map[*transcript.Event]*transcript.Event // each answered call's result (transcript.PairEvents)
	shown   map[*transcript.Event]bool              // results already shown beside their call
	// old are the versions of calls and results a revised one replaces
	// (transcript.Superseded): a call is shown once, at its latest
	// version, with its latest result; paired are the results answered
	// by a call whose latest version comes after them, shown beside it.
	old, paired map[*transcript.Event]bool
}

func (v *viewer) index(n *RunNode) *toolIndex {
	if x := v.tools[n]; x != nil {
		return x
	}
	x := &toolIndex{calls: map[string]bool{}, results: map[string]bool{}, answer: transcript.PairEvents(n.run.Events), shown: map[*transcript.Event]bool{},
		old: transcript.Superseded(n.run.Events), paired: map[*transcript.Event]bool{}}
	at := map[*transcript.Event]int{}
	for i, ev := range n.run.Events {
		at[ev] = i
	}
	for c, r := range x.answer {
		if !x.old[c] && at[c] > at[r] {
			x.paired[r] = true
		}
	}
	for _, ev := range n.run.Events {
		p := ev.Tool()
		if p == nil {
			continue
		}
		switch ev.Type {
		case transcript.ToolCall:
			x.calls[p.CallID] = true
		case transcript.ToolResult:
			x.results[p.CallID] = true
		}
	}
	v.tools[n] = x
	return x
}

// take returns the result that answers call, when it is not shown yet,
// and marks it.
func (x *toolIndex) take(call *transcript.Event) *transcript.Event {
	if r := x.answer[call]; r != nil && !x.shown[r] {
		x.shown[r] = true
		return r
	}
	return nil
}

func (v *viewer) event(run *RunNode, ev *transcript.Event) {
	switch p := ev.Payload.(type) {
	case *transcript.MessagePayload:
		v.message(run, ev, p)
	case *transcript.ToolPayload:
		x := v.index(run)
		switch {
		case x.old[ev]:
			// An earlier version of a call or result revised later.
		case ev.Type == transcript.ToolCall:
			v.toolCall(ev, p, x.take(ev))
		case !x.shown[ev] && !x.paired[ev]:
			// A result whose call is not in the transcript (or came
			// after it): shown on its own.
			x.shown[ev] = true
			v.toolCall(nil, p, ev)
		}
	case *transcript.RawPayload:
		if v.show(func(o Sections) bool { return o.Errors }) {
			v.d.para(fmt.Sprintf("%s %s at seq %d: %s", v.d.strong("Unknown event"), v.d.inline(string(ev.Type)), ev.Seq,
				v.d.inline(Clip(string(p.JSON), 200))))
		}
	}
}

// when is the time of an event for a reader, in UTC: its date and time
// the first time and whenever the date changed since the last time shown
// (a saved log recorded today holds other days' times, and a session
// resumed later spans days), else HH:MM:SS.
func (v *viewer) when(ev *transcript.Event) string {
	if ev == nil || ev.Timestamp.IsZero() {
		return ""
	}
	t := ev.Timestamp.UTC()
	if day := t.Format("2006-01-02"); day != v.lastDay {
		v.lastDay = day
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("15:04:05")
}

func (v *viewer) message(run *RunNode, ev *transcript.Event, p *transcript.MessagePayload) {
	x := v.index(run)
	var parts []func()
	dialog := v.show(func(o Sections) bool { return o.Dialog })
	thinking := v.show(func(o Sections) bool { return o.Thinking })
	tools := v.show(func(o Sections) bool { return o.Tools })
	for _, b := range p.Blocks {
		switch {
		case b.Type == transcript.BlockText && b.Origin == transcript.OriginSystemPrompt && dialog:
			parts = append(parts, func() { v.d.fold("System prompt", b.Text, true) })
		case b.Type == transcript.BlockText && b.Origin == transcript.OriginInjected && dialog:
			parts = append(parts, func() { v.d.fold("Injected context", b.Text, true) })
		case b.Type == transcript.BlockText && dialog:
			parts = append(parts, func() { v.d.para(b.Text) })
		case b.Type == transcript.BlockThinking && thinking:
			parts = append(parts, func() {
				if b.Redacted {
					v.d.para("_Thinking redacted by the provider._")
					return
				}
				v.d.fold("Thinking", b.Thinking, false)
			})
		// A tool_use, command or tool_result block whose call is a
		// tool.call event is shown there, once, with its result.
		case b.Type == transcript.BlockToolUse && tools && !x.calls[b.ToolID]:
			parts = append(parts, func() {
				v.d.para(v.d.strong("Tool") + " " + v.d.inline(b.ToolName) + " " + v.d.inline("id "+b.ToolID))
				v.input(b.ToolName, "", b.ToolInput)
			})
		case b.Type == transcript.BlockToolResult && (tools || b.IsError && v.show(func(o Sections) bool { return o.Errors })) &&
			!x.calls[b.ToolID] && !x.results[b.ToolID]:
			parts = append(parts, func() {
				label := v.d.strong("Tool result") + " " + v.d.inline("id "+b.ToolID)
				if b.IsError {
					label += " · error"
				}
				v.d.para(label)
				v.output("Output", b.ToolContent)
			})
		case b.Type == transcript.BlockCommand && tools && !x.calls[b.ToolID]:
			parts = append(parts, func() { v.d.code("sh", "$ "+b.Command) })
		case b.Type == transcript.BlockStream && dialog:
			parts = append(parts, func() { v.d.para(b.Chunk) })
		case !vocab.BlockType(string(b.Type)) && v.show(func(o Sections) bool { return o.Errors }):
			parts = append(parts, func() { v.d.para(v.d.strong("Unknown block") + " " + v.d.inline(string(b.Type))) })
		}
	}
	if len(parts) == 0 {
		return
	}
	who := v.d.strong("User")
	if ev.Type == transcript.MessageAssistant {
		who = v.d.strong("Assistant")
		if p.Model != "" {
			who += " (" + v.d.inline(p.Model) + ")"
		}
	}
	if t := v.when(ev); t != "" {
		who += " · " + t
	}
	v.d.para(who)
	for _, f := range parts {
		f()
	}
}

// toolCall shows one tool call with its result beside it: a header line
// (time, name, kind, status, exit code, duration), the input as a shell
// command, a diff or JSON, then the error and the output. call or res may
// be nil (a result without its call, a call without a result).
func (v *viewer) toolCall(call *transcript.Event, p *transcript.ToolPayload, res *transcript.Event) {
	var rp *transcript.ToolPayload
	if res != nil {
		rp = res.Tool()
	}
	status := "no result"
	if rp != nil {
		status = ToolStatus(rp)
	}
	failed := rp != nil && Failed(status)
	if !v.show(func(o Sections) bool { return o.Tools || o.Errors && failed }) {
		return
	}
	head := []string{}
	if t := v.when(cmpEvent(call, res)); t != "" {
		head = append(head, t)
	}
	name := v.d.strong("Tool") + " " + v.d.inline(p.Name)
	if p.Kind != "" {
		name += " (" + string(p.Kind) + ")"
	}
	head = append(head, name, status)
	exit := p.ExitCode
	if rp != nil && rp.ExitCode != nil {
		exit = rp.ExitCode
	}
	if exit != nil {
		head = append(head, fmt.Sprintf("exit %d", *exit))
	}
	if call != nil && res != nil && !call.Timestamp.IsZero() && !res.Timestamp.IsZero() {
		if d := res.Timestamp.Sub(call.Timestamp).Milliseconds(); d > 0 {
			head = append(head, FormatDuration(d))
		}
	}
	head = append(head, v.d.inline("id "+p.CallID))
	v.d.para(strings.Join(head, " · "))
	if call != nil {
		v.input(p.Name, p.Command, p.Input)
	}
	if rp == nil {
		return
	}
	if rp.Error != "" {
		v.text(v.d.strong("Error:"), rp.Error)
	}
	if rp.Output != "" {
		v.output("Output", rp.Output)
	}
}

func cmpEvent(a, b *transcript.Event) *transcript.Event {
	if a != nil {
		return a
	}
	return b
}

// text shows a label and a text that may be long or span lines (an
// error): inline when it is one short line, else as a block, always cut
// to --max-output.
func (v *viewer) text(label, s string) {
	s = strings.TrimRight(StripEscapes(s), "\n")
	if !strings.Contains(s, "\n") && len(s) <= 200 && (v.opts.MaxOutput < 0 || len(s) <= v.opts.MaxOutput) {
		v.d.para(label + " " + v.d.inline(s))
		return
	}
	lines := strings.Count(s, "\n") + 1
	if lines > foldLines || len(s) > foldBytes {
		// The fold's summary says what it is.
		v.block(strings.Trim(StripMarkup(label), ":"), "", s)
		return
	}
	v.d.para(label)
	v.output("", s)
}

// StripMarkup drops the ** of a strong label.
func StripMarkup(s string) string { return strings.ReplaceAll(s, "**", "") }

// foldLines and foldBytes: an output longer than this is folded away
// (markdown <details>), shorter ones are shown as they are.
const (
	foldLines = 12
	foldBytes = 1200
)

// output shows a tool's output (or a long input), cut to MaxOutput bytes
// (on a rune boundary) with a note saying how much was left out, and
// folded under summary when it is long.
func (v *viewer) output(summary, s string) {
	v.block(summary, "", s)
}

// block is output with a code language.
func (v *viewer) block(summary, lang, s string) {
	s = StripEscapes(s)
	shown, note := s, ""
	if v.opts.MaxOutput >= 0 && len(s) > v.opts.MaxOutput {
		cut := v.opts.MaxOutput
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		shown = s[:cut]
		note = fmt.Sprintf("_Output truncated: %d of %d bytes shown (--max-output -1 shows all)._", cut, len(s))
	}
	lines := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if summary != "" && (lines > foldLines || len(s) > foldBytes) {
		v.d.foldCode(fmt.Sprintf("%s · %d lines, %d bytes", summary, lines, len(s)), lang, shown)
	} else {
		v.d.code(lang, shown)
	}
	if note != "" {
		v.d.para(note)
	}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// clip cuts a one-line text (an error in a heading or a table) to
// MaxOutput bytes.
func (v *viewer) clip(s string) string {
	if v.opts.MaxOutput < 0 || len(s) <= v.opts.MaxOutput {
		return s
	}
	return Clip(s, max(v.opts.MaxOutput, 1)) + fmt.Sprintf(" (%d bytes; --max-output -1 shows all)", len(s))
}

// input shows a tool call's input the way a person reads it (see
// [ToolInputView]).
func (v *viewer) input(name, command string, raw json.RawMessage) {
	switch kind, text := ToolInputView(name, command, raw); kind {
	case InputPatch:
		v.block("Patch", "diff", text)
	case InputShell:
		v.d.code("sh", "$ "+text)
	case InputEdit:
		v.block("Edit", "diff", text)
	case InputJSON:
		v.block("Input", "json", text)
	}
}

// Kinds of tool input, as [ToolInputView] reads them.
const (
	InputNone  = ""
	InputPatch = "patch" // an apply_patch patch, as a unified diff
	InputShell = "shell" // a shell command line
	InputEdit  = "edit"  // a file edit (Edit, Write, MultiEdit, file_change), as a unified diff
	InputJSON  = "json"  // anything else, indented
)

// ToolInputView says how a tool call's input reads best, and gives the
// text: a patch or a file edit as a unified diff, a shell command as its
// command line, anything else as indented JSON. Every rendering of a run
// (markdown, HTML) shows inputs the same way.
func ToolInputView(name, command string, raw json.RawMessage) (kind, text string) {
	if patch := findPatch(raw); patch != "" {
		return InputPatch, patchDiff(patch)
	}
	if command != "" {
		return InputShell, command
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		if len(raw) > 0 && string(raw) != "null" && string(raw) != `""` {
			return InputJSON, indentJSON(raw)
		}
		return InputNone, ""
	}
	if cmd := commandOf(m); cmd != "" {
		return InputShell, cmd
	}
	if d := editDiff(name, m); d != "" {
		return InputEdit, d
	}
	if len(m) > 0 {
		return InputJSON, indentJSON(raw)
	}
	return InputNone, ""
}

func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func str(m map[string]any, keys ...string) (string, bool) {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s, true
		}
	}
	return "", false
}

// commandOf finds a shell command in an input object: "command" or "cmd"
// as a string, or as an argument vector (["bash", "-lc", "script"] shows
// the script).
func commandOf(m map[string]any) string {
	if s, ok := str(m, "command", "cmd"); ok {
		return s
	}
	for _, k := range []string{"command", "cmd", "argv"} {
		arr, ok := m[k].([]any)
		if !ok || len(arr) == 0 {
			continue
		}
		var args []string
		for _, a := range arr {
			s, ok := a.(string)
			if !ok {
				return ""
			}
			args = append(args, s)
		}
		if len(args) == 3 && (args[1] == "-lc" || args[1] == "-c") {
			return args[2]
		}
		return shellJoin(args)
	}
	return ""
}

func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}!#~") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// findPatch returns an apply_patch patch ("*** Begin Patch" ...) found in
// an input: the input itself as a JSON string, one of its string fields,
// or an element of its command vector.
func findPatch(raw json.RawMessage) string {
	isPatch := func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "*** Begin Patch") }
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if isPatch(s) {
			return s
		}
		return ""
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range []string{"input", "patch", "content"} {
		if s, ok := m[k].(string); ok && isPatch(s) {
			return s
		}
	}
	for _, k := range []string{"command", "cmd"} {
		if arr, ok := m[k].([]any); ok {
			for _, a := range arr {
				if s, ok := a.(string); ok && isPatch(s) {
					return s
				}
			}
		}
	}
	return ""
}

// patchDiff turns an apply_patch patch into unified diff text: each file
// gets ---/+++ headers; hunk lines are kept as they are.
func patchDiff(patch string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(patch, "\n"), "\n") {
		switch {
		case line == "*** Begin Patch" || line == "*** End Patch" || line == "*** End of File":
		case strings.HasPrefix(line, "*** Update File: "):
			p := strings.TrimPrefix(line, "*** Update File: ")
			fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", strings.TrimPrefix(p, "/"), strings.TrimPrefix(p, "/"))
		case strings.HasPrefix(line, "*** Add File: "):
			fmt.Fprintf(&b, "--- /dev/null\n+++ b/%s\n@@ new file @@\n", strings.TrimPrefix(strings.TrimPrefix(line, "*** Add File: "), "/"))
		case strings.HasPrefix(line, "*** Delete File: "):
			fmt.Fprintf(&b, "--- a/%s\n+++ /dev/null\n@@ file deleted @@\n", strings.TrimPrefix(strings.TrimPrefix(line, "*** Delete File: "), "/"))
		case strings.HasPrefix(line, "*** Move to: "):
			fmt.Fprintf(&b, "rename to %s\n", strings.TrimPrefix(line, "*** Move to: "))
		case strings.HasPrefix(line, "@@"):
			if strings.TrimSpace(line) == "@@" {
				line = "@@ @@"
			}
			b.WriteString(line + "\n")
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// editDiff shows a file edit input as a unified diff: Edit-style
// old/new strings (Claude Edit, Gemini replace, Copilot edit), a list of
// edits (MultiEdit's; Aider's SEARCH/REPLACE blocks, search and replace,
// each naming its file when the list is not one file's), a whole file
// written (Write, write_file, create), and codex's file_change list of
// changes.
func editDiff(name string, m map[string]any) string {
	path, _ := str(m, "file_path", "path", "filename", "absolute_path", "notebook_path")
	if edits, ok := m["edits"].([]any); ok && len(edits) > 0 {
		var b strings.Builder
		last := ""
		for _, e := range edits {
			em, ok := e.(map[string]any)
			if !ok {
				return ""
			}
			p := path
			if ep, ok := str(em, "file_path", "path"); ok && ep != "" {
				p = ep
			}
			if p == "" {
				return ""
			}
			old, _ := str(em, "old_string", "old_str", "search")
			nw, _ := str(em, "new_string", "new_str", "replace")
			b.WriteString(unifiedDiff(p, old, nw, p != last))
			last = p
		}
		return b.String()
	}
	old, hasOld := str(m, "old_string", "old_str")
	nw, hasNew := str(m, "new_string", "new_str")
	if hasOld && hasNew && path != "" {
		return unifiedDiff(path, old, nw, true)
	}
	lname := strings.ToLower(name)
	if content, ok := str(m, "content", "file_text"); ok && path != "" && (strings.Contains(lname, "write") || strings.Contains(lname, "create")) {
		return "--- " + path + " (written whole)\n+++ b/" + strings.TrimPrefix(path, "/") + "\n" + unifiedBody("", content)
	}
	return changesDiff(m["changes"])
}

// changesDiff renders codex's file changes: a list of {path, kind, diff}
// or a map of path to {type, unified_diff}.
func changesDiff(v any) string {
	var b strings.Builder
	one := func(path, kind, diff string) {
		if diff != "" {
			if !strings.HasPrefix(diff, "---") {
				fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", strings.TrimPrefix(path, "/"), strings.TrimPrefix(path, "/"))
			}
			b.WriteString(strings.TrimRight(diff, "\n") + "\n")
			return
		}
		fmt.Fprintf(&b, "%s %s\n", kind, path)
	}
	switch c := v.(type) {
	case []any:
		for _, e := range c {
			em, ok := e.(map[string]any)
			if !ok {
				return ""
			}
			path, _ := str(em, "path")
			kind, _ := str(em, "kind", "type")
			diff, _ := str(em, "diff", "unified_diff")
			one(path, kind, diff)
		}
	case map[string]any:
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, path := range keys {
			em, _ := c[path].(map[string]any)
			kind, _ := str(em, "type", "kind")
			diff, _ := str(em, "unified_diff", "diff")
			if diff == "" {
				if content, ok := str(em, "content"); ok {
					diff = unifiedBody("", content)
				}
			}
			one(path, kind, diff)
		}
	}
	return b.String()
}

// unifiedDiff is the diff of one edit of path, with headers when head is
// set.
func unifiedDiff(path, old, nw string, head bool) string {
	h := ""
	if head {
		p := strings.TrimPrefix(path, "/")
		h = "--- a/" + p + "\n+++ b/" + p + "\n"
	}
	return h + unifiedBody(old, nw)
}

// diffContext is how many unchanged lines surround a change.
const diffContext = 3

// unifiedBody is the hunks turning old into new. Line numbers count from
// the start of the snippet: the file's own offset is not in the input.
func unifiedBody(old, nw string) string {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	a, b := split(old), split(nw)
	ops, ok := linediff.Ops(a, b)
	if !ok {
		// Too large to align: everything old out, everything new in.
		ops = ops[:0]
		for i := range a {
			ops = append(ops, linediff.Op{Kind: linediff.Del, A: i})
		}
		for j := range b {
			ops = append(ops, linediff.Op{Kind: linediff.Add, B: j})
		}
	}
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].Kind == linediff.Equal {
			i++
			continue
		}
		// A hunk: from diffContext lines before this change to
		// diffContext lines after the last change that follows within
		// 2*diffContext equal lines.
		start := max(i-diffContext, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].Kind != linediff.Equal {
				end = j
				continue
			}
			if j-end > 2*diffContext {
				break
			}
		}
		stop := min(end+diffContext+1, len(ops))
		aStart, bStart, aN, bN := -1, -1, 0, 0
		var body strings.Builder
		for _, op := range ops[start:stop] {
			switch op.Kind {
			case linediff.Equal:
				body.WriteString(" " + a[op.A] + "\n")
				aN++
				bN++
			case linediff.Del:
				body.WriteString("-" + a[op.A] + "\n")
				aN++
			case linediff.Add:
				body.WriteString("+" + b[op.B] + "\n")
				bN++
			}
			if aStart < 0 {
				aStart, bStart = op.A, op.B
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n%s", aStart+min(aN, 1), aN, bStart+min(bN, 1), bN, body.String())
		i = stop
	}
	return out.String()
}

// stepResult is what the footer needs from an agent step's result,
// record's invocation included.
type stepResult struct {
	transcript.AgentResult
	Command []string `json:"command"`
	Cwd     string   `json:"cwd"`
}

// footer closes a step with what its result says: status, exit code,
// warnings, lost and unmapped lines, the command that ran, the tail of
// the agent's stderr, and the final answer when no message showed it.
func (v *viewer) footer(run *RunNode, s *StepNode) {
	var done *transcript.Event
	if n := len(s.events); n > 0 && s.events[n-1].Type == transcript.StepCompleted {
		done = s.events[n-1]
	}
	if done == nil || s.Agent == nil {
		return
	}
	var r stepResult
	if sp := done.Step(); sp == nil || json.Unmarshal(sp.Result, &r) != nil {
		return
	}
	bad := r.Status != transcript.StatusOK || len(r.Warnings) > 0 || r.FailedLines > 0
	errs := v.show(func(o Sections) bool { return o.Errors })
	if v.show(func(o Sections) bool { return o.Dialog }) && r.FinalText != "" && !v.shownText(s, r.FinalText) {
		v.d.para(v.d.strong("Final answer"))
		v.d.para(r.FinalText)
	}
	if !v.opts.Only.all() && !(errs && bad) {
		return
	}
	head := []string{v.d.strong("Result:") + " " + r.Status}
	if r.ExitCode != nil {
		head = append(head, fmt.Sprintf("exit code %d", *r.ExitCode))
	}
	if d := durationString(s.DurationMS); d != "" {
		head = append(head, d)
	}
	v.d.para(strings.Join(head, " · "))
	if r.Error != "" {
		v.text(v.d.strong("Error:"), r.Error)
	}
	for _, w := range r.Warnings {
		v.d.item("warning: " + v.d.inline(v.clip(w)))
	}
	if r.FailedLines > 0 {
		v.d.item(fmt.Sprintf("%d raw line(s) lost to a plugin fault (kept in the raw capture)", r.FailedLines))
	}
	if n := 0; len(r.Unmapped) > 0 {
		for _, c := range r.Unmapped {
			n += c
		}
		var kinds []string
		for _, c := range Sorted(r.Unmapped) {
			kinds = append(kinds, fmt.Sprintf("%s %d", c.Key, c.Count))
		}
		v.d.item(fmt.Sprintf("%d unmapped line(s): %s", n, v.d.inline(strings.Join(kinds, ", "))))
	}
	if len(r.Command) > 0 {
		line := "command " + v.d.inline(shellJoin(r.Command))
		if r.Cwd != "" {
			line += " in " + v.d.inline(r.Cwd)
		}
		v.d.item(line)
	}
	v.d.para("")
	if r.Raw != nil && r.Raw.Stderr != "" {
		if tail, n := stderrTail(run.File, r.Raw.Stderr); tail != "" {
			v.d.para(v.d.strong(fmt.Sprintf("stderr (last %d lines):", n)))
			v.output("", tail)
		}
	}
}

// shownText reports whether an assistant text block of the step is text.
func (v *viewer) shownText(s *StepNode, text string) bool {
	text = strings.TrimSpace(text)
	for _, ev := range s.events {
		if p := ev.Message(); p != nil && ev.Type == transcript.MessageAssistant {
			for _, b := range p.Blocks {
				if (b.Type == transcript.BlockText || b.Type == transcript.BlockStream) && strings.TrimSpace(b.Text+b.Chunk) == text {
					return true
				}
			}
		}
	}
	return false
}

// stderrTailLines is how much of the agent's stderr the footer shows.
const stderrTailLines = 10

// stderrTail reads the last lines of a step's stderr capture: its path is
// relative to the storage root, the parent of the transcripts directory
// the run file is in.
func stderrTail(runFile, rel string) (string, int) {
	dir := filepath.Dir(runFile)
	if filepath.Base(dir) != "transcripts" || filepath.IsAbs(rel) || strings.Contains(rel, "..") {
		return "", 0
	}
	f, err := os.Open(filepath.Join(filepath.Dir(dir), filepath.FromSlash(rel)))
	if err != nil {
		return "", 0
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > stderrTailLines {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n"), len(lines)
}
