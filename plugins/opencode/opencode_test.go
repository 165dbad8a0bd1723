//go:build !wasip1

package opencode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// row is one row line of the part query as the host hands it: the
// message's info and one part's data (neither holds its ids).
func row(msg, role, part string, data string) string {
	info := fmt.Sprintf(`{"role":%q,"time":{"created":1762077600000},"modelID":"m1","providerID":"p"}`, role)
	if data == "" {
		data = "null"
	}
	return fmt.Sprintf(`{"$twasm":"row","table":"part","key":%q,"version":1,"row":{"message_id":%q,"message_time_created":1762077600000,"message":%s,"id":%q,"data":%s}}`,
		part, msg, info, part, data)
}

// silent counts the lines of raw the plugin said nothing about.
func silent(t *testing.T, raw []byte) (int, []int) {
	t.Helper()
	r, err := sdktest.Run(context.Background(), opencode.Plugin, "opencode", raw)
	if err != nil {
		t.Fatal(err)
	}
	return r.SilentN, r.Silent
}

// TestParts: what each shape of part makes, from the host's row lines.
func TestParts(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	for _, tc := range []struct {
		name  string
		lines []string
		check func(t *testing.T, o *plugintest.Outcome)
	}{
		{"a pending tool is no call yet",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"pending","input":{},"raw":""}}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				if len(o.Calls()) != 0 {
					t.Errorf("calls %v, want none", o.Calls())
				}
			}},
		{"a running tool is a call without a result yet",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"running","input":{"command":"ls"}}}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				if !o.Calls()["c1"] || len(o.Result.Dangling) != 1 {
					t.Errorf("calls %v dangling %v, want c1 dangling", o.Calls(), o.Result.Dangling)
				}
			}},
		{"a part sent again replaces what its message held",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"text","text":"Lis"}`),
				row("msg_1", "assistant", "prt_2", `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"running","input":{"command":"ls"}}}`),
				facts,
				row("msg_1", "assistant", "prt_1", `{"type":"text","text":"Listing:"}`),
				row("msg_1", "assistant", "prt_2", `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"a\n","metadata":{"exit":0}}}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), []string{"Listing:"}, false)
				if strings.Contains(strings.Join(o.Texts(nil), "|"), "Lis|") {
					t.Errorf("the old text is kept: %q", o.Texts(nil))
				}
				if len(o.Result.Dangling) != 0 {
					t.Errorf("dangling %v", o.Result.Dangling)
				}
			}},
		{"usage is the sum of the steps, a stated cost of 0 is kept",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":2,"reasoning":1,"cache":{"read":100,"write":5}}}`),
				row("msg_2", "assistant", "prt_2", `{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":20,"output":3,"reasoning":0,"cache":{"read":0,"write":0}}}`),
				row("msg_2", "assistant", "prt_2", `{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":20,"output":3,"reasoning":0,"cache":{"read":0,"write":0}}}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				u := o.Result.Usage
				if u == nil || *u.InputTokens != 135 || *u.OutputTokens != 5 || *u.CacheReadTokens != 100 || *u.CacheWriteTokens != 5 || *u.ReasoningTokens != 1 {
					b, _ := json.Marshal(u)
					t.Errorf("usage %s, want input 135 (10+100+5+20) output 5, a step sent twice counted once", b)
				}
				if o.Result.CostUSD == nil || *o.Result.CostUSD != 0 {
					t.Errorf("cost %v, want a stated 0", o.Result.CostUSD)
				}
			}},
		{"every row is accounted for, parts without a block included",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"step-start","snapshot":"a"}`),
				row("msg_1", "assistant", "prt_2", `{"type":"snapshot","snapshot":"a"}`),
				row("msg_1", "assistant", "prt_3", `{"type":"patch","hash":"a","files":["x.go"]}`),
				row("msg_1", "assistant", "prt_4", `{"type":"agent","name":"general"}`),
				row("msg_1", "assistant", "prt_5", `{"type":"compaction","auto":true}`),
				row("msg_2", "assistant", "", ""),
				`{"$twasm":"row","table":"todo","key":"1","version":1,"row":{}}`,
			}, func(t *testing.T, o *plugintest.Outcome) {
				if len(o.Result.Unmapped) != 1 || o.Result.Unmapped["row:todo"] != 1 {
					t.Errorf("unmapped %v, want only the todo row", o.Result.Unmapped)
				}
				if !strings.Contains(strings.Join(o.Result.Warnings, "\n"), "compacted") {
					t.Errorf("warnings %q, want the compaction", o.Result.Warnings)
				}
			}},
		{"a sub-agent session says whose it is; a provider error ends it in error",
			[]string{facts,
				`{"$twasm":"row","table":"session","key":"ses_2","version":1,"row":{"id":"ses_2","parent_id":"ses_1","version":"1.2.0"}}`,
				row("msg_1", "user", "prt_1", `{"type":"text","text":"go"}`),
				strings.Replace(row("msg_2", "assistant", "", ""), `"providerID":"p"`, `"providerID":"p","error":{"name":"APIError","data":{"message":"Overloaded","statusCode":529}}`, 1),
			}, func(t *testing.T, o *plugintest.Outcome) {
				if o.Result.Status != transcript.StatusError || o.Result.Error != "Overloaded" {
					t.Errorf("status %s %q, want error Overloaded", o.Result.Status, o.Result.Error)
				}
				if !strings.Contains(strings.Join(o.Result.Warnings, "\n"), "sub-agent session of ses_1") {
					t.Errorf("warnings %q", o.Result.Warnings)
				}
			}},
		{"a call stopped unfinished keeps what it had written",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"error","input":{"command":"make"},"error":"Tool execution aborted","metadata":{"interrupted":true,"output":"cc -c a.c\n"},"time":{"start":1762077600000,"end":1762077601000}}}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				_, results := o.Tools()
				if len(results) != 1 || results[0].Output != "cc -c a.c\n" || results[0].Status != "cancelled" {
					t.Errorf("results %+v, want one cancelled with the output written", results)
				}
			}},
		{"a step the content filter stopped is a provider error, once; one cut at the token limit a warning",
			[]string{facts,
				row("msg_1", "assistant", "prt_1", `{"type":"step-finish","reason":"content-filter","tokens":{"input":5,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}`),
				row("msg_1", "assistant", "prt_1", `{"type":"step-finish","reason":"content-filter","tokens":{"input":5,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}`),
				row("msg_2", "assistant", "prt_2", `{"type":"step-finish","reason":"length","tokens":{"input":5,"output":8192,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				if len(o.Result.Errors) != 1 || o.Result.Errors[0].Code != "content-filter" {
					t.Errorf("errors %+v, want the content filter's, once", o.Result.Errors)
				}
				if !strings.Contains(strings.Join(o.Result.Warnings, "|"), "the response was cut at the output token limit") {
					t.Errorf("warnings %q, want the cut response", o.Result.Warnings)
				}
			}},
		{"a response the user stopped is a warning, no provider error",
			[]string{facts,
				`{"$twasm":"row","table":"part","key":"prt_1","version":1,"row":{"message_id":"msg_1","message_time_created":1762077600000,"message":{"role":"assistant","time":{"created":1762077600000},"modelID":"m1","providerID":"p","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}}},"id":"prt_1","data":{"type":"text","text":"Let me"}}}`,
			}, func(t *testing.T, o *plugintest.Outcome) {
				if len(o.Result.Errors) != 0 || !strings.Contains(strings.Join(o.Result.Warnings, "|"), "the response was aborted: The operation was aborted.") {
					t.Errorf("errors %+v warnings %q, want none and the abort", o.Result.Errors, o.Result.Warnings)
				}
			}},
		{"a user text OpenCode never sends to the model (ignored) is no block",
			[]string{facts,
				row("msg_1", "user", "prt_1", `{"type":"text","text":"Fix the parser"}`),
				row("msg_1", "user", "prt_2", `{"type":"text","text":"→ EN: (translation preview)","synthetic":true,"ignored":true}`),
				row("msg_2", "assistant", "prt_3", `{"type":"text","text":"Fixed."}`),
				row("msg_3", "user", "prt_4", `{"type":"text","text":"Usage so far: 1200 tokens","ignored":true}`),
			}, func(t *testing.T, o *plugintest.Outcome) {
				var user []string
				for _, it := range o.Sink.Items {
					if it.Event == nil {
						continue
					}
					if m := it.Event.Message(); m != nil && m.Role == "user" {
						for _, b := range m.Blocks {
							user = append(user, string(b.Origin)+": "+b.Text)
						}
					}
				}
				if strings.Join(user, "|") != "prompt: Fix the parser" {
					t.Errorf("user blocks %q, want the prompt alone", user)
				}
				plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), []string{"Fixed."}, false)
				if o.Result.Status != transcript.StatusOK {
					t.Errorf("status %s, want ok: a note shown to the user is no prompt left unanswered", o.Result.Status)
				}
			}},
		{"an ignored text in run --format json is not the assistant's",
			[]string{
				`{"type":"text","timestamp":1762077600100,"sessionID":"ses_1","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"[queue] 1 message pending","synthetic":true,"ignored":true,"time":{"start":1762077600000,"end":1762077600000}}}`,
				`{"type":"text","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_2","messageID":"msg_2","sessionID":"ses_1","type":"text","text":"Fixed.","time":{"start":1762077600500,"end":1762077601000}}}`,
			}, func(t *testing.T, o *plugintest.Outcome) {
				plugintest.CheckTexts(t, o.Texts(nil), []string{"Fixed."}, false)
				if texts := strings.Join(o.Texts(nil), "|"); strings.Contains(texts, "[queue]") {
					t.Errorf("texts %q hold the ignored note", texts)
				}
			}},
		{"a provider's error is a provider error",
			[]string{facts,
				`{"$twasm":"row","table":"part","key":"prt_1","version":1,"row":{"message_id":"msg_1","message_time_created":1762077600000,"message":{"role":"assistant","time":{"created":1762077600000},"modelID":"m1","providerID":"p","error":{"name":"APIError","data":{"message":"Overloaded","isRetryable":true}}},"id":"prt_1","data":{"type":"text","text":"Let me"}}}`,
			}, func(t *testing.T, o *plugintest.Outcome) {
				if len(o.Result.Errors) != 1 || o.Result.Errors[0].Code != "APIError" || o.Result.Errors[0].Message != "Overloaded" {
					t.Errorf("errors %+v, want the APIError", o.Result.Errors)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(strings.Join(tc.lines, "\n")+"\n"), normalize.Options{Provider: "opencode"})
			if o.Result.FailedLines != 0 {
				t.Fatalf("failed lines %d", o.Result.FailedLines)
			}
			tc.check(t, o)
			if n, first := silent(t, []byte(strings.Join(tc.lines, "\n")+"\n")); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

// TestToolErrorStatus: the status of a tool part that ended in error, by
// the error text OpenCode writes (permission/index.ts, session/processor.ts).
func TestToolErrorStatus(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	for _, tc := range []struct{ name, tool, state, status string }{
		{"the user refused the call", "bash", `"error":"The user rejected permission to use this specific tool call. You may try again with different parameters."`, "denied"},
		{"the user refused it with feedback", "edit", `"error":"The user rejected permission to use this specific tool call with the following feedback: use the other file"`, "denied"},
		{"a permission rule refused it", "bash", `"error":"The user has specified a rule which prevents you from using this specific tool call. Permission \"bash\" with pattern \"rm *\" was denied by rule {}"`, "denied"},
		{"the user dismissed a question", "question", `"error":"The user dismissed this question"`, "denied"},
		{"refused, as toString wrote it", "bash", `"error":"Error: The user rejected permission to use this specific tool call."`, "denied"},
		{"a rule refused it, as toString wrote it", "bash", `"error":"Error: The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules []"`, "denied"},
		{"dismissed, as toString wrote it", "question", `"error":"Error: The user dismissed this question"`, "denied"},
		{"refused, a tagged error's name", "edit", `"error":"PermissionRejectedError: The user rejected permission to use this specific tool call."`, "denied"},
		{"a file missing, as toString wrote it", "read", `"error":"Error: No such file or directory: '/x/.github'"`, "error"},
		{"a call stopped unfinished", "bash", `"error":"Tool execution aborted"`, "cancelled"},
		{"a call marked interrupted", "task", `"error":"Tool execution aborted","metadata":{"interrupted":true}`, "cancelled"},
		{"a tool that failed", "read", `"error":"File not found: /x"`, "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := facts + "\n" + row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"`+tc.tool+`","callID":"c1","state":{"status":"error","input":{},`+tc.state+`,"time":{"start":1762077600000,"end":1762077601000}}}`) + "\n"
			o := plugintest.Run(t, opencode.Plugin, []byte(raw), normalize.Options{Provider: "opencode"})
			if st, ok := o.ResultStatus("c1"); st != tc.status {
				t.Errorf("c1's status %q (a result: %v), want %s", st, ok, tc.status)
			}
		})
	}
}

// TestTreeReadsAsRows: the older file tree and the database hold the same
// data (OpenCode's migration copies each file into its row, the ids into
// columns), and the plugin reads both with the same code: each golden
// case of the database's rows, written as the tree's files
// (tree_<case>.jsonl), gives the same events and the same step result,
// but for the raw line numbers, the format and the line count.
func TestTreeReadsAsRows(t *testing.T) {
	for _, c := range []string{"session_tools_errors", "part_updated_in_place"} {
		t.Run(c, func(t *testing.T) {
			run := func(name string) ([]string, transcript.AgentResult) {
				raw, err := os.ReadFile(filepath.Join(goldenDir, name+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				r, err := sdktest.Run(context.Background(), opencode.Plugin, "opencode", raw)
				if err != nil {
					t.Fatal(err)
				}
				if r.SilentN != 0 {
					t.Errorf("%s: silent lines %v", name, r.Silent)
				}
				var evs []string
				for _, e := range r.Events {
					b, err := json.Marshal(e.Event)
					if err != nil {
						t.Fatal(err)
					}
					evs = append(evs, rawLineRE.ReplaceAllString(string(b), ""))
				}
				res := *r.Step
				res.Format, res.Lines, res.Raw = "", 0, nil
				return evs, res
			}
			rowEvs, rowRes := run("rows_" + c)
			treeEvs, treeRes := run("tree_" + c)
			if strings.Join(rowEvs, "\n") != strings.Join(treeEvs, "\n") {
				t.Errorf("events differ:\nrows:\n%s\ntree:\n%s", strings.Join(rowEvs, "\n"), strings.Join(treeEvs, "\n"))
			}
			rb, _ := json.Marshal(rowRes)
			tb, _ := json.Marshal(treeRes)
			if rawLineRE.ReplaceAllString(string(rb), "") != rawLineRE.ReplaceAllString(string(tb), "") {
				t.Errorf("results differ:\nrows %s\ntree %s", rb, tb)
			}
		})
	}
}

var rawLineRE = regexp.MustCompile(`"(raw_line|RawLine)":\d+`)

// TestStoppedCommand: OpenCode's bash tool completes its part however the
// command ended (tool/bash.ts): on its timeout or the user's abort it
// kills the command, states exit null and appends why, so a completed
// part is not always a command that finished.
func TestStoppedCommand(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	for _, tc := range []struct{ name, tool, output, exit, status, err string }{
		{"timed out (bash_metadata)", "bash", "started\\n\\n\\n<bash_metadata>\\nbash tool terminated command after exceeding timeout 120000 ms. If this command is expected to take longer and is not waiting for interactive input, retry with a larger timeout value in milliseconds.\\n</bash_metadata>", "null", "cancelled", "bash tool terminated command after exceeding timeout 120000 ms."},
		{"aborted (bash_metadata)", "bash", "(no output)\\n\\n<bash_metadata>\\nUser aborted the command\\n</bash_metadata>", "null", "cancelled", "User aborted the command"},
		{"timed out (shell_metadata)", "shell", "x\\n\\n<shell_metadata>\\nshell tool terminated command after exceeding timeout 300 ms.\\n</shell_metadata>", "null", "cancelled", "shell tool terminated command"},
		{"timed out (before 1.0)", "bash", "started\\n\\n(Command timed out after 60000 ms)", "null", "cancelled", "Command timed out after 60000 ms"},
		{"aborted (before 1.0)", "bash", "started\\n\\n(Command was aborted)", "null", "cancelled", "Command was aborted"},
		{"a signal ended it", "bash", "Killed\\n", "null", "error", "without an exit code"},
		{"exited 0", "bash", "ok\\n", "0", "ok", ""},
		{"exited 2", "bash", "no\\n", "2", "error", ""},
		{"no exit stated", "bash", "ok\\n", "", "ok", ""},
		{"not a command", "read", "<bash_metadata>\\nUser aborted the command\\n</bash_metadata>", "null", "ok", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := `{}`
			if tc.exit != "" {
				meta = `{"exit":` + tc.exit + `}`
			}
			raw := facts + "\n" + row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"`+tc.tool+`","callID":"c1","state":{"status":"completed","input":{"command":"sleep 999"},"output":"`+tc.output+`","title":"t","metadata":`+meta+`,"time":{"start":1762077600000,"end":1762077601000}}}`) + "\n"
			o := plugintest.Run(t, opencode.Plugin, []byte(raw), normalize.Options{Provider: "opencode"})
			if st, ok := o.ResultStatus("c1"); st != tc.status {
				t.Errorf("c1's status %q (a result: %v), want %s", st, ok, tc.status)
			}
			if tc.err != "" {
				if _, rs := o.Tools(); len(rs) != 1 || !strings.Contains(rs[0].Error, tc.err) {
					t.Errorf("results %+v, want one whose error says %q", rs, tc.err)
				}
			}
		})
	}
}

// TestToolPartWithoutCallID: a tool part that names no call (OpenCode's
// own always does, packages/opencode/src/session/message-v2.ts ToolPart
// and the v2 client's tool_use, cli/cmd/run/noninteractive.ts; a client
// or plugin posting parts through the API may not) is the call and its
// result in one: paired by the part's id, its outcome kept. Before, its
// call and result were dropped: a failed call left no error, and the
// block named no call.
func TestToolPartWithoutCallID(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	tests := []struct{ name, raw, status string }{
		{"rows: a failed call", facts + "\n" + row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"read","state":{"status":"error","input":{"filePath":"/x"},"error":"File not found: /x","time":{"start":1762077600000,"end":1762077601000}}}`), "error"},
		{"rows: a call that completed", facts + "\n" + row("msg_1", "assistant", "prt_1", `{"type":"tool","tool":"read","callID":"","state":{"status":"completed","input":{"filePath":"/x"},"output":"x","time":{"start":1762077600000,"end":1762077601000}}}`), "ok"},
		{"run --format json: a failed call", `{"type":"tool_use","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"tool","tool":"bash","state":{"status":"error","input":{"command":"false"},"error":"boom","time":{"start":1762077600000,"end":1762077601000}}}}`, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(tt.raw+"\n"), normalize.Options{Provider: "opencode"})
			if st, ok := o.ResultStatus("prt_1"); !ok || st != tt.status {
				t.Errorf("prt_1's result %q (a result: %v); want %s", st, ok, tt.status)
			}
		})
	}
}
