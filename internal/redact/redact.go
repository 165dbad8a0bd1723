package redact

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"sync"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/transcript"
)

// A rule is one secret shape. Order matters: more specific shapes first,
// so that an Anthropic key is not counted as an OpenAI one.
type rule struct {
	kind string
	re   *regexp.Regexp
	// group, when > 0, is the submatch that holds the secret; the rest of
	// the match (a boundary, a header name) is kept.
	group int
	// plausible, when set, must accept the secret; it keeps prose such as
	// "the bearer instrument" from being masked.
	plausible func(secret []byte) bool
}

// boundary is what may precede a token: the start, a character that cannot
// be part of it, or a JSON escape such as \n (raw captures are JSON, where
// a key often follows an escaped newline).
const boundary = `(^|[^A-Za-z0-9_]|\\[nrtbf"/])`

// rules are compiled on first use, not at start-up: compiling them took
// about a millisecond of every twasm command, most of which never mask.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{kind: "private_key", re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
		// A block cut off before its END line (a truncated output) still
		// holds key material: mask what follows the header.
		{kind: "private_key", re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[A-Za-z0-9+/=\s]|\\[nr])*`)},
		{kind: "anthropic_api_key", re: regexp.MustCompile(boundary + `(sk-ant-[A-Za-z0-9_\-]{20,})`), group: 2},
		{kind: "openai_api_key", re: regexp.MustCompile(boundary + `(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})`), group: 2},
		{kind: "github_pat", re: regexp.MustCompile(boundary + `(github_pat_[A-Za-z0-9_]{22,255})`), group: 2},
		{kind: "github_token", re: regexp.MustCompile(boundary + `(gh[pousr]_[A-Za-z0-9]{36,255})`), group: 2},
		{kind: "aws_access_key_id", re: regexp.MustCompile(boundary + `((?:AKIA|ASIA)[0-9A-Z]{16})\b`), group: 2},
		{kind: "google_api_key", re: regexp.MustCompile(boundary + `(AIza[0-9A-Za-z_\-]{30,})`), group: 2},
		{kind: "slack_token", re: regexp.MustCompile(boundary + `(xox[abposr]-[0-9A-Za-z\-]{10,})`), group: 2},
		{kind: "bearer_token", re: regexp.MustCompile(`(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)`), group: 2, plausible: tokenLike},
	}
})

// tokenLike reports whether a bearer credential looks generated: it has a
// digit or a token punctuation character, which words do not.
func tokenLike(b []byte) bool {
	for _, c := range b {
		if c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' {
			return true
		}
	}
	return false
}

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

func (r *Redactor) add(kind string, n int) {
	r.mu.Lock()
	r.counts[kind] += n
	r.mu.Unlock()
}

// MaskBytes returns b with every secret replaced. It returns b itself
// when there is nothing to mask (the common case costs no copy).
func (r *Redactor) MaskBytes(b []byte) []byte {
	out := b
	for _, ru := range rules() {
		if !ru.re.Match(out) {
			continue
		}
		n := 0
		repl := []byte("[REDACTED:" + ru.kind + "]")
		out = ru.re.ReplaceAllFunc(out, func(m []byte) []byte {
			if ru.group == 0 {
				n++
				return repl
			}
			sub := ru.re.FindSubmatchIndex(m)
			secret := m[sub[2*ru.group]:sub[2*ru.group+1]]
			if ru.plausible != nil && !ru.plausible(secret) {
				return m
			}
			n++
			return append(append(append([]byte(nil), m[:sub[2*ru.group]]...), repl...), m[sub[2*ru.group+1]:]...)
		})
		if n > 0 {
			r.add(ru.kind, n)
		}
	}
	return out
}

// MaskString is MaskBytes for a string.
func (r *Redactor) MaskString(s string) string {
	out := r.MaskBytes([]byte(s))
	if len(out) == len(s) && string(out) == s {
		return s
	}
	return string(out)
}

// maskJSON masks the string values of a JSON document (and its keys),
// keeping it valid JSON: values are masked after decoding, so an escaped
// secret is found, and re-encoded losslessly.
func (r *Redactor) maskJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	// Fast path: nothing that could be a secret in the raw text.
	masked := r.dry(raw)
	if !masked {
		return raw
	}
	out, err := maskValue(r, raw)
	if err != nil {
		// Not JSON: mask it as text and keep it as a string.
		return jsonstr.AppendQuoted(nil, r.MaskString(string(raw)))
	}
	return out
}

// dry reports whether any rule matches the text (without counting).
func (r *Redactor) dry(b []byte) bool {
	for _, ru := range rules() {
		if ru.re.Match(b) {
			return true
		}
	}
	return bytes.Contains(b, []byte(`\u`)) // escapes may hide a secret
}

// Mask masks every string of ev in place: recorder.Options.Mask takes it.
// A nil event is left alone.
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
		for i := range p.Blocks {
			b := &p.Blocks[i]
			b.Text = r.MaskString(b.Text)
			b.Thinking = r.MaskString(b.Thinking)
			b.ToolInput = r.maskJSON(b.ToolInput)
			b.ToolContent = r.MaskString(b.ToolContent)
			b.Command = r.MaskString(b.Command)
			b.Chunk = r.MaskString(b.Chunk)
			b.Extra = r.maskExtra(b.Extra)
		}
		p.Extra = r.maskExtra(p.Extra)
	case *transcript.ToolPayload:
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
