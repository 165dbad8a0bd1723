package fanout

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twasm/twasm/internal/oneopt"
)

// DefaultBufferSize is the per-subscriber buffer used when none is set.
const DefaultBufferSize = 256

// warnInterval bounds the drop warnings to one per subscriber per interval,
// so that a stuck subscriber cannot flood the log at the publish rate.
const warnInterval = time.Second

// clockStride bounds how often the drop path reads the clock (which costs
// more than the rest of a drop together: 100-200 ns on a virtual machine).
// A subscriber's first clockStride-1 drops after a warning each read it;
// after that, every clockStride-th drop does. So a warning still comes at
// most once per warnInterval, and at most clockStride drops after the
// interval has passed.
const clockStride = 64

// Options configures a [Fanout]. The zero value is the default: buffers
// of [DefaultBufferSize] values, drop warnings to slog.Default().
type Options struct {
	// BufferSize is each subscription's buffer when its own
	// [SubscribeOptions] set none. Values below 1 keep the default: an
	// unbuffered subscriber would drop every value that arrives while it
	// is not already waiting, which is never what is meant.
	BufferSize int
	// Logger receives the drop warnings. Nil means slog.Default(); a
	// logger over slog.DiscardHandler discards them.
	Logger *slog.Logger
}

// SubscribeOptions configures one [Subscription]. The zero value is the
// default: the fan-out's buffer size, no name.
type SubscribeOptions struct {
	// BufferSize overrides the fan-out's buffer size for this
	// subscription. Values below 1 keep the fan-out's.
	BufferSize int
	// Name names the subscription in [Fanout.Stats] and in drop warnings.
	Name string
}

// Fanout is a publish/subscribe hub for values of type T. The zero value is
// not usable; call [New]. All methods are safe for concurrent use.
type Fanout[T any] struct {
	bufSize int
	logger  *slog.Logger
	now     func() time.Time // test hook for the warning rate limit

	// subs is the immutable snapshot Publish iterates; it is replaced (never
	// mutated) under mu, so Publish needs no lock to read it.
	subs atomic.Pointer[[]*Subscription[T]]

	mu       sync.Mutex // serialises Subscribe, unsubscribe and Close
	closed   bool       // guarded by mu
	isClosed atomic.Bool
	nextID   uint64

	published atomic.Uint64
	// dropped counts the drops of the subscriptions no longer in subs
	// (retired): their count when they left (retire), and each drop a
	// publisher still holding an older snapshot made after that. A live
	// subscription's drops are counted in its own counter alone, so that
	// a drop costs one atomic add, not two (Stats adds them up).
	dropped atomic.Uint64
}

// retiredBit marks a subscription's drop counter once the subscription
// has left the fan-out's list and its count has been added to the
// fan-out's (retire): a drop that finds it set counts itself there.
const retiredBit = 1 << 63

// New returns an open fan-out. At most one Options may be given.
func New[T any](opts ...Options) *Fanout[T] {
	o := oneopt.Get("fanout.New", opts)
	f := &Fanout[T]{bufSize: DefaultBufferSize, logger: o.Logger, now: time.Now}
	if o.BufferSize > 0 {
		f.bufSize = o.BufferSize
	}
	if f.logger == nil {
		f.logger = slog.Default()
	}
	return f
}

// Subscription is one subscriber's view of a [Fanout].
type Subscription[T any] struct {
	f    *Fanout[T]
	id   uint64
	name string
	ch   chan T

	// mu orders a send against the close of ch. closed is written under
	// mu; the drop path reads it without mu.
	mu     sync.Mutex
	closed atomic.Bool

	delivered atomic.Uint64
	// dropped counts this subscription's drops; retiredBit is set in it
	// once they have been handed to the fan-out's count (retire).
	dropped atomic.Uint64
	// Drop warnings: the time of the last warning (unix ns) and the drop
	// count reported in it, so each warning states the drops since the last.
	lastWarn    atomic.Int64
	warnedDrops atomic.Uint64
}

// Subscribe registers a new subscriber. After Close it returns a
// subscription whose channel is already closed. At most one
// SubscribeOptions may be given.
func (f *Fanout[T]) Subscribe(opts ...SubscribeOptions) *Subscription[T] {
	o := oneopt.Get("fanout.Fanout.Subscribe", opts)
	size := f.bufSize
	if o.BufferSize > 0 {
		size = o.BufferSize
	}
	s := &Subscription[T]{f: f, name: o.Name, ch: make(chan T, size)}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	s.id = f.nextID
	if f.closed {
		s.closed.Store(true)
		close(s.ch)
		return s
	}
	var cur []*Subscription[T]
	if p := f.subs.Load(); p != nil {
		cur = *p
	}
	next := make([]*Subscription[T], 0, len(cur)+1)
	next = append(next, cur...)
	next = append(next, s)
	f.subs.Store(&next)
	return s
}

// Publish offers v to every live subscriber without blocking; a subscriber
// whose buffer is full does not get v (drop-newest) and the drop is counted.
func (f *Fanout[T]) Publish(v T) {
	// Count only while open, so that Published means "offered to the
	// subscribers of the time". isClosed is an atomic flag rather than a
	// read of closed under mu, so publishers share no lock.
	if f.isClosed.Load() {
		return
	}
	f.published.Add(1)
	p := f.subs.Load()
	if p == nil {
		return
	}
	for _, s := range *p {
		s.offer(v)
	}
}

func (s *Subscription[T]) offer(v T) {
	// The drop path takes no lock: a buffer that is full when looked at
	// would refuse the send as well (len of a channel may be read
	// concurrently; a receive in between changes only when the drop is
	// decided, never the order of what is delivered). A subscription
	// closed concurrently may count the value as dropped: it was offered
	// before the close was seen.
	if len(s.ch) == cap(s.ch) {
		if !s.closed.Load() {
			s.drop()
		}
		return
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return
	}
	select {
	case s.ch <- v:
		s.mu.Unlock()
		s.delivered.Add(1)
	default:
		s.mu.Unlock()
		s.drop()
	}
}

// drop counts a value lost to a full buffer and, on the drops that
// clockStride selects, sees whether a warning is due.
func (s *Subscription[T]) drop() {
	total := s.dropped.Add(1)
	if total&retiredBit != 0 {
		// Retired: its count went to the fan-out's before this drop.
		s.f.dropped.Add(1)
		total &^= retiredBit
	}
	if s.closed.Load() {
		// Closed while this value was offered: the closing report may have
		// been made before the count, so report it here (warn reports
		// each drop once).
		s.warn(closedMsg)
		return
	}
	// since may be off (even wrap) while another publisher warns: it only
	// chooses whether to read the clock.
	if since := total - s.warnedDrops.Load(); since < clockStride || since%clockStride == 0 {
		s.maybeWarn()
	}
}

// maybeWarn logs at most one warning per warnInterval per subscriber. The
// compare-and-swap elects one caller when several publishers drop at once.
func (s *Subscription[T]) maybeWarn() {
	now := s.f.now().UnixNano()
	last := s.lastWarn.Load()
	if last != 0 && now-last < int64(warnInterval) {
		return
	}
	if !s.lastWarn.CompareAndSwap(last, now) {
		return
	}
	s.warn("fanout: subscriber buffer full, dropping values")
}

// warn logs the drops no warning has reported yet, if any. warnedDrops
// only grows, so concurrent callers never report a drop twice.
func (s *Subscription[T]) warn(msg string) {
	for {
		reported, total := s.warnedDrops.Load(), s.Dropped()
		if total <= reported {
			return
		}
		if s.warnedDrops.CompareAndSwap(reported, total) {
			s.f.logger.LogAttrs(context.Background(), slog.LevelWarn, msg,
				slog.Uint64("subscriber", s.id), slog.String("name", s.name),
				slog.Uint64("dropped_since_last_warning", total-reported), slog.Uint64("dropped_total", total),
				slog.Int("buffer", cap(s.ch)))
			return
		}
	}
}

// C returns the channel the subscriber receives on. It is closed after
// Close (of the subscription or of the fan-out) once drained.
func (s *Subscription[T]) C() <-chan T { return s.ch }

// ID returns the subscription's id, unique within its fan-out (as in
// [SubStats]).
func (s *Subscription[T]) ID() uint64 { return s.id }

// Dropped returns how many values this subscriber did not get because its
// buffer was full.
func (s *Subscription[T]) Dropped() uint64 { return s.dropped.Load() &^ retiredBit }

// retire hands the subscription's drops to the fan-out's count, once,
// when it leaves the list (called with f.mu held): every drop is counted
// there exactly once, by this add when it came before the bit was set,
// by drop itself when after.
func (s *Subscription[T]) retire() {
	s.f.dropped.Add(s.dropped.Or(retiredBit) &^ retiredBit)
}

// Close unsubscribes and closes C. It is idempotent.
func (s *Subscription[T]) Close() {
	f := s.f
	f.mu.Lock()
	if p := f.subs.Load(); p != nil {
		if i := slices.Index(*p, s); i >= 0 {
			next := slices.Delete(slices.Clone(*p), i, i+1)
			f.subs.Store(&next)
			s.retire()
		}
	}
	f.mu.Unlock()
	s.closeChan()
}

const closedMsg = "fanout: subscriber closed; it dropped values since the last warning"

// closeChan closes the channel once and then reports the drops no warning
// has reported yet, so that every drop reaches the log.
func (s *Subscription[T]) closeChan() {
	s.mu.Lock()
	first := !s.closed.Load()
	if first {
		s.closed.Store(true)
		close(s.ch)
	}
	s.mu.Unlock()
	if first {
		s.warn(closedMsg)
	}
}

// Close closes every subscription and makes later Publish calls no-ops and
// later Subscribe calls return closed subscriptions. It is idempotent.
func (f *Fanout[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	f.isClosed.Store(true)
	p := f.subs.Swap(nil)
	if p == nil {
		return
	}
	for _, s := range *p {
		s.retire()
		s.closeChan()
	}
}

// SubStats describes one live subscription.
type SubStats struct {
	ID   uint64
	Name string
	// Delivered counts values put into the buffer (not necessarily
	// received yet); Dropped counts values lost to a full buffer.
	Delivered, Dropped uint64
	// Buffered is the number of values waiting in the buffer.
	Buffered int
}

// Stats is a snapshot of a fan-out's counters.
type Stats struct {
	// Subscribers is the number of live subscriptions.
	Subscribers int
	// Published counts Publish calls made while the fan-out was open;
	// Dropped counts drops over all subscriptions, closed ones included.
	Published, Dropped uint64
	// PerSubscriber lists the live subscriptions in subscription order.
	PerSubscriber []SubStats
}

// Stats returns a snapshot of the counters. The figures are read one by
// one while publishing may go on, so they are individually exact but not
// mutually consistent to the value. It holds the lock of Subscribe and
// Close, so that no subscription leaves the list (and hands its drops to
// the fan-out's count) while its drops are added up.
func (f *Fanout[T]) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := Stats{Published: f.published.Load(), Dropped: f.dropped.Load()}
	if p := f.subs.Load(); p != nil {
		st.Subscribers = len(*p)
		st.PerSubscriber = make([]SubStats, 0, len(*p))
		for _, s := range *p {
			st.PerSubscriber = append(st.PerSubscriber, SubStats{
				ID: s.id, Name: s.name,
				Delivered: s.delivered.Load(), Dropped: s.Dropped(),
				Buffered: len(s.ch),
			})
			st.Dropped += st.PerSubscriber[len(st.PerSubscriber)-1].Dropped
		}
	}
	return st
}
