package endings

import (
	"fmt"
	"strings"

	"github.com/twasm/twasm/internal/testing/natives"
)

// The rows of issue 28's second sweep: the stores and files the first
// table left out (OpenCode's database and its export, Cursor's IDE
// database, Goose's session files, the Kimi CLI's context files).
func init() {
	formats = append(formats,
		format{Native: natives.Named("opencode"), format: "rows", render: func(evs []ev) string {
			return opencodeRows(opencodeSession(evs))
		}},
		format{Native: natives.Named("opencode"), format: "export", render: func(evs []ev) string {
			return opencodeExport(opencodeSession(evs))
		}},
		format{Native: natives.Named("cursor"), format: "ide-rows", render: cursorIDE, cannot: map[string]string{
			"error_after_answer": "a bubble states no provider error: where the IDE keeps one is in no public record or reader (the agent transcripts' turn_ended states it: row cursor)",
			"error_then_answer":  "a bubble states no provider error (as error_after_answer)",
		}},
		format{Native: natives.Named("goose"), format: "session-file", render: gooseSessionFile},
		format{Native: natives.Named("goose"), format: "cli-2024", render: gooseCLI2024, cannot: map[string]string{
			"error_after_answer": "the first Goose CLI's session file keeps the conversation alone: a provider error it printed is not in it",
			"error_then_answer":  "the first Goose CLI's session file keeps no provider error (as error_after_answer)",
		}},
		format{Native: natives.Named("kimi"), format: "context", render: kimiContext, cannot: map[string]string{
			"error_after_answer": "the context file is the model's context alone: a failed model call leaves nothing in it",
			"error_then_answer":  "the context file keeps no provider error (as error_after_answer)",
		}},
	)
}

// ocMsg is one OpenCode message as its last write left it: its info's
// members (without its ids) and its parts'.
type ocMsg struct {
	id      string
	created int64
	info    string
	parts   []ocPart
}

type ocPart struct{ id, body string }

const ocSes = "ses_3f1a2b3c4d5eFfAaBbCcDd00e2"

// opencodeSession is a situation as OpenCode's messages and parts hold
// it once written: a call's tool part changed in place to its outcome;
// a failed response a message with its error and the parts it wrote
// before it failed (its step's start, the text it had streamed; no
// step-finish), so the message's info, error included, is on several
// rows.
func opencodeSession(evs []ev) []ocMsg {
	var msgs []ocMsg
	callAt := -1
	const callIn = `"input":{"command":"cat missing.txt","description":"Read it"}`
	for i, e := range evs {
		i++
		asst := func(extra string) string {
			return fmt.Sprintf(`"role":"assistant","time":{"created":%d,"completed":%d},"parentID":"msg_01","modelID":"claude-sonnet-4-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}%s`, ms(i), ms(i), extra)
		}
		id := fmt.Sprintf("msg_%02d", i)
		pid := func(n int) string { return fmt.Sprintf("prt_%02d%c", i, 'a'+n) }
		step := ocPart{pid(0), `"type":"step-start","snapshot":"5d36aa035d4df6edb73a68058733063258114ed5"`}
		finish := func(reason string) ocPart {
			return ocPart{pid(2), `"type":"step-finish","reason":"` + reason + `","snapshot":"5d36aa035d4df6edb73a68058733063258114ed5","cost":0.001,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}`}
		}
		switch e.k {
		case prompt:
			msgs = append(msgs, ocMsg{id, ms(i), fmt.Sprintf(`"role":"user","time":{"created":%d},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}`, ms(i)),
				[]ocPart{{pid(0), `"type":"text","text":` + q(e.text)}}})
		case answer:
			msgs = append(msgs, ocMsg{id, ms(i), asst(`,"finish":"stop"`), []ocPart{step, {pid(1), `"type":"text","text":` + q(e.text)}, finish("stop")}})
		case call:
			callAt = len(msgs)
			msgs = append(msgs, ocMsg{id, ms(i), asst(`,"finish":"tool-calls"`), []ocPart{step,
				{pid(1), fmt.Sprintf(`"type":"tool","tool":"bash","callID":%q,"state":{"status":"running",%s,"time":{"start":%d}}`, e.text, callIn, ms(i))}, finish("tool-calls")}})
		case resultOK, failed:
			state := fmt.Sprintf(`{"status":"completed",%s,"output":%s,"title":"cat missing.txt","metadata":{"output":%s,"exit":0},"time":{"start":%d,"end":%d}}`, callIn, q(e.text), q(e.text), msgs[callAt].created, ms(i))
			if e.k == failed {
				state = fmt.Sprintf(`{"status":"error",%s,"error":%s,"time":{"start":%d,"end":%d}}`, callIn, q(e.text), msgs[callAt].created, ms(i))
			}
			p := &msgs[callAt].parts[1]
			p.body = fmt.Sprintf(`"type":"tool","tool":"bash","callID":%q,"state":%s`, callID, state)
		case provErr:
			msgs = append(msgs, ocMsg{id, ms(i), asst(`,"error":{"name":"APIError","data":{"message":` + q(errMsg) + `,"statusCode":429,"isRetryable":true}}`),
				[]ocPart{step, {pid(1), `"type":"text","text":"Let me look at the test"`}}})
		}
	}
	return msgs
}

// opencodeRows renders msgs as the host hands OpenCode's database over
// for twasm sync: a facts line, the session's row, then one row per
// part joined with its message's info.
func opencodeRows(msgs []ocMsg) string {
	var b strings.Builder
	b.WriteString(`{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":409600,"mtime":"2026-03-01T10:05:00Z","session":"` + ocSes + `","since":0,"cursor":1772359260000,"user_version":0,"schema_version":41,"query_sha256":"0000000000000000000000000000000000000000000000000000000000000000"}` + "\n")
	b.WriteString(`{"$twasm":"row","table":"session","key":"` + ocSes + `","version":1772359260000,"row":{"id":"` + ocSes + `","project_id":"4b0ea68d","parent_id":null,"slug":"calm-river","directory":"/w","title":"Fix the test","version":"1.2.15","share_url":null,"summary_additions":null,"summary_deletions":null,"summary_files":null,"summary_diffs":null,"revert":null,"permission":null,"time_created":1772359200000,"time_updated":1772359260000,"time_compacting":null,"time_archived":null}}` + "\n")
	for _, m := range msgs {
		for _, p := range m.parts {
			fmt.Fprintf(&b, `{"$twasm":"row","table":"part","key":%q,"version":%d,"row":{"key":%q,"version":%d,"message_id":%q,"message_time_created":%d,"message_time_updated":%d,"message":{%s},"id":%q,"time_created":%d,"time_updated":%d,"data":{%s}}}`+"\n",
				p.id, m.created, p.id, m.created, m.id, m.created, m.created, m.info, p.id, m.created, m.created, p.body)
		}
	}
	return b.String()
}

// opencodeExport renders msgs as `opencode export` prints the session:
// {info, messages: [{info, parts}]}, on one line (the SDK reassembles
// the pretty-printed document into one).
func opencodeExport(msgs []ocMsg) string {
	var ms []string
	for _, m := range msgs {
		var ps []string
		for _, p := range m.parts {
			ps = append(ps, fmt.Sprintf(`{"id":%q,"sessionID":%q,"messageID":%q,%s}`, p.id, ocSes, m.id, p.body))
		}
		ms = append(ms, fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,%s},"parts":[%s]}`, m.id, ocSes, m.info, strings.Join(ps, ",")))
	}
	return `{"info":{"id":"` + ocSes + `","slug":"calm-river","projectID":"4b0ea68d","directory":"/w","title":"Fix the test","version":"1.18.18","time":{"created":1772359200000,"updated":1772359260000}},"messages":[` + strings.Join(ms, ",") + `],"todos":[]}` + "\n"
}

// cursorIDE renders a situation as the host hands Cursor's global
// state.vscdb over (table cursorDiskKV: the composer, then its bubbles
// in the order of its headers): a call and its outcome are one bubble,
// its toolFormerData's status loading until the call ends.
func cursorIDE(evs []ev) string {
	var bubbles, headers []string
	callAt := -1
	for i, e := range evs {
		i++
		id := fmt.Sprintf("b%d", i)
		bubble := func(typ int, body string) string {
			return fmt.Sprintf(`{"$twasm":"row","table":"bubble","key":%q,"version":%d,"row":{"id":%q,"pos":%d,"version":%d,"time_ms":%d,"value":{"_v":3,"bubbleId":%q,"type":%d,"createdAt":%q%s}}}`, id, 100+i, id, len(bubbles), 100+i, ms(i), id, typ, ts(i), body)
		}
		tool := func(status, result string) string {
			return fmt.Sprintf(`,"text":"","modelInfo":{"modelName":"claude-4.5-sonnet"},"tokenCount":{"inputTokens":10,"outputTokens":5},"toolFormerData":{"toolCallId":%q,"name":"run_terminal_cmd","rawArgs":"{\"command\":\"cat missing.txt\"}","status":%q%s}`, callID, status, result)
		}
		switch e.k {
		case prompt:
			bubbles = append(bubbles, bubble(1, `,"text":`+q(e.text)))
			headers = append(headers, fmt.Sprintf(`{"bubbleId":%q,"type":1}`, id))
		case answer:
			bubbles = append(bubbles, bubble(2, `,"text":`+q(e.text)+`,"modelInfo":{"modelName":"claude-4.5-sonnet"},"tokenCount":{"inputTokens":10,"outputTokens":5}`))
			headers = append(headers, fmt.Sprintf(`{"bubbleId":%q,"type":2}`, id))
		case call:
			callAt = len(bubbles)
			bubbles = append(bubbles, bubble(2, tool("loading", "")))
			headers = append(headers, fmt.Sprintf(`{"bubbleId":%q,"type":2}`, id))
		case resultOK, failed:
			// The call's bubble as Cursor wrote it again once the call
			// ended: its status and its result.
			status, code := "completed", 0
			if e.k == failed {
				status, code = "error", 1
			}
			old := bubbles[callAt]
			cut := strings.Index(old, `,"text":""`)
			bubbles[callAt] = old[:cut] + tool(status, fmt.Sprintf(`,"result":%s`, q(fmt.Sprintf(`{"output":%s,"exitCode":%d}`, q(e.text), code)))) + "}}}"
		}
	}
	last := ms(len(evs))
	return `{"$twasm":"source","store":"Cursor IDE","path":"state.vscdb","name":"state.vscdb","size":20480,"mtime":"2026-03-01T10:01:00Z","session":"c-e1","since":0,"cursor":1,"user_version":0,"schema_version":2,"query_sha256":"0000000000000000000000000000000000000000000000000000000000000000"}` + "\n" +
		fmt.Sprintf(`{"$twasm":"row","table":"composer","key":"c-e1","version":%d,"row":{"id":"c-e1","version":%d,"created_ms":%d,"value":{"_v":3,"composerId":"c-e1","name":"Fix the test","createdAt":%d,"lastUpdatedAt":%d,"modelConfig":{"modelName":"claude-4.5-sonnet","maxMode":false},"fullConversationHeadersOnly":[%s]}}}`, last, last, ms(0), ms(0), last, strings.Join(headers, ",")) + "\n" +
		strings.Join(bubbles, "\n") + "\n"
}

// gooseContent is a situation's event as a Goose message's role and
// content items (sessions.db's content_json, a session file's content).
func gooseContent(e ev) (role, content string) {
	switch e.k {
	case prompt:
		return "user", `{"type":"text","text":` + q(e.text) + `}`
	case answer:
		return "assistant", `{"type":"text","text":` + q(e.text) + `}`
	case call:
		return "assistant", `{"type":"toolRequest","id":"` + e.text + `","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"cat missing.txt"}}}}`
	case resultOK, failed:
		return "user", fmt.Sprintf(`{"type":"toolResponse","id":%q,"toolResult":{"status":"success","value":{"content":[{"type":"text","text":%s}],"isError":%t}}}`, callID, q(e.text), e.k == failed)
	case provErr:
		return "assistant", `{"type":"text","text":` + q("Ran into this error: "+errMsg+".\n\nPlease retry if you think this is a transient or recoverable error.") + `}`
	}
	return "", ""
}

// gooseSessionFile renders a Goose session file of before sessions.db
// (<id>.jsonl): a metadata line, then one message a line.
func gooseSessionFile(evs []ev) string {
	head := []string{
		`{"$twasm":"source","store":"Goose session files (before sessions.db)","path":"20260301_2.jsonl","name":"20260301_2.jsonl","size":2048,"mtime":"2026-03-01T10:01:00Z"}`,
		`{"working_dir":"/w","description":"Fix the test","schedule_id":null,"project_id":null,"message_count":4,"total_tokens":100,"input_tokens":80,"output_tokens":20,"accumulated_total_tokens":100,"accumulated_input_tokens":80,"accumulated_output_tokens":20}`,
	}
	return lines(head, evs, func(i int, e ev) string {
		role, content := gooseContent(e)
		return fmt.Sprintf(`{"id":null,"role":%q,"created":%d,"content":[%s]}`, role, ms(i)/1000, content)
	})
}

// gooseCLI2024 renders a session file of the first Goose CLI (late
// 2024, ~/.config/goose/sessions): messages alone, their content items
// untyped.
func gooseCLI2024(evs []ev) string {
	head := []string{`{"$twasm":"source","store":"Goose CLI session files (2024)","path":"calm-otter.jsonl","name":"calm-otter.jsonl","size":1500,"mtime":"2026-03-01T10:01:00Z"}`}
	return lines(head, evs, func(i int, e ev) string {
		msg := func(role, content string) string {
			return fmt.Sprintf(`{"role":%q,"created":%d,"content":[%s]}`, role, ms(i)/1000, content)
		}
		switch e.k {
		case prompt:
			return msg("user", `{"text":`+q(e.text)+`}`)
		case answer:
			return msg("assistant", `{"text":`+q(e.text)+`}`)
		case call:
			return msg("assistant", `{"id":"`+e.text+`","tool_name":"developer__shell","arguments":{"command":"cat missing.txt"}}`)
		case resultOK:
			return msg("user", fmt.Sprintf(`{"id":%q,"tool_result":%s}`, callID, q(`[{"type":"text","text":`+q(e.text)+`}]`)))
		case failed:
			return msg("user", fmt.Sprintf(`{"id":%q,"tool_result":%s}`, callID, q(`{"error": "Execution failed: `+e.text+`"}`)))
		}
		return ""
	})
}

// kimiContext renders a Kimi CLI context file of before 0.59
// (sessions/<work dir hash>/<session uuid>.jsonl): the model's context,
// one message a line, among checkpoints.
func kimiContext(evs []ev) string {
	head := []string{`{"$twasm":"source","store":"Kimi CLI context files (before 0.59)","path":"0d8f0b6c1e2a3b4c5d6e7f8091a2b3c4/3f6c2a1e-8b7d-4c5e-9a0f-0000000000e1.jsonl","name":"3f6c2a1e-8b7d-4c5e-9a0f-0000000000e1.jsonl","size":2048,"mtime":"2026-03-01T10:01:00Z"}`}
	return lines(head, evs, func(i int, e ev) string {
		check := fmt.Sprintf(`{"role": "_checkpoint", "id": %d}`+"\n", i)
		switch e.k {
		case prompt:
			return check + `{"role":"user","content":` + q(e.text) + `}`
		case answer:
			return check + `{"role":"assistant","content":[{"type":"text","text":` + q(e.text) + `}]}` + "\n" + `{"role": "_usage", "token_count": 8000}`
		case call:
			return check + `{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"` + e.text + `","function":{"name":"Shell","arguments":"{\"command\": \"cat missing.txt\"}"}}]}`
		case resultOK:
			return `{"role":"tool","content":[{"type":"text","text":"<system>Command executed successfully.</system>"},{"type":"text","text":` + q(e.text) + `}],"tool_call_id":"` + callID + `"}`
		case failed:
			return `{"role":"tool","content":[{"type":"text","text":"<system>ERROR: Command failed with exit code: 1.</system>"},{"type":"text","text":` + q(e.text) + `}],"tool_call_id":"` + callID + `"}`
		}
		return ""
	})
}
