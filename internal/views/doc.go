package views

import (
	"fmt"
	"io"
	"strings"
)

// docWriter is the small set of constructs the transcript view needs,
// written either as GitHub-flavoured markdown or as plain text, so that the
// two formats share one walk of the transcript.
type docWriter interface {
	heading(level int, s string)
	para(s string)
	kv(pairs [][2]string)
	fold(summary, body string, code bool)
	code(lang, body string)
	item(s string)
	// inline quotes a short literal (a name, a command) for the format.
	inline(s string) string
	strong(s string) string
	err() error
}

type baseWriter struct {
	w io.Writer
	e error
}

func (b *baseWriter) printf(format string, args ...any) {
	if b.e == nil {
		_, b.e = fmt.Fprintf(b.w, format, args...)
	}
}

func (b *baseWriter) err() error { return b.e }

// mdWriter writes markdown. Untrusted text goes in fences or inline code
// spans sized to outlast any backtick run inside, so transcript content
// cannot break out of them; plain paragraphs (assistant text, the prompt)
// are markdown already and are kept as written.
type mdWriter struct{ baseWriter }

func (m *mdWriter) heading(level int, s string) {
	m.printf("%s %s\n\n", strings.Repeat("#", min(max(level, 1), 6)), oneLine(s))
}

func (m *mdWriter) para(s string) {
	if s == "" {
		m.printf("\n")
		return
	}
	m.printf("%s\n\n", strings.TrimRight(sanitize(s), "\n"))
}

func (m *mdWriter) strong(s string) string { return "**" + s + "**" }

func (m *mdWriter) kv(pairs [][2]string) {
	m.printf("| | |\n|---|---|\n")
	for _, p := range pairs {
		m.printf("| %s | %s |\n", p[0], strings.ReplaceAll(oneLine(p[1]), "|", `\|`))
	}
	m.printf("\n")
}

func (m *mdWriter) fold(summary, body string, code bool) {
	m.printf("<details><summary>%s</summary>\n\n", htmlEscape(oneLine(summary)))
	if code {
		m.code("text", body)
	} else {
		m.para(body)
	}
	m.printf("</details>\n\n")
}

func (m *mdWriter) code(lang, body string) {
	f := fence(body)
	m.printf("%s%s\n%s\n%s\n\n", f, lang, strings.TrimRight(sanitize(body), "\n"), f)
}

func (m *mdWriter) item(s string) { m.printf("- %s\n", s) }

func (m *mdWriter) inline(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	n := longestRun(s, '`') + 1
	tick := strings.Repeat("`", n)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return tick + " " + s + " " + tick
	}
	return tick + s + tick
}

// fence returns a code fence longer than any backtick run in body.
func fence(body string) string { return strings.Repeat("`", max(3, longestRun(body, '`')+1)) }

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// textWriter writes plain text for a terminal or a pager: underlined
// headings, indented blocks, no markup.
type textWriter struct{ baseWriter }

func (t *textWriter) heading(level int, s string) {
	s = oneLine(s)
	ch := "-"
	if level <= 1 {
		ch = "="
	}
	t.printf("%s\n%s\n\n", s, strings.Repeat(ch, min(len([]rune(s)), 100)))
}

func (t *textWriter) para(s string) {
	if s == "" {
		t.printf("\n")
		return
	}
	t.printf("%s\n\n", strings.TrimRight(sanitize(s), "\n"))
}

func (t *textWriter) strong(s string) string { return s }

func (t *textWriter) kv(pairs [][2]string) {
	w := 0
	for _, p := range pairs {
		w = max(w, len(p[0]))
	}
	for _, p := range pairs {
		t.printf("%-*s  %s\n", w+1, p[0]+":", oneLine(p[1]))
	}
	t.printf("\n")
}

func (t *textWriter) fold(summary, body string, _ bool) {
	t.printf("[%s]\n", oneLine(summary))
	t.code("", body)
}

func (t *textWriter) code(_ string, body string) {
	for _, l := range strings.Split(strings.TrimRight(sanitize(body), "\n"), "\n") {
		t.printf("    %s\n", l)
	}
	t.printf("\n")
}

func (t *textWriter) item(s string) { t.printf("  * %s\n", s) }

func (t *textWriter) inline(s string) string { return oneLine(s) }
