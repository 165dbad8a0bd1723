package endings

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twasm/twasm/internal/testing/natives"
)

// q is s as a JSON string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ts is the i-th second of a session, RFC 3339.
func ts(i int) string { return fmt.Sprintf("2026-03-01T10:00:%02d.000Z", i) }

// ms is the i-th second of a session, epoch milliseconds.
func ms(i int) int64 { return 1772359200000 + int64(i)*1000 }

// lines renders each event with line (given its index) after the
// header lines, a newline after each.
func lines(header []string, evs []ev, line func(i int, e ev) string) string {
	var b strings.Builder
	for _, h := range header {
		b.WriteString(h + "\n")
	}
	for i, e := range evs {
		if l := line(i+1, e); l != "" {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// The error a provider states, in each format's words: a rate limit.
const errMsg = "429 Too Many Requests: rate limit exceeded, retry later"

var formats = []format{
	{Native: natives.Named("claude"), render: func(evs []ev) string {
		// A Claude Code session log (~/.claude/projects/*/<session>.jsonl).
		common := `"sessionId":"e2000000-0000-4000-8000-000000000001","cwd":"/w","version":"2.1.100","isSidechain":false,"userType":"external"`
		return lines(nil, evs, func(i int, e ev) string {
			head := fmt.Sprintf(`"uuid":"x%d","timestamp":%q,%s`, i, ts(i), common)
			asst := func(content, stop string) string {
				return fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[%s],"stop_reason":%q,"usage":{"input_tokens":10,"output_tokens":5}},"requestId":"req_%d",%s}`, i, content, stop, i, head)
			}
			switch e.k {
			case prompt:
				return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":%s},%s}`, q(e.text), head)
			case answer:
				return asst(`{"type":"text","text":`+q(e.text)+`}`, "end_turn")
			case call:
				return asst(`{"type":"tool_use","id":"`+e.text+`","name":"Bash","input":{"command":"cat missing.txt"}}`, "tool_use")
			case resultOK, failed:
				return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%s,"is_error":%t}]},%s}`, callID, q(e.text), e.k == failed, head)
			case provErr:
				return fmt.Sprintf(`{"type":"system","subtype":"api_error","level":"error","error":{"status":429,"headers":{},"requestID":null,"error":{"type":"error","error":{"type":"rate_limit_error","message":%q}},"type":"rate_limit_error"},"retryInMs":600,"retryAttempt":1,"maxRetries":10,%s}`, errMsg, head)
			}
			return ""
		})
	}},
	{Native: natives.Named("codex"), render: func(evs []ev) string {
		// A Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).
		meta := `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"019a0000-0000-7000-8000-0000000000e2","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.58.0"}}`
		return lines([]string{meta}, evs, func(i int, e ev) string {
			item := func(payload string) string {
				return fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":%s}`, ts(i), payload)
			}
			switch e.k {
			case prompt:
				return item(`{"type":"message","role":"user","content":[{"type":"input_text","text":` + q(e.text) + `}]}`)
			case answer:
				return item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":` + q(e.text) + `}]}`)
			case call:
				return item(`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"missing.txt\"]}","call_id":"` + e.text + `"}`)
			case resultOK, failed:
				code := 0
				if e.k == failed {
					code = 1
				}
				out := fmt.Sprintf(`{"output":%s,"metadata":{"exit_code":%d,"duration_seconds":0.1}}`, q(e.text), code)
				return item(`{"type":"function_call_output","call_id":"` + callID + `","output":` + q(out) + `}`)
			case provErr:
				return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"error","message":%q}}`, ts(i), errMsg)
			}
			return ""
		})
	}},
	{Native: natives.Named("pi"), render: func(evs []ev) string {
		// A Pi session file (~/.pi/agent/sessions/*/<session>.jsonl).
		head := `{"type":"session","version":3,"id":"0e0e0000-0000-4000-8000-0000000000e1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/w"}`
		return lines([]string{head}, evs, func(i int, e ev) string {
			msg := func(m string) string {
				parent := "null"
				if i > 1 {
					parent = fmt.Sprintf(`"e%07d"`, i-1)
				}
				return fmt.Sprintf(`{"type":"message","id":"e%07d","parentId":%s,"timestamp":%q,"message":%s}`, i, parent, ts(i), m)
			}
			asst := func(content, stop, extra string) string {
				return msg(fmt.Sprintf(`{"role":"assistant","content":[%s],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":%q%s,"timestamp":%d}`, content, stop, extra, ms(i)))
			}
			switch e.k {
			case prompt:
				return msg(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}`, q(e.text), ms(i)))
			case answer:
				return asst(`{"type":"text","text":`+q(e.text)+`}`, "stop", "")
			case call:
				return asst(`{"type":"toolCall","id":"`+e.text+`","name":"bash","arguments":{"command":"cat missing.txt"}}`, "toolUse", "")
			case resultOK, failed:
				return msg(fmt.Sprintf(`{"role":"toolResult","toolCallId":%q,"toolName":"bash","content":[{"type":"text","text":%s}],"isError":%t,"timestamp":%d}`, callID, q(e.text), e.k == failed, ms(i)))
			case provErr:
				return asst("", "error", `,"errorMessage":`+q(errMsg))
			}
			return ""
		})
	}},
	{Native: natives.Named("qwen"), render: func(evs []ev) string {
		// A Qwen Code chat (~/.qwen/projects/*/chats/<session>.jsonl).
		return lines(nil, evs, func(i int, e ev) string {
			parent := "null"
			if i > 1 {
				parent = fmt.Sprintf(`"q%d"`, i-1)
			}
			head := fmt.Sprintf(`"uuid":"q%d","parentUuid":%s,"sessionId":"7f2c1e4a-0000-4c5e-9f61-0000000000e1","timestamp":%q,"cwd":"/w","version":"0.18.2"`, i, parent, ts(i))
			switch e.k {
			case prompt:
				return fmt.Sprintf(`{%s,"type":"user","message":{"role":"user","parts":[{"text":%s}]}}`, head, q(e.text))
			case answer:
				return fmt.Sprintf(`{%s,"type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":%s}]},"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`, head, q(e.text))
			case call:
				return fmt.Sprintf(`{%s,"type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"functionCall":{"id":%q,"name":"read_file","args":{"absolute_path":"/w/missing.txt"}}}]},"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`, head, e.text)
			case resultOK:
				return fmt.Sprintf(`{%s,"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":%q,"name":"read_file","response":{"output":%s}}}]},"toolCallResult":{"callId":%q,"status":"success","resultDisplay":%s}}`, head, callID, q(e.text), callID, q(e.text))
			case failed:
				return fmt.Sprintf(`{%s,"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":%q,"name":"read_file","response":{"error":%s}}}]},"toolCallResult":{"callId":%q,"status":"error","resultDisplay":%s}}`, head, callID, q(e.text), callID, q(e.text))
			case provErr:
				return fmt.Sprintf(`{%s,"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error","event.timestamp":%q,"model":"qwen3-coder-plus","duration_ms":300,"error_message":%q,"error_type":"RateLimitError","status_code":429}}}`, head, ts(i), errMsg)
			}
			return ""
		})
	}},
	{Native: natives.Named("gemini"), render: func(evs []ev) string {
		// A Gemini CLI session file, JSON Lines (~/.gemini/tmp/<hash>/chats/session-*.jsonl):
		// a call is recorded in its gemini record, which is written again
		// with the call's status and result once it completed.
		head := `{"sessionId":"e5e5e5e5-0000-4000-8000-0000000000e1","projectHash":"cc33dd44","startTime":"2026-03-01T10:00:00.000Z","lastUpdated":"2026-03-01T10:00:00.000Z","kind":"main"}`
		callAt := 0
		return lines([]string{head}, evs, func(i int, e ev) string {
			gem := func(id int, content, calls string) string {
				return fmt.Sprintf(`{"id":"g%d","timestamp":%q,"type":"gemini","content":%s,"model":"gemini-2.5-pro","tokens":{"input":10,"output":5,"cached":0,"thoughts":0,"tool":0,"total":15}%s}`, id, ts(id), content, calls)
			}
			tool := func(status, result string) string {
				return fmt.Sprintf(`,"toolCalls":[{"id":%q,"name":"read_file","args":{"absolute_path":"/w/missing.txt"},"status":%q,"timestamp":%q%s}]`, callID, status, ts(callAt), result)
			}
			switch e.k {
			case prompt:
				return fmt.Sprintf(`{"id":"u%d","timestamp":%q,"type":"user","content":[{"text":%s}]}`, i, ts(i), q(e.text))
			case answer:
				return gem(i, q(e.text), "")
			case call:
				callAt = i
				return gem(i, `""`, tool("executing", ""))
			case resultOK, failed:
				status, resp := "success", `"output":`+q(e.text)
				if e.k == failed {
					status, resp = "error", `"error":`+q(e.text)
				}
				return gem(callAt, `""`, tool(status, fmt.Sprintf(`,"result":[{"functionResponse":{"id":%q,"name":"read_file","response":{%s}}}],"resultDisplay":%s`, callID, resp, q(e.text))))
			case provErr:
				return fmt.Sprintf(`{"id":"x%d","timestamp":%q,"type":"error","content":%q}`, i, ts(i), errMsg)
			}
			return ""
		})
	}},
	{Native: natives.Named("copilot"), render: func(evs []ev) string {
		// A Copilot CLI session's events.jsonl (~/.copilot/session-state/<id>/events.jsonl).
		start := `{"type":"session.start","data":{"sessionId":"049410b4-0000-4000-8000-0000000000e1","version":1,"producer":"copilot-agent","copilotVersion":"1.0.78","startTime":"2026-03-01T10:00:00.000Z","context":{"cwd":"/w"}},"id":"c0","timestamp":"2026-03-01T10:00:00.000Z","parentId":null}`
		turn := 0
		return lines([]string{start}, evs, func(i int, e ev) string {
			event := func(typ, data string) string {
				return fmt.Sprintf(`{"type":%q,"data":%s,"id":"c%d","timestamp":%q,"parentId":"c%d"}`, typ, data, i, ts(i), i-1)
			}
			msg := func(content, calls string) string {
				turn++
				return event("assistant.message", fmt.Sprintf(`{"messageId":"m%d","model":"gpt-5","content":%s,"toolRequests":[%s],"interactionId":"i1","turnId":"%d"}`, i, q(content), calls, turn))
			}
			switch e.k {
			case prompt:
				return event("user.message", fmt.Sprintf(`{"content":%s,"attachments":[],"interactionId":"i1"}`, q(e.text)))
			case answer:
				return msg(e.text, "")
			case call:
				return msg("", `{"toolCallId":"`+e.text+`","name":"bash","arguments":{"command":"cat missing.txt"},"type":"function"}`)
			case resultOK:
				return event("tool.execution_complete", fmt.Sprintf(`{"toolCallId":%q,"model":"gpt-5","success":true,"result":{"content":%s}}`, callID, q(e.text)))
			case failed:
				return event("tool.execution_complete", fmt.Sprintf(`{"toolCallId":%q,"model":"gpt-5","success":false,"error":{"message":%s,"code":"failure"}}`, callID, q(e.text)))
			case provErr:
				return event("session.error", fmt.Sprintf(`{"errorType":"rate_limit","message":%q,"statusCode":429}`, errMsg))
			}
			return ""
		})
	}},
	{Native: natives.Named("amp"), render: func(evs []ev) string {
		// An Amp thread (~/.local/share/amp/threads/T-*.json), one
		// document: the messages array of the thread as Amp last wrote
		// it.
		var msgs []string
		for i, e := range evs {
			i++
			switch e.k {
			case prompt:
				msgs = append(msgs, fmt.Sprintf(`{"role":"user","messageId":%d,"content":[{"type":"text","text":%s}],"meta":{"sentAt":%d}}`, i, q(e.text), ms(i)))
			case answer, call, provErr:
				content, state := `{"type":"text","text":`+q(e.text)+`}`, `{"type":"complete","stopReason":"end_turn"}`
				switch e.k {
				case call:
					content, state = `{"type":"tool_use","id":"`+e.text+`","name":"Bash","input":{"cmd":"cat missing.txt"}}`, `{"type":"complete","stopReason":"tool_use"}`
				case provErr:
					content, state = "", `{"type":"error","error":{"message":`+q(errMsg)+`}}`
				}
				msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","messageId":%d,"content":[%s],"state":%s,"usage":{"model":"claude-sonnet-4-5","inputTokens":10,"outputTokens":5,"timestamp":%q}}`, i, content, state, ts(i)))
			case resultOK, failed:
				run := `{"status":"done","result":{"output":` + q(e.text) + `,"exitCode":0}}`
				if e.k == failed {
					run = `{"status":"error","error":{"message":` + q(e.text) + `}}`
				}
				msgs = append(msgs, fmt.Sprintf(`{"role":"user","messageId":%d,"content":[{"type":"tool_result","toolUseID":%q,"run":%s}],"meta":{"sentAt":%d}}`, i, callID, run, ms(i)))
			}
		}
		return fmt.Sprintf(`{"v":3,"id":"T-e1","created":%d,"messages":[%s]}`, ms(0), strings.Join(msgs, ",")) + "\n"
	}},
	{Native: natives.Named("kimi"), render: func(evs []ev) string {
		// A Kimi Code journal (~/.kimi-code/sessions/<work dir>/<session>/agents/main/wire.jsonl).
		head := []string{
			fmt.Sprintf(`{"type":"metadata","protocol_version":"1.5","created_at":%d}`, ms(0)),
			fmt.Sprintf(`{"type":"config.update","agentId":"main","modelAlias":"kimi-code/kimi-for-coding","cwd":"/w","time":%d}`, ms(0)),
		}
		return lines(head, evs, func(i int, e ev) string {
			loop := func(event string) string {
				return fmt.Sprintf(`{"type":"context.append_loop_event","agentId":"main","event":%s,"time":%d}`, event, ms(i))
			}
			step := func(part, stop string) string {
				return strings.Join([]string{
					loop(fmt.Sprintf(`{"type":"step.begin","uuid":"st-%d","turnId":"0","step":%d}`, i, i)),
					loop(part),
					loop(fmt.Sprintf(`{"type":"step.end","uuid":"st-%d","turnId":"0","step":%d,"usage":{"inputOther":10,"output":5,"inputCacheRead":0,"inputCacheCreation":0},"finishReason":%q,"messageId":"msg-%d"}`, i, i, stop, i)),
				}, "\n")
			}
			switch e.k {
			case prompt:
				return fmt.Sprintf(`{"type":"turn.prompt","agentId":"main","input":[{"type":"text","text":%s}],"origin":"user","time":%d}`, q(e.text), ms(i))
			case answer:
				return step(fmt.Sprintf(`{"type":"content.part","uuid":"p%d","turnId":"0","step":%d,"stepUuid":"st-%d","part":{"type":"text","text":%s}}`, i, i, i, q(e.text)), "end_turn") +
					fmt.Sprintf("\n"+`{"type":"turn.ended","agentId":"main","turnId":0,"reason":"completed","durationMs":100,"time":%d}`, ms(i))
			case call:
				return step(fmt.Sprintf(`{"type":"tool.call","uuid":"c%d","turnId":"0","step":%d,"stepUuid":"st-%d","toolCallId":%q,"name":"Bash","args":{"command":"cat missing.txt"}}`, i, i, i, e.text), "tool_use")
			case resultOK, failed:
				return loop(fmt.Sprintf(`{"type":"tool.result","toolCallId":%q,"result":{"output":%s,"isError":%t}}`, callID, q(e.text), e.k == failed))
			case provErr:
				return fmt.Sprintf(`{"type":"turn.ended","agentId":"main","turnId":0,"reason":"failed","error":{"code":"provider.rate_limit","message":%q,"retryable":true},"durationMs":100,"time":%d}`, errMsg, ms(i))
			}
			return ""
		})
	}},
	{Native: natives.Named("droid"), render: func(evs []ev) string {
		// A Factory Droid session (~/.factory/sessions/<session>.jsonl).
		head := `{"type":"session_start","id":"s-e1","title":"Fix the test","cwd":"/w"}`
		return lines([]string{head}, evs, func(i int, e ev) string {
			msg := func(role, content, extra string) string {
				return fmt.Sprintf(`{"type":"message","id":"m%d","timestamp":%q,"message":{"role":%q%s,"content":[%s]}}`, i, ts(i), role, extra, content)
			}
			switch e.k {
			case prompt:
				return msg("user", `{"type":"text","text":`+q(e.text)+`}`, "")
			case answer:
				return msg("assistant", `{"type":"text","text":`+q(e.text)+`}`, "") + "\n" +
					fmt.Sprintf(`{"type":"agent_turn_outcome","turnId":"t%d","reason":"end_turn","resultKind":"success"}`, i)
			case call:
				return msg("assistant", `{"type":"tool_use","id":"`+e.text+`","name":"Execute","input":{"command":"cat missing.txt"}}`, "")
			case resultOK, failed:
				return msg("user", fmt.Sprintf(`{"type":"tool_result","tool_use_id":%q,"content":%s,"is_error":%t}`, callID, q(e.text), e.k == failed), "")
			case provErr:
				return msg("user", `{"type":"text","text":`+q("Error: "+errMsg)+`}`, `,"visibility":"user_only"`) + "\n" +
					fmt.Sprintf(`{"type":"agent_turn_outcome","turnId":"t%d","reason":"error","resultKind":"provider_error"}`, i)
			}
			return ""
		})
	}},
	{Native: natives.Named("cursor"), render: func(evs []ev) string {
		// A Cursor agent transcript (~/.cursor/projects/<dir>/agent-transcripts/<id>/<id>.jsonl).
		head := `{"$twasm":"source","store":"Cursor agent transcripts","path":"home-me-w/agent-transcripts/9c8d7e6f-0000-4c3d-8e2f-0000000000e1/9c8d7e6f-0000-4c3d-8e2f-0000000000e1.jsonl","name":"9c8d7e6f-0000-4c3d-8e2f-0000000000e1.jsonl","size":2048,"mtime":"2026-03-01T10:01:00Z"}`
		return lines([]string{head}, evs, func(i int, e ev) string {
			switch e.k {
			case prompt:
				return `{"role":"user","message":{"content":[{"type":"text","text":` + q("<user_query>\n"+e.text+"\n</user_query>") + `}]}}`
			case answer:
				return `{"role":"assistant","message":{"content":[{"type":"text","text":` + q(e.text) + `}]}}` + "\n" + `{"type":"turn_ended","status":"success"}`
			case call:
				return `{"role":"assistant","message":{"content":[{"type":"tool_use","id":"` + e.text + `","name":"Shell","input":{"command":"cat missing.txt"}}]}}`
			case resultOK, failed:
				return fmt.Sprintf(`{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":%q,"content":%s,"is_error":%t}]}}`, callID, q(e.text), e.k == failed)
			case provErr:
				return `{"type":"turn_ended","status":"error","error":` + q(errMsg) + `}`
			}
			return ""
		})
	}},
	{Native: natives.Named("opencode"), render: func(evs []ev) string {
		// OpenCode's older file tree (storage/session, message, part):
		// each document after the facts line naming its file.
		const ses = "ses_3f1a2b3c4d5eFfAaBbCcDd00e1"
		doc := func(path, body string) string {
			return fmt.Sprintf(`{"$twasm":"file","path":%q,"size":%d,"mtime":"2026-03-01T10:00:00.000Z","document":true}`, path, len(body)) + "\n" + body
		}
		head := doc("session/4b0ea68d/"+ses+".json", `{"id":"`+ses+`","slug":"calm-river","version":"1.2.15","projectID":"4b0ea68d","directory":"/w","title":"Fix the test","time":{"created":1772359200000,"updated":1772359200000}}`)
		callMsg := 0
		return lines([]string{head}, evs, func(i int, e ev) string {
			message := func(role, extra string) string {
				return doc(fmt.Sprintf("message/%s/msg_%02d.json", ses, i), fmt.Sprintf(`{"id":"msg_%02d","sessionID":%q,"role":%q,"time":{"created":%d%s}}`, i, ses, role, ms(i), extra))
			}
			assistant := func(extra string) string {
				return doc(fmt.Sprintf("message/%s/msg_%02d.json", ses, i), fmt.Sprintf(`{"id":"msg_%02d","sessionID":%q,"role":"assistant","time":{"created":%d,"completed":%d},"parentID":"msg_01","modelID":"claude-sonnet-4-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}%s}`, i, ses, ms(i), ms(i), extra))
			}
			part := func(msg int, id, body string) string {
				return doc(fmt.Sprintf("part/msg_%02d/%s.json", msg, id), fmt.Sprintf(`{"id":%q,"messageID":"msg_%02d","sessionID":%q,%s}`, id, msg, ses, body))
			}
			tool := func(state string) string {
				return part(callMsg, "prt_tool", `"type":"tool","tool":"bash","callID":"`+callID+`","state":`+state)
			}
			switch e.k {
			case prompt:
				return message("user", `},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"`) + "\n" + part(i, fmt.Sprintf("prt_%02d", i), `"type":"text","text":`+q(e.text))
			case answer:
				return assistant(`,"finish":"stop"`) + "\n" + part(i, fmt.Sprintf("prt_%02d", i), `"type":"text","text":`+q(e.text))
			case call:
				callMsg = i
				return assistant(`,"finish":"tool-calls"`) + "\n" + tool(fmt.Sprintf(`{"status":"running","input":{"command":"cat missing.txt","description":"Read it"},"time":{"start":%d}}`, ms(i)))
			case resultOK:
				return tool(fmt.Sprintf(`{"status":"completed","input":{"command":"cat missing.txt","description":"Read it"},"output":%s,"title":"cat missing.txt","metadata":{"output":%s,"exit":0},"time":{"start":%d,"end":%d}}`, q(e.text), q(e.text), ms(callMsg), ms(i)))
			case failed:
				return tool(fmt.Sprintf(`{"status":"error","input":{"command":"cat missing.txt","description":"Read it"},"error":%s,"time":{"start":%d,"end":%d}}`, q(e.text), ms(callMsg), ms(i)))
			case provErr:
				return assistant(`,"error":{"name":"APIError","data":{"message":` + q(errMsg) + `,"statusCode":429,"isRetryable":true}}`)
			}
			return ""
		})
	}},
	{Native: natives.Named("goose"), render: func(evs []ev) string {
		// Goose's sessions.db, as twasm's SQLite source hands it over:
		// a facts line, the session's row, its messages' rows.
		head := []string{
			`{"$twasm":"source","store":"Goose","path":"sessions.db","name":"sessions.db","size":45056,"mtime":"2026-03-01T10:01:00Z","session":"20260301_1","since":0,"cursor":0,"user_version":0,"schema_version":0,"query_sha256":"0000000000000000000000000000000000000000000000000000000000000000"}`,
			`{"$twasm":"row","table":"sessions","key":"20260301_1","version":1772359260,"row":{"version":1772359260,"id":"20260301_1","name":"fix the test","description":"","user_set_name":0,"session_type":"user","working_dir":"/w","created_at":"2026-03-01 10:00:00","updated_at":"2026-03-01 10:01:00","extension_data":{},"total_tokens":null,"input_tokens":null,"output_tokens":null,"cache_read_tokens":null,"cache_write_tokens":null,"accumulated_total_tokens":100,"accumulated_input_tokens":80,"accumulated_output_tokens":20,"accumulated_cache_read_tokens":null,"accumulated_cache_write_tokens":null,"accumulated_cost":null,"schedule_id":null,"recipe_json":null,"user_recipe_values_json":null,"parent_session_id":null,"model_config_json":{"model_name":"claude-sonnet-4-5"}}}`,
		}
		return lines(head, evs, func(i int, e ev) string {
			row := func(role, content string) string {
				return fmt.Sprintf(`{"$twasm":"row","table":"messages","key":"msg_%d","version":%d,"row":{"key":"msg_%d","time_ms":%d,"id":%d,"message_id":"msg_%d","session_id":"20260301_1","role":%q,"content_json":[%s],"created_timestamp":%d,"timestamp":"2026-03-01 10:00:00","tokens":null,"metadata_json":{"userVisible":true,"agentVisible":true}}}`, i, i, i, ms(i), i, i, role, content, ms(i)/1000)
			}
			switch e.k {
			case prompt:
				return row("user", `{"type":"text","text":`+q(e.text)+`}`)
			case answer:
				return row("assistant", `{"type":"text","text":`+q(e.text)+`}`)
			case call:
				return row("assistant", `{"type":"toolRequest","id":"`+e.text+`","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"cat missing.txt"}}}}`)
			case resultOK, failed:
				return row("user", fmt.Sprintf(`{"type":"toolResponse","id":%q,"toolResult":{"status":"success","value":{"content":[{"type":"text","text":%s}],"isError":%t}}}`, callID, q(e.text), e.k == failed))
			case provErr:
				return row("assistant", `{"type":"text","text":`+q("Ran into this error: "+errMsg+".\n\nPlease retry if you think this is a transient or recoverable error.")+`}`)
			}
			return ""
		})
	}},
	{Native: natives.Named("crush"), render: func(evs []ev) string {
		// Crush's crush.db, as twasm's SQLite source hands it over.
		head := []string{
			`{"$twasm":"source","store":"Crush","path":".crush/crush.db","name":"crush.db","size":4096,"mtime":"2026-03-01T10:05:00Z","session":"sess-e1","since":0,"cursor":1772359500011,"user_version":0,"schema_version":21,"query_sha256":"0000000000000000000000000000000000000000000000000000000000000000"}`,
			`{"$twasm":"row","table":"sessions","key":"sess-e1","version":1772359500,"row":{"version":1772359500,"id":"sess-e1","parent_session_id":null,"title":"Fix the test","message_count":6,"prompt_tokens":100,"completion_tokens":20,"cost":0.01,"updated_at":1772359500,"created_at":1772359200,"summary_message_id":null,"todos":null,"children_cost":0}}`,
		}
		return lines(head, evs, func(i int, e ev) string {
			sec := ms(i) / 1000
			row := func(role, parts, model string, finished bool) string {
				fin, mod, prov := "null", "null", "null"
				if finished {
					fin = fmt.Sprint(sec)
				}
				if model != "" {
					mod, prov = q(model), `"anthropic"`
				}
				return fmt.Sprintf(`{"$twasm":"row","table":"messages","key":"m%d","version":%d,"row":{"time_ms":%d,"id":"m%d","session_id":"sess-e1","role":%q,"parts":[%s],"model":%s,"created_at":%d,"updated_at":%d,"finished_at":%s,"provider":%s,"is_summary_message":0}}`, i, sec, ms(i), i, role, parts, mod, sec, sec, fin, prov)
			}
			finish := func(reason, extra string) string {
				return fmt.Sprintf(`{"type":"finish","data":{"reason":%q,"time":%d%s}}`, reason, sec, extra)
			}
			switch e.k {
			case prompt:
				return row("user", `{"type":"text","data":{"text":`+q(e.text)+`}}`, "", false)
			case answer:
				return row("assistant", `{"type":"text","data":{"text":`+q(e.text)+`}},`+finish("end_turn", ""), "claude-sonnet-4-5", true)
			case call:
				return row("assistant", `{"type":"tool_call","data":{"id":"`+e.text+`","name":"bash","input":"{\"command\":\"cat missing.txt\"}","provider_executed":false,"finished":true}},`+finish("tool_use", ""), "claude-sonnet-4-5", true)
			case resultOK, failed:
				return row("tool", fmt.Sprintf(`{"type":"tool_result","data":{"tool_call_id":%q,"name":"bash","content":%s,"metadata":"","is_error":%t}}`, callID, q(e.text), e.k == failed), "", false)
			case provErr:
				return row("assistant", finish("error", `,"message":"Provider error","details":`+q(errMsg)), "claude-sonnet-4-5", true)
			}
			return ""
		})
	}},
	{Native: natives.Named("aider"), anyID: true, render: func(evs []ev) string {
		// An Aider chat history (.aider.chat.history.md): a call is an
		// edit (a SEARCH/REPLACE block of an answer), its result the
		// notice that it applied or failed to match; Aider names no
		// call id.
		var b strings.Builder
		b.WriteString("# aider chat started at 2026-03-01 10:00:00\n\n> Aider v0.86.1  \n> Main model: anthropic/claude-sonnet-4-5 with diff edit format  \n> Git repo: .git with 3 files  \n\n")
		const tokens = "> Tokens: 1.0k sent, 10 received. Cost: $0.01 message, $0.01 session.  \n"
		const edit = "hello.py\n```python\n<<<<<<< SEARCH\nprint(\"x\")\n=======\nprint(\"hello\")\n>>>>>>> REPLACE\n```\n\n"
		for j, e := range evs {
			switch e.k {
			case prompt:
				b.WriteString("#### " + e.text + "  \n\n")
			case answer:
				b.WriteString(e.text + "\n\n" + tokens + "\n")
			case call:
				if j == len(evs)-1 {
					// A call nothing answers: a shell command the
					// user allowed, whose end Aider never logs.
					b.WriteString("Read it with:\n\n```bash\ncat missing.txt\n```\n\n" + tokens +
						"> cat missing.txt  \n> Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n> Running cat missing.txt  \n\n")
					continue
				}
				b.WriteString("I will edit it.\n\n" + edit + tokens)
			case resultOK:
				b.WriteString("> Applied edit to hello.py  \n\n")
			case failed:
				b.WriteString("> The LLM did not conform to the edit format.  \n> https://aider.chat/docs/troubleshooting/edit-errors.html  \n> # 1 SEARCH/REPLACE block failed to match!\n\n" +
					"## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in hello.py\n<<<<<<< SEARCH\nprint(\"x\")\n=======\nprint(\"hello\")\n>>>>>>> REPLACE\n\n" +
					"The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc\n\n")
			case provErr:
				b.WriteString("> litellm.RateLimitError: AnthropicException - " + errMsg + "  \n> The API provider has rate limited you. Try again later or check your quotas.  \n> Retrying in 0.2 seconds...  \n\n")
			}
		}
		return b.String()
	}},
	{Native: natives.Named("openai"), render: func(evs []ev) string {
		// A log of Chat Completions request and response bodies, one a
		// line, as a caller writes them: each request resends the
		// conversation so far.
		var history []string
		var b strings.Builder
		request := func() {
			b.WriteString(`{"model":"gpt-4.1","messages":[` + strings.Join(history, ",") + `],"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]}` + "\n")
		}
		for i, e := range evs {
			i++
			response := func(message, finish string) {
				b.WriteString(fmt.Sprintf(`{"id":"chatcmpl-%d","object":"chat.completion","created":%d,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, i, ms(i)/1000, message, finish) + "\n")
				history = append(history, message)
			}
			switch e.k {
			case prompt:
				history = append(history, `{"role":"user","content":`+q(e.text)+`}`)
				request()
			case answer:
				response(`{"role":"assistant","content":`+q(e.text)+`}`, "stop")
			case call:
				response(`{"role":"assistant","content":null,"tool_calls":[{"id":"`+e.text+`","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"missing.txt\"}"}}]}`, "tool_calls")
			case resultOK, failed:
				history = append(history, `{"role":"tool","tool_call_id":"`+callID+`","content":`+q(e.text)+`}`)
				request()
			case provErr:
				b.WriteString(`{"error":{"message":` + q(errMsg) + `,"type":"requests","param":null,"code":"rate_limit_exceeded"}}` + "\n")
			}
		}
		return b.String()
	}, cannot: map[string]string{
		"dangling_call": "a response's finish_reason is its terminal event: tool_calls is a whole response, ok, its calls the caller's to run between requests (dangling, not incomplete: spec 6.7, the terminal event decides)",
		"tool_failed":   "a tool message ({role: tool, tool_call_id, content}) states no outcome: the API has no failure flag for a tool's result",
	}},
	{Native: natives.Named("cline"), render: func(evs []ev) string {
		// A Cline task folder (<globalStorage>/saoudrizwan.claude-dev/tasks/<id>/):
		// ui_messages.json (the screen's messages: each API request,
		// errors and retries) then api_conversation_history.json (the
		// model's conversation), each a document after its facts line.
		// A request that failed is retried by Cline in the same
		// api_req_started (attemptApiRequest, cline/cline
		// src/core/task/index.ts): error_retry before each automatic
		// retry; once they are spent, error_retry failed and the ask
		// api_req_failed.
		var ui, conv []string
		say := func(i, sub int, kind, text string) {
			ui = append(ui, fmt.Sprintf(`{"ts":%d,"type":"say","say":%q,"text":%s}`, ms(i)+int64(sub), kind, q(text)))
		}
		figures := `{"request":"...","tokensIn":10,"tokensOut":5,"cacheWrites":0,"cacheReads":0,"cost":0.001}`
		retried := false // the request an error's retry completed
		for i, e := range evs {
			i++
			request := func() {
				if !retried {
					say(i, 0, "api_req_started", figures)
				}
				retried = false
			}
			switch e.k {
			case prompt:
				if len(conv) == 0 {
					say(i, 0, "task", e.text)
					conv = append(conv, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"ts":%d}`, q("<task>\n"+e.text+"\n</task>"), ms(i)))
				} else {
					say(i, 0, "user_feedback", e.text)
					conv = append(conv, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"ts":%d}`, q("<feedback>\n"+e.text+"\n</feedback>"), ms(i)))
				}
			case answer:
				request()
				say(i, 1, "text", e.text)
				conv = append(conv, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"ts":%d,"modelInfo":{"modelId":"claude-sonnet-4-5","providerId":"anthropic","mode":"act"}}`, q(e.text), ms(i)))
			case call:
				request()
				say(i, 1, "tool", `{"tool":"readFile","path":"missing.txt","content":"/w/missing.txt"}`)
				conv = append(conv, fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"read_file","input":{"path":"missing.txt"}}],"ts":%d,"modelInfo":{"modelId":"claude-sonnet-4-5","providerId":"anthropic","mode":"act"}}`, e.text, ms(i)))
			case resultOK, failed:
				conv = append(conv, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%s,"is_error":%t}],"ts":%d}`, callID, q(e.text), e.k == failed, ms(i)))
			case provErr:
				if i < len(evs) {
					// Retried by itself, and the retry answered: the
					// request's element holds the retry's figures.
					say(i, 0, "api_req_started", figures)
					say(i, 1, "error_retry", fmt.Sprintf(`{"attempt":1,"maxAttempts":3,"delaySeconds":2,"errorMessage":%q}`, errMsg))
					retried = true
					continue
				}
				say(i, 0, "api_req_started", fmt.Sprintf(`{"request":"...","tokensIn":0,"tokensOut":0,"cacheWrites":0,"cacheReads":0,"cancelReason":"streaming_failed","streamingFailedMessage":%q}`, errMsg))
				say(i, 1, "error_retry", fmt.Sprintf(`{"attempt":3,"maxAttempts":3,"delaySeconds":0,"failed":true,"errorMessage":%q}`, errMsg))
				ui = append(ui, fmt.Sprintf(`{"ts":%d,"type":"ask","ask":"api_req_failed","text":%q}`, ms(i)+2, errMsg))
			}
		}
		doc := func(path string, els []string) string {
			body := "[" + strings.Join(els, ",") + "]"
			return fmt.Sprintf(`{"$twasm":"file","path":%q,"size":%d,"mtime":"2026-03-01T10:01:00Z","document":true}`, path, len(body)) + "\n" + body + "\n"
		}
		return `{"$twasm":"source","store":"Cline tasks","path":"1772359200000","name":"1772359200000","size":4096,"mtime":"2026-03-01T10:01:00Z"}` + "\n" +
			doc("ui_messages.json", ui) + doc("api_conversation_history.json", conv)
	}},
	{Native: natives.Named("kimi"), format: "legacy-wire", errWords: "ratelimiterror", render: func(evs []ev) string {
		// The Kimi CLI's wire log (~/.kimi/sessions/<hash>/<session>/wire.jsonl):
		// its StepRetry states the error's type and status, no message.
		step, inStep := 0, false
		return lines([]string{`{"type": "metadata", "protocol_version": "1.10"}`}, evs, func(i int, e ev) string {
			rec := func(typ, payload string) string {
				return fmt.Sprintf(`{"timestamp": %d.5, "message": {"type": %q, "payload": %s}}`, ms(i)/1000, typ, payload)
			}
			begin := func() string {
				if inStep {
					inStep = false
					return ""
				}
				step++
				return rec("StepBegin", fmt.Sprintf(`{"n": %d}`, step)) + "\n"
			}
			status := rec("StatusUpdate", fmt.Sprintf(`{"context_usage": 0.01, "token_usage": {"input_other": 10, "output": 5, "input_cache_read": 0, "input_cache_creation": 0}, "message_id": "chatcmpl-%d"}`, i))
			switch e.k {
			case prompt:
				return rec("TurnBegin", `{"user_input": [{"type": "text", "text": `+q(e.text)+`}]}`)
			case answer:
				return begin() + rec("ContentPart", `{"type": "text", "text": `+q(e.text)+`}`) + "\n" + status + "\n" + rec("TurnEnd", "{}")
			case call:
				return begin() + rec("ToolCall", `{"type": "function", "id": "`+e.text+`", "function": {"name": "Shell", "arguments": "{\"command\": \"cat missing.txt\"}"}, "extras": null}`) + "\n" + status
			case resultOK, failed:
				return rec("ToolResult", fmt.Sprintf(`{"tool_call_id": %q, "return_value": {"is_error": %t, "output": %s, "message": "", "display": [], "extras": null}}`, callID, e.k == failed, q(e.text)))
			case provErr:
				retry := rec("StepRetry", fmt.Sprintf(`{"n": %d, "next_attempt": 2, "max_attempts": 3, "wait_s": 0.6, "error_type": "RateLimitError", "status_code": 429}`, step+1))
				if i < len(evs) {
					// Retried, and the retry answered in the same step.
					out := begin() + retry
					inStep = true
					return out
				}
				return begin() + retry + "\n" + rec("StepInterrupted", "{}") + "\n" + rec("TurnEnd", "{}")
			}
			return ""
		})
	}},
	{Native: natives.Named("gemini"), format: "session-file", render: chatDocument},
	{Native: natives.Named("qwen"), format: "legacy-session-file", render: chatDocument},
}

// chatDocument renders a Gemini CLI session file of the older whole
// document (~/.gemini/tmp/<hash>/chats/session-*.json), which Qwen Code's
// older chats share: {sessionId, projectHash, startTime, lastUpdated,
// messages}, a call in its gemini message's toolCalls with its status
// and, once it completed, its result. One line: the host hands the
// plugin a pretty-printed document as one.
func chatDocument(evs []ev) string {
	var msgs []string
	callAt := -1
	tool := func(status, result string) string {
		return fmt.Sprintf(`[{"id":%q,"name":"read_file","args":{"absolute_path":"/w/missing.txt"},"status":%q,"timestamp":%q%s}]`, callID, status, ts(callAt+1), result)
	}
	gem := func(i int, content, calls string) string {
		return fmt.Sprintf(`{"id":"g%d","timestamp":%q,"type":"gemini","content":%s,"model":"gemini-2.5-pro","tokens":{"input":10,"output":5,"cached":0,"thoughts":0,"tool":0,"total":15}%s}`, i, ts(i), content, calls)
	}
	for i, e := range evs {
		switch e.k {
		case prompt:
			msgs = append(msgs, fmt.Sprintf(`{"id":"u%d","timestamp":%q,"type":"user","content":%s}`, i+1, ts(i+1), q(e.text)))
		case answer:
			msgs = append(msgs, gem(i+1, q(e.text), ""))
		case call:
			callAt = len(msgs)
			msgs = append(msgs, gem(i+1, `""`, `,"toolCalls":`+tool("executing", "")))
		case resultOK, failed:
			status, resp := "success", `"output":`+q(e.text)
			if e.k == failed {
				status, resp = "error", `"error":`+q(e.text)
			}
			// The document as written after the call completed: its
			// message holds the result.
			msgs[callAt] = gem(callAt+1, `""`, `,"toolCalls":`+tool(status, fmt.Sprintf(`,"result":[{"functionResponse":{"id":%q,"name":"read_file","response":{%s}}}],"resultDisplay":%s`, callID, resp, q(e.text))))
		case provErr:
			msgs = append(msgs, fmt.Sprintf(`{"id":"x%d","timestamp":%q,"type":"error","content":%q}`, i+1, ts(i+1), errMsg))
		}
	}
	return `{"sessionId":"e5e5e5e5-0000-4000-8000-0000000000e2","projectHash":"cc33dd44","startTime":"2026-03-01T10:00:00.000Z","lastUpdated":"2026-03-01T10:01:00.000Z","messages":[` + strings.Join(msgs, ",") + "]}\n"
}
