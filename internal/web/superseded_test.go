package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/usage"
)

// Run ids of a claude session recorded (twasm record) and the same
// session archived from claude's store (twasm sync).
const (
	recordedID = "cdcdcdcd-cdcd-4dcd-8dcd-cdcdcdcdcdcd"
	syncedID   = "dededede-dede-4ede-8ede-dededededede"
)

// TestRecordedAndSyncedListedOnce: a claude session recorded with twasm
// record and synced from claude's store is one session on every page of
// serve, as ls, stats and usage count it (views.Superseded): the
// sessions page lists the synced run alone (and, with ?superseded=1,
// the recorded one too, marked), a search finds the prompt once (with
// superseded=1, in both, the recorded run's hit marked), the usage page counts one session and its
// tokens once, and the recorded run's own page still opens. Over HTTP,
// against the real handler. Before, the listing showed both runs and the
// search found the prompt in both (folded: "and 1 more").
func TestRecordedAndSyncedListedOnce(t *testing.T) {
	root := t.TempDir()
	dir := viewstest.WriteStore(t, root)
	viewstest.WriteFile(t, filepath.Join(dir, recordedID+".jsonl"), viewstest.ClaudeTwice(t, recordedID, "sess-9", false).Bytes(t))
	viewstest.WriteFile(t, filepath.Join(dir, syncedID+".jsonl"), viewstest.ClaudeTwice(t, syncedID, "sess-9", true).Bytes(t))
	srv := httptest.NewServer(newServer(t, root, Options{Usage: filesUsage(root)}).Handler())
	t.Cleanup(srv.Close)
	page := func(t *testing.T, target string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d\n%s", target, resp.StatusCode, b)
		}
		return string(b)
	}
	for _, tc := range []struct {
		target string
		want   []string
		marked []string // rows marked superseded
	}{
		{"/", []string{syncedID, viewstest.Root}, nil},
		{"/?provider=claude", []string{syncedID, viewstest.Root}, nil},
		{"/?project=/work/app", []string{syncedID}, nil},
		{"/?superseded=1", []string{recordedID, syncedID, viewstest.Root}, []string{recordedID}},
		{"/?superseded=1&project=/work/app", []string{recordedID, syncedID}, []string{recordedID}},
	} {
		t.Run("list "+tc.target, func(t *testing.T) {
			body := page(t, tc.target)
			got := listed(body)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
			var marked []string
			for _, id := range got {
				row := body[strings.Index(body, `data-run="`+id):]
				if row = row[:strings.Index(row, "</tr>")]; strings.Contains(row, `class="supmark"`) {
					marked = append(marked, id)
				}
			}
			if !slices.Equal(marked, tc.marked) {
				t.Fatalf("marked superseded %v, want %v", marked, tc.marked)
			}
		})
	}
	for _, tc := range []struct {
		target string
		runs   []string // the runs of the hits, in order
		also   bool     // "and 1 more with the same text"
		marked []string // the runs of the hits marked superseded
	}{
		{"/search?q=xylophone", []string{syncedID}, false, nil},
		{"/search?q=xylophone&every=1", []string{syncedID}, false, nil},
		{"/search?q=xylophone&every=1&superseded=1", []string{recordedID, syncedID}, false, []string{recordedID}},
		{"/search?q=xylophone&superseded=1", []string{syncedID}, true, nil},
	} {
		t.Run(tc.target, func(t *testing.T) {
			body := page(t, tc.target)
			var got, marked []string
			for _, h := range strings.Split(body, `<li class="hit">`)[1:] {
				for _, id := range []string{recordedID, syncedID} {
					if strings.Contains(h, `href="/s/`+id) {
						got = append(got, id)
						if strings.Contains(h, `class="supmark"`) {
							marked = append(marked, id)
						}
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.runs) {
				t.Fatalf("hits in %v, want %v", got, tc.runs)
			}
			if !slices.Equal(marked, tc.marked) {
				t.Fatalf("hits marked superseded in %v, want %v", marked, tc.marked)
			}
			if also := strings.Contains(body, "and 1 more with the same text"); also != tc.also {
				t.Fatalf("folded a hit of another run: %v, want %v", also, tc.also)
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		body := page(t, "/usage?provider=claude")
		src, table, err := filesUsage(root)(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		rep, err := usage.Build(src, table, usage.Options{Provider: "claude", By: usage.ByModel})
		if err != nil {
			t.Fatal(err)
		}
		// viewstest's root run and the synced session: the recorded
		// run's tokens are the synced run's again.
		if rep.Total.Sessions != 2 {
			t.Fatalf("usage.Build counts %d sessions, want 2", rep.Total.Sessions)
		}
		// 2 sessions, 2 requests: the recorded run's request is not counted again.
		if !strings.Contains(body, `<tr><th>claude-sonnet-4</th><td class="n">2</td><td class="n">2</td>`) {
			i := strings.Index(body, "claude-sonnet-4")
			t.Fatalf("the usage page does not count claude-sonnet-4 in 2 sessions:\n%s", body[max(0, i-200):min(len(body), i+400)])
		}
	})
	t.Run("the recorded run's page", func(t *testing.T) {
		if body := page(t, "/s/"+recordedID); !strings.Contains(body, "tune the xylophone module") {
			t.Fatalf("the recorded run's page lacks its prompt:\n%s", body)
		}
	})
}
