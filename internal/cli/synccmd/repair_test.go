package synccmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/testing/clitest"
)

// doctorDamaged runs `twasm doctor --json`, which must leave the agent's
// files as they were and exit 1 when a run is damaged (0 when none is),
// and returns its damaged runs by run id.
func doctorDamaged(t *testing.T, h *clitest.Home) map[string]archive.RawDamage {
	t.Helper()
	var r clitest.Result
	clitest.Unchanged(t, h.Dir, "doctor", func() { r = h.Run("doctor", "--json") })
	var doc struct {
		Damaged []archive.RawDamage `json:"damaged"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.Out)), &doc); err != nil || doc.Damaged == nil {
		t.Fatalf("doctor --json: %v (damaged %v)\n%s", err, doc.Damaged, r)
	}
	if want := map[bool]int{true: 1, false: 0}[len(doc.Damaged) > 0]; r.Code != want {
		t.Errorf("doctor with %d damaged run(s): exit %d, want %d\n%s", len(doc.Damaged), r.Code, want, r)
	}
	out := map[string]archive.RawDamage{}
	for _, d := range doc.Damaged {
		out[d.RunID] = d
	}
	return out
}

// usageOutput runs `twasm usage --json`: its output tokens in all and
// the superseded runs it left out.
func usageOutput(t *testing.T, h *clitest.Home) (int64, int) {
	t.Helper()
	return clitest.UsageTotal(t, h.OK("usage", "--json").Out)
}

// TestSyncRepair: `twasm doctor` names each session run whose raw
// capture does not hold its source's bytes, with where it differs from
// the agent's file and what `sync --repair` can do, and exits 1;
// `twasm sync --repair` archives the session whose file holds its bytes
// again into a new run that supersedes the damaged one (usage counts it
// once), keeps the run whose file is gone, says so and exits 1; neither
// writes to the agent's files, and a second repair does nothing more.
func TestSyncRepair(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	kept := clitest.ClaudeSession("kept", 20)
	gone := clitest.ClaudeSession("gone", 5)
	keptPath := h.Put(".claude/projects/p/kept.jsonl", kept, time.Hour)
	gonePath := h.Put(".claude/projects/p/gone.jsonl", gone, time.Hour)
	byPath := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(h.OK("sync", "--json").Out), "\n") {
		var o archive.Outcome
		if json.Unmarshal([]byte(l), &o) == nil && o.Action == archive.ActionNew {
			byPath[o.Path] = o.RunID
		}
	}
	keptRun, goneRun := byPath[keptPath], byPath[gonePath]
	if keptRun == "" || goneRun == "" {
		t.Fatalf("sync archived %v", byPath)
	}
	usage := func() (int64, int) { t.Helper(); return usageOutput(t, h) }
	want, _ := usage()
	if want != 8*25 {
		t.Fatalf("usage before: %d output tokens, want %d", want, 8*25)
	}
	if d := doctorDamaged(t, h); len(d) != 0 {
		t.Fatalf("doctor finds damage in a fresh sync: %+v", d)
	}

	clitest.DamageRaw(t, h.Stor, keptRun, "kept prompt 3:", "kept prompt 3;")
	clitest.DamageRaw(t, h.Stor, goneRun, "gone prompt 1:", "gone prompt 1;")
	if err := os.Remove(gonePath); err != nil {
		t.Fatal(err)
	}
	d := doctorDamaged(t, h)
	if len(d) != 2 {
		t.Fatalf("doctor: %d damaged runs, want 2: %+v", len(d), d)
	}
	k, g := d[keptRun], d[goneRun]
	at := int64(bytes.Index(kept, []byte("kept prompt 3:")) + len("kept prompt 3"))
	if k.Path != keptPath || k.Source != archive.SourceHolds || !k.Repairable || k.Differs == nil || k.Differs.Byte != at || k.Differs.Line != 13 {
		t.Errorf("doctor on the run whose file holds its bytes: %+v (differs %+v), want byte %d line 13", k, k.Differs, at)
	}
	if g.Path != gonePath || g.Source != archive.SourceGone || g.Repairable || !strings.Contains(g.Repair, "kept as it is") {
		t.Errorf("doctor on the run whose file is gone: %+v", g)
	}
	if out := h.Run("doctor").Out; !strings.Contains(out, "error raw captures: run "+keptRun) || !strings.Contains(out, "`twasm sync --repair` archives the session again") {
		t.Errorf("doctor does not name the damaged run and the repair:\n%s", out)
	}

	var r clitest.Result
	clitest.Unchanged(t, h.Dir, "sync --repair", func() { r = h.Run("sync", "--repair") })
	if r.Code != 1 {
		t.Errorf("sync --repair with a run kept damaged: exit %d, want 1\n%s", r.Code, r)
	}
	outs := clitest.Outcomes(r.Out)
	if len(outs["new"]) != 1 || len(outs["damaged"]) != 1 || outs["damaged"][0] != goneRun {
		t.Fatalf("sync --repair: %v\n%s", outs, r)
	}
	repaired := outs["new"][0]
	if !strings.Contains(r.Out, "run "+keptRun+"'s raw capture is damaged") || !strings.Contains(r.ErrOut, "1 damaged (kept as they are)") {
		t.Errorf("sync --repair does not say what it did:\n%s", r)
	}
	clitest.Validate(t, clitest.TranscriptPath(h.Stor, keptRun), clitest.TranscriptPath(h.Stor, repaired))
	end := clitest.RunEnd(t, clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, keptRun)))
	var by string
	if err := json.Unmarshal(end.Extra["superseded_by"], &by); err != nil || by != repaired {
		t.Errorf("the damaged run's end names %q as superseding it (%v), want %s", by, err, repaired)
	}
	if got, superseded := usage(); got != want || superseded != 1 {
		t.Errorf("usage after the repair: %d output tokens, %d run(s) left out; want %d, 1", got, superseded, want)
	}
	d = doctorDamaged(t, h)
	if len(d) != 1 || d[goneRun].RunID != goneRun {
		t.Errorf("doctor after the repair: %+v, want the run whose file is gone only", d)
	}

	// Again: the session is not archived a third time.
	r = h.Run("sync", "--repair")
	if outs := clitest.Outcomes(r.Out); len(outs["new"]) != 0 || len(outs["damaged"]) != 1 {
		t.Errorf("a second sync --repair: %v\n%s", outs, r)
	}
	if got, _ := usage(); got != want {
		t.Errorf("usage after a second repair: %d, want %d", got, want)
	}
}

// TestRepairEndedRun: `sync --repair` of a damaged run that had already
// ended (imported with twasm import, which ends a run at once; or ended
// by a sync when the agent's file was gone, the file put back since)
// archives its session again as a new run, and the session is counted
// once: usage, stats --all and ls count the new run alone, ls
// --superseded lists the damaged run too (kept as it is: its end cannot
// be written again), and so after a further sync, with the ledger kept
// or rebuilt from the transcripts. Before, the damaged run's end could
// not name the run superseding it and nothing else said so: the
// session's tokens were counted twice.
func TestRepairEndedRun(t *testing.T) {
	t.Parallel()
	const turns, want = 12, 8 * 12 // ClaudeSession: 8 output tokens a turn
	for _, c := range []struct {
		name string
		// end ends the session's run, archived from path (a file of
		// the home's Claude store), before it is damaged.
		end func(t *testing.T, h *clitest.Home, path string, b []byte)
	}{
		{"open (a sync's)", func(t *testing.T, h *clitest.Home, path string, b []byte) { h.OK("sync") }},
		{"imported", func(t *testing.T, h *clitest.Home, path string, b []byte) {
			h.OK("import", "--provider", "claude", path)
			h.OK("sync")
		}},
		{"its file gone, then put back", func(t *testing.T, h *clitest.Home, path string, b []byte) {
			h.OK("sync")
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if outs := clitest.Outcomes(h.OK("sync").Out); len(outs["closed"]) != 1 {
				t.Fatalf("sync with the file gone: %v, want its run closed", outs)
			}
			clitest.Put(t, path, b, time.Hour)
			h.OK("sync")
		}},
	} {
		for _, rebuild := range []bool{false, true} {
			name := c.name
			if rebuild {
				name += ", the ledger rebuilt after"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := clitest.NewHome(t)
				b := clitest.ClaudeSession("ended", turns)
				path := h.Put(".claude/projects/p/ended.jsonl", b, time.Hour)
				c.end(t, h, path, b)
				ls := func(args ...string) []string {
					t.Helper()
					return strings.Split(strings.TrimSpace(h.OK(append([]string{"ls", "--json"}, args...)...).Out), "\n")
				}
				runs := ls()
				if len(runs) != 1 {
					t.Fatalf("ls before the repair: %v, want one run", runs)
				}
				var first struct {
					RunID string `json:"run_id"`
				}
				if err := json.Unmarshal([]byte(runs[0]), &first); err != nil {
					t.Fatal(err)
				}
				clitest.DamageRaw(t, h.Stor, first.RunID, "ended prompt 3:", "ended prompt 3;")
				outs := clitest.Outcomes(h.OK("sync", "--repair").Out)
				if len(outs["new"]) != 1 {
					t.Fatalf("sync --repair: %v, want one new run", outs)
				}
				repaired := outs["new"][0]
				if rebuild {
					if err := os.Remove(archive.LedgerFile(h.Stor)); err != nil {
						t.Fatal(err)
					}
				}
				for _, step := range []string{"after the repair", "after a further sync"} {
					if step != "after the repair" {
						if outs := clitest.Outcomes(h.OK("sync").Out); len(outs["new"])+len(outs["continued"]) != 0 {
							t.Errorf("%s: sync archived %v", step, outs)
						}
					}
					output, superseded := usageOutput(t, h)
					var st struct {
						UsageInAll map[string]int64 `json:"usage_in_all"`
					}
					if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil {
						t.Fatal(err)
					}
					if output != want || superseded != 1 || st.UsageInAll["output_tokens"] != want {
						t.Errorf("%s: usage %d output tokens, %d run(s) left out, stats --all %d; want %d, 1, %d",
							step, output, superseded, st.UsageInAll["output_tokens"], want, want)
					}
					lsRow(t, h, repaired)
					if all := ls("--superseded"); len(all) != 2 {
						t.Errorf("%s: ls --superseded lists %d runs, want the damaged run too", step, len(all))
					}
				}
				if d := doctorDamaged(t, h); len(d) != 0 {
					t.Errorf("doctor after the repair: %+v, want nothing damaged", d)
				}
			})
		}
	}
}
