package recorder

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/fanout"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/transcript"
)

func openTemp(t *testing.T, opts ...Options) (*Recorder, Store, string) {
	t.Helper()
	st := NewStore(t.TempDir())
	id := runid.New()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Logger == nil {
		o.Logger = quietLog()
	}
	r, err := st.Open(context.Background(), id, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, st, id
}

func TestConcurrentGoroutines(t *testing.T) {
	const goroutines, perG = 16, 1000
	r, _, id := openTemp(t, Options{Fsync: FsyncNever})
	sub := r.fan.Subscribe(fanout.SubscribeOptions{BufferSize: goroutines * perG})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				if err := r.Record(context.Background(), assistantEvent(text200)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	evs := checkFile(t, r.Path(), id)
	if len(evs) != goroutines*perG || r.lastSeq.Load() != goroutines*perG {
		t.Fatalf("%d lines, last seq %d", len(evs), r.lastSeq.Load())
	}
	// The subscriber (big enough never to drop) sees exactly file order.
	var want uint64 = 1
	for ev := range sub.C() {
		if ev.Seq != want {
			t.Fatalf("subscriber got seq %d, want %d", ev.Seq, want)
		}
		want++
	}
	if want != goroutines*perG+1 {
		t.Fatalf("subscriber got %d events", want-1)
	}
}

// TestSlowSubscriber drains one event per ten recorded, without timing:
// the producer hands the subscriber one token per ten events.
func TestSlowSubscriber(t *testing.T) {
	const n = 10000
	r, _, id := openTemp(t, Options{Fsync: FsyncNever})
	sub := r.fan.Subscribe(fanout.SubscribeOptions{Name: "slow"})
	tokens := make(chan struct{}, n/10)
	got := make(chan []uint64)
	go func() {
		var seqs []uint64
		for range tokens {
			ev, ok := <-sub.C()
			if !ok {
				break
			}
			seqs = append(seqs, ev.Seq)
		}
		for ev := range sub.C() { // what is left in the buffer after Close
			seqs = append(seqs, ev.Seq)
		}
		got <- seqs
	}()
	for i := 1; i <= n; i++ {
		if err := r.Record(context.Background(), assistantEvent(text200)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			tokens <- struct{}{}
		}
	}
	close(tokens)
	st := r.fan.Stats()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	seqs := <-got
	if len(checkFile(t, r.Path(), id)) != n {
		t.Fatal("file does not hold every event")
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("subscriber out of order at %d: %d after %d", i, seqs[i], seqs[i-1])
		}
	}
	ps := st.PerSubscriber[0]
	if st.Published != n || ps.Delivered+ps.Dropped != n || st.Dropped != ps.Dropped || ps.Name != "slow" {
		t.Fatalf("stats %+v", st)
	}
	if uint64(len(seqs)) != ps.Delivered || ps.Dropped == 0 {
		t.Fatalf("received %d, stats %+v", len(seqs), ps)
	}
	t.Logf("slow subscriber: received %d, dropped %d", len(seqs), ps.Dropped)
}

func TestReopenContinuesSeq(t *testing.T) {
	st := NewStore(t.TempDir())
	id := runid.New()
	ctx := context.Background()
	for round := 1; round <= 3; round++ {
		r, err := st.Open(ctx, id, Options{Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		if want := uint64((round - 1) * 5); r.lastSeq.Load() != want {
			t.Fatalf("round %d: reopened at seq %d, want %d", round, r.lastSeq.Load(), want)
		}
		for i := 0; i < 5; i++ {
			ev := assistantEvent("x")
			ev.Seq = 999 // ignored
			if err := r.Record(ctx, ev); err != nil {
				t.Fatal(err)
			}
			if ev.Seq != uint64((round-1)*5+i+1) {
				t.Fatalf("assigned seq %d", ev.Seq)
			}
		}
		if len(r.repairsMade()) != 0 {
			t.Fatalf("unexpected repairs %v", r.repairsMade())
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	path, _ := st.TranscriptPath(id)
	checkValidate(t, path, id)
	if len(checkFile(t, path, id)) != 15 {
		t.Fatal("want 15 lines")
	}
}

func TestFileAndDirModes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "storage")
	st := NewStore(root)
	id := runid.New()
	r, err := st.Open(context.Background(), id, Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Record(context.Background(), assistantEvent("hi")); err != nil {
		t.Fatal(err)
	}
	// A torn tail makes the sidecar appear, to check its mode too.
	appendRaw(t, r.Path(), `{"seq":2,"ru`)
	if err := r.Record(context.Background(), assistantEvent("again")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{root, 0o700 | os.ModeDir},
		{filepath.Join(root, "transcripts"), 0o700 | os.ModeDir},
		{r.Path(), 0o600},
		{r.Path() + tornSuffix, 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
}

// appendRaw appends s as another cooperating writer would: under the
// file lock (waiting for a recorder's lease to end).
func appendRaw(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

type sidecarRecord struct {
	RunID  string `json:"run_id"`
	Offset int64  `json:"offset"`
	Bytes  int    `json:"bytes"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
	Data   string `json:"data_base64"`
}

func readSidecar(t testing.TB, path string) []sidecarRecord {
	t.Helper()
	data, err := os.ReadFile(path + tornSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []sidecarRecord
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
		var rec sidecarRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("sidecar line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

func TestTornTailRepairedAtOpen(t *testing.T) {
	id := runid.New()
	good := func(seq int) string {
		ev := assistantEvent("hello")
		ev.RunID, ev.Seq, ev.Timestamp = id, uint64(seq), fixedClock()()
		b, err := transcript.AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	tests := []struct {
		name     string
		content  string
		wantSeq  uint64
		wantTorn string
		wantLine int
	}{
		{"empty file", "", 0, "", 0},
		{"clean", good(1) + good(2), 2, "", 0},
		{"torn after lines", good(1) + good(2) + `{"seq":3,"run_id":"` + id[:5], 2, `{"seq":3,"run_id":"` + id[:5], 3},
		{"only a torn line", `{"seq":1,"ru`, 0, `{"seq":1,"ru`, 1},
		{"binary garbage tail", good(1) + "\x00\xff\xfe garbage", 1, "\x00\xff\xfe garbage", 2},
		{"foreign complete line kept", good(1) + "not json\n", 1, "", 0},
		{"non-canonical order", `{"run_id":"` + id + `","seq":7,"type":"x"}` + "\r\n", 7, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t", id+".jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(context.Background(), path, id, Options{Logger: quietLog()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.lastSeq.Load() != tc.wantSeq {
				t.Fatalf("last seq %d, want %d", r.lastSeq.Load(), tc.wantSeq)
			}
			reps := r.repairsMade()
			side := readSidecar(t, path)
			if tc.wantTorn == "" {
				if len(reps) != 0 || side != nil {
					t.Fatalf("unexpected repair %v %v", reps, side)
				}
			} else {
				wantOff := int64(len(tc.content) - len(tc.wantTorn))
				if len(reps) != 1 || reps[0].Offset != wantOff || reps[0].Bytes != len(tc.wantTorn) || reps[0].Line != tc.wantLine || !strings.Contains(reps[0].Reason, "at open") {
					t.Fatalf("repairs %+v", reps)
				}
				data, _ := base64.StdEncoding.DecodeString(side[0].Data)
				if len(side) != 1 || string(data) != tc.wantTorn || side[0].Offset != wantOff || side[0].RunID != id || side[0].Line != tc.wantLine {
					t.Fatalf("sidecar %+v (data %q)", side, data)
				}
			}
			if err := r.Record(context.Background(), assistantEvent("next")); err != nil {
				t.Fatal(err)
			}
			if r.lastSeq.Load() != tc.wantSeq+1 {
				t.Fatalf("continued at %d", r.lastSeq.Load())
			}
			after, _ := os.ReadFile(path)
			kept := tc.content[:len(tc.content)-len(tc.wantTorn)]
			if !strings.HasPrefix(string(after), kept) {
				t.Fatal("a complete line was lost")
			}
		})
	}
}

// TestTornTailLeftByAnotherWriter: a torn line appended behind the
// recorder's back (another process killed mid-write) is moved out before
// the next append, which then continues the series.
func TestTornTailLeftByAnotherWriter(t *testing.T) {
	r, _, id := openTemp(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := r.Record(ctx, assistantEvent("a")); err != nil {
			t.Fatal(err)
		}
	}
	appendRaw(t, r.Path(), `{"seq":4,"run_id":"`+id+`","type":"message.assis`)
	// A second, sidecar-torn repair must still produce parseable lines.
	if err := os.WriteFile(r.Path()+tornSuffix, []byte(`{"partial`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Record(ctx, assistantEvent("b")); err != nil {
		t.Fatal(err)
	}
	reps := r.repairsMade()
	if len(reps) != 1 || reps[0].Line != 4 || !strings.Contains(reps[0].Reason, "before an append") {
		t.Fatalf("repairs %+v", reps)
	}
	data, _ := os.ReadFile(r.Path() + tornSuffix)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `{"partial` || !json.Valid([]byte(lines[1])) {
		t.Fatalf("sidecar %q", data)
	}
	if evs := checkFile(t, r.Path(), id); len(evs) != 4 {
		t.Fatalf("%d lines", len(evs))
	}
}

// TestAnotherWriterAppended: a second recorder on the same file (its own
// descriptor and lock, as another process would have) interleaves with the
// first; both keep one series.
func TestAnotherWriterAppended(t *testing.T) {
	r1, _, id := openTemp(t)
	r2, err := Open(context.Background(), r1.Path(), id, Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		rec := r1
		if i%3 == 0 {
			rec = r2
		}
		ev := assistantEvent("x")
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d got seq %d", i, ev.Seq)
		}
	}
	checkFile(t, r1.Path(), id)
}

func TestRecordErrors(t *testing.T) {
	r, _, id := openTemp(t)
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	other := runid.New()
	tests := []struct {
		name string
		ctx  context.Context
		ev   *transcript.Event
		want []error
	}{
		{"nil event", ctx, nil, []error{transcript.ErrInvalidEvent}},
		{"unknown type", ctx, &transcript.Event{Type: "message.bogus", Payload: &transcript.MessagePayload{}}, []error{transcript.ErrInvalidEvent}},
		{"wrong payload", ctx, &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.MessagePayload{}}, []error{transcript.ErrInvalidEvent}},
		{"other run", ctx, func() *transcript.Event { e := assistantEvent("x"); e.RunID = other; return e }(), []error{ErrRunMismatch, transcript.ErrInvalidEvent}},
		{"cancelled", cancelled, assistantEvent("x"), []error{context.Canceled}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := r.Record(tc.ctx, tc.ev)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Fatalf("error %v, want %v", err, w)
				}
			}
		})
	}
	// No failed Record consumed a seq.
	ev := assistantEvent("ok")
	if err := r.Record(ctx, ev); err != nil || ev.Seq != 1 || ev.RunID != id || ev.Timestamp.IsZero() {
		t.Fatalf("after errors: %v, %+v", err, ev)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	if err := r.Record(ctx, assistantEvent("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("record after close: %v", err)
	}
	if evs, _ := r.Subscribe(); evs != nil {
		if _, ok := <-evs; ok {
			t.Fatal("subscription after close is open")
		}
	}
}

type upperMasker struct {
	mu    sync.Mutex
	calls int
	runID string
}

func (m *upperMasker) Mask(ev *transcript.Event) {
	m.mu.Lock()
	m.calls++
	m.mu.Unlock()
	if p := ev.Message(); p != nil {
		for i := range p.Blocks {
			p.Blocks[i].Text = strings.ReplaceAll(p.Blocks[i].Text, "secret", "[MASKED]")
		}
	}
	if m.runID != "" {
		ev.RunID = m.runID
	}
}

func TestMaskHook(t *testing.T) {
	m := &upperMasker{}
	r, _, id := openTemp(t, Options{Mask: m.Mask, Clock: fixedClock()})
	sub, stop := r.Subscribe()
	defer stop()
	if err := r.Record(context.Background(), assistantEvent("my secret is here")); err != nil {
		t.Fatal(err)
	}
	got := <-sub
	if got.Message().Blocks[0].Text != "my [MASKED] is here" || !got.Timestamp.Equal(fixedClock()()) {
		t.Fatalf("published %+v", got)
	}
	evs := checkFile(t, r.Path(), id)
	if evs[0].Message().Blocks[0].Text != "my [MASKED] is here" {
		t.Fatalf("written %q", evs[0].Message().Blocks[0].Text)
	}
	data, _ := os.ReadFile(r.Path())
	if bytes.Contains(data, []byte("secret")) {
		t.Fatal("secret reached the file")
	}
	if !bytes.Contains(data, []byte(`"timestamp":"2026-01-02T03:04:05.006Z"`)) {
		t.Fatalf("clock not used: %s", data)
	}
	m.runID = runid.New() // a masker must not change the run id
	if err := r.Record(context.Background(), assistantEvent("x")); !errors.Is(err, ErrRunMismatch) {
		t.Fatalf("masker changed run id: %v", err)
	}
}

func TestRunIDValidation(t *testing.T) {
	valid := runid.New()
	tests := []struct {
		id string
		ok bool
	}{
		{valid, true},
		{"8f14e45f-ceea-467a-9575-3d8b4ee3a2b1", true},
		{"", false},
		{"../../etc/passwd", false},
		{"../" + valid[3:], false},
		{valid[:35] + "/", false},
		{"8f14e45f-ceea-467a-9575-3d8b4ee3a2b1/../x", false},
		{"8F14E45F-CEEA-467A-9575-3D8B4EE3A2B1", false}, // upper case alias
		{"8f14e45f-ceea-167a-9575-3d8b4ee3a2b1", false}, // version 1
		{"8f14e45f-ceea-467a-c575-3d8b4ee3a2b1", false}, // wrong variant
		{"8f14e45fceea467a95753d8b4ee3a2b1", false},     // no dashes
		{"8f14e45f-ceea-467a-9575-3d8b4ee3a2b\x00", false},
		{"{8f14e45f-ceea-467a-9575-3d8b4ee3a2b}", false},
		{"8f14e45f_ceea-467a-9575-3d8b4ee3a2b1", false},
		{strings.Repeat("a", 4096), false},
	}
	st := NewStore(t.TempDir())
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.id[:min(len(tc.id), 40)], "/", "_"), func(t *testing.T) {
			err := runid.Valid(tc.id)
			if (err == nil) != tc.ok {
				t.Fatalf("runid.Valid(%q) = %v", tc.id, err)
			}
			_, perr := st.TranscriptPath(tc.id)
			_, oerr := st.Open(context.Background(), tc.id, Options{Logger: quietLog()})
			_, oerr2 := Open(context.Background(), filepath.Join(st.Root, "x.jsonl"), tc.id)
			for _, e := range []error{err, perr, oerr, oerr2} {
				if !tc.ok && !errors.Is(e, ErrInvalidRunID) {
					t.Fatalf("want ErrInvalidRunID, got %v", e)
				}
			}
			if !tc.ok && len(err.Error()) > 200 {
				t.Fatalf("error message not bounded: %d bytes", len(err.Error()))
			}
		})
	}
	// Nothing was created outside the store.
	entries, _ := os.ReadDir(st.Root)
	for _, e := range entries {
		if e.Name() != "transcripts" && e.Name() != "raw" && e.Name() != "x.jsonl" {
			t.Fatalf("unexpected entry %q", e.Name())
		}
	}
}

func TestStorePaths(t *testing.T) {
	st := NewStore("/data")
	id := "8f14e45f-ceea-467a-9575-3d8b4ee3a2b1"
	p, err := st.TranscriptPath(id)
	if err != nil || p != "/data/transcripts/"+id+".jsonl" {
		t.Fatalf("%q %v", p, err)
	}
	if a, b := runid.New(), runid.New(); a == b || runid.Valid(a) != nil {
		t.Fatalf("NewRunID: %q %q", a, b)
	}
}

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	id := runid.New()
	ctx := context.Background()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	otherRun := filepath.Join(dir, "other.jsonl")
	ev := assistantEvent("x")
	ev.RunID, ev.Seq = runid.New(), 1
	line, _ := transcript.AppendEvent(nil, ev)
	os.WriteFile(otherRun, append(line, '\n'), 0o600)
	fileAsDir := filepath.Join(target, "sub", "x.jsonl")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		path string
		want error
	}{
		{"symlink", ctx, link, syscall.ELOOP},
		{"fifo", ctx, fifo, nil}, // ENXIO (no reader) or ErrNotRegular
		{"other run", ctx, otherRun, ErrRunMismatch},
		{"parent is a file", ctx, fileAsDir, syscall.ENOTDIR},
		{"cancelled", cancelled, filepath.Join(dir, "c.jsonl"), context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(tc.ctx, tc.path, id, Options{Logger: quietLog()})
			if err == nil {
				r.Close()
				t.Fatal("opened")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestLockWaitHonoursContext: with the file lock held elsewhere, Record
// waits and gives up when its context ends (the error is what is checked,
// not how long it took).
func TestLockWaitHonoursContext(t *testing.T) {
	r, _, _ := openTemp(t)
	f, err := os.OpenFile(r.Path(), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := r.Record(ctx, assistantEvent("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	// Once released, a blocking (non-cancellable) Record gets through and
	// the failed one consumed no seq.
	done := make(chan error)
	go func() {
		ev := assistantEvent("y")
		err := r.Record(context.Background(), ev)
		if err == nil && ev.Seq != 1 {
			err = errors.New("wrong seq")
		}
		done <- err
	}()
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// And a cancellable one that finds the lock busy, then free.
	unix.Flock(int(f.Fd()), unix.LOCK_EX)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { done <- r.Record(ctx2, assistantEvent("z")) }()
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestFailedWriteRollsBack injects a half write followed by ENOSPC (a full
// disk): the partial line is truncated away, no seq is consumed; when the
// undo fails too, the next append moves the partial line out.
func TestFailedWriteRollsBack(t *testing.T) {
	r, _, id := openTemp(t)
	ctx := context.Background()
	if err := r.Record(ctx, assistantEvent("first")); err != nil {
		t.Fatal(err)
	}
	halfWrite := func(fd int, b []byte) (int, error) {
		n, err := unix.Write(fd, b[:len(b)/2])
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	}
	tests := []struct {
		name        string
		write       func(int, []byte) (int, error)
		truncate    func(int, int64) error
		want        error
		wantRepairs int
	}{
		{"enospc after half", halfWrite, nil, syscall.ENOSPC, 0},
		{"undo fails too", halfWrite, func(int, int64) error { return syscall.EIO }, syscall.ENOSPC, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := r.lastSeq.Load()
			r.writeHook, r.truncateHook = tc.write, tc.truncate
			err := r.Record(ctx, assistantEvent("doomed"))
			r.writeHook, r.truncateHook = nil, nil
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v", err)
			}
			if r.lastSeq.Load() != before {
				t.Fatal("seq consumed by a failed write")
			}
			ev := assistantEvent("after")
			if err := r.Record(ctx, ev); err != nil || ev.Seq != before+1 {
				t.Fatalf("next record: %v seq %d", err, ev.Seq)
			}
			if got := len(r.repairsMade()); got != tc.wantRepairs {
				t.Fatalf("repairs %d, want %d", got, tc.wantRepairs)
			}
			r.repairs = nil
		})
	}
	// A short write without an error (the kernel took part of the line)
	// is completed under the same lock: the line is whole, one seq.
	calls := 0
	r.writeHook = func(fd int, b []byte) (int, error) {
		calls++
		if calls == 1 {
			return unix.Write(fd, b[:3])
		}
		return unix.Write(fd, b)
	}
	ev := assistantEvent("short")
	before := r.lastSeq.Load()
	err := r.Record(ctx, ev)
	r.writeHook = nil
	if err != nil || ev.Seq != before+1 || calls != 2 {
		t.Fatalf("short write: %v, seq %d, %d writes", err, ev.Seq, calls)
	}
	// A write that ends in ENOSPC after a short one names ENOSPC, not
	// "short write".
	calls = 0
	r.writeHook = func(fd int, b []byte) (int, error) {
		calls++
		if calls == 1 {
			return unix.Write(fd, b[:3])
		}
		return 0, syscall.ENOSPC
	}
	err = r.Record(ctx, assistantEvent("full"))
	r.writeHook = nil
	if !errors.Is(err, syscall.ENOSPC) || r.lastSeq.Load() != before+1 {
		t.Fatalf("full disk after a short write: %v", err)
	}
	checkFile(t, r.Path(), id)
}

// TestRepairFailureKeepsBytes: when the sidecar cannot be written, the
// append fails and the torn bytes stay where they are.
func TestRepairFailureKeepsBytes(t *testing.T) {
	r, _, _ := openTemp(t)
	ctx := context.Background()
	if err := r.Record(ctx, assistantEvent("a")); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, r.Path(), "torn")
	if err := os.Mkdir(r.Path()+tornSuffix, 0o700); err != nil { // sidecar path unusable
		t.Fatal(err)
	}
	if err := r.Record(ctx, assistantEvent("b")); err == nil {
		t.Fatal("append over an unrepairable tail succeeded")
	}
	data, _ := os.ReadFile(r.Path())
	if !bytes.HasSuffix(data, []byte("\ntorn")) {
		t.Fatalf("torn bytes lost: %q", data)
	}
	os.Remove(r.Path() + tornSuffix)
	if err := r.Record(ctx, assistantEvent("c")); err != nil || len(r.repairsMade()) != 1 {
		t.Fatalf("%v %v", err, r.repairsMade())
	}
}

// TestFsyncPolicies records a step under each policy and checks what is
// left unsynced after each event (what Close still has to sync: nothing
// after a boundary under on-boundary, nothing ever under always).
func TestFsyncPolicies(t *testing.T) {
	unsynced := map[FsyncPolicy][]bool{
		FsyncNever:      {true, true, true},
		FsyncOnBoundary: {true, true, false},
		FsyncAlways:     {false, false, false},
	}
	for name, p := range map[string]FsyncPolicy{"never": FsyncNever, "on-boundary": FsyncOnBoundary, "always": FsyncAlways} {
		t.Run(name, func(t *testing.T) {
			r, _, id := openTemp(t, Options{Fsync: p, SubscriberBuffer: 4})
			ctx := context.Background()
			evs := []*transcript.Event{
				{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.StepKind("agent")}},
				assistantEvent("x"),
				{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.StepKind("agent"), Status: "ok"}},
			}
			for i, ev := range evs {
				if err := r.Record(ctx, ev); err != nil {
					t.Fatal(err)
				}
				if got := r.unsynced; got != unsynced[p][i] {
					t.Fatalf("after %s: unsynced %v, want %v", ev.Type, got, unsynced[p][i])
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			checkFile(t, r.Path(), id)
		})
	}
}

func TestAccessors(t *testing.T) {
	r, st, id := openTemp(t, Options{Clock: nil})
	p, _ := st.TranscriptPath(id)
	if r.runID != id || r.Path() != p {
		t.Fatal("accessors")
	}
	evs, stop := r.Subscribe()
	if err := r.Record(context.Background(), assistantEvent("x")); err != nil {
		t.Fatal(err)
	}
	if ev := <-evs; ev.Seq != 1 {
		t.Fatalf("live event %+v", ev)
	}
	if st := r.fan.Stats(); st.Subscribers != 1 || st.Published != 1 {
		t.Fatalf("%+v", st)
	}
	stop()
	if _, ok := <-evs; ok {
		t.Fatal("the feed is open after stop")
	}
}

// Fsync reports the policy the recorder was opened with (the default is
// FsyncOnBoundary), which package capture follows for the raw captures.
func TestFsyncReportsThePolicy(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want FsyncPolicy
	}{
		{Options{}, FsyncOnBoundary},
		{Options{Fsync: FsyncNever}, FsyncNever},
		{Options{Fsync: FsyncAlways}, FsyncAlways},
	} {
		r, st, _ := openTemp(t, tt.opts)
		if got := r.Fsync(); got != tt.want {
			t.Errorf("Fsync() = %v, want %v", got, tt.want)
		}
		// Open made transcripts/ itself, and its entry in the root.
		if fi, err := os.Stat(filepath.Join(st.Root, "transcripts")); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("transcripts dir: %v, %v", fi, err)
		}
	}
}

// A RecordFunc whose decide panics ends its critical section: the file
// lock it took is released (not kept until Close), so another writer of
// the run appends, and so does the recorder itself afterwards.
func TestRecordFuncPanicReleasesTheLock(t *testing.T) {
	r, st, id := openTemp(t, Options{Fsync: FsyncNever})
	// Without a lease the section takes the lock itself, as where the
	// system refuses OFD locks: no idle timer would release it later.
	r.mu.Lock()
	r.release()
	r.noLease = true
	r.mu.Unlock()
	func() {
		defer func() {
			if p := recover(); p != "decide failed" {
				t.Fatalf("recovered %v, want the decide's panic", p)
			}
		}()
		_ = r.RecordFunc(context.Background(), func(runstate.State) ([]*transcript.Event, error) {
			panic("decide failed")
		})
	}()
	other, err := st.Open(context.Background(), id, Options{Fsync: FsyncNever, Logger: quietLog(), LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Record(context.Background(), assistantEvent(text200)); err != nil {
		t.Fatalf("another writer: %v (the panicking section's lock must not be held)", err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	ev := assistantEvent(text200)
	if err := r.Record(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 2 {
		t.Fatalf("seq %d after the other writer's line, want 2", ev.Seq)
	}
}
