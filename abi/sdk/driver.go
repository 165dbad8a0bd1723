package sdk

import (
	"errors"
	"runtime"
	"strconv"

	"github.com/twasm/twasm/abi"
)

// Driver runs a Plugin over the wire format of the ABI: it is what the
// wasm exports call, and what the host calls directly to run a plugin
// natively (tests, fuzzing, the performance baseline). One Driver serves
// one stream at a time and must not be shared between goroutines.
type Driver struct {
	p   Plugin
	n   Normalizer
	out Out
	// docs holds the documents handed out during the current call: one
	// allocation per call (sized from the batch header), not one per
	// line. A fresh array each call keeps invalidation meaningful: a span
	// kept from an earlier call still points at that call's (cleared)
	// documents, never at a reused one.
	docs []abi.Doc
	line Line
	// scratch for tapes that cannot be viewed in place.
	scratch []abi.Token
}

// NewDriver returns a driver for p.
func NewDriver(p Plugin) *Driver { return &Driver{p: p} }

// Manifest returns the plugin's manifest as JSON.
func (d *Driver) Manifest() []byte {
	m := d.p.Manifest
	if m.SDK == "" {
		m.SDK = Version
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
	b = append(b, `,"sdk":`...)
	b = quote(b, m.SDK)
	return append(b, '}')
}

// Begin starts a stream with the JSON begin options.
func (d *Driver) Begin(options []byte) (status abi.Status, msg string) {
	defer d.recover(&status, &msg)
	var opts abi.BeginOptions
	if doc, ok := Parse(options); ok {
		root := doc.Root()
		opts.Provider = root.Get("provider").String()
		opts.Format = root.Get("format").String()
	}
	if d.p.New == nil {
		return abi.StatusFatal, "plugin registered no constructor"
	}
	d.n = d.p.New(opts)
	return abi.StatusOK, ""
}

// Feed handles one batch. The records are in Output until the next call.
func (d *Driver) Feed(batch []byte) (status abi.Status, msg string) {
	d.out.reset(batch)
	defer d.invalidate()
	defer d.recover(&status, &msg)
	if d.n == nil {
		return abi.StatusFatal, "feed before begin"
	}
	var lineErrs []error
	if len(batch) >= 4 {
		// Every line takes at least 12 bytes, so this bounds a forged
		// count.
		n := int(uint32(batch[0]) | uint32(batch[1])<<8 | uint32(batch[2])<<16 | uint32(batch[3])<<24)
		n = min(n, len(batch)/12)
		d.docs = make([]abi.Doc, 0, n)
	}
	// The loop is here rather than in a callback: inside WebAssembly an
	// indirect call per line costs more than the call to Next.
	r := abi.NewBatchReader(batch, d.scratch[:0])
	for {
		bl, ok := r.Next()
		if !ok {
			break
		}
		var doc *abi.Doc
		if len(d.docs) < cap(d.docs) {
			d.docs = append(d.docs, abi.Doc{Line: bl.Line, Toks: bl.Toks, Keys: d.p.Keys})
			doc = &d.docs[len(d.docs)-1]
		} else {
			// A count larger than the batch can hold: the reader
			// fails the batch; never let append move documents that
			// were handed out already.
			doc = &abi.Doc{Line: bl.Line, Toks: bl.Toks, Keys: d.p.Keys}
		}
		d.line = Line{No: bl.No, Raw: bl.Line, doc: doc}
		d.out.lineNo = bl.No
		if err := d.n.Line(&d.line, &d.out); err != nil {
			lineErrs = append(lineErrs, &lineError{no: bl.No, err: err})
		}
	}
	err := r.Err()
	d.out.lineNo = 0
	if err != nil {
		return abi.StatusFatal, err.Error()
	}
	if len(lineErrs) > 0 {
		return abi.StatusRejected, errors.Join(lineErrs...).Error()
	}
	return abi.StatusOK, ""
}

// End ends the stream. The records are in Output until the next call.
func (d *Driver) End() (status abi.Status, msg string) {
	d.out.reset(nil)
	defer d.recover(&status, &msg)
	if d.n == nil {
		return abi.StatusFatal, "end before begin"
	}
	n := d.n
	d.n = nil
	if err := n.End(&d.out); err != nil {
		return abi.StatusRejected, err.Error()
	}
	return abi.StatusOK, ""
}

// Output returns the records of the last Feed or End call. It aliases the
// driver's buffer.
func (d *Driver) Output() []byte { return d.out.enc.Buf }

// invalidate makes spans of this call's documents unusable, so a plugin
// that keeps one gets a clear panic instead of reading a reused buffer.
func (d *Driver) invalidate() {
	for i := range d.docs {
		d.docs[i].Line, d.docs[i].Toks = nil, nil
	}
	d.docs = nil
	d.line = Line{}
}

// recover turns a panic into StatusFatal; it also yields, which keeps Go's
// garbage collector making progress inside the sandbox (see wasm.md).
func (d *Driver) recover(status *abi.Status, msg *string) {
	if r := recover(); r != nil {
		*status = abi.StatusFatal
		*msg = "plugin panic: " + panicText(r)
		d.n = nil
		d.out.enc.Abort()
	}
	runtime.Gosched()
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
