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
