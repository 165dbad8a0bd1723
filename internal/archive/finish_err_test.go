package archive

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/natives"
	"github.com/twasm/twasm/transcript"
)

// closeFails is a plugin whose instances fail to close: the capture's
// Finish returns the part's result and that error.
type closeFails struct{ capture.Plugin }

type closeFailsInstance struct{ normalize.Instance }

var errCloseFails = errors.New("the instance would not close")

func (closeFailsInstance) Close() error { return errCloseFails }

func (p closeFails) NewInstance(ctx context.Context) (normalize.Instance, error) {
	in, err := p.Plugin.NewInstance(ctx)
	return closeFailsInstance{in}, err
}

// TestFinishErrorKept: a part whose capture finished with its result and
// an error (a plugin instance that would not close; in the same way a
// raw capture whose fsync failed) is not a part archived whole. The
// part's hash, taken after Finish, overwrote Finish's error, so the step
// read ok and the ledger took the bytes as archived; now the step
// carries the error and the sync reports it.
func TestFinishErrorKept(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	path := filepath.Join(home, "s.jsonl")
	writeAged(t, path, fixture(t, "claude/agentcmd_session_log_ansi_tool_error.jsonl"), time.Hour)
	root := t.TempDir()
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(_ context.Context, provider string) (capture.Plugin, error) {
			p, ok := natives.ForProvider(provider)
			if !ok {
				return nil, fmt.Errorf("no plugin for %q", provider)
			}
			return closeFails{capture.NativePlugin(p)}, nil
		}
	})
	o := a.SyncFile(ctx, "claude", path)
	require.NoError(t, a.Close())
	require.NotEmpty(t, o.RunID, "%+v", o)
	var stepErr string
	for _, ev := range readRun(t, root, o.RunID).events {
		if ev.Type == transcript.StepCompleted && ev.Path == "agent" {
			stepErr = ev.Step().Error
		}
	}
	t.Logf("outcome %+v; agent step's error %q", o, stepErr)
	assert.True(t, strings.Contains(o.Reason, errCloseFails.Error()) || strings.Contains(stepErr, errCloseFails.Error()),
		"the capture's error is reported: outcome %s %q, step error %q", o.Action, o.Reason, stepErr)
}
