package redact

import (
	"encoding/json"
	"maps"
	"sync"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/transcript"
)

// Redactor masks secrets and counts them by kind.
type Redactor struct {
	mu     sync.Mutex
	counts map[string]int
}

// New returns a Redactor with no counts.
func New() *Redactor { return &Redactor{counts: map[string]int{}} }

// Counts returns how many values of each kind were masked so far.
func (r *Redactor) Counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.counts) == 0 {
		return nil
	}
	return maps.Clone(r.counts)
}

func (r *Redactor) count(kind string) {
	r.mu.Lock()
	r.counts[kind]++
	r.mu.Unlock()
}

// MaskBytes returns b with every secret replaced: b is a line of a raw
// capture or any text. A line of JSON (or a server-sent event's data:
// line) is masked in what its strings mean (see maskJSONText), and stays
// the same JSON with only the strings that held a secret encoded again.
// It returns b itself when there is nothing to mask (no copy).
func (r *Redactor) MaskBytes(b []byte) []byte { return r.maskText(b, 0) }

// MaskString is MaskBytes for a string.
func (r *Redactor) MaskString(s string) string {
	if s == "" {
		return s
	}
	out := r.MaskBytes([]byte(s))
	if string(out) == s {
		return s
	}
	return string(out)
}

// maskJSON masks the strings of a JSON document (and its keys), keeping
// it valid JSON. A value that is not JSON is masked as text and kept as a
// string.
func (r *Redactor) maskJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if out, ok := r.maskJSONText(raw, 0, 0); ok {
		return out
	}
	if !json.Valid(raw) {
		return jsonstr.AppendQuoted(nil, r.MaskString(string(raw)))
	}
	return raw // JSON without strings (a number): nothing to mask
}

// Mask masks every string of ev in place: recorder.Options.Mask takes it.
// Names and ids are masked too (a tool named after a key is still a
// key); the run and step paths, whose grammar a mark would break, are
// not. A nil event is left alone.
func (r *Redactor) Mask(ev *transcript.Event) {
	if ev == nil {
		return
	}
	ev.Extra = r.maskExtra(ev.Extra)
	switch p := ev.Payload.(type) {
	case *transcript.RawPayload:
		p.JSON = r.maskJSON(p.JSON)
	case *transcript.StepPayload:
		p.Name = r.MaskString(p.Name)
		p.Error = r.MaskString(p.Error)
		p.Result = r.maskJSON(p.Result)
		p.Extra = r.maskExtra(p.Extra)
	case *transcript.MessagePayload:
		p.Model = r.MaskString(p.Model)
		p.ID = r.MaskString(p.ID)
		p.StopReason = r.MaskString(p.StopReason)
		for i := range p.Blocks {
			b := &p.Blocks[i]
			b.Text = r.MaskString(b.Text)
			b.Thinking = r.MaskString(b.Thinking)
			b.ToolName = r.MaskString(b.ToolName)
			b.ToolID = r.MaskString(b.ToolID)
			b.ToolInput = r.maskJSON(b.ToolInput)
			b.ToolContent = r.MaskString(b.ToolContent)
			b.Command = r.MaskString(b.Command)
			b.Chunk = r.MaskString(b.Chunk)
			b.Extra = r.maskExtra(b.Extra)
		}
		p.Extra = r.maskExtra(p.Extra)
	case *transcript.ToolPayload:
		p.Name = r.MaskString(p.Name)
		p.CallID = r.MaskString(p.CallID)
		p.Input = r.maskJSON(p.Input)
		p.Output = r.MaskString(p.Output)
		p.Error = r.MaskString(p.Error)
		p.Command = r.MaskString(p.Command)
		p.Extra = r.maskExtra(p.Extra)
	}
}

func (r *Redactor) maskExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	for k, v := range m {
		m[k] = r.maskJSON(v)
	}
	return m
}
