package clitest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/transcript"

	_ "modernc.org/sqlite"
)

// Root is the module root, relative to the directory a test runs in
// (its package's): the nearest directory up with a go.mod, as
// internal/cli/<cmd> gives ../../.. and internal/cli ../.. .
var Root = moduleRoot()

func moduleRoot() string {
	rel := "."
	for range 8 {
		if _, err := os.Stat(filepath.Join(rel, "go.mod")); err == nil {
			return rel
		}
		rel = filepath.Join(rel, "..")
	}
	return filepath.Join("..", "..", "..")
}

// HangBound is how long a test waits for an event (a browser's page, a
// process to end) before it fails: it only bounds a hang, far above what
// the event takes however busy the machine.
const HangBound = 5 * time.Minute

// Result is what one twasm command line ended with.
type Result struct {
	Code        int
	Out, ErrOut string
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Out, r.ErrOut)
}

// Run runs twasm with args (without the program name) in this process,
// with env as its whole environment, and returns its exit code and
// output, as cli.Main gives them to the binary's main.
func Run(t testing.TB, env map[string]string, args ...string) Result {
	t.Helper()
	return RunInput(t, env, nil, args...)
}

// RunInput is Run with stdin as the command line's standard input (not
// a terminal).
func RunInput(t testing.TB, env map[string]string, stdin []byte, args ...string) Result {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.Write(stdin)
	code := cli.Main(context.Background(), args, ios, func(k string) string { return env[k] })
	return Result{Code: code, Out: out.String(), ErrOut: errOut.String()}
}

// Home is a user's home directory as agents leave it, and a storage
// root of its own.
type Home struct {
	t testing.TB
	// Dir is $HOME; Stor the storage root every command is given.
	Dir, Stor string
	// Env is the environment of every command: $HOME and
	// $XDG_CONFIG_HOME under Dir, NO_COLOR, nothing of the user's.
	Env map[string]string
}

// NewHome returns an empty home and storage root.
func NewHome(t testing.TB) *Home {
	h := &Home{t: t, Dir: t.TempDir(), Stor: t.TempDir()}
	h.Env = map[string]string{"HOME": h.Dir, "XDG_CONFIG_HOME": filepath.Join(h.Dir, ".config"), "NO_COLOR": "1"}
	return h
}

// Put writes b at rel under the home, last modified age ago, and returns
// its path.
func (h *Home) Put(rel string, b []byte, age time.Duration) string {
	h.t.Helper()
	p := filepath.Join(h.Dir, rel)
	Put(h.t, p, b, age)
	return p
}

// Put writes b at path, making its directory, last modified age ago.
func Put(t testing.TB, path string, b []byte, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// Run runs twasm --storage Stor args with the home's environment.
func (h *Home) Run(args ...string) Result {
	h.t.Helper()
	return Run(h.t, h.Env, append([]string{"--storage", h.Stor}, args...)...)
}

// OK is Run, failing the test unless twasm exits 0.
func (h *Home) OK(args ...string) Result {
	h.t.Helper()
	return RunOK(h.t, h.Env, append([]string{"--storage", h.Stor}, args...)...)
}

// TranscriptPath is the file of run id in storage.
func TranscriptPath(storage, id string) string {
	return filepath.Join(storage, "transcripts", id+".jsonl")
}

// ReadFile returns p's content, failing the test if it cannot be read.
func ReadFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Outcomes parses sync's stdout (action, run id, provider, path per
// line): the run ids of each action.
func Outcomes(out string) map[string][]string {
	m := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "\t")
		if len(f) >= 4 {
			m[f[0]] = append(m[f[0]], f[1])
		}
	}
	return m
}

// Validate runs twasm validate --json on the files and fails the test
// unless they are valid.
func Validate(t testing.TB, files ...string) {
	t.Helper()
	r := Run(t, Plain(), append([]string{"validate", "--json"}, files...)...)
	if r.Code != 0 {
		t.Fatalf("validate %v: %v", files, r)
	}
	if !cmdtest.IsJSONLines(r.Out) {
		t.Fatalf("validate --json: not JSON Lines: %s", r.Out)
	}
}

// HashTree returns, for every regular file under dir, its SHA-256, mtime
// and mode: two calls compare equal when nothing under dir changed.
func HashTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		info, err := d.Info()
		if err != nil {
			return err
		}
		sums[p] = hex.EncodeToString(s[:]) + " " + info.ModTime().String() + " " + info.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// Unchanged runs cmd and fails the test for every file under dir that
// cmd added, removed or changed (its bytes, modification time or mode):
// twasm reads an agent's store, it never writes there.
func Unchanged(t testing.TB, dir, what string, cmd func()) {
	t.Helper()
	before := HashTree(t, dir)
	cmd()
	after := HashTree(t, dir)
	if len(after) != len(before) {
		t.Fatalf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed %s: %s -> %s", what, p, s, after[p])
		}
	}
}

// AgentDB is an agent's SQLite database as the agent writes it (WAL
// mode, one connection), written by the test as the agent.
type AgentDB struct {
	t    testing.TB
	Path string
	DB   *sql.DB
}

// OpenAgentDB opens (creating it and its directory) the database at path.
func OpenAgentDB(t testing.TB, path string) *AgentDB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &AgentDB{t: t, Path: path, DB: db}
}

// Schema creates the tables of plugin's agent, from the schema its tests
// keep (plugins/<plugin>/testdata/schema.sql).
func (a *AgentDB) Schema(plugin string) {
	a.t.Helper()
	a.Exec(string(ReadFile(a.t, filepath.Join(Root, "plugins", plugin, "testdata", "schema.sql"))))
}

// Exec runs q, failing the test if it fails.
func (a *AgentDB) Exec(q string, args ...any) {
	a.t.Helper()
	if _, err := a.DB.Exec(q, args...); err != nil {
		a.t.Fatalf("%s: %v", q, err)
	}
}

// RunOK is Run, failing the test unless twasm exits 0.
func RunOK(t testing.TB, env map[string]string, args ...string) Result {
	t.Helper()
	r := Run(t, env, args...)
	if r.Code != 0 {
		t.Fatalf("twasm %v: %v", args, r)
	}
	return r
}

// OnlyRun returns the id of the only run in storage, failing the test
// unless there is exactly one.
func OnlyRun(t testing.TB, storage string) string {
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

// Golden returns the path of a golden input of provider.
func Golden(provider, name string) string {
	return filepath.Join(Root, "testdata", "golden", provider, name)
}

// ReadRun decodes every line of a run file; a line that does not decode
// (but for an event type this build does not know) fails the test.
func ReadRun(t testing.TB, path string) []*transcript.Event {
	t.Helper()
	return readRun(t, path, false)
}

// readRun is ReadRun; torn allows a torn last line (transcript.ErrTruncated).
func readRun(t testing.TB, path string, torn bool) []*transcript.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, problems, err := transcript.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range problems {
		if torn && i == len(problems)-1 && errors.Is(p, transcript.ErrTruncated) {
			continue
		}
		if !errors.As(p, new(*transcript.UnknownTypeError)) {
			t.Fatalf("%s: %v", path, p)
		}
	}
	return evs
}

// Example is the bundled Claude Code example stream.
func Example() string { return filepath.Join(Root, "examples", "claude", "stream-json.jsonl") }

// Record records input with provider's plugin into storage (record
// --json --input, then extra) and returns the run id its summary gives.
func Record(t testing.TB, storage, provider, input string, extra ...string) string {
	t.Helper()
	r := RunOK(t, Plain(), append([]string{"--storage", storage, "record", "--provider", provider, "--json", "--input", input}, extra...)...)
	var s struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.Out), &s); err != nil || s.RunID == "" {
		t.Fatalf("record --json: %v %s", err, r.Out)
	}
	return s.RunID
}

// RecordAny records file with provider's plugin into storage (record
// --json --input, then extra), whatever its exit code, and returns the
// run id its summary, the last line of its output, gives.
func RecordAny(t testing.TB, storage, provider, file string, extra ...string) string {
	t.Helper()
	r := Run(t, Plain(), append([]string{"--storage", storage, "record", "--json", "--provider", provider, "--input", file}, extra...)...)
	var s struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(LastLine(r.Out)), &s); err != nil || s.RunID == "" {
		t.Fatalf("record %s: %v\n%v", file, err, r)
	}
	return s.RunID
}

// LastLine is the last line of s, without its line end.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// UsageTotal reads the output of `twasm usage --json`: the output tokens
// it counts in all, and the superseded runs it left out.
func UsageTotal(t testing.TB, out string) (output int64, superseded int) {
	t.Helper()
	var rep struct {
		Total struct {
			Usage struct {
				Output int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"total"`
		Superseded int `json:"superseded_runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, out)
	}
	return rep.Total.Usage.Output, rep.Superseded
}

// RecordSummary is the --json summary of record.
type RecordSummary struct {
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

// ParseRecordSummary decodes record --json's output; output that does
// not decode fails the test.
func ParseRecordSummary(t testing.TB, out string) RecordSummary {
	t.Helper()
	var s RecordSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	return s
}

// OfType returns the events of type typ.
func OfType(evs []*transcript.Event, typ transcript.EventType) []*transcript.Event {
	var out []*transcript.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// CheckSeq fails the test unless seq runs 1..N in file order.
func CheckSeq(t testing.TB, evs []*transcript.Event) {
	t.Helper()
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("line %d has seq %d", i+1, ev.Seq)
		}
	}
}

// AgentResult returns the step and the result of the only agent
// step.completed of a run.
func AgentResult(t testing.TB, evs []*transcript.Event) (*transcript.StepPayload, *transcript.AgentResult) {
	t.Helper()
	var done []*transcript.Event
	for _, ev := range OfType(evs, transcript.StepCompleted) {
		if ev.Step().Kind == transcript.KindAgent {
			done = append(done, ev)
		}
	}
	if len(done) != 1 {
		t.Fatalf("%d agent step.completed events, want 1", len(done))
	}
	p := done[0].Step()
	res, err := p.AgentResult()
	if err != nil {
		t.Fatal(err)
	}
	return p, res
}

// BuildPlugin builds the test plugin of package dir (wasmbuild.ForTest)
// into a new plugin directory as name.wasm and returns its path.
func BuildPlugin(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".wasm")
	if err := os.WriteFile(path, wasmbuild.ForTest(t, dir), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// RunEnd returns the payload of run.completed, which must be the last line.
func RunEnd(t testing.TB, evs []*transcript.Event) *transcript.StepPayload {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != transcript.RunCompleted {
		t.Fatalf("the run does not end with run.completed")
	}
	return evs[len(evs)-1].Step()
}

// MessagesOf returns the message and tool events of a run, as comparable
// strings: type, path, iteration and payload, without seq, run ids and
// timestamps.
func MessagesOf(t testing.TB, evs []*transcript.Event) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.Message() == nil && ev.Tool() == nil {
			continue
		}
		e := *ev
		e.Seq, e.RunID, e.ParentRunID, e.Timestamp = 1, "00000000-0000-4000-8000-000000000000", "", time.Unix(0, 0)
		b, err := transcript.AppendEvent(nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// FreePort is a TCP port of 127.0.0.1 that nothing listened on a moment
// ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Plain is the whole environment of a command line that needs nothing
// of a user's: NO_COLOR, as the end-to-end suite gives every process.
func Plain() map[string]string { return map[string]string{"NO_COLOR": "1"} }

// DoctorStore is one store of `twasm doctor --json`.
type DoctorStore struct {
	Name, Provider, Plugin, Kind, Dir string
	Found                             bool
	Sessions, Archived                int
	NotArchived                       int `json:"not_archived"`
}

// DoctorStores decodes the output of `twasm doctor --json` into its
// stores by name; output that does not decode fails the test.
func DoctorStores(t testing.TB, out string) map[string]DoctorStore {
	t.Helper()
	var doc struct{ Stores []DoctorStore }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	m := map[string]DoctorStore{}
	for _, s := range doc.Stores {
		m[s.Name] = s
	}
	return m
}
