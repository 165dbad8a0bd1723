package codex

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// forkedHistory is the native name under which the lines a forked
// sub-agent's rollout copied from its parent are declared ignored.
const forkedHistory = "(forked history)"

// isForkedSubAgent reports whether a rollout's own session_meta (m) is
// that of a sub-agent spawned with its parent's history copied into it
// (multi-agent v1's fork_context, v2's fork_turns other than "none"):
// it names the thread it was forked from (forked_from_id) and was
// spawned by a thread (source.subagent.thread_spawn).
func isForkedSubAgent(m abi.Value) bool {
	f := m.Get("forked_from_id")
	return f.Kind() == abi.KindString && !f.Is("") &&
		m.Path("source", "subagent", "thread_spawn").Kind() == abi.KindObject
}

// isUserFork reports whether a rollout's own session_meta (m) is that of
// a thread a user forked (codex fork, the app-server's thread/fork, the
// TUI's backtrack): it names the thread it was forked from
// (forked_from_id) and no thread spawned it. Codex starts its running
// token total from the parent's last (counter.inherits).
func isUserFork(m abi.Value) bool {
	f := m.Get("forked_from_id")
	return f.Kind() == abi.KindString && !f.Is("") &&
		m.Path("source", "subagent", "thread_spawn").Kind() != abi.KindObject
}

// forked reads a line of the history a forked sub-agent's rollout copied
// from its parent (see doc.go, Sub-agents): it reports whether the line
// was that history's (declared ignored: the parent's run records it),
// or the first line of the sub-agent's own first turn, which ends the
// copy and is read as any line.
//
// Codex writes the copy in one batch after the sub-agent's session_meta
// (the parent's rollout as read when spawn_agent ran, its items
// filtered, event messages and token counts included), then the
// sub-agent's first turn, which starts with task_started. The parent
// was inside the turn that called spawn_agent, so the copy ends inside
// a turn: its task_started (cut when fork_turns kept only that turn's
// input) has no task_complete or turn_aborted. The first task_started
// while a copied turn is open is therefore the sub-agent's own. A
// copied session_meta (the parent's, or an ancestor's) starts outside
// any turn; a copy that starts after it (fork_turns "N") starts inside
// one.
//
// The copied token counts are the parent's running totals, and Codex
// starts the sub-agent's total from the last of them
// (last_token_info_from_rollout): they are read, without a report, so
// that the sub-agent's usage is what its own counts add to them.
func (n *normalizer) forked(out *sdk.Out, typ, p abi.Value) bool {
	switch sdk.Name(typ) {
	case "session_meta":
		n.forkOpen = false
	case "event_msg":
		switch sdk.Name(p.Get("type")) {
		case "task_started":
			if n.forkOpen {
				n.forking = false
				n.usage.rebase()
				return false
			}
			n.forkOpen = true
		case "task_complete", "turn_aborted":
			n.forkOpen = false
		case "token_count":
			if info := p.Get("info"); info.Kind() == abi.KindObject {
				n.usage.add(info.Get("total_token_usage"), info.Get("last_token_usage"))
			}
		}
	}
	out.Ignored(sdk.S(forkedHistory))
	return true
}

// copiedHistory says, at a session_meta of the thread a user forked the
// rollout from (id), that the rollout holds a copy of that thread's
// history: the copying forks (every build before 0.158's referenced
// forks, and Codex's copying path since) write it after the fork's own
// session_meta, the parent's session_meta first, and mark no end to it,
// so its turns and tokens are read as this rollout's (doc.go,
// Sub-agents). A warning says so, once.
func (n *normalizer) copiedHistory(id abi.Value, out *sdk.Out) {
	if n.forkedFrom == "" || !id.Is(n.forkedFrom) {
		return
	}
	out.Warn("codex: this fork holds a copy of the history of thread " + sdk.Clip(n.forkedFrom, 200) + " (from its session_meta on); Codex marks no end to the copy, so that thread's turns and tokens are counted in this run too")
	n.forkedFrom = ""
}
