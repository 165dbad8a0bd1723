package archive

import (
	"bytes"
	"context"
	"errors"
	"os"
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
	at := 2*chunkBytes + 51
	add(at - 64<<10)
	pad(at - b.Len())
	require.Equal(t, at, b.Len())
	pad(4*chunkBytes + 10 - at)
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

// framesOf is the raw capture a writer fed each part whole makes: each
// part's bytes in frames of rawfile.FrameBytes, a part's last frame
// holding what is left.
func framesOf(t *testing.T, parts ...[]byte) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "want.raw"+rawfile.Ext)
	for i, part := range parts {
		open := rawfile.Append
		if i == 0 {
			open = rawfile.Create
		}
		w, err := open(p)
		require.NoError(t, err)
		_, err = w.Write(part)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// TestSyncWritesWholeFrames: sync writes a session's raw capture in whole
// frames of rawfile.FrameBytes, as record does, although the plugin is
// fed 256 KiB at a time (an event made of a piece would otherwise flush a
// frame of it); a session that grows extends it with frames of the part's
// bytes, the part's first beginning at the part boundary; a sync killed
// while it wrote a frame of the grown part loses that frame only, and the
// next sync archives the part again. The raw capture holds the session's
// bytes, and the plugin reads them as they are, a line of 512 KiB
// included.
func TestSyncWritesWholeFrames(t *testing.T) {
	ctx := context.Background()
	data := framesSession(t)
	home := t.TempDir()
	rawOf := func(root string, o Outcome) (string, []byte) {
		t.Helper()
		run := readRun(t, root, o.RunID)
		require.NotEmpty(t, run.parts)
		last := run.parts[len(run.parts)-1]
		p := filepath.Join(root, filepath.FromSlash(last.Raw.Path))
		back, err := rawfile.ReadFile(p)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data[:len(back)], back), "the raw capture holds the session's bytes")
		assert.Equal(t, int64(len(back)), last.Raw.Bytes)
		lines := 0
		for _, p := range run.parts {
			lines += p.Lines
		}
		assert.Equal(t, bytes.Count(back, []byte("\n")), lines, "the plugin read every line as it is")
		onDisk, err := os.ReadFile(p)
		require.NoError(t, err)
		return p, onDisk
	}

	t.Run("first sync", func(t *testing.T) {
		root := t.TempDir()
		path := filepath.Join(home, "whole", "s.jsonl")
		writeAged(t, path, data, time.Hour)
		o := newArchiver(t, root, nil).SyncFile(ctx, "claude", path)
		require.Equal(t, ActionNew, o.Action, o.Reason)
		_, raw := rawOf(root, o)
		want := framesOf(t, data)
		assert.True(t, bytes.Equal(want, raw), "raw capture of %d bytes, not the %d of whole frames", len(raw), len(want))
	})

	// Grown at a line end past the first frame.
	cut := rawfile.FrameBytes + rawfile.FrameBytes/4
	cut += bytes.IndexByte(data[cut:], '\n') + 1
	part1, part2 := data[:cut], data[cut:]
	root := t.TempDir()
	path := filepath.Join(home, "grown", "s.jsonl")
	writeAged(t, path, part1, time.Hour)
	a := newArchiver(t, root, nil)
	o1 := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionNew, o1.Action, o1.Reason)
	_, raw1 := rawOf(root, o1)
	require.True(t, bytes.Equal(framesOf(t, part1), raw1), "part 1 in whole frames")
	before := snapshot(t, root)
	writeAged(t, path, data, time.Hour-time.Minute)
	o2 := a.SyncFile(ctx, "claude", path)
	require.Equal(t, ActionGrown, o2.Action, o2.Reason)
	rawPath, raw2 := rawOf(root, o2)
	want := framesOf(t, part1, part2)
	require.True(t, bytes.Equal(want, raw2), "raw capture of %d bytes, not the %d of part 1's frames and part 2's", len(raw2), len(want))
	after := snapshot(t, root)
	a.Close()

	rel, err := filepath.Rel(root, rawPath)
	require.NoError(t, err)
	trLines := bytes.Count(before[filepath.Join("transcripts", o1.RunID+".jsonl")], []byte("\n"))
	added := len(raw2) - len(raw1)
	firstFrame := len(framesOf(t, part2[:rawfile.FrameBytes])) - len(framesOf(t, nil))
	// Killed in part 2's first frame, and in its second (its last).
	for _, keep := range []float64{0.4, 0.97} {
		t.Run("killed", func(t *testing.T) {
			r := t.TempDir()
			killedAt(t, before, after, o1.RunID, trLines+1, false, keep).restore(t, r)
			f, err := rawfile.Open(filepath.Join(r, rel))
			require.NoError(t, err)
			assert.True(t, errors.Is(f.Damage(), rawfile.ErrTorn), "%v", f.Damage())
			// The whole frames left: part 1's, and part 2's before the
			// one cut short.
			whole := int64(len(part1))
			if float64(added)*keep > float64(firstFrame) {
				whole += rawfile.FrameBytes
			}
			assert.Equal(t, whole, f.Size())
			require.NoError(t, f.Close())

			b := newArchiver(t, r, nil)
			b.Recover(ctx)
			o := b.SyncFile(ctx, "claude", path)
			require.NotEqual(t, ActionFailed, o.Action, o.Reason)
			assert.Equal(t, o1.RunID, o.RunID)
			_, raw := rawOf(r, o)
			assert.True(t, bytes.Equal(want, raw), "archived again: part 1's frames and part 2's")
		})
	}
}

// TestSealEndedRun: a session archived in several parts has its raw
// capture in a frame per part, and once its run ends (closed idle by a
// later sync, or ended by its last part) the capture is rewritten in
// whole frames: the frames one write of the session makes, smaller,
// holding the same bytes, which every part's result still states
// (CheckRaw finds nothing). A run of one part is left as it was written.
func TestSealEndedRun(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "testdata/captures/claude/spotter_subagent_transcript_v2.1.38.jsonl")
	parts := linesInParts(data, 4)
	require.GreaterOrEqual(t, len(parts), 4)
	closing := func(o *Options) { o.CloseIdle = 30 * time.Minute }
	for _, tc := range []struct {
		name string
		// grown: the parts synced while the session is active, before
		// the sync that ends its run; last: the bytes that sync finds.
		grown [][]byte
		last  []byte
		want  string
	}{
		{"closed idle by a later sync", parts, data, ActionClosed},
		{"ended by its last part", parts[:len(parts)-1], data, ActionGrown},
		{"one part", nil, data, ActionNew},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, path := t.TempDir(), filepath.Join(t.TempDir(), "s.jsonl")
			runID := syncInParts(t, root, path, tc.grown)
			if len(tc.grown) > 0 {
				raw := rawBytes(t, root, runID)
				assert.Equal(t, framesOf(t, tc.grown...), raw, "a frame per part while the run is open")
			}
			writeAged(t, path, tc.last, time.Hour-time.Duration(len(tc.grown))*time.Minute)
			a := newArchiver(t, root, closing)
			o := a.SyncFile(ctx, "claude", path)
			require.Equal(t, tc.want, o.Action, o.Reason)
			if runID == "" {
				runID = o.RunID
			}
			require.Equal(t, runID, o.RunID)
			raw := rawBytes(t, root, runID)
			assert.Equal(t, framesOf(t, data), raw, "the capture in whole frames once the run ended")
			if len(tc.grown) > 0 {
				assert.Less(t, len(raw), len(framesOf(t, parts...)), "smaller than a frame per part")
			}
			back, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(a.Ledger().byRun(runID).Raw)))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data, back), "the session's bytes")
			check, err := CheckRaw(ctx, root, a.Ledger())
			require.NoError(t, err)
			assert.Empty(t, check.Damaged)
			assert.Equal(t, 1, check.Checked)
			left, err := filepath.Glob(filepath.Join(root, "raw", runID, "*"+rawfile.SealExt))
			require.NoError(t, err)
			assert.Empty(t, left)
			require.NoError(t, a.Close())
		})
	}
}

// syncInParts writes the session at path grown part by part, each a
// minute later, and syncs it after each with an archiver that never
// closes a run; it returns the run ("" for no part).
func syncInParts(t *testing.T, root, path string, parts [][]byte) string {
	t.Helper()
	var runID string
	var grown []byte
	for i, p := range parts {
		grown = append(grown, p...)
		writeAged(t, path, grown, time.Hour-time.Duration(i)*time.Minute)
		a := newArchiver(t, root, nil)
		o := a.SyncFile(context.Background(), "claude", path)
		require.NotEqual(t, ActionFailed, o.Action, o.Reason)
		runID = o.RunID
		require.NoError(t, a.Close())
	}
	return runID
}

// linesInParts cuts data in parts of about a nth of it each, at line
// ends: a session as a sync finds it grown, part by part.
func linesInParts(data []byte, n int) [][]byte {
	var parts [][]byte
	for rest := data; len(rest) > 0; {
		k := min(len(rest), len(data)/n)
		if i := bytes.IndexByte(rest[k:], '\n'); i >= 0 {
			k += i + 1
		} else {
			k = len(rest)
		}
		parts, rest = append(parts, rest[:k]), rest[k:]
	}
	return parts
}

// rawBytes is the file of the run's raw capture, as the ledger names it.
func rawBytes(t *testing.T, root, runID string) []byte {
	t.Helper()
	a := newArchiver(t, root, nil)
	defer a.Close()
	e := a.Ledger().byRun(runID)
	require.NotNil(t, e)
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Raw)))
	require.NoError(t, err)
	return b
}
