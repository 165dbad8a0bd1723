package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// readmeSkips are the README's twasm command lines this test does not run,
// each with where what it shows is tested instead. Every other twasm line
// of every sh block is run as written, with RUN, the files it names and
// the agent CLIs it wraps provided by the test: a line added to the README
// is run, or listed here, or this test fails.
var readmeSkips = map[string]string{
	"twasm sync --watch --interval 1m": "runs until Ctrl-C: TestSyncWatch",
	"twasm serve":                      "runs until Ctrl-C: internal/cli/servecmd TestRunServe, internal/web TestServeInBrowser",
	"twasm serve --redact":             "runs until Ctrl-C: internal/web TestRedact",
	"twasm serve --addr 0.0.0.0:8421":  "runs until Ctrl-C: internal/cli/servecmd TestRunServe (any address), internal/web TestWhoMayAsk",
	"twasm serve --timezone UTC":       "runs until Ctrl-C: internal/cli/servecmd TestUsagePageDaysAsCLI (--timezone UTC on the page and in twasm usage)",
}

// TestReadmeExamples runs the README's examples as written.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	storage := t.TempDir()
	work := t.TempDir()
	fakeHome := t.TempDir()
	// The files and stores the examples name.
	files := map[string]string{
		"run.jsonl":  golden("codex", "exec_command.jsonl"),
		"plan.jsonl": example(),
		// A price table to install: the bundled one, as a file.
		"./prices.json": filepath.Join(root, "internal", "prices", "prices.json"),
	}
	proj := filepath.Join(fakeHome, ".claude", "projects", "-home-me-proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	session, err := os.ReadFile(golden("claude", "session_log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "5b1c2d3e-0000-4000-8000-000000000001.jsonl"), session, 0o600); err != nil {
		t.Fatal(err)
	}
	// RUN: a run with at least 42 events, so that "view RUN --seq 42" opens
	// at an event; recorded the way the README records one.
	big := clitest.RecordAny(t, storage, "codex", golden("codex", "rollout_output_forms.jsonl"))
	if b, _ := os.ReadFile(transcriptPath(storage, big)); strings.Count(string(b), "\n") < 42 {
		t.Fatalf("the run for RUN has fewer than 42 events")
	}
	collector := startCollector(t)
	agents := map[string]string{"claude": example(), "codex": files["run.jsonl"]}
	vars := map[string]string{}
	// Its own config directory: `twasm prices update` installs a table
	// there, which the other tests' config must not see.
	environ := []string{"HOME=" + fakeHome, "XDG_CONFIG_HOME=" + t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.http}

	ran := 0
	for _, line := range readmeCommands(string(readme)) {
		if why, ok := readmeSkips[line]; ok {
			t.Logf("not run: %s (%s)", line, why)
			continue
		}
		t.Run(line, func(t *testing.T) {
			assign := ""
			cmdline := line
			if m := regexp.MustCompile(`^(\w+)=\$\((.*)\)$`).FindStringSubmatch(line); m != nil {
				assign, cmdline = m[1], m[2]
			}
			words := shellWords(t, cmdline, vars)
			if len(words) == 0 || words[0] != "twasm" {
				t.Fatalf("not a twasm command: %q", line)
			}
			args := []string{"--storage", storage}
			extra := append([]string(nil), environ...)
			for i := 1; i < len(words); i++ {
				w := words[i]
				switch {
				case w == "--":
					// The wrapped agent CLI: the fake agent, replaying a
					// capture of that agent.
					input, ok := agents[words[i+1]]
					if !ok {
						t.Fatalf("no capture for agent %q", words[i+1])
					}
					args = append(args, "--", fake)
					extra = append(extra, fakeEnv(fakeInput, input)...)
					i = len(words)
					continue
				case w == "RUN":
					w = big
				case files[w] != "":
					w = files[w]
				case strings.HasPrefix(w, "~/"):
					matches, _ := filepath.Glob(filepath.Join(fakeHome, w[2:]))
					if len(matches) == 0 {
						t.Fatalf("%s matches nothing in the test's home", w)
					}
					args = append(args, matches...)
					continue
				}
				args = append(args, w)
			}
			p := start(t, nil, extra, args...)
			p.cmd.Dir = work
			r := p.wait(t, hangBound)
			ok := r.code == 0 || (words[1] == "search" && r.code == 1 && strings.Contains(r.errOut, "no match"))
			if !ok {
				t.Fatalf("%s\n%v", line, r)
			}
			if assign != "" {
				vars[assign] = strings.TrimSpace(r.out)
			}
		})
		ran++
	}
	if ran < 30 {
		t.Fatalf("ran %d README commands; the README's sh blocks were not read", ran)
	}
}

// readmeCommands returns the twasm command lines of the README's sh
// blocks: comments cut off, lines joined with ";" split, assignments
// from $(twasm ...) kept whole.
func readmeCommands(readme string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		}
		if !in {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, part := range strings.Split(line, ";") {
			part = strings.TrimSpace(part)
			if strings.HasPrefix(part, "twasm ") || regexp.MustCompile(`^\w+=\$\(twasm `).MatchString(part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// shellWords splits a command line as sh would for the README's examples:
// words separated by spaces, "double quotes" kept together, "$VAR" and
// $VAR replaced from vars.
func shellWords(t *testing.T, s string, vars map[string]string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted, inWord = !quoted, true
		case c == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '$' && i+1 < len(s) && (s[i+1] == '_' || s[i+1] >= 'A' && s[i+1] <= 'Z'):
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			v, ok := vars[s[i+1:j]]
			if !ok {
				t.Fatalf("%s: $%s is not set by an earlier example", s, s[i+1:j])
			}
			cur.WriteString(v)
			inWord = true
			i = j - 1
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unclosed quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
