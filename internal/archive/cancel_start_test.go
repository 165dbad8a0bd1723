package archive

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
)

// cancellingPlugin cancels the sync when its capture starts an instance
// (Ctrl-C between the part's step and the first byte fed), then fails as
// a cancelled start does.
type cancellingPlugin struct {
	capture.Plugin
	cancel context.CancelFunc
}

func (p cancellingPlugin) NewInstance(ctx context.Context) (normalize.Instance, error) {
	p.cancel()
	return nil, context.Canceled
}

// TestCancelledBeforeFeed: a sync interrupted after a session's part
// began and before its capture read a byte leaves the run as a kill
// leaves it (open, its ledger entry pending), never ended "cancelled"
// and empty; the next sync archives the session into that run, so the
// file has one run, with its messages, and nothing cancelled. Before, the
// empty run was ended and the next sync (or import) made a second run of
// the file beside it (in CI, a sub-agent's file linked twice).
func TestCancelledBeforeFeed(t *testing.T) {
	locs := claudeHome(t, fixture(t, "testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl"))
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newArchiver(t, root, func(o *Options) {
		native := o.Plugin
		o.Plugin = func(ctx context.Context, provider string) (capture.Plugin, error) {
			p, err := native(ctx, provider)
			return cancellingPlugin{Plugin: p, cancel: cancel}, err
		}
	})
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.NoError(t, a.Close())
	require.Len(t, rep.Outcomes, 1)
	runID := rep.Outcomes[0].RunID
	require.NotEmpty(t, runID, "%+v", rep.Outcomes[0])
	tp := filepath.Join(root, "transcripts", runID+".jsonl")
	b, err := os.ReadFile(tp)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"run.completed"`, "the interrupted run is left open")

	c := newArchiver(t, root, nil)
	rep = c.SyncStores(context.Background(), locs, time.Time{}, nil)
	require.NoError(t, c.Close())
	ids := map[string]bool{}
	for _, o := range rep.Outcomes {
		if o.RunID != "" {
			ids[o.RunID] = true
		}
	}
	assert.Equal(t, map[string]bool{runID: true}, ids, "the session archived into the interrupted run: %+v", rep.Outcomes)
	entries, err := os.ReadDir(filepath.Join(root, "transcripts"))
	require.NoError(t, err)
	var runs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			runs = append(runs, e.Name())
		}
	}
	assert.Equal(t, []string{runID + ".jsonl"}, runs, "one run for the file")
	v := readRun(t, root, runID)
	require.NotEmpty(t, v.parts)
	last := v.parts[len(v.parts)-1]
	assert.NotEqual(t, "cancelled", last.Status)
	b, err = os.ReadFile(tp)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"message.assistant"`, "the session's messages are in the run")
}
