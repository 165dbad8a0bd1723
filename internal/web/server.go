package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/index"
)

//go:embed static templates
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Root is the storage root (<Root>/transcripts holds the runs).
	Root string
	// Index is the storage's index, open; the server brings it up to
	// date before it answers from it, and never closes it.
	Index *index.Index
	// DigestKind names the runs' digests in the index (the listing's
	// tokens and cost, as ls computes them: cmdutil.DigestKind).
	DigestKind string
	// Token, when set, must come with every request (see the package
	// doc); "" serves without one, to loopback Host names only.
	Token string
	// Redact masks secrets in everything served (redact.Redactor).
	Redact bool
	// Poll is how often live pages look for growth (0: 250 ms).
	Poll time.Duration
	// Usage gives the usage page its ledgers (nil: the page says it has
	// none: a 404).
	Usage UsageSource
	// Location is the time zone the usage page cuts days in and reads
	// its since and until days in (nil: time.Local, as twasm usage does
	// without --timezone), so that its figures are the CLI's.
	Location *time.Location
	// PageSize is the listing's page (0: 50 runs).
	PageSize int
	Logger   *slog.Logger
}

// Server is the read-only web app over one storage root.
type Server struct {
	opts  Options
	tmpl  *template.Template
	mux   *http.ServeMux
	csp   string
	upd   sync.Mutex // one index update at a time
	files fs.FS
	// rankAmong is the search page's index.Query.RankAmong (0: the
	// index's default; tests bound it low).
	rankAmong int
}

// New returns a server; it starts nothing (Serve, or Handler in tests).
func New(opts Options) (*Server, error) {
	if opts.Index == nil || opts.Root == "" {
		return nil, errors.New("web: a storage root and its index are required")
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(assets, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Server{opts: opts, tmpl: tmpl, mux: http.NewServeMux(), csp: csp, files: static}
	s.routes()
	return s, nil
}

// csp allows the server's own scripts, styles and connections and
// nothing else: no inline script or style (transcript text that escaped
// the escaping could still run nothing), no frame around the page, no
// form sent elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", s.list)
	s.mux.HandleFunc("GET /s/{id}", s.session)
	s.mux.HandleFunc("GET /raw/{id}/{seq}", s.raw)
	s.mux.HandleFunc("GET /search", s.search)
	s.mux.HandleFunc("GET /usage", s.usage)
	s.mux.HandleFunc("GET /live/list", s.liveList)
	s.mux.HandleFunc("GET /live/s/{id}", s.liveSession)
	// A browser asks for an icon of a page that names none (the raw
	// line's text): nothing, rather than a 404 in its console.
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux.HandleFunc("GET /static/page.css", s.exportAsset)
	s.mux.HandleFunc("GET /static/page.js", s.exportAsset)
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(s.files)))
}

// Handler is the app with its guards: the security headers on every
// response, the Host (without a token) or the token (with one), and
// GET and HEAD only.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", s.csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		if !s.allowed(w, r) {
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// tokenCookie carries the token after the first request that gave it in
// the address.
const tokenCookie = "twasm_token"

// allowed checks who may ask: without a token, only a loopback Host (a
// page of another site that a DNS name rebinds to 127.0.0.1 names its
// own host); with one, the token in the Authorization header, the
// cookie, or the address (?token=, then set as a cookie and dropped from
// the address by a redirect).
func (s *Server) allowed(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" {
		if !loopbackHost(r.Host) {
			http.Error(w, "forbidden: this server answers to localhost only", http.StatusForbidden)
			return false
		}
		return true
	}
	match := func(v string) bool {
		return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(s.opts.Token)) == 1
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && match(v) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && match(c.Value) {
		return true
	}
	if q := r.URL.Query(); match(q.Get("token")) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return false
	}
	http.Error(w, "unauthorized: give the token twasm serve printed (?token=...)", http.StatusUnauthorized)
	return false
}

// loopbackHost reports whether a Host header names this machine's
// loopback interface (localhost, 127.0.0.0/8, ::1).
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listen address is on the loopback
// interface only (a token is required otherwise).
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// NewToken returns a random token (128 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Serve answers on ln until ctx is done, then shuts down: live streams
// end (their requests' context is ctx's), requests in flight get up to
// five seconds to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	return nil
}

// transcripts is the directory of the runs' transcripts.
func (s *Server) transcripts() string { return filepath.Join(s.opts.Root, "transcripts") }

// update brings the index up to date with the transcripts (a run
// recorded or grown since is read), one update at a time.
func (s *Server) update(ctx context.Context) {
	s.upd.Lock()
	defer s.upd.Unlock()
	if _, err := s.opts.Index.Update(ctx); err != nil && ctx.Err() == nil {
		s.opts.Logger.Warn("index update", "err", err)
	}
}

// exportAsset serves the style and script of export's page (package
// export), which a session page links to: the same rendering as a saved
// page.
func (s *Server) exportAsset(w http.ResponseWriter, r *http.Request) {
	body, ctype := export.PageCSS(), "text/css; charset=utf-8"
	if strings.HasSuffix(r.URL.Path, ".js") {
		body, ctype = export.PageJS(), "text/javascript; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = io.WriteString(w, body)
}
