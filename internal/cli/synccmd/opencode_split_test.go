package synccmd_test

import (
	"fmt"
	"strings"
	"testing"
)

// The split of OpenCode's v2 runtime's data, as its migration
// 20260804233008_loose_psylocke (anomalyco/opencode,
// packages/core/src/database/migration) and the later ones that touch
// session_v2 (20260811161259_execution_claim_attempts,
// 20260819222447_session_viewed_state) leave a database: the v1 tables
// message and part stay in both lineages.
const (
	// openCodeSessionV2 is session_v2 as the fresh lineage creates it
	// (no pre-split marker), with the later migrations' columns.
	openCodeSessionV2 = "CREATE TABLE `session_v2` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, " +
		"`fork_session_id` text, `fork_boundary` text, `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text, `version` text NOT NULL, " +
		"`share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `metadata` text, " +
		"`cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL, " +
		"`tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, " +
		"`revert` text, `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, " +
		"`time_compacting` integer, `time_archived` integer, `time_suspended` integer, " +
		"CONSTRAINT `fk_session_v2_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE)"
	// openCodeSessionMessageV2 is session_message as the fresh lineage
	// recreates it, its key on session_v2.
	openCodeSessionMessageV2 = "CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL, `seq` integer NOT NULL, " +
		"`time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, " +
		"CONSTRAINT `fk_session_message_session_id_session_v2_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session_v2`(`id`) ON DELETE CASCADE)"
	// openCodeLaterV2 are the later migrations' columns of session_v2.
	openCodeLaterV2 = "ALTER TABLE `session_v2` ADD `resume_attempts` integer DEFAULT 0 NOT NULL; " +
		"ALTER TABLE `session_v2` ADD `time_idle` integer; ALTER TABLE `session_v2` ADD `time_viewed` integer; ALTER TABLE `session_v2` ADD `idle_outcome` text"
)

// sessionV2 writes a session of the v2 runtime into session_v2, its
// latest execution settled at idle with outcome ("" none).
func (o *openCodeDB) sessionV2(id, dir string, t, idle int64, outcome string) {
	var oc, ti any
	if outcome != "" {
		oc, ti = outcome, idle
	}
	o.Exec("INSERT INTO session_v2 (id, project_id, slug, directory, title, version, agent, model, cost, tokens_input, tokens_output, time_created, time_updated, time_idle, idle_outcome) "+
		`VALUES (?, 'prj', 'brave-fox', ?, 'A v2 task', '2.0.18', 'build', '{"id":"claude-sonnet-4-5","providerID":"anthropic"}', 0.5, 9999, 999, ?, ?, ?, ?)`,
		id, dir, t, t, ti, oc)
}

// TestSyncOpenCodeSplit: a database after the v2 runtime's split of its
// sessions into session_v2, in each lineage: sync archives every session
// of session_v2 (before, the sessions query read session alone, so none
// of them was listed, archived or reported) with its messages of
// session_message, its directory and its idle outcome from its row, and
// its tokens those of its messages (the row's totals not added again),
// besides the older binary's sessions of session where the lineage keeps
// it; a second sync archives nothing; the database is byte-identical.
func TestSyncOpenCodeSplit(t *testing.T) {
	t.Parallel()
	const T = 1767312000000
	v2Answer := func(id string, created int64, text string) string {
		return fmt.Sprintf(`{"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[{"type":"text","id":"txt_%s","text":%q}],`+
			`"finish":"stop","cost":0.01,"tokens":{"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":%d,"completed":%d}}`, id, text, created, created+500)
	}
	v2Prompt := func(text string, created int64) string {
		return fmt.Sprintf(`{"text":%q,"time":{"created":%d}}`, text, created)
	}
	// want: each session's prompt is in one run, which holds each of
	// once once and each of has; the v2 session's usage is its message's
	// (input 100), never its row's totals (input 9999) added.
	want := map[string]struct{ once, has []string }{
		"List the files.": {once: []string{"Two files: go.mod and main.go."}},
		"Fix the build.": {once: []string{"The build is fixed."},
			has: []string{`"cwd":"/home/me/v2proj"`, `"status":"error","error":"the session's last execution failed (OpenCode: idle_outcome failed)"`,
				`"usage":{"input_tokens":100,"uncached_input_tokens":100,"cache_read_tokens":0,"cache_write_tokens":0,"output_tokens":20`}},
	}
	for _, tc := range []struct {
		name string
		// split turns the older schema (plugins/opencode/testdata/schema.sql,
		// ses_1 written) into the split's.
		split func(oc *openCodeDB)
	}{
		{
			name: "fresh lineage: session kept, session_v2 created",
			split: func(oc *openCodeDB) {
				oc.Exec(openCodeSessionV2 + "; " + openCodeSessionMessageV2 + "; " + openCodeLaterV2)
				oc.sessionV2("ses_v2a", "/home/me/v2proj", T+5000, T+8000, "failed")
				oc.v2message("msg_a1", "ses_v2a", "user", 1, T+5000, T+5000, v2Prompt("Fix the build.", T+5000))
				oc.v2message("msg_a2", "ses_v2a", "assistant", 2, T+6000, T+6500, v2Answer("a2", T+6000, "The build is fixed."))
			},
		},
		{
			// Should the v2 runtime hold a session of the older
			// binary under its id, it is listed once.
			name: "fresh lineage, an id in both tables",
			split: func(oc *openCodeDB) {
				oc.Exec(openCodeSessionV2 + "; " + openCodeSessionMessageV2 + "; " + openCodeLaterV2)
				oc.sessionV2("ses_1", "/home/me/proj", T, 0, "")
				oc.sessionV2("ses_v2a", "/home/me/v2proj", T+5000, T+8000, "failed")
				oc.v2message("msg_a1", "ses_v2a", "user", 1, T+5000, T+5000, v2Prompt("Fix the build.", T+5000))
				oc.v2message("msg_a2", "ses_v2a", "assistant", 2, T+6000, T+6500, v2Answer("a2", T+6000, "The build is fixed."))
			},
		},
		{
			name: "pre-split lineage: session renamed session_v2",
			split: func(oc *openCodeDB) {
				// The pre-split v2 lineage shares session, its
				// session_message keyed on it; the older session's
				// history is converted into session_message (its times
				// as they were), then session is renamed.
				oc.Exec(openCodeV2Table + "; ALTER TABLE `session` ADD `time_suspended` integer")
				oc.v2message("msg_c1", "ses_1", "user", 1, T, T+9000, v2Prompt("List the files.", T))
				oc.v2message("msg_c2", "ses_1", "assistant", 2, T+1000, T+9000, v2Answer("c2", T+1000, "Two files: go.mod and main.go."))
				oc.Exec("PRAGMA legacy_alter_table = OFF; ALTER TABLE `session` RENAME TO `session_v2`; " + openCodeLaterV2)
				oc.sessionV2("ses_v2a", "/home/me/v2proj", T+5000, T+8000, "failed")
				oc.v2message("msg_a1", "ses_v2a", "user", 1, T+5000, T+5000, v2Prompt("Fix the build.", T+5000))
				oc.v2message("msg_a2", "ses_v2a", "assistant", 2, T+6000, T+6500, v2Answer("a2", T+6000, "The build is fixed."))
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, dbDir, oc := openCodeHome(t)
			oc.turnStarted(T)
			oc.part("prt_2b", "msg_2", "ses_1", T+1100, T+1100, `{"type":"text","text":"Two files: go.mod and main.go."}`)
			oc.Exec("UPDATE message SET data = ? WHERE id = 'msg_2'", fmt.Sprintf(`{"role":"assistant","time":{"created":%d,"completed":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic","finish":"stop"}`, T+1000, T+1200))
			tc.split(oc)
			if err := oc.DB.Close(); err != nil {
				t.Fatal(err)
			}
			got := syncWant(t, h, dbDir, "first sync", map[string]int{"new": len(want)})
			found := map[string]bool{}
			for _, run := range got["new"] {
				b := runText(t, h, run)
				for prompt, w := range want {
					if !strings.Contains(b, prompt) {
						continue
					}
					found[prompt] = true
					for _, s := range w.once {
						if n := strings.Count(b, s); n != 1 {
							t.Errorf("the run %s of %q holds %s %d times, want once", run, prompt, s, n)
						}
					}
					for _, s := range w.has {
						if !strings.Contains(b, s) {
							t.Errorf("the run %s of %q lacks %s", run, prompt, s)
						}
					}
					if strings.Contains(b, "9999") || strings.Contains(b, "10099") {
						t.Errorf("the run %s of %q holds the session row's token totals", run, prompt)
					}
				}
			}
			for prompt := range want {
				if !found[prompt] {
					t.Errorf("no run holds the session of %q: runs %v", prompt, got)
				}
			}
			syncWant(t, h, dbDir, "second sync", nothing)
		})
	}
}
