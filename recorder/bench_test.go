package recorder

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twasm/twasm/fanout"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/transcript"
)

// The benchmarks compare the recorder with AWF's baseline (awf-baseline.md):
// json.Marshal of an equivalent event plus one f.Write per line on an
// O_APPEND file, for the message.assistant event with one 200-byte text
// block. Each reports events/s; `make bench` turns them into ratios.

// baselineBlock, baselinePayload and baselineEvent mirror AWF's
// ExchangeEvent, with its nested custom MarshalJSON (the cost the AWF
// figures are dominated by).
type baselineBlock struct {
	Type     string `json:"type"`
	Fidelity string `json:"fidelity"`
	Text     string `json:"text,omitempty"`
}

func (b baselineBlock) MarshalJSON() ([]byte, error) {
	type plain baselineBlock
	return json.Marshal(plain(b))
}

type baselinePayload struct {
	Role   string          `json:"role"`
	Blocks []baselineBlock `json:"blocks"`
}

type baselineEvent struct {
	Seq         uint64    `json:"seq"`
	RunID       string    `json:"run_id"`
	ParentRunID string    `json:"parent_run_id,omitempty"`
	ChildRunID  string    `json:"child_run_id,omitempty"`
	Type        string    `json:"type"`
	Path        string    `json:"path"`
	Iteration   int       `json:"iteration"`
	Timestamp   time.Time `json:"timestamp"`
	Payload     any       `json:"payload"`
}

func (e baselineEvent) MarshalJSON() ([]byte, error) {
	type plain baselineEvent
	return json.Marshal(plain(e))
}

func reportRate(b *testing.B, events int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(events)/s, "events/s")
	}
}

func BenchmarkBaselineMarshalWrite(b *testing.B) {
	path := filepath.Join(b.TempDir(), "baseline.jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	id := runid.New()
	var seq uint64
	n := 0
	for b.Loop() {
		seq++
		ev := baselineEvent{Seq: seq, RunID: id, Type: "message.assistant", Path: "review", Timestamp: time.Now(),
			Payload: baselinePayload{Role: "assistant", Blocks: []baselineBlock{{Type: "text", Fidelity: "agent_emitted", Text: text200}}}}
		line, err := json.Marshal(ev)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportRate(b, n)
}

func benchRecorder(b *testing.B, writers int, slow bool) {
	st := NewStore(b.TempDir())
	r, err := st.Open(context.Background(), runid.New(), Options{Logger: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	if slow {
		// One subscriber draining slowly: it sleeps ~10µs per event (which
		// the timer rounds up to far more), so it keeps its buffer full and
		// the recorder keeps dropping for it.
		sub := r.fan.Subscribe(fanout.SubscribeOptions{Name: "slow"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range sub.C() {
				time.Sleep(10 * time.Microsecond)
			}
		}()
	}
	ctx := context.Background()
	ev := assistantEvent(text200)
	b.ReportAllocs()
	n := 0
	if writers == 1 {
		for b.Loop() {
			e := *ev
			if err := r.Record(ctx, &e); err != nil {
				b.Fatal(err)
			}
			n++
		}
	} else {
		b.SetParallelism((writers + 1) / 2) // GOMAXPROCS(2) x 2 = 4 goroutines on the reference VM
		var mu sync.Mutex
		b.RunParallel(func(pb *testing.PB) {
			local := 0
			for pb.Next() {
				e := *ev
				if err := r.Record(ctx, &e); err != nil {
					b.Error(err)
					return
				}
				local++
			}
			mu.Lock()
			n += local
			mu.Unlock()
		})
	}
	reportRate(b, n)
	b.StopTimer()
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	wg.Wait()
	if st := r.fan.Stats(); slow && st.Dropped > 0 {
		b.ReportMetric(float64(st.Dropped)/float64(st.Published), "drop-ratio")
	}
}

func BenchmarkRecorder(b *testing.B)               { benchRecorder(b, 1, false) }
func BenchmarkRecorderSlowSubscriber(b *testing.B) { benchRecorder(b, 1, true) }
func BenchmarkRecorder4Writers(b *testing.B)       { benchRecorder(b, 4, false) }

// BenchmarkEncodeOnly is the recorder's encoding cost alone (no I/O), for
// comparison with json.Marshal in the baseline.
func BenchmarkEncodeOnly(b *testing.B) {
	ev := assistantEvent(text200)
	ev.RunID, ev.Timestamp = runid.New(), time.Now()
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		var err error
		if buf, err = transcript.AppendEvent(buf[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecorderBatch records the same event in batches of 16 through
// RecordBatch (one lock, one write per batch), on one goroutine: the path
// of an agent step's normalized records. One op is one event.
func BenchmarkRecorderBatch(b *testing.B) {
	const size = 16
	st := NewStore(b.TempDir())
	r, err := st.Open(context.Background(), runid.New(), Options{Logger: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ev := assistantEvent(text200)
	evs := make([]transcript.Event, size)
	ptrs := make([]*transcript.Event, size)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%size == 0 && n > 0 {
			if err := r.RecordBatch(ctx, ptrs); err != nil {
				b.Fatal(err)
			}
		}
		evs[n%size] = *ev
		ptrs[n%size] = &evs[n%size]
		n++
	}
	if k := n % size; k != 0 || n > 0 {
		if k == 0 {
			k = size
		}
		if err := r.RecordBatch(ctx, ptrs[:k]); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, n)
	b.StopTimer()
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	if r.lastSeq.Load() != uint64(n) {
		b.Fatalf("last seq %d, want %d", r.lastSeq.Load(), n)
	}
}
