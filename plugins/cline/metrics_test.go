//go:build !wasip1

package cline_test

import (
	"math"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

// TestSessionMetrics: a Cline SDK session (the sessions folder's
// <id>.messages.json) states on each assistant message the model
// (modelInfo {id, provider}) and the usage of the request that wrote it
// (metrics: usageDelta in sdk/packages/agents/src/agent-runtime.ts,
// cline/cline 21cb8d2, the run's usage after the request less before;
// inputTokens the whole prompt, the cache included). Each message's
// metrics count once, though Cline rewrites the document whole; the
// messages a /fork copied are the forked session's; a compaction's
// usageBefore (the sum of the metrics it stripped) counts what was not
// read before; a task folder's conversation is not read so (its UI's
// requests state the figures).
func TestSessionMetrics(t *testing.T) {
	const facts = `{"$twasm":"source","store":"Cline sessions","path":"1784094124598_rruoq","name":"1784094124598_rruoq","size":1,"mtime":"2026-07-15T05:42:33Z"}`
	const file = `{"$twasm":"file","path":"1784094124598_rruoq.messages.json","size":1,"mtime":"2026-07-15T05:42:33Z","document":true}`
	user := `{"id":"msg_u1","role":"user","content":[{"type":"text","text":"Make it blue."}],"ts":1784094130000}`
	first := `{"id":"msg_a1","role":"assistant","content":[{"type":"text","text":"Reading."}],"ts":1784094132000,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":37000,"outputTokens":80,"cacheReadTokens":36600,"cacheWriteTokens":100,"cost":0.05}}`
	firstEdited := strings.Replace(first, "Reading.", "Reading the file.", 1)
	second := `{"id":"msg_a2","role":"assistant","content":[{"type":"text","text":"It is blue now."}],"ts":1784094134000,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":38000,"outputTokens":20,"cacheReadTokens":37000,"cacheWriteTokens":0,"cost":0.02}}`
	copied := `{"id":"msg_old","role":"assistant","content":[{"type":"text","text":"Old."}],"ts":1783376873493,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":34334,"outputTokens":741,"cacheReadTokens":0,"cacheWriteTokens":0,"cost":0.489531}}`
	// The SDK's compaction strips every message's metrics and keeps
	// their sum in the first message's metadata (basic-compaction.ts).
	compacted := `{"id":"msg_c1","role":"user","content":[{"type":"text","text":"Summary: the icon was made blue."}],"ts":1784094140000,"metadata":{"kind":"compaction","reason":"auto_compaction","displayRole":"system","messagesRemoved":2,"usageBefore":{"inputTokens":75000,"outputTokens":100,"cacheReadTokens":73600,"cacheWriteTokens":100,"cost":0.07}}}`
	third := `{"id":"msg_a3","role":"assistant","content":[{"type":"text","text":"And bold."}],"ts":1784094150000,"modelInfo":{"id":"anthropic/claude-opus-4.8-fast","provider":"cline"},"metrics":{"inputTokens":39000,"outputTokens":30,"cacheReadTokens":38000,"cacheWriteTokens":0,"cost":0.03}}`
	doc := func(msgs ...string) string {
		return file + "\n" + `{"version":1,"sessionId":"1784094124598_rruoq","messages":[` + strings.Join(msgs, ",") + `]}`
	}
	const ui = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-07-15T05:42:33Z","document":true}` + "\n" +
		`[{"ts":1784094131000,"type":"say","say":"api_req_started","text":"{\"tokensIn\":300,\"tokensOut\":80,\"cacheWrites\":100,\"cacheReads\":36600,\"cost\":0.05}"}]`
	const api = `{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-07-15T05:42:33Z","document":true}`
	tests := []struct {
		name                string
		in                  string
		input, read, output int64 // -1: none stated
		cost                float64
		model               string
	}{
		{"two requests", facts + "\n" + doc(user, first, second), 75000, 73600, 100, 0.07, "anthropic/claude-opus-4.8-fast"},
		{"rewritten whole, a message changed in place: once", facts + "\n" + doc(user, first) + "\n" + doc(user, firstEdited, second), 75000, 73600, 100, 0.07, "anthropic/claude-opus-4.8-fast"},
		{"a compaction read first: its usageBefore", facts + "\n" + doc(compacted, third), 114000, 111600, 130, 0.10, "anthropic/claude-opus-4.8-fast"},
		{"read before and after a compaction: each request once", facts + "\n" + doc(user, first, second) + "\n" + doc(compacted, third), 114000, 111600, 130, 0.10, "anthropic/claude-opus-4.8-fast"},
		{"a fork's copied message: the forked session's", facts + "\n" + doc(copied, user, second), 38000, 37000, 20, 0.02, "anthropic/claude-opus-4.8-fast"},
		{"a task folder: the UI's requests, not the metrics", ui + "\n" + api + "\n[" + user + "," + first + "]", 37000, 36600, 80, 0.05, "anthropic/claude-opus-4.8-fast"},
		{"a task folder's conversation alone: no usage", api + "\n[" + user + "," + first + "]", -1, -1, -1, -1, "anthropic/claude-opus-4.8-fast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, _, in := plugintest.Turns(t, cline.Plugin, "cline", []byte(tt.in+"\n"))
			read, out, cost := int64(-1), int64(-1), -1.0
			if u := r.Step.Usage; u != nil {
				if u.OutputTokens != nil {
					out = *u.OutputTokens
				}
				if u.CacheReadTokens != nil {
					read = *u.CacheReadTokens
				}
			}
			if r.Step.CostUSD != nil {
				cost = *r.Step.CostUSD
			}
			if in != tt.input || read != tt.read || out != tt.output || math.Abs(cost-tt.cost) > 1e-9 || r.Step.Model != tt.model {
				t.Errorf("usage in %d read %d out %d cost %g model %q; want %d, %d, %d, %g, %q", in, read, out, cost, r.Step.Model, tt.input, tt.read, tt.output, tt.cost, tt.model)
			}
		})
	}
}
