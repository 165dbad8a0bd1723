package web

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

// Live pages learn of growth by server-sent events: the server looks at
// what the page shows every Options.Poll (a stat, nothing read) and
// sends "grown" when it changed; the page then fetches itself again and
// puts the new content in place (static/serve.js). What was shown is
// named by the page's live address (the transcript's size, the
// transcripts directory's version), so that growth between the page and
// its stream is not missed.

// liveSession streams "grown" whenever the run's transcript changes size
// from what the page showed (?size=).
func (s *Server) liveSession(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	path := s.runPath(id)
	last, _ := strconv.ParseInt(r.URL.Query().Get("size"), 10, 64)
	s.stream(w, r, func() (string, bool) {
		st, err := os.Stat(path)
		if err != nil || st.Size() == last {
			return "", false
		}
		last = st.Size()
		return strconv.FormatInt(last, 10), true
	})
}

// liveList streams "grown" whenever a run is added to or removed from
// the transcripts directory since the version the page showed (?v=).
func (s *Server) liveList(w http.ResponseWriter, r *http.Request) {
	last := r.URL.Query().Get("v")
	s.stream(w, r, func() (string, bool) {
		v := s.dirVersion()
		if v == last {
			return "", false
		}
		last = v
		return v, true
	})
}

// dirVersion names the transcripts directory's state: its mtime, which
// a file created, renamed or removed in it changes.
func (s *Server) dirVersion() string {
	st, err := os.Stat(s.transcripts())
	if err != nil {
		return "0"
	}
	return strconv.FormatInt(st.ModTime().UnixNano(), 10)
}

// stream writes server-sent events until the request ends (the client
// left, or the server shuts down: requests' contexts end with Serve's):
// a "grown" event with changed's data whenever changed reports true,
// and a comment every 15 s so that proxies keep the stream open.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, changed func() (string, bool)) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return // the headers are the answer; a stream has no end to wait for
	}
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	idle := 0
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		msg := ""
		if data, ok := changed(); ok {
			msg = "event: grown\ndata: " + data + "\n\n"
		} else if idle++; time.Duration(idle)*s.opts.Poll >= 15*time.Second {
			msg = ": idle\n\n"
		}
		if msg == "" {
			continue
		}
		idle = 0
		if _, err := fmt.Fprint(w, msg); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}
