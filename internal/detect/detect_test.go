package detect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/golden"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name, in, provider, format string
		err                        error
	}{
		{"claude stream", `{"type":"system","subtype":"init","session_id":"s","model":"m"}` + "\n" + `{"type":"assistant","message":{},"session_id":"s"}`, "claude", "stream-json", nil},
		{"amp stream", `{"type":"system","subtype":"init","cwd":"/w","session_id":"T-2775dc92-90ed-4f85-8b73-8f9766029e83","tools":["Bash"],"mcp_servers":[]}` + "\n" +
			`{"type":"result","subtype":"success","duration_ms":2906,"is_error":false,"num_turns":1,"result":"4","session_id":"T-2775dc92-90ed-4f85-8b73-8f9766029e83"}`, "amp", "stream-json", nil},
		{"cursor stream", `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"193b2dbb-03ce-444f-a307-4a80f5d4cab0","model":"Claude 4 Sonnet","permissionMode":"default"}` + "\n" +
			`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"session_id":"193b2dbb-03ce-444f-a307-4a80f5d4cab0"}` + "\n" +
			`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Running it."}]},"session_id":"193b2dbb-03ce-444f-a307-4a80f5d4cab0"}` + "\n" +
			`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"false"}}},"session_id":"193b2dbb-03ce-444f-a307-4a80f5d4cab0"}` + "\n" +
			`{"type":"result","subtype":"success","duration_ms":1000,"duration_api_ms":900,"is_error":false,"result":"x","session_id":"193b2dbb-03ce-444f-a307-4a80f5d4cab0","request_id":"r1"}`, "cursor", "stream-json", nil},
		{"kimi print stream-json", `{"role":"assistant","content":[{"type":"think","think":"Let me list.","encrypted":null},{"type":"text","text":"I'll run ls."}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{}"}}]}` + "\n" +
			`{"role":"tool","content":[{"type":"text","text":"a.txt"}],"tool_call_id":"tool_1"}` + "\n" + "To resume this session: kimi -r 4b1c6a2e-1111-4222-8333-944445555666", "kimi", "context", nil},
		{"claude session log", `{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}`, "claude", "session-log", nil},
		{"qwen chat", `{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","cwd":"/p","version":"0.18.2","message":{"role":"user","parts":[{"text":"hi"}]}}`, "qwen", "session", nil},
		// A system record whose payload is optional: a notification
		// holding the message it delivered, and one with neither.
		{"qwen chat from a notification without payload", `{"uuid":"u3","parentUuid":"u2","sessionId":"s","timestamp":"t","type":"system","subtype":"notification","cwd":"/p","version":"0.24.4","message":{"role":"user","parts":[{"text":"Background task finished"}]}}`, "qwen", "session", nil},
		{"qwen chat with a system record without payload", `{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","cwd":"/p","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}` + "\n" +
			`{"uuid":"u2","parentUuid":"u1","sessionId":"s","timestamp":"t","type":"system","subtype":"cron","cwd":"/p","version":"0.24.4"}`, "qwen", "session", nil},
		{"qwen chat from a telemetry record", `{"uuid":"u2","parentUuid":"u1","sessionId":"s","timestamp":"t","type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response"}}}`, "qwen", "session", nil},
		{"crush message rows", `{"$twasm":"row","table":"messages","key":"m","version":1,"row":{"id":"m","role":"user","parts":[{"type":"text","data":{"text":"hi"}}]}}`, "crush", "rows", nil},
		{"crush session rows", `{"$twasm":"source","store":"Crush","path":".crush/crush.db","name":"crush.db"}` + "\n" + `{"$twasm":"row","table":"sessions","key":"s","version":1,"row":{"id":"s","title":"t","prompt_tokens":1,"completion_tokens":2,"cost":0.1}}`, "crush", "rows", nil},
		{"goose rows", `{"$twasm":"row","table":"messages","key":"m","version":1,"row":{"role":"user","content_json":[{"type":"text","text":"hi"}]}}`, "goose", "rows", nil},
		{"goose session file", `{"working_dir":"/p","description":"d","message_count":1}` + "\n" + `{"role":"user","created":1735725600,"content":[{"type":"text","text":"hi"}]}`, "goose", "session", nil},
		{"goose session file of November 2024", `{"role":"user","created":1732000000,"content":[{"text":"list the files"}]}` + "\n" + `{"role":"assistant","created":1732000005,"content":[{"id":"t1","tool_name":"developer__shell","arguments":{"command":"ls"}}]}`, "goose", "session", nil},
		{"qwen -p stream-json", `{"type":"system","subtype":"init","uuid":"s","session_id":"s","cwd":"/p","tools":[],"model":"qwen3-coder-plus","permission_mode":"yolo","qwen_code_version":"0.14.0"}` + "\n" + `{"type":"assistant","uuid":"a","session_id":"s","parent_tool_use_id":null,"message":{"id":"a","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":1}}}` + "\n" + `{"type":"result","subtype":"success","uuid":"r","session_id":"s","is_error":false,"result":"hi","usage":{"input_tokens":10,"output_tokens":1}}`, "qwen", "stream-json", nil},
		{"qwen -p json", `[{"type":"system","subtype":"init","uuid":"s","session_id":"s","model":"qwen3-coder-plus","qwen_code_version":"0.14.0"},{"type":"result","subtype":"success","uuid":"r","session_id":"s","is_error":false,"result":"hi"}]`, "qwen", "stream-json", nil},
		// The sample holds only the start of a long export.
		{"opencode export, cut by the sample", "{\n  \"info\": {\n    \"id\": \"ses_39b5d713cffeRgAoxPIwS3Plus\",\n    \"slug\": \"jolly-eagle\"\n  },\n  \"messages\": [\n    {\n      \"info\": {\n        \"role\": \"user\",\n        \"time\": {\n          \"created\": 1771214900942", "opencode", "export", nil},
		{"goose session export, cut by the sample", "{\n  \"id\": \"20251103_4\",\n  \"working_dir\": \"/p\",\n  \"name\": \"n\",\n  \"accumulated_total_tokens\": 21600,\n  \"conversation\": [\n    {\"id\": \"m\", \"role\": \"user\", \"created\": 1762161300, \"content\": [{\"type\": \"text\", \"text\": \"hi", "goose", "export", nil},
		{"goose session export cut inside a large extension_data", "{\n  \"id\": \"20260611_1\",\n  \"working_dir\": \"/tmp/workspace\",\n  \"name\": \"n\",\n  \"user_set_name\": false,\n  \"session_type\": \"user\",\n  \"extension_data\": {\n    \"todo.v0\": {\n      \"content\": \"" + strings.Repeat("x", 5000), "goose", "export", nil},
		{"goose run json", "{\n  \"messages\": [\n    {\"id\": null, \"role\": \"user\", \"created\": 1790000300, \"content\": [{\"type\": \"text\", \"text\": \"hi\"}]}\n  ],\n  \"metadata\": {\n    \"total_tokens\": 10,\n    \"status\": \"completed\"\n  }\n}\n", "goose", "json", nil},
		{"goose session export", "{\n  \"id\": \"20251103_4\",\n  \"working_dir\": \"/p\",\n  \"name\": \"n\",\n  \"conversation\": [\n    {\"id\": \"m\", \"role\": \"user\", \"created\": 1762161300, \"content\": [{\"type\": \"text\", \"text\": \"hi\"}]}\n  ]\n}\n", "goose", "export", nil},
		{"opencode export", "{\n  \"info\": {\n    \"id\": \"ses_1\",\n    \"directory\": \"/p\"\n  },\n  \"messages\": [\n    {\n      \"info\": {\"id\": \"msg_1\", \"role\": \"user\"},\n      \"parts\": []\n    }\n  ]\n}\n", "opencode", "export", nil},
		{"goose run stream-json", `{"type":"message","message":{"id":"MHyb","role":"assistant","created":1,"content":[{"type":"toolRequest","id":"shell-954","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"echo hi"}}}}],"metadata":{"userVisible":true}}}` + "\n" + `{"type":"complete","total_tokens":12463,"input_tokens":12296,"output_tokens":66}`, "goose", "stream-json", nil},
		{"goose run stream-json thinking", `{"type":"message","message":{"id":"c1","role":"assistant","created":1771715535,"content":[{"type":"thinking","thinking":"hm","signature":"s"}],"metadata":{"userVisible":true,"agentVisible":true}}}`, "goose", "stream-json", nil},
		{"goose session file message", `{"id":null,"role":"assistant","created":1735725600,"content":[{"type":"toolRequest","id":"t","toolCall":{"status":"success","value":{"name":"shell","arguments":{}}}}]}`, "goose", "session", nil},
		{"claude json array", `[{"type":"system","subtype":"init"},{"type":"result","subtype":"success"}]`, "claude", "json", nil},
		{"claude json result", `{"type":"result","subtype":"success","is_error":false,"duration_ms":2100,"duration_api_ms":1900,"num_turns":1,"session_id":"s","result":"x","total_cost_usd":0.01,"usage":{"input_tokens":3,"output_tokens":5}}`, "claude", "json", nil},
		// droid exec --output-format json prints Claude's type and
		// subtype without the API time, cost or usage Claude states
		// (Factory's documentation of droid exec), pretty-printed or not.
		{"droid exec json result", `{"type":"result","subtype":"success","is_error":false,"duration_ms":5657,"num_turns":1,"result":"x","session_id":"8af22e0a-d222-42c6-8c7e-7a059e391b0b"}`, "droid", "json", nil},
		// Its result may state a cost and a usage in Anthropic's names
		// (Factory's droid-action reads total_cost_usd from it): still
		// no API time, per-model usage or uuid, which Claude Code's has.
		{"droid exec json result with cost and usage", `{"type":"result","subtype":"success","is_error":false,"duration_ms":5657,"num_turns":1,"result":"x","session_id":"s","total_cost_usd":0.0123,"usage":{"input_tokens":120,"output_tokens":40,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"thinking_tokens":8},"permission_denials":[]}`, "droid", "json", nil},
		{"droid exec stream-json ending with a result with cost", `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":["Read"],"model":"glm-4.6"}` + "\n" +
			`{"type":"message","role":"assistant","id":"m1","text":"done","timestamp":1762000000000,"session_id":"s1"}` + "\n" +
			`{"type":"result","subtype":"success","is_error":false,"duration_ms":3000,"num_turns":1,"result":"done","session_id":"s1","total_cost_usd":0.004}`, "droid", "stream-json", nil},
		{"claude json result of an older build (cost_usd)", `{"type":"result","subtype":"success","cost_usd":0.003,"is_error":false,"duration_ms":2100,"duration_api_ms":1900,"num_turns":1,"result":"x","session_id":"s"}`, "claude", "json", nil},
		{"claude json result with the API's usage shape", `{"type":"result","subtype":"success","is_error":false,"duration_ms":2100,"num_turns":1,"session_id":"s","result":"x","total_cost_usd":0.01,"usage":{"input_tokens":3,"output_tokens":5,"service_tier":"standard"}}`, "claude", "json", nil},
		{"droid exec json result pretty", "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n  \"is_error\": false,\n  \"duration_ms\": 5657,\n  \"num_turns\": 1,\n  \"result\": \"x\",\n  \"session_id\": \"s\"\n}\n", "droid", "json", nil},
		{"droid exec stream-json", `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":["Read"],"model":"claude-sonnet-4-5-20250929"}` + "\n" +
			`{"type":"message","role":"user","id":"m1","text":"list the files","timestamp":1762517060816,"session_id":"s1"}` + "\n" +
			`{"type":"completion","finalText":"done","numTurns":1,"durationMs":3000,"session_id":"s1"}`, "droid", "stream-json", nil},
		{"droid exec debug", `{"type":"message","role":"user","text":"run ls command"}` + "\n" + `{"type":"tool_call","toolName":"Execute","parameters":{"command":"ls -la"}}`, "droid", "stream-json", nil},
		// Claude Code's stream-json shares system, result: still Claude's.
		{"claude stream-json init and result", `{"type":"system","subtype":"init","cwd":"/w","session_id":"s","tools":[],"mcp_servers":[],"model":"m","permissionMode":"default","apiKeySource":"none"}` + "\n" +
			`{"type":"result","subtype":"success","is_error":false,"duration_ms":2,"duration_api_ms":1,"num_turns":1,"result":"x","session_id":"s","total_cost_usd":0,"usage":{}}`, "claude", "stream-json", nil},
		{"codex exec", `{"type":"thread.started","thread_id":"t"}` + "\n" + `{"type":"turn.started"}`, "codex", "exec-json", nil},
		{"codex legacy", `{"sandbox":"x","model":"m"}` + "\n" + `{"id":"0","msg":{"type":"task_started"}}`, "codex", "legacy-json", nil},
		{"codex early rollout", `{"id":"7c1e7d9a-0000-4000-8000-0000000000f1","timestamp":"2025-06-10T12:00:00.000Z","instructions":null,"git":{"commit_hash":"aa11","branch":"main"}}` + "\n" + `{"record_type":"state"}` + "\n" + `{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"hi"}]}`, "codex", "rollout", nil},
		{"codex app server json-rpc", `{"jsonrpc":"2.0","method":"codex/event","params":{"id":"0","msg":{"type":"session_configured","session_id":"s","model":"gpt-5"}}}`, "codex", "legacy-json", nil},
		{"codex rollout", `{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`, "codex", "rollout", nil},
		{"gemini stream", `{"type":"init","timestamp":"2025-01-01T00:00:00Z","session_id":"s","model":"m"}`, "gemini", "stream-json", nil},
		{"gemini json pretty", "{\n  \"session_id\": \"s\",\n  \"response\": \"hi\",\n  \"stats\": {}\n}\n", "gemini", "json", nil},
		{"amp thread", "{\n  \"v\": 3,\n  \"id\": \"T-5c1e0d1a-2b3c-4d5e-8f90-0a1b2c3d4e5f\",\n  \"created\": 1767261600000,\n  \"messages\": []\n}\n", "amp", "thread", nil},
		{"aider chat history", "This file holds a chat with aider.\n\n# aider chat started at 2025-04-15 09:15:00\n\n> Aider v0.79.1  \n#### hi\n", "aider", "chat-history", nil},
		{"aider history with a JSON answer line", "# aider chat started at 2025-04-15 09:15:00\n#### give json\n\n{\"type\":\"session_start\",\"id\":\"s\",\"title\":\"t\",\"cwd\":\"/x\",\"owner\":\"me\",\"version\":2}\n", "aider", "chat-history", nil},
		{"droid session start", `{"type":"session_start","id":"s","title":"t","cwd":"/x","owner":"me","version":2}`, "droid", "session", nil},
		{"droid message", `{"type":"message","id":"m1","parentId":"s","timestamp":"2026-01-01T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Execute","input":{}}]}}`, "droid", "session", nil},
		{"cursor agent transcript", `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nhi\n</user_query>"}]}}` + "\n" + `{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Shell","input":{"command":"ls"}}]}}`, "cursor", "agent-transcript", nil},
		{"cursor ide rows", `{"$twasm":"row","table":"bubble","key":"b1","version":9,"row":{"id":"b1","value":{"type":1,"text":"hi"}}}`, "cursor", "ide-rows", nil},
		{"cursor turn end", `{"type":"turn_ended","status":"error","error":"boom"}`, "cursor", "agent-transcript", nil},
		{"kimi print stream-json, no think part", `{"role":"assistant","content":[{"type":"text","text":"Let me build it."}],"tool_calls":[{"type":"function","id":"Shell:1","function":{"name":"Shell","arguments":"{}"}}]}` + "\n" +
			`{"role":"tool","content":[{"type":"text","text":"<system>ERROR: Command failed with exit code: 2.</system>"},{"type":"text","text":"make: *** [all] Error 2"}],"tool_call_id":"Shell:1"}`, "kimi", "context", nil},
		{"kimi code wire", `{"type":"turn.prompt","input":[{"type":"text","text":"hi"}],"origin":"user","time":1767261601000}`, "kimi", "wire", nil},
		{"kimi cli context file", `{"role": "_checkpoint", "id": 0}` + "\n" + `{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":[{"type":"text","text":"Hello."}]}` + "\n" + `{"role": "_usage", "token_count": 8112}`, "kimi", "context", nil},
		{"kimi cli wire", `{"timestamp": 1767261600.0, "message": {"type": "TurnBegin", "payload": {"user_input": "hi"}}}`, "kimi", "legacy-wire", nil},
		{"amp thread without v", `{"id":"T-1","messages":[{"role":"user","content":[]}]}`, "amp", "thread", nil},
		{"gemini session", "{\n \"sessionId\": \"s\", \"projectHash\": \"h\", \"messages\": []\n}", "gemini", "session-file", nil},
		{"gemini session jsonl", `{"sessionId":"s","projectHash":"h","startTime":"2026-06-13T18:23:43.746Z","lastUpdated":"2026-06-13T18:23:43.746Z","kind":"main"}` + "\n" +
			`{"$set":{"lastUpdated":"2026-06-13T18:23:50.000Z"}}` + "\n" +
			`{"id":"e1","timestamp":"2026-06-13T18:23:50.000Z","type":"error","content":"[API Error: {\"error\":{\"code\":400}}]"}`, "gemini", "session-file", nil},
		{"gemini session jsonl without its header", `{"$set":{"lastUpdated":"t"}}` + "\n" + `{"id":"g1","timestamp":"t","type":"gemini","content":"hi","tokens":{"input":1},"model":"m"}`, "gemini", "session-file", nil},
		{"copilot", `{"type":"session.start","data":{"sessionId":"s"},"id":"1","timestamp":"t","parentId":null}`, "copilot", "events-jsonl", nil},
		{"openai chat", `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`, "openai", "chat-completion", nil},
		{"openai sse", "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\ndata: [DONE]\n", "openai", "chat-sse", nil},
		{"openai responses compact body", "{\n  \"id\": \"resp_1\",\n  \"object\": \"response.compaction\",\n  \"output\": [{\"type\": \"compaction\", \"encrypted_content\": \"x\"}],\n  \"usage\": {\"input_tokens\": 1, \"output_tokens\": 1}\n}\n", "openai", "responses", nil},
		{"openai responses sse", "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{}}\n", "openai", "responses-sse", nil},
		{"anthropic sse", `{"type":"message_start","message":{"id":"msg_1"}}`, "anthropic", "anthropic-sse", nil},
		// A failed request's saved body, pretty-printed or on one line.
		{"anthropic error body", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`, "anthropic", "anthropic-messages", nil},
		// OpenCode's v2 run --format json says type error beside its own
		// members: the stream is OpenCode's, not an Anthropic error body.
		{"opencode run error line", `{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"step-start"}}` + "\n" +
			`{"type":"error","timestamp":2,"sessionID":"ses_1","error":{"type":"provider.unknown","message":"Overloaded"}}`, "opencode", "json", nil},
		{"openai error body", "{\n  \"error\": {\n    \"message\": \"Unsupported parameter\",\n    \"type\": \"invalid_request_error\",\n    \"param\": \"max_tokens\",\n    \"code\": \"unsupported_parameter\"\n  }\n}\n", "openai", "chat-completion", nil},
		{"openai-compatible error body, type null", `{"error":{"message":"Rate limit reached","type":null,"code":"rate_limit_exceeded"}}`, "openai", "chat-completion", nil},
		{"google's error body is neither's", `{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`, "", "", ErrUnknown},
		{"an error without a message is no body", `{"error":{"type":"x"}}`, "", "", ErrUnknown},
		{"openai responses kept one a line", `{"id":"resp_1","object":"response","status":"completed","output":[]}` + "\n" + `{"id":"resp_2","object":"response","status":"completed","output":[]}`, "openai", "log", nil},
		{"openai request log", `{"request":{"model":"gpt-5-mini","input":[]},"response":{"id":"resp_1","object":"response","output":[]}}`, "openai", "log", nil},
		{"openai batch output", `{"id":"batch_req_1","custom_id":"task-1","response":{"status_code":200,"request_id":"req_1","body":{"id":"chatcmpl-1","object":"chat.completion","choices":[]}},"error":null}`, "openai", "log", nil},
		{"openai chat request with tool calls", `{"model":"m","messages":[{"role":"user","content":"Times?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"t","arguments":"{}"}}]}]}`, "openai", "log", nil},
		{"a chat request without OpenAI's shapes is no one's", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "", "", ErrUnknown},
		{"anthropic batch results", `{"custom_id":"req-1","result":{"type":"succeeded","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}}`, "anthropic", "anthropic-messages", nil},
		{"responses stream error event is openai's", `{"type":"response.created","sequence_number":0,"response":{}}` + "\n" + `{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"quota"}}`, "openai", "responses-sse", nil},
		{"gemini json error after a banner", "The --prompt (-p) flag has been deprecated.\n{\n  \"session_id\": \"s\",\n  \"error\": {\n    \"type\": \"FatalTurnLimitedError\",\n    \"message\": \"Reached max session turns\",\n    \"code\": 53\n  }\n}\n", "gemini", "json", nil},
		{"gemini json error", `{"session_id":"s","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns","code":53}}`, "gemini", "json", nil},
		{"responses sse without sequence numbers", "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"A\"}\n", "openai", "responses-sse", nil},
		{"amp thread versions, one a line", `{"v":3,"id":"T-1","created":1,"messages":[]}` + "\n" + `{"v":4,"id":"T-1","created":1,"messages":[{"role":"user","content":[]}]}`, "amp", "thread", nil},
		{"openai legacy completion", `{"id":"cmpl-1","object":"text_completion","created":1,"model":"gpt-3.5-turbo-instruct","choices":[{"text":"hi","index":0,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, "openai", "completion", nil},
		{"openai legacy completion stream", `{"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":"The","index":0,"finish_reason":null}],"model":"m"}` + "\n" + `{"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":" day","index":0,"finish_reason":"length"}],"model":"m"}`, "openai", "completion-sse", nil},
		{"cline conversation", `[{"role":"user","content":[{"type":"text","text":"<task>\nfix it\n</task>"}],"ts":1767225600100},{"role":"assistant","content":[{"type":"text","text":"ok"}],"modelInfo":{"modelId":"m"}}]`, "cline", "task", nil},
		{"cline conversation cut by the sample", `[{"role":"user","content":[{"type":"text","text":"<task>\nfix it`, "cline", "task", nil},
		{"cline ui messages", `[{"ts":1767225600050,"type":"say","say":"task","text":"fix it"},{"ts":1767225600200,"type":"say","say":"api_req_started","text":"{}"}]`, "cline", "task", nil},
		{"cline ui messages cut by the sample", `[{"ts":1767225600050,"type":"say","say":"task","text":"fix`, "cline", "task", nil},
		// Re-indented copies, as users commit them (a Cline 3 task's
		// ui_messages.json with 4-space indents, 2026).
		{"cline ui messages re-indented, cut by the sample", "[\n    {\n        \"ts\": 1767644899093,\n        \"type\": \"say\",\n        \"say\": \"text\",\n        \"text\": \"yo wassup\",\n        \"images\": [", "cline", "task", nil},
		{"cline conversation re-indented, cut by the sample", "[\n  {\n    \"role\": \"user\",\n    \"content\": [\n      {\n        \"type\": \"text\",\n        \"text\": \"<task>\\nfix it", "cline", "task", nil},
		// Factory Droid's exec stream-json uses Gemini's event names with
		// other fields: not Gemini's, Droid's.
		{"droid stream-json is not gemini's", `{"type":"message","session_id":"s","timestamp":"2025-12-26T00:00:00.000Z","role":"user","text":"Do thing"}` + "\n" + `{"type":"tool_call","session_id":"s","timestamp":"2025-12-26T00:00:01.000Z","toolCallId":"c1","toolName":"Shell","parameters":{"command":"echo hi"}}` + "\n" + `{"type":"tool_result","session_id":"s","timestamp":"2025-12-26T00:00:02.000Z","toolCallId":"c1","value":{"stdout":"hi\\n","exitCode":0}}`, "droid", "stream-json", nil},
		{"gemini stream message", `{"type":"message","timestamp":"2025-01-01T00:00:00Z","role":"assistant","content":"hi","delta":true}`, "gemini", "stream-json", nil},
		{"gemini stream tool result", `{"type":"tool_result","timestamp":"2025-01-01T00:00:00Z","tool_id":"t1","status":"success","output":"ok"}`, "gemini", "stream-json", nil},
		{"cline cli json structured", `{"schemaVersion":1,"event":"start","timestamp":1,"taskId":"t1","sessionId":"t1"}` + "\n" + `{"ts":2,"type":"say","say":"text","text":"fix it","schemaVersion":1,"event":"message","timestamp":2,"taskId":"t1","sessionId":"t1","role":"user","messageType":"say"}`, "cline", "json", nil},
		{"cline cli json sdk agent events", `{"ts":"2026-11-20T09:00:00.010Z","type":"run_start","providerId":"anthropic","modelId":"m","catalog":"bundled","thinking":"off","mode":"yolo"}` + "\n" + `{"ts":"2026-11-20T09:00:01.000Z","type":"agent_event","event":{"type":"iteration_start","iteration":1}}`, "cline", "agent-events", nil},
		{"cline cli json sdk agent events without run_start", `{"ts":"2026-11-20T09:00:01.000Z","type":"agent_event","event":{"type":"iteration_start","iteration":1}}` + "\n" + `{"ts":"2026-11-20T09:00:02.000Z","type":"agent_event","event":{"type":"content_start","contentType":"text","text":"hi"}}`, "cline", "agent-events", nil},
		{"roo cli stream-json", `{"type":"system","subtype":"init","content":"Task started","schemaVersion":1,"protocol":"roo-cli-stream","capabilities":["stdin:start"]}` + "\n" + `{"type":"user","id":1763700000100,"content":"fix it","done":true}` + "\n" + `{"type":"tool_use","id":1763700003000,"subtype":"tool","tool_use":{"name":"readFile"}}`, "roo", "roo-stream-json", nil},
		{"roo cli json", "{\n  \"type\": \"result\",\n  \"success\": true,\n  \"content\": \"done\",\n  \"events\": [\n    {\"type\": \"user\", \"id\": 1, \"content\": \"hi\", \"done\": true}\n  ]\n}\n", "roo", "roo-json", nil},
		{"cline cli json legacy", `{"type":"task_started","taskId":"1770858773985"}` + "\n" + `{"ts":1770858774000,"type":"say","say":"text","text":"echo hello","conversationHistoryIndex":-1}`, "cline", "json", nil},
		{"anthropic response", `{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude"}`, "anthropic", "anthropic-messages", nil},
		{"pi session", `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" + `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`, "pi", "session", nil},
		{"pi entries without the header", `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n" + `{"type":"model_change","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"t","provider":"openai","modelId":"gpt-5"}`, "pi", "session", nil},
		{"pi v1 message", `{"type":"message","timestamp":"2025-12-08T22:41:05.306Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292}}`, "pi", "session", nil},
		{"opencode rows", `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"t","session":"ses_1"}` + "\n" + `{"$twasm":"row","table":"part","key":"prt_1","version":1,"row":{"message_id":"msg_1","message":{"role":"user"},"id":"prt_1","data":{"type":"text","text":"hi"}}}`, "opencode", "rows", nil},
		{"opencode tree", `{"$twasm":"file","path":"session/global/ses_1.json","size":2,"mtime":"t","document":true}` + "\n" + `{"id":"ses_1","projectID":"global"}`, "opencode", "tree", nil},
		{"a folder's file line is not OpenCode's", `{"$twasm":"file","path":"tasks/1/ui_messages.json","size":2,"mtime":"t","document":true}`, "", "", ErrUnknown},
		{"opencode run json", `{"type":"step_start","timestamp":1786618464127,"sessionID":"ses_1","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"step-start"}}` + "\n" + `{"type":"text","timestamp":1786618467248,"sessionID":"ses_1","part":{"id":"prt_2","messageID":"msg_1","type":"text","text":"DONE"}}`, "opencode", "json", nil},
		{"pi json mode", `{"type":"agent_start"}` + "\n" + `{"type":"message_end","message":{"role":"user","content":"hi"}}`, "pi", "json", nil},
		{"empty", "  \n", "", "", ErrUnknown},
		{"banner only", "Reading additional input from stdin...\nnot json\n", "", "", ErrUnknown},
		{"mixed", `{"type":"thread.started","thread_id":"t"}` + "\n" + `{"type":"init","timestamp":"x","session_id":"s"}`, "", "", ErrAmbiguous},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect([]byte(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Provider != tc.provider || got.Format != tc.format || got.Reason == "" {
				t.Fatalf("got %+v, want %s/%s", got, tc.provider, tc.format)
			}
		})
	}
}

// TestDetectCaptures: every capture and golden input of Pi, OpenCode,
// Qwen Code, Goose and the others listed (Gemini CLI's JSONL session
// files and Codex's earliest rollouts and app-server stream were not
// recognised either) is detected as its provider (a Pi message entry,
// type "message" with a timestamp, was taken for Gemini CLI stream-json;
// OpenCode's tool_use event with a timestamp would be; a Qwen Code record,
// with Claude Code's uuid, parentUuid and sessionId, was taken for a
// Claude Code session log; Goose's rows and session files and Cursor's
// agent transcripts were not recognised at all).
func TestDetectCaptures(t *testing.T) {
	// Golden inputs that are text only, naming no CLI (TestDetectTextOnly).
	textOnly := map[string]bool{"print_provider_error_alone.jsonl": true}
	for _, provider := range []string{"pi", "opencode", "qwen", "goose", "kimi", "droid", "crush", "cursor", "aider", "gemini", "codex", "copilot", "claude", "openai", "anthropic", "amp"} {
		var files []string
		for _, ext := range []string{"*.jsonl", "*.md", "*.json"} { // *.md: Aider's chat histories
			m, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", provider, ext))
			for _, f := range m {
				if !strings.HasSuffix(f, ".expect.json") {
					files = append(files, f)
				}
			}
		}
		// The golden inputs as the golden check reads them (golden.Cases:
		// no expectation, .fault file or README).
		cases, _ := golden.Cases(filepath.Join("..", "..", "testdata", "golden", provider))
		for _, c := range cases {
			if ext := filepath.Ext(c.Input); ext == ".jsonl" || ext == ".md" {
				files = append(files, c.Input)
			}
		}
		if len(files) == 0 {
			t.Fatalf("no %s captures or golden inputs", provider)
		}
		for _, f := range files {
			t.Run(provider+"/"+filepath.Base(f), func(t *testing.T) {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Detect(b)
				if textOnly[filepath.Base(f)] {
					// Text that names no CLI: told apart, never claimed.
					if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "pass --provider") {
						t.Fatalf("got %+v, %v; want ErrUnknown naming --provider", got, err)
					}
					return
				}
				// The claude plugin reads Anthropic's API too.
				if err != nil || got.Provider != provider && (provider != "claude" || got.Provider != "anthropic") {
					t.Fatalf("got %+v, %v; want %s", got, err, provider)
				}
			})
		}
	}
}

// TestDetectFixtures checks the real captures in ../shared/fixtures, when
// they are there: each fixture directory names its provider.
func TestDetectFixtures(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "fixtures")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Skip("no shared fixtures:", err)
	}
	checked := 0
	defer func() {
		if checked == 0 {
			t.Error("no fixture was checked")
		}
		t.Logf("%d fixtures checked", checked)
	}()
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(root, d.Name(), "*"))
		for _, f := range files {
			ext := filepath.Ext(f)
			if ext != ".jsonl" && ext != ".json" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			got, err := Detect(b)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if got.Provider != d.Name() {
				t.Errorf("%s: detected %s (%s)", f, got.Provider, got.Reason)
			}
		}
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte(`{"type":"thread.started"}`))
	f.Add([]byte("data: {\"object\":\"chat.completion.chunk\"}"))
	f.Add([]byte("[{\"type\":\"system\"}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Detect(b)
		if err == nil && (r.Provider == "" || r.Format == "" || r.Reason == "") {
			t.Fatalf("detected without a provider, format or reason: %+v", r)
		}
	})
}

// TestDetectTextOnly: an input that is text only, no line JSON, says so
// and quotes its first line: kimi --print --output-format stream-json
// writes only the provider's error when the first model call fails
// (MoonshotAI/kimi-cli 4a550ef, src/kimi_cli/ui/print/__init__.py), which
// names no CLI, so the user is told to pass --provider. Before, it said
// only that no line looked like a known agent's output.
func TestDetectTextOnly(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"kimi's provider error", "Error code: 401 - {'error': {'message': 'Invalid Authentication', 'type':\n'invalid_authentication_error'}}\n",
			`its first line: "Error code: 401 - {'error': {'message': 'Invalid Authentication', 'type':"`},
		{"a banner", "Reading additional input from stdin...\nnot json\n", `its first line: "Reading additional input from stdin..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Detect([]byte(tt.in))
			if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "pass --provider") {
				t.Fatalf("err %v; want ErrUnknown quoting %s and naming --provider", err, tt.want)
			}
		})
	}
}
