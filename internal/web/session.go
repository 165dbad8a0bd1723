package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// runPath is a run's transcript; id must have been checked (runid.Valid).
func (s *Server) runPath(id string) string { return filepath.Join(s.transcripts(), id+".jsonl") }

// runID takes the {id} of a request, refused unless it is a canonical
// run id (so that it cannot name a file outside the transcripts) whose
// transcript is a regular file.
func (s *Server) runID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if runid.Valid(id) != nil {
		http.Error(w, "not a run id", http.StatusNotFound)
		return "", false
	}
	st, err := os.Stat(s.runPath(id))
	if err != nil || !st.Mode().IsRegular() {
		http.Error(w, "no such run", http.StatusNotFound)
		return "", false
	}
	return id, true
}

type sessionHead struct {
	Title  string
	RunID  string
	Parent string
	Live   string
	// Part is the part of the run shown (1, the first, unless ?part=),
	// PartSize the events a part holds (the page's script takes a
	// #seq-N link to its part).
	Part, PartSize int
}

// partEvents is how many events (by seq) a part of a run's page holds:
// a run of any length opens as fast as one of this many events, its
// other parts one link away. Part k holds seqs (k-1)*partEvents+1 to
// k*partEvents.
const partEvents = 1000

// partOf is the part of a run's page that holds seq.
func partOf(seq uint64) int { return int((max(seq, 1)-1)/partEvents) + 1 }

// eventHref is the address of a run's page at its event seq: its part's
// page (the first part's address has no ?part) at #seq-N.
func eventHref(runID string, seq uint64) string {
	href := "/s/" + runID
	if p := partOf(seq); p > 1 {
		href += "?part=" + strconv.Itoa(p)
	}
	return href + "#seq-" + strconv.FormatUint(seq, 10)
}

// partNav writes the links to a run's other parts, when it has any.
func partNav(w io.Writer, runID string, part int, last uint64) {
	parts := partOf(last)
	if parts <= 1 && part <= 1 {
		return
	}
	from, to := uint64(part-1)*partEvents+1, min(uint64(part)*partEvents, last)
	link := func(p int, id, text string) string {
		return `<a class="partlink" id="` + id + `" href="/s/` + runID + `?part=` + strconv.Itoa(p) + `">` + text + `</a>`
	}
	var b bytes.Buffer
	b.WriteString(`<nav class="parts" aria-label="Parts of this run">`)
	if part > 1 {
		b.WriteString(link(1, "", "first") + " " + link(part-1, "", "← earlier") + " ")
	}
	b.WriteString(`<span class="dim">events ` + strconv.FormatUint(from, 10) + `–` + strconv.FormatUint(to, 10) + ` of ` + strconv.FormatUint(last, 10) +
		` (part ` + strconv.Itoa(part) + ` of ` + strconv.Itoa(parts) + `)</span>`)
	if part < parts {
		b.WriteString(" " + link(part+1, "", "later →") + " " + link(parts, "", "last"))
	}
	b.WriteString("</nav>\n")
	_, _ = w.Write(b.Bytes())
}

// session is a run's page: the page twasm export html writes (package
// export renders both), its child runs on their own pages one click away
// and a link back to the parent, each event's anchor #seq-N, a link to
// the line behind each event, and the page updated while the
// transcript grows.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	path := s.runPath(id)
	st, err := os.Stat(path)
	if err != nil {
		http.Error(w, "no such run", http.StatusNotFound)
		return
	}
	part := 1
	if v := r.URL.Query().Get("part"); v != "" {
		if part, err = strconv.Atoi(v); err != nil || part < 1 {
			http.Error(w, "part: want a number from 1", http.StatusBadRequest)
			return
		}
	}
	head := sessionHead{RunID: id, Parent: parentOf(path), Live: "/live/s/" + id + "?size=" + strconv.FormatInt(st.Size(), 10),
		Part: part, PartSize: partEvents}
	window := &export.HTMLWindow{To: uint64(part)*partEvents + 1,
		Nav: func(w io.Writer, last uint64) { partNav(w, id, part, last) }}
	if part > 1 {
		window.From = uint64(part-1)*partEvents + 1
	}
	m := s.masker()
	run := export.Run{Path: path, Dir: s.transcripts()}
	// The page is streamed as it is rendered, so that a long run's first
	// screen shows before its end is read: an error before the first
	// byte is an error page, one after it ends the page with a note.
	cw := &countingWriter{w: w}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var tmplErr error
	err = export.ExportHTML(r.Context(), cw, []export.Run{run}, export.HTMLOptions{Redactor: m.r, Page: &export.HTMLPage{
		Head: func(w io.Writer, title string) {
			head.Title = title
			tmplErr = errors.Join(tmplErr, s.tmpl.ExecuteTemplate(w, "session_head.html", head))
		},
		Foot: func(w io.Writer) {
			tmplErr = errors.Join(tmplErr, s.tmpl.ExecuteTemplate(w, "session_foot.html", head))
		},
		ChildURL: func(child string) string { return "/s/" + child },
		RawURL:   func(run string, seq uint64) string { return "/raw/" + run + "/" + strconv.FormatUint(seq, 10) },
		Window:   window,
	}})
	if err = errors.Join(err, tmplErr); err == nil {
		return
	}
	if r.Context().Err() != nil {
		return // the client left
	}
	s.opts.Logger.Warn("session page", "run", id, "err", err)
	msg := "this run cannot be shown: " + views.StripEscapes(m.text(err.Error()))
	if cw.n > 0 {
		_, _ = io.WriteString(w, `<div class="errbox">`+html.EscapeString(msg)+`</div>`)
		return
	}
	code := http.StatusInternalServerError
	if errors.Is(err, export.ErrNotTranscript) {
		code = http.StatusNotFound
	}
	http.Error(w, msg, code)
}

// countingWriter counts what was written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// parentOf returns the parent run id the transcript's first line names
// ("" for a top-level run, or a file that cannot be read).
func parentOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	var head struct {
		Parent string `json:"parent_run_id"`
	}
	if json.Unmarshal(line, &head) != nil || runid.Valid(head.Parent) != nil {
		return ""
	}
	return head.Parent
}

// maxRawLine bounds a line the raw view shows.
const maxRawLine = 8 << 20

// raw shows the line behind an event as plain text: the transcript line
// of seq, and the provider's raw line it came from where the event names
// one (raw_line) and its step's raw capture is kept. Masked with
// --redact; terminal escapes removed and control and bidirectional
// characters shown as [U+XXXX] (views.StripEscapes), as on every page.
func (s *Server) raw(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil {
		http.Error(w, "not a seq", http.StatusNotFound)
		return
	}
	line, ev, rawRef, err := findLine(s.runPath(id), seq)
	if err != nil {
		http.Error(w, "no event "+strconv.FormatUint(seq, 10)+" in this run", http.StatusNotFound)
		return
	}
	m := s.masker()
	var b bytes.Buffer
	b.WriteString("transcript line (seq " + strconv.FormatUint(seq, 10) + "):\n")
	b.WriteString(views.StripEscapes(m.text(string(line))) + "\n")
	if n := rawLineOf(ev); n > 0 && rawRef != "" {
		if p, ok := s.rawCapture(rawRef); ok {
			if text, err := nthLine(p, n); err == nil {
				b.WriteString("\nprovider raw line " + strconv.Itoa(n) + " (" + rawRef + "):\n")
				b.WriteString(views.StripEscapes(m.text(text)) + "\n")
			}
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// rawCapture resolves a step's raw capture path (relative to the storage
// root) to a regular file inside the storage root.
func (s *Server) rawCapture(rel string) (string, bool) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", false
	}
	p := filepath.Join(s.opts.Root, rel)
	st, err := os.Lstat(p)
	return p, err == nil && st.Mode().IsRegular()
}

// findLine returns the transcript line of seq, its event, and the raw
// capture of the step it belongs to (the step.completed of its path
// names it; "" when none does).
func findLine(path string, seq uint64) ([]byte, *transcript.Event, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRawLine)
	var found []byte
	var ev *transcript.Event
	for sc.Scan() {
		e, err := transcript.DecodeEvent(sc.Bytes())
		if err != nil {
			continue
		}
		if found == nil && e.Seq == seq {
			found, ev = bytes.Clone(sc.Bytes()), e
			continue
		}
		if ev != nil && e.Type == transcript.StepCompleted && e.Path == ev.Path && e.Iteration == ev.Iteration {
			if p := e.Step(); p != nil {
				if res, _ := p.AgentResult(); res != nil && res.Raw != nil {
					return found, ev, res.Raw.Path, nil
				}
			}
			return found, ev, "", nil
		}
	}
	if found == nil {
		return nil, nil, "", fs.ErrNotExist
	}
	return found, ev, "", nil
}

// rawLineOf is the provider raw line an event names (0: none).
func rawLineOf(ev *transcript.Event) int {
	if m := ev.Message(); m != nil {
		return m.RawLine
	}
	if t := ev.Tool(); t != nil {
		return t.RawLine
	}
	return 0
}

// nthLine returns the n-th line (1-based) of the raw capture at path
// (plain or framed, package rawfile).
func nthLine(path string, n int) (string, error) {
	f, err := rawfile.OpenAll(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRawLine)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			return sc.Text(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fs.ErrNotExist
}
