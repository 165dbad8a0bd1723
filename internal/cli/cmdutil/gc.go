package cmdutil

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// GCRaise raises the collector's GOGC for a phase of a command and gives
// the old setting back when it ends: a setting already as high, or off
// (a user's GOGC), is left as it is. The memory limit (cmd/twasm) holds
// throughout, so a heap that grows too far is still collected. The zero
// value is ready; Raise twice keeps the setting first found, and Lower
// with nothing raised does nothing.
type GCRaise struct {
	mu     sync.Mutex
	old    int
	raised bool
}

// Raise sets GOGC to percent unless it is already that high or off.
func (g *GCRaise) Raise(percent int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.raised {
		return
	}
	old := debug.SetGCPercent(percent)
	if old < 0 || old >= percent {
		debug.SetGCPercent(old)
		return
	}
	g.old, g.raised = old, true
}

// Lower gives GOGC back the setting Raise found.
func (g *GCRaise) Lower() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.raised {
		debug.SetGCPercent(g.old)
		g.raised = false
	}
}

// LimitLower lowers the Go memory limit for a phase of a command and
// gives the old limit back when it ends: a limit already as low is left
// as it is, and so is any limit when keep says the user set one
// (GOMEMLIMIT). While lowered, the limit follows the live heap: after
// every collection it is twice the live heap, or the limit asked when
// that is higher, so that a live heap that outgrows the limit is
// collected as at GOGC=100 and never has the collector run without end
// (a record whose per-call-id state grew past the limit did), and goes
// back down when the live heap does: a record's plugin compiled with a
// cold cache had 28 MB live for a moment, and a limit that only rose
// let the heap of the whole record grow to 56 MiB. The zero value is
// ready; Lower twice keeps the limit first found, and Restore with
// nothing lowered does nothing.
type LimitLower struct {
	mu      sync.Mutex
	old     int64 // the limit Lower found
	floor   int64 // the limit asked
	limit   int64 // the limit set
	lowered bool
	gen     int // the phases lowered: the one whose collections are followed
}

// Lower sets the memory limit to limit bytes unless keep is true or the
// limit is already that low, and follows the live heap from then on.
func (l *LimitLower) Lower(limit int64, keep bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lowered || keep {
		return
	}
	if old := debug.SetMemoryLimit(-1); old > limit {
		debug.SetMemoryLimit(limit)
		l.old, l.floor, l.limit, l.lowered = old, limit, limit, true
		l.gen++
		l.watch(l.gen)
	}
}

// Restore gives back the limit Lower found, and stops following.
func (l *LimitLower) Restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lowered {
		debug.SetMemoryLimit(l.old)
		l.lowered = false
	}
}

// watch calls l.afterGC after the next collection (a cleanup of an
// object nothing holds).
func (l *LimitLower) watch(gen int) {
	runtime.AddCleanup(new([32]byte), func(gen int) { l.afterGC(gen) }, gen)
}

// afterGC sets the limit of phase gen to twice the live heap, or the
// limit asked when that is higher, and watches the next collection, for
// as long as the phase lasts.
func (l *LimitLower) afterGC(gen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lowered || l.gen != gen {
		return
	}
	if want := max(l.floor, 2*int64(LiveHeap())); want != l.limit {
		l.limit = want
		debug.SetMemoryLimit(want)
	}
	l.watch(gen)
}

// LiveHeap is the heap the last collection found live.
func LiveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
