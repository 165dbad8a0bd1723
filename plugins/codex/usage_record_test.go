package codex

import (
	"fmt"
	"strings"
	"testing"
)

// Lines in the shape Codex 0.158+ writes them (ids and texts made up).

func recMeta(id string) string {
	return `{"timestamp":"2026-10-01T10:00:00Z","type":"session_meta","payload":{"session_id":"` + id + `","id":"` + id + `","cli_version":"0.159.2","source":"exec"}}`
}

func recEvent(typ, turn string) string {
	return `{"timestamp":"2026-10-01T10:00:01Z","type":"event_msg","payload":{"type":"` + typ + `","turn_id":"` + turn + `"}}`
}

// recUsage is a Codex usage object: input (of it cached) and output.
func recUsage(in, cached, out int) string {
	return fmt.Sprintf(`{"input_tokens":%d,"cached_input_tokens":%d,"cache_write_input_tokens":0,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d}`, in, cached, out, in+out)
}

// record is a token_usage_record of thread for response resp: its
// usage u, its turn's and thread's totals.
func record(thread, resp, u, turnTotal, threadTotal string) string {
	return `{"timestamp":"2026-10-01T10:00:02Z","type":"token_usage_record","payload":{"thread_id":"` + thread + `","turn_id":"turn-x","session_id":"` + thread + `","root_turn_id":"turn-x","response_id":"` + resp + `","usage":` + u + `,"turn_token_usage":` + turnTotal + `,"thread_token_usage":` + threadTotal + `}}`
}

func count(total, last string) string {
	return `{"timestamp":"2026-10-01T10:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":` + total + `,"last_token_usage":` + last + `,"model_context_window":258400},"rate_limits":null}}`
}

// compactedRemote is the compacted record of a remote compaction: no
// summary, its replacement history, and a copy of its response's record.
func compactedRemote(rec string) string {
	payload := rec[strings.Index(rec, `"payload":`)+len(`"payload":`) : len(rec)-1]
	return `{"timestamp":"2026-10-01T10:00:04Z","type":"compacted","payload":{"message":"","replacement_history":[{"type":"compaction","encrypted_content":"opaque"}],"compaction_response_id":"resp-c","latest_token_usage_record":` + payload + `}}`
}

// TestTokenUsageRecords pins that each model response is counted once:
// from token_count's running total when a count states it, from its
// token_usage_record when none does (a remote compaction's response,
// which Codex records but never adds to token_count's total), across a
// resume however the resumed process starts its counters.
func TestTokenUsageRecords(t *testing.T) {
	const th = "thread-1"
	a, c, b := recUsage(100, 80, 3), recUsage(120, 100, 9), recUsage(110, 90, 2)
	ab := recUsage(210, 170, 5)
	ac := recUsage(220, 180, 12)
	acb := recUsage(330, 270, 14)
	zero := `{"input_tokens":0,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":50}`
	firstTurn := []string{recMeta(th), recEvent("task_started", "turn-1"),
		record(th, "resp-a", a, a, a), count(a, a), recEvent("task_complete", "turn-1")}
	tests := []struct {
		name  string
		lines []string
		want  string // the last usage reported
	}{{
		name:  "record and token_count pairs: counted once",
		lines: append(firstTurn[:4:4], record(th, "resp-b", b, ab, ab), count(ab, b), recEvent("task_complete", "turn-1")),
		want:  "usage in=210 cache_read=170 out=5 reasoning=0 mode=set",
	}, {
		// 0.159.2: the resumed process continues both counters; the
		// remote compaction's record has no count, the count after it
		// repeats the total.
		name: "resumed session with a remote compaction: its record is counted, nothing twice",
		lines: append(firstTurn[:5:5], recEvent("thread_settings_applied", ""), recEvent("task_started", "turn-2"),
			record(th, "resp-c", c, c, ac), compactedRemote(record(th, "resp-c", c, c, ac)), count(a, zero),
			record(th, "resp-b", b, recUsage(230, 190, 11), acb), count(ab, b), recEvent("task_complete", "turn-2")),
		want: "usage in=330 cache_read=270 out=14 reasoning=0 mode=set",
	}, {
		name: "a remote compaction's record that ends the rollout is counted at its end",
		lines: append(firstTurn[:5:5], recEvent("task_started", "turn-2"),
			record(th, "resp-c", c, c, ac), count(a, zero)),
		want: "usage in=220 cache_read=180 out=12 reasoning=0 mode=set",
	}, {
		// A resumed process whose token_count total starts again from 0.
		name: "resumed process restarting token_count: no double count",
		lines: append(firstTurn[:5:5], recMeta(th), recEvent("task_started", "turn-2"),
			record(th, "resp-b", b, b, ab), count(b, b), recEvent("task_complete", "turn-2")),
		want: "usage in=210 cache_read=170 out=5 reasoning=0 mode=set",
	}, {
		// A count that repeats the total adds nothing, so it states no
		// record, even one with its last_token_usage's figures.
		name: "a record beside a repeated count is counted when the turn is aborted",
		lines: append(firstTurn[:5:5], recEvent("task_started", "turn-2"),
			record(th, "resp-a2", a, a, recUsage(200, 160, 6)), count(a, a), recEvent("turn_aborted", "turn-2")),
		want: "usage in=200 cache_read=160 out=6 reasoning=0 mode=set",
	}, {
		name: "a repeated record and another thread's record count nothing",
		lines: append(firstTurn[:4:4], record(th, "resp-a", a, a, a), record("thread-review", "resp-r", c, c, c),
			recEvent("task_complete", "turn-1")),
		want: "usage in=100 cache_read=80 out=3 reasoning=0 mode=set",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			for _, r := range records(t, tt.lines...) {
				if strings.HasPrefix(r, "usage ") {
					got = r
				}
			}
			if got != tt.want {
				t.Errorf("last usage = %q, want %q", got, tt.want)
			}
		})
	}
}
