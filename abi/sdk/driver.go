package sdk

import (
	"errors"
	"runtime"
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// driver runs a Plugin over the wire format of the ABI: it is what the
// wasm exports call, and what the host calls directly to run a plugin
// natively (tests, fuzzing, the performance baseline). One Driver serves
// one stream at a time and must not be shared between goroutines.
type driver struct {
	p   Plugin
	n   Normalizer
	out Out
	// docs holds the documents handed out during the current call, in an
	// array of their own (see feed): a value kept from an earlier call
	// finds its document cleared, never reused. Every document is also
	// stamped with gen, the number of the call, so a span (Str) kept from
	// an earlier call fails its check.
	docs []abi.Doc
	gen  uint32
	line Line
	// scratch for tapes that cannot be viewed in place.
	scratch []wire.Token
	// panicked is what recover caught during the current call ("" when
	// nothing): recover takes no pointers to the call's results, which
	// would move them to the heap on every call under TinyGo.
	panicked string
	// acc reassembles pretty-printed documents (Plugin.Reassemble), and
	// docLine is the line it hands a completed one over as.
	acc     docBuffer
	docLine Line
	lastNo  int // number of the last line fed
}

// Driver returns a fresh driver of p: what runs p in process over the
// wire format of the ABI, for its wasm exports and for the host's native
// path (capture.NativePlugin). Its type is internal to the module.
func (p Plugin) Driver() wire.Driver { return newDriver(p) }

// newDriver returns a driver for p.
func newDriver(p Plugin) *driver { return &driver{p: p} }

// Manifest returns the plugin's manifest as JSON.
func (d *driver) manifest() []byte {
	m := d.p.Manifest
	if m.SDK == "" {
		m.SDK = sdkVersion
	}
	b := []byte(`{"name":`)
	b = quote(b, m.Name)
	b = append(b, `,"version":`...)
	b = quote(b, m.Version)
	list := func(name string, xs []string) {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":[`...)
		for i, x := range xs {
			if i > 0 {
				b = append(b, ',')
			}
			b = quote(b, x)
		}
		b = append(b, ']')
	}
	list("providers", m.Providers)
	list("formats", m.Formats)
	if d.p.Keys != nil {
		m.Keys = d.p.Keys.Names()
	}
	if len(m.Keys) > 0 {
		list("keys", m.Keys)
	}
	if m.Description != "" {
		b = append(b, `,"description":`...)
		b = quote(b, m.Description)
	}
	if len(m.Stores) > 0 {
		b = appendStores(b, m.Stores)
	}
	if m.SourceFacts {
		b = append(b, `,"source_facts":true`...)
	}
	b = append(b, `,"sdk":`...)
	b = quote(b, m.SDK)
	return append(b, '}')
}

// appendStores writes the manifest's "stores" member (ABI 1.4) by hand,
// as the rest of the manifest: encoding/json would weigh on every module.
func appendStores(b []byte, stores []abi.Store) []byte {
	str := func(first bool, name, v string) bool {
		if v == "" {
			return first
		}
		if !first {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...) // a member name of this package: no escape
		b = append(b, `":`...)
		b = quote(b, v)
		return false
	}
	b = append(b, `,"stores":[`...)
	for i, s := range stores {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		first := str(true, "name", s.Name)
		first = str(first, "provider", s.Provider)
		first = str(first, "kind", s.Kind)
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"roots":[`...)
		for j, r := range s.Roots {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			f := str(true, "env", r.Env)
			f = str(f, "path", r.Path)
			f = str(f, "os", r.OS)
			if r.Projects {
				if !f {
					b = append(b, ',')
				}
				b = append(b, `"projects":true`...)
				f = false
			}
			if l := r.List; l != nil {
				if !f {
					b = append(b, ',')
				}
				b = append(b, `"list":{`...)
				lf := str(true, "file", l.File)
				lf = str(lf, "array", l.Array)
				lf = str(lf, "field", l.Field)
				str(lf, "project", l.Project)
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		b = append(b, ']')
		str(false, "unless_env", s.UnlessEnv)
		str(false, "dir", s.Dir)
		str(false, "pattern", s.Pattern)
		str(false, "session_start", s.SessionStart)
		if len(s.Files) > 0 {
			b = append(b, `,"files":[`...)
			for j, f := range s.Files {
				if j > 0 {
					b = append(b, ',')
				}
				b = quote(b, f)
			}
			b = append(b, ']')
		}
		str(false, "session", s.Session)
		if p := s.Parent; p != nil {
			b = append(b, `,"parent":{`...)
			f := str(true, "file", p.File)
			str(f, "member", p.Member)
			b = append(b, '}')
		}
		str(false, "sub_agents", s.SubAgents)
		if c := s.SubAgentCall; c != nil {
			b = append(b, `,"sub_agent_call":{"file":`...)
			b = quote(b, c.File)
			b = append(b, `,"key":`...)
			b = quote(b, c.Key)
			b = append(b, '}')
		}
		str(false, "sub_agent_result", s.SubAgentResult)
		if s.RetentionDays != 0 {
			b = append(b, `,"retention_days":`...)
			b = strconv.AppendInt(b, int64(s.RetentionDays), 10)
		}
		str(false, "retention_file", s.RetentionFile)
		str(false, "retention_key", s.RetentionKey)
		if q := s.SQLite; q != nil {
			b = append(b, `,"sqlite":{"sessions":`...)
			b = quote(b, q.Sessions)
			b = append(b, `,"tables":[`...)
			for j, t := range q.Tables {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"table":`...)
				b = quote(b, t.Table)
				b = append(b, `,"query":`...)
				b = quote(b, t.Query)
				b = append(b, `,"key":`...)
				b = quote(b, t.Key)
				b = append(b, `,"version":`...)
				b = quote(b, t.Version)
				str(false, "time", t.Time)
				if len(t.JSON) > 0 {
					b = append(b, `,"json":[`...)
					for k, c := range t.JSON {
						if k > 0 {
							b = append(b, ',')
						}
						b = quote(b, c)
					}
					b = append(b, ']')
				}
				b = append(b, '}')
			}
			b = append(b, ']')
			if len(q.Related) > 0 {
				b = append(b, `,"related":[`...)
				for j, r := range q.Related {
					if j > 0 {
						b = append(b, ',')
					}
					b = append(b, '{')
					f := str(true, "table", r.Table)
					f = str(f, "glob", r.Glob)
					f = str(f, "query", r.Query)
					f = str(f, "key", r.Key)
					str(f, "file", r.File)
					b = append(b, '}')
				}
				b = append(b, ']')
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// Begin starts a stream with the JSON begin options.
func (d *driver) Begin(options []byte) (wire.Status, string) {
	return d.result(d.begin(options))
}

func (d *driver) begin(options []byte) (wire.Status, string) {
	defer d.recover()
	var opts abi.BeginOptions
	if doc, ok := Parse(options); ok {
		root := doc.Root()
		opts.Provider = root.Get("provider").String()
		opts.Format = root.Get("format").String()
	}
	if d.p.New == nil {
		return wire.StatusFatal, "plugin registered no constructor"
	}
	d.acc.drop()
	d.n = d.p.New(opts)
	return wire.StatusOK, ""
}

// Feed handles one batch. The records are in Output until the next call.
func (d *driver) Feed(batch []byte) (wire.Status, string) {
	return d.result(d.feed(batch))
}

func (d *driver) feed(batch []byte) (wire.Status, string) {
	d.out.reset(batch)
	defer d.invalidate()
	defer d.recover()
	if d.n == nil {
		return wire.StatusFatal, "feed before begin"
	}
	var lineErrs []error
	d.gen++
	d.docs = nil
	if len(batch) >= 4 {
		// Every line takes at least 12 bytes, so this bounds a forged
		// count. A fresh array every call: a plugin that kept an
		// abi.Value (not a Str, which checks Gen) from an earlier call
		// must find its document cleared (a missing value), never
		// reused by another line, whose bytes it would read as its own.
		// Reusing the array made the claude plugin lose every message
		// when lines came one call each, as they do from a live agent.
		n := int(uint32(batch[0]) | uint32(batch[1])<<8 | uint32(batch[2])<<16 | uint32(batch[3])<<24)
		n = min(n, len(batch)/12)
		d.docs = make([]abi.Doc, 0, n)
	}
	// The loop is here rather than in a callback: inside WebAssembly an
	// indirect call per line costs more than the call to Next.
	r := wire.NewBatchReader(batch, d.scratch[:0])
	for {
		bl, ok := r.Next()
		if !ok {
			break
		}
		var doc *abi.Doc
		if len(d.docs) < cap(d.docs) {
			d.docs = append(d.docs, abi.Doc{Line: bl.Line, Toks: bl.Toks, Keys: d.p.Keys, Gen: d.gen})
			doc = &d.docs[len(d.docs)-1]
		} else {
			// A count smaller than the batch holds: the reader fails
			// the batch; never let append move documents that were
			// handed out already.
			doc = &abi.Doc{Line: bl.Line, Toks: bl.Toks, Keys: d.p.Keys, Gen: d.gen}
		}
		d.line = Line{No: bl.No, Raw: bl.Line, doc: doc}
		d.out.lineNo = bl.No
		d.lastNo = bl.No
		var err error
		if !d.p.Reassemble || !d.reassemble(&d.line, &err) {
			err = d.n.Line(&d.line, &d.out)
		}
		if err != nil {
			lineErrs = append(lineErrs, &lineError{no: bl.No, err: err})
		}
	}
	err := r.Err()
	d.out.lineNo = 0
	if err != nil {
		return wire.StatusFatal, err.Error()
	}
	if len(lineErrs) > 0 {
		return wire.StatusRejected, errors.Join(lineErrs...).Error()
	}
	return wire.StatusOK, ""
}

// End ends the stream. The records are in Output until the next call.
func (d *driver) End() (wire.Status, string) {
	return d.result(d.end())
}

func (d *driver) end() (wire.Status, string) {
	d.out.reset(nil)
	defer d.recover()
	if d.n == nil {
		return wire.StatusFatal, "end before begin"
	}
	n := d.n
	d.n = nil
	var errs []error
	if d.p.Reassemble {
		// A document still open: whole if its text is one even though
		// its brackets do not balance.
		if doc, dropped := d.acc.end(); doc != nil {
			d.account(S(jsonDocument), false)
			d.docLine = Line{No: d.lastNo, Raw: doc.Line, doc: doc}
			if err := n.Line(&d.docLine, &d.out); err != nil {
				errs = append(errs, err)
			}
		} else if dropped {
			d.account(S(nonJSON), true)
		}
	}
	if err := n.End(&d.out); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return wire.StatusRejected, errors.Join(errs...).Error()
	}
	return wire.StatusOK, ""
}

// Output returns the records of the last Feed or End call. It aliases the
// driver's buffer.
func (d *driver) Output() []byte { return d.out.enc.Buf }

// The native types the SDK declares the lines of a reassembled document
// with (Plugin.Reassemble).
const (
	nonJSON      = "non_json"      // lines of a document that did not parse
	jsonDocument = "json_document" // lines of one that did, accounted for by it
)

// reassemble hands l to the document being reassembled when l belongs to
// one, or opens one, and reports whether it did; a completed document
// goes to the normalizer as one line (its error in *err). A line that
// cannot continue the document drops it (its lines counted unmapped) and
// is handled as any other.
func (d *driver) reassemble(l *Line, err *error) bool {
	if d.acc.active() {
		if d.acc.continues(l) {
			*err = d.addLine(l)
			return true
		}
		if d.acc.drop() {
			d.account(S(nonJSON), true)
		}
	}
	if len(l.doc.Toks) > 0 {
		return false
	}
	if t := TrimSpace(l.Raw); len(t) == 0 || t[0] != '{' && t[0] != '[' {
		return false
	}
	*err = d.addLine(l)
	return true
}

// addLine adds l to the document being reassembled (starting one), and
// hands the document to the normalizer once it is complete.
func (d *driver) addLine(l *Line) error {
	doc, dropped := d.acc.add(l.No, l.Raw)
	if dropped {
		d.account(S(nonJSON), true)
	}
	if doc == nil {
		return nil
	}
	// Every line of the document is accounted for by it.
	d.account(S(jsonDocument), false)
	d.docLine = Line{No: l.No, Raw: doc.Line, doc: doc}
	return d.n.Line(&d.docLine, &d.out)
}

// account reports the lines of the document the buffer just handed out
// (declared ignored as native) or dropped (counted unmapped as native),
// so that every raw line is accounted for (spec 6.8). A count of lines
// covers the lines that end at the line it is reported at, and the host
// never sends a blank line, nor a line that ended the document without
// being one of its own: so each run of consecutive lines is reported at
// its own last line. At the end of the stream (no current line) a count
// covers the last lines not yet accounted for, which a document still
// open holds: one record of them all.
func (d *driver) account(native Str, unmapped bool) {
	runs := d.acc.lineRuns()
	cur := d.out.lineNo
	if cur == 0 {
		n := 0
		for _, r := range runs {
			n += r.last - r.first + 1
		}
		d.report(native, unmapped, n)
		return
	}
	for _, r := range runs {
		d.out.lineNo = r.last
		d.report(native, unmapped, r.last-r.first+1)
	}
	d.out.lineNo = cur
}

// report counts n lines unmapped, or declares them ignored.
func (d *driver) report(native Str, unmapped bool, n int) {
	if unmapped {
		d.out.UnmappedN(native, n)
	} else {
		d.out.IgnoredN(native, n)
	}
}

// invalidate makes spans of this call's documents unusable, so a plugin
// that keeps one gets a clear panic instead of reading a reused buffer.
func (d *driver) invalidate() {
	for i := range d.docs {
		d.docs[i].Line, d.docs[i].Toks = nil, nil
	}
	d.docs = d.docs[:0]
	d.line = Line{}
	d.docLine = Line{}
}

// recover notes a panic for result; it also yields, which keeps Go's
// garbage collector making progress inside the sandbox (see wasm.md).
// TinyGo has no recover on WebAssembly: there a panic traps, and the host
// handles the trap as it handles StatusFatal.
func (d *driver) recover() {
	if r := recover(); r != nil {
		d.panicked = "plugin panic: " + panicText(r)
		d.n = nil
		d.out.enc.Abort()
	}
	runtime.Gosched()
}

// result is a call's status, or StatusFatal when it panicked.
func (d *driver) result(status wire.Status, msg string) (wire.Status, string) {
	if d.panicked != "" {
		status, msg = wire.StatusFatal, d.panicked
		d.panicked = ""
	}
	return status, msg
}

// lineError is a normalizer's error on one line. The SDK avoids fmt: it
// would link reflect, os and their tables into every plugin, a third more
// code for the host to decode and compile.
type lineError struct {
	no  int
	err error
}

func (e *lineError) Error() string { return "line " + strconv.Itoa(e.no) + ": " + e.err.Error() }
func (e *lineError) Unwrap() error { return e.err }

// panicText renders a recovered panic value without fmt.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	case interface{ String() string }:
		return v.String()
	case int:
		return strconv.Itoa(v)
	default:
		return "(a value that is neither an error nor a string)"
	}
}
