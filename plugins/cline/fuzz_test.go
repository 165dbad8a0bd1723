//go:build !wasip1

package cline_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cline"
)

// captureDirs hold the real captures of the plugin's providers
// (testdata/captures/README.md).
var captureDirs = []string{
	filepath.Join("..", "..", "testdata", "captures", "cline"),
	filepath.Join("..", "..", "testdata", "captures", "roo"),
	filepath.Join("..", "..", "testdata", "captures", "kilocode"),
}

// captures are the real captures of testdata/captures/{cline,roo,kilocode}:
// JSON Lines, and task files read alone (a ui_messages.json is one JSON
// document on one line).
func captures(tb testing.TB) []string {
	var files []string
	for _, dir := range captureDirs {
		for _, pattern := range []string{"*.jsonl", "*.json"} {
			m, err := filepath.Glob(filepath.Join(dir, pattern))
			if err != nil {
				tb.Fatal(err)
			}
			for _, f := range m {
				if !strings.HasSuffix(f, ".expect.json") {
					files = append(files, f)
				}
			}
		}
	}
	return files
}

// FuzzCline: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzCline(f *testing.F) {
	sdktest.Fuzz(f, cline.Plugin, sdktest.Options{Provider: "cline", Golden: goldenDir, Captures: captures(f)},
		[]byte(`[{"role":"assistant","content":"<read_file>\n<path>a</path"},{"role":"user","content":"[read_file] Result:"}]`+"\n"),
		[]byte(`[{"role":"assistant","content":[{"type":"tool_use","input":"x"}]},{"role":"user","content":[{"type":"tool_result","content":[1,{"text":2}]}]}]`+"\n"),
		[]byte(`[{"type":"say","say":"api_req_started","text":"{\"tokensIn\":-1,\"cost\":\"x\",\"cancelReason\":1}","ts":"99999999999999999999"}]`+"\n"),
		[]byte(`{"schemaVersion":1,"event":"start","taskId":7}`+"\n"+`{"ts":1,"type":"ask","ask":"use_mcp_server","text":"{\"type\":\"access_mcp_resource\"}","schemaVersion":1,"event":"message"}`+"\n"+`{"schemaVersion":1,"event":"complete","status":3}`+"\n"),
		[]byte(`{"type":"task_started","taskId":"t"}`+"\n"+`{"ts":2,"type":"say","say":"command_permission_denied"}`+"\n"+`{"ts":3,"type":"say","say":"tool","text":"[1]"}`+"\n"+`{"type":"error"}`+"\n"),
		// The SDK CLI's agent events, told by their first line (an ISO ts
		// and the agent_event envelope or a run line): a sub-agent scope
		// opened by a running call, a result with no call, odd values.
		[]byte(`{"ts":"t","type":"agent_event","event":{"type":"content_start","contentType":"tool","toolName":"spawn_agent","toolCallId":"a","input":{"task":7}}}`+"\n"+`{"ts":"t","type":"agent_event","event":{"type":"iteration_start"}}`+"\n"+`{"ts":"t","type":"agent_event","event":{"type":"content_end","contentType":"tool","toolCallId":"a","output":[{"success":false,"error":"Command exited with code x"}],"error":"{\"error\":1}"}}`+"\n"+`{"ts":"t","type":"agent_event","event":{"type":"done","reason":1}}`+"\n"),
		[]byte(`{"ts":"t","type":"run_result","finishReason":"aborted","usage":{"inputTokens":"x","totalCost":"y"},"aggregateUsage":[],"model":{"id":3}}`+"\n"+`{"ts":"t","type":"agent_event","event":{"type":"content_end","contentType":"tool"}}`+"\n"+`{"ts":"t","type":"error"}`+"\n"),
		// Roo Code's CLI json document (pretty-printed) and its lone error
		// line; its stream-json, told by its system init line.
		[]byte("{\n \"type\": \"result\", \"success\": 1,\n \"events\": [{\"type\":\"tool_result\",\"id\":3,\"subtype\":\"command\",\"tool_result\":{\"output\":[]},\"done\":true}, 5,\n {\"type\":\"result\",\"events\":[]}]\n}\n"),
		[]byte(`{"type":"error","id":1,"content":"x"}`+"\n"+`{"type":"user","id":"2","content":"y","done":true}`+"\n"),
		[]byte(`{"type":"system","subtype":"init","protocol":"roo-cli-stream"}`+"\n"+`{"type":"tool_result","id":1,"subtype":"command","tool_result":{"exitCode":"x"},"done":true}`+"\n"+`{"type":"tool_use","id":1.5,"subtype":"mcp","tool_use":{"input":{"raw":"{\"toolName\":[]}"}},"done":true}`+"\n"+`{"type":"result","success":false,"cost":1}`+"\n"+`{"type":"control","subtype":"done","command":"start"}`+"\n"),
		[]byte(`{"type":"system","subtype":"init","capabilities":[],"schemaVersion":1}`+"\n"+`{"type":"assistant","id":2,"subtype":"tool","content":"{\"tool\":1}","done":true}`+"\n"+`{"type":"user","content":5}`+"\n"+`{"type":"tool_use","subtype":"tool","tool_use":{}}`+"\n"),
	)
}
