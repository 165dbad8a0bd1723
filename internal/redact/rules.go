package redact

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A rule is one secret shape.
type rule struct {
	kind string
	src  string
	// group, when > 0, is the submatch that holds the secret; the rest of
	// the match (a boundary, a header name, an assignment) is kept. With
	// group 0 the secret is the first non-empty submatch, else the whole
	// match (gitleaks' convention).
	group int
	// plausible, when set, must accept the secret; it keeps prose such as
	// "the bearer instrument" from being masked.
	plausible func(secret []byte) bool
	// entropy, when > 0, is the Shannon entropy (bits per byte) the
	// secret must exceed.
	entropy float64
	// keywords (lower case): the rule runs only on text holding one.
	keywords []string
	allow    []glAllow
	// gitleaks says the rule is from gitleaks' set, whose global
	// allowlist then applies too.
	gitleaks bool

	once  sync.Once
	re    *regexp.Regexp
	allRe [][]*regexp.Regexp // allow[i]'s regexes
}

// glRule and glAllow are the generated form of a gitleaks rule and of one
// of its allowlists (gitleaks_rules.go).
type glRule struct {
	id       string
	re       string
	group    int
	entropy  float64
	keywords []string
	allow    []glAllow
}

type glAllow struct {
	and    bool   // regexes and stopwords must both match
	target string // what the regexes see: "" the secret, "match", "line"
	res    []string
	stop   []string
}

// boundary is what may precede a token: the start, a character that cannot
// be part of it, or a JSON escape such as \n (text that is JSON but was
// not parsed as such, where a key often follows an escaped newline).
const boundary = `(^|[^A-Za-z0-9_]|\\[nrtbf"/])`

// handRules are the shapes twasm checks first: the kinds it has always
// reported (an Anthropic key is not counted as an OpenAI one), and
// what gitleaks' rule set leaves out: AWS secret access keys (beside
// their key id or assigned to a name that says so) and passwords in URLs
// and DSNs.
func handRules() []*rule {
	return []*rule{
		{kind: "private_key", src: `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`, keywords: []string{"private key"}},
		// A block cut off before its END line (a truncated output) still
		// holds key material: mask what follows the header.
		{kind: "private_key", src: `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[A-Za-z0-9+/=\s]|\\[nr])*`, keywords: []string{"private key"}},
		{kind: "anthropic_api_key", src: boundary + `(sk-ant-[A-Za-z0-9_\-]{20,})`, group: 2, keywords: []string{"sk-ant-"}},
		{kind: "openai_api_key", src: boundary + `(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})`, group: 2, keywords: []string{"sk-"}},
		{kind: "github_pat", src: boundary + `(github_pat_[A-Za-z0-9_]{22,255})`, group: 2, keywords: []string{"github_pat_"}},
		{kind: "github_token", src: boundary + `(gh[pousr]_[A-Za-z0-9]{36,255})`, group: 2, keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}},
		{kind: "aws_access_key_id", src: boundary + `((?:AKIA|ASIA)[0-9A-Z]{16})\b`, group: 2, keywords: []string{"akia", "asia"}},
		// The secret access key: 40 base64 characters assigned to a name
		// that says so, or following its key id (a CSV of credentials,
		// `aws configure` output).
		{kind: "aws_secret_access_key", src: `(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)(?:[\s'"]{0,3}(?:=|:|=>|,)[\s'"=]{0,5}|[\s'"]{1,3})([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`, group: 1, plausible: mixed, keywords: []string{"secret"}},
		{kind: "aws_secret_access_key", src: `(?:AKIA|ASIA)[0-9A-Z]{16}[^A-Za-z0-9/+]{1,40}?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`, group: 1, plausible: mixed, keywords: []string{"akia", "asia"}},
		{kind: "google_api_key", src: boundary + `(AIza[0-9A-Za-z_\-]{30,})`, group: 2, keywords: []string{"aiza"}},
		{kind: "slack_token", src: boundary + `(xox[abposr]-[0-9A-Za-z\-]{10,})`, group: 2, keywords: []string{"xox"}},
		{kind: "bearer_token", src: `(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)`, group: 2, plausible: tokenLike, keywords: []string{"bearer"}},
		// A password in a URL or DSN: scheme://user:password@host.
		{kind: "url_password", src: `(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/?#@"'<>\\]+:([^\s/?#@"'<>\\]+)@`, group: 1, keywords: []string{"://"}},
	}
}

// rules are built on first use, and each rule's expression is compiled
// the first time text holds one of its keywords: compiling them all
// takes tens of milliseconds, which no twasm command pays unless it
// masks (--redact), and then only for the rules its text calls for.
var rules = sync.OnceValue(func() []*rule {
	rs := handRules()
	var generic []*rule
	for _, g := range gitleaksRules {
		ru := &rule{
			kind: strings.ReplaceAll(g.id, "-", "_"), src: g.re, group: g.group,
			entropy: g.entropy, keywords: g.keywords, allow: g.allow, gitleaks: true,
		}
		// The catch-all rules go last, so that a secret of a known
		// shape is counted as that shape.
		if strings.HasPrefix(g.id, "generic-") {
			generic = append(generic, ru)
			continue
		}
		rs = append(rs, ru)
	}
	return append(rs, generic...)
})

// globalAllow is gitleaks' global allowlist, compiled on first use.
var globalAllow = sync.OnceValue(func() [][]*regexp.Regexp { return compileAllow(gitleaksAllow) })

func compileAllow(as []glAllow) [][]*regexp.Regexp {
	out := make([][]*regexp.Regexp, len(as))
	for i, a := range as {
		for _, s := range a.res {
			out[i] = append(out[i], regexp.MustCompile(s))
		}
	}
	return out
}

func (ru *rule) compiled() *regexp.Regexp {
	ru.once.Do(func() {
		ru.re = regexp.MustCompile(ru.src)
		ru.allRe = compileAllow(ru.allow)
	})
	return ru.re
}

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

// mixed reports whether a 40-character secret mixes upper case, lower
// case and digits or symbols, as generated keys do and words do not.
func mixed(b []byte) bool {
	var up, low, other bool
	for _, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		default:
			other = true
		}
	}
	return up && low && other
}

// entropy is the Shannon entropy of b in bits per byte.
func entropy(b []byte) float64 {
	var n [256]int
	for _, c := range b {
		n[c]++
	}
	h := 0.0
	for _, k := range n {
		if k > 0 {
			p := float64(k) / float64(len(b))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// kwIndex finds the rules whose keywords a text holds in one pass: the
// keywords of three bytes or more by their first three, the shorter ones
// (few) one by one.
type kwIndex struct {
	by3   map[[3]byte][]kwRule
	short []kwRule
}

type kwRule struct {
	kw   string
	rule int
}

var keywords = sync.OnceValue(func() *kwIndex {
	x := &kwIndex{by3: map[[3]byte][]kwRule{}}
	for i, ru := range rules() {
		for _, k := range ru.keywords {
			if len(k) < 3 {
				x.short = append(x.short, kwRule{k, i})
				continue
			}
			p := [3]byte{k[0], k[1], k[2]}
			x.by3[p] = append(x.by3[p], kwRule{k, i})
		}
	}
	return x
})

// keywordsIn returns which rules have a keyword in text (case folded).
func keywordsIn(text []byte) []bool {
	x := keywords()
	active := make([]bool, len(rules()))
	lower := bytes.ToLower(text)
	for _, k := range x.short {
		if !active[k.rule] && bytes.Contains(lower, []byte(k.kw)) {
			active[k.rule] = true
		}
	}
	for i := 0; i+3 <= len(lower); i++ {
		for _, k := range x.by3[[3]byte{lower[i], lower[i+1], lower[i+2]}] {
			if !active[k.rule] && bytes.HasPrefix(lower[i:], []byte(k.kw)) {
				active[k.rule] = true
			}
		}
	}
	return active
}

// A hit is a secret found at text[start:end]; the rule's match, which
// may need text after the secret (the @ after a URL's password), ends at
// mend.
type hit struct {
	start, end int
	kind       string
	mend       int
}

// find returns the secrets in text, sorted and not overlapping (a hit
// that overlaps one of an earlier rule is merged into it).
func find(text []byte) []hit {
	if len(text) == 0 {
		return nil
	}
	active := keywordsIn(text)
	var hits []hit
	for i, ru := range rules() {
		if len(ru.keywords) > 0 && !active[i] {
			continue
		}
		re := ru.compiled()
		for _, m := range re.FindAllSubmatchIndex(text, -1) {
			s, e := m[0], m[1]
			if ru.group > 0 {
				if 2*ru.group+1 >= len(m) || m[2*ru.group] < 0 {
					continue
				}
				s, e = m[2*ru.group], m[2*ru.group+1]
			} else {
				for g := 1; 2*g+1 < len(m); g++ {
					if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
						s, e = m[2*g], m[2*g+1]
						break
					}
				}
			}
			if e <= s {
				continue
			}
			secret := text[s:e]
			if ru.plausible != nil && !ru.plausible(secret) {
				continue
			}
			if ru.entropy > 0 && entropy(secret) <= ru.entropy {
				continue
			}
			if ru.allowed(text, m[0], m[1], secret) {
				continue
			}
			hits = addHit(hits, hit{s, e, ru.kind, max(m[1], e)})
		}
	}
	return hits
}

// allowed reports whether an allowlist of the rule, or the global one,
// accepts a finding (gitleaks' semantics: regexes see the secret, the
// whole match or its line; stop words are looked for in the secret).
func (ru *rule) allowed(text []byte, ms, me int, secret []byte) bool {
	check := func(a glAllow, res []*regexp.Regexp) bool {
		target := secret
		switch a.target {
		case "match":
			target = text[ms:me]
		case "line":
			ls := bytes.LastIndexByte(text[:ms], '\n') + 1
			le := bytes.IndexByte(text[me:], '\n')
			if le < 0 {
				le = len(text)
			} else {
				le += me
			}
			target = text[ls:le]
		}
		reOK := slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.Match(target) })
		stopOK := false
		if len(a.stop) > 0 {
			ls := bytes.ToLower(secret)
			stopOK = slices.ContainsFunc(a.stop, func(w string) bool { return bytes.Contains(ls, []byte(w)) })
		}
		if a.and {
			return reOK && stopOK
		}
		return reOK || stopOK
	}
	for i, a := range ru.allow {
		if check(a, ru.allRe[i]) {
			return true
		}
	}
	if !ru.gitleaks {
		return false
	}
	for i, a := range gitleaksAllow {
		if check(a, globalAllow()[i]) {
			return true
		}
	}
	return false
}

// addHit adds h to hits, sorted by start, merging it into any hit it
// overlaps.
func addHit(hits []hit, h hit) []hit {
	i := 0
	for i < len(hits) && hits[i].end <= h.start {
		i++
	}
	j := i
	for j < len(hits) && hits[j].start < h.end {
		if hits[j].start < h.start {
			h.start = hits[j].start
		}
		h.end = max(h.end, hits[j].end)
		h.mend = max(h.mend, hits[j].mend)
		j++
	}
	if j > i {
		h.kind = hits[i].kind // the earlier rule's kind
	}
	return slices.Insert(slices.Delete(hits, i, j), i, h)
}
