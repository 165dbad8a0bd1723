package record_test

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/journal"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestRecordInputs: --input FILE, --input - and plain stdin; the prompt
// and system prompt as one message.user with two blocks told apart by
// origin; the --json summary.
func TestRecordInputs(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile(clitest.Example())
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"file", "dash", "stdin"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			storage := t.TempDir()
			args := []string{"--storage", storage, "record", "--provider", "claude", "--json",
				"--prompt", "Write hello.py and run it", "--system-prompt", "You are terse."}
			var stdin []byte
			switch mode {
			case "file":
				args = append(args, "--input", clitest.Example())
			case "dash":
				args, stdin = append(args, "--input", "-"), in
			default:
				stdin = in
			}
			r := clitest.RunInput(t, clitest.Plain(), stdin, args...)
			if r.Code != 0 {
				t.Fatal(r)
			}
			s := clitest.ParseRecordSummary(t, r.Out)
			if s.Status != "ok" || s.Provider != "claude" || s.Path != "agent" || s.Model == "" || s.Session == "" ||
				s.Usage == nil || s.CostUSD == nil || s.Tools["Write"] != 1 || s.Tools["Bash"] != 1 ||
				s.Raw == nil || s.Raw.Bytes != int64(len(in)) || s.Plugin == nil || s.Plugin.Name != "claude" || len(s.Plugin.SHA256) != 64 {
				t.Errorf("summary %+v", s)
			}
			if s.Transcript != clitest.TranscriptPath(storage, s.RunID) {
				t.Errorf("transcript %q for run %q", s.Transcript, s.RunID)
			}
			evs := clitest.ReadRun(t, clitest.TranscriptPath(storage, s.RunID))
			users := clitest.OfType(evs, transcript.MessageUser)
			if len(users) == 0 {
				t.Fatal("no message.user")
			}
			bl := users[0].Message().Blocks
			if len(bl) != 2 || bl[0].Origin != transcript.OriginSystemPrompt || bl[0].Text != "You are terse." ||
				bl[1].Origin != transcript.OriginPrompt || bl[1].Text != "Write hello.py and run it" ||
				bl[0].Fidelity != transcript.FidelityRouter || bl[1].Fidelity != transcript.FidelityRouter {
				t.Errorf("prompt blocks %+v", bl)
			}
			if users[0].Path != "agent" {
				t.Errorf("message.user at path %q", users[0].Path)
			}
		})
	}
}

// TestRecordRedact: a key in the agent's output is in neither the
// transcript nor the raw capture, and the summary counts it.
func TestRecordRedact(t *testing.T) {
	t.Parallel()
	var rnd [24]byte
	_, _ = rand.Read(rnd[:])
	// Assembled at run time: no secret-shaped literal in the repository.
	key := strings.Join([]string{"sk", "ant", "api03", hex.EncodeToString(rnd[:])}, "-")
	in, err := os.ReadFile(clitest.Example())
	if err != nil {
		t.Fatal(err)
	}
	in = bytes.Replace(in, []byte("Hello, world!"), []byte("Hello, world! key="+key), -1)
	if !bytes.Contains(in, []byte(key)) {
		t.Fatal("the key was not planted")
	}
	storage := t.TempDir()
	r := clitest.RunInput(t, clitest.Plain(), in, "--storage", storage, "record", "--provider", "claude", "--redact", "--json")
	if r.Code != 0 {
		t.Fatal(r)
	}
	s := clitest.ParseRecordSummary(t, r.Out)
	if s.Redacted["anthropic_api_key"] == 0 {
		t.Errorf("redacted %v", s.Redacted)
	}
	if strings.Contains(r.Out+r.ErrOut, key) {
		t.Error("the key is in twasm's output")
	}
	err = filepath.WalkDir(storage, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := rawfile.ReadFile(p) // a framed raw capture's raw bytes
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the key", p)
		}
		mark := "[REDACTED:anthropic_api_key]"
		switch filepath.Base(p) {
		case "index.db":
			// Terms only (a contentless FTS5 table), stored with the
			// prefix they share with the term before cut off, so the
			// file's bytes need not hold a whole term: the terms are
			// read through FTS5 itself.
			indexTermsRedacted(t, p, hex.EncodeToString(rnd[:]))
			return nil
		case journal.Name:
			mark = "" // run ids and their states: no text of a run
		}
		if !bytes.Contains(b, []byte(mark)) {
			t.Errorf("%s has no redaction mark %q", p, mark)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clitest.Validate(t, s.Transcript)
}

// TestRecordUsageErrors: an unknown provider lists the known ones; an
// unreadable input names its path; both exit 2 without writing a run.
func TestRecordUsageErrors(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	r := clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--provider", "nosuchprovider", "--input", clitest.Example())
	if r.Code != 2 || !strings.Contains(r.ErrOut, "nosuchprovider") || !strings.Contains(r.ErrOut, "claude") || !strings.Contains(r.ErrOut, "codex") {
		t.Errorf("unknown provider: %v", r)
	}
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--provider", "claude", "--input", missing)
	if r.Code != 2 || !strings.Contains(r.ErrOut, missing) {
		t.Errorf("missing input: %v", r)
	}
	unreadable := filepath.Join(t.TempDir(), "dir.jsonl")
	if err := os.Mkdir(unreadable, 0o700); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--provider", "claude", "--input", unreadable)
	if r.Code != 2 || !strings.Contains(r.ErrOut, unreadable) {
		t.Errorf("directory as input: %v", r)
	}
	if m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl")); len(m) > 0 {
		t.Errorf("runs written for usage errors: %v", m)
	}
	// An agent that cannot be started: the run records the failure.
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--provider", "claude", "--", filepath.Join(t.TempDir(), "no-such-agent"))
	if r.Code != 2 || !strings.Contains(r.ErrOut, "no-such-agent") {
		t.Errorf("agent that cannot start: %v", r)
	}
	clitest.Validate(t, clitest.TranscriptPath(storage, clitest.OnlyRun(t, storage)))
}

// indexTermsRedacted checks the search index at path (a copy of it: the
// vocabulary table is created in the copy) through FTS5's own vocabulary:
// the redaction mark's words are terms, and no term holds the key's
// random part.
func indexTermsRedacted(t *testing.T, path, secret string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+cp)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')`); err != nil {
		t.Fatal(err)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(`SELECT count(*) FROM vocab`) == 0 {
		t.Fatalf("%s holds no term", path)
	}
	for _, w := range []string{"redacted", "anthropic"} { // the tokenizer splits at "_"
		if count(`SELECT count(*) FROM vocab WHERE term = ?`, w) == 0 {
			t.Errorf("%s has no term %q of the redaction mark", path, w)
		}
	}
	if n := count(`SELECT count(*) FROM vocab WHERE instr(term, ?) > 0`, secret[:16]); n != 0 {
		t.Errorf("%s holds the key's random part in %d term(s)", path, n)
	}
}
