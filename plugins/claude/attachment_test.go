//go:build !wasip1

package claude

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestAttachments feeds session-log attachment records (and the
// stream's memory_recall, context of the same kind) one class at a
// time and checks what each becomes: a hook that failed, blocked or
// stopped the agent a warning, text the model was given injected context,
// listings and reminders nothing (ignored), any other type unmapped by
// its type; and a tool call a PreToolUse hook blocked denied.
func TestAttachments(t *testing.T) {
	const head = `{"parentUuid":"p","isSidechain":false,"type":"attachment","uuid":"a1","timestamp":"2026-10-01T10:00:00.000Z","sessionId":"s","version":"2.1.287","cwd":"/w",`
	att := func(body string) string { return head + `"attachment":` + body + "}\n" }
	call := `{"type":"assistant","sessionId":"s","uuid":"c1","timestamp":"2026-10-01T10:00:00.000Z","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"rm -rf build"}}]}}` + "\n"
	result := func(content string, isErr bool) string {
		e := "false"
		if isErr {
			e = "true"
		}
		return `{"type":"user","sessionId":"s","uuid":"r1","timestamp":"2026-10-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":` + e + `,"content":` + content + `}]}}` + "\n"
	}
	tests := []struct {
		name     string
		input    string
		warnings []string          // each a warning's substring, in order
		injected []string          // the injected-context texts, in order
		unmapped map[string]int    // the whole unmapped table
		status   map[string]string // tool call id -> result status
	}{
		{name: "PreToolUse blocking error: warning, and the blocked call is denied",
			input: call +
				att(`{"type":"hook_blocking_error","hookName":"PreToolUse:Bash","toolUseID":"toolu_1","hookEvent":"PreToolUse","blockingError":{"blockingError":"[guard.sh]: rm -rf is not allowed","command":"guard.sh"}}`) +
				result(`"PreToolUse:Bash hook error: [guard.sh]: rm -rf is not allowed"`, true),
			warnings: []string{"hook PreToolUse:Bash blocked (exit 2): [guard.sh]: rm -rf is not allowed"},
			status:   map[string]string{"toolu_1": "denied"}},
		{name: "a tool's own error naming a hook is not a denial",
			input:  call + result(`"Exit code 1\nPostToolUse hook error: x"`, true),
			status: map[string]string{"toolu_1": "error"}},
		{name: "Stop blocking error with its reason as a string",
			input:    att(`{"type":"hook_blocking_error","hookName":"Stop","hookEvent":"Stop","blockingError":"commit first"}`),
			warnings: []string{"hook Stop blocked (exit 2): commit first"}},
		{name: "non-blocking error: exit code and stderr",
			input:    att(`{"type":"hook_non_blocking_error","hookName":"PostToolUse:Bash","toolUseID":"toolu_9","hookEvent":"PostToolUse","stderr":"Failed with non-blocking status code: curl: (7) Failed to connect","stdout":"","exitCode":7,"command":"curl -fsS http://localhost:7837","durationMs":21}`),
			warnings: []string{"hook PostToolUse:Bash failed (exit 7): Failed with non-blocking status code: curl: (7) Failed to connect"}},
		{name: "error during execution, cancelled, stopped continuation",
			input: att(`{"type":"hook_error_during_execution","content":"spawn ENOENT","hookName":"PostToolUse:Edit","toolUseID":"toolu_2","hookEvent":"PostToolUse"}`) +
				att(`{"type":"hook_cancelled","hookName":"PreToolUse:Bash","toolUseID":"toolu_3","hookEvent":"PreToolUse"}`) +
				att(`{"type":"hook_stopped_continuation","message":"Paused by supervisor","hookName":"PreToolUse:Bash","toolUseID":"toolu_4","hookEvent":"PreToolUse"}`),
			warnings: []string{"hook PostToolUse:Edit could not run: spawn ENOENT", "hook PreToolUse:Bash was cancelled", "hook PreToolUse:Bash stopped the agent: Paused by supervisor"}},
		{name: "a hook's additional context, as a list and as a string",
			input: att(`{"type":"hook_additional_context","content":["Branch: main","Open issues: 2"],"hookName":"UserPromptSubmit","toolUseID":"u","hookEvent":"UserPromptSubmit"}`) +
				att(`{"type":"hook_additional_context","content":"lint is clean","hookName":"PostToolUse:Edit","hookEvent":"PostToolUse"}`),
			injected: []string{"Branch: main", "Open issues: 2", "lint is clean"}},
		{name: "a SessionStart hook's output is context; a PostToolUse hook's is not",
			input: att(`{"type":"hook_success","hookName":"SessionStart:startup","toolUseID":"x","hookEvent":"SessionStart","content":"# Workflow Context","stdout":"# Workflow Context","stderr":"","exitCode":0,"command":"bd prime","durationMs":463}`) +
				att(`{"type":"hook_success","hookName":"PostToolUse:Bash","toolUseID":"toolu_1","hookEvent":"PostToolUse","content":"formatted","stdout":"formatted","stderr":"","exitCode":0,"command":"fmt.sh","durationMs":40}`) +
				att(`{"type":"hook_success","hookName":"SessionStart:startup","toolUseID":"y","hookEvent":"SessionStart","content":"{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\"}}","exitCode":0}`),
			injected: []string{"# Workflow Context"}},
		{name: "rendered text is what the model was given, whatever the type",
			input: strings.Replace(att(`{"type":"date"}`), `"attachment":`, `"rendered":[{"content":"<system-reminder>\nToday's date is 2026-09-30.\n</system-reminder>"}],"attachment":`, 1) +
				strings.Replace(att(`{"type":"brand_new_kind"}`), `"attachment":`, `"rendered":[{"content":"<system-reminder>\nnew\n</system-reminder>"}],"attachment":`, 1),
			injected: []string{"<system-reminder>\nToday's date is 2026-09-30.\n</system-reminder>", "<system-reminder>\nnew\n</system-reminder>"}},
		{name: "recalled memories' content is injected context; memories named by path alone are ignored",
			input: `{"type":"system","subtype":"memory_recall","mode":"synthesize","memories":[{"path":"<synthesis:/home/u/.claude/memory>","scope":"personal","content":"Prefers Bun over npm."}],"uuid":"m1","session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"memory_recall","mode":"select","memories":[{"path":"/home/u/.claude/memory/ports.md","scope":"team"}],"uuid":"m2","session_id":"s"}` + "\n",
			injected: []string{"Prefers Bun over npm."}},
		{name: "listings, reminders and IDE state are ignored",
			input: att(`{"type":"skill_listing","content":"- a skill","isInitial":true,"skillCount":1}`) +
				att(`{"type":"deferred_tools_delta","addedLines":[],"addedNames":[],"removedNames":[]}`) +
				att(`{"type":"diagnostics","files":[{"uri":"/w/main.go","diagnostics":[{"message":"x","severity":"Error"}]}],"isNew":true}`) +
				att(`{"type":"plan_mode","reminderType":"full","isSubAgent":false,"planFilePath":"/p.md","planExists":false}`)},
		{name: "memory files, invoked skills and memories recalled are injected context",
			input: att(`{"type":"nested_memory","path":"/w/src/CLAUDE.md","displayPath":"src/CLAUDE.md","content":{"path":"/w/src/CLAUDE.md","type":"Project","content":"Use tabs.","contentDiffersFromDisk":false}}`) +
				att(`{"type":"nested_memory","path":"/w/CLAUDE.md","content":"No force pushes."}`) +
				att(`{"type":"invoked_skills","skills":[{"name":"pdf","path":"projectSettings:pdf","content":"Read PDFs with pdftotext."},{"name":"lint","path":"userSettings:lint","content":"Run the linter first."}]}`) +
				att(`{"type":"relevant_memories","memories":[{"path":"/home/u/.claude/memory/ports.md","content":"The dev server listens on 8080.","mtimeMs":1}]}`),
			injected: []string{"Use tabs.", "No force pushes.", "Read PDFs with pdftotext.", "Run the linter first.", "The dev server listens on 8080."}},
		{name: "a file the user edited, selected or named, a listing, a plan, a resource, teammates' messages: context",
			input: att(`{"type":"edited_text_file","filename":"/w/main.go","snippet":"     1\tpackage main\n     2\t// edited by hand"}`) +
				att(`{"type":"selected_lines_in_ide","filename":"/w/a.go","lineStart":3,"lineEnd":4,"content":"x := 1"}`) +
				att(`{"type":"file","filename":"/w/notes.md","displayPath":"notes.md","content":{"type":"text","file":{"filePath":"/w/notes.md","content":"# Notes","numLines":1}}}`) +
				att(`{"type":"directory","path":"/w/src","content":"a.go\nb.go","displayPath":"src"}`) +
				att(`{"type":"plan_file_reference","planFilePath":"/home/u/.claude/plans/p.md","planContent":"1. Fix the build"}`) +
				att(`{"type":"mcp_resource","server":"docs","uri":"docs://a","content":{"contents":[{"uri":"docs://a","text":"Resource text"},{"uri":"docs://b","blob":"AAAA","mimeType":"image/png"}]}}`) +
				att(`{"type":"teammate_mailbox","messages":[{"from":"team-lead","text":"Take task 2","timestamp":"2026-10-01T10:00:00Z"}]}`) +
				att(`{"type":"critical_system_reminder","content":"Never touch prod."}`) +
				att(`{"type":"async_hook_response","processId":"p1","response":{"systemMessage":"Tests passed in the background","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"coverage 81%"}}}`),
			injected: []string{"     1\tpackage main\n     2\t// edited by hand", "x := 1", "# Notes", "a.go\nb.go", "1. Fix the build", "Resource text", "Take task 2", "Never touch prod.", "Tests passed in the background", "coverage 81%"}},
		{name: "a hook's system message and the turn limit are notices",
			input: att(`{"type":"hook_system_message","content":"Run git status first","hookName":"PreToolUse:Bash","toolUseID":"toolu_1","hookEvent":"PreToolUse"}`) +
				att(`{"type":"max_turns_reached","maxTurns":10,"turnCount":11}`),
			warnings: []string{"hook PreToolUse:Bash says: Run git status first", "the agent stopped: maximum number of turns reached (10)"}},
		{name: "instruction files loaded for the model are injected context; a removal alone is ignored",
			input: att(`{"type":"instructions","files":[{"path":"/home/u/.claude/CLAUDE.md","type":"User","content":"Answer briefly."},{"path":"/w/CLAUDE.md","type":"Project","content":"Run make lint before a commit."},{"path":"/w/empty.md","type":"Project","content":""}]}`) +
				att(`{"type":"instructions","files":[],"removed":["/w/CLAUDE.md"],"changed":true}`),
			injected: []string{"Answer briefly.", "Run make lint before a commit."}},
		{name: "the repetition breaker ending a turn is a notice",
			input:    att(`{"type":"repetition_breaker","toolName":"Bash","outcome":"failure","streak":5,"cause":"identical command and error"}`),
			warnings: []string{"the repetition breaker ended the turn: Bash called 5 times in a row with the same failure (identical command and error)"}},
		{name: "the Bash output note, the batching reminder's mark and teammates shut down are ignored",
			input: att(`{"type":"bash_output_audience_note","toolUseID":"toolu_1"}`) +
				att(`{"type":"batching_reminder_sent"}`) +
				att(`{"type":"teammate_shutdown_batch","count":2}`)},
		{name: "known types with nothing for the model are ignored, not unmapped",
			input: att(`{"type":"invoked_skills","skills":[]}`) +
				att(`{"type":"file","filename":"/w/a.png","content":{"type":"image","file":{"base64":"AAAA","type":"image/png"}}}`) +
				att(`{"type":"hook_permission_decision","decision":"allow","toolUseID":"toolu_1","hookEvent":"PermissionRequest"}`) +
				att(`{"type":"output_style","style":"Explanatory"}`) +
				att(`{"type":"compact_file_reference","filename":"/w/big.go","displayPath":"big.go"}`) +
				att(`{"type":"task_status","taskId":"t1","taskType":"local_agent","status":"running","description":"scan"}`) +
				att(`{"type":"already_read_file","filename":"/w/a.go"}`) +
				att(`{"type":"prompt_snapshot"}`) + att(`{"type":"session_context"}`) + att(`{"type":"todo"}`)},
		{name: "an unknown type is unmapped by its type",
			input:    att(`{"type":"brand_new_kind","content":"x"}`) + att(`{"type":"queued_command"}`),
			unmapped: map[string]int{"attachment/brand_new_kind": 1, "attachment/queued_command": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, tt.input)
			var warnings []string
			for _, w := range out.Result.Warnings {
				if strings.HasPrefix(w, "claude: hook ") || strings.HasPrefix(w, "claude: the agent stopped") || strings.HasPrefix(w, "claude: the repetition breaker") {
					warnings = append(warnings, w)
				}
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("hook warnings %q, want %d: %q", warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d is %q, want it to hold %q", i, warnings[i], w)
				}
			}
			var injected []string
			for _, it := range out.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageUser {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					if b.Origin != transcript.OriginInjected {
						t.Errorf("user block %q has origin %q, want injected context", b.Text, b.Origin)
					}
					injected = append(injected, b.Text)
				}
			}
			if !slices.Equal(injected, tt.injected) {
				t.Errorf("injected %q, want %q", injected, tt.injected)
			}
			if got := out.Result.Unmapped; !maps.Equal(got, tt.unmapped) && len(got)+len(tt.unmapped) > 0 {
				t.Errorf("unmapped %v, want %v", got, tt.unmapped)
			}
			for id, want := range tt.status {
				if got, _ := out.ResultStatus(id); got != want {
					t.Errorf("call %s: status %q, want %q", id, got, want)
				}
			}
			if len(out.Result.Errors) != 0 {
				t.Errorf("provider errors %v, want none: a hook's outcome is not the provider's error", out.Result.Errors)
			}
		})
	}
}

// TestQueuedCommandPrompt: a message the user typed while the agent
// worked is a queued_command attachment (no user record is written for
// it). Its prompt is a string, or a list of content blocks when the
// message holds an image (peers' readers show [{"type":"text"},
// {"type":"image"}] for it); the list's text is the user's prompt, not
// an unmapped line, and the image is counted unmapped as in a user
// record. A task notification stays injected context.
func TestQueuedCommandPrompt(t *testing.T) {
	const head = `{"parentUuid":"p","isSidechain":false,"type":"attachment","uuid":"q1","timestamp":"2026-10-01T10:00:00.000Z","sessionId":"s","version":"2.1.150","cwd":"/w",`
	att := func(body string) string { return head + `"attachment":` + body + "}\n" }
	const img = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
	type text struct {
		text   string
		origin transcript.Origin
	}
	tests := []struct {
		name     string
		input    string
		want     []text
		unmapped map[string]int
	}{
		{name: "string prompt",
			input: att(`{"type":"queued_command","prompt":"also update the docs","commandMode":"prompt","origin":{"kind":"human"}}`),
			want:  []text{{"also update the docs", transcript.OriginPrompt}}},
		{name: "block list with an image: its text is the prompt",
			input:    att(`{"type":"queued_command","prompt":[{"type":"text","text":"[Image #1] match this layout"},` + img + `],"commandMode":"prompt","origin":{"kind":"human"}}`),
			want:     []text{{"[Image #1] match this layout", transcript.OriginPrompt}},
			unmapped: map[string]int{"block/image": 1}},
		{name: "block list of two texts, no commandMode",
			input: att(`{"type":"queued_command","prompt":[{"type":"text","text":"first"},{"type":"text","text":"second"}]}`),
			want:  []text{{"first", transcript.OriginPrompt}, {"second", transcript.OriginPrompt}}},
		{name: "block list of a task notification is injected context",
			input: att(`{"type":"queued_command","prompt":[{"type":"text","text":"<task-notification>\n<task-id>b1</task-id>\n</task-notification>"}],"commandMode":"task-notification"}`),
			want:  []text{{"<task-notification>\n<task-id>b1</task-id>\n</task-notification>", transcript.OriginInjected}}},
		{name: "an image alone writes nothing and is counted",
			input:    att(`{"type":"queued_command","prompt":[` + img + `],"commandMode":"prompt"}`),
			unmapped: map[string]int{"block/image": 1, "attachment/queued_command": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, tt.input)
			var got []text
			for _, it := range out.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageUser {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					got = append(got, text{b.Text, b.Origin})
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("user texts %q, want %q", got, tt.want)
			}
			if u := out.Result.Unmapped; !maps.Equal(u, tt.unmapped) && len(u)+len(tt.unmapped) > 0 {
				t.Errorf("unmapped %v, want %v", u, tt.unmapped)
			}
		})
	}
}
