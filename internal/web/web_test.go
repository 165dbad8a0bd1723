package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if archiveRoot != "" {
		os.RemoveAll(archiveRoot) // the benchmarks' archive
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// get asks s's handler for target as a loopback client does.
func get(t *testing.T, s *Server, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = "127.0.0.1:8421"
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

func TestHeadersOnEveryResponse(t *testing.T) {
	s := newServer(t, store(t), Options{})
	for _, target := range []string{"/", "/?provider=claude", "/s/" + viewstest.Root, "/s/nope", "/raw/" + viewstest.Root + "/3",
		"/search?q=diff", "/search", "/static/serve.js", "/static/page.css", "/static/page.js", "/nowhere"} {
		t.Run(target, func(t *testing.T) {
			w := get(t, s, target)
			h := w.Result().Header
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Fatalf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Fatalf("CSP allows unsafe sources: %q", csp)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
				t.Fatalf("headers: %v", h)
			}
		})
	}
}

func TestWhoMayAsk(t *testing.T) {
	root := store(t)
	open := newServer(t, root, Options{})
	tokened := newServer(t, root, Options{Token: "s3cret-token"})
	tests := []struct {
		name   string
		s      *Server
		method string
		host   string
		target string
		header map[string]string
		want   int
	}{
		{"loopback", open, "GET", "127.0.0.1:8421", "/", nil, 200},
		{"localhost", open, "GET", "localhost:8421", "/", nil, 200},
		{"ipv6 loopback", open, "GET", "[::1]:8421", "/", nil, 200},
		{"head", open, "HEAD", "127.0.0.1:8421", "/", nil, 200},
		{"head of a stream", open, "HEAD", "127.0.0.1:8421", "/live/s/" + viewstest.Root, nil, 200}, // answered, not streamed
		{"rebound name", open, "GET", "evil.example:8421", "/", nil, 403},
		{"lan host", open, "GET", "192.168.1.2:8421", "/", nil, 403},
		{"post", open, "POST", "127.0.0.1:8421", "/", nil, 405},
		{"delete", open, "DELETE", "127.0.0.1:8421", "/s/" + viewstest.Root, nil, 405},
		{"no token", tokened, "GET", "192.168.1.2:8421", "/", nil, 401},
		{"wrong token", tokened, "GET", "192.168.1.2:8421", "/?token=nope", nil, 401},
		{"token in address", tokened, "GET", "192.168.1.2:8421", "/?token=s3cret-token&provider=claude", nil, 303},
		{"token cookie", tokened, "GET", "192.168.1.2:8421", "/", map[string]string{"Cookie": "twasm_token=s3cret-token"}, 200},
		{"wrong cookie", tokened, "GET", "192.168.1.2:8421", "/", map[string]string{"Cookie": "twasm_token=s3cret-tokem"}, 401},
		{"bearer", tokened, "GET", "192.168.1.2:8421", "/search?q=diff", map[string]string{"Authorization": "Bearer s3cret-token"}, 200},
		{"token, post", tokened, "POST", "192.168.1.2:8421", "/", map[string]string{"Authorization": "Bearer s3cret-token"}, 405},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, nil)
			r.Host = tc.host
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			tc.s.Handler().ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("%s %s (Host %s): %d, want %d\n%s", tc.method, tc.target, tc.host, w.Code, tc.want, w.Body)
			}
			if tc.want == 303 {
				loc := w.Result().Header.Get("Location")
				if strings.Contains(loc, "token") || !strings.Contains(loc, "provider=claude") {
					t.Fatalf("redirect to %q: the token must leave the address, the rest stay", loc)
				}
				c := w.Result().Cookies()
				if len(c) != 1 || c[0].Value != "s3cret-token" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
					t.Fatalf("cookie: %+v", c)
				}
			}
		})
	}
}

var runRow = regexp.MustCompile(`data-run="([^"]+)"`)

func listed(body string) []string {
	var ids []string
	for _, m := range runRow.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// openSession is an archived session (run.started names its source)
// with a step done and no run.completed: open, it may grow.
const openID = "abababab-abab-4bab-8bab-abababababab"

func openSession(t testing.TB) *viewstest.Builder {
	b := viewstest.NewBuilder(openID, "")
	st := viewstest.Started("claude session 1")
	st.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{"source": mustJSON(t, map[string]string{"provider": "claude", "path": "/home/me/s.jsonl"})}
	b.Add(st)
	b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	b.Add(viewstest.Msg(transcript.MessageUser, "agent", transcript.TextBlock("still going")))
	b.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: transcript.StatusOK,
		Result: mustJSON(t, map[string]any{"provider": "claude", "status": "incomplete"})}))
	later(b, 72*time.Hour)
	return b
}

func TestList(t *testing.T) {
	root := store(t)
	viewstest.WriteFile(t, filepath.Join(root, "transcripts", openID+".jsonl"), openSession(t).Bytes(t))
	s := newServer(t, root, Options{})
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{openID, secretID, hostileID, viewstest.Root}},
		{"provider=codex", []string{secretID}},
		{"provider=claude", []string{openID, hostileID, viewstest.Root}},
		{"model=claude", []string{secretID, hostileID, viewstest.Root}},
		{"status=open", []string{openID}},
		{"status=incomplete", []string{openID}},
		{"model=gpt", []string{secretID}},
		{"project=/work/deploy", []string{secretID}},
		{"day=2025-05-02", []string{hostileID}},
		{"day=2025-05-01", []string{viewstest.Root}},
		{"status=ok", []string{secretID, hostileID, viewstest.Root}},
		{"status=error", nil},
		{"status=error&children=1", []string{viewstest.Child}},
		{"provider=c%25", nil}, // a LIKE wildcard is text
		{"day=nope", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			w := get(t, s, "/?"+tc.query)
			if w.Code != 200 {
				t.Fatalf("%d\n%s", w.Code, w.Body)
			}
			if got := listed(w.Body.String()); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
		})
	}
	// A row says what ls says of the run with its child runs; an open
	// run is marked.
	body := get(t, s, "/").Body.String()
	if !strings.Contains(body, `<tr class="run open" data-run="`+openID+`">`) || strings.Count(body, `class="openmark"`) != 1 {
		t.Fatalf("the open session is not marked open, or another is:\n%s", body)
	}
	// Rows are grouped by day.
	if got := regexp.MustCompile(`<tr class="day"><th colspan="9">([^<]+)</th>`).FindAllStringSubmatch(body, -1); len(got) != 4 || got[0][1] != "2025-05-04 Sunday" || got[3][1] != "2025-05-01 Thursday" {
		t.Fatalf("day headings %q", got)
	}
	row := body[strings.Index(body, `data-run="`+viewstest.Root):]
	row = row[:strings.Index(row, "</tr>")]
	for _, want := range []string{"review-wf", `<div class="dim prompt">Review the diff in ./src</div>`, "+1 sub-runs", "$0.2500", "claude", "claude-sonnet-4", "2025-05-01 12:00", `<td class="n">2</td>`} {
		if !strings.Contains(row, want) {
			t.Fatalf("the root run's row lacks %q:\n%s", want, row)
		}
	}
	hrow := body[strings.Index(body, `data-run="`+hostileID):]
	hrow = hrow[:strings.Index(hrow, "</tr>")]
	if !strings.Contains(hrow, `<td class="n bad">1</td>`) || !strings.Contains(hrow, "$0.5000") {
		t.Fatalf("the hostile run's row: one failed call, $0.50:\n%s", hrow)
	}
}

func TestListPages(t *testing.T) {
	s := newServer(t, store(t), Options{PageSize: 1})
	next := regexp.MustCompile(`href="(/\?[^"]+)" rel="next"`)
	target := "/?provider=claude"
	var got []string
	for i := 0; i < 5 && target != ""; i++ {
		body := get(t, s, strings.ReplaceAll(target, "&amp;", "&")).Body.String()
		got = append(got, listed(body)...)
		target = ""
		if m := next.FindStringSubmatch(body); m != nil {
			target = m[1]
		}
	}
	if want := []string{hostileID, viewstest.Root}; !slices.Equal(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}
}

func TestSessionPage(t *testing.T) {
	s := newServer(t, store(t), Options{})
	tests := []struct {
		target   string
		code     int
		want     []string
		wantNot  []string
		wantType string
	}{
		{"/s/" + viewstest.Root, 200,
			[]string{`id="seq-3"`, `href="#seq-2"`, `href="/s/` + viewstest.Child + `"`, `id="child-` + viewstest.Child + `"`, `href="/raw/` + viewstest.Root + `/3"`,
				`src="/static/page.js"`, `data-live="/live/s/` + viewstest.Root + `?size=`, "Review the diff in ./src", "The diff looks fine."},
			[]string{`id="e-`, "grep -rn TODO", "<style>", "<script>(", `id="parent"`}, "text/html"},
		{"/s/" + viewstest.Child, 200,
			[]string{`id="parent" href="/s/` + viewstest.Root + `#child-` + viewstest.Child + `"`, "grep -rn TODO", "no matches"}, nil, "text/html"},
		{"/s/" + viewstest.Other, 404, nil, nil, ""},
		{"/s/nope", 404, nil, nil, ""},
		{"/s/..%2f..%2fetc%2fpasswd", 404, nil, nil, ""},
		{"/raw/" + viewstest.Root + "/3", 200, []string{"transcript line (seq 3)", `"seq":3`, "Review the diff"}, nil, "text/plain"},
		{"/raw/" + viewstest.Root + "/999", 404, nil, nil, ""},
		{"/raw/" + viewstest.Root + "/x", 404, nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			w := get(t, s, tc.target)
			if w.Code != tc.code {
				t.Fatalf("%d, want %d\n%s", w.Code, tc.code, w.Body)
			}
			body := w.Body.String()
			for _, want := range tc.want {
				if !strings.Contains(body, want) {
					t.Fatalf("lacks %q:\n%s", want, body)
				}
			}
			for _, no := range tc.wantNot {
				if strings.Contains(body, no) {
					t.Fatalf("has %q", no)
				}
			}
			if tc.wantType != "" && !strings.HasPrefix(w.Result().Header.Get("Content-Type"), tc.wantType) {
				t.Fatalf("Content-Type %q", w.Result().Header.Get("Content-Type"))
			}
		})
	}
}

func TestSearch(t *testing.T) {
	s := newServer(t, store(t), Options{})
	hitLink := regexp.MustCompile(`class="hitlink" href="([^"]+)"`)
	tests := []struct {
		query string
		want  []string // the hits' links, in order
	}{
		{"q=diff", []string{"/s/" + viewstest.Root + "#seq-9", "/s/" + viewstest.Root + "#seq-3"}}, // see until= below
		{"q=grep&tool=shell", []string{"/s/" + viewstest.Child + "#seq-4"}},
		{"q=TODO&type=command", []string{"/s/" + viewstest.Child + "#seq-3"}},
		{"status=error&type=tool_result", []string{"/s/" + hostileID + "#seq-6", "/s/" + viewstest.Child + "#seq-5"}},
		{"q=diff&provider=codex", nil},
		{"q=diff&since=2025-05-02", nil},
		// "The diff looks fine." (seq 9) before the user's longer
		// message (seq 3) by bm25: the index once gave seq 9's block the
		// system prompt's origin from seq 3, ranked it as injected, and
		// this test pinned that order.
		{"q=diff&until=2025-05-02", []string{"/s/" + viewstest.Root + "#seq-9", "/s/" + viewstest.Root + "#seq-3"}},
		{"q=diff&run=" + viewstest.Root[:8] + "&role=user", []string{"/s/" + viewstest.Root + "#seq-3"}},
		{"q=deploy&project=%2Fwork%2Fdeploy", []string{"/s/" + secretID + "#seq-6", "/s/" + secretID + "#seq-3"}},
		{"q=deploy&project=%2Fwork", []string{"/s/" + secretID + "#seq-6", "/s/" + secretID + "#seq-3"}}, // below it
		{"q=deploy&project=%2Fwork%2Fdeploy2", nil},
		{"q=deploy&project=work", nil}, // not a directory: refused
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			w := get(t, s, "/search?"+tc.query)
			if w.Code != 200 {
				t.Fatalf("%d\n%s", w.Code, w.Body)
			}
			var got []string
			for _, m := range hitLink.FindAllStringSubmatch(w.Body.String(), -1) {
				got = append(got, m[1])
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("hits %v, want %v\n%s", got, tc.want, w.Body)
			}
		})
	}
	if body := get(t, s, "/search?q=diff").Body.String(); !strings.Contains(body, "<mark>diff</mark>") || strings.Contains(body, `id="morehits"`) {
		t.Fatalf("the match is not marked, or more hits are offered than there are:\n%s", body)
	}
	// Text said again (the hostile run's prompt is its answer too) is
	// shown once with how many more, unless every hit is asked for.
	folded := get(t, s, "/search?q=isAdmin&type=text").Body.String()
	every := get(t, s, "/search?q=isAdmin&type=text&every=1").Body.String()
	if len(hitLink.FindAllString(folded, -1)) != 1 || !strings.Contains(folded, "and 1 more with the same text") || len(hitLink.FindAllString(every, -1)) != 2 {
		t.Fatalf("folding: %d hits folded, %d every\n%s", len(hitLink.FindAllString(folded, -1)), len(hitLink.FindAllString(every, -1)), folded)
	}
	// limit=1: one hit and a link to the next page, which follows it:
	// paged to the end, the hits of one page asking for all, in order,
	// each once, numbered on.
	for _, query := range []string{"q=diff", "q=the", "q=the&every=1", "role=user"} {
		var want, got []string
		for _, m := range hitLink.FindAllStringSubmatch(get(t, s, "/search?limit=800&"+query).Body.String(), -1) {
			want = append(want, m[1])
		}
		next := "/search?limit=1&" + query
		for pages := 0; next != ""; pages++ {
			if pages > len(want) {
				t.Fatalf("%s: more pages than hits", query)
			}
			body := get(t, s, next).Body.String()
			if pages > 0 && !strings.Contains(body, fmt.Sprintf(`<ol id="hits" start="%d">`, pages+1)) {
				t.Fatalf("%s: page %d not numbered on:\n%s", query, pages+1, body)
			}
			for _, m := range hitLink.FindAllStringSubmatch(body, -1) {
				got = append(got, m[1])
			}
			next = ""
			if m := moreLink.FindStringSubmatch(body); m != nil {
				next = html.UnescapeString(m[1])
				if !strings.Contains(next, "from=") || !strings.Contains(next, "limit=1") {
					t.Fatalf("%s: the next page %q is not the same search from a cursor", query, next)
				}
			}
		}
		if len(want) < 2 || !slices.Equal(got, want) {
			t.Fatalf("%s: paged %v, want %v", query, got, want)
		}
	}
	if body := get(t, s, "/search?q=diff&from=nonsense").Body.String(); !strings.Contains(body, "from: not a page of this search") {
		t.Fatalf("a cursor that does not parse:\n%s", body)
	}
}

// moreLink is the link to a search's next page.
var moreLink = regexp.MustCompile(`<a id="morehits" href="([^"]+)"`)

// TestSearchRankedAmongNewest: a word matching more messages than the
// page ranks is ranked among the newest and the page says so; one
// matching fewer is ranked whole and the page says nothing.
func TestSearchRankedAmongNewest(t *testing.T) {
	s := newServer(t, store(t), Options{})
	s.rankAmong = 2
	for _, tc := range []struct {
		query  string
		ranked bool
	}{
		{"q=the&every=1&limit=1", true},   // more than two matches, two ranked
		{"q=diff&every=1&limit=1", false}, // two matches: all ranked
		{"q=the&every=1&limit=1&run=" + viewstest.Root[:8] + "&role=user&type=text", false}, // the filter counts first
	} {
		body := get(t, s, "/search?"+tc.query).Body.String()
		if got := strings.Contains(body, `id="ranked"`) && strings.Contains(body, "ranked among the newest 2 "); got != tc.ranked || !strings.Contains(body, `class="hitlink"`) {
			t.Errorf("%s: told of ranking among the newest %v, want %v; or no hit\n%s", tc.query, got, tc.ranked, body)
		}
	}
}

// TestHostileTranscriptEscaped: markup, links, terminal escapes and
// bidirectional controls from a transcript reach no page as such.
func TestHostileTranscriptEscaped(t *testing.T) {
	s := newServer(t, store(t), Options{})
	for _, target := range []string{"/", "/s/" + hostileID, "/search?q=pwned", "/search?q=script&type=tool_call", "/?project=" + "/work/" + payloads[0],
		"/raw/" + hostileID + "/3", "/raw/" + hostileID + "/5"} {
		t.Run(target, func(t *testing.T) {
			w := get(t, s, target)
			if w.Code != 200 {
				t.Fatalf("%d\n%s", w.Code, w.Body)
			}
			body := w.Body.String()
			if !strings.Contains(body, "pwned") {
				t.Fatalf("the hostile text is not on the page at all:\n%s", body)
			}
			for _, c := range []string{"\x1b", "\u202e", "\u2066", "\u2069", "\u009d"} {
				if strings.Contains(body, c) {
					t.Fatalf("the page keeps the control %q", c)
				}
			}
			if strings.HasPrefix(w.Result().Header.Get("Content-Type"), "text/plain") {
				return // shown as text: markup is inert
			}
			for _, bad := range []string{`<script>window`, `<img src=x`, `<svg`, `<iframe`, `href="javascript:`, `onerror="`, `onload="`, `id="jslink"`} {
				if strings.Contains(body, bad) {
					t.Fatalf("the page holds %q as markup", bad)
				}
			}
		})
	}
}

// TestRedact: --redact masks the secret everywhere it is served.
func TestRedact(t *testing.T) {
	root := store(t)
	plain := newServer(t, root, Options{})
	if body := get(t, plain, "/s/"+secretID).Body.String(); !strings.Contains(body, secret) {
		t.Fatal("the secret is not in the page without --redact to begin with")
	}
	s := newServer(t, root, Options{Redact: true})
	for _, target := range []string{"/", "/s/" + secretID, "/search?q=deploy", "/search?q=token", "/search?q=logged", "/search?type=tool_call",
		"/raw/" + secretID + "/3", "/raw/" + secretID + "/4", "/raw/" + secretID + "/5", "/raw/" + secretID + "/6"} {
		t.Run(target, func(t *testing.T) {
			w := get(t, s, target)
			if w.Code != 200 {
				t.Fatalf("%d\n%s", w.Code, w.Body)
			}
			body := w.Body.String()
			if strings.Contains(body, secret) || strings.Contains(body, secret[:20]) {
				t.Fatalf("the secret is served:\n%s", body)
			}
		})
	}
	// A line being written (no LF yet) is not shown, and the page is
	// served: a run recorded live is read while it grows.
	path := filepath.Join(root, "transcripts", secretID+".jsonl")
	appendLines(t, path, []byte(`{"seq": 99, "type": "message.assistant", "payload": {"text": "`+secret))
	w := get(t, s, "/s/"+secretID)
	if w.Code != 200 || strings.Contains(w.Body.String(), secret) || !strings.Contains(w.Body.String(), "Deployed: the token") {
		t.Fatalf("a run with a line being written: %d\n%s", w.Code, w.Body)
	}
	// A line that cannot be decoded cannot be masked: the page is
	// refused, not served unmasked.
	appendLines(t, path, []byte("\n"+`{"seq": "broken `+secret+"\n"))
	w = get(t, s, "/s/"+secretID)
	if w.Code != 500 || strings.Contains(w.Body.String(), secret) {
		t.Fatalf("an unmaskable run: %d\n%s", w.Code, w.Body)
	}
}

// readEvent reads server-sent events from br until one named name.
func readEvent(t *testing.T, br *bufio.Reader, name string) {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before %q: %v", name, err)
		}
		if strings.TrimSpace(line) == "event: "+name {
			return
		}
	}
}

func stream(t *testing.T, url string) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("%s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewReader(resp.Body), func() { cancel(); resp.Body.Close() }
}

// TestLive: a page's stream says "grown" when the run's transcript
// grows and when a run is added, and the page then shows it.
func TestLive(t *testing.T) {
	root := store(t)
	s := newServer(t, root, Options{})
	base := serve(t, s)
	path := filepath.Join(root, "transcripts", hostileID+".jsonl")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	br, stop := stream(t, base+"/live/s/"+hostileID+"?size="+strconv.FormatInt(st.Size(), 10))
	defer stop()
	b := hostileRun(t)
	b.Add(viewstest.Msg(transcript.MessageAssistant, "agent", transcript.TextBlock("a late word")))
	appendLines(t, path, b.Line(t, b.Len()-1))
	readEvent(t, br, "grown")
	if body := get(t, s, "/s/"+hostileID).Body.String(); !strings.Contains(body, "a late word") || !strings.Contains(body, `id="seq-`+strconv.Itoa(b.Len())+`"`) {
		t.Fatal("the page does not show the new event")
	}

	list := get(t, s, "/").Body.String()
	live := regexp.MustCompile(`data-live="(/live/list\?v=\d+)"`).FindStringSubmatch(list)
	if live == nil {
		t.Fatalf("no live address on the list:\n%s", list)
	}
	lr, lstop := stream(t, base+live[1])
	defer lstop()
	nb := viewstest.NewBuilder("bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", "")
	nb.Add(viewstest.Started("a new session"))
	viewstest.WriteFile(t, filepath.Join(root, "transcripts", nb.RunID+".jsonl"), nb.Bytes(t))
	readEvent(t, lr, "grown")
	if got := listed(get(t, s, "/").Body.String()); !slices.Contains(got, nb.RunID) {
		t.Fatalf("the new run is not listed: %v", got)
	}
}

// TestShutdownEndsStreams: Serve returns when its context ends, live
// streams open or not (goleak checks nothing is left running).
func TestShutdownEndsStreams(t *testing.T) {
	s := newServer(t, store(t), Options{})
	base, stop := serveUntil(t, s)
	br, end := stream(t, base+"/live/s/"+viewstest.Root+"?size=0")
	defer end()
	readEvent(t, br, "grown") // size 0 is not the file's: it is streaming
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Logf("stream ended: %v", err)
	}
}
