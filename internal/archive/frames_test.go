package archive

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/rawfile"
)

// framesSession is a Claude Code session of about 2.6 MiB (a real log's
// lines repeated) holding a line of 512 KiB that starts 51 bytes into the
// third 256 KiB read and ends 10 bytes into the fifth, which begins the
// second frame: the fourth read holds no line end, and the fifth is fed
// from the end of that line, without a line cut short before it.
func framesSession(t *testing.T) []byte {
	t.Helper()
	lines := bytes.SplitAfter(fixture(t, "testdata/captures/claude/spotter_subagent_transcript_v2.1.38.jsonl"), []byte("\n"))
	var b bytes.Buffer
	add := func(until int) {
		for i := 0; b.Len() < until; i++ {
			if l := lines[i%len(lines)]; len(bytes.TrimSpace(l)) > 0 {
				b.Write(l)
			}
		}
	}
	pad := func(n int) {
		const head, tail = `{"type":"x-pad","pad":"`, "\"}\n"
		require.GreaterOrEqual(t, n, len(head)+len(tail))
		b.WriteString(head + strings.Repeat("p", n-len(head)-len(tail)) + tail)
	}
	const read = 256 << 10
	at := 2*read + 51
	add(at - 64<<10)
	pad(at - b.Len())
	require.Equal(t, at, b.Len())
	pad(4*read + 10 - at)
	add(2*rawfile.FrameBytes + rawfile.FrameBytes/2)
	return b.Bytes()
}

// TestSyncLongLine: a session with a line longer than a read of 256 KiB
// is archived as it is: its raw capture holds its bytes, and the plugin
// reads every line. The chunk after the line was built in the array of
// the line's cut-short carry, and moving the next carry to its front
// overwrote the chunk's first bytes (the line's end) before they were fed.
func TestSyncLongLine(t *testing.T) {
	ctx := context.Background()
	data := framesSession(t)
	root, path := t.TempDir(), filepath.Join(t.TempDir(), "s.jsonl")
	writeAged(t, path, data, time.Hour)
	o := newArchiver(t, root, nil).SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, o.Action, o.Reason)
	run := readRun(t, root, o.RunID)
	require.Len(t, run.parts, 1)
	back, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(run.parts[0].Raw.Path)))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, back), "the raw capture holds the session's bytes")
	assert.Equal(t, bytes.Count(data, []byte("\n")), run.parts[0].Lines, "the plugin read every line as it is")
}
