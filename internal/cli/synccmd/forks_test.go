package synccmd_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncForkCountedOnce: an agent that forks a session (Qwen Code's
// /branch, Claude Code's /branch, Pi's /fork) writes the conversation so
// far into the new session's file (Kimi Code's /fork copies the journal
// whole and marks the fork; a Codex 0.158+ fork starts its running token
// total from its parent's instead; an older Codex fork copies the history
// with no mark, its turns stamped with their start). Synced beside the
// session it was forked from, the copy is that session's: `twasm usage`
// and `ls --json` count its tokens once, in the parent's run, and the
// fork's run counts only what it did after the fork. Before, the copied
// tokens counted in both runs (Qwen 129 output tokens in all instead of
// 77, Claude 230 instead of 130, Pi 107 instead of 87, Codex 720 instead
// of 420 for a referenced fork and for a copying one, Kimi Code 257
// instead of 193). A Kimi CLI fork holds nothing that says so: the host
// finds the lines it shares with its parent's run (Kimi CLI 178 instead
// of 113).
func TestSyncForkCountedOnce(t *testing.T) {
	t.Parallel()
	// lines are a golden input's lines, each ending with its newline.
	lines := func(provider, name string) [][]byte {
		return bytes.SplitAfter(clitest.ReadFile(t, clitest.Golden(provider, name)), []byte("\n"))
	}
	cases := []struct {
		name, store        string
		parentRel, forkRel string
		make               func() files
		output, forkOutput int64
	}{
		{"qwen", ".qwen", ".qwen/projects/-home-me-proj/chats/3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f.jsonl", ".qwen/projects/-home-me-proj/chats/7f3e2a10-9c4b-4d2e-8a61-5b0c9d8e7f21.jsonl",
			func() files {
				return copiedParent(lines("qwen", "session_branch.jsonl"), "7f3e2a10-9c4b-4d2e-8a61-5b0c9d8e7f21", "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f")
			}, 40 + 12 + 25, 25},
		{"claude", ".claude", ".claude/projects/-home-me-proj/eb77d97e-0000-4000-8000-00000000a0a1.jsonl", ".claude/projects/-home-me-proj/ead6ae5a-0000-4000-8000-00000000f0a1.jsonl",
			func() files {
				return copiedParent(lines("claude", "session_log_fork_v2_1_123.jsonl"), "ead6ae5a-0000-4000-8000-00000000f0a1", "eb77d97e-0000-4000-8000-00000000a0a1")
			}, 80 + 20 + 30, 30},
		{"pi", ".pi", ".pi/agent/sessions/--home-u-proj--/2026-09-09T08-00-00-000Z_0a0a0000-0000-4000-8000-000000000000.jsonl", ".pi/agent/sessions/--home-u-proj--/2026-09-10T10-00-00-000Z_0b0f0000-0000-4000-8000-000000000001.jsonl",
			func() files {
				fork := lines("pi", "session_fork_branch_summary.jsonl")
				// The parent: its own header, then the three entries the
				// fork copied (dated before the fork's header).
				parent := [][]byte{[]byte(`{"type":"session","version":3,"id":"0a0a0000-0000-4000-8000-000000000000","timestamp":"2026-09-09T08:00:00.000Z","cwd":"/home/u/proj"}` + "\n")}
				parent = append(parent, fork[1:4]...)
				return files{bytes.Join(parent, nil), bytes.Join(fork, nil)}
			}, 20 + 67, 67},
		// Codex 0.158+ forks reference the parent's history instead of
		// copying it, but the fork's running token total starts from the
		// parent's last: the parent's 300 output tokens are in the fork's
		// first count's total.
		{"codex", ".codex", ".codex/sessions/2026/11/20/rollout-2026-11-20T09-50-00-019a6b2e-4c1d-7e20-9f31-0a1b2c3d4e5f.jsonl", ".codex/sessions/2026/11/20/rollout-2026-11-20T10-00-00-019a6b40-7d2e-7f31-8a42-1b2c3d4e5f60.jsonl",
			func() files {
				parent := `{"timestamp":"2026-11-20T09:50:00.120Z","type":"session_meta","payload":{"session_id":"019a6b2e-4c1d-7e20-9f31-0a1b2c3d4e5f","id":"019a6b2e-4c1d-7e20-9f31-0a1b2c3d4e5f","timestamp":"2026-11-20T09:50:00.100Z","cwd":"/work/proj","originator":"codex-tui","cli_version":"0.158.0","source":"cli","model_provider":"openai","history_mode":"paginated"}}
{"timestamp":"2026-11-20T09:50:05.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"019a6b2e-9e01-7a10-b001-000000000001","model_context_window":258400}}
{"timestamp":"2026-11-20T09:50:05.010Z","type":"turn_context","payload":{"turn_id":"019a6b2e-9e01-7a10-b001-000000000001","cwd":"/work/proj","model":"gpt-5.5"}}
{"timestamp":"2026-11-20T09:50:05.020Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Replace the switch in kinds.go."}]}}
{"timestamp":"2026-11-20T09:50:20.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The switch now has a case per kind."}],"phase":"final_answer"}}
{"timestamp":"2026-11-20T09:50:20.010Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":12000,"cached_input_tokens":10000,"output_tokens":300,"reasoning_output_tokens":64,"total_tokens":12300},"last_token_usage":{"input_tokens":12000,"cached_input_tokens":10000,"output_tokens":300,"reasoning_output_tokens":64,"total_tokens":12300},"model_context_window":258400},"rate_limits":null}}
{"timestamp":"2026-11-20T09:50:20.020Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"019a6b2e-9e01-7a10-b001-000000000001","last_agent_message":"The switch now has a case per kind."}}
`
				return files{[]byte(parent), bytes.Join(lines("codex", "rollout_v0158_user_fork_referenced.jsonl"), nil)}
			}, 300 + 120, 120},
		// A Codex fork that copied its parent's history (0.147): the copy
		// marks no end, but its turns keep their stamps, which predate
		// the fork's id; the parent is the copied lines as the parent
		// wrote them, dated then.
		{"codex copied", ".codex", ".codex/sessions/2026/11/20/rollout-2026-11-20T09-50-00-01a1f85c-e5a4-7e20-9f31-0a1b2c3d4e5f.jsonl", ".codex/sessions/2026/11/20/rollout-2026-11-20T10-00-00-01a1f866-0d64-7c31-8a42-1b2c3d4e5f60.jsonl",
			func() files {
				fork := lines("codex", "rollout_v0147_user_fork_copied.jsonl")
				parent := regexp.MustCompile(`(?m)^\{"timestamp":"2026-11-20T10:00:00\.12\dZ"`).ReplaceAll(bytes.Join(fork[1:10], nil), []byte(`{"timestamp":"2026-11-20T09:50:20.000Z"`))
				return files{parent, bytes.Join(fork, nil)}
			}, 300 + 120, 120},
		// Kimi Code's /fork copies the journal whole and appends a fork
		// marker; the parent went on after the fork, so the fork's file
		// is a session of its own, which holds the parent's turn.
		{"kimi", ".kimi-code", ".kimi-code/sessions/wd_proj_3f2a1b0c9d8e/session_5c1e0d1a/agents/main/wire.jsonl", ".kimi-code/sessions/wd_proj_3f2a1b0c9d8e/session_9f0e1d2c/agents/main/wire.jsonl",
			func() files {
				_, later, _ := bytes.Cut(clitest.ReadFile(t, clitest.Golden("kimi", "code_call_id_reused.jsonl")), []byte("\n"))
				return files{append(clitest.ReadFile(t, clitest.Golden("kimi", "code_tools_failed_turn.jsonl")), later...),
					clitest.ReadFile(t, clitest.Golden("kimi", "code_fork.jsonl"))}
			}, 64 + 50 + 79, 79},
		// The Kimi CLI's /fork copies the journal's lines with no mark;
		// the parent went on after it (another turn), the fork too. The
		// host finds the lines the fork shares with the parent's run
		// and names them in the facts line.
		{"kimi cli", ".kimi", ".kimi/sessions/3f2a1b0c9d8e/5c1e0d1a-0000-4000-8000-000000000001/wire.jsonl", ".kimi/sessions/3f2a1b0c9d8e/9f0e1d2c-0000-4000-8000-000000000002/wire.jsonl",
			func() files {
				shared := clitest.ReadFile(t, clitest.Golden("kimi", "legacy_side_question.jsonl"))                                     // 65 output tokens
				_, later, _ := bytes.Cut(clitest.ReadFile(t, clitest.Golden("kimi", "legacy_hook_blocked_prompt.jsonl")), []byte("\n")) // 12
				_, own, _ := bytes.Cut(clitest.ReadFile(t, clitest.Golden("kimi", "legacy_step_failed.jsonl")), []byte("\n"))           // 36
				return files{append(slices.Clone(shared), later...), append(slices.Clone(shared), own...)}
			}, 65 + 12 + 36, 36},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			f := c.make()
			h.Put(c.parentRel, f.parent, 2*time.Hour)
			h.Put(c.forkRel, f.fork, time.Hour)
			runs := syncNewRuns(t, h, filepath.Join(h.Dir, c.store), "sync", 2)
			forkRun := runs[filepath.Join(h.Dir, c.forkRel)]
			if forkRun == "" || runs[filepath.Join(h.Dir, c.parentRel)] == "" {
				t.Fatalf("runs %v: want the parent's and the fork's", runs)
			}
			if u := usageTotal(t, h); u.Sessions != 2 || u.Output != c.output {
				t.Errorf("usage --json: %d sessions, %d output tokens; want 2, %d", u.Sessions, u.Output, c.output)
			}
			var total int64
			forkOut := int64(-1)
			for _, l := range bytes.Split(bytes.TrimSpace([]byte(h.OK("ls", "--json").Out)), []byte("\n")) {
				var row struct {
					RunID      string `json:"run_id"`
					UsageInAll struct {
						Output int64 `json:"output_tokens"`
					} `json:"usage_in_all"`
				}
				if err := json.Unmarshal(l, &row); err != nil {
					t.Fatalf("ls --json line %q: %v", l, err)
				}
				total += row.UsageInAll.Output
				if row.RunID == forkRun {
					forkOut = row.UsageInAll.Output
				}
			}
			if total != c.output || forkOut != c.forkOutput {
				t.Errorf("ls --json: %d output tokens in all, the fork's run %d; want %d, %d", total, forkOut, c.output, c.forkOutput)
			}
		})
	}
}

// files are a session's file and its fork's.
type files struct{ parent, fork []byte }

// forkedFrom is the member a copied record carries (Qwen Code's, Claude
// Code's).
var forkedFrom = regexp.MustCompile(`,"forkedFrom":\{[^}]*\}`)

// copiedParent is a fork (its lines) and the session it was forked from:
// the fork's copied lines (those with forkedFrom) as the parent wrote
// them, without forkedFrom, with the parent's id for the fork's.
func copiedParent(fork [][]byte, forkID, parentID string) files {
	var parent [][]byte
	for _, l := range fork {
		if forkedFrom.Match(l) {
			parent = append(parent, bytes.ReplaceAll(forkedFrom.ReplaceAll(l, nil), []byte(forkID), []byte(parentID)))
		}
	}
	return files{bytes.Join(parent, nil), bytes.Join(fork, nil)}
}

// lsTools is the number of tool calls `ls --json` counts over every run,
// and in run (-1 when ls lists no such run).
func lsTools(t *testing.T, h *clitest.Home, run string) (all, inRun int) {
	t.Helper()
	inRun = -1
	for _, l := range bytes.Split(bytes.TrimSpace([]byte(h.OK("ls", "--json").Out)), []byte("\n")) {
		var row struct {
			RunID string `json:"run_id"`
			Tools int    `json:"tools"`
		}
		if err := json.Unmarshal(l, &row); err != nil {
			t.Fatalf("ls --json line %q: %v", l, err)
		}
		all += row.Tools
		if row.RunID == run {
			inRun = row.Tools
		}
	}
	return all, inRun
}

// total is what `usage --json` totals: sessions and tokens.
type total struct {
	Sessions      int
	Input, Output int64
}

// usageTotal is `twasm usage --json`'s total.
func usageTotal(t *testing.T, h *clitest.Home) total {
	t.Helper()
	var rep struct {
		Total struct {
			Sessions int `json:"sessions"`
			Usage    struct {
				Input  int64 `json:"input_tokens"`
				Output int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"total"`
	}
	r := h.OK("usage", "--json")
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, r.Out)
	}
	return total{rep.Total.Sessions, rep.Total.Usage.Input, rep.Total.Usage.Output}
}
