package e2e

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/twasm/twasm/internal/journal"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/transcript"
)

// onlyRun returns the id of the only run in storage.
func onlyRun(t *testing.T, storage string) string {
	t.Helper()
	var ids []string
	m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
	for _, p := range m {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
	if len(ids) != 1 {
		t.Fatalf("%d runs in %s, want 1", len(ids), storage)
	}
	return ids[0]
}

// TestRecordLive wraps the fake agent: events reach the transcript while
// it runs (it waits, mid-stream, until the test has seen a tool.call in
// the file), stdout is passed through, stderr is kept raw and never
// parsed, and the agent's exit code is twasm's.
func TestRecordLive(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	const marker = "fake-agent-diagnostic {\"type\":\"assistant\",\"message\":{\"id\":\"from-stderr\"}}"
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeDelay, "10ms", fakeGateAfter, "5", fakeGate, gate,
		fakeStderr, marker, fakeExit, "3"),
		"--storage", storage, "record", "--provider", "claude", "--live", "--", fake)

	var file string
	waitFor(t, "a tool.call in the transcript while the agent runs", hangBound, func() bool {
		m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
		if len(m) != 1 {
			return false
		}
		file = m[0]
		b, _ := os.ReadFile(file)
		return bytes.Contains(b, []byte(`"type":"tool.call"`))
	})
	b, _ := os.ReadFile(file)
	if bytes.Contains(b, []byte(`"run.completed"`)) || bytes.Contains(b, []byte(`"step.completed"`)) {
		t.Fatalf("the step ended before the agent did:\n%s", b)
	}
	// The run id is said while the agent runs, not only at the end.
	id := strings.TrimSuffix(filepath.Base(file), ".jsonl")
	if !strings.Contains(p.errOut.String(), "recording run "+id) {
		t.Errorf("--live did not say the run id while the agent runs: %s", p.errOut.String())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 3 {
		t.Fatalf("exit %d, want the agent's 3\n%v", r.code, r)
	}
	in, _ := os.ReadFile(example())
	if r.out != string(in) {
		t.Errorf("stdout is not the agent's stdout:\n%s", r.out)
	}
	if !strings.Contains(r.errOut, marker) {
		t.Errorf("the agent's stderr is not shown: %s", r.errOut)
	}
	if !strings.Contains(r.errOut, "tool.call") {
		t.Errorf("--live printed no event lines: %s", r.errOut)
	}

	evs := readRun(t, file)
	checkSeq(t, evs)
	_, res := agentResult(t, evs)
	if res.ExitCode == nil || *res.ExitCode != 3 {
		t.Errorf("exit_code %v, want 3", res.ExitCode)
	}
	if res.Status != transcript.StatusOK {
		t.Errorf("agent status %q: the result line says success", res.Status)
	}
	if res.Raw == nil || res.Raw.Stderr == "" {
		t.Fatalf("no stderr capture in %+v", res.Raw)
	}
	stderr, err := os.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Stderr)))
	if err != nil || !strings.Contains(string(stderr), marker) {
		t.Errorf("stderr capture %q, %v", stderr, err)
	}
	raw, err := rawfile.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Path)))
	if err != nil || !bytes.Equal(raw, in) {
		t.Errorf("raw capture differs from the agent's stdout (%v)", err)
	}
	if bytes.Contains(b, []byte("from-stderr")) {
		t.Error("stderr was parsed as provider output")
	}
	if got := len(ofType(evs, transcript.ToolCall)); got != 2 {
		t.Errorf("%d tool calls, want 2", got)
	}
	if st := runEnd(t, evs).Status; st != transcript.StatusOK {
		t.Errorf("run status %q", st)
	}
	validate(t, file)
}

// TestRecordAgentKilled: the agent dies of SIGKILL mid-stream; twasm still
// closes the step and the run, and the file validates.
func TestRecordAgentKilled(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeHangAfter, "3", fakeReady, ready),
		"--storage", storage, "record", "--provider", "claude", "-q", "--", fake)
	var pid int
	waitFor(t, "the fake agent to be ready", hangBound, func() bool {
		b, err := os.ReadFile(ready)
		pid, _ = strconv.Atoi(string(b))
		return err == nil && pid > 0
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want 137\n%v", r.code, r)
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	evs := readRun(t, file)
	step, res := agentResult(t, evs)
	if step.Status == transcript.StatusOK || (res.Status != transcript.StatusIncomplete && res.Status != transcript.StatusError) {
		t.Errorf("step status %q, agent status %q after a kill", step.Status, res.Status)
	}
	if res.ExitCode == nil || *res.ExitCode != 137 {
		t.Errorf("exit_code %v", res.ExitCode)
	}
	if st := runEnd(t, evs).Status; st == transcript.StatusOK {
		t.Errorf("run status %q after the agent was killed", st)
	}
	validate(t, file)
}

// TestRecordInterrupt: SIGINT to twasm goes to the agent, which ends its
// own way; the run is cancelled and twasm exits 130.
func TestRecordInterrupt(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeHangAfter, "4", fakeReady, ready, fakeTrapInt, "1"),
		"--storage", storage, "record", "--provider", "claude", "--", fake)
	waitFor(t, "the fake agent to be ready", hangBound, func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%v", r.code, r)
	}
	if !strings.Contains(r.out, "fake_interrupted") {
		t.Errorf("the agent's last line (after SIGINT) was not passed through: %q", r.out)
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	evs := readRun(t, file)
	if st := runEnd(t, evs).Status; st != transcript.StatusCancelled {
		t.Errorf("run status %q, want cancelled", st)
	}
	step, res := agentResult(t, evs)
	if step.Status != transcript.StatusCancelled {
		t.Errorf("step status %q, want cancelled", step.Status)
	}
	if res.ExitCode == nil || *res.ExitCode != 130 {
		t.Errorf("exit_code %v", res.ExitCode)
	}
	raw, _ := rawfile.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Path)))
	if !bytes.Contains(raw, []byte("fake_interrupted")) {
		t.Errorf("the line written after SIGINT is not in the raw capture")
	}
	validate(t, file)
}

// recordJSON is the --json summary of record.
type recordJSON struct {
	RunID      string             `json:"run_id"`
	Transcript string             `json:"transcript"`
	Path       string             `json:"path"`
	Status     string             `json:"status"`
	Provider   string             `json:"provider"`
	Session    string             `json:"session_id"`
	Model      string             `json:"model"`
	Usage      *transcript.Usage  `json:"usage"`
	CostUSD    *float64           `json:"cost_usd"`
	Tools      map[string]int     `json:"tools"`
	Redacted   map[string]int     `json:"redacted"`
	Raw        *transcript.RawRef `json:"raw"`
	Plugin     *struct {
		Name, SHA256 string
	} `json:"plugin"`
}

func parseSummary(t *testing.T, r result) recordJSON {
	t.Helper()
	var s recordJSON
	if err := json.Unmarshal([]byte(r.out), &s); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.out)
	}
	return s
}

// TestRecordInputs: --input FILE, --input - and plain stdin; the prompt
// and system prompt as one message.user with two blocks told apart by
// origin; the --json summary.
func TestRecordInputs(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile(example())
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
				args = append(args, "--input", example())
			case "dash":
				args, stdin = append(args, "--input", "-"), in
			default:
				stdin = in
			}
			r := start(t, stdin, nil, args...).wait(t, hangBound)
			if r.code != 0 {
				t.Fatal(r)
			}
			s := parseSummary(t, r)
			if s.Status != "ok" || s.Provider != "claude" || s.Path != "agent" || s.Model == "" || s.Session == "" ||
				s.Usage == nil || s.CostUSD == nil || s.Tools["Write"] != 1 || s.Tools["Bash"] != 1 ||
				s.Raw == nil || s.Raw.Bytes != int64(len(in)) || s.Plugin == nil || s.Plugin.Name != "claude" || len(s.Plugin.SHA256) != 64 {
				t.Errorf("summary %+v", s)
			}
			if s.Transcript != transcriptPath(storage, s.RunID) {
				t.Errorf("transcript %q for run %q", s.Transcript, s.RunID)
			}
			evs := readRun(t, transcriptPath(storage, s.RunID))
			users := ofType(evs, transcript.MessageUser)
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
	in, err := os.ReadFile(example())
	if err != nil {
		t.Fatal(err)
	}
	in = bytes.Replace(in, []byte("Hello, world!"), []byte("Hello, world! key="+key), -1)
	if !bytes.Contains(in, []byte(key)) {
		t.Fatal("the key was not planted")
	}
	storage := t.TempDir()
	r := start(t, in, nil, "--storage", storage, "record", "--provider", "claude", "--redact", "--json").wait(t, hangBound)
	if r.code != 0 {
		t.Fatal(r)
	}
	s := parseSummary(t, r)
	if s.Redacted["anthropic_api_key"] == 0 {
		t.Errorf("redacted %v", s.Redacted)
	}
	if strings.Contains(r.out+r.errOut, key) {
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
	validate(t, s.Transcript)
}

// TestRecordUsageErrors: an unknown provider lists the known ones; an
// unreadable input names its path; both exit 2 without writing a run.
func TestRecordUsageErrors(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	r := twasm(t, "--storage", storage, "record", "--provider", "nosuchprovider", "--input", example())
	if r.code != 2 || !strings.Contains(r.errOut, "nosuchprovider") || !strings.Contains(r.errOut, "claude") || !strings.Contains(r.errOut, "codex") {
		t.Errorf("unknown provider: %v", r)
	}
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	r = twasm(t, "--storage", storage, "record", "--provider", "claude", "--input", missing)
	if r.code != 2 || !strings.Contains(r.errOut, missing) {
		t.Errorf("missing input: %v", r)
	}
	unreadable := filepath.Join(t.TempDir(), "dir.jsonl")
	if err := os.Mkdir(unreadable, 0o700); err != nil {
		t.Fatal(err)
	}
	r = twasm(t, "--storage", storage, "record", "--provider", "claude", "--input", unreadable)
	if r.code != 2 || !strings.Contains(r.errOut, unreadable) {
		t.Errorf("directory as input: %v", r)
	}
	if m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl")); len(m) > 0 {
		t.Errorf("runs written for usage errors: %v", m)
	}
	// An agent that cannot be started: the run records the failure.
	r = twasm(t, "--storage", storage, "record", "--provider", "claude", "--", filepath.Join(t.TempDir(), "no-such-agent"))
	if r.code != 2 || !strings.Contains(r.errOut, "no-such-agent") {
		t.Errorf("agent that cannot start: %v", r)
	}
	validate(t, transcriptPath(storage, onlyRun(t, storage)))
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
