package sdk

import (
	"errors"
	"runtime"
	"slices"
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

// manifest returns the plugin's manifest as JSON, written by hand
// (members): encoding/json would weigh on every module.
func (d *driver) manifest() []byte {
	m := d.p.Manifest
	if m.SDK == "" {
		m.SDK = sdkVersion
	}
	if d.p.Keys != nil {
		m.Keys = d.p.Keys.Names()
	}
	var b []byte
	object(&b, func(o *members) {
		o.str("name", m.Name)
		o.str("version", m.Version)
		o.list("providers", m.Providers)
		o.list("formats", m.Formats)
		o.listIf("keys", m.Keys)
		o.strIf("description", m.Description)
		if len(m.Stores) > 0 {
			o.objects("stores", len(m.Stores), func(i int, o *members) { store(o, &m.Stores[i]) })
		}
		o.trueIf("source_facts", m.SourceFacts)
		o.str("sdk", m.SDK)
	})
	return b
}

// store writes the members of one store of the manifest (ABI 1.4).
func store(o *members, s *abi.Store) {
	o.strIf("name", s.Name)
	o.strIf("provider", s.Provider)
	o.strIf("kind", s.Kind)
	o.objects("roots", len(s.Roots), func(i int, o *members) {
		r := &s.Roots[i]
		o.strIf("env", r.Env)
		o.strIf("path", r.Path)
		o.strIf("os", r.OS)
		o.trueIf("projects", r.Projects)
		if l := r.List; l != nil {
			o.object("list", func(o *members) {
				o.strIf("file", l.File)
				o.strIf("array", l.Array)
				o.strIf("field", l.Field)
				o.strIf("project", l.Project)
			})
		}
	})
	o.strIf("unless_env", s.UnlessEnv)
	o.strIf("dir", s.Dir)
	o.strIf("pattern", s.Pattern)
	o.strIf("session_start", s.SessionStart)
	o.listIf("files", s.Files)
	o.strIf("session", s.Session)
	if p := s.Parent; p != nil {
		o.object("parent", func(o *members) {
			o.strIf("file", p.File)
			o.strIf("member", p.Member)
			o.strIf("result", p.Result)
			if m := p.Prompt; m != nil {
				o.object("prompt", func(o *members) {
					o.strIf("file", m.File)
					o.str("record", m.Record)
					o.str("input", m.Input)
					o.strIf("name", m.Name)
				})
			}
		})
	}
	o.strIf("sub_agents", s.SubAgents)
	if c := s.SubAgentCall; c != nil {
		o.object("sub_agent_call", func(o *members) {
			o.str("file", c.File)
			o.str("key", c.Key)
		})
	}
	o.strIf("sub_agent_result", s.SubAgentResult)
	if k := s.SubAgentsKey; k != nil {
		o.object("sub_agents_key", func(o *members) {
			o.str("member", k.Member)
			if k.Prefix != 0 {
				o.key("prefix")
				*o.b = strconv.AppendInt(*o.b, int64(k.Prefix), 10)
			}
		})
	}
	if c := s.SubAgentCalls; c != nil {
		o.object("sub_agent_calls", func(o *members) {
			o.str("calls", c.Calls)
			o.str("agent", c.Agent)
			o.str("id", c.ID)
			o.strIf("agent_in", c.AgentIn)
			o.strIf("prefix", c.Prefix)
		})
	}
	if p := s.SubAgentPrompt; p != nil {
		o.object("sub_agent_prompt", func(o *members) {
			o.str("record", p.Record)
			o.str("input", p.Input)
			o.strIf("name", p.Name)
		})
	}
	if p := s.SubAgentOf; p != nil {
		o.object("sub_agent_of", func(o *members) {
			o.str("member", p.Member)
			o.str("file", p.File)
			if len(p.Result) > 0 {
				names := make([]string, 0, len(p.Result))
				for k := range p.Result {
					names = append(names, k)
				}
				slices.Sort(names)
				o.object("result", func(o *members) {
					for _, k := range names {
						// The plugin's member names: quoted.
						if o.n > 0 {
							*o.b = append(*o.b, ',')
						}
						o.n++
						*o.b = append(quote(*o.b, k), ':')
						*o.b = quote(*o.b, p.Result[k])
					}
				})
			}
		})
	}
	if s.RetentionDays != 0 {
		o.key("retention_days")
		*o.b = strconv.AppendInt(*o.b, int64(s.RetentionDays), 10)
	}
	o.strIf("retention_file", s.RetentionFile)
	o.strIf("retention_key", s.RetentionKey)
	if q := s.SQLite; q != nil {
		o.object("sqlite", func(o *members) { sqliteSource(o, q) })
	}
}

// sqliteSource writes the members of a store's SQLite source.
func sqliteSource(o *members, q *abi.SQLiteSource) {
	o.str("sessions", q.Sessions)
	if nw := q.Newer; nw != nil {
		o.object("newer", func(o *members) {
			o.str("table", nw.Table)
			o.str("sessions", nw.Sessions)
		})
	}
	if len(q.Schemas) > 0 {
		o.objects("schemas", len(q.Schemas), func(i int, o *members) {
			sc := &q.Schemas[i]
			o.list("tables", sc.Tables)
			o.str("sessions", sc.Sessions)
		})
	}
	o.objects("tables", len(q.Tables), func(i int, o *members) {
		t := &q.Tables[i]
		o.str("table", t.Table)
		o.str("query", t.Query)
		o.str("key", t.Key)
		o.str("version", t.Version)
		o.strIf("time", t.Time)
		o.listIf("json", t.JSON)
		o.strIf("if_table", t.IfTable)
	})
	if len(q.Related) > 0 {
		o.objects("related", len(q.Related), func(i int, o *members) {
			r := &q.Related[i]
			o.strIf("table", r.Table)
			o.strIf("glob", r.Glob)
			o.strIf("query", r.Query)
			o.strIf("key", r.Key)
			o.strIf("file", r.File)
		})
	}
}

// members writes the members of one JSON object into *b, a comma before
// each but the first. Names are this package's own: never escaped.
type members struct {
	b *[]byte
	n int
}

// object writes a JSON object whose members fill writes.
func object(b *[]byte, fill func(o *members)) {
	*b = append(*b, '{')
	fill(&members{b: b})
	*b = append(*b, '}')
}

// key writes the name of the next member.
func (o *members) key(name string) {
	if o.n > 0 {
		*o.b = append(*o.b, ',')
	}
	o.n++
	*o.b = append(*o.b, '"')
	*o.b = append(*o.b, name...)
	*o.b = append(*o.b, '"', ':')
}

// str writes a string member; strIf only when v is not empty.
func (o *members) str(name, v string) {
	o.key(name)
	*o.b = quote(*o.b, v)
}

func (o *members) strIf(name, v string) {
	if v != "" {
		o.str(name, v)
	}
}

// trueIf writes name: true when v is.
func (o *members) trueIf(name string, v bool) {
	if v {
		o.key(name)
		*o.b = append(*o.b, "true"...)
	}
}

// list writes an array of strings ([] when there is none); listIf only
// when there is one.
func (o *members) list(name string, xs []string) {
	o.key(name)
	*o.b = append(*o.b, '[')
	for i, x := range xs {
		if i > 0 {
			*o.b = append(*o.b, ',')
		}
		*o.b = quote(*o.b, x)
	}
	*o.b = append(*o.b, ']')
}

func (o *members) listIf(name string, xs []string) {
	if len(xs) > 0 {
		o.list(name, xs)
	}
}

// object writes an object member; objects an array of n objects.
func (o *members) object(name string, fill func(o *members)) {
	o.key(name)
	object(o.b, fill)
}

func (o *members) objects(name string, n int, fill func(i int, o *members)) {
	o.key(name)
	*o.b = append(*o.b, '[')
	for i := range n {
		if i > 0 {
			*o.b = append(*o.b, ',')
		}
		object(o.b, func(o *members) { fill(i, o) })
	}
	*o.b = append(*o.b, ']')
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
	t := TrimSpace(l.Raw)
	if len(t) == 0 || t[0] != '{' && t[0] != '[' {
		return false
	}
	if objs, whole := GluedObjects(t); whole && len(objs) > 1 {
		// Whole objects glued on one line (`}{`, GluedObjects), not the
		// first line of a document spread over lines: the normalizer's
		// to split.
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
