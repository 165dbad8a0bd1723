package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/rawfile"
)

// factsSeen logs every raw line a factsNorm was fed, stream by stream.
type factsSeen struct {
	mu      sync.Mutex
	streams [][]string
}

type factsNorm struct {
	seen *factsSeen
	n    int
}

func (f *factsNorm) Line(l *sdk.Line, out *sdk.Out) error {
	f.seen.mu.Lock()
	last := len(f.seen.streams) - 1
	f.seen.streams[last] = append(f.seen.streams[last], string(l.Raw))
	f.seen.mu.Unlock()
	if l.JSON().Get("$twasm").Is(abi.SourceFactsType) {
		out.Ignored(sdk.S("twasm_source"))
		return nil
	}
	f.n++
	key := sdk.S("m" + string(rune('a'+f.n)))
	out.Open(key, sdk.Message{})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(l.JSON().Get("text"))})
	out.Close(key, sdk.MessageEnd{})
	return nil
}

func (f *factsNorm) End(out *sdk.Out) error { return nil }

// TestSourceFacts: a plugin that asks for the facts of its source
// (ABI 1.4) gets a facts line before the bytes of each part of a session
// read from a store; the raw capture holds exactly what the plugin read,
// facts lines included, so reading it again (renormalize) feeds the
// plugin the same input as the sync did, replay included; a plugin that
// does not ask never sees one.
func TestSourceFacts(t *testing.T) {
	ctx := context.Background()
	for _, asks := range []bool{true, false} {
		t.Run(map[bool]string{true: "asks", false: "does not ask"}[asks], func(t *testing.T) {
			seen := &factsSeen{}
			p := sdk.Plugin{Manifest: abi.Manifest{Name: "f", Version: "1", Providers: []string{"f"}, SourceFacts: asks},
				New: func(abi.BeginOptions) sdk.Normalizer {
					seen.mu.Lock()
					seen.streams = append(seen.streams, nil)
					seen.mu.Unlock()
					return &factsNorm{seen: seen}
				}}
			root, home := t.TempDir(), t.TempDir()
			a := newArchiver(t, root, func(o *Options) {
				o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
			})
			p.Manifest.Stores = []abi.Store{{Name: "F sessions", Roots: []abi.Root{{Path: "~/.f"}}, Dir: "s", Pattern: "**/*.jsonl"}}
			decl := DeclaredOf(p.Manifest)
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", decl, nil)
			path := filepath.Join(home, ".f", "s", "proj", "id-1.jsonl")
			part1 := `{"text":"first message of the session, long enough for a head"}` + "\n"
			part2 := `{"text":"second"}` + "\n"
			writeAged(t, path, []byte(part1), time.Hour)
			rep := a.SyncStores(ctx, locs, time.Time{}, nil)
			require.Equal(t, 1, rep.Counts[ActionNew], "%+v", rep.Outcomes)
			writeAged(t, path, []byte(part1+part2), 30*time.Minute)
			rep = a.SyncStores(ctx, locs, time.Time{}, nil)
			require.Equal(t, 1, rep.Counts[ActionGrown], "%+v", rep.Outcomes)

			e := a.Ledger().ByPath(path)
			require.NotNil(t, e)
			raw, err := rawfile.ReadFile(filepath.Join(root, e.Raw))
			require.NoError(t, err)
			rawLines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
			for i := range rawLines {
				rawLines[i] = strings.TrimSuffix(rawLines[i], "\n")
			}
			seen.mu.Lock()
			defer seen.mu.Unlock()
			require.Len(t, seen.streams, 2)
			// The second part's stream (replay, then the new bytes) is the
			// raw capture, line for line: what renormalize feeds.
			assert.Equal(t, rawLines, seen.streams[1])
			nFacts := 0
			for _, l := range rawLines {
				if strings.Contains(l, `"$twasm"`) {
					nFacts++
					var f abi.SourceFacts
					require.NoError(t, json.Unmarshal([]byte(l), &f))
					assert.Equal(t, "proj/id-1.jsonl", f.Path)
					assert.Equal(t, "id-1.jsonl", f.Name)
					assert.Equal(t, "F sessions", f.Store)
					assert.Contains(t, []int64{int64(len(part1)), int64(len(part1 + part2))}, f.Size)
					_, err := time.Parse(time.RFC3339Nano, f.MTime)
					assert.NoError(t, err)
				}
			}
			if !asks {
				assert.Zero(t, nFacts)
				assert.Equal(t, part1+part2, string(raw))
				return
			}
			assert.Equal(t, 2, nFacts, "one facts line per part:\n%s", raw)
			assert.True(t, strings.HasPrefix(string(raw), `{"$twasm":"source"`), "the facts line comes first:\n%s", raw)
			assert.Equal(t, []string{rawLines[0], strings.TrimSuffix(part1, "\n")}, seen.streams[0], "the first part's stream")
			// The ledger rebuilt from the transcripts knows the facts
			// lines too, so the next part replays them.
			require.NoError(t, a.Close())
			require.NoError(t, os.Remove(LedgerFile(root)))
			a2 := newArchiver(t, root, nil)
			e2 := a2.Ledger().ByPath(path)
			require.NotNil(t, e2)
			assert.Equal(t, e.Facts, e2.Facts)
			assert.Len(t, e.Facts, 2)
			assert.True(t, bytes.Equal([]byte(e.Facts[0].Line), []byte(rawLines[0])))
		})
	}
}
