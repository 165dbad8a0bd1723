// Package secrettest holds fake secrets of every shape `--redact` masks,
// for the tests of internal/redact and the end-to-end tests that check
// no stored or exported byte keeps one. They are assembled at run time,
// so that no secret scanner flags the source.
package secrettest

import (
	"regexp"
	"strings"
)

// A Secret is one fake secret: Value must be masked wherever it is
// stored, in whatever field and however it is split. Before and After,
// when set, are the text around Value that makes it a secret (the name
// it is assigned to, the rest of a URL).
type Secret struct {
	Name, Before, Value, After string
}

// Whole is the secret in its context, as it would appear in text.
func (s Secret) Whole() string { return s.Before + s.Value + s.After }

const alnum = "aB3dE6gH9k"

// Secrets returns one fake secret of each shape.
func Secrets() []Secret {
	a40 := strings.Repeat(alnum, 4)
	return []Secret{
		{Name: "anthropic", Value: "sk-" + "ant-api03-" + a40 + "_-xyz"},
		{Name: "openai", Value: "sk-" + "proj-" + a40 + "-Q_z"},
		{Name: "github token", Value: "gh" + "p_" + a40[:36]},
		{Name: "github pat", Value: "github" + "_pat_" + "11ABCDEFG0" + a40 + "_" + a40},
		{Name: "aws access key id", Value: "AK" + "IA" + "QWERTYUIOPASDFGH"},
		{Name: "aws secret access key", Before: "aws_secret_access_key = ", Value: "Xk9pL2mN8qR4sT6vW1y" + "Z3aB5cD7eF0gH2iJ4kL6m"},
		{Name: "google api key", Value: "AI" + "za" + "SyA1234567890abcdefghijklmnopqrstu"},
		{Name: "slack token", Value: "xo" + "xb-" + "1234567890-0987654321-" + a40[:24]},
		{Name: "jwt", Value: "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
		{Name: "bearer token", Before: "Authorization: Bearer ", Value: "tok" + "_9f8e7d6c5b4a3210fedcba98"},
		{Name: "postgres dsn password", Before: "postgres://admin:", Value: "S3cr3tP4" + "ssw0rdX", After: "@db:5432/app"},
		{Name: "url password", Before: "https://deploy:", Value: "Zq81vR" + "2mTx7Lp", After: "@git.example.com/x.git"},
		{Name: "password assignment", Before: `password = "`, Value: "q8Zr2Lx9Vt" + "4Nw7Kp3Hs6", After: `"`},
		{Name: "stripe", Value: "sk_" + "live_51H8abcdefGHIJKLMNOPQRSTuvwx"},
		{Name: "gitlab pat", Value: "gl" + "pat-" + "abcdefghij1234567890"},
		{Name: "private key", Value: "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + a40 + a40 + "\n" + a40 + "+/=\n-----END RSA " + "PRIVATE KEY-----"},
	}
}

// Probes returns what must not survive of s: every 10 bytes of its
// value (of a private key, of its body), so that no part of a secret cut
// in pieces is left either.
func (s Secret) Probes() []string {
	var out []string
	for _, l := range strings.Split(s.Value, "\n") {
		if strings.HasPrefix(l, "-----") {
			continue
		}
		if len(l) <= 10 {
			out = append(out, l)
			continue
		}
		for i := 0; i+10 <= len(l); i++ {
			// A window of lower-case letters and underscores is a fixed
			// prefix ("github_pat"), not key material: it is also the
			// name of a kind the counts say.
			if w := l[i : i+10]; strings.Trim(w, "abcdefghijklmnopqrstuvwxyz_") != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

var mark = regexp.MustCompile(`\[REDACTED:[a-z0-9_]+\]`)

// Leak returns a probe of s that text holds, once the marks of what was
// masked are taken out of it (a mark names a kind, which a secret may
// start with), or "".
func (s Secret) Leak(text string) string {
	text = mark.ReplaceAllString(text, "[]")
	for _, p := range s.Probes() {
		if strings.Contains(text, p) {
			return p
		}
	}
	return ""
}
