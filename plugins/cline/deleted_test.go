//go:build !wasip1

package cline_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

// clineSay is a UI message (ClineMessage) say kind at ts with text.
func clineSay(ts, kind, text string) string {
	return `{"ts":` + ts + `,"type":"say","say":"` + kind + `","text":"` + text + `"}`
}

// clineInfo is a ClineApiReqInfo's text as a JSON string's content.
func clineInfo(in, out, cw, cr int, cost string) string {
	return `{\"tokensIn\":` + strconv.Itoa(in) + `,\"tokensOut\":` + strconv.Itoa(out) + `,\"cacheWrites\":` + strconv.Itoa(cw) + `,\"cacheReads\":` + strconv.Itoa(cr) + `,\"cost\":` + cost + `}`
}

// checkStepUsage runs the plugin over in and checks the step's input and
// output tokens and its cost.
func checkStepUsage(t *testing.T, raw string, input, output int64, wantCost float64) {
	t.Helper()
	r, _, _, in := plugintest.Turns(t, cline.Plugin, "cline", []byte(raw+"\n"))
	out, cost := int64(-1), -1.0
	if u := r.Step.Usage; u != nil && u.OutputTokens != nil {
		out = *u.OutputTokens
	}
	if r.Step.CostUSD != nil {
		cost = *r.Step.CostUSD
	}
	if in != input || out != output || math.Abs(cost-wantCost) > 1e-9 {
		t.Errorf("usage in %d out %d cost %g; want %d, %d, %g", in, out, cost, input, output, wantCost)
	}
}

// TestDeletedRequests: older Cline, after a checkpoint restore of the
// task (TaskCheckpointManager.handleSuccessfulRestore, cline/cline
// 864419d8b0, apps/vscode/src/integrations/checkpoints/index.ts), cuts
// the UI's messages back to the one restored to and says
// deleted_api_reqs, the sum (getApiMetrics) of the usage messages cut
// away: api_req_started, subagent_usage and an earlier deleted_api_reqs.
// Every request made counts once: a sync that read the requests before
// the restore counted them, and the sum adds nothing; the first sync
// after it counts the sum, the requests being gone. The CLI's --json
// stream counts the sum less the requests whose figures it printed.
func TestDeletedRequests(t *testing.T) {
	const file = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}`
	doc := func(els ...string) string { return file + "\n[" + strings.Join(els, ",") + "]" }
	task := clineSay("1772359200050", "task", "Fix the parser")
	a := clineSay("1772359200100", "api_req_started", clineInfo(100, 10, 0, 0, "0.01"))
	cp := clineSay("1772359200200", "checkpoint_created", "")
	b := clineSay("1772359200300", "api_req_started", clineInfo(200, 20, 50, 1000, "0.02"))
	sub := clineSay("1772359200320", "subagent_usage", `{\"source\":\"subagents\",\"tokensIn\":5000,\"tokensOut\":500,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.5}`)
	said := clineSay("1772359200350", "text", "Done.")
	del := clineSay("1772359200400", "deleted_api_reqs", clineInfo(200, 20, 50, 1000, "0.02"))
	delSub := clineSay("1772359200400", "deleted_api_reqs", clineInfo(5200, 520, 50, 1000, "0.52"))
	c := clineSay("1772359200500", "api_req_started", clineInfo(300, 30, 0, 0, "0.03"))
	said2 := clineSay("1772359200550", "text", "Done again.")
	// A second restore, to the same checkpoint, cuts the first sum and
	// request C: its sum holds B and C.
	del2 := clineSay("1772359200600", "deleted_api_reqs", clineInfo(500, 50, 50, 1000, "0.05"))
	d := clineSay("1772359200700", "api_req_started", clineInfo(400, 40, 0, 0, "0.04"))

	before := doc(task, a, cp, b, said)
	after := doc(task, a, cp, del, c, said2)
	again := doc(task, a, cp, del2, d)
	// The CLI's --json output (its earlier envelope): each message once.
	stream := func(msgs ...string) string {
		return `{"type":"task_started","taskId":"1772359200000"}` + "\n" + strings.Join(msgs, "\n")
	}
	started := func(ts string) string { return clineSay(ts, "api_req_started", `{\"request\":\"x\"}`) }
	tests := []struct {
		name   string
		in     string
		input  int64 // A 100, B 1250, C 300, D 400 (a stream without figures: none for A)
		output int64
		cost   float64
	}{
		{"first read after the restore: the requests cut away are the sum's", after, 1650, 60, 0.06},
		{"read before and after: each request once", before + "\n" + after, 1650, 60, 0.06},
		{"a restore of a restore, read once", again, 2050, 100, 0.10},
		{"a restore of a restore, read at every version", before + "\n" + after + "\n" + again, 2050, 100, 0.10},
		{"a restore of a restore, the middle version missed", before + "\n" + again, 2050, 100, 0.10},
		{"the sum read again, unchanged", after + "\n" + after, 1650, 60, 0.06},
		{"a sub-agent's usage read before: counted once, not again in the sum", doc(task, a, cp, b, sub, said) + "\n" + doc(task, a, cp, delSub, c, said2), 6650, 560, 0.56},
		{"a sub-agent's usage cut away unread: in the sum", doc(task, a, cp, delSub, c, said2), 6650, 560, 0.56},
		{"the stream printed the request: once", stream(task, a, cp, b, del, c), 1650, 60, 0.06},
		{"the stream printed requests without figures: the sum", stream(task, started("1772359200100"), cp, started("1772359200300"), del, c), 1550, 50, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkStepUsage(t, tt.in, tt.input, tt.output, tt.cost) })
	}
}

// TestSubagentUsage: a use_subagents call's sub-agents make no API
// request message of their own (Cline's SubagentRunner says nothing to
// the task; the SDK's translator drops a sub-agent's events), and Cline
// keeps no task of theirs: say subagent_usage, the sum of their usage
// when the last ended, is the only record of their requests, and counts
// once, in the task's step, as Cline's task total (getApiMetrics) counts
// it. tokensIn, cacheWrites and cacheReads are disjoint, as in a
// request's figures.
func TestSubagentUsage(t *testing.T) {
	const file = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}`
	doc := func(els ...string) string { return file + "\n[" + strings.Join(els, ",") + "]" }
	task := clineSay("1772359200050", "task", "Survey the repository")
	a := clineSay("1772359200100", "api_req_started", clineInfo(100, 10, 20, 300, "0.01"))
	// The extension's SubagentToolHandler: cache figures of its own.
	sub := clineSay("1772359200320", "subagent_usage", `{\"source\":\"subagents\",\"tokensIn\":5000,\"tokensOut\":500,\"cacheWrites\":40,\"cacheReads\":2000,\"cost\":0.5}`)
	// The SDK's translator: the whole prompt as tokensIn, the cache as 0.
	sdkSub := clineSay("1772359200330", "subagent_usage", `{\"source\":\"subagents\",\"tokensIn\":7000,\"tokensOut\":700,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0}`)
	b := clineSay("1772359200400", "api_req_started", clineInfo(200, 20, 0, 0, "0.02"))
	said := clineSay("1772359200450", "text", "Done.")
	stream := func(msgs ...string) string {
		return `{"type":"task_started","taskId":"1772359200000"}` + "\n" + strings.Join(msgs, "\n")
	}
	tests := []struct {
		name                     string
		in                       string
		input, output, cacheRead int64
		cost                     float64
	}{
		{"the task's requests and its sub-agents'", doc(task, a, sub, b, said), 620 + 7040, 530, 2300, 0.53},
		{"read at every version of the file: once", doc(task, a, sub) + "\n" + doc(task, a, sub, b, said), 620 + 7040, 530, 2300, 0.53},
		{"the SDK's figures, no cost stated", doc(task, a, sdkSub, b, said), 620 + 7000, 730, 300, 0.03},
		{"the CLI's --json stream", stream(task, a, sub, b, said), 620 + 7040, 530, 2300, 0.53},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, _, in := plugintest.Turns(t, cline.Plugin, "cline", []byte(tt.in+"\n"))
			out, read, cost := int64(-1), int64(-1), -1.0
			if u := r.Step.Usage; u != nil && u.OutputTokens != nil {
				out = *u.OutputTokens
				if u.CacheReadTokens != nil {
					read = *u.CacheReadTokens
				}
			}
			if r.Step.CostUSD != nil {
				cost = *r.Step.CostUSD
			}
			if in != tt.input || out != tt.output || read != tt.cacheRead || math.Abs(cost-tt.cost) > 1e-9 {
				t.Errorf("usage in %d out %d cache read %d cost %g; want %d, %d, %d, %g", in, out, read, cost, tt.input, tt.output, tt.cacheRead, tt.cost)
			}
		})
	}
}

// TestRooCondenseAndDeleted: Roo Code's context condensing makes a
// request no api_req_started states: say condense_context carries its
// cost (contextCondense.cost), which Roo's task total adds
// (consolidateTokenUsage). After a checkpoint restore Roo says
// api_req_deleted (src/core/checkpoints/index.ts), getApiMetrics of the
// messages cut away, those costs included; its tokensIn, as a request's
// since Roo 3.29.5, holds the cache. Every request counts once
// (RooCodeInc/Roo-Code cb83656).
func TestRooCondenseAndDeleted(t *testing.T) {
	const file = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}`
	doc := func(els ...string) string { return file + "\n[" + strings.Join(els, ",") + "]" }
	req := func(ts string, in, out, cw, cr int, cost string) string {
		return clineSay(ts, "api_req_started", `{\"apiProtocol\":\"anthropic\",\"tokensIn\":`+strconv.Itoa(in)+`,\"tokensOut\":`+strconv.Itoa(out)+`,\"cacheWrites\":`+strconv.Itoa(cw)+`,\"cacheReads\":`+strconv.Itoa(cr)+`,\"cost\":`+cost+`}`)
	}
	condense := func(ts, cost string) string {
		return `{"ts":` + ts + `,"type":"say","say":"condense_context","contextCondense":{"cost":` + cost + `,"prevContextTokens":90000,"newContextTokens":9000,"summary":"We fixed the parser.","condenseId":"c1"}}`
	}
	task := clineSay("1772359200050", "task", "Fix the parser")
	a := req("1772359200100", 1000, 10, 100, 800, "0.01") // whole prompt: 1000 input
	cp := clineSay("1772359200200", "checkpoint_saved", "abc123")
	cc := condense("1772359200250", "0.05")
	b := req("1772359200300", 1200, 20, 0, 1000, "0.02")
	said := clineSay("1772359200350", "text", "Done.")
	// The restore cut the condensing and B: their sum.
	del := clineSay("1772359200400", "api_req_deleted", clineInfo(1200, 20, 0, 1000, "0.07"))
	c := req("1772359200500", 1500, 30, 0, 1200, "0.03")
	tests := []struct {
		name          string
		in            string
		input, output int64
		cost          float64
	}{
		{"a condensing's cost counts", doc(task, a, cp, cc, b, said), 2200, 30, 0.08},
		{"read twice: once", doc(task, a, cp, cc) + "\n" + doc(task, a, cp, cc, b, said), 2200, 30, 0.08},
		{"restored, first read after: the sum is what was cut away", doc(task, a, cp, del, c), 3700, 60, 0.11},
		{"restored, read before and after: once", doc(task, a, cp, cc, b, said) + "\n" + doc(task, a, cp, del, c), 3700, 60, 0.11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkStepUsage(t, tt.in, tt.input, tt.output, tt.cost) })
	}
}
