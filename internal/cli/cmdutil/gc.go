package cmdutil

import (
	"runtime/debug"
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
// (GOMEMLIMIT). The zero value is ready; Lower twice keeps the limit
// first found, and Restore with nothing lowered does nothing.
type LimitLower struct {
	mu      sync.Mutex
	old     int64
	lowered bool
}

// Lower sets the memory limit to limit bytes unless keep is true or the
// limit is already that low.
func (l *LimitLower) Lower(limit int64, keep bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lowered || keep {
		return
	}
	if old := debug.SetMemoryLimit(-1); old > limit {
		debug.SetMemoryLimit(limit)
		l.old, l.lowered = old, true
	}
}

// Restore gives back the limit Lower found.
func (l *LimitLower) Restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lowered {
		debug.SetMemoryLimit(l.old)
		l.lowered = false
	}
}
