//go:build !wasip1

package openai_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
)

// TestReusedCallID checks Chat Completions calls whose server names every
// call call_1: a call in a later response, after the first call's result,
// is a call of its own with its own result, while the history every
// request resends, and a repeat before the result, report nothing again.
func TestReusedCallID(t *testing.T) {
	const (
		sys   = `{"role":"developer","content":"Answer briefly."}`
		user  = `{"role":"user","content":"Times?"}`
		user2 = `{"role":"user","content":"Thanks."}`
		a1    = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"Oslo\"}"}}]}`
		t1    = `{"role":"tool","tool_call_id":"call_1","content":"14:05"}`
		a2    = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"Tokyo\"}"}}]}`
		t2    = `{"role":"tool","tool_call_id":"call_1","content":"22:05"}`
		done  = `{"role":"assistant","content":"Done."}`
	)
	req := func(msgs ...string) string { return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `]}` }
	resp := func(id, msg, finish string) string {
		return `{"id":"` + id + `","object":"chat.completion","created":1760004000,"model":"m","choices":[{"index":0,"message":` + msg + `,"finish_reason":"` + finish + `"}]}`
	}
	chunks := func(id, tz string) string {
		c := `{"id":"` + id + `","object":"chat.completion.chunk","created":1760004000,"model":"m","choices":[{"index":0,"delta":`
		return c + `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}` + "\n" +
			c + `{"tool_calls":[{"index":0,"function":{"arguments":"{\"tz\":\"` + tz + `\"}"}}]},"finish_reason":null}]}` + "\n" +
			c + `{},"finish_reason":"tool_calls"}]}`
	}
	tests := []struct {
		name    string
		lines   []string
		calls   []string // the inputs' tz, in order
		results []string
	}{
		{"reused after its result", []string{
			req(sys, user), resp("R1", a1, "tool_calls"),
			req(sys, user, a1, t1), resp("R2", a2, "tool_calls"),
			req(sys, user, a1, t1, a2, t2), resp("R3", done, "stop"),
		}, []string{"Oslo", "Tokyo"}, []string{"14:05", "22:05"}},
		{"reused after its result, streamed", []string{
			req(sys, user), chunks("S1", "Oslo"),
			req(sys, user, a1, t1), chunks("S2", "Tokyo"),
			req(sys, user, a1, t1, a2, t2),
		}, []string{"Oslo", "Tokyo"}, []string{"14:05", "22:05"}},
		{"history resent after the answer", []string{
			req(sys, user), resp("R1", a1, "tool_calls"),
			req(sys, user, a1, t1), resp("R2", done, "stop"),
			req(sys, user, a1, t1, done, user2), resp("R3", done, "stop"),
		}, []string{"Oslo"}, []string{"14:05"}},
		{"history only, reused", []string{
			req(sys, user, a1, t1, a2, t2),
		}, []string{"Oslo", "Tokyo"}, []string{"14:05", "22:05"}},
		{"repeated before its result", []string{
			req(sys, user), resp("R1", a1, "tool_calls"), resp("R1b", a2, "tool_calls"),
		}, []string{"Oslo"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tcs, trs := plugintest.Run(t, openai.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "openai"}).Tools()
			var calls, results []string
			for _, p := range tcs {
				var in struct{ TZ string }
				if err := json.Unmarshal(p.Input, &in); err != nil {
					t.Fatalf("call input %s: %v", p.Input, err)
				}
				calls = append(calls, in.TZ)
			}
			for _, p := range trs {
				results = append(results, p.Output)
			}
			if !slices.Equal(calls, tt.calls) || !slices.Equal(results, tt.results) {
				t.Errorf("calls %q, results %q; want %q, %q", calls, results, tt.calls, tt.results)
			}
		})
	}
}
