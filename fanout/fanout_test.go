package fanout

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/testing/syncbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quiet is the options of a fan-out of the given buffer size (0: the
// default) whose drop warnings are discarded.
func quiet(size int) Options {
	return Options{BufferSize: size, Logger: slog.New(slog.DiscardHandler)}
}

func TestPublishOrderAndDelivery(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		subOpts SubscribeOptions
		publish int
		wantGot int
	}{
		{"fits default buffer", quiet(0), SubscribeOptions{}, 200, 200},
		{"overflows small buffer", quiet(8), SubscribeOptions{}, 20, 8},
		{"per-subscription buffer wins", quiet(8), SubscribeOptions{BufferSize: 16}, 20, 16},
		{"non-positive sizes keep defaults", quiet(0), SubscribeOptions{BufferSize: -1}, 300, DefaultBufferSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := New[int](tc.opts)
			s := f.Subscribe(tc.subOpts)
			for i := 1; i <= tc.publish; i++ {
				f.Publish(i)
			}
			f.Close()
			var got []int
			for v := range s.C() {
				got = append(got, v)
			}
			if len(got) != tc.wantGot {
				t.Fatalf("got %d values, want %d", len(got), tc.wantGot)
			}
			for i, v := range got {
				if v != i+1 { // drop-newest keeps the oldest values
					t.Fatalf("value %d = %d, want %d", i, v, i+1)
				}
			}
			st := f.Stats()
			if st.Published != uint64(tc.publish) || st.Dropped != uint64(tc.publish-tc.wantGot) {
				t.Fatalf("stats %+v", st)
			}
			if s.Dropped() != uint64(tc.publish-tc.wantGot) {
				t.Fatalf("sub dropped %d", s.Dropped())
			}
		})
	}
}

func TestStats(t *testing.T) {
	f := New[string](quiet(2))
	a := f.Subscribe(SubscribeOptions{Name: "a"})
	b := f.Subscribe(SubscribeOptions{Name: "b", BufferSize: 4})
	for _, v := range []string{"1", "2", "3"} {
		f.Publish(v)
	}
	st := f.Stats()
	if st.Subscribers != 2 || st.Published != 3 || st.Dropped != 1 {
		t.Fatalf("stats %+v", st)
	}
	want := []SubStats{
		{ID: a.ID(), Name: "a", Delivered: 2, Dropped: 1, Buffered: 2},
		{ID: b.ID(), Name: "b", Delivered: 3, Dropped: 0, Buffered: 3},
	}
	for i, w := range want {
		if st.PerSubscriber[i] != w {
			t.Fatalf("sub %d: %+v, want %+v", i, st.PerSubscriber[i], w)
		}
	}
	a.Close()
	st = f.Stats()
	if st.Subscribers != 1 || st.PerSubscriber[0].Name != "b" || st.Dropped != 1 {
		t.Fatalf("after close: %+v", st)
	}
	f.Close()
	if st := f.Stats(); st.Subscribers != 0 || st.PerSubscriber != nil {
		t.Fatalf("after fanout close: %+v", st)
	}
}

func TestCloseIdempotentAndSubscribeAfterClose(t *testing.T) {
	f := New[int](quiet(0))
	s := f.Subscribe()
	s.Close()
	s.Close()
	if _, ok := <-s.C(); ok {
		t.Fatal("channel open after Close")
	}
	f.Publish(1) // no subscriber: counted, nothing delivered
	f.Close()
	f.Close()
	f.Publish(2) // after close: no-op
	late := f.Subscribe(SubscribeOptions{Name: "late"})
	if _, ok := <-late.C(); ok {
		t.Fatal("late subscription not closed")
	}
	late.Close()
	if got := f.Stats().Published; got != 1 {
		t.Fatalf("published %d, want 1", got)
	}
}

func TestBufferedValuesSurviveClose(t *testing.T) {
	f := New[int](quiet(0))
	s := f.Subscribe()
	f.Publish(1)
	f.Publish(2)
	s.Close()
	var got []int
	for v := range s.C() {
		got = append(got, v)
	}
	if len(got) != 2 {
		t.Fatalf("got %v", got)
	}
}

func TestDropWarningRateLimited(t *testing.T) {
	var logs syncbuf.Buffer
	f := New[int](Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BufferSize: 1})
	clock := time.Unix(1000, 0)
	f.now = func() time.Time { return clock }
	s := f.Subscribe(SubscribeOptions{Name: "slow"})
	defer f.Close()
	steps := []struct {
		advance   time.Duration
		publishes int
		wantLines int
	}{
		{0, 1, 0},                       // fills the buffer, no drop
		{0, 10, 1},                      // first drop warns once
		{500 * time.Millisecond, 10, 1}, // within the second: silent
		{600 * time.Millisecond, 1, 2},  // a second later: warns again
		{2 * time.Second, 0, 2},         // no drops: no warning
	}
	for i, st := range steps {
		clock = clock.Add(st.advance)
		for j := 0; j < st.publishes; j++ {
			f.Publish(j)
		}
		if n := strings.Count(logs.String(), "dropping values"); n != st.wantLines {
			t.Fatalf("step %d: %d warnings, want %d\n%s", i, n, st.wantLines, logs.String())
		}
	}
	out := logs.String()
	for _, want := range []string{"name=slow", "dropped_since_last_warning=1 ", "dropped_since_last_warning=20", "dropped_total=21"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
	if s.Dropped() != 21 {
		t.Fatalf("dropped %d", s.Dropped())
	}
}

// TestDropPathReadsClockSparingly pins the cost bound of a drop: after a
// warning a subscriber's drops read the clock clockStride-1 times, then once
// every clockStride drops; the next warning still comes at most clockStride
// drops after the interval has passed.
func TestDropPathReadsClockSparingly(t *testing.T) {
	var logs syncbuf.Buffer
	f := New[int](Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BufferSize: 1})
	clock, reads := time.Unix(1000, 0), 0
	f.now = func() time.Time { reads++; return clock }
	s := f.Subscribe()
	defer f.Close()
	f.Publish(0) // fills the buffer
	const drops = 10000
	for i := 0; i < drops; i++ {
		f.Publish(i)
	}
	if max := clockStride + drops/clockStride; reads > max {
		t.Fatalf("%d drops read the clock %d times, want at most %d", drops, reads, max)
	}
	if n := strings.Count(logs.String(), "dropping values"); n != 1 {
		t.Fatalf("%d warnings within the interval, want 1\n%s", n, logs.String())
	}
	clock = clock.Add(warnInterval)
	late := 0
	for strings.Count(logs.String(), "dropping values") == 1 {
		if late == clockStride {
			t.Fatalf("no warning %d drops after the interval passed", late)
		}
		f.Publish(late)
		late++
	}
	want := "dropped_since_last_warning=" + strconv.Itoa(drops-1+late) + " "
	if out := logs.String(); !strings.Contains(out, want) {
		t.Fatalf("log lacks %q:\n%s", want, out)
	}
	if s.Dropped() != uint64(drops+late) {
		t.Fatalf("dropped %d, want %d", s.Dropped(), drops+late)
	}
}

// TestCloseReportsUnreportedDrops: drops made since the last warning are
// logged when the subscription closes, either way it closes, and once.
func TestCloseReportsUnreportedDrops(t *testing.T) {
	tests := []struct {
		name  string
		drops int // after the buffer is full
		close func(*Fanout[int], *Subscription[int])
		want  string // "" means no closing report
	}{
		{"subscription close", 6, func(_ *Fanout[int], s *Subscription[int]) { s.Close() }, "dropped_since_last_warning=5 dropped_total=6"},
		{"fan-out close", 3, func(f *Fanout[int], _ *Subscription[int]) { f.Close() }, "dropped_since_last_warning=2 dropped_total=3"},
		{"all reported", 1, func(_ *Fanout[int], s *Subscription[int]) { s.Close() }, ""},
		{"no drops", 0, func(_ *Fanout[int], s *Subscription[int]) { s.Close() }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			f := New[int](Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BufferSize: 1})
			s := f.Subscribe(SubscribeOptions{Name: "slow"})
			for i := 0; i <= tc.drops; i++ {
				f.Publish(i) // the first fills the buffer; the first drop warns
			}
			tc.close(f, s)
			s.Close()
			f.Close()
			out := logs.String()
			n := strings.Count(out, "subscriber closed")
			switch {
			case tc.want == "" && n != 0:
				t.Fatalf("closing report with nothing to report:\n%s", out)
			case tc.want != "" && (n != 1 || !strings.Contains(out, tc.want)):
				t.Fatalf("want one closing report with %q:\n%s", tc.want, out)
			}
		})
	}
}

// TestEveryDropReportedOnce: with publishers dropping concurrently and
// warnings due at every clock read, the warnings and the closing reports
// together count each drop exactly once.
func TestEveryDropReportedOnce(t *testing.T) {
	var reported atomic.Uint64
	h := countingHandler{sum: &reported}
	f := New[int](Options{Logger: slog.New(h), BufferSize: 1})
	var ns atomic.Int64
	f.now = func() time.Time { return time.Unix(0, ns.Add(int64(warnInterval)/3)) }
	subs := []*Subscription[int]{f.Subscribe(), f.Subscribe(SubscribeOptions{BufferSize: 8})}
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				f.Publish(i)
			}
		}()
	}
	subs[0].Close() // concurrently with the publishers
	wg.Wait()
	f.Close()
	if got, want := reported.Load(), f.Stats().Dropped; got != want || want == 0 {
		t.Fatalf("logs report %d drops, the counters %d", got, want)
	}
}

// countingHandler sums the dropped_since_last_warning of every record.
type countingHandler struct{ sum *atomic.Uint64 }

func (countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "dropped_since_last_warning" {
			h.sum.Add(a.Value.Uint64())
		}
		return true
	})
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func TestDefaultLoggerIsUsable(t *testing.T) {
	f := New[int](Options{BufferSize: 1})
	s := f.Subscribe()
	f.Publish(1)
	f.Publish(2) // logs to slog.Default: must not panic
	s.Close()
	f.Close()
}

// TestHammer runs many publishers (each publishing an increasing series),
// many subscribers with small buffers and concurrent closes of both kinds;
// each subscriber must see every publisher's values in increasing order and
// every offer must be accounted as delivered or dropped.
func TestHammer(t *testing.T) {
	const publishers, perPublisher, subscribers = 8, 3000, 16
	type msg struct{ pub, n int }
	f := New[msg](quiet(32))
	var wg sync.WaitGroup
	errs := make(chan string, subscribers)
	subs := make([]*Subscription[msg], subscribers)
	for i := range subs {
		subs[i] = f.Subscribe(SubscribeOptions{BufferSize: 1 + i*4})
	}
	for i, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := make([]int, publishers)
			var got uint64
			for v := range s.C() {
				got++
				if v.n <= last[v.pub] {
					errs <- "out of order"
					return
				}
				last[v.pub] = v.n
				if i%4 == 0 && got == 100 {
					s.Close() // close from the receiving side, mid-stream
				}
				if i%3 == 0 {
					runtime.Gosched() // a slow consumer
				}
			}
		}()
	}
	var pubs sync.WaitGroup
	for p := 0; p < publishers; p++ {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			for n := 1; n <= perPublisher; n++ {
				f.Publish(msg{p, n})
				if p == 0 && n == perPublisher/2 {
					subs[1].Close() // close from a publisher, concurrently
					extra := f.Subscribe()
					extra.Close()
				}
			}
		}()
	}
	pubs.Wait()
	st := f.Stats()
	for _, ps := range st.PerSubscriber {
		if ps.Delivered+ps.Dropped > uint64(publishers*perPublisher) {
			t.Errorf("sub %d: delivered+dropped %d > published", ps.ID, ps.Delivered+ps.Dropped)
		}
	}
	closers := sync.WaitGroup{}
	for i := 0; i < 4; i++ {
		closers.Add(1)
		go func() { defer closers.Done(); f.Close() }()
	}
	closers.Wait()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if st := f.Stats(); st.Published != publishers*perPublisher {
		t.Fatalf("published %d", st.Published)
	}
	for _, s := range subs {
		if s.delivered.Load()+s.Dropped() > publishers*perPublisher {
			t.Fatalf("overcount")
		}
	}
}

// TestDropsCountedOnceAcrossClose: the fan-out's Dropped is the sum of
// its subscriptions' drops, closed ones included, whether they close
// before, during or after the publishing, one by one or with the fan-out,
// while publishers holding an older list still offer them values (a
// live subscription's drops are counted by it alone and handed to the
// fan-out's count when it leaves: none may be lost or counted twice).
func TestDropsCountedOnceAcrossClose(t *testing.T) {
	for _, tc := range []struct {
		name       string
		publishers int
		closeSubs  bool // Subscription.Close of every other one, mid-stream
		closeFan   bool // Fanout.Close, mid-stream
	}{
		{name: "none closed", publishers: 1},
		{name: "subscriptions closed, one publisher", publishers: 1, closeSubs: true},
		{name: "subscriptions closed, four publishers", publishers: 4, closeSubs: true},
		{name: "fan-out closed, four publishers", publishers: 4, closeFan: true},
		{name: "both, four publishers", publishers: 4, closeSubs: true, closeFan: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const perPublisher = 5000
			f := New[int](quiet(2))
			subs := make([]*Subscription[int], 8)
			for i := range subs {
				subs[i] = f.Subscribe() // never read: all but 2 values dropped
			}
			var wg sync.WaitGroup
			for p := 0; p < tc.publishers; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range perPublisher {
						f.Publish(n)
					}
				}()
			}
			if tc.closeSubs {
				for i := 0; i < len(subs); i += 2 {
					runtime.Gosched()
					subs[i].Close()
				}
			}
			if tc.closeFan {
				runtime.Gosched()
				f.Close()
			}
			wg.Wait()
			var sum uint64
			for _, s := range subs {
				sum += s.Dropped()
				if got := s.delivered.Load() + s.Dropped(); got > uint64(tc.publishers*perPublisher) {
					t.Errorf("sub %d: delivered+dropped %d > published", s.ID(), got)
				}
			}
			st := f.Stats()
			if st.Dropped != sum {
				t.Fatalf("Stats().Dropped %d, the subscriptions dropped %d", st.Dropped, sum)
			}
			if !tc.closeSubs && !tc.closeFan && sum != uint64(len(subs)*(tc.publishers*perPublisher-2)) {
				t.Fatalf("dropped %d, want every value but the 2 buffered, for each subscription", sum)
			}
			f.Close()
		})
	}
}

// TestPublishDuringConcurrentSubscribeClose checks there is no send on a
// closed channel while subscriptions come and go under publishing.
func TestPublishDuringConcurrentSubscribeClose(t *testing.T) {
	f := New[int](quiet(4))
	done := make(chan struct{})
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
					f.Publish(i)
					if i%64 == 0 {
						runtime.Gosched() // leave the (2-core) CPU to the subscriber loop
					}
				}
			}
		}()
	}
	for i := 0; i < 300; i++ {
		s := f.Subscribe()
		if i%2 == 0 {
			<-s.C()
		}
		s.Close()
	}
	close(done)
	wg.Wait()
	f.Close()
}

func BenchmarkPublishNoSubscriber(b *testing.B) {
	f := New[int](quiet(0))
	for i := 0; b.Loop(); i++ {
		f.Publish(i)
	}
}

func BenchmarkPublishFullSubscriber(b *testing.B) {
	f := New[int](quiet(1))
	s := f.Subscribe()
	defer s.Close()
	for i := 0; b.Loop(); i++ {
		f.Publish(i)
	}
}

// TestAtMostOneOptions: New and Subscribe take at most one options value,
// as the other public packages' functions do; two panic rather than one
// being merged or ignored.
func TestAtMostOneOptions(t *testing.T) {
	tests := []struct {
		name string
		call func()
		want string
	}{
		{"New", func() { New[int](quiet(1), quiet(2)) }, "fanout.New: 2 options values given"},
		{"Subscribe", func() { New[int](quiet(0)).Subscribe(SubscribeOptions{}, SubscribeOptions{Name: "b"}) }, "fanout.Fanout.Subscribe: 2 options values given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Fatalf("panic %q, want it to contain %q", msg, tc.want)
				}
			}()
			tc.call()
		})
	}
}
